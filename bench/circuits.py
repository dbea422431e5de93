#!/usr/bin/python3
"""Circuits at GPT-2-small shapes (d 768, 12 x 12 heads of 64, V 50257):
attnrank's factored routes against the numpy routes a user would write
(docs/performance.md, "Circuits"; docs/theory/circuits.md).

  ov           per-head OV copying scores of all 144 heads:
               attnrank.copying_scores against numpy forming W_O W_V
               (768 x 768), then eigvals, svd and eigvalsh;
  composition  all q, k, v composition scores between heads of earlier and
               later layers (28512 pairs) of a float32 GPT-2-layout
               checkpoint: attnrank.circuits against numpy's dense
               768 x 768 products ||M_2 M_1||_F;
  full         full OV circuits W_U W_O W_V W_E^T of all 144 heads, tied
               embeddings: attnrank.full_copying_scores against the route of
               TransformerLens's FactoredMatrix in numpy (per head
               A = W_U W_O, B = W_V W_E^T, V x 64 each; eigvals(B A); QRs of
               A and B^T, SVD of the 64 x 64 core).  The dense V x V product
               (20 GB per head in float64) is not a route anyone can run.

Each route runs in its own process (peak memory = its ru_maxrss).  The numpy
routes run on a sample of heads or pairs and are scaled to the full count
(their cost per head is constant); attnrank's run on everything.  Weights
are Gaussian (sigma 0.02), seed 0.  Run from a build tree:
  PYTHONPATH=build/python /usr/bin/python3 -P bench/circuits.py [--quick] [--repeats N]
      [--routes ov,composition,full]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

D, H, L, DH, V = 768, 12, 12, 64, 50257


def heads(rng, n):
    return [(rng.standard_normal((DH, D)) * 0.02, rng.standard_normal((D, DH)) * 0.02)
            for _ in range(n)]


def route_ov(engine, sample):
    import attnrank
    hs = heads(np.random.default_rng(0), H * L)
    t = time.perf_counter()
    if engine == "attnrank":
        for v, o in hs:
            attnrank.copying_scores(v, o)
        return time.perf_counter() - t, H * L
    for v, o in hs[:sample]:
        m = o @ v
        lam = np.linalg.eigvals(m)
        lam = lam[np.abs(lam) > 1e-9 * np.abs(lam).max()]
        _ = lam.real.sum() / np.abs(lam).sum()
        _ = np.trace(m) / np.linalg.svd(m, compute_uv=False).sum()
        _ = np.trace(m) / np.abs(np.linalg.eigvalsh((m + m.T) / 2)).sum()
    return time.perf_counter() - t, sample


def route_composition(engine, sample, model):
    import attnrank
    if engine == "attnrank":
        t = time.perf_counter()
        r = attnrank.circuits(model, ov=False, composition="q,k,v")
        return time.perf_counter() - t, len(r.composition["pairs"])
    rng = np.random.default_rng(1)
    # the dense circuits of the heads of a sample of pairs, formed per pair
    t = time.perf_counter()
    for _ in range(sample):
        v1, o1 = heads(rng, 1)[0]
        q2, k2 = heads(rng, 1)[0][0], heads(rng, 1)[0][0]
        m1, m2 = o1 @ v1, q2.T @ k2
        _ = np.linalg.norm(m2 @ m1) / (np.linalg.norm(m2) * np.linalg.norm(m1))
    return time.perf_counter() - t, sample


def route_full(engine, sample, vocab):
    import attnrank
    rng = np.random.default_rng(2)
    we = rng.standard_normal((vocab, D))
    we *= 0.02  # in place: a temporary V x d copy would set both routes' peak
    hs = heads(rng, H * L)
    t = time.perf_counter()
    if engine == "attnrank":
        attnrank.full_copying_scores(hs, we)
        return time.perf_counter() - t, H * L
    for v, o in hs[:sample]:
        a, b = we @ o, v @ we.T  # FactoredMatrix(W_U W_O, W_V W_E^T), tied W_U = W_E
        lam = np.linalg.eigvals(b @ a)
        lam = lam[np.abs(lam) > 1e-9 * np.abs(lam).max()]
        _ = lam.real.sum() / np.abs(lam).sum()
        ra, rb = np.linalg.qr(a, mode="r"), np.linalg.qr(b.T, mode="r")
        _ = np.trace(b @ a) / np.linalg.svd(ra @ rb.T, compute_uv=False).sum()
    return time.perf_counter() - t, sample


def child(args):
    if args.only == "ov":
        sec, count = route_ov(args.engine, args.sample)
        total = H * L
    elif args.only == "composition":
        sec, count = route_composition(args.engine, args.sample, args.model)
        total = 3 * H * H * L * (L - 1) // 2
    else:
        sec, count = route_full(args.engine, args.sample, args.vocab)
        total = H * L
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"route": args.only, "engine": args.engine, "seconds": sec, "count": count,
                      "scaled_seconds": sec * total / count, "peak_mib": rss}))


def make_model(path):
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools",
                       "make_safetensors.py")
    subprocess.run([sys.executable, gen, path, "--family", "gpt2", "--layers", str(L), "--heads",
                    str(H), "--d", str(D), "--dtype", "F32"], check=True, capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="V 5000 and smaller samples")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--routes", default="ov,composition,full",
                    help="the routes run (comma-separated), each interleaved with numpy's")
    ap.add_argument("--only", choices=["ov", "composition", "full"])
    ap.add_argument("--engine", choices=["attnrank", "numpy"])
    ap.add_argument("--sample", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=V)
    ap.add_argument("--model")
    args = ap.parse_args()
    if args.only:
        return child(args)
    vocab = 5000 if args.quick else V
    tmp = tempfile.mkdtemp()
    model = os.path.join(tmp, "gpt2")
    routes = [r for r in ("ov", "composition", "full") if r in args.routes.split(",")]
    if "composition" in routes:
        make_model(model)
    samples = {"ov": 4 if args.quick else 8, "composition": 20 if args.quick else 60,
               "full": 2 if args.quick else 6}
    results = []
    for _ in range(args.repeats):  # interleaved: the machine is shared
        for route in routes:
            for engine in ("attnrank", "numpy"):
                cmd = [sys.executable, "-P", __file__, "--only", route, "--engine", engine,
                       "--sample", str(samples[route]), "--vocab", str(vocab), "--model", model]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                                     env=os.environ)
                results.append(json.loads(out.stdout))
                print(out.stdout.strip(), flush=True)
    for route in routes:
        ours = sorted(r["scaled_seconds"] for r in results
                      if r["route"] == route and r["engine"] == "attnrank")
        theirs = sorted(r["scaled_seconds"] for r in results
                        if r["route"] == route and r["engine"] == "numpy")
        a, b = ours[len(ours) // 2], theirs[len(theirs) // 2]
        print(f"{route:12s} attnrank {a:9.2f} s   numpy {b:9.2f} s   ratio {b / a:7.1f}")


if __name__ == "__main__":
    main()
