"""attnrank.torch: per-head attention capture from PyTorch modules."""

import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import attnrank  # noqa: E402
import attnrank.torch as art  # noqa: E402

MHA_FORWARD = nn.MultiheadAttention.forward


def _assert_restored(model):
    for m in model.modules():
        if isinstance(m, nn.MultiheadAttention):
            assert "forward" not in m.__dict__
            assert m.forward.__func__ is MHA_FORWARD
        if isinstance(m, nn.TransformerEncoderLayer):
            assert m.activation_relu_or_gelu == 1  # relu
        assert not m._forward_pre_hooks


def _encoder(layers=3, d=16, heads=4, dropout=0.0):
    torch.manual_seed(11)
    layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=32, dropout=dropout,
                                       batch_first=True)
    return nn.TransformerEncoder(layer, layers)


def _layer_inputs(model, layers, *args, **kwargs):
    """The input of each layer, recorded by forward pre-hooks."""
    seen = []
    hooks = [layer.register_forward_pre_hook(lambda mod, inp: seen.append(inp[0]))
             for layer in layers]
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    return seen


def _calls(records):
    """One (first record, batch x heads x n_q x n_k stack) per call."""
    return [(next(r for r in records if (r.layer, r.call) == key), records.stack(*key))
            for key in records.layers()]


def test_lazy_attribute_and_module():
    assert attnrank.torch is art


# ---- a plain nn.MultiheadAttention ------------------------------------------

@pytest.mark.parametrize("train", [False, True])
def test_plain_mha_reproduces_need_weights_exactly(train):
    torch.manual_seed(3)
    m = nn.MultiheadAttention(8, 2, batch_first=True)
    m.train(train)
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        ref = m(x, x, x, need_weights=True, average_attn_weights=False)[1]
    records = art.capture_attention(m, x, x, x)
    ((r, probs),) = _calls(records)
    assert [rec.head for rec in records] == [0, 1]
    assert r.layer == "<model>" and r.call == 0 and r.self_attention
    assert probs.shape == (2, 2, 5, 5) and probs.dtype == np.float32
    assert np.array_equal(probs, ref.numpy())
    assert r.precision == "float32" and r.device == "cpu" and r.dropout == 0.0
    assert r.mask is None and r.attn_mask is None and r.key_padding_mask is None
    _assert_restored(m)


def test_plain_mha_masks_positional_args_and_returned_weights():
    torch.manual_seed(4)
    m = nn.MultiheadAttention(8, 2).eval()  # sequence first
    q, kv = torch.randn(4, 3, 8), torch.randn(6, 3, 8)
    attn_mask = torch.zeros(4, 6, dtype=torch.bool)
    attn_mask[:, 5] = True
    kpm = torch.zeros(3, 6, dtype=torch.bool)
    kpm[1, 0] = True
    with torch.no_grad():
        ref_out, ref_w = m(q, kv, kv, kpm, True, attn_mask, average_attn_weights=False)
        ref_avg = m(q, kv, kv, kpm, True, attn_mask)[1]
        ref_none = m(q, kv, kv, kpm, False, attn_mask)
    with torch.no_grad(), art.capture(m) as records:
        out, w = m(q, kv, kv, kpm, True, attn_mask, average_attn_weights=False)
        avg = m(q, kv, kv, kpm, True, attn_mask)[1]
        none = m(q, kv, kv, kpm, False, attn_mask)
    assert torch.equal(out, ref_out) and torch.equal(w, ref_w)
    assert torch.allclose(avg, ref_avg, rtol=0, atol=1e-7)
    assert none[1] is None and ref_none[1] is None and torch.equal(none[0], ref_none[0])
    assert [r.call for r in records] == [0, 0, 1, 1, 2, 2]
    (r, probs), _, _ = _calls(records)
    assert not r.self_attention and probs.shape == (3, 2, 4, 6)
    assert np.array_equal(probs, ref_w.numpy())
    assert r.attn_mask.dtype == np.bool_ and np.array_equal(r.attn_mask, attn_mask.numpy())
    assert np.array_equal(r.key_padding_mask, kpm.numpy())
    mask = np.stack([records[0].mask, records[1].mask], axis=1)
    assert mask.shape == probs.shape and mask.dtype == np.bool_
    assert mask[:, :, :, 5].all() and mask[1, :, :, 0].all() and not mask[0, :, :, 0].any()
    assert (probs[mask] == 0).all()
    _assert_restored(m)


