"""help(attnrank.X) says what `attnrank X --help` says.

For every binding of a CLI subcommand, every option the CLI's --help lists
is documented in the Python docstring: as the keyword named after the flag
(``--head-size`` -> ``head_size``) or, for options with no keyword, named
literally in the paragraph that starts ``CLI options without a keyword:``.
A new CLI flag without a Python counterpart or a note fails here.
"""

import inspect
import re
import subprocess

import pytest

import attnrank

# Python function -> CLI subcommand: every analysis of the CLI (verify, a
# report of the toolkit itself, has no binding).
BINDINGS = {
    "spectrum": "spectrum",
    "represent": "represent",
    "heads": "heads",
    "params": "params",
    "check": "check",
    "seprank": "seprank",
    "depthwidth": "depthwidth",
    "collapse": "collapse",
    "softmax_bottleneck": "softmax-bottleneck",
    "weights": "weights",
    "circuits": "circuits",
}

NO_KEYWORD = "CLI options without a keyword:"


def cli_help(cli, sub):
    return subprocess.run([cli, sub, "--help"], capture_output=True, text=True,
                          check=True).stdout


def cli_options(text, sub):
    """The long flags listed under `options:` in `attnrank SUB --help`."""
    section = text.split("\noptions:\n", 1)
    assert len(section) == 2, f"`attnrank {sub} --help` has no options section"
    flags = re.findall(r"^\s+--([A-Za-z][\w-]*)", section[1], flags=re.M)
    assert flags, f"no flags parsed from `attnrank {sub} --help`"
    return [f for f in flags if f != "help"]


def keyword(flag):
    return flag.replace("-", "_")


def undocumented(doc, flags):
    """The flags of `flags` that doc documents neither as a keyword (in the
    signature line, the first, and again in the text) nor in the note."""
    signature, _, text = doc.partition("\n")
    body, _, cli_only = text.partition(NO_KEYWORD)
    missing = []
    for flag in flags:
        word = rf"(?<![\w-]){re.escape(keyword(flag))}(?![\w-])"
        as_keyword = (re.search(word + r"\s*[=,)]", signature, flags=re.I)
                      and re.search(word, body, flags=re.I))
        as_note = re.search(rf"--{re.escape(flag)}(?![\w-])", cli_only)
        if not (as_keyword or as_note):
            missing.append("--" + flag)
    return missing


def test_every_cli_analysis_has_a_binding(cli):
    top = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
    subs = re.findall(r"^  ([a-z][a-z-]+)  ", top.split("subcommands:", 1)[1], flags=re.M)
    assert "spectrum" in subs and "check" in subs, top
    assert sorted(set(subs) - {"verify"}) == sorted(BINDINGS.values())


def opening_words(text, count=8):
    """The first words of the description under the usage lines."""
    return " ".join(text.split("\n\n", 2)[1].split()[:count])


@pytest.mark.parametrize("name", sorted(BINDINGS))
def test_docstring_documents_every_cli_option(cli, name):
    fn = getattr(attnrank, name)
    doc = f"{name}{inspect.signature(fn)}\n" + (fn.__doc__ or "")
    sub = BINDINGS[name]
    assert f"attnrank {sub}" in " ".join(doc.split()), \
        f"attnrank.{name}.__doc__ does not name `attnrank {sub}`"
    text = cli_help(cli, sub)
    missing = undocumented(doc, cli_options(text, sub))
    assert not missing, (f"attnrank.{name}.__doc__ documents neither a keyword nor a "
                         f"'{NO_KEYWORD}' note for {', '.join(missing)}")


@pytest.mark.parametrize("name", sorted(BINDINGS))
def test_docstring_opens_as_the_cli_description(cli, name):
    # The description starts with the words of `attnrank SUB --help`
    # (whitespace aside).
    doc = getattr(attnrank, name).__doc__ or ""
    opening = opening_words(cli_help(cli, BINDINGS[name]))
    assert opening.lower() in " ".join(doc.split()).lower(), (name, opening)


def test_the_parity_check_can_fail():
    # A docstring lacking a flag, or naming it only outside the note, fails.
    sig = "f(p, *, head_size=None, x=None)\n"
    assert undocumented(sig + "head_size, x", ["head-size", "X", "json"]) == ["--json"]
    assert undocumented(sig + "--json is CLI only", ["json"]) == ["--json"]
    assert undocumented(sig + "x only", ["head-size"]) == ["--head-size"]  # not in the text
    assert undocumented("f(p)\nhead_size", ["head-size"]) == ["--head-size"]  # not a keyword
    assert undocumented(sig + f"head_size\n{NO_KEYWORD} --json (use to_dict)",
                        ["head-size", "json"]) == []
    assert undocumented(sig + "sum_tolerance", ["sum-tol"]) == ["--sum-tol"]
