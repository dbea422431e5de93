"""attnrank.head_scores: constructed maps with closed-form scores, equality
with a direct numpy transcription of each definition on random maps (both
axes, tokens and periods, batches), TransformerLens's offset diagonal on
repeated random tokens, layouts and dtypes, the record, a softmax of causal
scores in torch, and every error path."""

import dataclasses
import json
import math

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released


def reference(p, tokens=None, period=None, axis="row"):
    """The definitions of docs/theory/head-scores.md, transcribed directly
    (T(i) from t[j-1] = t[i], independently of D(i))."""
    w = np.asarray(p, dtype=np.float64)
    w = w if axis == "row" else w.T
    n = w.shape[0]
    prev = np.mean([w[i, i - 1] for i in range(1, n)]) if n > 1 else math.nan
    first = np.mean(w[:, 0])
    diag = np.mean(np.diag(w))
    ind, dup = [], []
    for i in range(n):
        if tokens is not None:
            targets = [j for j in range(1, i + 1) if tokens[j - 1] == tokens[i]]
            dups = [j for j in range(0, i) if tokens[j] == tokens[i]]
        elif period is not None:
            targets = [i - period + 1] if i >= period else []
            dups = [i - period] if i >= period else []
        else:
            targets = dups = []
        assert bool(targets) == bool(dups)
        if targets:
            ind.append(sum(w[i, j] for j in targets))
            dup.append(sum(w[i, j] for j in dups))
    return {"previous_token": prev, "first_token": first, "diagonal": diag,
            "induction": np.mean(ind) if ind else math.nan,
            "duplicate_token": np.mean(dup) if dup else math.nan,
            "induction_queries": len(ind)}


def assert_matches(s, ref, tol=1e-12):
    for name, value in ref.items():
        got = getattr(s, name)
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got), (name, got)
        else:
            assert got == pytest.approx(value, abs=tol), name


def random_map(rng, n, causal=True):
    logits = rng.standard_normal((n, n)) * 2.0
    if causal:
        logits[np.triu_indices(n, 1)] = -np.inf
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def repeated_random(rng, period, copies=2, vocab=50000):
    block = rng.permutation(vocab)[:period]
    return np.tile(block, copies)


def uniform_causal(n):
    p = np.tril(np.ones((n, n)))
    return p / p.sum(axis=1, keepdims=True)


# ---- constructed maps -------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 5, 9])
def test_pure_previous_token(n):
    p = np.zeros((n, n))
    p[0, 0] = 1.0
    p[np.arange(1, n), np.arange(n - 1)] = 1.0
    s = attnrank.head_scores(p)
    assert s.previous_token == pytest.approx(1.0)
    assert s.diagonal == pytest.approx(1.0 / n)
    assert s.first_token == pytest.approx(2.0 / n)
    assert s.previous_token_queries == n - 1
    assert math.isnan(s.induction) and math.isnan(s.duplicate_token)
    assert s.not_defined == {"induction": "no tokens or period given",
                             "duplicate_token": "no tokens or period given"}
    assert s.defined("previous_token") and not s.defined("induction")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 10, 33])
def test_uniform_causal_closed_forms(n):
    h = sum(1.0 / k for k in range(1, n + 1))
    s = attnrank.head_scores(uniform_causal(n))
    assert s.first_token == pytest.approx(h / n, abs=1e-14)
    assert s.diagonal == pytest.approx(h / n, abs=1e-14)
    if n == 1:
        assert math.isnan(s.previous_token)
        assert s.not_defined["previous_token"] == "n = 1: no query has a previous token"
    else:
        assert s.previous_token == pytest.approx((h - 1.0) / (n - 1), abs=1e-14)
        assert "previous_token" not in s.not_defined


def test_perfect_induction_on_repeated_random_tokens():
    rng = np.random.default_rng(24)
    L = 7
    ids = repeated_random(rng, L)
    n = 2 * L
    p = np.zeros((n, n))
    p[np.arange(L), 0] = 1.0
    p[np.arange(L, n), np.arange(L, n) - L + 1] = 1.0
    for kw in ({"tokens": ids}, {"period": L}):
        s = attnrank.head_scores(p, **kw)
        assert s.induction == pytest.approx(1.0)
        assert s.induction_queries == L
        assert s.duplicate_token == 0.0
        assert s.previous_token == pytest.approx(1.0 / (n - 1))  # query 1 only
        assert s.first_token == pytest.approx(L / n)
        assert s.not_defined == {}


