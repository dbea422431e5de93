#!/usr/bin/env bash
# Scale-out (a -Dmpi=enabled build, OpenMPI's mpirun on this machine):
#   - `spectrum --distributed` on 1, 2 and 4 processes (oversubscribed)
#     equals the serial spectrum to 1e-10 relative with the same rank and
#     tolerance, for C and Fortran order, float32, big-endian, wide and tall
#     matrices, several block sizes and grids; factored logits likewise;
#   - experiment sweeps under mpirun -n 2 and -n 4 write CSVs
#     byte-identical to the serial run's;
#   - a rank killed in the middle of a sweep makes mpirun fail (no hang, no
#     CSV), and a resumed run completes to the same CSVs;
#   - bad inputs give exit 2 and one message, from rank 0 only.
#   test_mpi.sh BUILD_ROOT
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
build=$AR
bin=$build/attnrank
plots="$here/../../experiments/plots"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none)
export OMPI_MCA_rmaps_base_oversubscribe=1

# ------------------------------------------------------------ spectra
$PY - "$TMP" <<'PY'
import numpy as np, sys
d = sys.argv[1]
r = np.random.default_rng(20261130)
np.save(f"{d}/tall.npy", r.standard_normal((301, 203)))
np.save(f"{d}/wide_f.npy", np.asfortranarray(r.standard_normal((150, 262))))
np.save(f"{d}/big_endian.npy", r.standard_normal((97, 131)).astype(">f8"))
np.save(f"{d}/f32.npy", r.standard_normal((257, 257)).astype("<f4"))
np.save(f"{d}/lowrank.npy", r.standard_normal((500, 12)) @ r.standard_normal((12, 500)))
np.save(f"{d}/tiny.npy", np.array([[2.385, -1.25], [0.5, 4.75]]))
a = r.standard_normal((40, 30)); a[5, 7] = np.inf
np.save(f"{d}/inf.npy", a)
np.save(f"{d}/stack.npy", r.standard_normal((2, 5, 5)))
np.save(f"{d}/row.npy", r.standard_normal(7))
np.save(f"{d}/scalar.npy", np.float64(2.385))
PY

# compare SERIAL.json DIST.json: singular values to 1e-10 relative, the same
# rank and threshold (to 1e-12 relative: it is a function of sigma_1).
compare() {
    $PY - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["matrices"]
b = json.load(open(sys.argv[2]))["matrices"]
assert len(a) == len(b), (len(a), len(b))
for x, y in zip(a, b):
    s, t = x["singular_values"], y["singular_values"]
    assert len(s) == len(t), (len(s), len(t))
    top = max(s[0], 1e-300)
    err = max(abs(u - v) for u, v in zip(s, t)) / top
    assert err <= 1e-10, f"singular values differ by {err:.3g} relative"
    assert x["rank"] == y["rank"], (x["rank"], y["rank"])
    tx, ty = x["tolerance"]["threshold"], y["tolerance"]["threshold"]
    assert abs(tx - ty) <= 1e-12 * max(tx, 1e-300), (tx, ty)
    assert x["tolerance"]["precision"] == y["tolerance"]["precision"]
    assert "rule" not in y["tolerance"], y["tolerance"]  # distributed: the relative rule
PY
}

for f in tall wide_f big_endian f32 lowrank tiny; do
    # Distributed spectra cut by numpy's relative rule (the storage rule needs
    # the whole matrix on one process): the float32 file's serial reference
    # states the same rule (--rtol max(m, n) 2^-23, m = n = 257).
    extra=()
    [ "$f" = f32 ] && extra=(--rtol "$(awk 'BEGIN { printf "%.17g", 257 * 2^-23 }')")
    "$bin" spectrum "$TMP/$f.npy" --json "${extra[@]}" > "$TMP/$f.serial.json"
    for np in 1 2 4; do
        for nb in 2 64; do
            "${MPIRUN[@]}" -n $np "$bin" spectrum "$TMP/$f.npy" --distributed --block $nb --json \
                > "$TMP/$f.$np.$nb.json" 2> "$TMP/$f.$np.$nb.err"
            check "$f: --distributed -n $np --block $nb exits 0" [ $? -eq 0 ]
            check "$f: -n $np --block $nb equals the serial spectrum" \
                compare "$TMP/$f.serial.json" "$TMP/$f.$np.$nb.json"
        done
    done
done
"${MPIRUN[@]}" -n 4 "$bin" spectrum "$TMP/tall.npy" --distributed --grid 4x1 --json > "$TMP/g41.json"
check "tall: a 4x1 grid equals the serial spectrum" compare "$TMP/tall.serial.json" "$TMP/g41.json"
"${MPIRUN[@]}" -n 4 "$bin" spectrum "$TMP/tall.npy" --distributed --grid 1x4 --json > "$TMP/g14.json"
check "tall: a 1x4 grid equals the serial spectrum" compare "$TMP/tall.serial.json" "$TMP/g14.json"
out=$("${MPIRUN[@]}" -n 2 "$bin" spectrum "$TMP/lowrank.npy" --distributed 2>&1)
check "text output comes once (rank 0 only)" [ "$(grep -c 'ScaLAPACK' <<<"$out")" -eq 1 ]
check "the planted rank 12 is found" grep -Eq "^  rank +12 " <<<"$out"

