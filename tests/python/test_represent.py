"""attnrank.represent, heads, params: the CLI's JSON on the same inputs
(unmasked and masked maps, stacks, a given X, certificates), layouts,
hostile inputs, the GIL."""

import json
import os
import subprocess

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released, python_spelling


def _rng(seed=7):
    return np.random.default_rng(seed)


def _softmax(s, axis):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _head_map(n=16, d=None, k=4, axis="col", causal=False, seed=1):
    """The map of one random head on X = I (or a random d x n X): columns as
    queries S = (W_k X)^T (W_q X) / sqrt(k), rows as queries its transpose."""
    rng = _rng(seed)
    d = n if d is None else d
    x = np.eye(n) if d == n else rng.standard_normal((d, n))
    wq, wk = rng.standard_normal((k, d)), rng.standard_normal((k, d))
    s = (wk @ x).T @ (wq @ x) / np.sqrt(k)  # s[key, query]
    if axis == "row":
        s = s.T  # s[query, key]
    if causal:
        keep = np.tril(np.ones((n, n), dtype=bool)) if axis == "row" else \
            np.triu(np.ones((n, n), dtype=bool))
        s = np.where(keep, s, -np.inf)
    return _softmax(s, 1 if axis == "row" else 0), x


def _drop_sources(d):
    if isinstance(d, dict):
        return {k: _drop_sources(v) for k, v in d.items() if k not in ("source",)}
    if isinstance(d, list):
        return [_drop_sources(v) for v in d]
    return d


def _run(cli, *args, ok=(0, 1)):
    out = subprocess.run([cli, *[str(a) for a in args], "--json"], capture_output=True,
                         text=True)
    assert out.returncode in ok, out.stderr
    return _drop_sources(json.loads(out.stdout))


def _cli_represent(cli, tmp_path, p, *extra, x=None):
    path = tmp_path / "p.npy"
    np.save(path, p)
    args = ["represent", path, *extra]
    if x is not None:
        np.save(tmp_path / "x.npy", x)
        args += ["--X", tmp_path / "x.npy"]
    return _run(cli, *args)


# ---- unmasked ------------------------------------------------------------------

def test_bidirectional_head_equals_the_cli(cli, tmp_path):
    p, _ = _head_map(n=16, k=4)
    got = attnrank.represent(p)
    assert isinstance(got, attnrank.Represent)
    assert got.to_dict() == _cli_represent(cli, tmp_path, p)
    assert got.min_head_size == 4 and got.representable and got.feasible
    assert got.certificate is not None and got.certificate.wq is None
    assert got.singular_values.shape == (16,)


def test_certificate_reproduces_the_map(cli, tmp_path):
    for axis in ("col", "row"):
        p, _ = _head_map(n=16, k=3, axis=axis, seed=5)
        got = attnrank.represent(p, axis=axis, certificate=True)
        want = _cli_represent(cli, tmp_path, p, "--axis", axis, "--weights-out",
                              tmp_path / "w")
        want["certificate"].pop("weights_prefix")
        assert got.to_dict() == want
        c = got.certificate
        assert c.wq.shape == c.wk.shape == (3, 16)
        assert np.array_equal(c.wq, np.load(tmp_path / "w_wq.npy"))
        assert np.array_equal(c.wk, np.load(tmp_path / "w_wk.npy"))
        if axis == "col":
            s = c.wk.T @ c.wq / np.sqrt(3)
            np.testing.assert_allclose(_softmax(s, 0), p, atol=1e-10)
        else:
            s = c.wq.T @ c.wk / np.sqrt(3)
            np.testing.assert_allclose(_softmax(s, 1), p, atol=1e-10)
        c.wq[0, 0] = 1.0  # an owned, writable copy
    # a larger head size than the minimum: zero rows are added
    p, _ = _head_map(n=16, k=2)
    big = attnrank.represent(p, head_size=5, certificate=True)
    assert big.head_size == 5 and big.certificate.wq.shape == (5, 16)


def test_below_the_minimum_logit_error_and_fit(cli, tmp_path):
    p, _ = _head_map(n=16, k=6, seed=3)
    got = attnrank.represent(p, head_size=2, fit=False)
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--head-size", "2", "--no-fit")
    assert not got.representable and got.certificate is None
    assert got.fit_skipped == "--no-fit" and got.logit_error > 0
    fitted = attnrank.represent(p, head_size=2, max_iter=30, seed=4)
    want = _cli_represent(cli, tmp_path, p, "--head-size", "2", "--max-iter", "30",
                          "--seed", "4")
    assert fitted.to_dict() == want
    assert fitted.fit.head_size == 2 and fitted.fit.iterations <= 30


