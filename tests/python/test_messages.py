"""One message source, two spellings: the library names options as tokens
(include/attnrank/status.h), the CLI prints them as flags (--smooth 1e-9),
the Python package as keywords (smooth=1e-9).  The same failure through
both faces."""

import re
import subprocess

import numpy as np
import pytest

import attnrank

FLAG = re.compile(r"--[a-z]")
TOKEN = re.compile(r"\{(opt|flag):")


def _cli_error(cli, *args):
    out = subprocess.run([cli, *args], capture_output=True, text=True)
    assert out.returncode == 2, out
    assert out.stderr.count("\n") == 1, out.stderr
    return out.stderr


def _py_error(exc, call):
    with pytest.raises(exc) as info:
        call()
    text = str(info.value)
    assert "\n" not in text
    assert not FLAG.search(text) and not TOKEN.search(text), text
    return text


# P[i, j]: the first column sums to 1 but holds a negative entry
NEGATIVE = np.array([[1.5, 0.5], [-0.5, 0.5]])


def test_negative_entry_smooth(cli, tmp_path):
    path = tmp_path / "p.npy"
    np.save(path, NEGATIVE)
    cli_text = _cli_error(cli, "represent", str(path), "--smooth", "1e-9")
    assert "not a probability (--smooth only lifts zeros" in cli_text
    py = _py_error(attnrank.DomainError,
                   lambda: attnrank.represent(NEGATIVE, axis="col", smooth=1e-9))
    assert "not a probability (smooth= only lifts zeros" in py


def _col_stochastic(n=5, seed=3):
    p = np.random.default_rng(seed).random((n, n)) + 0.1
    return p / p.sum(axis=0, keepdims=True)


def test_axis_hint(cli, tmp_path):
    p = _col_stochastic()
    path = tmp_path / "p.npy"
    np.save(path, p)
    cli_text = _cli_error(cli, "represent", str(path), "--axis", "row")
    assert "the map is column-stochastic; give --axis col" in cli_text
    py = _py_error(attnrank.DomainError, lambda: attnrank.represent(p, axis="row"))
    assert "the map is column-stochastic; give axis='col'" in py


def _softmax_rows(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_precision_hint(cli, tmp_path):
    # a float32 softmax widened to float64: its rows miss 1 by float32 rounding
    s = np.random.default_rng(9).standard_normal((256, 256)) * 3
    p = _softmax_rows(s).astype(np.float32).astype(np.float64)
    path = tmp_path / "p.npy"
    np.save(path, p)
    cli_text = _cli_error(cli, "represent", str(path), "--axis", "row")
    assert "give --precision float32" in cli_text
    py = _py_error(attnrank.DomainError, lambda: attnrank.represent(p, axis="row"))
    assert "give precision='float32'" in py


def test_mask_hint(cli, tmp_path):
    # a causal float16 softmax: probabilities that underflowed inside the mask
    n = 64
    keep = np.tril(np.ones((n, n), dtype=bool))
    s = np.where(keep, 6.0 * np.random.default_rng(2).standard_normal((n, n)), -np.inf)
    p = _softmax_rows(s).astype(np.float16)
    assert np.any((p == 0) & keep)
    path = tmp_path / "p.npy"
    np.save(path, p)
    cli_text = _cli_error(cli, "represent", str(path), "--axis", "row", "--mask", "auto")
    assert "(--mask causal)" in cli_text and "(--smooth EPS)" in cli_text
    assert "(--mask file:PATH, or a boolean array)" in cli_text
    py = _py_error(attnrank.DomainError,
                   lambda: attnrank.represent(p, axis="row", mask="auto"))
    assert "(mask='causal')" in py and "(smooth=EPS)" in py
    assert "(mask='file:PATH', or a boolean array)" in py


def test_strict_reason(cli):
    args = ("--d", "64", "--heads", "2", "--n", "40", "--mask", "sink:4+window:16")
    out = subprocess.run([cli, "check", *args, "--strict", "--require", "no-bottleneck"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "conjectural (--strict)" in out.stdout, out
    got = attnrank.check(64, 2, 40, mask="sink:4+window:16", strict=True,
                         require="no-bottleneck")
    why = got.conditions[0].why
    assert not got.passed and "conjectural (strict=True)" in why
    assert not FLAG.search(why) and not TOKEN.search(why), why


def test_roundtrip_renders_tokens():
    # the binding's one conversion of a C message: tokens become keywords
    with pytest.raises(attnrank.ArgumentError) as info:
        attnrank._core._error_roundtrip(1, "use {opt:smooth=1e-9} or {flag:strict}, "
                                           "not {opt:q-pattern}")
    assert info.value.message == "use smooth=1e-9 or strict=True, not q_pattern="
