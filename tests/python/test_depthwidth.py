"""attnrank.depthwidth and depthwidth_fit: the CLI's JSON on the same
arguments and points, the refit of points on a line, the law's identities,
hostile inputs, the GIL."""

import json
import math

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released
from theory_cli import flags as _flags, run_json as _cli, run_status


def _drop_file(d):
    d = dict(d)
    d.pop("file", None)
    if isinstance(d.get("fit"), dict):
        d["fit"] = _drop_file(d["fit"])
    return d


def _csv(tmp_path, points, name="points.csv"):
    path = tmp_path / name
    cols = "depth,width" if np.shape(points)[1] == 2 else "depth,width,error"
    rows = [",".join(repr(float(v)) for v in row) for row in np.asarray(points, dtype=float)]
    path.write_text(cols + "\n" + "\n".join(rows) + "\n")
    return path


# Transition points: noisy (weighted and not), two only, and exactly on a line.
POINTS = {
    "noisy": [[6, 300.0], [12, 410.0], [24, 690.0], [48, 2100.0]],
    "weighted": [[6, 300.0, 20.0], [12, 410.0, 30.0], [24, 690.0, 15.0], [48, 2100.0, 400.0]],
    "two": [[4, 100.0], [8, 150.0]],
    "line": [[L, math.exp(5.0 + 0.05 * L)] for L in (2, 5, 9, 20)],
}

MODES = [
    {"params": 1e9}, {"params": 175e9}, {"params": 3.5e3},
    {"layers": 12}, {"layers": 1}, {"d": 768}, {"d": 1},
    {"layers": 12, "d": 768}, {"layers": 96, "d": 12288, "tolerance": 0.5},
    {"layers": 40, "d": 1440, "tolerance": 0.0},
]



@pytest.mark.parametrize("kw", MODES)
def test_modes_equal_the_cli(cli, kw):
    got = attnrank.depthwidth(**kw)
    assert got.to_dict() == _cli(cli, "depthwidth", *_flags(kw))
    given = attnrank.depthwidth(**kw, intercept=4.5, slope=0.07)
    assert given.law.source == "given"
    assert given.to_dict() == _cli(cli, "depthwidth", *_flags(kw), "--intercept", 4.5,
                                   "--slope", 0.07)
    one = attnrank.depthwidth(**kw, slope=0.06)
    assert one.to_dict() == _cli(cli, "depthwidth", *_flags(kw), "--slope", 0.06)


@pytest.mark.parametrize("name", sorted(POINTS))
def test_fit_equals_the_cli(cli, tmp_path, name):
    pts = POINTS[name]
    path = _csv(tmp_path, pts)
    want = _drop_file(_cli(cli, "depthwidth", "--fit", path))
    got = attnrank.depthwidth_fit(pts)
    assert isinstance(got, attnrank.DepthWidthFit) and got.mode == "fit"
    assert got.to_dict() == want
    assert attnrank.depthwidth(fit=pts).to_dict() == want
    assert got.weighted == (len(pts[0]) == 3) and got.points == len(pts)
    for kw in ({"params": 1e9}, {"layers": 12}, {"d": 768}, {"layers": 12, "d": 768}):
        applied = attnrank.depthwidth(**kw, fit=np.array(pts))
        assert applied.law.source == "fit" and applied.fit.mode is None
        assert applied.to_dict() == _drop_file(_cli(cli, "depthwidth", "--fit", path,
                                                    *_flags(kw)))


def test_law_file_and_mapping_equal_the_cli(cli, tmp_path):
    pts = POINTS["noisy"]
    law_path = tmp_path / "law.json"
    law_path.write_text(json.dumps(_cli(cli, "depthwidth", "--fit", _csv(tmp_path, pts))))
    for kw in ({"params": 1e9}, {"layers": 12, "d": 768}):
        want = _cli(cli, "depthwidth", "--law", law_path, *_flags(kw))
        assert want["law"]["source"] == str(law_path)
        assert attnrank.depthwidth(**kw, law=str(law_path)).to_dict() == want
        assert attnrank.depthwidth(**kw, law=law_path).to_dict() == want
        # a record or a mapping: the same law, source "given"
        want["law"]["source"] = "given"
        fit = attnrank.depthwidth_fit(pts)
        assert attnrank.depthwidth(**kw, law=fit).to_dict() == want
        assert attnrank.depthwidth(**kw, law=fit.to_dict()).to_dict() == want
        numpy_law = {"intercept": np.float64(fit.intercept), "slope": np.float64(fit.slope),
                     "params_coeff": np.int64(12)}
        assert attnrank.depthwidth(**kw, law=numpy_law).to_dict() == want
    coeff = tmp_path / "coeff.json"
    coeff.write_text(json.dumps({"law": {"intercept": 5, "slope": 0.1}, "params_coeff": 10}))
    want = _cli(cli, "depthwidth", "--law", coeff, "--params", "1e8")
    got = attnrank.depthwidth(1e8, law=coeff)
    assert got.to_dict() == want and got.law.params_coeff == 10.0
    # a mode's output read back keeps its law, params_coeff included
    chained = tmp_path / "chained.json"
    chained.write_text(json.dumps(want))
    again = _cli(cli, "depthwidth", "--law", chained, "--params", "1e8")
    assert again["law"]["params_coeff"] == 10.0
    assert attnrank.depthwidth(1e8, law=chained).to_dict() == again
    assert attnrank.depthwidth(1e8, law=got).law.params_coeff == 10.0
    # a null is a value: not a number, and not looked up under "law"
    null = tmp_path / "null.json"
    null.write_text(json.dumps({"intercept": None, "slope": 0.1, "law": {"intercept": 5}}))
    assert run_status(cli, "depthwidth", "--law", null, "--params", "1e8") == 2
    with pytest.raises(attnrank.FormatError, match="intercept"):
        attnrank.depthwidth(1e8, law=null)