def test_float32_and_tolerances_equal_the_cli(cli, tmp_path):
    p, _ = _head_map(n=12, k=3, seed=9)
    p32 = p.astype(np.float32)
    got = attnrank.represent(p32)
    assert got.tolerance.precision == "float32"
    assert got.to_dict() == _cli_represent(cli, tmp_path, p32)
    opts = attnrank.represent(p, rtol=1e-6, atol=1e-12, sum_tol=1e-9, precision="float32")
    assert opts.to_dict() == _cli_represent(cli, tmp_path, p, "--rtol", "1e-6", "--atol",
                                            "1e-12", "--sum-tol", "1e-9", "--precision",
                                            "float32")


def test_given_x_equals_the_cli(cli, tmp_path):
    # a map produced by a head on a d x n input with d < n: feasible
    p, x = _head_map(n=16, d=10, k=3, seed=2)
    got = attnrank.represent(p, x=x)
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, x=x)
    assert got.x.given and got.x.d == 10 and got.x.rank == 10 and got.feasible
    # a generic map on the same X: unreachable by any head size
    q = _softmax(_rng(4).standard_normal((16, 16)), 0)
    bad = attnrank.represent(q, x=x, certificate=True)
    assert bad.to_dict() == _cli_represent(cli, tmp_path, q, x=x)
    assert not bad.feasible and bad.min_head_size is None
    assert bad.residual.failed in ("key", "query", "both") and bad.certificate is None


def test_smoothing_equals_the_cli(cli, tmp_path):
    p, _ = _head_map(n=10, k=2)
    p[3, 4] = 0.0
    p /= p.sum(axis=0)
    got = attnrank.represent(p, smooth=1e-6)
    assert got.smoothing is not None and got.smoothing.zeros == 1
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--smooth", "1e-6")


# ---- masked -------------------------------------------------------------------

def test_causal_head_equals_the_cli(cli, tmp_path):
    p, _ = _head_map(n=16, k=3, axis="row", causal=True, seed=8)
    for mask in ("causal", "auto"):
        got = attnrank.represent(p, axis="row", mask=mask, certificate=True)
        assert isinstance(got, attnrank.MaskedRepresent)
        assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row",
                                               "--mask", mask)
        assert got.status == "exact" and got.min_head_size == 3 and got.representable
        assert got.mask.kind == "causal"
        assert got.mask_source == ("inferred" if mask == "auto" else "given")
        c = got.certificate
        s = c.wq.T @ c.wk / np.sqrt(c.head_size)
        s = np.where(np.tril(np.ones((16, 16), dtype=bool)), s, -np.inf)
        np.testing.assert_allclose(_softmax(s, 1), p, atol=1e-8)
    # the same mask as a boolean array
    arr = attnrank.represent(p, axis="row", mask=np.tril(np.ones((16, 16), dtype=bool)))
    assert arr.mask.kind == "causal" and arr.min_head_size == 3
    # below the lower bound: the error bound, and the fit or its skip
    low = attnrank.represent(p, axis="row", mask="causal", head_size=1, fit=False)
    assert low.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask",
                                           "causal", "--head-size", "1", "--no-fit")
    assert low.representable is False and low.logit_error_lower is not None
    fitted = attnrank.represent(p, axis="row", mask="causal", head_size=1, max_iter=20)
    assert fitted.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask",
                                              "causal", "--head-size", "1", "--max-iter", "20")


def test_unmasked_storage_rule(cli, tmp_path):
    """Bidirectional planted heads of size k stored in float16 (equal to the
    CLI) and bfloat16: the cut is the rounding noise of log P, the estimate
    reads k and the certain lower bound never exceeds it; numpy's relative
    rule (a given rtol) read 0 to 6 on the same maps."""
    for k in (4, 8):
        p, _ = _head_map(n=64, k=k, axis="row", seed=k)
        half = p.astype(np.float16)
        got = attnrank.represent(half, axis="row")
        cli_json = _cli_represent(cli, tmp_path, half, "--axis", "row")
        # the same keys and values; ||log P||_2 (and rtol through it) may differ in the last
        # digit between the processes (BLAS threads)
        assert list(got.to_dict()["tolerance"]) == list(cli_json["tolerance"])
        assert got.to_dict()["tolerance"] == pytest.approx(cli_json["tolerance"], rel=1e-12)
        assert {k: v for k, v in got.to_dict().items() if k != "tolerance"} == \
            {k: v for k, v in cli_json.items() if k != "tolerance"}
        t = got.tolerance
        assert t.rule == "storage" and t.precision == "float16"
        assert got.min_head_size == k and t.certain_rank <= k
        assert 0 < t.threshold < t.certain_threshold
        assert t.rtol == pytest.approx(t.threshold / t.log_norm2)
        relative = attnrank.represent(half, axis="row", rtol=64 * 2.0 ** -10)
        assert relative.tolerance.rule is None
        torch = pytest.importorskip("torch")
        b = attnrank.represent(torch.tensor(p).bfloat16(), axis="row")
        assert b.tolerance.rule == "storage" and b.min_head_size == k
        assert b.tolerance.certain_rank <= k


