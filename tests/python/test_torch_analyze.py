"""attnrank.torch.analyze / analyze_attentions: the per-head report."""

import csv
import math
import inspect
import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import attnrank  # noqa: E402
import attnrank.torch as art  # noqa: E402
from attnrank._report import REPRESENT_COLUMNS, AttentionReport  # noqa: E402

HAS_REPRESENT = hasattr(attnrank, "represent")
LAYERS, D, HEADS, N, BATCH = 2, 16, 4, 6, 2


def _causal_encoder():
    """A float64 encoder with random weights, its input and a causal mask."""
    torch.manual_seed(5)
    layer = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    enc = nn.TransformerEncoder(layer, LAYERS).double().eval()
    with torch.no_grad():
        for p in enc.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    x = torch.randn(BATCH, N, D, dtype=torch.float64)
    causal = nn.Transformer.generate_square_subsequent_mask(N).double()  # -inf above
    return enc, x, causal


@pytest.fixture
def no_represent(monkeypatch):
    monkeypatch.delattr(attnrank, "represent", raising=False)


def test_encoder_report_one_row_per_layer_batch_head_and_ranks_match(no_represent):
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    assert isinstance(report, AttentionReport)
    assert len(report) == LAYERS * BATCH * HEADS
    keys = [(r.layer, r.batch, r.head) for r in report.rows]
    assert keys == [(f"layers.{i}.self_attn", b, h) for i in range(LAYERS)
                    for b in range(BATCH) for h in range(HEADS)]
    assert report.layers == [(f"layers.{i}.self_attn", 0) for i in range(LAYERS)]

    records = art.capture_attention(enc, x, mask=causal)
    for layer, call in records.layers():
        probs = records.stack(layer, call)  # batch x heads x n x n
        ref = attnrank.spectrum(probs, precision="float64")
        rows = [r for r in report.rows if r.layer == layer]
        for r, m in zip(rows, ref.matrices):
            assert (r.batch, r.head) == m.index
            assert r.rank == m.rank and r.rank == ref.ranks[r.batch, r.head]
            assert r.stable_rank == m.stable_rank
            assert r.threshold == m.tolerance.threshold
            assert r.n == r.n_keys == N and r.precision == "float64"
            # one slice on its own (a strided view) gives the same rank
            assert attnrank.spectrum(probs[r.batch, r.head]).rank == r.rank
    for r in report.rows:
        assert r.mask == "causal" and r.head_size == D // HEADS
        assert r.min_head_size is None and r.bottleneck is None
    assert not report.represent_available
    assert report.unavailable == REPRESENT_COLUMNS
    assert "represent" in report.reason


def test_input_forms_and_head_size_override(no_represent):
    enc, x, causal = _causal_encoder()
    a = art.analyze(enc, (x,), forward_kwargs={"mask": causal})
    b = art.analyze(enc, {"src": x, "mask": causal}, head_size=3)
    c = art.analyze(enc, x, forward_kwargs={"mask": causal},
                    head_size={"layers.1.self_attn": 7})
    assert [r.rank for r in a.rows] == [r.rank for r in b.rows]
    assert {r.head_size for r in b.rows} == {3}
    assert [r.head_size for r in c.rows if r.layer == "layers.0.self_attn"] == [4] * 8
    assert [r.head_size for r in c.rows if r.layer == "layers.1.self_attn"] == [7] * 8


def test_uniform_attention_head_has_rank_one(no_represent):
    torch.manual_seed(2)
    m = nn.MultiheadAttention(8, 2, batch_first=True).double().eval()
    with torch.no_grad():
        m.in_proj_weight[:4].zero_()  # head 0's queries: logits 0, uniform rows
        m.in_proj_bias[:4].zero_()
    x = torch.randn(1, 5, 8, dtype=torch.float64)
    report = art.analyze(m, (x, x, x))
    assert [(r.layer, r.head) for r in report.rows] == [("<model>", 0), ("<model>", 1)]
    u, other = report.rows
    assert u.rank == 1 and u.stable_rank == pytest.approx(1.0, abs=1e-12)
    assert other.rank > 1
    assert u.mask == "auto" and u.head_size == 4


def test_represent_false_and_required(monkeypatch):
    enc, x, causal = _causal_encoder()
    r = art.analyze(enc, x, forward_kwargs={"mask": causal}, represent=False)
    assert r.unavailable == REPRESENT_COLUMNS and r.reason == "represent=False"
    assert all(row.min_head_size is None for row in r.rows)
    monkeypatch.delattr(attnrank, "represent", raising=False)
    with pytest.raises(AttributeError, match="represent"):
        art.analyze(enc, x, forward_kwargs={"mask": causal}, represent=True)