def test_points_on_a_line_are_refit_exactly():
    a, b = 4.25, 0.0625
    depths = np.array([1.0, 3.0, 4.0, 10.0, 17.0])
    pts = np.column_stack([depths, np.exp(a + b * depths)])
    f = attnrank.depthwidth_fit(pts)
    assert f.intercept == pytest.approx(a, abs=1e-13)
    assert f.slope == pytest.approx(b, abs=1e-14)
    assert f.r2 == pytest.approx(1.0, abs=1e-14) and f.chi2 < 1e-25
    # weights change nothing on an exact line
    w = attnrank.depthwidth_fit(np.column_stack([pts, pts[:, 1] * 0.1]))
    assert w.weighted and w.slope == pytest.approx(b, abs=1e-13)
    # the refit law maps each depth back to its width, and each width to its depth
    for L, width in pts:
        t = attnrank.depthwidth(layers=int(L), fit=pts)
        assert t.transition_d == pytest.approx(width, rel=1e-12)
    back = attnrank.depthwidth(d=int(round(pts[-1, 1])), fit=pts)
    assert back.transition_layers == pytest.approx(
        (math.log(round(pts[-1, 1])) - a) / b, rel=1e-11)


def test_law_identities():
    law = attnrank.depthwidth(params=1e9).law
    assert (law.intercept, law.slope, law.params_coeff, law.source) == \
        (5.039, 0.0555, 12.0, "paper")
    for budget in (1e6, 1e9, 175e9):
        o = attnrank.depthwidth(params=budget)
        # L* lies on the transition line and has the budget's size
        assert o.optimal_d == pytest.approx(math.exp(5.039 + 0.0555 * o.optimal_layers),
                                            rel=1e-12)
        assert 12 * o.optimal_layers * o.optimal_d ** 2 == pytest.approx(budget, rel=1e-11)
        assert o.l_th == pytest.approx(math.log(o.optimal_d) / math.log(3), rel=1e-12)
    v = attnrank.depthwidth(layers=12, d=768)
    assert v.total_params == 12 * 12 * 768 ** 2
    assert v.depth_efficient == (12 <= v.transition_layers)
    assert v.verdict == ("depth-efficient" if v.depth_efficient else "depth-inefficient")
    assert v.depth_ratio == pytest.approx(12 / v.optimal_layers, rel=1e-14)
    deep = attnrank.depthwidth(layers=200, d=64)
    assert not deep.depth_efficient and deep.verdict == "depth-inefficient"
    narrow = attnrank.depthwidth(d=1)  # past the transition at every depth
    assert narrow.transition_layers == pytest.approx(-5.039 / 0.0555, rel=1e-14)


def test_edge_sizes():
    assert attnrank.depthwidth_fit([[0, 1], [1, math.e]]).slope == pytest.approx(1.0)
    assert attnrank.depthwidth_fit(np.array([[0, 1], [1, math.e]]).T.copy().T).points == 2
    two = attnrank.depthwidth_fit([[1, 2], [2, 4]])
    assert two.chi2_red is not None and math.isnan(two.chi2_red)
    assert two.to_dict()["chi2_red"] is None
    three = attnrank.depthwidth_fit([[1, 2, 1], [2, 4, 1], [3, 9, 1]])
    assert three.points == 3 and three.weighted
    assert attnrank.depthwidth(layers=1, d=1).layers == 1


# ---- hostile inputs (each raises an attnrank.Error subclass, never crashes) -------

def _dw(**kw):
    return lambda: attnrank.depthwidth(**kw)


def _fit(points):
    return lambda: attnrank.depthwidth_fit(points)


