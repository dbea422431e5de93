#!/usr/bin/env bash
# Experiment masked_bottleneck (docs/theory/masked-attention.md): runs it in
# --quick mode into a temporary directory and checks the CSVs against the
# theory (exact causal / bidirectional / prefix minimal head sizes, window
# and band lower bounds equal to the generic formulas, certificates at least
# the lower bound, the structured causal heads), then that a rerun with
# --resume, a shard completed by --resume, and shards joined by --merge
# write byte-identical CSVs, and usage errors.
#   test_experiments_masked.sh BUILD_ROOT
set -u
build=${1:?usage: $0 BUILD_ROOT}
here=$(cd "$(dirname "$0")" && pwd)
plots="$here/../../experiments/plots"
exe="$build/experiments/masked_bottleneck"
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then pass "$1"; else fail "$1"; fi; }

run_exp() { # outdir [args...]
    local out=$1
    shift
    "$exe" --quick --out "$out" --plots "$plots" --quiet "$@"
}

csvs="masked_bottleneck.csv masked_bottleneck_heads.csv"
same_csvs() { # dir1 dir2
    local f
    for f in $csvs; do cmp -s "$1/$f" "$2/$f" || { echo "  $f differs"; return 1; }; done
}

mb=$tmp/mb
run_exp "$mb"
check "masked_bottleneck --quick exits 0" "[ $? -eq 0 ]"
for f in $csvs; do
    check "$f exists" "[ -s '$mb/$f' ]"
done
check "header of the main CSV" \
    "[ \"\$(head -n 1 '$mb/masked_bottleneck.csv')\" = 'mask,kind,param,n,seed,method,status,lower,upper,certify,certified,cert_max_abs,accuracy,block_lower,generic,generic_status,generic_formula,formula_value' ]"
check "header of the heads CSV" \
    "[ \"\$(head -n 1 '$mb/masked_bottleneck_heads.csv')\" = 'head,n,beta,slope,seed,expected,status,causal_h,lower,upper,certified,cert_max_abs,accuracy,generic_causal,bidirectional_rank,bidirectional_h' ]"

# The mathematical content, with csv: each failed assertion prints a line.
cat > "$tmp/check.py" <<'EOF'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + '/masked_bottleneck.csv', newline='')))
bad = []
def want(cond, r, what):
    if not cond:
        bad.append('%s n=%s: %s (%s)' % (r['mask'], r['n'], what,
                   ','.join(r[k] for k in ('method', 'status', 'lower', 'upper', 'certified'))))
masks = {}
for r in rows:
    masks.setdefault(r['mask'], []).append(int(r['n']))
for m in ('none', 'causal', 'window:4', 'window:16', 'band:4', 'band:16', 'prefix:8'):
    if m not in masks or min(masks[m]) != 2 or max(masks[m]) != 64:
        bad.append('%s: n should run from 2 to 64, got %s' % (m, masks.get(m)))
