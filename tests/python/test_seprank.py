"""attnrank.seprank: the CLI's JSON on the same arguments, the closed form of
the exact grid rank at two positions, edge sizes, hostile inputs, the GIL."""

import math

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released
from theory_cli import flags as _flags, run_json as _cli, run_status


CASES = [
    ((1, 2), {}),
    ((1, 2), {"exact": True}),
    ((2, 2), {"exact": True, "seed": 5}),
    ((1, 4), {"heads": 2, "n": 4, "partition": "0,2/1,3", "templates": 3, "exact": True}),
    ((1, 3), {"n": 3, "residual": True, "position": 1, "entry": 1, "exact": True,
              "primes": 2, "rtol": 1e-10, "atol": 1e-14}),
    ((1, 2), {"exact": True, "no_float": True, "rational": True}),
    ((2, 2), {"max_dim": 8, "threads": 2, "seed": 2 ** 64 - 1}),
    ((3, 2), {"exact": True}),  # float under-counts, no rank over Q (106 x 106)
    ((1, 2), {"n": 3, "templates": 1}),
    ((2, 2), {"exact": True, "max_memory": 1e9}),
]


@pytest.mark.parametrize("args,kw", CASES)
def test_equals_the_cli(cli, args, kw):
    got = attnrank.seprank(*args, **kw)
    assert isinstance(got, attnrank.Seprank)
    want = _cli(cli, "seprank", "--layers", args[0], "--d", args[1], *_flags(kw))
    assert got.to_dict() == want


def test_partition_as_a_pair_and_the_record():
    a = attnrank.seprank(1, 4, heads=2, n=4, partition=([0, 2], (1, 3)), templates=3)
    b = attnrank.seprank(1, 4, heads=2, n=4, partition="0,2/1,3", templates=3)
    assert a.to_dict() == b.to_dict() and a.partition == "0,2/1,3"
    assert a.rows == a.cols == 9 and a.singular_values.shape == (9,)
    assert a.exact_rank is None and a.primes is None and "exact_rank" not in a.to_dict()
    nf = attnrank.seprank(1, 2, exact=True, no_float=True)
    assert nf.float_rank is None and nf.singular_values is None
    assert "float_undercounts" not in nf.to_dict() and "tolerance" not in nf.to_dict()