HOSTILE = [
    ("no mode", _dw(), attnrank.ArgumentError),
    ("two modes", _dw(params=1e9, layers=3), attnrank.ArgumentError),
    ("params 0", _dw(params=0), attnrank.ArgumentError),
    ("params negative", _dw(params=-5.0), attnrank.ArgumentError),
    ("params NaN", _dw(params=float("nan")), attnrank.ArgumentError),
    ("params inf", _dw(params=float("inf")), attnrank.ArgumentError),
    ("params str", _dw(params="1e9"), attnrank.ArgumentError),
    ("params complex", _dw(params=1j), attnrank.ArgumentError),
    ("layers 0", _dw(layers=0), attnrank.ArgumentError),
    ("layers float", _dw(layers=1.5), attnrank.ArgumentError),
    ("layers huge", _dw(layers=2 ** 64), attnrank.ArgumentError),
    ("d negative", _dw(d=-4), attnrank.ArgumentError),
    ("d object", _dw(d=object()), attnrank.ArgumentError),
    ("tolerance negative", _dw(layers=2, d=4, tolerance=-0.1), attnrank.ArgumentError),
    ("tolerance NaN", _dw(layers=2, d=4, tolerance=float("nan")), attnrank.ArgumentError),
    ("intercept inf", _dw(layers=2, intercept=float("inf")), attnrank.ArgumentError),
    ("slope str", _dw(layers=2, slope="x"), attnrank.ArgumentError),
    ("two laws", _dw(layers=2, slope=0.1, law={"intercept": 1, "slope": 1}),
     attnrank.ArgumentError),
    ("fit and law", _dw(layers=2, fit=[[1, 2], [2, 3]], law={"intercept": 1, "slope": 1}),
     attnrank.ArgumentError),
    ("slope 0: no optimum", _dw(params=1e9, slope=0.0), attnrank.DomainError),
    ("slope 0: no transition depth", _dw(d=100, slope=0.0), attnrank.DomainError),
    ("negative slope: no optimum", _dw(params=1e9, slope=-0.1), attnrank.DomainError),
    ("law without slope", _dw(layers=2, law={"intercept": 1}), attnrank.ArgumentError),
    ("law bool slope", _dw(layers=2, law={"intercept": 1, "slope": True}),
     attnrank.ArgumentError),
    ("law NaN", _dw(layers=2, law={"intercept": float("nan"), "slope": 1}),
     attnrank.ArgumentError),
    ("law params_coeff 0", _dw(layers=2, law={"intercept": 1, "slope": 1, "params_coeff": 0}),
     attnrank.ArgumentError),
    ("law list", _dw(layers=2, law=[1, 2]), attnrank.ArgumentError),
    ("law missing file", _dw(layers=2, law="/nonexistent/law.json"), attnrank.FileError),
    ("fit 1 point", _fit([[1, 2]]), attnrank.ArgumentError),
    ("fit 0 points", _fit(np.zeros((0, 2))), attnrank.ArgumentError),
    ("fit 1 column", _fit([[1], [2]]), attnrank.SizeError),
    ("fit 4 columns", _fit(np.ones((3, 4))), attnrank.SizeError),
    ("fit 1-D", _fit([1.0, 2.0]), attnrank.ArgumentError),
    ("fit 3-D", _fit(np.ones((2, 2, 2))), attnrank.ArgumentError),
    ("fit scalar", _fit(3.0), attnrank.ArgumentError),
    ("fit NaN depth", _fit([[np.nan, 2], [2, 3]]), attnrank.DomainError),
    ("fit inf width", _fit([[1, np.inf], [2, 3]]), attnrank.DomainError),
    ("fit zero width", _fit([[1, 0], [2, 3]]), attnrank.DomainError),
    ("fit negative error", _fit([[1, 2, -1], [2, 3, 1]]), attnrank.DomainError),
    ("fit equal depths", _fit([[2, 2], [2, 3]]), attnrank.DomainError),
    ("fit complex", _fit(np.ones((2, 2), dtype=complex)), attnrank.UnsupportedError),
    ("fit str", _fit([["a", "b"], ["c", "d"]]), attnrank.UnsupportedError),
    ("fit object", _fit({"a": 1}), attnrank.UnsupportedError),
    ("fit ragged", _fit([[1, 2], [3]]), attnrank.UnsupportedError),
    ("fit= ragged in a mode", _dw(params=1e9, fit=[[1, 2], [3]]), attnrank.UnsupportedError),
]


@pytest.mark.parametrize("name,call,exc", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_inputs_raise(name, call, exc):
    with pytest.raises(exc) as info:
        call()
    assert isinstance(info.value, attnrank.Error) and str(info.value)


def test_malformed_law_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(attnrank.FormatError, match="not a JSON law file"):
        attnrank.depthwidth(layers=2, law=bad)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"slope": 0.1}))
    with pytest.raises(attnrank.FormatError, match="intercept"):
        attnrank.depthwidth(layers=2, law=empty)
    arr = tmp_path / "array.json"
    arr.write_text("[1, 2]")
    with pytest.raises(attnrank.FormatError):
        attnrank.depthwidth(layers=2, law=arr)


def test_the_gil_is_released():
    depths = np.arange(1_000_000, dtype=np.float64) % 97
    pts = np.column_stack([depths, np.exp(1.0 + 0.01 * depths)])
    assert_gil_released(lambda: attnrank.depthwidth_fit(pts), min_ticks=2)