def test_storage_rule_on_float16_and_bfloat16_maps(cli, tmp_path):
    """A planted size-8 head at n = 64: float16 (numpy) equals the CLI, and a
    torch bfloat16 tensor is read at its own precision; the interval holds 8,
    the certificate's map is within each entry's rounding half-width
    (recomputed here from the weights), and "exact" comes only with it."""
    p, _ = _head_map(n=64, k=8, axis="row", causal=True, seed=3)
    half = p.astype(np.float16)
    got = attnrank.represent(half, axis="row", mask="causal", certificate=True)
    assert got.to_dict() == _cli_represent(cli, tmp_path, half, "--axis", "row",
                                           "--mask", "causal")
    assert got.tolerance.rule == "storage" and got.tolerance.precision == "float16"
    assert got.min_head_size_lower <= 8 <= got.min_head_size_upper
    assert got.status == "exact" and got.min_head_size == 8
    c = got.certificate
    assert 0 < c.rounding_ratio <= 1
    s = c.wq.T @ c.wk / np.sqrt(c.head_size)
    s = np.where(np.tril(np.ones((64, 64), dtype=bool)), s, -np.inf)
    stored = half.astype(np.float64)
    e = np.floor(np.log2(np.where(stored > 0, stored, 1.0)))
    width = np.where(stored >= 2.0 ** -14, 2.0 ** (np.maximum(e, -14) - 11), 2.0 ** -25)
    on = np.tril(np.ones((64, 64), dtype=bool))
    assert np.max(np.abs(_softmax(s, 1) - stored)[on] / width[on]) <= 1.0 + 1e-9
    torch = pytest.importorskip("torch")
    b = attnrank.represent(torch.tensor(p).bfloat16(), axis="row", mask="causal")
    assert b.tolerance.precision == "bfloat16" and b.tolerance.rule == "storage"
    assert b.min_head_size_lower <= 8 <= b.min_head_size_upper
    assert b.status != "exact" or b.min_head_size == 8
    # a given tau keeps the tolerance rule
    given = attnrank.represent(half, axis="row", mask="causal", tau=1e-3)
    assert given.tolerance.rule is None and "rule" not in given.to_dict()["tolerance"]


def test_window_bounds_equal_the_cli(cli, tmp_path):
    n, w = 16, 4
    rng = _rng(12)
    s = rng.standard_normal((n, n))
    i, j = np.indices((n, n))
    s = np.where((j <= i) & (j > i - w), s, -np.inf)
    p = _softmax(s, 1)
    got = attnrank.represent(p, axis="row", mask=f"window:{w}", verify_seconds=0)
    want = _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask", f"window:{w}",
                          "--verify-seconds", "0")
    assert got.to_dict() == want
    assert got.mask.w == w and got.generic_min_head_size is not None


def test_dilated_planted_head_and_bad_syntax(cli, tmp_path):
    n = 24
    i, j = np.indices((n, n))
    rng = _rng(5)
    q, k = rng.standard_normal((n, 1)), rng.standard_normal((n, 1))
    s = np.where((j <= i) & (i - j < 6) & ((i - j) % 2 == 0), q @ k.T, -np.inf)
    p = _softmax(s, 1)
    got = attnrank.represent(p, axis="row", mask="dilated:3/2", verify_seconds=0)
    assert got.mask.kind == "dilated" and (got.mask.w, got.mask.d) == (3, 2)
    # an irregular pattern for the analysis: bounds, the lower bound the planted 1
    assert got.status == "bounds" and got.min_head_size_lower == 1 <= got.min_head_size_upper
    assert got.representable
    assert got.generic_min_head_size == 1
    want = _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask", "dilated:3/2",
                          "--verify-seconds", "0")
    assert got.to_dict() == want
    for bad in ("dilated:3", "dilated:0/2", "dilated:3/x"):
        with pytest.raises(attnrank.ArgumentError, match=f"'{bad}'"):
            attnrank.represent(p, axis="row", mask=bad)


def _float16_causal(n=64, scale=6.0, seed=2):
    """A causal softmax map (rows as queries) of Gaussian logits stored in
    float16: hundreds of its probabilities round to 0."""
    rng = _rng(seed)
    keep = np.tril(np.ones((n, n), dtype=bool))
    p = _softmax(np.where(keep, scale * rng.standard_normal((n, n)), -np.inf), 1)
    return p.astype(np.float16), keep


