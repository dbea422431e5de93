"""attnrank.torch.capture on hand-written models: explicit softmax,
scaled_dot_product_attention (causal flag, float and bool masks, grouped
query heads), nn.MultiheadAttention, Hugging Face-named module trees and
hook points.  One record per layer and head, the call's own mask, and the
model's output bit-identical with and without capture."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import attnrank.torch as art  # noqa: E402
import torch_models as tm  # noqa: E402

CAUSAL6 = np.triu(np.ones((6, 6), bool), 1)


@pytest.fixture(autouse=True)
def public_sdpa(monkeypatch):
    """torch >= 2 has F.scaled_dot_product_attention; torch 1.13 does not,
    so the models call the reference formula installed under that name."""
    if not hasattr(F, "scaled_dot_product_attention"):
        monkeypatch.setattr(F, "scaled_dot_product_attention", tm.reference_sdpa,
                            raising=False)


def _run(model, *args, **capture_kw):
    """(output without capture, output with capture, records)."""
    hooks = [(len(m._forward_pre_hooks), len(m._forward_hooks)) for m in model.modules()]
    with torch.no_grad():
        ref = model(*args)
        with art.capture(model, **capture_kw) as records:
            out = model(*args)
    assert not torch._C._is_torch_function_mode_enabled()
    assert hooks == [(len(m._forward_pre_hooks), len(m._forward_hooks))
                     for m in model.modules()]
    return ref, out, records


def _explicit_probs(q, k, keep):
    s = (q.double() @ k.double().transpose(-2, -1)) / math.sqrt(q.size(-1))
    return torch.softmax(s.masked_fill(~keep, -math.inf), -1)


def _assert_layer_heads(records, layers, heads):
    assert [(r.layer, r.head) for r in records] == [(l, h) for l in layers for h in range(heads)]
    assert all(r.heads == heads and r.call == 0 for r in records)


# ---- explicit softmax (nanoGPT) --------------------------------------------------

def test_softmax_decoder_records_every_layer_and_head_bit_identical():
    torch.manual_seed(0)
    model = tm.TinyDecoder(tm.CausalSelfAttention, layers=3).eval()
    idx = torch.randint(0, 32, (2, 6))
    ref, out, records = _run(model, idx)
    assert torch.equal(ref, out)
    _assert_layer_heads(records, [f"h.{i}.attn" for i in range(3)], 4)
    for r in records:
        assert r.source == "softmax" and r.shape == (2, 6, 6) and r.precision == "float32"
        assert r.mask_kind == "causal" and np.array_equal(r.mask[1], CAUSAL6)
        assert (r.probs[:, CAUSAL6] == 0).all()
        assert np.allclose(r.probs.sum(-1), 1, atol=1e-6)
        assert r.head_size == 4 and r.self_attention is None


def test_softmax_probs_are_the_models_own():
    torch.manual_seed(1)
    model = tm.TinyDecoder(tm.CausalSelfAttention, layers=1).eval()
    idx = torch.randint(0, 32, (1, 6))
    seen = []
    attn = model.h[0].attn
    hook = attn.register_forward_pre_hook(lambda m, inp: seen.append(inp[0]))
    _, _, records = _run(model, idx)
    hook.remove()
    q, k, _ = attn.c_attn(seen[0]).split(16, dim=2)
    q, k = (z.view(1, 6, 4, 4).transpose(1, 2) for z in (q, k))
    want = _explicit_probs(q, k, torch.ones(6, 6, dtype=torch.bool).tril())
    got = np.stack([r.probs for r in records], axis=1)
    assert np.allclose(got, want.detach().numpy(), rtol=0, atol=1e-6)


def test_softmax_outside_attention_modules_is_not_attention():
    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(5, 5)

        def forward(self, x):
            return torch.softmax(self.body(x), dim=-1)

    model = Classifier()
    x = torch.randn(3, 4, 5)
    with pytest.raises(art.CaptureError, match="softmax_in="):
        art.capture_attention(model, x)
    # the softmax runs in the model's own forward, after body returned
    records = art.capture_attention(model, x, softmax_in="<mod*")  # by name pattern
    assert len(records) == 3 and records[0].layer == "<model>" and records[0].shape == (1, 4, 5)
    assert len(art.capture_attention(model, x, softmax_in=Classifier)) == 3  # by type
    assert len(art.capture_attention(model, x, softmax_in=[nn.Linear, "<model>"])) == 3
    with pytest.raises(art.CaptureError):
        art.capture_attention(model, x, softmax_in=nn.Linear)  # body ran no softmax
    assert len(art.capture_attention(model, x, softmax_in=lambda n, m: m is model)) == 3


def test_softmax_over_queries_and_odd_calls_are_skipped():
    class Columns(nn.Module):  # softmax over dim -2: not (..., n_q, n_k) rows
        def forward(self, s):
            return s.softmax(-2).sum() + F.softmax(s[0, 0, 0], dim=0).sum()

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Columns()

        def forward(self, s):
            return self.inner(s)

    with pytest.raises(art.CaptureError):
        art.capture_attention(Attention(), torch.randn(1, 2, 3, 3), softmax_in=Columns)
    records = art.capture_attention(Attention(), torch.randn(1, 2, 3, 3), on_empty="ignore")
    assert len(records) == 0


# ---- scaled_dot_product_attention (LLaMA layout) -----------------------------------

@pytest.mark.parametrize("mask", ["causal", "float", "bool"])
def test_sdpa_decoder_gqa_records_mask_and_probabilities(mask):
    torch.manual_seed(2)
    pad = torch.zeros(2, 6, dtype=torch.bool)
    pad[1, 4:] = True  # right padding in the second sequence
    kw = {"mask": mask, "padding": None if mask == "causal" else pad}
    model = tm.TinyLlama(layers=2, heads=4, kv_heads=2, **kw).eval()
    idx = torch.randint(0, 32, (2, 6))
    ref, out, records = _run(model, idx)
    assert torch.equal(ref, out)
    _assert_layer_heads(records, [f"model.layers.{i}.self_attn" for i in range(2)], 4)
    want = np.broadcast_to(CAUSAL6, (2, 6, 6)).copy()
    if mask != "causal":
        want[1, :, 4:] = True
    for r in records:
        assert r.source == "scaled_dot_product_attention" and r.head_size == 4
        assert r.is_causal == (mask == "causal") and not r.biased
        assert np.array_equal(r.mask, want)
        assert r.mask_kind == ("causal" if mask == "causal" else "given")
        assert (r.attn_mask is None) == (mask == "causal")
        if mask == "bool":  # recorded as True = not allowed, whatever the API's sense
            assert r.attn_mask.dtype == np.bool_ and np.array_equal(r.attn_mask[:, 0], want)
        finite = ~np.isnan(r.probs).any(axis=-1)
        assert np.allclose(r.probs.sum(-1)[finite], 1, atol=1e-6)
        assert (r.probs[want & finite[..., None]] == 0).all()


def test_sdpa_probabilities_equal_the_formula():
    torch.manual_seed(3)
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 7, 4), torch.randn(2, 3, 7, 4)
    bias = torch.randn(5, 7)  # a finite additive bias (ALiBi-like)

    class Attention(nn.Module):
        def forward(self, q, k, v):
            return tm.sdpa(q, k, v, attn_mask=bias, scale=0.3)

    ref, out, records = _run(Attention(), q, k, v)
    assert torch.equal(ref, out)
    s = (q.double() @ k.double().transpose(-2, -1)) * 0.3 + bias.double()
    want = torch.softmax(s, -1).float().numpy()
    got = np.stack([r.probs for r in records], axis=1)
    assert got.shape == (2, 3, 5, 7) and np.array_equal(got, want)
    assert all(r.biased and r.mask is None and r.self_attention is False for r in records)


def test_private_sdpa_of_torch_1_13():
    private = getattr(F, "_scaled_dot_product_attention", None)
    if private is None:
        pytest.skip("this torch has no _scaled_dot_product_attention")
    torch.manual_seed(4)
    q = torch.randn(1, 2, 4, 8)
    keep = torch.ones(4, 4, dtype=torch.bool).tril()

    class Attention(nn.Module):
        def forward(self, x):
            return private(x, x, x, keep, 0.0, True)

    with torch.no_grad(), art.capture(Attention()) as records:
        out, weights = Attention()(q)
    assert len(records) == 2 and records[0].source == "scaled_dot_product_attention"
    got = np.stack([r.probs for r in records], axis=1)
    assert np.allclose(got, weights.numpy(), rtol=0, atol=1e-6)
    assert records[0].mask_kind == "causal"


def test_bfloat16_sdpa_records_bfloat16():
    torch.manual_seed(5)
    model = tm.TinyLlama(layers=1).to(torch.bfloat16).eval()
    idx = torch.randint(0, 32, (1, 6))
    try:
        ref, out, records = _run(model, idx)
    except RuntimeError as exc:  # pragma: no cover - a CPU without bf16 kernels
        pytest.skip(f"bfloat16 unsupported here: {exc}")
    assert torch.equal(ref, out)
    assert all(r.precision == "bfloat16" and r.probs.attnrank_precision == "bfloat16"
               for r in records)


# ---- Hugging Face naming: GPT-2 and BERT ------------------------------------------

def test_gpt2_layout_masked_by_finfo_min():
    torch.manual_seed(6)
    model = tm.GPT2Model(layers=2).eval()
    idx = torch.randint(0, 32, (2, 6))
    ref, out, records = _run(model, idx)
    assert torch.equal(ref, out)
    _assert_layer_heads(records, [f"transformer.h.{i}.attn" for i in range(2)], 4)
    assert all(r.mask_kind == "causal" and r.head_size == 4 for r in records)
    assert [n for n, _ in records.modules_seen] == ["transformer.h.0.attn",
                                                     "transformer.h.1.attn"]


def test_bert_layout_padding_from_the_additive_mask():
    torch.manual_seed(7)
    model = tm.TinyBert(layers=2).eval()
    idx = torch.randint(0, 32, (2, 5))
    attention_mask = torch.ones(2, 5, dtype=torch.long)
    attention_mask[1, 3:] = 0
    ref, out, records = _run(model, idx, attention_mask)
    assert torch.equal(ref, out)
    _assert_layer_heads(records, [f"encoder.layer.{i}.attention.self" for i in range(2)], 4)
    for r in records:
        assert r.mask_kind == "given" and not r.mask[0].any() and r.mask[1, :, 3:].all()
        assert not r.mask[1, :, :3].any() and (r.probs[1, :, 3:] == 0).all()
        assert r.head_size == 4


# ---- nn.MultiheadAttention in a hand-written decoder ----------------------------------

@pytest.mark.parametrize("train", [False, True])
def test_mha_decoder_bit_identical_also_with_dropout(train):
    torch.manual_seed(8)
    model = tm.TinyDecoder(lambda d, h: tm.MhaAttention(d, h, dropout=0.3), layers=2)
    model.train(train)
    idx = torch.randint(0, 32, (2, 6))
    torch.manual_seed(9)
    with torch.no_grad():
        ref = model(idx)
    torch.manual_seed(9)
    with torch.no_grad(), art.capture(model) as records:
        out = model(idx)
    assert torch.equal(ref, out)  # the same dropout draws as without capture
    _assert_layer_heads(records, [f"h.{i}.attn.mha" for i in range(2)], 4)
    for r in records:
        assert r.source == "nn.MultiheadAttention" and r.mask_kind == "causal"
        assert r.dropout == (0.3 if train else 0.0) and r.head_size == 4
        if not train:
            assert np.allclose(r.probs.sum(-1), 1, atol=1e-6)


# ---- hook points (TransformerLens) and the empty capture --------------------------

class HookPoint(nn.Module):
    def forward(self, x):
        return x


class LensAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.hook_pattern = HookPoint()

    def forward(self, q, k):
        s = q @ k.transpose(-2, -1)
        keep = torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).tril()
        # TransformerLens masks with a large finite value, then softmaxes
        # outside any module it names; the pattern passes its hook point.
        pattern = self.hook_pattern(torch.exp(s.masked_fill(~keep, -1e5)
                                              - torch.logsumexp(s.masked_fill(~keep, -1e5),
                                                                -1, keepdim=True)))
        return pattern.sum()


def test_hook_points_and_the_empty_capture():
    model = nn.Module()
    model.blocks = nn.ModuleList(nn.ModuleDict({"attn": LensAttention()}) for _ in range(2))

    def run(q, k):
        return sum(b["attn"](q, k) for b in model.blocks)

    model.forward = run
    q = torch.randn(2, 3, 4, 5)
    records = art.capture_attention(model, q, q, hooks="blocks.*.attn.hook_pattern")
    _assert_layer_heads(records, [f"blocks.{i}.attn.hook_pattern" for i in range(2)], 3)
    assert all(r.source == "hook" and r.mask is None and r.shape == (2, 4, 4) for r in records)
    with pytest.raises(art.CaptureError) as err:
        art.capture_attention(model, q, q)
    assert "blocks.0.attn (LensAttention)" in str(err.value) and "hooks=" in str(err.value)
    with pytest.warns(RuntimeWarning, match="no attention probabilities"):
        assert len(art.capture_attention(model, q, q, on_empty="warn")) == 0


def test_capture_argument_errors_and_restoration_after_an_exception():
    model = tm.TinyDecoder(tm.CausalSelfAttention, layers=1)
    with pytest.raises(ValueError, match="on_empty"):
        art.capture(model, on_empty="maybe")
    with pytest.raises(TypeError, match="hooks"):
        art.capture(model, hooks=[3])
    with pytest.raises(TypeError, match="softmax_in"):
        art.capture(model, softmax_in=[3.5])
    with pytest.raises(IndexError):
        with art.capture(model):
            model(torch.full((1, 3), 99))  # outside the vocabulary
    assert not torch._C._is_torch_function_mode_enabled()
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())


def test_records_repr_stack_and_dict():
    torch.manual_seed(10)
    model = tm.TinyDecoder(tm.CausalSelfAttention, layers=2).eval()
    records = art.capture_attention(model, torch.randint(0, 32, (2, 6)))
    assert repr(records) == "<AttentionRecords: 8 heads in 2 calls of 2 modules>"
    assert "\n" not in repr(records[0]) and len(repr(records[0])) < 120
    assert records.layers() == [("h.0.attn", 0), ("h.1.attn", 0)]
    s = records.stack("h.1.attn")
    assert s.shape == (2, 4, 6, 6) and np.array_equal(s[:, 2], records[6].probs)
    d = records[0].to_dict()
    assert d["mask"] == "causal" and d["source"] == "softmax" and d["shape"] == [2, 6, 6]
    with pytest.raises(KeyError):
        records.stack("h.9.attn")


def test_mha_fast_path_output_unchanged():
    # eval, no_grad, batch_first, no mask: nn.MultiheadAttention's fused path
    torch.manual_seed(11)
    m = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(2, 7, 16)
    ref, out, records = _run(m, x, x, x)
    assert torch.equal(ref[0], out[0]) and torch.equal(ref[1], out[1])
    assert len(records) == 4 and all(r.mask is None for r in records)


def test_hook_point_that_returns_no_tensor_is_refused():
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.hook_pattern = nn.Identity()

        def forward(self, x):
            return self.hook_pattern((x, x))  # a tuple, not a pattern

    with pytest.raises(art.CaptureError, match="hook point hook_pattern returned tuple"):
        art.capture_attention(Attention(), torch.ones(2, 2), hooks="hook_pattern")


def test_repeated_tokens_values_and_refusals():
    t = art.repeated_tokens(5, repeats=3, batch=2, vocab=7, seed=1)
    assert t.shape == (2, 15) and t.dtype == torch.int64
    assert torch.equal(t[:, :5], t[:, 5:10]) and torch.equal(t[:, :5], t[:, 10:])
    assert all(len(set(row[:5].tolist())) == 5 and row.max() < 7 for row in t)
    assert torch.equal(t, art.repeated_tokens(5, repeats=3, batch=2, vocab=7, seed=1))
    for kw, what in [({"period": 0}, "period"), ({"period": True}, "period"),
                     ({"period": 3, "repeats": 0}, "repeats"), ({"period": 3, "batch": 0}, "batch"),
                     ({"period": 8, "vocab": 7}, "vocab")]:
        with pytest.raises(ValueError, match=what):
            art.repeated_tokens(**kw)