@pytest.mark.parametrize("L", [1, 2, 5, 16])
def test_transformerlens_offset_diagonal(L):
    """On a random block of L distinct tokens repeated twice, the token
    score, the period score and the mean of the diagonal at offset 1 - L over
    the second copy (TransformerLens's induction score) are one number."""
    rng = np.random.default_rng(L)
    ids = repeated_random(rng, L)
    p = random_map(rng, 2 * L)
    stripe = np.diagonal(p, offset=1 - L)[1:]  # queries i = L .. 2L - 1
    assert stripe.shape == (L,)
    a = attnrank.head_scores(p, tokens=ids)
    b = attnrank.head_scores(p, period=L)
    assert a.induction == pytest.approx(stripe.mean(), abs=1e-14)
    assert b.induction == pytest.approx(stripe.mean(), abs=1e-14)
    assert a.duplicate_token == pytest.approx(np.diagonal(p, offset=-L).mean(), abs=1e-14)
    assert a.induction_queries == b.induction_queries == L


def test_three_copies_tokens_see_every_earlier_copy():
    rng = np.random.default_rng(3)
    L = 4
    ids = repeated_random(rng, L, copies=3)
    p = random_map(rng, 3 * L)
    a = attnrank.head_scores(p, tokens=ids)
    b = attnrank.head_scores(p, period=L)
    assert_matches(a, reference(p, tokens=ids))
    assert_matches(b, reference(p, period=L))
    assert a.induction > b.induction  # the third copy also looks at the first


def test_tokens_by_hand():
    ids = [7, 3, 7, 7, 3]
    w = np.array([[5.0 * i + j + 1 for j in range(5)] for i in range(5)])
    s = attnrank.head_scores(w, tokens=ids)
    assert s.induction_queries == 3
    assert s.induction == pytest.approx((12 + 17 + 19 + 23) / 3)
    assert s.duplicate_token == pytest.approx((11 + 16 + 18 + 22) / 3)


# ---- against the definitions -----------------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("axis", ["row", "col"])
def test_random_maps_match_definitions(seed, axis):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 24))
    p = random_map(rng, n, causal=bool(seed % 2))
    ids = rng.integers(0, 4, size=n)  # a small vocabulary: many repeats
    assert_matches(attnrank.head_scores(p, axis=axis), reference(p, axis=axis))
    assert_matches(attnrank.head_scores(p, axis=axis, tokens=ids),
                   reference(p, tokens=ids, axis=axis))
    if n >= 2:
        L = int(rng.integers(1, n))
        assert_matches(attnrank.head_scores(p, axis=axis, period=L),
                       reference(p, period=L, axis=axis))


def test_axes_agree_on_transpose():
    rng = np.random.default_rng(11)
    p = random_map(rng, 9, causal=False)
    ids = rng.integers(0, 3, size=9)
    a = attnrank.head_scores(p, tokens=ids)
    b = attnrank.head_scores(p.T, axis="col", tokens=ids)
    c = attnrank.head_scores(np.ascontiguousarray(p.T), axis="column", tokens=ids)
    for name in ("previous_token", "first_token", "diagonal", "induction",
                 "duplicate_token", "induction_queries"):
        assert getattr(a, name) == getattr(b, name) == getattr(c, name)
    assert b.axis == "col"
    assert attnrank.head_scores(p, axis="col").first_token != pytest.approx(a.first_token)


# ---- batches, layouts, dtypes ----------------------------------------------

def test_batch_with_per_batch_tokens():
    rng = np.random.default_rng(5)
    n = 10
    maps = np.stack([[random_map(rng, n) for _ in range(3)] for _ in range(2)])
    ids = rng.integers(0, 3, size=(2, n))
    s = attnrank.head_scores(maps, tokens=ids)
    assert s.shape == (2, 3)
    for name in ("previous_token", "first_token", "diagonal", "induction",
                 "duplicate_token", "induction_queries"):
        assert getattr(s, name).shape == (2, 3)
    for b in range(2):
        for h in range(3):
            ref = reference(maps[b, h], tokens=ids[b])
            for name, value in ref.items():
                assert getattr(s, name)[b, h] == pytest.approx(value, abs=1e-12)
    shared = attnrank.head_scores(maps, tokens=ids[0])
    full = attnrank.head_scores(maps, tokens=np.broadcast_to(ids[:, None, :], (2, 3, n)))
    np.testing.assert_array_equal(full.induction, s.induction)
    np.testing.assert_array_equal(shared.induction[0], s.induction[0])


