#!/usr/bin/python3
"""The storage rule of the masked analysis on planted heads
(docs/theory/masked-attention.md, "Maps stored in low precision"):

causal softmax maps of planted logits S = A B^T / sqrt(k) (A, B n x k
Gaussian, rows as queries), rounded to bfloat16 and float16, analysed with
mask="causal" and no tolerance given.  Per (n, k, storage): over the seeds,
how often the interval [min_head_size_lower, min_head_size_upper] holds k,
how often the status is exact, how often the default estimate reads k, the
largest certificate error in units of the entry's rounding half-width
(rounding_ratio, <= 1 by construction), and the mean seconds per map.

Run from a build tree:
  PYTHONPATH=build/python /usr/bin/python3 -P bench/masked_stored.py \\
      [--sizes 64,256,1024] [--heads 8,16,32] [--seeds 10]
"""

import argparse
import time

import numpy as np
import torch

import attnrank


def planted(n, k, seed):
    g = torch.Generator().manual_seed(1000 * n + 10 * k + seed)
    a = torch.randn(n, k, generator=g, dtype=torch.float64)
    b = torch.randn(n, k, generator=g, dtype=torch.float64)
    s = (a @ b.T) / np.sqrt(k)
    s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, -1)


def run(n, k, dtype, seeds):
    holds = exact = hit = 0
    worst_ratio = 0.0
    seconds = 0.0
    misses = []
    for seed in range(seeds):
        p = planted(n, k, seed).to(dtype)
        t0 = time.perf_counter()
        r = attnrank.represent(p, mask="causal", axis="row")
        seconds += time.perf_counter() - t0
        lo, up = r.min_head_size_lower, r.min_head_size_upper
        holds += lo <= k and (up is None or k <= up)
        exact += r.status == "exact"
        hit += r.min_head_size == k
        if r.min_head_size != k:
            misses.append((seed, lo, r.min_head_size, up))
        if r.certificate is not None and r.certificate.rounding_ratio is not None:
            worst_ratio = max(worst_ratio, r.certificate.rounding_ratio)
    name = str(dtype).split(".")[-1]
    print(f"| {n} | {k} | {name} | {holds}/{seeds} | {exact}/{seeds} | {hit}/{seeds} | "
          f"{worst_ratio:.3f} | {seconds / seeds:.2f} |", flush=True)
    for m in misses:
        print(f"|   | seed {m[0]}: lower {m[1]}, estimate {m[2]}, upper {m[3]} | | | | | | |",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64,256,1024")
    ap.add_argument("--heads", default="8,16,32")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    print("| n | k | storage | interval holds k | exact | estimate = k | max rounding_ratio "
          "| s per map |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        for k in (int(x) for x in args.heads.split(",")):
            for dtype in (torch.bfloat16, torch.float16):
                run(n, k, dtype, args.seeds)


if __name__ == "__main__":
    main()