def test_unbatched_input_gets_a_batch_axis():
    torch.manual_seed(5)
    m = nn.MultiheadAttention(6, 3).eval()
    x = torch.randn(4, 6)
    with torch.no_grad():
        ref = m(x, x, x, average_attn_weights=False)[1]
    ((r, probs),) = _calls(art.capture_attention(m, x, x, x))
    assert probs.shape == (1, 3, 4, 4) and np.array_equal(probs[0], ref.numpy())


def test_restored_after_an_exception_and_an_own_forward_kept():
    m = nn.MultiheadAttention(8, 2, batch_first=True)
    with pytest.raises(Exception):
        art.capture_attention(m, torch.randn(2, 5, 7), torch.randn(2, 5, 7),
                              torch.randn(2, 5, 7))  # wrong width
    _assert_restored(m)
    calls = []
    original = m.forward

    def own(*a, **k):
        calls.append(1)
        return original(*a, **k)

    m.forward = own
    x = torch.randn(1, 3, 8)
    ((r, probs),) = _calls(art.capture_attention(m, x, x, x))
    # the own forward runs twice: once for the weights, once as the caller asked
    assert calls == [1, 1] and m.__dict__["forward"] is own and probs.shape == (1, 2, 3, 3)


def test_refuses_a_non_module():
    with pytest.raises(TypeError):
        art.capture(lambda x: x)


# ---- inside nn.TransformerEncoder -------------------------------------------

@pytest.mark.parametrize("train", [False, True])
def test_encoder_causal_mask_every_layer_exact(train):
    enc = _encoder()
    enc.train(train)
    n = 7
    x = torch.randn(2, n, 16)
    causal = nn.Transformer.generate_square_subsequent_mask(n)  # float, -inf above
    with torch.no_grad():
        ref_out = enc(x, mask=causal)
    with torch.no_grad(), art.capture(enc) as records:
        out = enc(x, mask=causal)
    assert torch.allclose(out, ref_out, rtol=0, atol=1e-6)
    assert records.layers() == [(f"layers.{i}.self_attn", 0) for i in range(3)]
    inputs = _layer_inputs(enc, enc.layers, x, mask=causal)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    for (r, probs), xin, layer in zip(_calls(records), inputs, enc.layers):
        with torch.no_grad():
            ref = layer.self_attn(xin, xin, xin, attn_mask=causal, need_weights=True,
                                  average_attn_weights=False)[1]
        assert np.array_equal(probs, ref.numpy())
        assert probs.shape == (2, 4, n, n)
        assert (probs[:, :, upper] == 0).all()
        assert np.allclose(probs.sum(-1), 1, atol=1e-6)
        assert np.array_equal(r.attn_mask, causal.numpy())
        assert np.array_equal(r.mask[0], upper) and r.mask_kind == "causal"
        assert r.dropout == 0.0 and r.self_attention
    _assert_restored(enc)


def test_encoder_eval_fast_path_is_switched_off():
    # eval + no_grad + no mask: the fused path of torch 1.13+ would run no
    # self_attn at all; with a key padding mask also the nested-tensor path.
    enc = _encoder(layers=2).eval()
    x = torch.randn(3, 5, 16)
    with torch.no_grad():
        ref_out = enc(x)
    records = art.capture_attention(enc, x)
    assert len(records.layers()) == 2 and len(records) == 8
    with torch.no_grad(), art.capture(enc):
        assert torch.allclose(enc(x), ref_out, rtol=0, atol=1e-5)
    pad = torch.zeros(3, 5, dtype=torch.bool)
    pad[0, 3:] = True
    records = art.capture_attention(enc, x, src_key_padding_mask=pad)
    assert len(records.layers()) == 2
    for r in records:
        assert np.array_equal(r.key_padding_mask, pad.numpy())
        assert (r.probs[0, :, 3:] == 0).all() and r.mask[0, :, 3:].all()
        assert not r.mask[1:].any()
    _assert_restored(enc)


def test_train_mode_dropout_is_recorded():
    enc = _encoder(layers=1, dropout=0.25).train()
    records = art.capture_attention(enc, torch.randn(1, 4, 16))
    assert len(records) == 4 and {r.dropout for r in records} == {0.25}
    records = art.capture_attention(enc.eval(), torch.randn(1, 4, 16))
    assert {r.dropout for r in records} == {0.0}


