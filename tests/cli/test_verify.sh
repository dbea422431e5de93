#!/usr/bin/env bash
# CLI tests of `attnrank verify`.
source "$(dirname "$0")/lib.sh"

expect 0 "passed, 0 failed" -- "$AR" verify --suite core
expect 0 "svd_residual" -- "$AR" verify --list
expect 0 "PASS core" -- "$AR" verify --suite core --seed 7
out=$("$AR" verify --suite core --json)
check "verify json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["failed"] == 0 and r["passed"] == len(r["checks"]) >= 3
assert all("seconds" not in c for c in r["checks"])   # no timings unless asked
' "$out"
a=$("$AR" verify --suite core --json); b=$("$AR" verify --suite core --json)
check "verify reproducible" test "$a" = "$b"
expect 0 "" -- "$AR" verify --suite core --junit "$TMP/v.xml"
check "junit xml parses" $PY -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites" and int(root.get("failures")) == 0
assert len(root.findall(".//testcase")) >= 3
' "$TMP/v.xml"
expect_error 2 "unknown suite 'nope'" -- "$AR" verify --suite nope
expect_error 2 "exclude each other" -- "$AR" verify --quick --full
expect_error 2 "unexpected argument 'extra'" -- "$AR" verify extra
: >"$TMP/file"
expect_error 2 "cannot create" -- "$AR" verify --suite core --junit "$TMP/file/v.xml"
finish
