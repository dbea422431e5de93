#!/usr/bin/python3
"""The storage rule of the rank on stored attention maps (docs/theory/spectra.md,
"The storage rule"; docs/performance.md, "Storage rule"):

  1. causal softmax maps of Gaussian logits (rows as queries, seed 1) at
     n = 256, 1024, 2048, stored in bfloat16 and float16: the default and
     the certain rank, the count an oracle knowing the unrounded map would
     resolve (float64 singular values above the actual rounding error's
     spectral norm), the float32 copy's rank under the storage rule and
     under numpy's rule, and numpy's rule on the stored map;
  2. the cost of the storage rule: attnrank.spectrum of the float32 copy
     (storage rule) against the same float64 array (numpy's rule), and
     against numpy.linalg.svd, medians of interleaved repetitions.

Run from a build tree:
  PYTHONPATH=build/python /usr/bin/python3 -P bench/storage_rank.py [--quick]
"""

import argparse
import statistics
import time

import numpy as np
import torch

import attnrank


def causal_map(n, seed):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(n, n, generator=g, dtype=torch.float64)
    s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, -1)


def ranks(n):
    p = causal_map(n, 1)
    s64 = np.linalg.svd(p.numpy(), compute_uv=False)
    f32 = attnrank.spectrum(p.float())
    f32_numpy = attnrank.spectrum(p.float(), rtol=n * 2.0 ** -23)
    for dtype, eps in ((torch.bfloat16, 2.0 ** -7), (torch.float16, 2.0 ** -10)):
        q = p.to(dtype)
        r = attnrank.spectrum(q)
        err = np.linalg.norm(q.double().numpy() - p.numpy(), 2)
        numpy_rule = attnrank.spectrum(q, rtol=n * eps).rank
        print(f"| {n} | {str(dtype)[6:]} | {r.rank} | {r.tolerance.certain_rank} | "
              f"{int((s64 > err).sum())} | {f32.rank} / {f32_numpy.rank} | {numpy_rule} |")


def median_seconds(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def cost(n, reps):
    a = causal_map(n, 2).numpy()
    a32 = a.astype(np.float32)
    t32, t64, tnp = [], [], []
    for _ in range(reps):  # interleaved
        t32.append(median_seconds(lambda: attnrank.spectrum(a32), 1))
        t64.append(median_seconds(lambda: attnrank.spectrum(a), 1))
        tnp.append(median_seconds(lambda: np.linalg.svd(a, compute_uv=False), 1))
    m32, m64, mnp = (statistics.median(t) for t in (t32, t64, tnp))
    print(f"n = {n}: float32 (storage rule) {m32:.3f} s, float64 (numpy's rule) {m64:.3f} s, "
          f"numpy svd {mnp:.3f} s; storage / numpy's rule {m32 / m64:.2f}, "
          f"storage / numpy svd {m32 / mnp:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="n = 256 only, 3 repetitions")
    args = ap.parse_args()
    sizes = (256,) if args.quick else (256, 1024, 2048)
    print("| n | storage | rank | certain | resolvable | f32 (storage / numpy rule) | "
          "numpy's rule on the stored map |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        ranks(n)
    for n in ((256,) if args.quick else (512, 2048)):
        cost(n, 3 if args.quick else 5)


if __name__ == "__main__":
    main()
