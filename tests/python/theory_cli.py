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
