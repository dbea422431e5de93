#!/usr/bin/python3
"""Write small (or BERT-base sized) safetensors models for attnrank tests.

Only numpy, json and struct: no torch, no safetensors package.  Each family
uses the tensor names and layouts of its Hugging Face checkpoints:

  bert   bert.encoder.layer.L.attention.self.{query,key,value}.{weight,bias},
         nn.Linear layout [out, in]; config.json: hidden_size,
         num_attention_heads, num_hidden_layers, max_position_embeddings
  gpt2   h.L.attn.c_attn.{weight,bias}: fused Conv1D layout [in, 3 out]
         (q | k | v column blocks); config.json: n_embd, n_head, n_layer,
         n_positions
  llama  model.layers.L.self_attn.{q,k,v,o}_proj.weight, Linear layout, with
         num_key_value_heads < num_attention_heads (grouped-query attention)
         and rope_theta in config.json

Planted ranks: query head h of layer L is A B with A d_head x r (orthonormal
columns), B r x d (r = rank_of(L, h), see below), key heads are full rank, so the QK circuit
W_q^h^T W_k^h has rank exactly r.  The ranks are written to expected.json
beside the model (not read by attnrank).

  /usr/bin/python3 make_safetensors.py OUT_DIR --family bert --layers 2 \
      --heads 4 --d 32 --dtype F16 [--kv-heads 2] [--shards 3] [--full]
  /usr/bin/python3 make_safetensors.py OUT_DIR --bad     (malformed files)

--embed tied|untied (GPT-2, LLaMA) adds the token embedding (wte.weight,
model.embed_tokens.weight; V = --vocab) and, untied, lm_head.weight [V, d];
--norms adds the pre-LN gains with seeded values away from 1 (GPT-2
h.L.ln_1.{weight,bias} and ln_f.weight, LLaMA
model.layers.L.input_layernorm.weight and model.norm.weight).
"""
import argparse
import json
import os
import struct

import numpy as np

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": None, "I64": "<i8"}


