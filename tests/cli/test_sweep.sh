#!/usr/bin/env bash
# The sweep engine of the experiments (experiments/sweep.h), end to end:
#   - same seed, same thread count: byte-identical CSVs on a rerun;
#   - shards 0..K-1 then --merge: the same CSVs as one serial run;
#   - SIGINT, SIGTERM or SIGKILL in the middle of a sweep: no CSV appears,
#     earlier complete outputs stay intact, the journal keeps the finished
#     configurations and --resume completes to the same CSVs without
#     recomputing them;
#   - journals of other options, incomplete merges and bad --shard values
#     are refused with exit 2.
#   test_sweep.sh BUILD_ROOT
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
build=$AR
plots="$here/../../experiments/plots"
experiments=(rank_collapse softmax_bottleneck_example depth_width_transition
             lowrank_bottleneck heads_sweep theorem2_demo embedding_rank)

run_exp() { # name outdir [args...]
    local name=$1 out=$2
    shift 2
    "$build/experiments/$name" --quick --out "$out" --plots "$plots" --figures none --quiet "$@"
}

# same_csvs DIR_A DIR_B: the same set of CSV files, byte for byte.
same_csvs() {
    local a=$1 b=$2 f
    [ "$(cd "$a" && ls ./*.csv | sort)" = "$(cd "$b" && ls ./*.csv | sort)" ] || {
        echo "  CSV sets differ: $a vs $b"; return 1; }
    for f in "$a"/*.csv; do
        cmp -s "$f" "$b/$(basename "$f")" || { echo "  differs: $(basename "$f")"; return 1; }
    done
}

no_journals() { ! ls "$1"/*.journal > /dev/null 2>&1; }

# ------------------------------------------------ reruns, shards and merges
for name in "${experiments[@]}"; do
    d=$TMP/$name
    run_exp "$name" "$d/serial" --seed 3
    check "$name: serial quick run exits 0" [ $? -eq 0 ]
    run_exp "$name" "$d/again" --seed 3
    check "$name: a rerun with the same seed is byte-identical" same_csvs "$d/serial" "$d/again"
    check "$name: a complete run leaves no journal" no_journals "$d/serial"
    for i in 0 1 2; do
        run_exp "$name" "$d/sharded" --seed 3 --shard "$i/3"
        check "$name: shard $i/3 exits 0" [ $? -eq 0 ]
    done
    check "$name: shards write no CSV before the merge" \
        bash -c "! ls '$d/sharded'/*.csv > /dev/null 2>&1"
    run_exp "$name" "$d/sharded" --seed 3 --merge
    check "$name: --merge exits 0" [ $? -eq 0 ]
    check "$name: shards merged = the serial run, byte for byte" same_csvs "$d/serial" "$d/sharded"
    check "$name: the merge removes the shards' journals" no_journals "$d/sharded"
done

# ----------------------------------------------------- refusals (exit 2)
d=$TMP/refusals
run_exp rank_collapse "$d" --seed 3 --shard 0/2
expect 2 "configurations missing" -- run_exp rank_collapse "$d" --seed 3 --merge
expect 2 "other options" -- run_exp rank_collapse "$d" --seed 4 --merge
expect 2 "other options" -- run_exp rank_collapse "$d" --seed 4 --resume
expect_error 2 "need 0 <= I < K" -- run_exp rank_collapse "$d" --shard 2/2
expect_error 2 "is not I/K" -- run_exp rank_collapse "$d" --shard 1/two
expect_error 2 "is not I/K" -- run_exp rank_collapse "$d" --shard 1
expect_error 2 "not with --resume or --shard" -- run_exp rank_collapse "$d" --merge --resume
printf 'something else\n' > "$d/rank_collapse.journal"
expect 2 "not a journal of this experiment" -- run_exp rank_collapse "$d" --resume

# ------------------------------------------------------------ interrupts
# depth_width_transition --quick computes ~60 exact ranks of growing size
# over several seconds: long enough to be stopped in the middle.
victim=depth_width_transition
ref=$TMP/$victim/serial

# journal_bytes FILE: its size (0 when absent).
journal_bytes() { stat -c %s "$1" 2>/dev/null || echo 0; }

# interrupt SIGNAL DIR [args]: start a run, wait for its journal to hold a
# record (the most expensive configurations come first, so most of the
# run is still ahead), send SIGNAL; prints the exit status.
interrupt() {
    local sig=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    # Started directly (not through run_exp): $! must be the program itself.
    "$build/experiments/$victim" --quick --out "$dir" --plots "$plots" --figures none --quiet \
        --seed 3 "$@" 2> "$dir.stderr" &
    local pid=$! j="$dir/$victim.journal" t=0 header
    while [ $t -lt 600 ]; do
        header=$(head -n 1 "$j" 2>/dev/null | wc -c)
        [ "$(journal_bytes "$j")" -gt $((header + 100)) ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
        t=$((t + 1))
    done
    kill -s "$sig" $pid 2>/dev/null
    wait $pid
    echo $?
}

for sig in INT TERM KILL; do
    d=$TMP/interrupt-$sig
    # An earlier complete output in the same directory must survive (one
    # signal is enough to show it; the run costs seconds).
    if [ "$sig" = INT ]; then
        run_exp "$victim" "$d" --seed 11
        mkdir -p "$d.before" && cp "$d"/*.csv "$d.before/"
    fi
    status=$(interrupt "$sig" "$d")
    case $sig in INT) want=130 ;; TERM) want=143 ;; KILL) want=137 ;; esac
    check "SIG$sig: the run stops with status $want (got $status)" [ "$status" = "$want" ]
    if [ "$sig" = INT ]; then
        check "SIG$sig: earlier complete CSVs are intact" same_csvs "$d.before" "$d"
    else
        check "SIG$sig: no CSV is written" bash -c "! ls '$d'/*.csv > /dev/null 2>&1"
    fi
    check "SIG$sig: no temporary file left beside them" \
        bash -c "! ls '$d' | grep -q '\\.tmp'"
    check "SIG$sig: the journal keeps finished configurations" \
        [ "$(journal_bytes "$d/$victim.journal")" -gt 150 ]
    if [ "$sig" != KILL ]; then
        check "SIG$sig: the message says how to resume" grep -q -- "--resume" "$d.stderr"
    fi
    "$build/experiments/$victim" --quick --out "$d" --plots "$plots" --figures none --seed 3 \
        --resume 2> "$d.resume.stderr"
    check "SIG$sig: --resume exits 0" [ $? -eq 0 ]
    check "SIG$sig: --resume reuses the finished configurations" \
        grep -q "already in journals" "$d.resume.stderr"
    check "SIG$sig: interrupted + resumed = uninterrupted, byte for byte" same_csvs "$ref" "$d"
    check "SIG$sig: the completed run removes its journal" no_journals "$d"
done

# A torn last record (a kill in the middle of a write) is dropped and the
# configuration computed again.
d=$TMP/torn
status=$(interrupt INT "$d")
j="$d/$victim.journal"
size=$(journal_bytes "$j")
truncate -s $((size - 7)) "$j"
run_exp "$victim" "$d" --seed 3 --resume
check "torn journal: --resume exits 0" [ $? -eq 0 ]
check "torn journal: the result equals the uninterrupted run" same_csvs "$ref" "$d"

# A corrupted byte inside a record (bit rot, a bad copy) fails its checksum:
# that record and everything after it are computed again.
d=$TMP/corrupt
status=$(interrupt INT "$d")
j="$d/$victim.journal"
header=$(head -n 1 "$j" | wc -c)
byte=$((header + 60))
printf 'Z' | dd of="$j" bs=1 seek=$byte conv=notrunc status=none
"$build/experiments/$victim" --quick --out "$d" --plots "$plots" --figures none --seed 3 \
    --resume 2> "$d.resume.stderr"
check "corrupt journal: --resume exits 0" [ $? -eq 0 ]
check "corrupt journal: nothing is taken from it (0 already in journals)" \
    bash -c "! grep -q 'already in journals' '$d.resume.stderr' || grep -q '(0 already' '$d.resume.stderr'"
check "corrupt journal: the result equals the uninterrupted run" same_csvs "$ref" "$d"

finish