def test_represent_wiring_with_a_stand_in(monkeypatch):
    """How analyze calls attnrank.represent (whatever it computes): the slice
    in PyTorch's layout with axis="row", the record's precision and mask, and
    the verdict min_head_size > head_size."""
    calls = []

    def fake(p, *, mask=None, axis="col", precision=None, **options):
        calls.append((np.array(p), mask, axis, precision, options))
        return {"min_head_size": 5 if isinstance(mask, str) and mask == "causal" else 2}

    monkeypatch.setattr(attnrank, "represent", fake, raising=False)
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal},
                         represent_options={"tau": 1e-9})
    assert report.represent_available and report.unavailable == ()
    assert len(calls) == len(report)
    records = art.capture_attention(enc, x, mask=causal)
    p, mask, axis, precision, options = calls[0]
    assert np.array_equal(p, records[0].probs[0])
    assert (mask, axis, precision, options) == ("causal", "row", "float64", {"tau": 1e-9})
    for r in report.rows:
        assert r.min_head_size == 5 and r.head_size == 4 and r.bottleneck is True

    # a given, non-causal mask goes as the 0/1 matrix of allowed pairs
    calls.clear()
    window = torch.zeros(N, N, dtype=torch.bool)
    for i in range(N):
        window[i, :max(0, i - 1)] = True  # keys more than one back are masked
        window[i, i + 1:] = True
    report = art.analyze(enc, x, forward_kwargs={"mask": window})
    assert {r.mask for r in report.rows} == {"given"}
    allowed = calls[0][1]
    assert allowed.dtype == np.uint8 and np.array_equal(allowed, (~window.numpy()).astype(np.uint8))
    assert {(r.min_head_size, r.bottleneck) for r in report.rows} == {(2, False)}


def test_represent_without_axis_gets_columns_as_queries(monkeypatch):
    seen = []

    def fake(p, *, mask=None):
        seen.append(np.array(p))
        return {"min_head_size_lower": 6, "min_head_size_upper": 9}

    monkeypatch.setattr(attnrank, "represent", fake, raising=False)
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    records = art.capture_attention(enc, x, mask=causal)
    assert np.array_equal(seen[0], records[0].probs[0].T)
    r = report.rows[0]
    assert r.min_head_size is None and r.bottleneck is True and ">= 6" in r.note


def test_represent_error_becomes_a_note(monkeypatch):
    def fake(p, *, mask=None, axis="col", precision=None):
        raise attnrank.DomainError(attnrank._errors.STATUS_NAMES.index("AR_EDOMAIN"),
                                   "zero inside the mask", "ar_represent_masked")

    monkeypatch.setattr(attnrank, "represent", fake, raising=False)
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    assert all(r.min_head_size is None and "zero inside" in r.note for r in report.rows)


@pytest.mark.skipif(not HAS_REPRESENT, reason="attnrank.represent is not built")
def test_real_represent_on_the_causal_encoder():
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    assert report.represent_available
    for r in report.rows:
        if r.min_head_size is not None:
            assert 0 <= r.min_head_size <= N - 1
            assert r.bottleneck == (r.min_head_size > r.head_size)


def test_decoder_cross_attention_is_rectangular(no_represent):
    torch.manual_seed(4)
    dec = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                     batch_first=True).eval()
    tgt, memory = torch.randn(1, 4, 8), torch.randn(1, 7, 8)
    report = art.analyze(dec, (tgt, memory))
    cross = [r for r in report.rows if r.layer == "multihead_attn"]
    assert len(cross) == 2 and all(r.n == 4 and r.n_keys == 7 for r in cross)
    assert all(r.mask == "n/a" and "rectangular" in r.note for r in cross)
    assert {r.precision for r in report.rows} == {"float32"}


def test_csv_round_trip_and_dicts(tmp_path, no_represent):
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    path = report.to_csv(tmp_path / "report.csv")
    assert os.listdir(tmp_path) == ["report.csv"]  # no temporary file left
    back = AttentionReport.from_csv(path)
    assert back.rows == report.rows
    assert back.to_dicts() == report.to_dicts()
    with open(path, newline="") as f:
        header = next(csv.reader(f))
    assert header == report.columns == list(report.to_dicts()[0])
    assert header[:4] == ["layer", "call", "batch", "head"]
    report.to_csv(path)  # over an existing file
    assert AttentionReport.from_csv(path).rows == report.rows


def test_to_pandas(no_represent):
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            report.to_pandas()
    else:
        df = report.to_pandas()
        assert list(df.columns) == report.columns and len(df) == len(report)
        assert df["rank"].tolist() == [r.rank for r in report.rows]


