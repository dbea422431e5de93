"""The numpy side of the benchmarks, timed inside the process.

    OPENBLAS_NUM_THREADS=T /usr/bin/python3 bench/numpy_svd.py FILE.npy \
        --what svd|rank|stack [--reps R]

svd    numpy.linalg.svd(A, compute_uv=False)
rank   numpy.linalg.matrix_rank(A)  (svd plus the max(m, n) eps sigma_1 cut)
stack  numpy.linalg.svd(stack, compute_uv=False) on a C x N x N array, plus
       every rank metric attnrank computes (vectorised), as a user would
Prints one JSON object: wall and CPU (process_time) times in seconds, numpy version, and the BLAS and
LAPACK shared objects mapped into this process (from /proc/self/maps).
"""
import argparse
import json
import sys
import time

import numpy as np


def loaded_blas():
    libs = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if any(key in path for key in ("blas", "lapack", "mkl", "atlas")):
                    libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def stack_metrics(s, m, n):
    """Rank and the effective ranks of docs/theory/spectra.md for each spectrum."""
    eps = np.finfo(np.float64).eps
    s1 = s[:, :1]
    rank = (s > max(m, n) * eps * s1).sum(axis=1)
    sq = s * s
    fro2 = sq.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stable = fro2 / (s[:, 0] ** 2)
        p = s / s.sum(axis=1, keepdims=True)
        plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        roy = np.exp(-plogp.sum(axis=1))
        part = fro2 ** 2 / (sq * sq).sum(axis=1)
        energy = (np.cumsum(sq, axis=1) < 0.99 * fro2[:, None]).sum(axis=1) + 1
        nuclear = s.sum(axis=1) ** 2 / fro2
    return np.column_stack([rank, stable, roy, part, energy, nuclear])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--what", choices=("svd", "rank", "stack"), default="svd")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    t_load = time.perf_counter()
    a = np.load(args.file)
    t_load = time.perf_counter() - t_load
    # Warm-up: start OpenBLAS's threads, as the C side does.
    np.linalg.svd(np.eye(64) + 0.5, compute_uv=False)
    times, cpu = [], []
    for _ in range(args.reps):
        c0 = time.process_time()
        t0 = time.perf_counter()
        if args.what == "svd":
            np.linalg.svd(a, compute_uv=False)
        elif args.what == "rank":
            np.linalg.matrix_rank(a)
        else:
            s = np.linalg.svd(a, compute_uv=False)
            stack_metrics(s, a.shape[-2], a.shape[-1])
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(json.dumps({"what": args.what, "shape": list(a.shape), "times": times, "cpu": cpu, "load_s": t_load,
                      "numpy": np.__version__, "blas": loaded_blas()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