def test_float16_underflow_is_not_a_mask(cli, tmp_path):
    p, keep = _float16_causal()
    zeros = np.argwhere((p == 0) & keep)
    assert 300 <= len(zeros) <= 900
    r, c = zeros[0]
    # auto names the causal mask, the count, the first zero and the fix
    want = (rf"the causal mask with {len(zeros)} underflowed entries inside it "
            rf"\(first: entry \({r}, {c}\) = 0\).*float16.*mask='causal'.*smooth=EPS")
    for q in (p, p.astype(np.float64)):  # float16's values, stored or converted
        with pytest.raises(attnrank.DomainError, match=want):
            attnrank.represent(q, axis="row", mask="auto")
    # the stated mask alone: the zeros inside it are named and counted
    with pytest.raises(attnrank.DomainError,
                       match=rf"entry \({r}, {c}\) = 0 lies inside the causal mask "
                             rf"\(query {r}, key {c}; {len(zeros)} zeros inside it in all\)"
                             r".*smooth=EPS"):
        attnrank.represent(p, axis="row", mask="causal")
    # stated and smoothed: floor(n/2) = 32, as the CLI says
    got = attnrank.represent(p, axis="row", mask="causal", smooth=1e-9)
    assert got.status == "exact" and got.min_head_size == 32
    assert got.smoothing is not None and got.smoothing.zeros == len(zeros)
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask",
                                           "causal", "--smooth", "1e-9")
    # the same logits unrounded have no zero: causal inferred, 32
    exact = attnrank.represent(_softmax(np.where(keep, 6.0 * _rng(2).standard_normal(
        (64, 64)), -np.inf), 1), axis="row", mask="auto")
    assert exact.mask.kind == "causal" and exact.mask_source == "inferred"
    assert exact.min_head_size == 32


def test_inferred_irregular_pattern(cli, tmp_path):
    rng = _rng(4)
    n = 40
    i, j = np.indices((n, n))
    keep = (j == i) | ((j < i) & (rng.random((n, n)) < 0.5))
    p = _softmax(np.where(keep, rng.standard_normal((n, n)), -np.inf), 1)
    got = attnrank.represent(p, axis="row", mask="auto")
    assert got.mask.kind == "file" and got.mask_source == "inferred"
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask", "auto")
    # a window map stored in float16 without underflow is still the window
    w = (j <= i) & (i - j < 8)
    p16 = _softmax(np.where(w, rng.standard_normal((n, n)), -np.inf), 1).astype(np.float16)
    assert not ((p16 == 0) & w).any()
    win = attnrank.represent(p16, axis="row", mask="auto")
    assert win.mask.kind == "window" and win.mask.w == 8


def test_masked_x_equals_the_cli(cli, tmp_path):
    p, _ = _head_map(n=12, k=2, axis="row", causal=True, seed=6)
    x = _rng(3).standard_normal((14, 12))
    got = attnrank.represent(p, axis="row", mask="causal", x=x)
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask",
                                           "causal", x=x)
    assert got.x.given and got.x.d == 14


# ---- stacks -------------------------------------------------------------------

def test_stack_equals_the_cli(cli, tmp_path):
    maps = np.stack([np.stack([_head_map(n=16, k=k, seed=10 * b + k)[0] for k in (1, 2, 5)])
                     for b in range(2)])
    got = attnrank.represent(maps)
    assert isinstance(got, attnrank.RepresentStack)
    assert got.to_dict() == _cli_represent(cli, tmp_path, maps)
    assert got.min_head_sizes.tolist() == [[1, 2, 5], [1, 2, 5]]
    assert got.slices[4].index == (1, 1)
    tested = attnrank.represent(maps, head_size=2)
    assert tested.to_dict() == _cli_represent(cli, tmp_path, maps, "--head-size", "2")
    assert [s.representable for s in tested.slices] == [True, True, False] * 2


def test_causal_stack_equals_the_cli(cli, tmp_path):
    maps = np.stack([_head_map(n=16, k=k, axis="row", causal=True, seed=k)[0]
                     for k in (1, 2, 3, 4)]).reshape(2, 2, 16, 16)
    for mask in ("causal", "auto"):
        got = attnrank.represent(maps, axis="row", mask=mask)
        assert got.to_dict() == _cli_represent(cli, tmp_path, maps, "--axis", "row",
                                               "--mask", mask)
        assert got.summary.slices == 4 and got.summary.exact == 4
    # layouts: a Fortran-order copy and a stack read through negative strides
    want = attnrank.represent(maps, axis="row", mask="causal").to_dict()
    f = attnrank.represent(np.asfortranarray(maps), axis="row", mask="causal")
    assert f.to_dict() == want
    flipped = attnrank.represent(maps[::-1], axis="row", mask="causal")
    assert [s.min_head_size for s in flipped.slices] == [3, 4, 1, 2]