def test_decoder_self_and_cross_attention():
    torch.manual_seed(12)
    layer = nn.TransformerDecoderLayer(16, 2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    dec = nn.TransformerDecoder(layer, 2).eval()
    tgt, memory = torch.randn(2, 4, 16), torch.randn(2, 6, 16)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    records = art.capture_attention(dec, tgt, memory, tgt_mask=mask)
    calls = _calls(records)
    assert [r.layer for r, _ in calls] == ["layers.0.self_attn", "layers.0.multihead_attn",
                                           "layers.1.self_attn", "layers.1.multihead_attn"]
    assert [r.self_attention for r, _ in calls] == [True, False, True, False]
    assert calls[0][1].shape == (2, 2, 4, 4) and calls[1][1].shape == (2, 2, 4, 6)
    assert calls[1][0].mask is None and calls[0][0].mask[0, 0, 1]
    _assert_restored(dec)


def test_float64_and_half_models():
    enc = _encoder(layers=1).double().eval()
    r = art.capture_attention(enc, torch.randn(1, 3, 16, dtype=torch.float64))[0]
    assert r.probs.dtype == np.float64 and r.precision == "float64"
    enc = _encoder(layers=1).eval()
    r = art.capture_attention(enc, torch.randn(1, 3, 16), dtype="float64")[0]
    assert r.probs.dtype == np.float64 and r.precision == "float32"


def test_bfloat16_model():
    enc = _encoder(layers=1).to(torch.bfloat16).train()
    try:
        r = art.capture_attention(enc, torch.randn(1, 3, 16, dtype=torch.bfloat16))[0]
    except RuntimeError as exc:  # some CPU builds lack a bf16 kernel
        pytest.skip(f"bfloat16 attention unsupported here: {exc}")
    assert r.precision == "bfloat16" and r.probs.dtype == np.float32



# ---- records keep their storage precision ----------------------------------

def _bf16_mha_records(n=16, d=32, heads=4):
    torch.manual_seed(5)
    m = nn.MultiheadAttention(d, heads, batch_first=True).to(torch.bfloat16).eval()
    x = torch.randn(2, n, d, dtype=torch.bfloat16)
    try:
        return art.capture_attention(m, x, x, x), m, x
    except RuntimeError as exc:  # pragma: no cover - torch 1.13 on x86 has the kernels
        pytest.skip(f"bfloat16 nn.MultiheadAttention unsupported on this CPU: {exc}")


def test_bfloat16_records_carry_their_precision():
    records, m, x = _bf16_mha_records()
    ((r, probs),) = _calls(records)
    with torch.no_grad():
        _, want = m(x, x, x, need_weights=True, average_attn_weights=False)
    assert want.dtype == torch.bfloat16 and r.precision == "bfloat16"
    # the values are the module's bfloat16 weights, widened exactly
    assert probs.dtype == np.float32 and np.array_equal(probs, want.float().numpy())
    assert r.probs.attnrank_precision == "bfloat16"
    p = records[2].probs[1]  # one head, one batch entry: a view keeps the precision
    assert p.attnrank_precision == "bfloat16"
    # no precision argument needed: the bindings read it from the record
    s = attnrank.spectrum(p)
    assert s.tolerance.precision == "bfloat16"
    assert s.tolerance.rtol == attnrank.spectrum(p, precision="bfloat16").tolerance.rtol
    assert {s.tolerance.precision for s in attnrank.spectrum(r.probs).matrices} == {"bfloat16"}
    rep = attnrank.represent(p, axis="row", head_size=8, fit=False)
    assert rep.tolerance.precision == "bfloat16"
    assert rep.tolerance.sum_tol == attnrank.represent(
        np.asarray(p), axis="row", head_size=8, fit=False, precision="bfloat16").tolerance.sum_tol
    # a plain float32 copy would be judged as float32: the record must not be one
    assert attnrank.spectrum(np.asarray(p)).tolerance.precision == "float32"
    # arithmetic makes new values: a plain array
    assert type(p * 2.0) is np.ndarray and type(p.sum(axis=1)) is np.ndarray
    # dtype="float64" widens again and still says bfloat16
    r64 = art.capture_attention(m, x, x, x, dtype="float64")[0]
    assert r64.probs.dtype == np.float64 and r64.probs.attnrank_precision == "bfloat16"
    assert attnrank.represent(r64.probs[0], axis="row", head_size=8,
                              fit=False).tolerance.precision == "bfloat16"


def test_half_records_keep_their_dtype():
    # torch 1.13 has no float16 matmul on the CPU ("addmm_impl_cpu_" not
    # implemented for 'Half'), so a float16 model cannot run here: the same
    # module's weights computed in float32 are cast to float16 by hand, as a
    # float16 model (softmax in float32) stores them.  (Casting the bfloat16
    # record instead would keep bfloat16's rounding, which float16's sum
    # check rightly refuses.)
    _, m, x = _bf16_mha_records()
    ((_, probs),) = _calls(art.capture_attention(m.float(), x.float(), x.float(), x.float()))
    half = torch.from_numpy(probs).half()
    h = art.from_attentions([half])[0]
    assert h.precision == "float16" and h.probs.dtype == np.float16
    assert attnrank.spectrum(h.probs[0]).tolerance.precision == "float16"
    assert attnrank.represent(h.probs[0], axis="row", head_size=8,
                              fit=False).tolerance.precision == "float16"
    h64 = art.from_attentions([half], dtype="float64")[0]
    assert h64.probs.dtype == np.float64 and h64.probs.attnrank_precision == "float16"
    # to a coarser dtype: the coarser one is the storage, no wrapper
    f32 = art.to_numpy(torch.ones(3, 3, dtype=torch.float64), dtype="float32")
    assert type(f32) is np.ndarray and f32.dtype == np.float32
    assert type(art.to_numpy(torch.ones(3, 3))) is np.ndarray  # nothing hidden


def test_stored_arrays_pickle_and_copy():
    import pickle
    r = _bf16_mha_records()[0][0]
    for q in (pickle.loads(pickle.dumps(r.probs)), r.probs.copy(), r.probs.T,
              r.probs.reshape(-1, r.probs.shape[-1]), r.probs.astype(np.float64)):
        assert q.attnrank_precision == "bfloat16"


# ---- Hugging Face style attentions -------------------------------------------

def test_from_attentions_tuple():
    torch.manual_seed(2)
    b, h, n = 2, 3, 5
    layers = tuple(torch.softmax(torch.randn(b, h, n, n), -1) for _ in range(3))
    grads = layers[0].clone().requires_grad_(True)
    bf = layers[1].to(torch.bfloat16)
    mask = torch.ones(b, n, dtype=torch.long)
    mask[1, 4] = 0
    records = art.from_attentions((grads, bf, layers[2]), attention_mask=mask)
    assert records.layers() == [("layers.0", 0), ("layers.1", 0), ("layers.2", 0)]
    assert [(r.head, r.heads, r.source) for r in records[:3]] == [
        (i, h, "attentions") for i in range(h)]
    assert np.array_equal(records.stack("layers.0"), layers[0].numpy())
    assert records[h].precision == "bfloat16" and records[h].probs.dtype == np.float32
    assert np.array_equal(records.stack("layers.1"), bf.float().numpy())
    one = art.from_attentions([layers[2][0]])  # heads x n x n: batch 1
    assert len(one) == h and one[0].probs.shape == (1, n, n) and one[0].mask is None
    assert records[0].mask[1, :, 4].all() and not records[0].mask[0].any()
    out = types.SimpleNamespace(attentions=layers)
    records = art.from_attentions(out, names=["a", "b", "c"], is_causal=True, dtype="float64")
    assert [layer for layer, _ in records.layers()] == ["a", "b", "c"]
    assert records[0].probs.dtype == np.float64 and records[0].precision == "float32"
    assert np.array_equal(records[0].mask[0], np.triu(np.ones((n, n), bool), 1))
    assert records[0].mask_kind == "causal"
    np_records = art.from_attentions([layers[0].numpy()])
    assert np_records[0].precision == "float32"


def test_from_attentions_refusals():
    a = torch.rand(1, 2, 3, 3)
    with pytest.raises(ValueError):
        art.from_attentions(types.SimpleNamespace(attentions=None))
    with pytest.raises(TypeError):
        art.from_attentions(a)
    with pytest.raises(ValueError):
        art.from_attentions([torch.rand(3, 3)])
    with pytest.raises(ValueError):
        art.from_attentions([a], names=["x", "y"])
    with pytest.raises(ValueError):
        art.from_attentions([a, None])
    with pytest.raises(ValueError):
        art.from_attentions([a], attention_mask=torch.ones(2, 3))
    with pytest.raises(TypeError):
        art.from_attentions([torch.ones(1, 1, 2, 2, dtype=torch.complex64)])
    with pytest.raises(TypeError):
        art.from_attentions([torch.ones(1, 1, 2, 2, dtype=torch.long)])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_tensors_are_moved():  # pragma: no cover - needs a GPU
    m = nn.MultiheadAttention(8, 2, batch_first=True).cuda()
    x = torch.randn(1, 3, 8, device="cuda")
    (r,) = art.capture_attention(m, x, x, x)
    assert r.device.startswith("cuda") and isinstance(r.probs, np.ndarray)
