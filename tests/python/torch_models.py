"""Small attention models written as users write them, for the capture
tests: nanoGPT-style explicit softmax, LLaMA-style scaled_dot_product_attention
(grouped-query), GPT-2- and BERT-style module trees in Hugging Face's naming
(without the transformers package), and nn.MultiheadAttention blocks."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import handle_torch_function, has_torch_function


def reference_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                   scale=None, enable_gqa=False):
    """torch 2's documented scaled_dot_product_attention (its reference
    implementation's formula), dispatching to torch function modes as the
    builtin does.  Installed as F.scaled_dot_product_attention where torch
    (1.13 here) has none."""
    if has_torch_function((query, key, value)):
        return handle_torch_function(reference_sdpa, (query, key, value), query, key, value,
                                     attn_mask=attn_mask, dropout_p=dropout_p,
                                     is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    n_q, n_k = query.size(-2), key.size(-2)
    factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    bias = torch.zeros(n_q, n_k, dtype=query.dtype)
    if is_causal:
        keep = torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=0)
        bias = bias.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(~attn_mask, float("-inf"))
        else:
            bias = attn_mask + bias
    if enable_gqa:
        key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
        value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
    weights = query @ key.transpose(-2, -1) * factor + bias
    weights = torch.softmax(weights, dim=-1)
    weights = torch.dropout(weights, dropout_p, train=True)
    return weights @ value


reference_sdpa.__name__ = "scaled_dot_product_attention"


def sdpa(*args, **kwargs):
    return F.scaled_dot_product_attention(*args, **kwargs)


# ---- nanoGPT: explicit softmax with a -inf causal mask -------------------------

class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n_head, self.n_embd = heads, d
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
                   for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.ones(t, t).tril() == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, attn, d):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(d), attn, nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyDecoder(nn.Module):
    """Token embedding, blocks, LM head; ``attention(d, heads)`` builds each
    block's attention."""

    def __init__(self, attention, layers=2, d=16, heads=4, vocab=32, n_ctx=32):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(n_ctx, d)
        self.h = nn.ModuleList(Block(attention(d, heads), d) for _ in range(layers))
        self.ln_f, self.lm_head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---- LLaMA: q_proj/k_proj/v_proj/o_proj, grouped-query, SDPA ---------------------

class LlamaAttention(nn.Module):
    """``mask``: "causal" (is_causal=True), "float" (an additive mask with
    finfo.min, as Hugging Face builds it), "bool" (True = attend)."""

    def __init__(self, d, heads, kv_heads=2, mask="causal", padding=None):
        super().__init__()
        self.num_heads, self.num_key_value_heads = heads, kv_heads
        self.head_dim = d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        self.mask, self.padding = mask, padding

    def _mask(self, b, t, dtype):
        keep = torch.ones(t, t, dtype=torch.bool).tril().expand(b, 1, t, t).clone()
        if self.padding is not None:
            keep = keep & ~self.padding[:, None, None, :]
        if self.mask == "bool":
            return keep
        return torch.zeros(b, 1, t, t, dtype=dtype).masked_fill(~keep, torch.finfo(dtype).min)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        groups = self.num_heads // self.num_key_value_heads
        k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)  # repeat_kv
        if self.mask == "causal":
            out = sdpa(q, k, v, is_causal=True)
        else:
            out = sdpa(q, k, v, attn_mask=self._mask(b, t, q.dtype))
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, **kw):
        super().__init__()
        self.self_attn = LlamaAttention(d, heads, **kw)
        self.mlp = nn.Linear(d, d)

    def forward(self, x):
        x = x + self.self_attn(x)
        return x + self.mlp(x)


class TinyLlama(nn.Module):
    def __init__(self, layers=2, d=16, heads=4, vocab=32, **kw):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, d)
        self.model.layers = nn.ModuleList(LlamaLayer(d, heads, **kw) for _ in range(layers))
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids):
        x = self.model.embed_tokens(input_ids)
        for layer in self.model.layers:
            x = layer(x)
        return self.lm_head(x)


# ---- GPT-2 (eager): c_attn, torch.where with finfo.min, softmax --------------------

class GPT2Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.num_heads, self.head_dim, self.embed_dim = heads, d // heads, d
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(0.0)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.num_heads, self.head_dim).transpose(1, 2) for z in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = nn.functional.softmax(w, dim=-1)
        w = self.attn_dropout(w)
        return self.c_proj((w @ v).transpose(1, 2).reshape(b, t, d))


class GPT2Model(nn.Module):
    def __init__(self, layers=2, d=16, heads=4, vocab=32):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(vocab, d)
        self.transformer.h = nn.ModuleList(Block(GPT2Attention(d, heads), d)
                                           for _ in range(layers))

    def forward(self, input_ids):
        x = self.transformer.wte(input_ids)
        for block in self.transformer.h:
            x = block(x)
        return x


# ---- BERT: attention.self.query/key/value, an additive padding mask ----------------

class BertSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.num_attention_heads, self.attention_head_size = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x, extended_mask):
        b, t, d = x.shape

        def split(z):
            return z.view(b, t, self.num_attention_heads, -1).permute(0, 2, 1, 3)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.attention_head_size) + extended_mask
        probs = nn.Softmax(dim=-1)(scores)
        return (probs @ v).permute(0, 2, 1, 3).reshape(b, t, d)


class BertLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attention = nn.Module()
        self.attention.self = BertSelfAttention(d, heads)
        self.output = nn.Linear(d, d)

    def forward(self, x, extended_mask):
        return x + self.output(self.attention.self(x, extended_mask))


class TinyBert(nn.Module):
    def __init__(self, layers=2, d=16, heads=4, vocab=32):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(BertLayer(d, heads) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        x = self.embeddings(input_ids)
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.encoder.layer:
            x = layer(x, ext)
        return x


# ---- nn.MultiheadAttention in a hand-written decoder block ---------------------------

class MhaAttention(nn.Module):
    def __init__(self, d, heads, dropout=0.0):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)

    def forward(self, x):
        t = x.size(1)
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)  # True = not allowed
        return self.mha(x, x, x, attn_mask=causal, need_weights=False)[0]
