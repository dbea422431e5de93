"""attnrank.softmax_bottleneck: the CLI's JSON (and --csv) on the same
matrices, the exact width of softmax(rank-r logits), Yang et al.'s
condition, layouts, edge sizes, hostile inputs, the GIL, help parity."""

import csv
import json
import math
import os
import subprocess

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released


def _rng(seed=0):
    return np.random.default_rng(seed)


def _row_softmax(logits):
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rank_r(n, v, r, bias=False, seed=0):
    """softmax of rank-r logits H W^T (H: n x r, W: v x r), plus a per-word
    bias row 1 b^T when bias."""
    rng = _rng(seed)
    logits = rng.standard_normal((n, r)) @ rng.standard_normal((r, v))
    if bias:
        logits = logits + rng.standard_normal((1, v))
    return _row_softmax(logits)


def _cli(cli, tmp_path, p, *args, name="p.npy"):
    path = tmp_path / name
    np.save(path, p)
    out = subprocess.run([cli, "softmax-bottleneck", str(path), *[str(a) for a in args],
                          "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got.pop("source") == str(path)
    return got


# ---- the CLI's JSON ---------------------------------------------------------------

CASES = [
    # (matrix, keywords): flags are the keywords' names in kebab case
    (lambda: _rank_r(8, 20, 3, seed=1), {"d": 3}),
    (lambda: _rank_r(8, 20, 3, seed=1), {"d": 2, "max_iter": 40, "seed": 5}),
    (lambda: _rank_r(6, 15, 2, bias=True, seed=2), {"d": 2, "bias": True}),
    (lambda: _rank_r(6, 15, 2, bias=True, seed=2), {"d": 2, "fit": False}),
    (lambda: _row_softmax(_rng(3).standard_normal((5, 12))), {"d": 4, "jitter": 0.0,
                                                              "max_iter": 30}),
    (lambda: _row_softmax(_rng(4).standard_normal((7, 9))).astype(np.float32),
     {"d": 3, "max_iter": 20}),
    (lambda: _rank_r(6, 10, 2, seed=5), {"d": 1, "rtol": 1e-6, "atol": 1e-9,
                                         "sum_tol": 1e-10, "precision": "float32",
                                         "fit": False}),
    (lambda: _rank_r(4, 7, 2, seed=6), {"d": 0, "max_iter": 10}),
    (lambda: _rank_r(4, 7, 2, seed=6), {"d": 9}),   # d above min(N, V)
]


def _flags(kw):
    flags = []
    for k, v in kw.items():
        if k == "fit":
            flags += [] if v else ["--no-fit"]
        elif v is True:
            flags.append("--" + k.replace("_", "-"))
        else:
            flags += ["--" + k.replace("_", "-"), v]
    return flags


@pytest.mark.parametrize("case", range(len(CASES)))
def test_equals_the_cli(cli, tmp_path, case):
    make, kw = CASES[case]
    p = make()
    got = attnrank.softmax_bottleneck(p, **kw)
    assert isinstance(got, attnrank.SoftmaxBottleneck)
    assert got.to_dict() == _cli(cli, tmp_path, p, *_flags(kw))
    assert (got.fit is None) == (kw.get("fit") is False)


def test_widths_equal_the_cli_csv(cli, tmp_path):
    p = _rank_r(6, 11, 3, seed=8)
    got = attnrank.softmax_bottleneck(p, d=2, fit=False)
    np.save(tmp_path / "p.npy", p)
    out = subprocess.run([cli, "softmax-bottleneck", str(tmp_path / "p.npy"), "--d", "2",
                          "--no-fit", "--csv", str(tmp_path / "w.csv")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    with open(tmp_path / "w.csv") as f:
        rows = list(csv.DictReader(f))
    mine = got.widths()
    assert len(rows) == len(mine) == min(p.shape) + 1
    for want, row in zip(rows, mine):
        assert int(want["k"]) == row["k"]
        for key in ("sigma_k", "logit_error", "logit_error_rel"):
            assert float(want[key]) == row[key], key  # %.17g round-trips exactly
        assert bool(int(want["expressible"])) == row["expressible"]


def test_layouts_give_the_same_answer():
    p = _rank_r(7, 13, 3, seed=9)
    want = attnrank.softmax_bottleneck(p, d=2, max_iter=20).to_dict()
    big = np.zeros((14, 39))
    big[::2, ::3] = p
    for name, q in {"F": np.asfortranarray(p), "slices": big[::2, ::3],
                    "transpose": np.ascontiguousarray(p.T).T, "list": p.tolist()}.items():
        assert attnrank.softmax_bottleneck(q, d=2, max_iter=20).to_dict() == want, name


def test_torch_tensors_give_the_same_answer():
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("torch stays out of sanitizer builds")
    torch = pytest.importorskip("torch")
    p = _rank_r(7, 13, 3, seed=9)
    want = attnrank.softmax_bottleneck(p, d=2, max_iter=20).to_dict()
    t = torch.from_numpy(p)
    assert attnrank.softmax_bottleneck(t, d=2, max_iter=20).to_dict() == want
    b = attnrank.softmax_bottleneck(t.to(torch.bfloat16), d=2, fit=False, sum_tol=0.05)
    assert b.tolerance.precision == "bfloat16"


# ---- mathematical facts ----------------------------------------------------------

@pytest.mark.parametrize("r", [1, 2, 3, 5])
def test_rank_r_logits_need_exactly_width_r(r):
    """log P = L - c 1^T with rank(L) = r: L0 Pi_V = L Pi_V has rank r
    (generically), so width r suffices and r - 1 does not."""
    p = _rank_r(10, 24, r, seed=r)
    at = attnrank.softmax_bottleneck(p, d=r, fit=False)
    assert at.required_d == at.rank_centred == r and at.sufficient
    assert at.rank_log == r + 1 and at.ones_in_rowspace  # the row shift c 1^T
    assert at.logit_error <= 1e-12 * at.log_norm
    sv = at.singular_values
    assert sv[r - 1] > at.tolerance.threshold >= sv[r]
    below = attnrank.softmax_bottleneck(p, d=r - 1, max_iter=50)
    assert not below.sufficient and below.required_d == r
    assert below.yang.proves_failure  # rank(log P) - 1 = r > r - 1
    assert below.logit_error == pytest.approx(sv[r - 1], rel=1e-12)
    assert below.fit.kl_mean > 1e-8 and below.fit.kl_mean >= 0
    # at the required width the fit's start (the logit optimum) is exact
    exact = attnrank.softmax_bottleneck(p, d=r)
    assert exact.fit.kl_max < 1e-12 and exact.fit.max_abs_error < 1e-12


def test_a_per_word_bias_costs_one_width_without_bias():
    """Logits H W^T + 1 b^T (rank r): width r with the bias, r + 1 without;
    Yang's no-bias condition wrongly claims failure at d = r with the bias."""
    r = 3
    p = _rank_r(9, 20, r, bias=True, seed=11)
    plain = attnrank.softmax_bottleneck(p, d=r, fit=False)
    assert plain.required_d == r + 1 and not plain.sufficient
    assert attnrank.softmax_bottleneck(p, d=r + 1, fit=False).sufficient
    with_bias = attnrank.softmax_bottleneck(p, d=r, bias=True, fit=False)
    assert with_bias.required_d == with_bias.rank_double_centred == r
    assert with_bias.sufficient and not with_bias.yang.applies
    assert with_bias.rank_log == r + 2 and with_bias.yang.wrong_with_bias
    assert not attnrank.softmax_bottleneck(p, d=r - 1, bias=True, fit=False).sufficient


def test_yang_is_silent_on_a_generic_matrix_that_fails():
    """Generic N = 5, V = 12: rank(log P) = 5 and required width 5; at d = 4
    rank(log P) - 1 > d is false, yet P is not expressible."""
    p = _row_softmax(_rng(12).standard_normal((5, 12)))
    r = attnrank.softmax_bottleneck(p, d=4, fit=False)
    assert r.rank_log == 5 and r.required_d == 5 and not r.sufficient
    assert not r.yang.proves_failure and r.yang.silent_but_fails


def test_logit_errors_are_eckart_young_tails():
    p = _row_softmax(_rng(13).standard_normal((6, 8)))
    r = attnrank.softmax_bottleneck(p, d=2, fit=False)
    s = r.singular_values
    assert r.logit_errors.shape == (7,)
    for k in range(7):
        assert r.logit_errors[k] == pytest.approx(math.sqrt(float(np.sum(s[k:] ** 2))),
                                                  rel=1e-12, abs=1e-300)
    assert r.logit_errors[2] == r.logit_error
    assert r.logit_error_rel == pytest.approx(r.logit_error / r.centred_norm)
    assert r.centred_norm == pytest.approx(float(np.linalg.norm(s)))


def test_edge_sizes():
    one = attnrank.softmax_bottleneck(np.array([[1.0]]), d=0)
    assert (one.contexts, one.vocab, one.required_d, one.rank_log) == (1, 1, 0, 0)
    assert one.sufficient and one.singular_values.shape == (1,)
    col = attnrank.softmax_bottleneck(np.ones((3, 1)), d=0)  # V = 1: every P is 1
    assert col.required_d == 0 and col.sufficient
    for n in (1, 2, 3):
        uniform = attnrank.softmax_bottleneck(np.full((n, 3), 1.0 / 3.0), d=0, fit=False)
        assert uniform.required_d == 0 and uniform.sufficient  # constant logits
        p = _row_softmax(_rng(n).standard_normal((n, 4)))
        r = attnrank.softmax_bottleneck(p, d=n, fit=False)
        assert r.singular_values.shape == (n,) and r.required_d == min(n, 3)
        assert r.sufficient
    row = attnrank.softmax_bottleneck(_row_softmax(_rng(1).standard_normal((1, 5))), d=0)
    assert row.required_d == 1 and not row.sufficient and row.fit.d == 0


# ---- hostile inputs ---------------------------------------------------------------

_P = _rank_r(4, 6, 2, seed=20)


def _with(index, value):
    q = _P.copy()
    q[index] = value
    return q


HOSTILE = [
    # (what, call, exception)
    ("NaN entry", lambda: attnrank.softmax_bottleneck(_with((1, 2), np.nan), d=2),
     attnrank.NonFiniteError),
    ("Inf entry", lambda: attnrank.softmax_bottleneck(_with((0, 0), np.inf), d=2),
     attnrank.NonFiniteError),
    ("zero entry", lambda: attnrank.softmax_bottleneck(_with((2, 3), 0.0), d=2),
     attnrank.DomainError),
    ("negative entries", lambda: attnrank.softmax_bottleneck(-_P, d=2), attnrank.DomainError),
    ("rows not summing to 1", lambda: attnrank.softmax_bottleneck(_P * 1.01, d=2),
     attnrank.DomainError),
    ("column-stochastic", lambda: attnrank.softmax_bottleneck(
        np.ascontiguousarray(_row_softmax(_rng(2).standard_normal((5, 3))).T), d=1),
     attnrank.DomainError),
    ("0 x 0", lambda: attnrank.softmax_bottleneck(np.zeros((0, 0)), d=0),
     attnrank.ArgumentError),
    ("0 x 5", lambda: attnrank.softmax_bottleneck(np.zeros((0, 5)), d=0),
     attnrank.ArgumentError),
    ("5 x 0", lambda: attnrank.softmax_bottleneck(np.zeros((5, 0)), d=0),
     attnrank.ArgumentError),
    ("1-D", lambda: attnrank.softmax_bottleneck(_P[0], d=1), attnrank.ArgumentError),
    ("3-D", lambda: attnrank.softmax_bottleneck(_P[None], d=1), attnrank.ArgumentError),
    ("scalar", lambda: attnrank.softmax_bottleneck(1.0, d=0), attnrank.ArgumentError),
    ("complex", lambda: attnrank.softmax_bottleneck(_P.astype(complex), d=2),
     attnrank.UnsupportedError),
    ("object", lambda: attnrank.softmax_bottleneck(np.array([[{}]]), d=0),
     attnrank.UnsupportedError),
    ("strings", lambda: attnrank.softmax_bottleneck(np.array([["a", "b"]]), d=0),
     attnrank.UnsupportedError),
    ("a string", lambda: attnrank.softmax_bottleneck("P.npy", d=0), attnrank.UnsupportedError),
    ("bool", lambda: attnrank.softmax_bottleneck(np.ones((2, 2), dtype=bool), d=0),
     attnrank.UnsupportedError),
    ("d missing", lambda: attnrank.softmax_bottleneck(_P), TypeError),
    ("d negative", lambda: attnrank.softmax_bottleneck(_P, d=-1), attnrank.ArgumentError),
    ("d huge", lambda: attnrank.softmax_bottleneck(_P, d=1 << 70), attnrank.ArgumentError),
    ("d float", lambda: attnrank.softmax_bottleneck(_P, d=2.5), attnrank.ArgumentError),
    ("d None", lambda: attnrank.softmax_bottleneck(_P, d=None), attnrank.ArgumentError),
    ("d str", lambda: attnrank.softmax_bottleneck(_P, d="2"), attnrank.ArgumentError),
    ("rtol negative", lambda: attnrank.softmax_bottleneck(_P, d=2, rtol=-1e-3),
     attnrank.ArgumentError),
    ("rtol NaN", lambda: attnrank.softmax_bottleneck(_P, d=2, rtol=np.nan),
     attnrank.ArgumentError),
    ("atol Inf", lambda: attnrank.softmax_bottleneck(_P, d=2, atol=np.inf),
     attnrank.ArgumentError),
    ("atol str", lambda: attnrank.softmax_bottleneck(_P, d=2, atol="x"),
     attnrank.ArgumentError),
    ("sum_tol negative", lambda: attnrank.softmax_bottleneck(_P, d=2, sum_tol=-1.0),
     attnrank.ArgumentError),
    ("jitter negative", lambda: attnrank.softmax_bottleneck(_P, d=2, jitter=-0.1),
     attnrank.ArgumentError),
    ("jitter NaN", lambda: attnrank.softmax_bottleneck(_P, d=2, jitter=np.nan),
     attnrank.ArgumentError),
    ("max_iter 0", lambda: attnrank.softmax_bottleneck(_P, d=2, max_iter=0),
     attnrank.ArgumentError),
    ("max_iter negative", lambda: attnrank.softmax_bottleneck(_P, d=2, max_iter=-5),
     attnrank.ArgumentError),
    ("seed negative", lambda: attnrank.softmax_bottleneck(_P, d=2, seed=-1),
     attnrank.ArgumentError),
    ("seed 2^64", lambda: attnrank.softmax_bottleneck(_P, d=2, seed=1 << 64),
     attnrank.ArgumentError),
    ("seed float", lambda: attnrank.softmax_bottleneck(_P, d=2, seed=1.5),
     attnrank.ArgumentError),
    ("precision unknown", lambda: attnrank.softmax_bottleneck(_P, d=2, precision="float8"),
     attnrank.ArgumentError),
    ("precision NUL", lambda: attnrank.softmax_bottleneck(_P, d=2, precision="float32\0"),
     attnrank.ArgumentError),
]


@pytest.mark.parametrize("what", [h[0] for h in HOSTILE])
def test_hostile_inputs_raise_and_never_crash(what):
    _, call, exc = next(h for h in HOSTILE if h[0] == what)
    with pytest.raises(exc) as info:
        call()
    if exc is not TypeError:
        assert isinstance(info.value, attnrank.Error)
        assert str(info.value)  # a message naming the problem


def test_hostile_messages_name_the_problem():
    with pytest.raises(attnrank.NonFiniteError, match=r"row 1|\(1, 2\)|1, 2"):
        attnrank.softmax_bottleneck(_with((1, 2), np.nan), d=2)
    with pytest.raises(attnrank.ArgumentError, match="2-D"):
        attnrank.softmax_bottleneck(_P[None], d=1)
    with pytest.raises(attnrank.ArgumentError, match="max_iter"):
        attnrank.softmax_bottleneck(_P, d=2, max_iter=0)


def test_hostile_count():
    assert len(HOSTILE) == 37


# ---- GIL, help --------------------------------------------------------------------

def test_the_gil_is_released():
    p = _row_softmax(_rng(30).standard_normal((200, 300)))
    assert_gil_released(lambda: attnrank.softmax_bottleneck(p, d=20, max_iter=30))


def test_docstring_names_the_conditions():
    # every CLI option is checked by test_help.py
    doc = attnrank.softmax_bottleneck.__doc__
    assert "Yang et al.'s condition" in doc and "Eckart-Young" in doc


def test_option_rules_are_the_librarys():
    # ar_sbn_check's messages, in this face's keywords; the edges accepted.
    for kw, text in (({"max_iter": 0}, "max_iter=: must be >= 1, got 0"),
                     ({"jitter": -0.1}, "jitter=: must be >= 0, got -0.1"),
                     ({"atol": -1.0}, "atol=: must be >= 0, got -1"),
                     ({"sum_tol": -1.0}, "sum_tol=: must be >= 0, got -1"),
                     ({"rtol": -1e-3}, "rtol=: must be >= 0, got -0.001")):
        with pytest.raises(attnrank.ArgumentError) as info:
            attnrank.softmax_bottleneck(_P, d=2, **kw)
        assert text in str(info.value)
    attnrank.softmax_bottleneck(_P, d=2, max_iter=1, jitter=0.0, atol=0.0, rtol=0.0)