def test_layouts_give_the_same_answer():
    p, _ = _head_map(n=12, k=3, seed=21)
    want = attnrank.represent(p).to_dict()
    big = np.zeros((24, 36))
    big[::2, ::3] = p
    for name, q in {"F": np.asfortranarray(p), "slices": big[::2, ::3],
                    "transpose": np.ascontiguousarray(p.T).T, "list": p.tolist()}.items():
        assert attnrank.represent(q).to_dict() == want, name


# ---- hostile inputs ---------------------------------------------------------

def test_hostile_inputs_raise_and_never_crash():
    p, _ = _head_map(n=8, k=2)
    nan = p.copy()
    nan[2, 3] = np.nan
    with pytest.raises(attnrank.NonFiniteError):
        attnrank.represent(nan)
    with pytest.raises(attnrank.NonFiniteError):
        attnrank.represent(nan, mask="causal")
    with pytest.raises(attnrank.DomainError, match="sum"):
        attnrank.represent(p * 1.5)  # not stochastic
    with pytest.raises(attnrank.DomainError):
        attnrank.represent(p, axis="row")  # stochastic along the other axis
    with pytest.raises(attnrank.DomainError):
        attnrank.represent(-p)
    zero = p.copy()
    zero[1, 0] = 0.0
    zero[:, 0] /= zero[:, 0].sum()  # still column-stochastic: the zero is the fault
    with pytest.raises(attnrank.DomainError, match=r"entry \(1, 0\).*mask='auto'"):
        attnrank.represent(zero)
    with pytest.raises(attnrank.SizeError, match="square"):
        attnrank.represent(np.ones((3, 4)) / 3)
    with pytest.raises(attnrank.SizeError, match="columns"):
        attnrank.represent(p, x=np.eye(7))
    with pytest.raises(attnrank.ArgumentError, match="empty"):
        attnrank.represent(np.zeros((0, 0)))
    for bad in ("windo:3", "window:0", "window:x", "docs:3/4", "causal\0x", "", "file:p.npy"):
        with pytest.raises(attnrank.Error):
            attnrank.represent(p, mask=bad)
    with pytest.raises(attnrank.SizeError):
        attnrank.represent(p, mask=np.ones((3, 3), dtype=bool))
    with pytest.raises(attnrank.DomainError):  # positive entries outside the mask
        attnrank.represent(p, mask="causal")
    for kw in ({"axis": "diag"}, {"axis": None}, {"rtol": -1.0}, {"atol": np.nan},
               {"smooth": 1.0}, {"tau": 1e-3}, {"head_size": -1}, {"seed": -1},
               {"precision": "float8"}, {"x": np.ones((2, 8, 8))}):
        with pytest.raises(attnrank.Error):
            attnrank.represent(p, **kw)
    for bad in (np.ones((3, 3), dtype=complex), np.array([["a"]]), {"a": 1}):
        with pytest.raises(attnrank.UnsupportedError):
            attnrank.represent(bad)
    stack = np.stack([p, p])
    stack[1, 0, 0] = np.inf
    with pytest.raises(attnrank.NonFiniteError, match=r"slice \(1,\)"):
        attnrank.represent(stack)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.represent(np.stack([p, p]), certificate=True)


def test_the_gil_is_released():
    p = _softmax(_rng(2).standard_normal((300, 300)), 0)
    assert_gil_released(lambda: attnrank.represent(p), min_ticks=2)


# ---- heads ---------------------------------------------------------------------

def test_heads_equal_the_cli(cli):
    for args, kw in [((512, 8, 64), {}), ((512, 8, 64), {"mask": "causal"}),
                     ((768, 12, 128), {"mask": "window:32", "head_size": 16}),
                     ((64, 4, 16), {"samples": 1, "seed": 3}),
                     ((96, 5, 32), {"head_size": 20, "samples": 0})]:
        flags = []
        for k, v in kw.items():
            flags += ["--" + k.replace("_", "-"), v]
        want = _run(cli, "heads", "--d", args[0], "--heads", args[1], "--n", args[2], *flags)
        got = attnrank.heads(*args, **kw)
        assert isinstance(got, attnrank.Heads)
        assert got.to_dict() == want, (args, kw)