def test_plot_writes_a_file(tmp_path, no_represent, monkeypatch):
    enc, x, causal = _causal_encoder()
    report = art.analyze(enc, x, forward_kwargs={"mask": causal})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = report.plot(tmp_path / "ranks.png")  # matplotlib, else gnuplot
    assert out == tmp_path / "ranks.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ranks.png"]  # no temporary left
    import attnrank._report_plot as rp
    monkeypatch.setattr(rp.shutil, "which", lambda name: None)
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.warns(RuntimeWarning, match="neither matplotlib nor gnuplot"):
        out = report.plot(tmp_path / "ranks2.png")
    assert out == tmp_path / "ranks2.csv" and out.exists()
    assert AttentionReport.from_csv(out).rows == report.rows


def _hf_attentions(layers=2, batch=2, heads=3, n=5, causal=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(layers):
        logits = torch.randn(batch, heads, n, n, generator=g)
        if causal:
            logits = logits.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1),
                                        float("-inf"))
        out.append(logits.softmax(-1))
    return tuple(out)


def test_analyze_attentions_hf_tuple(no_represent):
    att = _hf_attentions()
    report = art.analyze_attentions(att, is_causal=True, head_size=8)
    assert len(report) == 2 * 2 * 3
    assert [(r.layer, r.batch, r.head) for r in report.rows][:4] == [
        ("layers.0", 0, 0), ("layers.0", 0, 1), ("layers.0", 0, 2), ("layers.0", 1, 0)]
    for i, a in enumerate(att):
        ref = attnrank.spectrum(a, precision="float32")
        rows = [r for r in report.rows if r.layer == f"layers.{i}"]
        assert [r.rank for r in rows] == [m.rank for m in ref.matrices]
        assert [r.threshold for r in rows] == [m.tolerance.threshold for m in ref.matrices]
    assert {(r.mask, r.head_size, r.precision) for r in report.rows} == {
        ("causal", 8, "float32")}
    assert all(r.bottleneck is None for r in report.rows)
    # without a head size there is nothing to compare against
    assert {r.head_size for r in art.analyze_attentions(att, is_causal=True).rows} == {None}


def test_analyze_attentions_padding_and_model_output(no_represent):
    att = _hf_attentions(causal=True)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    report = art.analyze_attentions(type("Out", (), {"attentions": att})(),
                                    attention_mask=mask, is_causal=True, names=["a", "b"])
    masks = {(r.layer, r.batch): r.mask for r in report.rows}
    assert set(masks.values()) == {"given"}  # causal and padding: not the triangle alone
    assert {r.layer for r in report.rows} == {"a", "b"}


def test_signatures_keyword_only():
    for fn in (art.analyze, art.analyze_attentions):
        params = list(inspect.signature(fn).parameters.values())
        assert all(p.kind is p.KEYWORD_ONLY for p in params[2 if fn is art.analyze else 1:])


def test_head_type_scores_in_the_report(no_represent):
    """The report's score columns are attnrank.head_scores of each map; the
    induction score reads the model's integer input as its tokens, or a
    period; a planted previous-token head scores 1."""
    import torch_models as tm

    class PreviousTokenAttention(nn.Module):  # every query attends the key before it
        def forward(self, x):
            n = x.size(1)
            s = torch.full((n, n), -math.inf)
            s[torch.arange(1, n), torch.arange(n - 1)] = 0.0
            s[0, 0] = 0.0
            return torch.softmax(s.expand(x.size(0), 1, n, n), dim=-1)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = PreviousTokenAttention()

        def forward(self, ids):
            return self.attention(ids.float()[..., None])

    ids = art.repeated_tokens(4, batch=2, vocab=30, seed=3)
    report = art.analyze(Model(), ids)
    assert len(report) == 2
    for row in report.rows:
        assert row.previous_token == 1.0 and row.first_token == pytest.approx(2 / 8)  # queries 0, 1
        assert row.diagonal == pytest.approx(1 / 8) and row.induction == 0.0
        assert row.mask == "given" and row.source == "softmax"
    torch.manual_seed(4)
    model = tm.TinyDecoder(tm.CausalSelfAttention, layers=1).eval()
    by_input = art.analyze(model, ids)
    by_period = art.analyze(model, ids, period=4)
    records = art.capture_attention(model, ids)
    for row, again in zip(by_input.rows, by_period.rows):
        want = attnrank.head_scores(records[row.head].probs[row.batch], tokens=ids[row.batch])
        assert row.induction == pytest.approx(float(want.induction), abs=1e-12)
        assert row.previous_token == pytest.approx(float(want.previous_token), abs=1e-12)
        assert again.induction == pytest.approx(row.induction, abs=1e-12)
    assert all(r.induction is not None for r in by_input.rows)
    floats = art.analyze(model, ids, dtype="float64", tokens=None, period=None)
    assert floats.rows[0].previous_token == pytest.approx(by_input.rows[0].previous_token)
    with pytest.raises(ValueError, match="tokens="):
        art.analyze(model, ids, tokens=ids[:, :5])
