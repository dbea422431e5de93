#!/usr/bin/python3
"""The cost of attnrank.torch.capture (docs/performance.md, "Capture"):
one forward pass of a decoder under capture against the same forward
without it, in the same process, medians of interleaved repetitions, for
the four sources: explicit softmax (nanoGPT layout), scaled_dot_product_
attention (LLaMA layout, grouped-query heads; the reference formula where
torch has no public SDPA), nn.MultiheadAttention, and the same softmax
model with the captured maps converted to float64.

The capture adds per call: the torch-function mode's dispatch on every
torch call, module hooks, a copy of the probabilities to numpy, and, for
SDPA, the probabilities computed beside the call (float64 logits); for
nn.MultiheadAttention a second call of the module for the weights.

Run from a build tree:
  PYTHONPATH=build/python /usr/bin/python3 bench/torch_capture.py [--quick]
"""

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
import torch_models as tm  # noqa: E402  (the test models)

import attnrank.torch as art  # noqa: E402

if not hasattr(F, "scaled_dot_product_attention"):
    F.scaled_dot_product_attention = tm.reference_sdpa


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def compare(name, model, args, reps, **capture_kw):
    model.eval()

    def plain():
        with torch.no_grad():
            model(*args)

    def captured():
        with torch.no_grad(), art.capture(model, **capture_kw):
            model(*args)

    plain(), captured()  # warm up
    a, b = [], []
    for _ in range(reps):  # interleaved
        a += timed(plain, 1)
        b += timed(captured, 1)
    ta, tb = statistics.median(a), statistics.median(b)
    print(f"{name:<34} {ta * 1e3:9.2f} ms {tb * 1e3:9.2f} ms {tb / ta:7.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, smaller n")
    args = ap.parse_args()
    reps, n = (5, 64) if args.quick else (21, 256)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    ids = torch.randint(0, 32, (4, n))
    print(f"torch {torch.__version__}, batch 4, n {n}, d 64, 4 heads, 4 layers, 1 thread")
    print(f"{'model':<34} {'plain':>12} {'captured':>12} {'ratio':>8}")
    big = dict(layers=4, d=64, heads=4, vocab=32, n_ctx=n)
    compare("explicit softmax (nanoGPT)", tm.TinyDecoder(tm.CausalSelfAttention, **big),
            (ids,), reps)
    compare("explicit softmax, dtype=float64", tm.TinyDecoder(tm.CausalSelfAttention, **big),
            (ids,), reps, dtype="float64")
    compare("scaled_dot_product_attention (GQA)",
            tm.TinyLlama(layers=4, d=64, heads=4, kv_heads=2), (ids,), reps)
    compare("nn.MultiheadAttention",
            tm.TinyDecoder(lambda d, h: tm.MhaAttention(d, h), **big), (ids,), reps)


if __name__ == "__main__":
    main()