# Factored logits: distributed thin QR of the factors.
args=(--random-attention --n 700 --d 96 --heads 3 --seed 5 --json)
"$bin" spectrum "${args[@]}" > "$TMP/logits.serial.json"
for np in 2 4; do
    "${MPIRUN[@]}" -n $np "$bin" spectrum "${args[@]}" --distributed > "$TMP/logits.$np.json"
    check "factored logits -n $np equal the serial ones" \
        compare "$TMP/logits.serial.json" "$TMP/logits.$np.json"
done

# Bad inputs: exit 2, one message (from rank 0), no hang.
mpi_error() { # fragment args...
    local frag=$1
    shift
    local err rc
    err=$(timeout 120 "${MPIRUN[@]}" -n 2 "$bin" spectrum "$@" 2>&1 >/dev/null); rc=$?
    checks=$((checks + 1))
    if [ $rc -ne 2 ] || [ "$(grep -c "attnrank spectrum:" <<<"$err")" -ne 1 ] ||
        ! grep -qF -- "$frag" <<<"$err"; then
        echo "FAIL: want exit 2 and one message with '$frag'; got $rc: $*"
        echo "$err" | head -5
        failures=$((failures + 1))
    fi
}
mpi_error "non-finite value inf at row 5, column 7" "$TMP/inf.npy" --distributed
mpi_error "takes one matrix" "$TMP/stack.npy" --distributed
mpi_error "shape (7,) has 1 dimension" "$TMP/row.npy" --distributed
mpi_error "shape () is a scalar" "$TMP/scalar.npy" --distributed
mpi_error "cannot open" "$TMP/missing.npy" --distributed
mpi_error "--grid 3x1 needs 3 processes" "$TMP/tall.npy" --distributed --grid 3x1
mpi_error "--grid: expected RxC" "$TMP/tall.npy" --distributed --grid 2by1
mpi_error "need n >= d_p" --random-attention --n 8 --d 32 --heads 1 --distributed
mpi_error "takes --of logits" --random-attention --n 8 --d 32 --heads 1 --of scores --distributed

# ------------------------------------------------------------ sweeps
same_csvs() {
    local a=$1 b=$2 f
    [ "$(cd "$a" && ls ./*.csv | sort)" = "$(cd "$b" && ls ./*.csv | sort)" ] || return 1
    for f in "$a"/*.csv; do
        cmp -s "$f" "$b/$(basename "$f")" || { echo "  differs: $(basename "$f")"; return 1; }
    done
}
run_exp() { # launcher... -- name outdir [args...]
    local launcher=()
    while [ "$1" != -- ]; do launcher+=("$1"); shift; done
    shift
    local name=$1 out=$2
    shift 2
    "${launcher[@]}" "$build/experiments/$name" --quick --out "$out" --plots "$plots" \
        --figures none --quiet "$@"
}
for name in rank_collapse depth_width_transition lowrank_bottleneck heads_sweep theorem2_demo \
            softmax_bottleneck_example; do
    run_exp env -- "$name" "$TMP/sweep/$name/serial" --seed 2
    for np in 2 4; do
        run_exp "${MPIRUN[@]}" -n $np -- "$name" "$TMP/sweep/$name/mpi$np" --seed 2
        check "$name: mpirun -n $np exits 0" [ $? -eq 0 ]
        check "$name: mpirun -n $np = serial, byte for byte" \
            same_csvs "$TMP/sweep/$name/serial" "$TMP/sweep/$name/mpi$np"
        check "$name: mpirun -n $np leaves no journal" \
            bash -c "! ls '$TMP/sweep/$name/mpi$np'/*.journal > /dev/null 2>&1"
    done
done

# A rank dies in the middle of a sweep: mpirun fails within its own
# timeout, no CSV is written, and --resume under mpirun completes.
victim=depth_width_transition
d=$TMP/sweep/killed
mkdir -p "$d"
timeout 300 "${MPIRUN[@]}" -n 2 "$build/experiments/$victim" --quick --out "$d" --figures none \
    --quiet --seed 2 > "$d.log" 2>&1 &
launcher=$!
t=0
while [ $t -lt 600 ]; do
    # One record journaled (the header line is about 80 bytes): the most
    # expensive configurations come first, so most of the run is ahead.
    j=$(ls "$d"/*.rank-1-of-2.journal 2>/dev/null)
    [ -n "$j" ] && [ "$(stat -c %s "$j")" -gt 250 ] && break
    sleep 0.05
    t=$((t + 1))
done
pid=$(pgrep -f "^$build/experiments/$victim" | tail -n 1)
check "a rank to kill was found" [ -n "$pid" ]
[ -n "$pid" ] && kill -KILL "$pid"
wait $launcher
status=$?
check "a killed rank fails the run (status $status, not 0, not a timeout)" \
    bash -c "[ $status -ne 0 ] && [ $status -ne 124 ]"
check "a killed rank: no CSV written" bash -c "! ls '$d'/*.csv > /dev/null 2>&1"
check "a killed rank: mpirun names it" grep -q "exited on signal 9" "$d.log"
run_exp "${MPIRUN[@]}" -n 2 -- "$victim" "$d" --seed 2 --resume
check "a killed rank: --resume under mpirun exits 0" [ $? -eq 0 ]
check "a killed rank: resumed = serial, byte for byte" \
    same_csvs "$TMP/sweep/$victim/serial" "$d"

finish
