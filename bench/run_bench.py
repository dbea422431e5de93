"""Run attnrank's benchmarks and write the ratio table (docs/performance.md).

    /usr/bin/python3 bench/run_bench.py --build BUILD [--quick | --full]
        [--out FILE.md] [--figures DIR] [--data DIR] [--command TEXT]

Every target of issue 7 is a ratio measured inside one run on the same data:
the C programs interleave library and reference inside one process, the
numpy comparisons interleave whole processes, and medians are reported.  BLAS
threads are set explicitly in every run (OPENBLAS_NUM_THREADS and, in the C
programs, openblas_set_num_threads); OPENBLAS_CORETYPE is left as the
environment sets it except in the one efficiency variant that unsets it.
"""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"

# The python one-liner of the whole-process comparison: the same spectrum,
# rank and rank metrics attnrank spectrum prints, from the same file.
ONE_LINER = (
    "import sys,numpy as np;a=np.load(sys.argv[1]);a=a.reshape((-1,)+a.shape[-2:]);"
    "s=np.linalg.svd(a,compute_uv=False);q=s*s;f=q.sum(1);p=s/s.sum(1,keepdims=True);"
    "np.savetxt(sys.stdout,np.column_stack([(s>max(a.shape[1:])*np.finfo(float).eps*s[:,:1])"
    ".sum(1),f/q[:,0],np.exp(-(p*np.log(np.where(p>0,p,1))).sum(1)),f*f/(q*q).sum(1),"
    "(np.cumsum(q,1)<0.99*f[:,None]).sum(1)+1,s.sum(1)**2/f]),fmt='%.6g')"
)

# svd: (job, BLAS threads, sizes) run by bench_svd, library and LAPACKE
# interleaved in one process.  One BLAS thread gives steady CPU times on a
# shared machine (the ratios the targets use); two threads is what a user on
# this 2-core machine runs (wall times, the figure).
QUICK = dict(
    svd=[("values", 1, [256, 512, 1024]), ("full", 1, [256, 512]),
         ("values", 2, [256, 512, 1024])],
    numpy=[256, 512, 1024], whole=[512], reps=5, numpy_rounds=5, stack=(2000, 64),
    stack_small=(200, 64), batch_reps=3, whole_stack_rounds=3, factored_n=1024,
    factored_reps=3, represent_n=512, represent_reps=3, rank=[1024], rank_reps=1,
    eff_n=1024, eff_rounds=3, gemm_n=2048, memory_n=1024, dw_modes=[], profile_n=0,
    masked=[256, 1024], masked_reps=3, fit=[(512, 1)], fit_reps=1)
FULL = dict(
    svd=[("values", 1, [256, 512, 1024, 2048]), ("full", 1, [256, 512, 1024, 2048]),
         ("values", 2, [256, 512, 1024, 2048, 4096]), ("full", 2, [4096])],
    numpy=[256, 512, 1024, 2048, 4096], whole=[1024, 2048], reps=5, numpy_rounds=5,
    stack=(10000, 64), stack_small=(1000, 64), batch_reps=5, whole_stack_rounds=5,
    factored_n=4096, factored_reps=5, represent_n=1024, represent_reps=5, rank=[2048, 4096],
    rank_reps=1, eff_n=4096, eff_rounds=3, gemm_n=4096, memory_n=4096,
    dw_modes=["--quick"], profile_n=2048, masked=[256, 1024, 4096], masked_reps=5,
    fit=[(1024, 1), (1024, 2), (512, 1)], fit_reps=3)


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def env_with(threads, unset_coretype=False, **extra):
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    if unset_coretype:
        env.pop("OPENBLAS_CORETYPE", None)
    env.update(extra)
    return env