def test_batch_reports_maps_without_targets():
    p = np.stack([uniform_causal(6)] * 2)
    s = attnrank.head_scores(p, tokens=[[1, 2, 1, 2, 1, 2], [1, 2, 3, 4, 5, 6]])
    assert np.isnan(s.induction[1]) and not np.isnan(s.induction[0])
    assert list(s.induction_queries) == [4, 0]
    assert s.not_defined["induction"] == "no token occurs twice in 1 of 2 maps (NaN there)"
    s = attnrank.head_scores(p, tokens=[1, 2, 3, 4, 5, 6])
    assert s.not_defined["induction"] == "no token occurs twice"


def test_empty_batch():
    s = attnrank.head_scores(np.zeros((0, 3, 4, 4)), period=2)
    assert s.shape == (0, 3) and s.induction.shape == (0, 3)
    assert s.not_defined == {}
    s = attnrank.head_scores(np.zeros((0, 1, 1)))
    assert set(s.not_defined) == {"previous_token", "induction", "duplicate_token"}


def test_layouts_and_dtypes():
    rng = np.random.default_rng(8)
    base = random_map(rng, 12, causal=False)
    ids = rng.integers(0, 4, size=12)
    ref = attnrank.head_scores(base, tokens=ids)
    big = np.zeros((30, 40))
    big[:24:2, 1:37:3] = base
    stack = np.stack([base, base])
    variants = [np.asfortranarray(base), big[:24:2, 1:37:3], base.T.copy().T,
                np.broadcast_to(base, (3, 12, 12))[1], stack[0], stack[::-1][1]]
    for v in variants:
        s = attnrank.head_scores(v, tokens=ids)
        assert s.induction == ref.induction and s.previous_token == ref.previous_token
    flipped = base[::-1, ::-1]  # negative strides: the binding copies once
    assert_matches(attnrank.head_scores(flipped, tokens=ids), reference(flipped, tokens=ids))
    bcast = attnrank.head_scores(np.broadcast_to(base, (2, 12, 12)), tokens=ids)
    assert list(bcast.diagonal) == [ref.diagonal] * 2
    for dtype in (np.float32, np.float16):
        low = base.astype(dtype)
        s = attnrank.head_scores(low, tokens=ids)
        assert_matches(s, reference(low.astype(np.float64), tokens=ids))
    ints = attnrank.head_scores(np.eye(4, dtype=np.int32))
    assert ints.diagonal == 1.0 and ints.previous_token == 0.0
    assert attnrank.head_scores(uniform_causal(5).tolist()).diagonal == pytest.approx(
        reference(uniform_causal(5))["diagonal"])
    wide = np.array([2**63 + 5, 7, 2**63 + 5], dtype=np.uint64)  # ids above int64
    s = attnrank.head_scores(uniform_causal(3), tokens=wide)
    assert s.induction_queries == 1 and s.induction == pytest.approx(1 / 3)


# ---- the record ------------------------------------------------------------

def test_record():
    s = attnrank.head_scores(uniform_causal(4), period=2)
    assert isinstance(s, attnrank.HeadScores)
    assert "HeadScores" in attnrank.__all__ and "head_scores" in attnrank.__all__
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.induction = 0.0
    d = s.to_dict()
    assert d["targets"] == "period" and d["period"] == 2 and d["n"] == 4
    assert d["induction_queries"] == 2 and d["shape"] == []
    assert set(d) >= {"previous_token", "first_token", "diagonal", "induction",
                      "duplicate_token", "not_defined", "axis"}
    json.dumps(d, allow_nan=False)
    text = repr(s)
    assert "\n" not in text and text.startswith("HeadScores(n=4, axis='row'")
    assert "period=2" in text
    one = attnrank.head_scores(np.ones((1, 1)))
    d = one.to_dict()
    assert d["previous_token"] is None and d["induction"] is None
    json.dumps(d, allow_nan=False)
    assert "previous_token=nan (n = 1" in repr(one)
    batch = attnrank.head_scores(np.stack([uniform_causal(3)] * 2))
    assert "shape=(2,)" in repr(batch) and "\n" not in repr(batch)
    json.dumps(batch.to_dict(), allow_nan=False)
    with pytest.raises(KeyError):
        s.defined("sink")


def test_gil_released():
    rng = np.random.default_rng(1)
    maps = np.ascontiguousarray(np.broadcast_to(random_map(rng, 96), (600, 96, 96)))
    ids = rng.integers(0, 8, size=96)
    assert_gil_released(lambda: attnrank.head_scores(maps, tokens=ids))


# ---- torch -----------------------------------------------------------------