for r in rows:
    n, lo, kind = int(r['n']), int(r['lower']), r['kind']
    w = int(r['param'])
    up = int(r['upper']) if r['upper'] else None
    if kind == 'none':
        f = n - 1
    elif kind == 'causal':
        f = n // 2
    elif kind == 'window':
        f = min(n, w) // 2
    elif kind == 'band':
        f = min(n, w) - 1
    elif kind == 'prefix':
        f = n - 1 if n <= w else max(w - 1, n // 2)
    else:
        bad.append('unexpected kind ' + kind)
        continue
    want(int(r['formula_value']) == f, r, 'formula value %s, expected %d' % (r['formula_value'], f))
    want(r['generic'] != '' and int(r['generic']) == f, r, 'generic %s, expected %d' % (r['generic'], f))
    want(r['generic_status'] in ('proved', 'verified'), r, 'generic status ' + r['generic_status'])
    if kind == 'causal':
        want(r['status'] == 'exact' and lo == n // 2, r, 'causal h* != n // 2')
    if kind == 'none':
        want(r['status'] == 'exact' and lo == n - 1, r, 'bidirectional h* != n - 1')
    if kind == 'prefix' and n > 8:
        want(r['status'] == 'exact' and lo == max(7, n // 2), r, 'prefix h* != max(7, n // 2)')
    if kind in ('none', 'causal', 'prefix'):
        want(r['method'] == 'staircase' and r['certify'] == '1' and r['certified'] == '1',
             r, 'staircase masks are certified at every n')
    if kind in ('window', 'band'):
        want(lo == f, r, 'lower bound != the generic formula %d' % f)
        want(r['method'] == ('staircase' if n <= w else 'bounds'), r, 'method')
        want(r['certify'] == ('1' if n <= 32 else '0'), r, 'certificates up to n = 32 in --quick')
        if n <= w:
            want(r['status'] == 'exact', r, 'n <= w is causal / unmasked: exact')
    if r['certified'] == '1':
        want(up is not None and up >= lo, r, 'certified upper < lower')
        want(float(r['cert_max_abs']) <= float(r['accuracy']) <= 1e-6, r,
             'certificate error %s (accuracy %s)' % (r['cert_max_abs'], r['accuracy']))
        if r['status'] == 'exact':
            want(up == lo, r, 'exact but upper != lower')
    else:
        want(up is None and r['cert_max_abs'] == '' and r['status'] == 'bounds', r,
             'uncertified rows have no upper')
    want(int(r['block_lower']) <= lo, r, 'block lower bound above the lower bound')
heads = {r['head']: r for r in csv.DictReader(open(d + '/masked_bottleneck_heads.csv', newline=''))}
expect = {'uniform': (0, 0), 'alibi': (1, 1), 'toeplitz': (16, 31), 'local4': (28, 28),
          'previous': (30, 31), 'self': (31, 31)}
for h, (causal, bidir) in expect.items():
    r = heads.get(h)
    if r is None:
        bad.append('structured head %s missing' % h)
        continue
    if not (r['n'] == '32' and r['status'] == 'exact' and r['causal_h'] == str(causal)
            and r['expected'] == str(causal) and r['certified'] == '1'
            and float(r['cert_max_abs']) <= min(1e-9, float(r['accuracy']))):
        bad.append('head %s: causal h* %s (%s), expected %d' % (h, r['causal_h'], r['status'], causal))
    if r['bidirectional_rank'] != str(bidir) or r['bidirectional_h'] != str(bidir):
        bad.append('head %s: bidirectional %s, expected %d' % (h, r['bidirectional_rank'], bidir))
if len(heads) != 6:
    bad.append('%d structured heads, expected 6' % len(heads))
for b in bad[:20]:
    print('  bad: ' + b)
sys.exit(1 if bad else 0)
EOF
check "minimal head sizes and structured heads match theory" "$PY '$tmp/check.py' '$mb'"

if command -v gnuplot > /dev/null 2>&1; then
    check "figure rendered (png, svg)" \
        "[ -s '$mb/masked_bottleneck.png' ] && [ -s '$mb/masked_bottleneck.svg' ]"
fi
check "no journals or temporary files left" "[ -z \"\$(ls -A '$mb' | grep -E 'journal|tmp')\" ]"

# Reruns: --resume in the same directory, a shard finished by --resume,
# two shards joined by --merge: all byte-identical.
mkdir -p "$tmp/first"
for f in $csvs; do cp "$mb/$f" "$tmp/first/$f"; done
run_exp "$mb" --resume --figures none
check "rerun with --resume exits 0" "[ $? -eq 0 ]"
check "rerun with --resume gives byte-identical CSVs" "same_csvs '$tmp/first' '$mb'"
run_exp "$tmp/sr" --shard 0/2
check "shard 0/2 exits 0 and writes a journal" \
    "[ $? -eq 0 ] && [ -s '$tmp/sr/masked_bottleneck.shard-0-of-2.journal' ]"
run_exp "$tmp/sr" --resume --figures none
check "--resume completes a shard's journal: byte-identical CSVs" "same_csvs '$tmp/first' '$tmp/sr'"
run_exp "$tmp/sm" --shard 0/2 && run_exp "$tmp/sm" --shard 1/2 && run_exp "$tmp/sm" --merge --figures none
check "shards joined by --merge: byte-identical CSVs" "same_csvs '$tmp/first' '$tmp/sm'"
run_exp "$tmp/s5" --seed 5 --figures none
check "another seed gives other maps (seeds differ)" \
    "! cmp -s '$tmp/first/masked_bottleneck.csv' '$tmp/s5/masked_bottleneck.csv'"

# Usage.
"$exe" --quick --full --out "$tmp/bad" > /dev/null 2>&1
check "--quick with --full is a usage error (2)" "[ $? -eq 2 ]"
"$exe" --quick --cert-max 0 --out "$tmp/bad" > /dev/null 2>&1
check "--cert-max 0 is a usage error (2)" "[ $? -eq 2 ]"
"$exe" --bogus > /dev/null 2>&1
check "unknown option is a usage error (2)" "[ $? -eq 2 ]"
"$exe" --help > /dev/null 2>&1
check "--help exits 0" "[ $? -eq 0 ]"

echo "$fails failure(s)"
[ $fails -eq 0 ]
