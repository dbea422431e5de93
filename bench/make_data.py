"""Write the benchmark inputs as .npy files, so that attnrank and numpy time
the very same bytes.

    /usr/bin/python3 bench/make_data.py DIR --sizes 256 512 ... [--stack 10000 64]

gauss_N.npy   N x N, entries N(0, 1), float64, C order (what numpy writes)
stack_C_N.npy C x N x N attention scores: softmax over each column of
              N(0, 2^2) logits (the paper's column convention)
Seeds are fixed, so reruns write identical files; existing files are kept.
"""
import argparse
import os
import sys

import numpy as np


def write_atomic(path, array):
    tmp = "%s.tmp.%d.npy" % (path, os.getpid())
    np.save(tmp, array)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--sizes", type=int, nargs="*", default=[])
    ap.add_argument("--stack", type=int, nargs=2, action="append", default=[],
                    metavar=("COUNT", "N"))
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    for n in args.sizes:
        path = os.path.join(args.dir, "gauss_%d.npy" % n)
        if not os.path.exists(path):
            rng = np.random.default_rng(1000 + n)
            write_atomic(path, rng.standard_normal((n, n)))
    for count, n in args.stack:
        path = os.path.join(args.dir, "stack_%d_%d.npy" % (count, n))
        if not os.path.exists(path):
            rng = np.random.default_rng(7 * count + n)
            logits = 2.0 * rng.standard_normal((count, n, n))
            logits -= logits.max(axis=-2, keepdims=True)
            scores = np.exp(logits)
            scores /= scores.sum(axis=-2, keepdims=True)
            write_atomic(path, scores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
