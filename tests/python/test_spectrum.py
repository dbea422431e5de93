"""attnrank.spectrum: the CLI's JSON on the same data, every numpy layout,
stacks, torch tensors, hostile inputs, the GIL."""

import json
import os
import subprocess

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released


def _rng(seed=7):
    return np.random.default_rng(seed)


def _cli_json(cli, tmp_path, a, *extra):
    path = tmp_path / "a.npy"
    np.save(path, a)
    out = subprocess.run([cli, "spectrum", str(path), "--json", *extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["matrices"]


def _without_label(m):
    return {k: v for k, v in m.items() if k != "label"}


def test_matrix_equals_the_cli_json(cli, tmp_path):
    a = _rng().standard_normal((9, 6)) @ np.diag([3, 2, 1, 1e-3, 1e-9, 0.0])
    want = _cli_json(cli, tmp_path, a)
    got = attnrank.spectrum(a)
    assert isinstance(got, attnrank.Spectrum)
    assert got.to_dict() == _without_label(want[0])
    assert got.rank == 5 and got.tolerance.precision == "float64"


def test_float32_stack_equals_the_cli_json(cli, tmp_path):
    a = _rng(3).random((2, 3, 5, 5)).astype(np.float32)
    want = _cli_json(cli, tmp_path, a)
    got = attnrank.spectrum(a)
    assert isinstance(got, attnrank.SpectrumStack)
    assert got.to_dict() == {"matrices": [_without_label(m) for m in want]}
    assert got.singular_values.shape == (2, 3, 5)
    assert got.ranks.shape == (2, 3)
    assert got.matrices[4].index == (1, 1)
    assert got.matrices[0].tolerance.precision == "float32"


def test_tolerance_options_equal_the_cli(cli, tmp_path):
    a = np.diag([1.0, 1e-4, 1e-8])
    want = _cli_json(cli, tmp_path, a, "--rtol", "1e-5", "--atol", "1e-9")
    got = attnrank.spectrum(a, rtol=1e-5, atol=1e-9)
    assert got.to_dict() == _without_label(want[0])
    assert got.rank == 2


def _layouts(a):
    """The same matrix in many numpy layouts (values equal to a)."""
    big = np.zeros((a.shape[0] * 2, a.shape[1] * 3))
    big[::2, ::3] = a
    rev = np.ascontiguousarray(a[::-1, ::-1])
    return {
        "C": np.ascontiguousarray(a),
        "F": np.asfortranarray(a),
        "transpose of F": np.ascontiguousarray(a.T).T,
        "step slices": big[::2, ::3],
        "negative strides": rev[::-1, ::-1],
        "read-only": np.frombuffer(np.ascontiguousarray(a).tobytes()).reshape(a.shape),
        "list": a.tolist(),
    }


def test_every_layout_gives_the_same_bits():
    a = _rng(11).standard_normal((7, 5))
    want = attnrank.spectrum(a).singular_values
    for name, x in _layouts(a).items():
        got = attnrank.spectrum(x).singular_values
        assert np.array_equal(got, want), name


def test_stack_layouts_and_leading_strides():
    s = _rng(5).standard_normal((3, 4, 6, 6))
    want = attnrank.spectrum(s).singular_values
    assert np.array_equal(attnrank.spectrum(np.asfortranarray(s)).singular_values, want)
    flipped = s[::-1, ::2]
    got = attnrank.spectrum(flipped).singular_values
    assert np.array_equal(got, want[::-1, ::2])
    t = attnrank.spectrum(np.swapaxes(s, -1, -2)).singular_values
    np.testing.assert_allclose(t, want, rtol=1e-13, atol=1e-14 * want.max())
    # the same as numpy's stacked SVD
    np.testing.assert_allclose(want, np.linalg.svd(s, compute_uv=False), rtol=1e-12,
                               atol=1e-13 * want.max())
    for threads in (1, 2, 3):
        assert np.array_equal(attnrank.spectrum(s, threads=threads).singular_values, want)


def test_edge_sizes():
    one = attnrank.spectrum(np.array([[2.5]]))
    assert one.rank == 1 and one.singular_values.tolist() == [2.5]
    row = attnrank.spectrum(np.array([3.0, 4.0]).reshape(1, -1))  # one row: reshape it
    assert (row.rows, row.cols) == (1, 2) and row.singular_values[0] == pytest.approx(5.0)
    zero = attnrank.spectrum(np.zeros((3, 2)))
    assert zero.rank == 0 and zero.stable_rank == 0.0
    empty_stack = attnrank.spectrum(np.zeros((0, 3, 3)))
    assert empty_stack.matrices == () and empty_stack.singular_values.shape == (0, 3)
    for shape in [(0, 3), (3, 0), (2, 0, 4)]:
        with pytest.raises(attnrank.ArgumentError, match="empty matrix"):
            attnrank.spectrum(np.zeros(shape))


def test_hostile_inputs_raise_and_never_crash():
    a = np.ones((4, 4))
    a[2, 1] = np.nan
    with pytest.raises(attnrank.NonFiniteError):
        attnrank.spectrum(a)
    stack = np.ones((2, 3, 4, 4))
    stack[1, 2, 0, 0] = np.inf
    with pytest.raises(attnrank.NonFiniteError,
                       match=r"non-finite value inf at row 0, column 0 \(matrix \[1, 2\]"):
        attnrank.spectrum(stack)
    for bad in [np.ones((3, 3), dtype=complex), np.array([[object()]]),
                np.ones((2, 2), dtype=bool), np.array([["a", "b"]]), {"a": 1}]:
        with pytest.raises(attnrank.UnsupportedError):
            attnrank.spectrum(bad)
    with pytest.raises(TypeError):  # UnsupportedError is a TypeError
        attnrank.spectrum(np.ones((2, 2), dtype=np.complex64))
    # a broadcast (zero-stride) view of a huge matrix: the copy cannot be made
    huge = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(1 << 28, 1 << 28),
                                           strides=(0, 0))
    with pytest.raises(MemoryError):
        attnrank.spectrum(huge)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.spectrum(np.eye(3), threads=-1)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.spectrum(np.eye(3), energy_fraction=0.0)
    # overlapping strides are copied, not refused or misread
    base = np.arange(10.0)
    sliding = np.lib.stride_tricks.as_strided(base, shape=(4, 4), strides=(8, 8))
    assert np.array_equal(attnrank.spectrum(sliding).singular_values,
                          attnrank.spectrum(np.array(sliding)).singular_values)


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    t = torch.randn(2, 5, 5, dtype=torch.float64, requires_grad=True)
    want = attnrank.spectrum(t.detach().numpy()).singular_values
    assert np.array_equal(attnrank.spectrum(t).singular_values, want)
    assert np.array_equal(attnrank.spectrum(t.transpose(-1, -2)).singular_values.shape,
                          want.shape)
    b = t.detach().to(torch.bfloat16)
    got = attnrank.spectrum(b)
    assert got.matrices[0].tolerance.precision == "bfloat16"
    want_b = attnrank.spectrum(b.float().numpy(), precision="bfloat16")
    assert got.to_dict() == want_b.to_dict()


def test_the_gil_is_released():
    a = _rng(2).standard_normal((700, 700))
    assert_gil_released(lambda: attnrank.spectrum(a), min_ticks=3)


# ---- inputs of fewer than 2 dimensions are not matrices ----

_NOT_MATRICES = [
    (np.float64(2.0), r"shape \(\) \(a 0-d scalar\); a matrix needs 2 dimensions"),
    (3.0, r"shape \(\) \(a 0-d scalar\)"),
    (np.array([3.0, 4.0]), r"shape \(2,\) \(1 dimension\); a matrix needs 2 dimensions "
                           r"\(for a single row use reshape\(1, -1\)\)"),
    ([0.5, 0.5], r"shape \(2,\) \(1 dimension\)"),
    (np.zeros(0), r"shape \(0,\) \(1 dimension\)"),
    (np.array([1.0, 2.0], dtype=np.float32), r"shape \(2,\)"),
]


@pytest.mark.parametrize("a,message", _NOT_MATRICES)
def test_scalars_and_vectors_are_refused(a, message):
    for f, name in ((attnrank.spectrum, "a"), (attnrank.represent, "p"),
                    (lambda q: attnrank.softmax_bottleneck(q, d=1), "p")):
        with pytest.raises(attnrank.ArgumentError, match=f"{name} has " + message):
            f(a)


def test_scalar_and_vector_tensors_are_refused():
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("torch stays out of sanitizer builds")
    torch = pytest.importorskip("torch")
    for t, shape in ((torch.tensor(1.0), r"\(\)"), (torch.tensor(1.0).bfloat16(), r"\(\)"),
                     (torch.ones(4) / 4, r"\(4,\)"), (torch.ones(4, dtype=torch.float16), r"\(4,\)")):
        with pytest.raises(attnrank.ArgumentError, match=r"a has shape " + shape):
            attnrank.spectrum(t)
        with pytest.raises(attnrank.ArgumentError, match=r"p has shape " + shape):
            attnrank.represent(t)
    # a 1 x n matrix made with reshape(1, -1) is fine
    assert attnrank.spectrum(torch.tensor([3.0, 4.0]).reshape(1, -1)).rank == 1


def test_a_one_dimensional_x_is_refused():
    p = np.full((3, 3), 1.0 / 3.0)
    with pytest.raises(attnrank.ArgumentError, match=r"x has shape \(3,\) \(1 dimension\)"):
        attnrank.represent(p, x=np.ones(3))


def test_rank_option_rules_are_the_librarys():
    # The library's rules (ar_rank_opts_check) in this face's keywords.
    for kw, text in (({"energy_fraction": 1.5}, "energy_fraction=: must be in (0, 1], got 1.5"),
                     ({"energy_fraction": 0.0}, "energy_fraction=: must be in (0, 1], got 0"),
                     ({"atol": -1.0}, "atol=: must be >= 0, got -1"),
                     ({"rtol": -1e-3}, "rtol=: must be >= 0, got -0.001")):
        with pytest.raises(attnrank.ArgumentError) as info:
            attnrank.spectrum(np.eye(3), **kw)
        assert text in str(info.value)
    assert attnrank.spectrum(np.eye(3), energy_fraction=1.0, atol=0.0, rtol=0.0).rank == 3
