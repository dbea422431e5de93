"""The CLI side of the theory bindings' tests (test_seprank, test_depthwidth,
test_collapse): keyword arguments as the command's flags, and its --json."""

import json
import subprocess


def flags(kw):
    """The CLI flags of keyword arguments, named as the flags in snake_case
    (True: a switch given; False or None: left out)."""
    out = []
    for k, v in kw.items():
        if v is None or v is False:
            continue
        out.append("--" + k.replace("_", "-"))
        if v is not True:
            out.append(str(v))
    return out


def _run(cli, *args):
    return subprocess.run([cli, *[str(a) for a in args], "--json"], capture_output=True,
                          text=True)


def run_json(cli, *args, ok=(0,)):
    """`attnrank ARGS --json`, parsed (the exit status must be one of ok)."""
    out = _run(cli, *args)
    assert out.returncode in ok, out.stderr
    return json.loads(out.stdout)


def run_status(cli, *args):
    """The exit status of `attnrank ARGS --json` (2: refused input)."""
    return _run(cli, *args).returncode


def assert_help_parity(cli, command, function):
    """help(function) documents every option of `attnrank COMMAND --help`:
    as a keyword named as the flag in snake_case (and a parameter of the
    function), or literally in the paragraph "CLI options without a
    keyword:"; and it repeats the help's first line of description."""
    import re

    text = subprocess.run([cli, command, "--help"], capture_output=True, text=True).stdout
    options = re.findall(r"^  (--[a-z][a-z0-9-]*)", text.split("\noptions:\n", 1)[1], re.M)
    assert options, text
    doc = function.__doc__ or ""
    # a Cython builtin: the signature is the docstring's first line (embedsignature)
    sig = doc.split("\n", 1)[0]
    params = set(re.findall(r"[(,] ?\*?([a-z_][a-z0-9_]*)", sig))
    rest = doc.split("CLI options without a keyword:", 1)
    without = rest[1].split("\n\n", 1)[0] if len(rest) == 2 else ""
    for flag in options:
        if flag == "--help":
            continue
        name = flag[2:].replace("-", "_")
        if name in params:
            assert re.search(rf"^    {name}\b|``{name}``", doc, re.M), (command, flag)
        else:
            assert flag in without, (command, flag)
    # the description's opening words, as the docstring words them
    opening = " ".join(text.split("\n\n", 2)[1].split()[:8])
    assert opening in " ".join(doc.split()), (command, opening)
