"""Short reprs: every result record prints as one line of at most 200
characters that names its class, with arrays as shape and dtype only; the
data stays in the attributes and to_dict(), equality is the dataclass's."""

import dataclasses

import numpy as np
import pytest

import attnrank
from test_weights import gpt2_model

MAX = 200


def _softmax(s, axis):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _records(value):
    """value and every record nested in it (fields, tuples of records)."""
    if dataclasses.is_dataclass(value):
        yield value
        for f in dataclasses.fields(value):
            yield from _records(getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for v in value[:3]:  # three of each kind are enough
            yield from _records(v)


def _assert_short(result):
    seen = set()
    for rec in _records(result):
        text = repr(rec)
        name = type(rec).__name__
        assert text.startswith(f"<{name}") and text.endswith(">"), text
        assert "\n" not in text and len(text) <= MAX, (len(text), text)
        assert "array([" not in text and "[[" not in text, text  # no array data
        seen.add(name)
    return seen


def _row_map(n=12, seed=1):
    return _softmax(np.random.default_rng(seed).standard_normal((n, n)) * 2, 1)


def _causal_map(n=12, seed=2):
    keep = np.tril(np.ones((n, n), dtype=bool))
    s = np.where(keep, np.random.default_rng(seed).standard_normal((n, n)), -np.inf)
    return _softmax(s, 1)


def test_spectrum():
    a = np.random.default_rng(0).standard_normal((40, 30))
    one = attnrank.spectrum(a)
    assert repr(one).startswith("<Spectrum 40x30: rank 30 (threshold ")
    assert "singular_values=array(30 float64)" in repr(one)
    stack = attnrank.spectrum(np.stack([a, a[:, ::-1]] * 3).reshape(2, 3, 40, 30))
    assert "<SpectrumStack 6 matrices of 40x30, ranks 30..30, " in repr(stack)
    assert "singular_values=array(2x3x30 float64)" in repr(stack)
    assert _assert_short(stack) == {"SpectrumStack", "Spectrum", "Tolerance"}


def test_represent_plain_with_certificate_and_fit():
    p = _row_map()
    r = attnrank.represent(p, certificate=True)
    assert repr(r) == ("<Represent 12x12, axis=row: min_head_size=11, head_size=11, "
                       "representable=True, certificate>")
    c = repr(r.certificate)
    assert c.startswith("<Certificate head_size 11, d=12, max_abs_error=")
    assert c.endswith("wq=array(11x12 float64), wk=array(11x12 float64)>")
    assert {"Represent", "Certificate", "RepresentTolerance", "InputX",
            "Residual"} <= _assert_short(r)
    low = attnrank.represent(p, head_size=3)
    assert "head_size=3, representable=False, fit kl_mean=" in repr(low)
    assert "Fit" in _assert_short(low)
    # the data are untouched (records holding arrays compare as dataclasses
    # always did: through to_dict())
    assert r.to_dict() == attnrank.represent(p, certificate=True).to_dict()
    assert r.certificate.wq.shape == (11, 12)
    assert len(r.to_dict()["singular_values"]) == r.singular_values.size


def test_represent_masked_and_stack():
    m = attnrank.represent(_causal_map(), mask="causal", certificate=True)
    assert repr(m).startswith("<MaskedRepresent 12x12, axis=row, mask=causal (given): exact, "
                              "min_head_size=6 [6..6], head_size=6, representable=True")
    assert {"MaskedRepresent", "Mask", "MaskedTolerance", "InnovationGap",
            "Certificate"} <= _assert_short(m)
    smoothed = attnrank.represent(_causal_map() + 1e-3, axis="row", smooth=1e-6, sum_tol=1.0)
    assert "Smoothing" in _assert_short(smoothed)
    stack = attnrank.represent(np.stack([_row_map(seed=s) for s in range(5)]))
    assert repr(stack) == ("<RepresentStack 5 slices of 12x12, axis=row: exact 5/5, "
                           "max_min_head_size=11, median_min_head_size=11>")
    masked = attnrank.represent(np.stack([_causal_map(seed=s) for s in range(3)]), mask="auto")
    assert {"RepresentStack", "RepresentSlice", "RepresentSummary"} <= _assert_short(masked)


def test_heads_params_check():
    assert "Heads" in _assert_short(attnrank.heads(768, 12, 512, mask="causal"))
    assert {"ParamCount", "ParamBreakdown"} <= _assert_short(attnrank.params(768, 12))
    assert "PaperTables" in _assert_short(attnrank.params(paper_tables=True))
    c = attnrank.check(768, 12, 512, require="no-bottleneck")
    assert repr(c).startswith("<Check ") and "1 condition, fails no-bottleneck>" in repr(c)
    assert {"Check", "CheckVerdict"} <= _assert_short(c)


def test_seprank_depthwidth_collapse():
    s = attnrank.seprank(2, 4, n=4, templates=8)
    assert repr(s).startswith("<Seprank layers=2, d=4, heads=")
    assert {"Seprank", "Tolerance"} <= _assert_short(s)
    assert _assert_short(attnrank.depthwidth(1e8)) >= {"DepthWidthOptimum", "DepthWidthLaw"}
    assert "DepthWidthVerdict" in _assert_short(attnrank.depthwidth(layers=12, d=768))
    c = attnrank.collapse(6, 8, 16, 2)
    assert repr(c).startswith("<Collapse ") and ": 6 layers, n=8, d=16, heads=2" in repr(c)
    assert {"Collapse", "CollapseDepth", "CollapseDecayFit"} <= _assert_short(c)


def test_softmax_bottleneck():
    rng = np.random.default_rng(3)
    p = _softmax(rng.standard_normal((30, 3)) @ rng.standard_normal((3, 20)), 1)
    r = attnrank.softmax_bottleneck(p, d=2)
    assert repr(r).startswith("<SoftmaxBottleneck 30x20, d=2, bias=False: rank_log ")
    assert {"SoftmaxBottleneck", "SoftmaxBottleneckTolerance", "YangCondition",
            "SoftmaxBottleneckFit"} <= _assert_short(r)


def test_weights(tmp_path):
    model = gpt2_model(tmp_path / "gpt2", d=48, heads=12, layers=12)
    w = attnrank.weights(model)
    text = repr(w)
    assert text.startswith("<Weights gpt2: 12 layers x 12 heads, d=48, head_size=4, rank ")
    assert len(text) < 160, text
    assert {"Weights", "WeightsLayer", "QKHead", "QKNoise", "WeightsTolerance",
            "WeightsSummary", "ModelMasks", "WeightsVerdicts"} <= _assert_short(w)
    assert w.to_dict() == attnrank.weights(model).to_dict() and len(list(w)) == 144
    assert w.summary == attnrank.weights(model).summary  # dataclass equality


def test_summary_helpers():
    from attnrank import _repr
    assert _repr.value_text(np.zeros((2, 3), dtype=np.float32)) == "array(2x3 float32)"
    assert _repr.value_text(float("nan")) == "nan" and _repr.value_text(1 / 3) == "0.3333"
    assert _repr.value_text("a, b") == "'a, b'" and _repr.value_text((1, 2)) == "(1, 2)"
    assert _repr.value_text("x" * 60).endswith("...'")
    # fields beyond the budget end in ", ..." within it
    head = attnrank.heads(768, 12, 512)
    text = _repr.fields_text(head, [f.name for f in dataclasses.fields(head)], 80)
    assert text.endswith(", ...") and len(text) <= 80
