#!/usr/bin/env python3
"""A whole attnrank session on a small trained decoder: train, capture,
analyse, plot.

A two-layer, attention-only decoder (explicit softmax, as nanoGPT writes it)
learns to continue repeated random token blocks of varying length, the task
on which induction heads form (Olsson et al. 2022): with the defaults, layer
0 grows previous-token heads and layer 1 induction heads, and the report's
scores show it.  Then every head of every layer
is captured on fresh repeated sequences and reported: numerical rank with
its tolerance, the minimal head size under the causal mask against the
model's head size, and the head-type scores (previous-token, first-token,
diagonal, induction).  Writes OUT/report.csv and OUT/heads.png.

    PYTHONPATH=build/python python3 python/examples/tiny_decoder.py --out /tmp/session

Runs in a few seconds on two cores with the defaults; --steps 0
skips training (an untrained model, for a quick look).
"""

import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

import attnrank.torch as art


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n_head, self.n_embd = heads, d  # as nanoGPT names them
        self.c_attn = nn.Linear(d, 3 * d, bias=False)
        self.c_proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_head, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(torch.ones(t, t, dtype=torch.bool).tril().logical_not(),
                              float("-inf"))
        att = F.softmax(att, dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).reshape(b, t, c))


class Decoder(nn.Module):
    def __init__(self, vocab, n_ctx, d=64, heads=4, layers=2):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(n_ctx, d)
        self.h = nn.ModuleList(Attention(d, heads) for _ in range(layers))
        self.ln_f, self.lm_head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for attn in self.h:
            x = x + attn(x)
        return self.lm_head(self.ln_f(x))


def train(model, steps, period, vocab, seed):
    """AdamW on repeated random blocks of 4 to ``period`` tokens."""
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    lengths = torch.Generator().manual_seed(seed)
    for step in range(steps):
        # Blocks of varying length: a fixed period could be solved by
        # position alone; a varying one needs an induction circuit.
        p = int(torch.randint(4, period + 1, (1,), generator=lengths))
        idx = art.repeated_tokens(p, batch=32, vocab=vocab, seed=seed + 1 + step)
        logits = model(idx[:, :-1])
        # only the second copy is predictable
        loss = F.cross_entropy(logits[:, p - 1:].reshape(-1, vocab), idx[:, p:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"train: step {step:4d}  loss on the repeat {loss.item():.3f}",
                  file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=600, help="training steps (default 600)")
    ap.add_argument("--period", type=int, default=12,
                    help="longest repeated block in training, the block at analysis (12)")
    ap.add_argument("--vocab", type=int, default=64, help="vocabulary size (64)")
    ap.add_argument("--seed", type=int, default=0, help="seed of weights and data (0)")
    ap.add_argument("--out", default=".", help="folder for report.csv and heads.png")
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    n = 2 * args.period
    model = Decoder(args.vocab, n)
    start = time.time()
    train(model, args.steps, args.period, args.vocab, args.seed)
    print(f"train: {time.time() - start:.1f} s", file=sys.stderr)

    model.eval()
    tokens = art.repeated_tokens(args.period, batch=2, vocab=args.vocab, seed=10 ** 6)
    records = art.capture_attention(model, tokens)  # one record per layer and head
    print(records, "|", records[0])
    report = art.analyze(model, tokens, represent_options={"fit": False})
    print(f"{'layer':<6} {'head':>4} {'rank':>4} {'tol':>9} {'min_hs':>6} {'hs':>3} "
          f"{'prev':>5} {'first':>5} {'diag':>5} {'induct':>6}")
    for r in report.rows:
        if r.batch:
            continue

        def f(v):
            return "   - " if v is None else f"{v:5.2f}"

        print(f"{r.layer:<6} {r.head:4d} {r.rank:4d} {r.threshold:9.2e} "
              f"{'-' if r.min_head_size is None else r.min_head_size:>6} {r.head_size:3d} "
              f"{f(r.previous_token)} {f(r.first_token)} {f(r.diagonal)} "
              f"{f(r.induction)} ")
    os.makedirs(args.out, exist_ok=True)
    csv = report.to_csv(os.path.join(args.out, "report.csv"))
    fig = report.plot(os.path.join(args.out, "heads.png"))
    print(f"wrote {csv} and {fig}")


if __name__ == "__main__":
    main()