def test_heads_from_a_config_equal_the_cli(cli, tmp_path):
    configs = {
        "mistral": {"model_type": "mistral", "architectures": ["MistralForCausalLM"],
                    "hidden_size": 256, "num_attention_heads": 8, "num_key_value_heads": 2,
                    "max_position_embeddings": 512, "sliding_window": 64},
        "gemma2": {"model_type": "gemma2", "hidden_size": 256, "num_attention_heads": 4,
                   "head_dim": 128, "max_position_embeddings": 256, "sliding_window": 32,
                   "num_hidden_layers": 4},
        "bert": {"model_type": "bert", "hidden_size": 128, "num_attention_heads": 4,
                 "max_position_embeddings": 64},
    }
    for name, cfg in configs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(cfg))
        got = attnrank.heads(config=path, samples=0)
        assert isinstance(got, attnrank.HeadsModel)
        assert got.to_dict() == _run(cli, "heads", "--config", path, "--samples", "0"), name
        over = attnrank.heads(n=32, config=str(path), mask="causal", samples=0)
        # mask_reason names the option as Python spells it (mask=), as weights' does
        assert over.to_dict() == python_spelling(_run(cli, "heads", "--config", path, "--n", "32",
                                                      "--mask", "causal", "--samples", "0")), name
        assert over.mask_reason == "mask="
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"model_type": "zzz", "hidden_size": 8,
                                   "num_attention_heads": 2, "max_position_embeddings": 8}))
    with pytest.raises(attnrank.Error, match="mask"):
        attnrank.heads(config=unknown)
    with pytest.raises(attnrank.FileError):
        attnrank.heads(config=tmp_path / "missing.json")
    # a size the config lacks: named, with the keyword that gives it
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"model_type": "bert", "hidden_size": 64,
                                   "max_position_embeddings": 32}))
    with pytest.raises(attnrank.ArgumentError,
                       match=r"no num_attention_heads \(or its aliases\); give heads"):
        attnrank.heads(config=partial, samples=0)
    given = attnrank.heads(heads=4, config=partial, samples=0)
    assert given.to_dict() == _run(cli, "heads", "--config", partial, "--heads", "4",
                                   "--samples", "0")
    out = subprocess.run([cli, "heads", "--config", str(partial)], capture_output=True, text=True)
    assert out.returncode == 2 and "no num_attention_heads (or its aliases); give --heads" \
        in out.stderr


def test_heads_hostile_arguments():
    with pytest.raises(attnrank.ArgumentError, match="divide"):
        attnrank.heads(100, 3, 16)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.heads(64, 4)
    for kw in ({"mask": "auto"}, {"mask": "window:"}, {"mask": "docs:4/4"}, {"mask": 3},
               {"head_size": 0}, {"samples": -1}):
        with pytest.raises(attnrank.Error):
            attnrank.heads(64, 4, 16, **kw)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.heads(1 << 25, 1, 16)


# ---- params ---------------------------------------------------------------------

def test_params_equal_the_cli(cli):
    for args, kw in [((768, 12), {}), ((1024, 16), {"head_size": 128, "layers": 12}),
                     ((512, 8), {"ffn": 1000, "vocab": 100})]:
        flags = []
        for k, v in kw.items():
            flags += ["--" + k.replace("_", "-"), v]
        want = _run(cli, "params", "--d", args[0], "--heads", args[1], *flags, ok=(0,))
        assert attnrank.params(*args, **kw).to_dict() == want
    tables = attnrank.params(paper_tables=True)
    assert isinstance(tables, attnrank.PaperTables) and len(tables.configs) == 15
    assert tables.to_dict() == _run(cli, "params", "--paper-tables", ok=(0,))
    with pytest.raises(attnrank.ArgumentError):
        attnrank.params(100, 3)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.params(paper_tables=True, d=3)
    with pytest.raises(attnrank.DomainError):
        attnrank.params(1 << 21, 1)


def test_edge_sizes_and_torch():
    one = attnrank.represent(np.array([[1.0]]))
    assert one.min_head_size == 0 and one.representable and one.certificate.head_size == 1
    assert attnrank.represent(np.array([[1.0]]), mask="causal").status == "exact"
    empty = attnrank.represent(np.full((0, 4, 4), 0.25))
    assert empty.slices == () and empty.summary.slices == 0
    single = attnrank.represent(np.full((1, 4, 4), 0.25), axis="col")  # a stack: > 2 axes
    assert isinstance(single, attnrank.RepresentStack) and single.slices[0].index == (0,)
    torch = pytest.importorskip("torch")
    t = torch.softmax(torch.randn(2, 8, 8, dtype=torch.float64), -1)
    want = attnrank.represent(t.numpy(), axis="row").to_dict()
    assert attnrank.represent(t, axis="row").to_dict() == want
    b = t.to(torch.bfloat16)
    assert attnrank.represent(b[0].float().numpy(), axis="row", precision="bfloat16",
                              sum_tol=1e-2).to_dict() == \
        attnrank.represent(b[0], axis="row", sum_tol=1e-2).to_dict()