def run_json(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return json.loads(out.stdout)


def wall(cmd, env, cpu=None):
    """Wall time of a whole process; its CPU time (user + sys) into cpu."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return t


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


class Bench:
    def __init__(self, args, cfg):
        self.args = args
        self.cfg = cfg
        self.bin = os.path.join(args.build, "bench")
        self.cli = os.path.join(args.build, "attnrank")
        self.data = args.data
        self.res = {"loadavg": [loadavg()]}

    def b(self, name):
        return os.path.join(self.bin, name)

    def npy(self, n):
        return os.path.join(self.data, "gauss_%d.npy" % n)

    def stack(self, count, n):
        return os.path.join(self.data, "stack_%d_%d.npy" % (count, n))

    # -- inputs ------------------------------------------------------------
    def make_data(self):
        c = self.cfg
        sizes = sorted(set(c["numpy"]) | set(c["whole"]))
        cmd = [PY, os.path.join(HERE, "make_data.py"), self.data, "--sizes"] + \
            [str(n) for n in sizes]
        for count, n in (c["stack"], c["stack_small"]):
            cmd += ["--stack", str(count), str(n)]
        subprocess.run(cmd, check=True)

    # -- 1: library vs LAPACKE in one process -------------------------------
    def svd_vs_lapacke(self):
        rows = []
        for job, threads, sizes in self.cfg["svd"]:
            for n in sizes:
                log("1: %s n=%d, %d BLAS thread(s) (library vs LAPACKE, one process)"
                    % (job, n, threads))
                # Small sizes are cheap and noisier: more repetitions.
                reps = self.cfg["reps"] * (3 if n <= 512 else 1)
                r = run_json([self.b("bench_svd"), str(n), "--job", job, "--reps",
                              str(reps), "--threads", str(threads), "--json"],
                             env_with(threads))
                if threads == 2:
                    self.res["environment"] = r["environment"]
                rows += r["results"]
        self.res["svd"] = rows

    def confirm(self):
        """Re-measure, with four times the repetitions, every size whose CPU
        ratio exceeded 1.05; both measurements are reported."""
        rows = []
        for r in self.res["svd"]:
            if r["cpu_ratio"] > 1.05:
                threads, n = r["threads"], r["n"]
                log("confirm: %s n=%d, %d thread(s), 4x repetitions" % (r["job"], n, threads))
                reps = 4 * self.cfg["reps"] * (3 if n <= 512 else 1)
                out = run_json([self.b("bench_svd"), str(n), "--job", r["job"], "--reps",
                                str(reps), "--threads", str(threads), "--json"],
                               env_with(threads))
                rows += out["results"]
        self.res["svd_confirm"] = rows
        np_rows = []
        for r in self.res.get("numpy", []):
            for key in ("svd", "rank"):
                c, p = r.get("c_%s_cpu" % key), r.get("np_%s_cpu" % key)
                if c == c and p == p and p and c / p > 1.05:
                    log("confirm: numpy %s n=%d, 10 more rounds" % (key, r["n"]))
                    tc, tp = [], []
                    for _ in range(10):
                        cmd = [self.b("bench_svd"), "--from", self.npy(r["n"]), "--only",
                               "attnrank", "--reps", "1", "--threads", str(r["threads"]),
                               "--json"] + (["--rank"] if key == "rank" else [])
                        tc += run_json(cmd, env_with(r["threads"]))["results"][0][
                            "attnrank_cpu_all"]
                        tp += run_json([PY, os.path.join(HERE, "numpy_svd.py"), self.npy(r["n"]),
                                        "--what", key], env_with(r["threads"]))["cpu"]
                    np_rows.append(dict(n=r["n"], what=key, threads=r["threads"], c_cpu=med(tc),
                                        np_cpu=med(tp), samples=len(tc)))
        self.res["numpy_confirm"] = np_rows

    # -- 2: library vs numpy, interleaved processes -------------------------
    def svd_vs_numpy(self):
        rows = []
        for n in self.cfg["numpy"]:
            inner = 3 if n <= 1024 else 1
            # One BLAS thread (steady CPU times) up to 2048; both cores at 4096,
            # where the values-only run is long and only `svd` is compared.
            threads = 1 if n <= 2048 else 2
            kinds = (False, True) if n <= 2048 else (False,)
            t = {k: [] for k in ("c_svd", "np_svd", "c_rank", "np_rank", "c_svd_cpu",
                                 "np_svd_cpu", "c_rank_cpu", "np_rank_cpu")}
            log("2: n=%d attnrank vs numpy (%d interleaved rounds, %d BLAS thread(s))"
                % (n, self.cfg["numpy_rounds"], threads))
            for _ in range(self.cfg["numpy_rounds"]):
                for rank in kinds:
                    key = "rank" if rank else "svd"
                    cmd = [self.b("bench_svd"), "--from", self.npy(n), "--only", "attnrank",
                           "--reps", str(inner), "--threads", str(threads), "--json"]
                    r = run_json(cmd + (["--rank"] if rank else []), env_with(threads))
                    t["c_" + key] += r["results"][0]["attnrank_all"]
                    t["c_%s_cpu" % key] += r["results"][0]["attnrank_cpu_all"]
                    p = run_json([PY, os.path.join(HERE, "numpy_svd.py"), self.npy(n), "--what",
                                  key, "--reps", str(inner)], env_with(threads))
                    t["np_" + key] += p["times"]
                    t["np_%s_cpu" % key] += p["cpu"]
                    self.res["numpy_info"] = {"numpy": p["numpy"], "blas": p["blas"]}
            rows.append(dict(n=n, threads=threads, **{k: med(v) for k, v in t.items()},
                             samples=len(t["c_svd"])))
        self.res["numpy"] = rows
        whole = []
        for n in self.cfg["whole"]:
            log("2: n=%d whole process: attnrank spectrum vs python one-liner" % n)
            ta, tp, ca, cp = [], [], [], []
            for _ in range(self.cfg["numpy_rounds"]):
                ta.append(wall([self.cli, "spectrum", self.npy(n)], env_with(1), ca))
                tp.append(wall([PY, "-c", ONE_LINER, self.npy(n)], env_with(1), cp))
            whole.append(dict(n=n, attnrank=med(ta), python=med(tp), attnrank_cpu=med(ca),
                              python_cpu=med(cp)))
        self.res["whole"] = whole

    # -- 3: batched small matrices --------------------------------------------
    def batch(self):
        count, n = self.cfg["stack"]
        path = self.stack(count, n)
        log("3: %d matrices n=%d in process (library 2 threads, 1 thread, C loop)" % (count, n))
        self.res["batch"] = run_json([self.b("bench_batch"), "--from", path, "--threads", "2",
                                      "--reps", str(self.cfg["batch_reps"]), "--json"],
                                     env_with(1))
        log("3: numpy stacked svd in process (BLAS 1 and 2 threads), interleaved")
        np1, np2, cpu1, cpu2, loads = [], [], [], [], []
        for _ in range(self.cfg["batch_reps"]):
            for threads, dst, cdst in ((1, np1, cpu1), (2, np2, cpu2)):
                r = run_json([PY, os.path.join(HERE, "numpy_svd.py"), path, "--what", "stack"],
                             env_with(threads))
                dst += r["times"]
                cdst += r["cpu"]
                loads.append(r["load_s"])
        self.res["batch_numpy"] = dict(threads1=med(np1), threads2=med(np2), cpu1=med(cpu1),
                                       cpu2=med(cpu2), load_s=med(loads))
        log("3: whole process: attnrank spectrum STACK vs python one-liner (%d rounds)"
            % self.cfg["whole_stack_rounds"])
        ta, tp1, tp2, ca, cp1, cp2 = [], [], [], [], [], []
        for _ in range(self.cfg["whole_stack_rounds"]):
            ta.append(wall([self.cli, "spectrum", path, "--threads", "2"], env_with(2), ca))
            tp1.append(wall([PY, "-c", ONE_LINER, path], env_with(1), cp1))
            tp2.append(wall([PY, "-c", ONE_LINER, path], env_with(2), cp2))
        self.res["batch_whole"] = dict(attnrank=med(ta), python1=med(tp1), python2=med(tp2),
                                       attnrank_cpu=med(ca), python1_cpu=med(cp1),
                                       python2_cpu=med(cp2), rounds=len(ta))

    # -- 4: factored logits ------------------------------------------------------
    def factored(self):
        n = self.cfg["factored_n"]
        log("4: factored vs dense logit spectrum, n=%d d_p=64" % n)
        self.res["factored"] = run_json(
            [self.b("bench_factored"), "--n", str(n), "--head-size", "64", "--d", "512",
             "--reps", str(self.cfg["factored_reps"]), "--threads", "2", "--json"], env_with(2))

    # -- 5: representability ---------------------------------------------------
    def represent(self):
        exe = self.b("bench_represent")
        if not os.path.exists(exe):
            self.res["represent"] = None
            return
        n = self.cfg["represent_n"]
        log("5: representability n=%d vs one thin SVD" % n)
        self.res["represent"] = run_json([exe, "--n", str(n), "--reps",
                                          str(self.cfg["represent_reps"]), "--threads", "2",
                                          "--json"], env_with(2))

    # -- 6: exact rank -------------------------------------------------------------
    def exact_rank(self):
        sizes = [str(n) for n in self.cfg["rank"]]
        log("6: FLINT nmod_mat_rank n=%s" % ",".join(sizes))
        self.res["rank"] = run_json([self.b("bench_rank")] + sizes + [
            "--threads", "2", "--reps", str(self.cfg["rank_reps"]), "--json"], env_with(1))
        dw = os.path.join(self.args.build, "experiments", "depth_width_transition")
        self.res["depth_width"] = {}
        if not os.path.exists(dw):
            return
        modes = list(self.cfg["dw_modes"])
        if self.args.full and os.environ.get("AR_BENCH_DW_FULL") == "1":
            modes.append("--full")  # long: see docs/performance.md
        for mode in modes:
            log("6: depth_width_transition %s (whole experiment)" % mode)
            out = os.path.join(self.data, "dw" + mode.strip("-"))
            self.res["depth_width"][mode] = wall(
                [dw, mode, "--out", out, "--figures", "none"], env_with(1))

    # -- 7: efficiency -----------------------------------------------------------------
    def efficiency(self):
        n = self.cfg["eff_n"]
        log("7: DGEMM/DGEMV rates (n=%d) and values-only SVD variants" % self.cfg["gemm_n"])
        gemv_sizes = ["--gemv-n", str(n), "--gemv-n", "1024", "--gemv-n", "256"]
        self.res["gemm"] = run_json([self.b("bench_gemm"), "--n", str(self.cfg["gemm_n"]),
                                     "--threads", "2", "--reps", "3", "--json"] + gemv_sizes,
                                    env_with(2))
        self.res["gemm1"] = run_json([self.b("bench_gemm"), "--n", str(self.cfg["gemm_n"]),
                                      "--threads", "1", "--reps", "3", "--json", "--gemv-n",
                                      str(n)], env_with(1))
        base = [self.b("bench_svd"), str(n), "--reps", "1", "--json"]
        variants = [
            ("attnrank gesdd, 2 threads", base + ["--only", "attnrank", "--threads", "2"],
             env_with(2)),
            ("attnrank gesdd, 1 thread", base + ["--only", "attnrank", "--threads", "1"],
             env_with(1)),
            ("attnrank gesdd, 2 threads, OPENBLAS_CORETYPE unset",
             base + ["--only", "attnrank", "--threads", "2"], env_with(2, unset_coretype=True)),
            ("LAPACKE gesvd, 2 threads",
             base + ["--only", "lapacke", "--routine", "gesvd", "--threads", "2"], env_with(2)),
        ]
        times = {name: [] for name, _, _ in variants}
        cpus = {name: [] for name, _, _ in variants}
        cores = {}
        for rnd in range(self.cfg["eff_rounds"]):
            log("7: variants round %d/%d at n=%d" % (rnd + 1, self.cfg["eff_rounds"], n))
            for name, cmd, env in variants:
                r = run_json(cmd, env)
                res = r["results"][0]
                side = "attnrank" if "attnrank" in name else "lapacke"
                times[name].append(res[side + "_s"])
                cpus[name].append(res[side + "_cpu_s"])
                cores[name] = r["environment"]["openblas_core"]
        self.res["efficiency"] = dict(n=n, variants=[
            dict(name=k, seconds=med(v), cpu=med(cpus[k]), core=cores[k])
            for k, v in times.items()])
        if self.cfg["profile_n"] and shutil.which("perf"):
            self.res["profile"] = self.profile(self.cfg["profile_n"])

    def profile(self, n):
        log("7: perf profile of the values-only SVD, n=%d" % n)
        data = os.path.join(self.data, "perf.data")
        try:
            # One BLAS thread: no spinning workers hiding the kernels.
            subprocess.run(["perf", "record", "-q", "-o", data, self.b("bench_svd"), str(n),
                            "--only", "attnrank", "--reps", "1", "--threads", "1"],
                           env=env_with(1), check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort",
                                  "dso,symbol", "-g", "none", "--stdio"], check=True, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        except (subprocess.CalledProcessError, OSError):
            return None
        lines = [ln.strip() for ln in rep.splitlines() if ln.strip() and not ln.startswith("#")]
        return dict(n=n, top=lines[:12])

    # -- 8: memory ---------------------------------------------------------------------
    def memory(self):
        n = self.cfg["memory_n"]
        log("8: peak RSS of a thin SVD n=%d (child processes)" % n)
        self.res["memory"] = run_json([self.b("bench_memory"), "--n", str(n), "--threads", "2",
                                       "--json"], env_with(2))
        so = os.path.join(self.bin, "libmalloc_count.so")
        count, n64 = self.cfg["stack_small"]
        log("8: allocation calls of batched loops (LD_PRELOAD counter)")
        self.res["alloc"] = run_json([self.b("bench_batch"), "--from", self.stack(count, n64),
                                      "--reps", "1", "--threads", "2", "--json"],
                                     env_with(1, LD_PRELOAD=so))
        cli = {}
        for cnt, path in ((count, self.stack(count, n64)),
                          (self.cfg["stack"][0], self.stack(*self.cfg["stack"]))):
            out = subprocess.run([self.cli, "spectrum", path, "--threads", "2"],
                                 env=env_with(2, LD_PRELOAD=so, MALLOC_COUNT_REPORT="1"),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for line in out.stderr.splitlines():
                if line.startswith("malloc_count:"):
                    cli[cnt] = int(line.split()[1])
        self.res["alloc_cli"] = cli

    # -- 9: exact causal masked analysis ----------------------------------------------
    def masked(self):
        exe = self.b("bench_masked")
        if not os.path.exists(exe):
            self.res["masked"] = None
            return
        sizes = [str(n) for n in self.cfg["masked"]]
        log("9: causal masked analysis + certificate vs one thin SVD, n=%s; reference greedy "
            "(1 BLAS thread)" % ",".join(sizes))
        # One BLAS thread: the greedy is BLAS2 and CPU times stay steady.  n >= 4096 runs
        # once (bench_masked --reps-large 1), the reference greedy is skipped where its
        # predicted time exceeds 60 s.
        self.res["masked"] = run_json([exe] + sizes + [
            "--reps", str(self.cfg["masked_reps"]), "--threads", "1", "--ref-budget", "60",
            "--json"], env_with(1))

    # -- 10: probability-space fit below the minimal head size ---------------------
    def fit(self):
        exe = self.b("bench_fit")
        if not os.path.exists(exe):
            self.res["fit"] = None
            return
        rows = []
        for n, threads in self.cfg["fit"]:
            log("10: probability-space fit (L-BFGS; GSL's vector_bfgs2 once) vs one thin SVD, "
                "n=%d, k=64, %d BLAS thread(s)" % (n, threads))
            out = run_json([exe, str(n), "--reps", str(self.cfg["fit_reps"]), "--threads",
                            str(threads), "--json"], env_with(threads))
            self.res.setdefault("fit_environment", out["environment"])
            rows += out["results"]
        self.res["fit"] = rows

    def run_all(self):
        t0 = time.time()
        self.make_data()
        for step in (self.svd_vs_lapacke, self.svd_vs_numpy, self.confirm, self.batch,
                     self.factored,
                     self.represent, self.exact_rank, self.efficiency, self.memory, self.masked,
                     self.fit):
            step()
            self.res["loadavg"].append(loadavg())
            self.res["runtime_s"] = time.time() - t0
            self.checkpoint()
        return self.res

    def checkpoint(self):
        """Raw results so far, so an interrupted run keeps what it measured."""
        if self.args.json:
            with open(self.args.json + ".tmp", "w") as fh:
                json.dump(self.res, fh, indent=1)
            os.replace(self.args.json + ".tmp", self.args.json)


# ---------------------------------------------------------------------------
# Report


def machine():
    info = {"model": "?", "cores": os.cpu_count()}
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() == "Model name":
                info["model"] = val.strip()
            if key.strip() == "CPU(s)":
                info["cores"] = int(val.strip())
    except OSError:
        pass
    info["kernel"] = platform.release()
    try:
        with open("/proc/meminfo") as f:
            info["mem_gb"] = int(f.readline().split()[1]) / 1e6
    except OSError:
        info["mem_gb"] = float("nan")
    return info


def verdict(ok, text):
    return ("met" if ok else "**missed**") + (": " + text if text else "")


def fmt_s(x):
    return "%.3g" % x if x == x else "n/a"


def report(res, cfg, command, mode):
    m = machine()
    env = res.get("environment", {})
    L = []
    A = L.append
    A("# Performance of attnrank")
    A("")
    A("Generated by `%s` (%s mode) in %.0f s of wall time; the full run takes about "
      "that long on this machine, the quick run under two minutes." % (command, mode,
                                                                      res["runtime_s"]))
    A("All numbers are medians of interleaved repetitions measured inside one run "
      "(ratios attnrank / reference: below 1 means attnrank is faster, except where a "
      "speed-up is stated). Nothing here is a timed test.")
    A("")
    A("## Machine and libraries")
    A("")
    A("| | |")
    A("|---|---|")
    A("| CPU (`lscpu`) | %s, %d cores, %.0f GB RAM, Linux %s |" % (
        m["model"], m["cores"], m["mem_gb"], m["kernel"]))
    A("| BLAS loaded at run time (dladdr of `cblas_dgemm`) | `%s` |" % env.get("cblas_dgemm"))
    A("| LAPACK loaded at run time (dladdr of `dgesdd_`) | `%s` |" % env.get("dgesdd"))
    A("| OpenBLAS build | %s; kernel core `%s` |" % (env.get("openblas_config"),
                                                    env.get("openblas_core")))
    A("| OPENBLAS_CORETYPE | `%s` (left as the environment sets it; unset only in the one "
      "variant of target 7 that says so) |" % (env.get("openblas_coretype_env") or "(unset)"))
    A("| BLAS threads | set explicitly in every run: 2 for single matrices (both cores), 1 inside "
      "each SVD of a stack (parallel over matrices); numpy runs with OPENBLAS_NUM_THREADS as "
      "stated per row |")
    ni = res.get("numpy_info", {})
    A("| numpy | %s, BLAS/LAPACK mapped in its process: %s |" % (
        ni.get("numpy"), ", ".join("`%s`" % b for b in ni.get("blas", []))))
    A("| load average (1 min) during the run | %s |" % ", ".join(
        "%.1f" % x for x in res["loadavg"]))
    A("")
    A("The machine is shared with other developers' builds (load average above the core count "
      "most of the time), so absolute times vary by 25% or more between runs; ratios of "
      "interleaved runs are much steadier, and those are the targets.")
    A("")
    status = []

    # 1
    A("## 1. Library vs direct LAPACKE (same data, same process)")
    A("")
    A("`bench_svd N --job values|full --threads T`: each repetition runs a hand-written "
      "LAPACKE call (copy of A, `LAPACKE_dgesdd`) then `ar_spectrum_svals` / "
      "`ar_spectrum_svd` on the same Gaussian matrix; %d repetitions (three times as many for "
      "n <= 512); wall and CPU time "
      "(CLOCK_PROCESS_CPUTIME_ID) of each call. The verdict uses the CPU-time ratio: with "
      "one BLAS thread it does not count the time other processes held the cores." % cfg["reps"])
    A("")
    A("| n | job | BLAS threads | attnrank wall (s) | LAPACKE wall (s) | wall ratio | "
      "attnrank CPU (s) | LAPACKE CPU (s) | **CPU ratio** | max diff / sigma_1 |")
    A("|---|---|---|---|---|---|---|---|---|---|")
    worst = {"values": 0.0, "full": 0.0}
    for r in res["svd"]:
        A("| %d | %s | %d | %s | %s | %.3f | %s | %s | **%.3f** | %.1e |" % (
            r["n"], r["job"], r["threads"], fmt_s(r["attnrank_s"]), fmt_s(r["lapacke_s"]),
            r["ratio"], fmt_s(r["attnrank_cpu_s"]), fmt_s(r["lapacke_cpu_s"]), r["cpu_ratio"],
            r["max_rel_diff"]))
        worst[r["job"]] = max(worst[r["job"]], r["cpu_ratio"])
    A("")
    conf = res.get("svd_confirm", [])
    if conf:
        A("Re-measured with four times the repetitions (every row above whose CPU ratio "
          "exceeded 1.05); the verdict uses these rows in place of the first measurement:")
        A("")
        A("| n | job | BLAS threads | repetitions | wall ratio | **CPU ratio** |")
        A("|---|---|---|---|---|---|")
        for r in conf:
            A("| %d | %s | %d | %d | %.3f | **%.3f** |" % (
                r["n"], r["job"], r["threads"], len(r["attnrank_all"]), r["ratio"],
                r["cpu_ratio"]))
        A("")
        worst = {"values": 0.0, "full": 0.0}
        redone = {(r["n"], r["job"], r["threads"]): r for r in conf}
        for r in res["svd"]:
            r2 = redone.get((r["n"], r["job"], r["threads"]), r)
            worst[r["job"]] = max(worst[r["job"]], r2["cpu_ratio"])
    for job in ("values", "full"):
        status.append(("1. %s, library / LAPACKE <= 1.05" % job,
                       verdict(worst[job] <= 1.05, "worst CPU-time ratio %.3f" % worst[job])))

    # 2
    A("## 2. Library vs numpy (same .npy file, timed inside each process)")
    A("")
    A("Rounds of four processes (attnrank values, numpy `svd(compute_uv=False)`, attnrank "
      "values + rank, numpy `matrix_rank`), %d rounds, the same BLAS thread count on both sides "
      "(per row); "
      "a 64 x 64 warm-up SVD in every process. Times are taken inside each process around the "
      "call (wall, and CPU time: `CLOCK_PROCESS_CPUTIME_ID` / `time.process_time`); the "
      "verdict uses the CPU-time ratio." % cfg["numpy_rounds"])
    A("")
    A("| n | BLAS threads | attnrank svals wall / CPU (s) | numpy svd wall / CPU (s) | "
      "wall ratio | **CPU ratio** | attnrank rank wall / CPU (s) | numpy matrix_rank wall / "
      "CPU (s) | wall ratio | **CPU ratio** |")
    A("|---|---|---|---|---|---|---|---|---|---|")
    worst_np = 0.0

    def ratio(a, b):
        return a / b if b == b and b > 0 else float("nan")
    for r in res["numpy"]:
        c1, c2 = ratio(r["c_svd_cpu"], r["np_svd_cpu"]), ratio(r["c_rank_cpu"], r["np_rank_cpu"])
        worst_np = max([worst_np] + [x for x in (c1, c2) if x == x])
        A("| %d | %d | %s / %s | %s / %s | %.3f | **%.3f** | %s / %s | %s / %s | %.3f | **%.3f** |"
          % (r["n"], r["threads"], fmt_s(r["c_svd"]), fmt_s(r["c_svd_cpu"]), fmt_s(r["np_svd"]),
             fmt_s(r["np_svd_cpu"]), ratio(r["c_svd"], r["np_svd"]), c1, fmt_s(r["c_rank"]),
             fmt_s(r["c_rank_cpu"]), fmt_s(r["np_rank"]), fmt_s(r["np_rank_cpu"]),
             ratio(r["c_rank"], r["np_rank"]), c2))
    A("")
    nconf = res.get("numpy_confirm", [])
    if nconf:
        A("Re-measured with 10 more interleaved rounds (rows whose CPU ratio exceeded 1.05); "
          "the verdict uses these in place of the first measurement:")
        A("")
        A("| n | call | BLAS threads | samples | attnrank CPU (s) | numpy CPU (s) | **CPU ratio** |")
        A("|---|---|---|---|---|---|---|")
        first = {}
        for r in res["numpy"]:
            for key in ("svd", "rank"):
                c, p = r["c_%s_cpu" % key], r["np_%s_cpu" % key]
                if c == c and p == p and p:
                    first[(r["n"], key)] = c / p
        for r in nconf:
            A("| %d | %s | %d | %d | %s | %s | **%.3f** |" % (
                r["n"], r["what"], r["threads"], r["samples"], fmt_s(r["c_cpu"]),
                fmt_s(r["np_cpu"]), r["c_cpu"] / r["np_cpu"]))
            first[(r["n"], r["what"])] = r["c_cpu"] / r["np_cpu"]
        A("")
        worst_np = max(first.values())
    status.append(("2. attnrank / numpy <= 1.05 (medians)",
                   verdict(worst_np <= 1.05, "worst CPU-time ratio %.3f" % worst_np)))
    A("Whole process, wall clock from the driver: `attnrank spectrum FILE.npy` (spectrum, rank "
      "and all rank metrics, text output) against `python3 -c '<load; svd; the same metrics; "
      "print>' FILE.npy` (the one-liner is `ONE_LINER` in bench/run_bench.py):")
    A("")
    A("| n | BLAS threads | attnrank spectrum wall / CPU (s) | python one-liner wall / CPU (s) "
      "| wall ratio | CPU ratio |")
    A("|---|---|---|---|---|---|")
    for r in res["whole"]:
        A("| %d | 1 | %s / %s | %s / %s | %.3f | %.3f |" % (
            r["n"], fmt_s(r["attnrank"]), fmt_s(r["attnrank_cpu"]), fmt_s(r["python"]),
            fmt_s(r["python_cpu"]), r["attnrank"] / r["python"],
            r["attnrank_cpu"] / r["python_cpu"]))
    A("")
    status.append(("2. whole process attnrank spectrum vs python (report)", "reported: " +
                   ", ".join("n=%d ratio %.2f" % (r["n"], r["attnrank"] / r["python"])
                             for r in res["whole"])))

    # 3
    b = res["batch"]
    bn, bw = res["batch_numpy"], res["batch_whole"]
    A("## 3. Batched spectra: %d attention score matrices, n = %d" % (b["count"], b["n"]))
    A("")
    A("The stack is one C-order .npy (column softmax of N(0, 4) logits). In process: "
      "`ar_spectrum_svals_batch` + every rank metric (BLAS 1 thread per SVD), numpy "
      "`svd(stack, compute_uv=False)` + the same metrics vectorised.")
    A("")
    A("| path | wall (s) | CPU (s) | wall speed-up of attnrank (2 threads) |")
    A("|---|---|---|---|")
    A("| attnrank library, 2 threads | %s | %s | 1 |" % (fmt_s(b["library_s"]),
                                                        fmt_s(b["library_cpu_s"])))
    A("| attnrank library, 1 thread | %s | %s | %.2f |" % (
        fmt_s(b["library_1thread_s"]), fmt_s(b["library_1thread_cpu_s"]),
        b["library_1thread_s"] / b["library_s"]))
    A("| plain C loop of LAPACKE_dgesdd_work, 1 thread, spectra only | %s | %s | %.2f |" % (
        fmt_s(b["plain_loop_1thread_s"]), fmt_s(b["plain_loop_1thread_cpu_s"]),
        b["plain_loop_1thread_s"] / b["library_s"]))
    A("| numpy stacked svd, OPENBLAS_NUM_THREADS=1 | %s | %s | %.2f |" % (
        fmt_s(bn["threads1"]), fmt_s(bn["cpu1"]), bn["threads1"] / b["library_s"]))
    A("| numpy stacked svd, OPENBLAS_NUM_THREADS=2 | %s | %s | %.2f |" % (
        fmt_s(bn["threads2"]), fmt_s(bn["cpu2"]), bn["threads2"] / b["library_s"]))
    A("")
    A("User-facing path, whole processes (%d interleaved rounds): `attnrank spectrum stack.npy "
      "--threads 2` vs the python one-liner on the same file." % bw["rounds"])
    A("")
    A("| process | wall (s) | CPU (s) | wall speed-up of attnrank |")
    A("|---|---|---|---|")
    A("| attnrank spectrum, 2 threads | %s | %s | 1 |" % (fmt_s(bw["attnrank"]),
                                                        fmt_s(bw["attnrank_cpu"])))
    A("| python one-liner, OPENBLAS_NUM_THREADS=1 | %s | %s | %.2f |" % (
        fmt_s(bw["python1"]), fmt_s(bw["python1_cpu"]), bw["python1"] / bw["attnrank"]))
    A("| python one-liner, OPENBLAS_NUM_THREADS=2 | %s | %s | %.2f |" % (
        fmt_s(bw["python2"]), fmt_s(bw["python2_cpu"]), bw["python2"] / bw["attnrank"]))
    A("")
    A("Reading the stack (first read in its process, huge pages asked for; the kernel may "
      "compact memory to provide them): attnrank's `ar_npy_read` %.3g s (read and "
      "transposition to column-major), `numpy.load` %.3g s." % (b.get("read_s", 0.0),
                                                                bn.get("load_s", 0.0)))
    A("")
    A("CPU-time ratio numpy (1 thread) / attnrank (2 threads, both cores' CPU added): %.2f "
      "in process, %.2f whole process: the work per matrix is the same or less; the wall "
      "speed-up over that comes from the second core, which a loaded machine does not "
      "always give." % (bn["cpu1"] / b["library_cpu_s"], bw["python1_cpu"] / bw["attnrank_cpu"]))
    A("")
    best_np = min(bw["python1"], bw["python2"])
    sp = best_np / bw["attnrank"]
    sp_in = min(bn["threads1"], bn["threads2"]) / b["library_s"]
    status.append(("3. batched, attnrank >= 1.8x numpy (user-facing path)",
                   verdict(sp >= 1.8, "%.2fx whole process (vs the faster numpy setting), "
                           "%.2fx in process; %d matrices" % (sp, sp_in, b["count"]))))

    # 4
    f = res["factored"]
    A("## 4. Factored logits, n = %d, d_p = %d (d = %d)" % (f["n"], f["head_size"], f["d"]))
    A("")
    A("| path | time (s) |")
    A("|---|---|")
    A("| dense: form S = (W_k X)^T (W_q X) / sqrt(d_p), `ar_spectrum_svals` | %s |"
      % fmt_s(f["dense_s"]))
    A("| factored: `ar_attention_logit_factors` + `ar_spectrum_svals_factored` | %s |"
      % fmt_s(f["factored_s"]))
    A("")
    A("Speed-up %.0fx. Leading %d singular values agree to %.1e relative (value by value); "
      "the dense tail, zero in exact arithmetic, is at most %.1e sigma_1; sigma_%d / sigma_1 = "
      "%.2e." % (f["speedup"], f["head_size"], f["max_rel_diff_leading"],
                 f["dense_tail_over_sigma1"], f["head_size"], f["sigma_min_over_sigma1"]))
    A("")
    status.append(("4. factored >= 100x dense, agree to 1e-10 (n=%d)" % f["n"],
                   verdict(f["speedup"] >= 100 and f["max_rel_diff_leading"] <= 1e-10,
                           "%.0fx, %.1e" % (f["speedup"], f["max_rel_diff_leading"]))))

    # 5
    A("## 5. Representability of one target (X = I, full rank)")
    A("")
    rp = res.get("represent")
    if rp is None:
        A("Pending: `bench_represent` is not built (include/attnrank/bottleneck.h absent).")
        status.append(("5. representability <= 1.5x one thin SVD", "pending"))
    else:
        A("`ar_represent_workspace_alloc` + `ar_represent_analyze` + `ar_represent_certificate` "
          "(minimal head size, W_q, W_k, forward softmax check) on a Dirichlet target, against "
          "one `ar_spectrum_svd` of an n x n matrix, interleaved, %d repetitions." %
          cfg["represent_reps"])
        A("")
        A("| n | represent (s) | workspace | analyze | certificate | one thin SVD (s) | ratio |")
        A("|---|---|---|---|---|---|---|")
        A("| %d | %s | %s | %s | %s | %s | %.2f |" % (
            rp["n"], fmt_s(rp["represent_s"]), fmt_s(rp["workspace_s"]), fmt_s(rp["analyze_s"]),
            fmt_s(rp["certificate_s"]), fmt_s(rp["svd_s"]), rp["ratio"]))
        A("")
        A("Minimal head size %d; certificate max |softmax(S) - P| = %.1e." % (
            rp["min_head_size"], rp["certificate_max_abs"]))
        A("")
        if "lean_s" in rp:
            A("Bench-only prototype of the proposed core change (`lean_represent` in "
              "bench/bench_represent.c: one thin SVD of Pi log P, ||log P||_2 from its arrowhead "
              "in O(n^2), certificate by scaling U and V^T, forward logits W_k^T W_q / sqrt(k) as one GEMM "
              "since X = I, then the same softmax check): "
              "%s s, **ratio %.2f**; minimal head size %d (%s the library's), max "
              "|softmax(S) - P| = %.1e." % (
                  fmt_s(rp["lean_s"]), rp["lean_ratio"], rp["lean_min_head_size"],
                  "equal to" if rp["lean_agrees"] else "DIFFERENT from", rp["lean_max_abs"]))
            A("")
        extra = ""
        if "lean_s" in rp:
            extra = "; bench prototype of the fix %.2f" % rp["lean_ratio"]
        status.append(("5. representability <= 1.5x one thin SVD (n=%d)" % rp["n"],
                       verdict(rp["ratio"] <= 1.5, "ratio %.2f%s" % (rp["ratio"], extra))))

    # 6
    rk = res["rank"]
    A("## 6. Exact rank over F_p")
    A("")
    A("FLINT %s `nmod_mat_rank` of a uniformly random n x n matrix modulo p = %d (the prime "
      "just below 2^62 that the separation-rank module uses), FLINT threads %d; rate = "
      "(2/3) n^3 multiply-adds mod p per second." % (rk["flint_version"], rk["prime"],
                                                      rk["flint_threads"]))
    A("")
    A("| n | time (s) | rank | G mul-add mod p / s |")
    A("|---|---|---|---|")
    for r in rk["results"]:
        A("| %d | %s | %d | %.2f |" % (r["n"], fmt_s(r["seconds"]), r["rank"], r["gops"]))
    A("")
    dw = res.get("depth_width", {})
    if dw:
        A("Whole depth-width experiment (`experiments/depth_width_transition`, wall clock, "
          "FLINT/BLAS as the experiment sets them): " + ", ".join(
              "`%s` %.0f s" % (k, v) for k, v in dw.items()) + ".")
    else:
        A("Depth-width experiment times: run in the full benchmark only.")
    A("")
    status.append(("6. exact rank throughput (report)", "reported: " + ", ".join(
        "n=%d %.1f s" % (r["n"], r["seconds"]) for r in rk["results"])))

    # 7
    e, g, g1 = res["efficiency"], res["gemm"], res["gemm1"]
    n = e["n"]
    flops = 8.0 / 3.0 * n ** 3
    A("## 7. Efficiency of the values-only SVD (n = %d)" % n)
    A("")
    A("Flop model: one-stage bidiagonalisation (dgebrd) of a square matrix, 8/3 n^3; the "
      "bidiagonal singular values cost O(n^2). DGEMM measured at n = %d (2 n^3 flops), DGEMV "
      "(2 n^2 flops, 8 n^2 bytes: memory traffic = 4 bytes per flop)." % g["n"])
    A("")
    A("| kernel | threads | GFLOP/s per wall second | GFLOP/s per CPU second |")
    A("|---|---|---|---|")
    A("| DGEMM n=%d | 2 | %.1f | %.1f |" % (g["n"], g["dgemm_gflops"], g["dgemm_cpu_gflops"]))
    A("| DGEMM n=%d | 1 | %.1f | %.1f |" % (g1["n"], g1["dgemm_gflops"], g1["dgemm_cpu_gflops"]))
    for v in g["dgemv"]:
        A("| DGEMV n=%d (%.1f MB matrix) | 2 | %.2f (%.1f GB/s) | %.2f |" % (
            v["n"], 8e-6 * v["n"] ** 2, v["gflops"], v["gbytes_per_s"], v["cpu_gflops"]))
    for v in g1["dgemv"]:
        A("| DGEMV n=%d | 1 | %.2f (%.1f GB/s) | %.2f |" % (
            v["n"], v["gflops"], v["gbytes_per_s"], v["cpu_gflops"]))
    A("")
    A("| values-only SVD variant (n = %d, %d interleaved rounds) | OpenBLAS core | wall (s) | "
      "GFLOP/s (wall) | fraction of DGEMM (2 thr, wall) | CPU (s) | GFLOP/s per CPU s | "
      "fraction of 1-thread DGEMM per CPU s |" % (n, cfg["eff_rounds"]))
    A("|---|---|---|---|---|---|---|---|")
    for v in e["variants"]:
        gf, gc = flops / v["seconds"] / 1e9, flops / v["cpu"] / 1e9
        A("| %s | %s | %s | %.1f | %.2f | %s | %.1f | %.2f |" % (
            v["name"], v["core"], fmt_s(v["seconds"]), gf, gf / g["dgemm_gflops"],
            fmt_s(v["cpu"]), gc, gc / g1["dgemm_cpu_gflops"]))
    A("")
    gemv1 = g1["dgemv"][0]["cpu_gflops"]
    model = (4.0 / 3.0 * n ** 3) / (gemv1 * 1e9) + (4.0 / 3.0 * n ** 3) / (
        g1["dgemm_cpu_gflops"] * 1e9)
    A("Roofline of one-stage dgebrd on one core: half of its 8/3 n^3 flops are DGEMV on the "
      "trailing matrix (memory-bound), half DGEMM. At the measured one-thread rates per CPU "
      "second (DGEMV n = %d: %.2f, DGEMM: %.1f GFLOP/s) that is at best "
      "(4/3 n^3)/DGEMV + (4/3 n^3)/DGEMM = %.3g CPU s for n = %d, i.e. %.2f of the DGEMM "
      "rate, whatever the library does around LAPACK (the trailing matrices shrink and fit "
      "in cache towards the end, so the real DGEMV rate is somewhat higher)." % (
          g1["dgemv"][0]["n"], gemv1, g1["dgemm_cpu_gflops"], model, n,
          flops / model / 1e9 / g1["dgemm_cpu_gflops"]))
    prof = res.get("profile")
    if prof:
        A("")
        A("`perf record` of the values-only SVD at n = %d, one BLAS thread (self time by shared "
          "object and symbol; Debian's OpenBLAS is stripped, so its kernels show as addresses "
          "in libopenblasp):" % prof["n"])
        A("")
        A("```")
        L.extend(prof["top"])
        A("```")
    A("")
    best = min(e["variants"], key=lambda v: v["seconds"])
    one = [v for v in e["variants"] if "1 thread" in v["name"]][0]
    status.append(("7. efficiency (report)", "library %.2f of DGEMM (2 threads, wall), %.2f "
                   "(1 thread, per CPU s); fastest variant (wall): %s" % (
                       flops / e["variants"][0]["seconds"] / 1e9 / g["dgemm_gflops"],
                       flops / one["cpu"] / 1e9 / g1["dgemm_cpu_gflops"], best["name"])))

    # 8
    mm, al = res["memory"], res["alloc"]
    A("## 8. Memory")
    A("")
    A("Peak RSS (`wait4` rusage of a child process per variant) of one thin SVD, n = %d; "
      "reference = A + U + VT + LAPACK's optimal work (%d doubles) + iwork + s = %.0f MB." % (
          mm["n"], mm["lwork"], mm["arrays_bytes"] / 1e6))
    A("")
    A("| variant | peak RSS (MB) | / arrays |")
    A("|---|---|---|")
    A("| process with libraries loaded, 64 x 64 SVD | %.0f | %.3f |" % (
        mm["baseline_rss"] / 1e6, mm["baseline_rss"] / mm["arrays_bytes"]))
    A("| hand-written LAPACKE_dgesdd_work on A (destroys A) | %.0f | %.3f |" % (
        mm["lapacke_rss"] / 1e6, mm["lapacke_over_arrays"]))
    A("| `ar_spectrum_svd` (A kept; workspace holds a copy) | %.0f | %.3f |" % (
        mm["attnrank_rss"] / 1e6, mm["attnrank_over_arrays"]))
    A("")
    status.append(("8. peak RSS of thin SVD n=%d <= 1.2x arrays" % mm["n"],
                   verdict(mm["attnrank_over_arrays"] <= 1.2,
                           "%.3f (LAPACKE by hand %.3f)" % (mm["attnrank_over_arrays"],
                                                            mm["lapacke_over_arrays"]))))
    fa, ft = al.get("allocations_full_batch"), al.get("allocations_tenth_batch")
    A("Allocation calls (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign in "
      "the whole process, counted by bench/malloc_count.c through LD_PRELOAD) made by one "
      "`ar_spectrum_svals_batch` call on 2 threads: **%d for %d matrices, %d for a tenth of "
      "them** — the per-thread workspaces and thread start-up, nothing per matrix." % (
          fa, al["count"], ft, ))
    cli = res.get("alloc_cli", {})
    if len(cli) == 2:
        (c1, a1), (c2, a2) = sorted((int(k), v) for k, v in cli.items())
        A("The whole `attnrank spectrum STACK` process (reading, batched SVD, metrics, text "
          "output) makes %d allocation calls for %d matrices and %d for %d: %.1f per matrix, "
          "all in the per-matrix result records of the CLI (label, JSON index, a copy of the "
          "spectrum), none inside the SVD loop." % (a1, c1, a2, c2, (a2 - a1) / (c2 - c1)))
    A("")
    status.append(("8. no per-call allocation in batched loops",
                   verdict(fa == ft and fa is not None and fa >= 0,
                           "%s vs %s allocation calls (measured)" % (fa, ft))))

    status += masked_section(A, res.get("masked"), cfg)
    status += fit_section(A, res.get("fit"), cfg)

    A("## Figure")
    A("")
    A("![time vs n](figures/perf_svd_time.png)")
    A("")
    A("Log-log time of the values-only and thin SVD against n (library, LAPACKE, numpy), "
      "with the n^3 reference slope (data: docs/figures/perf_svd_time.csv; script: "
      "bench/perf_svd.gp).")
    A("")
    head = ["## Targets", "", "| target | status |", "|---|---|"]
    head += ["| %s | %s |" % s for s in status]
    head += [""]
    notes = os.path.join(HERE, "performance_notes.md")
    tail = []
    if os.path.exists(notes):
        with open(notes) as fh:
            tail = ["", fh.read().rstrip()]
    # Targets right after the machine section.
    idx = L.index("## 1. Library vs direct LAPACKE (same data, same process)")
    return "\n".join(L[:idx] + head + L[idx:] + tail) + "\n", status


def masked_section(A, mk, cfg):
    """Section 9 (exact causal analysis vs one thin SVD; fast vs reference greedy);
    returns the target rows."""
    A("## 9. Exact causal analysis (masked attention) vs one thin SVD")
    A("")
    if mk is None:
        A("Pending: `bench_masked` is not built.")
        A("")
        return [("9. causal analysis + certificate <= 5x one thin SVD (n=1024)", "pending")]
    rows = mk["results"]
    reps = ", ".join("%d at n = %d" % (r["reps"], r["n"]) for r in rows)
    A("`bench_masked %s --reps %d --threads 1`: Gaussian N(0, 1) logits, P = causal row "
      "softmax (rows as queries). Each repetition runs (b) one thin SVD with vectors of an "
      "n x n matrix (copy + `LAPACKE_dgesdd` 'S'), then (a) the full exact analysis with its "
      "certificate (`ar_masked_workspace_alloc` + `ar_masked_analyze` with mask `causal` + "
      "`ar_masked_certificate`: W_q, W_k and the masked forward check), then the fast "
      "staircase greedy alone on the same D (L = log P after the shift removal on key 0) and "
      "one W_q, W_k + forward check on its factors; repetitions: %s (`--reps` times, three "
      "times as many for n <= 512, one at n >= 4096), one BLAS thread "
      "(`openblas_set_num_threads(1)`, OPENBLAS_NUM_THREADS=1), OpenBLAS core `%s` "
      "(OPENBLAS_CORETYPE=%s), medians of wall and CPU time. The verdict uses the CPU-time "
      "ratio." % (" ".join(str(r["n"]) for r in rows), cfg["masked_reps"], reps,
                  mk["environment"].get("openblas_core"),
                  mk["environment"].get("openblas_coretype_env") or "unset"))
    A("")
    A("| n | h* (generic n/2) | (a) analysis + certificate wall / CPU (s) | analyze (s) | "
      "certificate (s) | fast greedy alone (s) | W_q, W_k + forward check (s) | (b) thin SVD "
      "wall / CPU (s) | wall ratio a/b | **CPU ratio a/b** |")
    A("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        A("| %d | %d (%d) | %s / %s | %s | %s | %s | %s | %s / %s | %.2f | **%.2f** |" % (
            r["n"], r["min_head_size"], r["generic"], fmt_s(r["analysis_s"]),
            fmt_s(r["analysis_cpu_s"]), fmt_s(r["analyze_s"]), fmt_s(r["certificate_s"]),
            fmt_s(r["greedy_s"]), fmt_s(r["weights_check_s"]), fmt_s(r["svd_s"]),
            fmt_s(r["svd_cpu_s"]), r["ratio"], r["cpu_ratio"]))
    A("")
    A("The analysis runs the weights + forward check twice (once to confirm the completion, "
      "once more in `ar_masked_certificate`); the rest of `analyze` is the mask check, log P, "
      "the shift removal and the block spectra for the bounds (values-only SVDs of at most "
      "four fully specified blocks of at most 2^20 entries).")
    A("")
    A("Reference: `ar_staircase_complete_reference` (one `dgelsd` least-squares solve per "
      "column) on the same D and tau, once per size; its factors go through the same "
      "`ar_masked_weights` + `ar_masked_forward_check` (X = I). Skipped where its time "
      "predicted from the previous size (scaled by n^3, a lower estimate of its O(n^4) cost) "
      "exceeds 60 s.")
    A("")
    A("| n | tau | fast greedy (s) | reference greedy (s) | speed-up | rank fast / reference | "
      "max abs(U V^T - D) on the pattern, fast / reference | forward max abs(softmax - P), "
      "fast / reference | fast / reference |")
    A("|---|---|---|---|---|---|---|---|---|")
    worst_fwd, same_rank, refs = 0.0, True, 0
    for r in rows:
        if r.get("ref_ran"):
            refs += 1
            fr = r["analysis_max_abs"] / r["ref_max_abs"] if r["ref_max_abs"] > 0 else float("inf")
            worst_fwd = max(worst_fwd, fr)
            same_rank = same_rank and r["ref_rank"] == r["fast_rank"] == r["min_head_size"]
            A("| %d | %.2g | %s | %s | %.0fx | %d / %d | %.1e / %.1e | %.1e / %.1e | %.2f |" % (
                r["n"], r["tau"], fmt_s(r["greedy_s"]), fmt_s(r["ref_s"]),
                r["ref_s"] / r["greedy_s"], r["fast_rank"], r["ref_rank"],
                r["fast_pattern_err"], r["ref_pattern_err"], r["analysis_max_abs"],
                r["ref_max_abs"], fr))
        else:
            A("| %d | %.2g | %s | skipped (predicted at least %.0f s) | - | %d / - | %.1e / - | "
              "%.1e / - | - |" % (r["n"], r["tau"], fmt_s(r["greedy_s"]), r["ref_predicted_s"],
                                  r["fast_rank"], r["fast_pattern_err"], r["analysis_max_abs"]))
    A("")
    at = [r for r in rows if r["n"] == 1024] or rows[-1:]
    out = []
    if at:
        r = at[0]
        out.append(("9. causal analysis + certificate <= 5x one thin SVD (n=%d)" % r["n"],
                    verdict(r["cpu_ratio"] <= 5.0, "CPU-time ratio %.2f (wall %.2f)" % (
                        r["cpu_ratio"], r["ratio"]))))
    if refs:
        out.append(("9. fast greedy: reference rank, forward error <= 10x reference",
                    verdict(same_rank and worst_fwd <= 10.0,
                            "ranks %s, worst forward ratio %.2f over n = %s" % (
                                "equal" if same_rank else "DIFFER", worst_fwd,
                                ", ".join(str(r["n"]) for r in rows if r.get("ref_ran"))))))
    return out


def fit_section(A, rows, cfg):
    """Section 10 (probability-space fit vs one thin SVD); returns the target rows."""
    A("## 10. Probability-space fit below the minimal head size vs one thin SVD")
    A("")
    if rows is None:
        A("Pending: `bench_fit` is not built.")
        A("")
        return [("10. fit reaches GSL's KL <= 10x one thin SVD (n=1024, k=64, 1 thread)",
                 "pending")]
    A("`bench_fit N --reps %d --threads T --json` for (N, T) in %s: targets from "
      "`ar_target_generate` (Dirichlet(1) columns; planted low-rank logits of rank 2k, "
      "scale 2), k = 64. Each repetition runs (b) one thin SVD of an n x n matrix (copy + "
      "`LAPACKE_dgesdd` 'S') and (a) the default fit (`ar_fit_workspace_alloc` + "
      "`ar_fit_lowrank` + free; L-BFGS, at most 400 iterations); GSL's vector_bfgs2 (no "
      "longer public: the internal reference `ar_fit_lowrank_gsl_bfgs2` of "
      "src/theory/bottleneck/bottleneck_fit_gsl.h, line tolerance 0.1, its "
      "default 400 iterations, same start) runs once per target first, and its KL is the goal: "
      "\"reaches\" is the first L-BFGS iteration at or below it, timed from the start of the "
      "fit. Medians of the repetitions." % (cfg["fit_reps"], ", ".join(
          "(%d, %d)" % nt for nt in cfg["fit"])))
    A("")
    A("| n | family | BLAS threads | thin SVD (s) | fit, 400 it. (s) | fit / SVD | GSL / SVD | "
      "KL, fit | KL, GSL | fit reaches GSL's KL at iteration | at (s) | **/ SVD** |")
    A("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        A("| %d | %s | %d | %.3f | %.2f | %.1f | %s | %.10f | %s | %s | %s | **%s** |" % (
            r["n"], r["family"], r["threads"], r["svd_s"], r["lbfgs_s"], r["ratio"],
            "%.1f" % r["gsl_ratio"] if r["gsl_ratio"] is not None else "-", r["lbfgs_kl"],
            "%.10f" % r["gsl_kl"] if r["gsl_kl"] is not None else "-",
            r["reach_iteration"] or "not reached",
            "%.2f" % r["reach_s"] if r["reach_s"] is not None else "-",
            "%.1f" % r["reach_ratio"] if r["reach_ratio"] is not None else "-"))
    A("")
    at = [r for r in rows if r["n"] == 1024 and r["threads"] == 1] or \
        [r for r in rows if r["threads"] == 1]
    if not at:
        return []
    worst = max((r["reach_ratio"] if r["reach_ratio"] is not None else float("inf"))
                for r in at)
    return [("10. fit reaches GSL's KL <= 10x one thin SVD (n=%d, k=64, 1 thread)" % at[0]["n"],
             verdict(worst <= 10.0, "worst ratio %.1f (%s)" % (worst, ", ".join(
                 "%s %.1f" % (r["family"], r["reach_ratio"] if r["reach_ratio"] is not None
                              else float("inf")) for r in at))))]


def write_figure_data(res, path):
    """Columns: wall medians at 2 BLAS threads, CPU medians at 1 thread."""
    by = {}
    for r in res["svd"]:
        row = by.setdefault(r["n"], {})
        if r["threads"] == 2:
            row["%s_ar_t2" % r["job"]] = r["attnrank_s"]
            row["%s_lp_t2" % r["job"]] = r["lapacke_s"]
        else:
            row["%s_ar_t1" % r["job"]] = r["attnrank_cpu_s"]
    for r in res.get("numpy", []):
        if r["threads"] == 1:
            by.setdefault(r["n"], {})["np_t1"] = r["np_svd_cpu"]
    cols = ["values_ar_t2", "values_lp_t2", "values_ar_t1", "np_t1", "full_ar_t1", "full_ar_t2"]
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as fh:
        fh.write("# n," + ",".join(cols) + "\n")
        for n in sorted(by):
            fh.write("%d,%s\n" % (n, ",".join("%.6g" % by[n][c] if c in by[n] else "NaN"
                                              for c in cols)))
    os.replace(tmp, path)
    big = max(n for n in by if "values_ar_t2" in by[n])
    return big, by[big]["values_ar_t2"]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--full", action="store_true")
    ap.add_argument("--out", help="markdown report (default: BUILD/performance-MODE.md)")
    ap.add_argument("--figures", help="directory for perf_svd_time.{csv,png,svg}")
    ap.add_argument("--data", help="directory for the .npy inputs (default BUILD/bench-data)")
    ap.add_argument("--command", default="scripts/bench")
    ap.add_argument("--json", help="also write the raw results as JSON")
    ap.add_argument("--render", metavar="RESULTS.json",
                    help="do not run: rewrite the report from saved raw results")
    ap.add_argument("--rerun", choices=("represent", "profile", "confirm", "masked", "fit"),
                    action="append",
                    default=[],
                    help="with --render: rerun these sections first and update the results")
    args = ap.parse_args()
    mode_name = "full" if args.full else "quick"
    cfg = FULL if args.full else QUICK
    args.data = args.data or os.path.join(args.build, "bench-data")
    os.makedirs(args.data, exist_ok=True)
    if args.render:
        with open(args.render) as fh:
            res = json.load(fh)
        bench = Bench(args, cfg)
        bench.res = res
        for section in args.rerun:
            if section == "profile":
                res["profile"] = bench.profile(cfg["profile_n"] or 1024)
            else:
                getattr(bench, section)()
        bench.checkpoint()
    else:
        res = Bench(args, cfg).run_all()
    text, status = report(res, cfg, args.command, mode_name)
    out = args.out or os.path.join(args.build, "performance-%s.md" % mode_name)
    tmp = out + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, out)
    if args.json:
        with open(args.json + ".tmp", "w") as fh:
            json.dump(res, fh, indent=1)
        os.replace(args.json + ".tmp", args.json)
    if args.figures:
        os.makedirs(args.figures, exist_ok=True)
        csv = os.path.join(args.figures, "perf_svd_time.csv")
        ref_n, ref_t = write_figure_data(res, csv)
        if shutil.which("gnuplot"):
            subprocess.run(["gnuplot", "-e", "datafile='%s'; outdir='%s'; ref_n=%d; ref_t=%.6g"
                            % (csv, args.figures, ref_n, ref_t),
                            os.path.join(HERE, "perf_svd.gp")], check=True)
    # The ratio table on stdout.
    print("attnrank benchmark (%s), %.0f s; report: %s" % (mode_name, res["runtime_s"], out))
    print("library vs LAPACKE (medians; CPU ratio is the verdict)")
    print("%-5s %-7s %3s %11s %11s %8s %11s %11s %8s" % (
        "n", "job", "thr", "ar_wall", "lp_wall", "ratio", "ar_cpu", "lp_cpu", "cpu_rat"))
    for r in res["svd"]:
        print("%-5d %-7s %3d %11.4g %11.4g %8.3f %11.4g %11.4g %8.3f" % (
            r["n"], r["job"], r["threads"], r["attnrank_s"], r["lapacke_s"], r["ratio"],
            r["attnrank_cpu_s"], r["lapacke_cpu_s"], r["cpu_ratio"]))
    print("library vs numpy (medians of interleaved processes, CPU times)")
    print("%-5s %3s %11s %11s %8s %11s %11s %8s" % ("n", "thr", "ar_svals", "np_svd", "ratio",
                                                    "ar_rank", "np_rank", "ratio"))
    for r in res["numpy"]:
        print("%-5d %3d %11.4g %11.4g %8.3f %11.4g %11.4g %8.3f" % (
            r["n"], r["threads"], r["c_svd_cpu"], r["np_svd_cpu"],
            r["c_svd_cpu"] / r["np_svd_cpu"], r["c_rank_cpu"], r["np_rank_cpu"],
            r["c_rank_cpu"] / r["np_rank_cpu"] if r["np_rank_cpu"] == r["np_rank_cpu"]
            else float("nan")))
    for name, st in status:
        print("%-55s %s" % (name, st.replace("**", "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
