#!/usr/bin/python3
"""Speed of the Python package against numpy and against its own C calls, in
one process (docs/performance.md, "Python package"):

  1. attnrank.spectrum(A), A 2048 x 2048 (--n), against
     numpy.linalg.svd(A, compute_uv=False): target ratio <= 1.05;
  2. a 10,000 x 64 x 64 stack (--count, --m) against numpy's stacked svd:
     target numpy / attnrank >= 1.5 (threads over matrices, both cores);
  3. per-call overhead for a 64 x 64 array: a Python loop of
     attnrank.spectrum against a C loop of the same C calls
     (attnrank._core._c_loop_seconds), the median of 21 paired
     differences: target < 20 us; the same at 2 x 2, where the C call itself
     costs about 10 us.

Interleaved repetitions, medians; BLAS threads as the environment sets them
(OPENBLAS_NUM_THREADS), stated in the output.  Run from a build tree:
  PYTHONPATH=build/python /usr/bin/python3 -P bench/bench_python.py [--quick]
"""

import argparse
import os
import statistics
import time

import numpy as np

import attnrank
from attnrank import _core


def seconds(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def interleaved(fa, fb, reps):
    ta, tb = [], []
    for _ in range(reps):
        ta += seconds(fa, 1)
        tb += seconds(fb, 1)
    return statistics.median(ta), statistics.median(tb)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes (n 512, 2000 matrices)")
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--m", type=int, default=64)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.quick:
        a.n, a.count, a.reps, a.calls = 512, 2000, 3, 500
    rng = np.random.default_rng(a.seed)
    print(f"# attnrank {attnrank.version()}, numpy {np.__version__}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"{os.cpu_count()} CPUs")

    big = rng.standard_normal((a.n, a.n))
    t_ar, t_np = interleaved(lambda: attnrank.spectrum(big),
                             lambda: np.linalg.svd(big, compute_uv=False), a.reps)
    print(f"spectrum {a.n} x {a.n}: attnrank {t_ar:.3f} s, numpy {t_np:.3f} s, "
          f"attnrank / numpy {t_ar / t_np:.3f} (target <= 1.05)")

    stack = rng.standard_normal((a.count, a.m, a.m))
    t_ar, t_np = interleaved(lambda: attnrank.spectrum(stack),
                             lambda: np.linalg.svd(stack, compute_uv=False), a.reps)
    print(f"stack {a.count} x {a.m} x {a.m}: attnrank {t_ar:.3f} s, numpy {t_np:.3f} s, "
          f"numpy / attnrank {t_np / t_ar:.2f} (target >= 1.5)")

    # The overhead is a difference of two close times: pair each Python loop
    # with a C loop run right after it and take the median of the paired
    # differences, with their spread.  At 64 x 64 the SVD's own run-to-run
    # spread is about as large as the overhead; at 2 x 2 the C call costs
    # about a microsecond, so the fixed cost stands out.
    # 21 pairs of loops; the quartiles of the paired differences show the
    # spread (at 64 x 64 the SVD's own, tens of us on a shared machine).
    for m in (a.m, 2):
        small = rng.standard_normal((m, m))
        py, c = per_call(small, a.calls // 2, 21)
        diff = sorted((p - q) * 1e6 for p, q in zip(py, c))
        print(f"per call {m} x {m}: Python {statistics.median(py) * 1e6:.1f} us, "
              f"C {statistics.median(c) * 1e6:.1f} us, overhead {statistics.median(diff):.1f} us "
              f"(quartiles {diff[5]:.1f} .. {diff[15]:.1f}; target < 20)")


def per_call(small, calls, reps):
    """Seconds per call of attnrank.spectrum(small) in a Python loop and of
    the same C calls in a C loop, one pair of loops per repetition."""
    py, c = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            attnrank.spectrum(small)
        py.append((time.perf_counter() - t0) / calls)
        c.append(_core._c_loop_seconds(small, calls))
    return py, c

if __name__ == "__main__":
    main()
