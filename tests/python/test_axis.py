"""axis="auto", the default of attnrank.represent: the axis read from which
sums are 1 (ar_axis_infer_stack), reported in the record's axis field;
doubly stochastic maps and maps stochastic along neither axis raise."""

import json
import subprocess

import numpy as np
import pytest

import attnrank


def _softmax(s, axis):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _rows(n=8, seed=4, lead=()):
    return _softmax(np.random.default_rng(seed).standard_normal(lead + (n, n)), -1)


def test_numpy_rows_and_columns():
    p = _rows()
    got = attnrank.represent(p)
    assert got.axis == "row"
    assert got.to_dict() == attnrank.represent(p, axis="row").to_dict()
    t = attnrank.represent(p.T)
    assert t.axis == "col"
    assert t.to_dict() == attnrank.represent(p.T, axis="col").to_dict()


def test_torch_softmax_dim_last_is_rows():
    torch = pytest.importorskip("torch")
    s = torch.randn(6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    p = torch.softmax(s, dim=-1)
    assert attnrank.represent(p).axis == "row"
    assert attnrank.represent(p.T).axis == "col"
    # stored in float16: the rounded sums pass float16's tolerance
    half = torch.softmax(s.float(), dim=-1).half()
    assert attnrank.represent(half).axis == "row"
    assert attnrank.represent(half.T.contiguous()).axis == "col"
    # a batch x heads stack
    stack = torch.softmax(torch.randn(2, 3, 5, 5, dtype=torch.float64), dim=-1)
    rec = attnrank.represent(stack)
    assert rec.axis == "row" and len(rec.slices) == 6


def test_same_axis_as_the_cli(cli, tmp_path):
    p = _rows(n=6, seed=9)
    path = tmp_path / "p.npy"
    np.save(path, p)
    out = subprocess.run([cli, "represent", str(path), "--axis", "auto", "--json"],
                         capture_output=True, text=True, check=True)
    want = json.loads(out.stdout)
    want.pop("source")
    assert want["axis"] == "row"
    assert attnrank.represent(p).to_dict() == want


@pytest.mark.parametrize("p", [np.full((4, 4), 0.25), np.eye(3)[[2, 0, 1]],
                               np.array([[0.5, 0.3, 0.2], [0.3, 0.4, 0.3], [0.2, 0.3, 0.5]])],
                         ids=["uniform", "permutation", "symmetric"])
def test_doubly_stochastic_is_refused(p):
    with pytest.raises(attnrank.ArgumentError) as info:
        attnrank.represent(p)
    text = str(info.value)
    assert "rows and columns both sum to 1" in text
    assert "give axis='row' (PyTorch layout, rows are queries) or axis='col'" in text
    assert "--axis" not in text and "\n" not in text
    # stating the axis answers it
    assert attnrank.represent(p + 1e-3 * (p == 0), axis="col", sum_tol=1e-2).axis == "col"


def test_neither_is_refused():
    with pytest.raises(attnrank.DomainError,
                       match=r"neither the rows nor the columns sum to 1 \(row 0 sums to 1\.5, "
                             r"column 0 to 1\.5; tolerance .*give axis='row' or axis='col'"):
        attnrank.represent(np.full((3, 3), 0.5))


def test_one_by_one():
    # [1] is the same map in both layouts: the column axis, as before
    one = attnrank.represent(np.array([[1.0]]))
    assert one.axis == "col" and one.min_head_size == 0
    with pytest.raises(attnrank.DomainError, match="neither"):
        attnrank.represent(np.array([[0.5]]))


def test_stacks():
    rows = _rows(n=5, lead=(2, 3))
    assert attnrank.represent(rows).axis == "row"
    assert attnrank.represent(np.swapaxes(rows, -1, -2)).axis == "col"
    # a doubly stochastic slice goes with the others
    mixed = rows.copy()
    mixed[1, 2] = 0.2
    assert attnrank.represent(mixed).axis == "row"
    # slices that disagree: both named, the later one as an index
    bad = rows.copy()
    bad[1, 1] = bad[1, 1].T
    with pytest.raises(attnrank.DomainError) as info:
        attnrank.represent(bad)
    text = str(info.value)
    assert "slice 0 is only row-stochastic but slice 4 only column-stochastic" in text
    assert "slice (1, 1) of p" in text
    # empty: no map to read and nothing to analyse
    assert attnrank.represent(np.zeros((0, 4, 4))).slices == ()


def test_masked_maps():
    n = 8
    keep = np.tril(np.ones((n, n), dtype=bool))
    s = np.where(keep, np.random.default_rng(5).standard_normal((n, n)), -np.inf)
    p = _softmax(s, 1)
    got = attnrank.represent(p, mask="causal")
    assert got.axis == "row" and got.mask.kind == "causal"
    assert attnrank.represent(p.T, mask="auto").axis == "col"


def test_bad_axis_names_auto():
    with pytest.raises(attnrank.ArgumentError, match="axis must be 'auto', 'col' or 'row'"):
        attnrank.represent(_rows(), axis="diag")