# ---- sums of maps stored in low precision (docs/theory/low-rank-bottleneck.md, sec. 2) ----

def _bf16(a):
    """Round to bfloat16 (nearest, ties to even) with numpy alone, kept as float32."""
    b = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)).view(np.float32)


def _row_softmax(n, seed, scale=3.0):
    return _softmax(_rng(seed).standard_normal((n, n)) * scale, 1)


@pytest.mark.parametrize("n", [64, 256, 1024])
@pytest.mark.parametrize("factor", [0.9, 1.1])
def test_bfloat16_rows_off_by_ten_percent_are_refused(n, factor):
    p = _bf16(_row_softmax(n, n) * factor)
    with pytest.raises(attnrank.DomainError, match="row 0 sums to") as e:
        attnrank.represent(p, axis="row", precision="bfloat16")
    assert "not row-stochastic, and its columns do not sum to 1 either" in str(e.value)
    assert "--precision" not in str(e.value)  # no flag that would hide it
    assert 0.01 > attnrank.represent(_bf16(_row_softmax(16, 1)), axis="row",
                                     precision="bfloat16").tolerance.sum_tol


@pytest.mark.parametrize("n", [64, 256])
def test_honest_low_precision_roundings_pass(n):
    p = _row_softmax(n, 3 + n)
    for q, prec in ((_bf16(p), "bfloat16"), (p.astype(np.float32), "float32"),
                    (_row_softmax(n, 5, 1.0).astype(np.float16), "float16")):
        r = attnrank.represent(q, axis="row", precision=prec, head_size=n - 1, fit=False)
        assert r.tolerance.precision == prec
        assert r.max_sum_defect <= r.tolerance.sum_tol
    # float16 arrays carry their precision without the keyword
    r = attnrank.represent(_row_softmax(n, 5, 1.0).astype(np.float16), axis="row",
                           head_size=n - 1, fit=False)
    assert r.tolerance.precision == "float16"


def test_bfloat16_tensors_are_checked_in_bfloat16():
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("torch stays out of sanitizer builds")
    torch = pytest.importorskip("torch")
    n = 256
    p = torch.from_numpy(_row_softmax(n, 11))
    r = attnrank.represent(p.bfloat16(), axis="row", head_size=n - 1, fit=False)
    assert r.tolerance.precision == "bfloat16" and r.max_sum_defect <= r.tolerance.sum_tol
    for factor in (0.9, 1.1, 0.99):
        with pytest.raises(attnrank.DomainError, match="row 0 sums to"):
            attnrank.represent((p * factor).bfloat16(), axis="row")


def test_the_hint_advises_a_precision_only_for_its_values():
    # bfloat16 values in a float32 array, every entry rounded down: bfloat16 is the truth
    p = _bf16(np.full((1000, 1000), 1e-3))
    with pytest.raises(attnrank.DomainError,
                       match="every entry is a bfloat16 value: stored in bfloat16"):
        attnrank.represent(p, axis="row")
    attnrank.represent(p, axis="row", precision="bfloat16", head_size=999, fit=False)
    # float32 values off by a bfloat16-sized 3e-3: not told to claim bfloat16
    q = (_row_softmax(128, 2) * (1 + 3e-3)).astype(np.float32)
    with pytest.raises(attnrank.DomainError) as e:
        attnrank.represent(q, axis="row")
    assert "bfloat16" not in str(e.value) and "not row-stochastic" in str(e.value)
    # a column-stochastic map under axis="row"
    with pytest.raises(attnrank.DomainError,
                       match="every column sums to 1: the map is column-stochastic"):
        attnrank.represent(_row_softmax(32, 4).T, axis="row")


# ---- a positional bias (docs/theory/positional-bias.md) --------------------------

def _alibi(n=8, slope=0.5):
    i = np.arange(n)
    return -slope * np.abs(i[:, None] - i[None, :])