def bf16_bits(a):
    """Round float64 -> float32 -> bfloat16 (nearest even) bit patterns."""
    u = np.asarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def tensor_bytes(arr, dtype):
    if dtype == "BF16":
        return bf16_bits(arr).tobytes()
    return np.ascontiguousarray(arr, dtype=DTYPES[dtype]).tobytes()


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, array, dtype).  Header padded to 8 bytes."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    chunks, offset = [], 0
    for name, arr, dtype in tensors:
        raw = tensor_bytes(arr, dtype)
        header[name] = {"dtype": dtype, "shape": list(np.shape(arr)),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def rank_of(layer, head, head_dim):
    """The planted circuit rank of (layer, head): 1 .. head_dim."""
    return 1 + (7 * layer + 3 * head) % head_dim


def head_weights(rng, d, head_dim, rank):
    """A head of rank `rank`: A B with orthonormal A (head_dim x rank) and
    Gaussian B (rank x d).  Orthonormal columns keep the planted spectrum well
    conditioned (a Gaussian A of nearly full rank has singular values near
    0.01 sigma_1, below what F16/BF16 storage can resolve)."""
    a = np.linalg.qr(rng.standard_normal((head_dim, rank)))[0]
    b = rng.standard_normal((rank, d)) / np.sqrt(d)
    return a @ b


def make_model(args):
    rng = np.random.default_rng(args.seed)
    d, h = args.d, args.heads
    dh = args.head_size or d // h
    kv = args.kv_heads or h
    fam = args.family
    tensors, expected = [], []
    if fam == "bert":
        tensors.append(("bert.embeddings.position_ids",
                        np.arange(args.max_positions, dtype=np.int64)[None, :], "I64"))
        tensors.append(("bert.embeddings.word_embeddings.weight",
                        rng.standard_normal((args.vocab, d)) * 0.02, args.dtype))
    for layer in range(args.layers):
        ranks = [args.rank or rank_of(layer, i, dh) for i in range(h)]
        expected.append(ranks)
        wq = np.vstack([head_weights(rng, d, dh, r) for r in ranks])  # [h*dh, d]
        wk = rng.standard_normal((kv * dh, d)) / np.sqrt(d)
        wv = rng.standard_normal((kv * dh, d)) / np.sqrt(d)
        wo = rng.standard_normal((d, h * dh)) / np.sqrt(h * dh)
        if fam == "bert":
            p = "bert.encoder.layer.%d." % layer
            tensors += [(p + "attention.self.query.weight", wq, args.dtype),
                        (p + "attention.self.query.bias", rng.standard_normal(h * dh), args.dtype),
                        (p + "attention.self.key.weight", wk, args.dtype),
                        (p + "attention.self.key.bias", rng.standard_normal(kv * dh), args.dtype),
                        (p + "attention.self.value.weight", wv, args.dtype),
                        (p + "attention.output.dense.weight", wo, args.dtype)]
            if args.full:
                f = args.ffn or 4 * d
                tensors += [(p + "intermediate.dense.weight",
                             rng.standard_normal((f, d)) * 0.02, args.dtype),
                            (p + "output.dense.weight",
                             rng.standard_normal((d, f)) * 0.02, args.dtype),
                            (p + "attention.output.LayerNorm.weight", np.ones(d), args.dtype),
                            (p + "output.LayerNorm.weight", np.ones(d), args.dtype)]
        elif fam == "gpt2":
            # Conv1D: y = x W + b with W [in, out]; q | k | v column blocks
            fused = np.hstack([wq.T, wk.T, wv.T])
            p = "h.%d." % layer
            tensors += [(p + "attn.c_attn.weight", fused, args.dtype),
                        (p + "attn.c_attn.bias", rng.standard_normal(3 * d), args.dtype),
                        (p + "attn.c_proj.weight", wo.T, args.dtype)]
            if args.norms:
                tensors += [(p + "ln_1.weight", 1 + 0.5 * rng.standard_normal(d), args.dtype),
                            (p + "ln_1.bias", 0.1 * rng.standard_normal(d), args.dtype)]
        else:
            p = "model.layers.%d.self_attn." % layer
            tensors += [(p + "q_proj.weight", wq, args.dtype),
                        (p + "k_proj.weight", wk, args.dtype),
                        (p + "v_proj.weight", wv, args.dtype),
                        (p + "o_proj.weight", wo, args.dtype)]
            if args.norms:
                tensors.append(("model.layers.%d.input_layernorm.weight" % layer,
                                1 + 0.5 * rng.standard_normal(d), args.dtype))
    if fam != "bert" and args.embed != "none":
        erng = np.random.default_rng(args.seed + 11)
        tensors.append(("wte.weight" if fam == "gpt2" else "model.embed_tokens.weight",
                        erng.standard_normal((args.vocab, d)) * 0.1, args.dtype))
        if args.embed == "untied":
            tensors.append(("lm_head.weight", erng.standard_normal((args.vocab, d)) * 0.1,
                            args.dtype))
    if fam != "bert" and args.norms:
        tensors.append(("ln_f.weight" if fam == "gpt2" else "model.norm.weight",
                        1 + 0.5 * rng.standard_normal(d), args.dtype))
    return tensors, expected


def config_for(args):
    dh = args.head_size or args.d // args.heads
    if args.family == "bert":
        return {"model_type": "bert", "hidden_size": args.d,
                "num_attention_heads": args.heads, "num_hidden_layers": args.layers,
                "max_position_embeddings": args.max_positions, "intermediate_size": 4 * args.d}
    if args.family == "gpt2":
        return {"model_type": "gpt2", "n_embd": args.d, "n_head": args.heads,
                "n_layer": args.layers, "n_positions": args.max_positions}
    cfg = {"model_type": "llama", "hidden_size": args.d, "num_attention_heads": args.heads,
           "num_key_value_heads": args.kv_heads or args.heads,
           "num_hidden_layers": args.layers, "max_position_embeddings": args.max_positions,
           "rope_theta": 10000.0}
    if args.head_size:
        cfg["head_dim"] = dh
    return cfg


def t5_bias_table(args):
    """T5's relative_attention_bias.weight, 32 buckets x heads: head 0
    constant (bias rank 0), the others seeded Gaussian (rank n - 1)."""
    rng = np.random.default_rng(args.seed + 5)
    table = rng.standard_normal((32, args.heads))
    table[:, 0] = 0.5
    return ("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", table,
            args.dtype)


def write_model(args):
    os.makedirs(args.out, exist_ok=True)
    tensors, expected = make_model(args)
    if args.t5_bias:
        tensors.append(t5_bias_table(args))
    if args.shards <= 1:
        write_safetensors(os.path.join(args.out, "model.safetensors"), tensors,
                          {"format": "pt"})
    else:
        weight_map = {}
        per = (len(tensors) + args.shards - 1) // args.shards
        for s in range(args.shards):
            name = "model-%05d-of-%05d.safetensors" % (s + 1, args.shards)
            part = tensors[s * per:(s + 1) * per]
            write_safetensors(os.path.join(args.out, name), part, {"format": "pt"})
            for t in part:
                weight_map[t[0]] = name
        with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=1)
    if not args.no_config:
        cfg = config_for(args)
        if args.alibi:
            cfg["alibi"] = True
        if args.t5_bias:
            cfg["relative_attention_num_buckets"] = 32
            cfg["relative_attention_max_distance"] = 128
        with open(os.path.join(args.out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=1)
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"ranks": expected}, f)