@pytest.mark.parametrize("layers,d", [(1, 1), (1, 2), (1, 3), (2, 2), (1, 5), (2, 3), (3, 2)])
def test_two_positions_exact_rank_is_the_parity_count(layers, d):
    # N = 2, no residual: the parity bound C(d + (3^L - 1)/2, d) (docs/theory
    # /depth-width.md) is attained by the exact rank of a generic instance,
    # and the auto template count M = bound + 1 leaves room to see it.
    r = attnrank.seprank(layers, d, exact=True)
    closed = math.comb(d + (3 ** layers - 1) // 2, d)
    assert r.exact_rank == closed == r.bound and not r.saturated
    assert r.templates == closed + 1 and r.rows == r.cols == closed + 1
    assert r.primes_agree and all(p.rank == closed for p in r.primes)
    assert r.rational_rank in (None, closed)
    assert r.float_rank <= r.exact_rank
    assert r.float_undercounts == (r.float_rank < r.exact_rank)
    assert r.bound_log <= r.bound_log_split <= r.bound_log_monomial + 1e-12
    # the float rank is the count of singular values above the threshold
    assert r.float_rank == int(np.sum(r.singular_values > r.tolerance.threshold))


def test_float_rank_equals_exact_rank_on_small_grids():
    for layers, d in [(1, 2), (1, 4), (2, 2)]:
        r = attnrank.seprank(layers, d, exact=True)
        assert r.float_rank == r.exact_rank == r.rational_rank


def test_seeds_and_regime():
    a, b = attnrank.seprank(2, 2, seed=1), attnrank.seprank(2, 2, seed=1)
    assert a.to_dict() == b.to_dict()
    c = attnrank.seprank(2, 2, seed=2)
    assert not np.array_equal(a.singular_values, c.singular_values)
    big = attnrank.seprank(1, 2, seed=2 ** 64 - 1)
    assert big.seed == 2 ** 64 - 1 and big.to_dict()["seed"] == str(2 ** 64 - 1)
    assert attnrank.seprank(1, 2).regime == "linear"  # L = 1 >= log_3 2
    wide = attnrank.seprank(1, 27, templates=2)  # L = 1 < L_th = log_3 27 = 3
    assert wide.regime == "double_exponential" and wide.l_th == pytest.approx(3.0)


def test_edge_sizes():
    one = attnrank.seprank(1, 1, templates=1)  # a 1 x 1 grid
    assert one.rows == one.cols == 1 and one.float_rank <= 1 and one.saturated
    two = attnrank.seprank(1, 2, templates=2, exact=True)
    assert two.rows == 2 and two.exact_rank == 2 and two.saturated  # rank fills: lower bound
    three = attnrank.seprank(1, 2, n=3, position=2, exact=True, templates=3)
    assert three.position == 2 and three.partition == "0/1,2" and three.rows == 3


# ---- hostile inputs (each raises an attnrank.Error subclass, never crashes) -------

HOSTILE = [
    ("layers 0", dict(layers=0), attnrank.ArgumentError),
    ("layers 65", dict(layers=65), attnrank.ArgumentError),
    ("layers negative", dict(layers=-1), attnrank.ArgumentError),
    ("layers 2^64", dict(layers=2 ** 64), attnrank.ArgumentError),
    ("layers float", dict(layers=1.5), attnrank.ArgumentError),
    ("layers str", dict(layers="1"), attnrank.ArgumentError),
    ("layers bool", dict(layers=True), attnrank.ArgumentError),
    ("layers complex", dict(layers=1j), attnrank.ArgumentError),
    ("d 0", dict(d=0), attnrank.ArgumentError),
    ("d huge", dict(d=1 << 20), attnrank.ArgumentError),
    ("d object", dict(d=object()), attnrank.ArgumentError),
    ("heads not dividing", dict(d=3, heads=2), attnrank.ArgumentError),
    ("heads 0", dict(heads=0), attnrank.ArgumentError),
    ("n 1", dict(n=1), attnrank.ArgumentError),
    ("n 33", dict(n=33), attnrank.ArgumentError),
    ("position out of range", dict(position=2), attnrank.ArgumentError),
    ("entry out of range", dict(entry=2), attnrank.ArgumentError),
    ("entry negative", dict(entry=-1), attnrank.ArgumentError),
    ("partition missing position", dict(n=3, partition="0/1"), attnrank.ArgumentError),
    ("partition repeated", dict(partition="0,1/1"), attnrank.ArgumentError),
    ("partition empty side", dict(partition="0,1/"), attnrank.ArgumentError),
    ("partition garbage", dict(partition="a/b"), attnrank.ArgumentError),
    ("partition NUL", dict(partition="0/1\0"), attnrank.ArgumentError),
    ("partition int", dict(partition=3), attnrank.ArgumentError),
    ("partition non-integer", dict(partition=([0.5], [1])), attnrank.ArgumentError),
    ("templates 0", dict(templates=0), attnrank.ArgumentError),
    ("templates huge", dict(n=4, templates=1 << 20), attnrank.OutOfMemoryError),
    ("max_dim 0", dict(max_dim=0), attnrank.ArgumentError),
    ("primes 0", dict(exact=True, primes=0), attnrank.ArgumentError),
    ("primes 4", dict(exact=True, primes=4), attnrank.ArgumentError),
    ("no_float without exact", dict(no_float=True), attnrank.ArgumentError),
    ("residual str", dict(residual="yes"), attnrank.ArgumentError),
    ("exact int", dict(exact=1), attnrank.ArgumentError),
    ("seed negative", dict(seed=-1), attnrank.ArgumentError),
    ("seed 2^64", dict(seed=2 ** 64), attnrank.ArgumentError),
    ("seed float", dict(seed=1.0), attnrank.ArgumentError),
    ("rtol NaN", dict(rtol=float("nan")), attnrank.ArgumentError),
    ("rtol negative", dict(rtol=-1e-3), attnrank.ArgumentError),
    ("rtol complex", dict(rtol=1j), attnrank.ArgumentError),
    ("atol inf", dict(atol=float("inf")), attnrank.ArgumentError),
    ("atol str", dict(atol="x"), attnrank.ArgumentError),
    ("threads 0", dict(threads=0), attnrank.ArgumentError),
    ("max_memory negative", dict(exact=True, max_memory=-1.0), attnrank.ArgumentError),
    ("max_memory NaN", dict(exact=True, max_memory=float("nan")), attnrank.ArgumentError),
    ("max_memory str", dict(exact=True, max_memory="1e9"), attnrank.ArgumentError),
    ("max_memory below FLINT's estimate", dict(exact=True, max_memory=1000.0),
     attnrank.OutOfMemoryError),
]


def test_max_memory_caps_flint_as_the_cli(cli):
    # Below the estimate of what FLINT would allocate: refused before FLINT
    # runs, naming the estimate, as the CLI refuses (exit 2); 0 means no cap.
    with pytest.raises(attnrank.OutOfMemoryError, match="max_bytes"):
        attnrank.seprank(2, 2, exact=True, max_memory=1000.0)
    assert run_status(cli, "seprank", "--layers", 2, "--d", 2, "--exact",
                      "--max-memory", 1000) == 2
    uncapped = attnrank.seprank(2, 2, exact=True, max_memory=0)
    assert uncapped.to_dict() == attnrank.seprank(2, 2, exact=True).to_dict()


@pytest.mark.parametrize("name,kw,exc", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_inputs_raise(name, kw, exc):
    args = {"layers": 1, "d": 2}
    args.update(kw)
    with pytest.raises(exc) as info:
        attnrank.seprank(args.pop("layers"), args.pop("d"), **args)
    assert isinstance(info.value, attnrank.Error) and str(info.value)


def test_the_gil_is_released():
    assert_gil_released(lambda: attnrank.seprank(2, 3, exact=True, seed=1), min_ticks=2)