def test_torch_causal_softmax():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    n = 16
    scores = torch.randn(2, 3, n, n, generator=gen, dtype=torch.float64)
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    attn = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    ids = torch.randint(0, 5, (2, n), generator=gen)
    s = attnrank.head_scores(attn, tokens=ids)
    a = attn.numpy()
    for b in range(2):
        for h in range(3):
            ref = reference(a[b, h], tokens=ids[b].numpy())
            for name, value in ref.items():
                assert getattr(s, name)[b, h] == pytest.approx(value, abs=1e-12)
    f32 = attnrank.head_scores(attn.float()[0, 0], tokens=ids[0])
    assert f32.diagonal == pytest.approx(s.diagonal[0, 0], abs=1e-6)


# ---- errors ----------------------------------------------------------------

ERRORS = [
    (dict(p=np.float64(1.0)), attnrank.ArgumentError, "0-d"),
    (dict(p=np.ones(3)), attnrank.ArgumentError, "a matrix needs 2 dimensions"),
    (dict(p=np.ones((0, 0))), attnrank.ArgumentError, "empty matrix"),
    (dict(p=np.ones((2, 3))), attnrank.SizeError, "square maps"),
    (dict(p=np.ones((2, 3, 4))), attnrank.SizeError, "got 3 x 4"),
    (dict(p=np.eye(3), axis="auto"), attnrank.ArgumentError, "axis must be 'row'"),
    (dict(p=np.eye(3), axis=1), attnrank.ArgumentError, "axis must be"),
    (dict(p=np.eye(3), tokens=[1, 2, 3], period=1), attnrank.ArgumentError, "not both"),
    (dict(p=np.eye(3), period=0), attnrank.ArgumentError, "period 0 must be in [1, n - 1] = [1, 2]"),
    (dict(p=np.eye(3), period=3), attnrank.ArgumentError, "period 3 must be"),
    (dict(p=np.eye(3), period=-1), attnrank.ArgumentError, "period -1 must be"),
    (dict(p=np.eye(3), period=1.5), attnrank.ArgumentError, "period must be an integer"),
    (dict(p=np.eye(3), period=True), attnrank.ArgumentError, "period must be an integer"),
    (dict(p=np.eye(1), period=1), attnrank.ArgumentError, "[1, 0]"),
    (dict(p=np.eye(3), tokens=[1, 2]), attnrank.SizeError, "tokens has 2 positions"),
    (dict(p=np.eye(3), tokens=5), attnrank.ArgumentError, "scalar"),
    (dict(p=np.ones((2, 3, 3)), tokens=np.ones((3, 3), dtype=int)), attnrank.SizeError,
     "do not fit maps of leading shape (2,)"),
    (dict(p=np.ones((2, 3, 3)), tokens=np.ones((2, 2, 3), dtype=int)), attnrank.SizeError,
     "do not fit"),
    (dict(p=np.eye(3), tokens=[1.0, 2.0, 1.0]), attnrank.UnsupportedError, "integer token ids"),
    (dict(p=np.eye(3), tokens=[True, False, True]), attnrank.UnsupportedError, "dtype bool"),
    (dict(p=np.eye(3), tokens=[1, "a", 2]), attnrank.UnsupportedError, "integer token ids"),
    (dict(p=np.eye(3) * 1j), attnrank.UnsupportedError, "must be real"),
    (dict(p=np.array([[1.0, np.nan], [0.0, 1.0]])), attnrank.NonFiniteError,
     "P[0, 1] = nan is not finite"),
    (dict(p=np.array([[1.0, 0.0], [np.inf, 1.0]]), axis="col"), attnrank.NonFiniteError,
     "P[1, 0] = inf"),
    (dict(p=np.array([[1.0, 0.0], [-0.5, 1.0]])), attnrank.DomainError,
     "P[1, 0] = -0.5 is negative"),
]


@pytest.mark.parametrize("kwargs, cls, text", ERRORS)
def test_errors(kwargs, cls, text):
    with pytest.raises(cls) as info:
        attnrank.head_scores(**kwargs)
    assert text in str(info.value)
    assert "\n" not in str(info.value)
    assert info.value.function == "ar_head_scores_compute"


def test_error_names_the_map_of_a_batch():
    p = np.stack([[uniform_causal(4)] * 3] * 2)
    p[1, 2, 3, 1] = -1e-3
    with pytest.raises(attnrank.DomainError) as info:
        attnrank.head_scores(p)
    assert info.value.detail == "map [1, 2] of p"
    assert "P[3, 1] = -0.001 is negative" in info.value.message
    assert isinstance(info.value, ValueError)
