"""attnrank.collapse: the CLI's JSON on the same arguments (seeded), the
facts of rank collapse the run must show (pure attention collapses, skips
keep the rank), the record's internal identities, edge sizes, hostile
inputs, the GIL."""

import math

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released
from theory_cli import flags as _flags, run_json as _cli


CASES = [
    ((2, 4, 4, 2), {}),
    ((6, 8, 8, 2), {"seed": 3}),
    ((3, 5, 6, 3), {"skip": True}),
    ((3, 6, 4, 1), {"mlp": True}),
    ((3, 6, 4, 2), {"mlp": True, "skip": True, "mlp_width": 5, "seed": 11}),
    ((4, 8, 8, 4), {"gamma": 1.5, "beta": 0.5}),
    ((3, 7, 5, 5), {"rtol": 1e-8, "atol": 1e-12, "fit_floor": 1e-6}),
    ((2, 4, 4, 2), {"seed": 2 ** 64 - 1}),
    ((1, 1, 1, 1), {}),
]


@pytest.mark.parametrize("args,kw", CASES)
def test_equals_the_cli(cli, args, kw):
    got = attnrank.collapse(*args, **kw)
    assert isinstance(got, attnrank.Collapse)
    want = _cli(cli, "collapse", "--layers", args[0], "--n", args[1], "--d", args[2],
                "--heads", args[3], *_flags(kw))
    assert got.to_dict() == want


@pytest.mark.parametrize("seed", range(5))
def test_pure_attention_collapses_and_skips_keep_the_rank(seed):
    # Dong et al.: without skips the residual decays doubly exponentially to
    # rank 1; the skip connections keep it (here, with these seeds, n = d = 8).
    pure = attnrank.collapse(8, 8, 8, 2, seed=seed)
    skip = attnrank.collapse(8, 8, 8, 2, seed=seed, skip=True)
    assert pure.depths[0].rank == skip.depths[0].rank == 8
    assert pure.ranks[-1] == 1 and pure.rel_res_fro[-1] < 1e-12 * pure.rel_res_fro[0]
    assert np.all(np.diff(pure.rel_res_fro) <= 0.0)  # non-increasing along depth
    assert skip.ranks[-1] == 8 and skip.rel_res_fro[-1] > 1e-3
    assert pure.decay_fit.geometric_factor < skip.decay_fit.geometric_factor


def test_seeded_prefixes_and_shared_inputs():
    # layer l's weights come from (seed, l) and the input from (seed): a
    # deeper run extends a shallower one, and every variant starts from the
    # same input.
    short, long_ = attnrank.collapse(2, 6, 4, 2, seed=7), attnrank.collapse(4, 6, 4, 2, seed=7)
    assert [d.to_dict() for d in long_.depths[:3]] == [d.to_dict() for d in short.depths]
    mlp = attnrank.collapse(2, 6, 4, 2, seed=7, mlp=True, skip=True)
    assert mlp.depths[0].to_dict() == short.depths[0].to_dict()
    assert mlp.variant == "attention+mlp, skip" and mlp.mlp_width == 16  # 4 d
    other = attnrank.collapse(2, 6, 4, 2, seed=8)
    assert other.depths[0].norm_fro != short.depths[0].norm_fro


def test_record_identities():
    c = attnrank.collapse(5, 9, 6, 3, seed=1, gamma=2.0, beta=1.0)
    assert len(c.depths) == 6 and c.head_size == 2 and c.variant == "pure attention"
    assert math.isnan(c.depths[0].ratio) and c.to_dict()["depths"][0]["ratio"] is None
    for prev, dp in zip(c.depths, c.depths[1:]):
        assert dp.ratio == pytest.approx(dp.rel_res_fro / prev.rel_res_fro, rel=1e-12)
    for dp in c.depths:
        s = dp.singular_values
        assert s.shape == (6,) and np.all(np.diff(s) <= 0)
        assert dp.rel_res_fro == pytest.approx(dp.res_fro / dp.norm_fro, rel=1e-12)
        assert dp.norm_fro == pytest.approx(np.sqrt(np.sum(s ** 2)), rel=1e-10)
        assert dp.rank == int(np.sum(s > dp.tolerance.threshold))
        assert dp.stable_rank == pytest.approx(np.sum(s ** 2) / s[0] ** 2, rel=1e-10)
        assert dp.bound_log is not None
    assert c.bound.gamma == 2.0 and c.bound.beta == 1.0
    margins = [math.log(dp.res_1inf) - dp.bound_log for dp in c.depths[1:] if dp.res_1inf > 0]
    assert c.bound.worst_margin_log == pytest.approx(max(margins), rel=1e-12)
    f = c.decay_fit
    assert f.geometric_factor == pytest.approx(math.exp(f.geometric_slope), rel=1e-14)
    assert "bound" not in attnrank.collapse(2, 4, 4, 2).to_dict()
    assert "bound_log" not in attnrank.collapse(2, 4, 4, 2).to_dict()["depths"][1]