def test_bias_alibi_the_issue_numbers_and_the_cli(cli, tmp_path):
    # softmax(-0.5 |i - j|) at n = 8: 7 without the bias, 0 with ALiBi 0.5
    p = _softmax(_alibi(), 0)
    assert attnrank.represent(p, axis="col").min_head_size == 7
    got = attnrank.represent(p, axis="col", bias="alibi:0.5")
    assert got.min_head_size == 0 and got.representable
    b = got.positional_bias
    assert (b.kind, b.slope, b.bias_rank, b.reach) == ("alibi", 0.5, 7, 7)
    assert got.certificate.max_abs_error < 1e-12  # softmax(S + B) reproduces p
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--bias", "alibi:0.5")
    # the same bias as an array in p's layout: the same answer, kind "file"
    arr = attnrank.represent(p, axis="col", bias=_alibi())
    assert arr.min_head_size == 0 and arr.positional_bias.kind == "file"
    assert arr.positional_bias.source is None
    # "none" is no bias: the record is the bias-free one
    assert attnrank.represent(p, axis="col", bias="none").to_dict() == \
        attnrank.represent(p, axis="col").to_dict()


def test_bias_causal_rank_one_and_the_cli(cli, tmp_path):
    n = 8
    i = np.arange(n)
    s = np.where(i[None, :] <= i[:, None], -0.5 * (i[:, None] - i[None, :]), -np.inf)
    p = _softmax(s, 1)  # rows as queries
    got = attnrank.represent(p, axis="row", mask="causal", bias="alibi-causal:0.5")
    assert isinstance(got, attnrank.MaskedRepresent)
    assert got.min_head_size == 0 and got.positional_bias.bias_rank == 1
    assert got.positional_bias.reach == 1
    assert got.to_dict() == _cli_represent(cli, tmp_path, p, "--axis", "row", "--mask", "causal",
                                           "--bias", "alibi-causal:0.5")


def test_bias_planted_head_and_files(cli, tmp_path):
    n, rng = 8, _rng(5)
    s = rng.standard_normal((n, 2)) @ rng.standard_normal((2, n)) + _alibi()
    p = _softmax(s, 0)
    np.save(tmp_path / "b.npy", _alibi())
    got = attnrank.represent(p, axis="col", bias=f"file:{tmp_path / 'b.npy'}")
    assert got.min_head_size == 2 and got.certificate.kl_max < 1e-10
    below = attnrank.represent(p, axis="col", bias=_alibi(), head_size=1)
    assert not below.representable and below.logit_error > 0
    assert below.fit is None and below.fit_skipped == "a bias is given (the fit takes none)"
    np.save(tmp_path / "t5.npy", rng.standard_normal(32))
    t5 = attnrank.represent(p, axis="col", bias=f"t5:{tmp_path / 't5.npy'}")
    assert t5.positional_bias.kind == "t5" and t5.positional_bias.bias_rank == n - 1
    # the CLI's sources are file names of its own run: compared without them
    assert _drop_sources(t5.to_dict()) == _cli_represent(cli, tmp_path, p, "--bias",
                                                         f"t5:{tmp_path / 't5.npy'}")


def test_bias_refused():
    p = _softmax(_alibi(), 0)
    with pytest.raises(attnrank.ArgumentError, match="ALiBi slope"):
        attnrank.represent(p, axis="col", bias="alibi:x")
    with pytest.raises(attnrank.SizeError, match="bias must be n x n"):
        attnrank.represent(p, axis="col", bias=np.zeros((7, 7)))
    with pytest.raises(attnrank.FileError, match="nope.npy"):
        attnrank.represent(p, axis="col", bias="file:nope.npy")
    with pytest.raises(attnrank.ArgumentError, match="single map"):
        attnrank.represent(np.stack([p, p]), axis="col", bias="alibi:0.5")
    off = p.copy()
    off[0, 0] += 1e-3  # P' would sum to 1: the check is on p itself
    with pytest.raises(attnrank.DomainError, match="column-stochastic"):
        attnrank.represent(off, axis="col", bias="alibi:0.5")


def test_params_rules_are_the_librarys():
    # ar_bert_config_make, ar_paper_tables_check, ar_bert_params, in keywords.
    for kw, cls, text in (
            ({"d": 10, "heads": 3}, attnrank.ArgumentError,
             "heads=3 does not divide d=10; give head_size=P"),
            ({"d": 8}, attnrank.ArgumentError, "needs d=D and heads=H (or paper_tables=True)"),
            ({"d": 0, "heads": 1}, attnrank.ArgumentError, "d=: must be > 0, got 0"),
            ({"d": 8, "heads": 2, "layers": 0}, attnrank.ArgumentError,
             "layers=: must be >= 1, got 0"),
            ({"paper_tables": True, "d": 1}, attnrank.ArgumentError,
             "paper_tables=True takes no size options"),
            ({"d": (1 << 20) + 1, "heads": 1}, attnrank.DomainError,
             "sizes too large to count (limit 2^20 per size)")):
        with pytest.raises(cls) as info:
            attnrank.params(**kw)
        assert text in str(info.value)
    assert attnrank.params(d=8, heads=2, layers=1 << 20).to_dict()["total_params"] > 0