# ---------------------------------------------------------------- bad files

def raw_file(path, header_bytes, data=b"", length=None):
    n = len(header_bytes) if length is None else length
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n) + header_bytes + data)


def hdr(obj):
    return json.dumps(obj).encode()


def tiny_bert(dtype="F32", poison=None):
    """One BERT layer, d = 4, 2 heads; poison = (row, col, value) in the query."""
    rng = np.random.default_rng(7)
    q = rng.standard_normal((4, 4))
    k = rng.standard_normal((4, 4))
    if poison is not None:
        q[poison[0], poison[1]] = poison[2]
    p = "encoder.layer.0.attention.self."
    return [(p + "query.weight", q, dtype), (p + "key.weight", k, dtype)]


def write_bad(out):
    os.makedirs(out, exist_ok=True)
    j = lambda name: os.path.join(out, name)  # noqa: E731
    f32 = np.arange(6, dtype="<f4").tobytes()  # 24 bytes
    one = {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
    with open(j("st_short.safetensors"), "wb") as f:
        f.write(b"\x10\x00\x00")
    raw_file(j("st_header_past_eof.safetensors"), hdr(one), f32, length=1000000)
    raw_file(j("st_invalid_json.safetensors"), b'{"w": {"dtype": "F32",', f32)
    raw_file(j("st_not_object.safetensors"), b"[1, 2, 3]", f32)
    raw_file(j("st_duplicate_key.safetensors"),
             b'{"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},'
             b' "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}', f32)
    bad = {"w": dict(one["w"], dtype="F12")}
    raw_file(j("st_unknown_dtype.safetensors"), hdr(bad), f32)
    bad = {"w": dict(one["w"], shape=[2, 2])}
    raw_file(j("st_shape_mismatch.safetensors"), hdr(bad), f32)
    bad = {"w": dict(one["w"], data_offsets=[32, 56])}
    raw_file(j("st_offsets_outside.safetensors"), hdr(bad), f32)
    bad = {"w": dict(one["w"], data_offsets=[24, 0])}
    raw_file(j("st_offsets_reversed.safetensors"), hdr(bad), f32)
    bad = {"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
           "b": {"dtype": "F32", "shape": [2, 2], "data_offsets": [8, 24]}}
    raw_file(j("st_overlap.safetensors"), hdr(bad), f32)
    raw_file(j("st_truncated.safetensors"), hdr(one), f32[:20])
    bad = {"w": {"dtype": "F32", "shape": [2, 3]}}
    raw_file(j("st_missing_offsets.safetensors"), hdr(bad), f32)
    write_safetensors(j("st_nonfinite.safetensors"), tiny_bert("F32", (1, 2, np.inf)))
    write_safetensors(j("st_nan_bf16.safetensors"), tiny_bert("BF16", (3, 0, np.nan)))
    write_safetensors(j("st_no_attention.safetensors"),
                      [("embeddings.weight", np.ones((3, 4)), "F32")])
    write_safetensors(j("st_int_query.safetensors"),
                      [("encoder.layer.0.attention.self.query.weight",
                        np.ones((4, 4), dtype=np.int64), "I64"),
                       ("encoder.layer.0.attention.self.key.weight", np.ones((4, 4)), "F32")])
    # an index naming a shard that is not there
    os.makedirs(j("st_missing_shard"), exist_ok=True)
    with open(os.path.join(out, "st_missing_shard", "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": {"w": "model-00001-of-00002.safetensors"}}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--family", choices=["bert", "gpt2", "llama"], default="bert")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=0)
    ap.add_argument("--head-size", type=int, default=0)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--dtype", choices=["F64", "F32", "F16", "BF16"], default="F32")
    ap.add_argument("--max-positions", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--ffn", type=int, default=0)
    ap.add_argument("--rank", type=int, default=0, help="plant this rank in every head")
    ap.add_argument("--full", action="store_true", help="BERT: add FFN and LayerNorm weights")
    ap.add_argument("--embed", choices=["none", "tied", "untied"], default="none",
                    help="GPT-2, LLaMA: store the token embedding (and lm_head when untied)")
    ap.add_argument("--norms", action="store_true",
                    help="GPT-2, LLaMA: store the pre-LN gains (ln_1/ln_f, input_layernorm/norm)")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--no-config", action="store_true")
    ap.add_argument("--alibi", action="store_true", help="config.json: alibi true")
    ap.add_argument("--t5-bias", action="store_true",
                    help="add T5 relative-position bucket values and their config keys")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bad", action="store_true", help="write the malformed files instead")
    args = ap.parse_args()
    if args.bad:
        write_bad(args.out)
    else:
        write_model(args)


if __name__ == "__main__":
    main()