def test_edge_sizes():
    one_token = attnrank.collapse(3, 1, 4, 2)  # rows all equal: the residual is exactly 0
    assert np.all(one_token.rel_res_fro == 0.0) and np.all(one_token.ranks == 1)
    assert one_token.decay_fit.order_pairs == 0 and math.isnan(one_token.decay_fit.order)
    scalar = attnrank.collapse(1, 1, 1, 1)
    assert len(scalar.depths) == 2 and scalar.depths[0].singular_values.shape == (1,)
    two = attnrank.collapse(1, 2, 2, 2)  # heads = d: head size 1
    assert two.head_size == 1 and two.depths[1].depth == 1
    wide = attnrank.collapse(2, 3, 8, 1)  # n < d: min(n, d) singular values
    assert wide.depths[0].singular_values.shape == (3,) and wide.depths[0].rank == 3


# ---- hostile inputs (each raises an attnrank.Error subclass, never crashes) -------

HOSTILE = [
    ("layers 0", dict(layers=0), attnrank.ArgumentError),
    ("layers over 100000", dict(layers=100001), attnrank.ArgumentError),
    ("layers negative", dict(layers=-1), attnrank.ArgumentError),
    ("layers float", dict(layers=2.5), attnrank.ArgumentError),
    ("layers str", dict(layers="2"), attnrank.ArgumentError),
    ("n 0", dict(n=0), attnrank.ArgumentError),
    ("n huge", dict(n=2 ** 40), attnrank.OutOfMemoryError),
    ("n 2^64", dict(n=2 ** 64), attnrank.ArgumentError),
    ("d 0", dict(d=0), attnrank.ArgumentError),
    ("d complex", dict(d=4j), attnrank.ArgumentError),
    ("heads 0", dict(heads=0), attnrank.ArgumentError),
    ("heads not dividing", dict(heads=3), attnrank.ArgumentError),
    ("heads bool", dict(heads=True), attnrank.ArgumentError),
    ("mlp_width 0", dict(mlp=True, mlp_width=0), attnrank.ArgumentError),
    ("mlp_width huge", dict(mlp=True, mlp_width=2 ** 40), attnrank.OutOfMemoryError),
    ("skip int", dict(skip=1), attnrank.ArgumentError),
    ("mlp None", dict(mlp=None), attnrank.ArgumentError),
    ("seed negative", dict(seed=-3), attnrank.ArgumentError),
    ("seed 2^64", dict(seed=2 ** 64), attnrank.ArgumentError),
    ("seed str", dict(seed="1"), attnrank.ArgumentError),
    ("gamma alone", dict(gamma=1.0), attnrank.ArgumentError),
    ("beta alone", dict(beta=1.0), attnrank.ArgumentError),
    ("gamma 0", dict(gamma=0.0, beta=1.0), attnrank.ArgumentError),
    ("beta negative", dict(gamma=1.0, beta=-1.0), attnrank.ArgumentError),
    ("gamma NaN", dict(gamma=float("nan"), beta=1.0), attnrank.ArgumentError),
    ("beta inf", dict(gamma=1.0, beta=float("inf")), attnrank.ArgumentError),
    ("bound with skip", dict(gamma=1.0, beta=1.0, skip=True), attnrank.ArgumentError),
    ("bound with mlp", dict(gamma=1.0, beta=1.0, mlp=True), attnrank.ArgumentError),
    ("rtol negative", dict(rtol=-1.0), attnrank.ArgumentError),
    ("rtol NaN", dict(rtol=float("nan")), attnrank.ArgumentError),
    ("atol negative", dict(atol=-1e-9), attnrank.ArgumentError),
    ("atol object", dict(atol=object()), attnrank.ArgumentError),
    ("fit_floor 0", dict(fit_floor=0.0), attnrank.ArgumentError),
    ("fit_floor 1", dict(fit_floor=1.0), attnrank.ArgumentError),
    ("fit_floor inf", dict(fit_floor=float("inf")), attnrank.ArgumentError),
    ("fit_floor str", dict(fit_floor="1e-9"), attnrank.ArgumentError),
]


@pytest.mark.parametrize("name,kw,exc", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_inputs_raise(name, kw, exc):
    args = {"layers": 2, "n": 4, "d": 4, "heads": 2}
    args.update(kw)
    with pytest.raises(exc) as info:
        attnrank.collapse(args.pop("layers"), args.pop("n"), args.pop("d"), args.pop("heads"),
                          **args)
    assert isinstance(info.value, attnrank.Error) and str(info.value)


def test_the_gil_is_released():
    assert_gil_released(lambda: attnrank.collapse(30, 128, 64, 4, skip=True), min_ticks=2)

