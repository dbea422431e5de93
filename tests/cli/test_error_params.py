#!/usr/bin/env python3
"""Every public function that returns a status takes an ar_error *err as its
last parameter (docs/api.md, "Which functions take ar_error").

Scans the AR_API declarations of include/attnrank/*.h that return int or
ar_status.  One without an ar_error parameter must be in EXEMPT below (a
predicate or a function returning a value, not a status: the same list as
docs/api.md); one with it must have it last.  An exempt name that is no
longer declared, or that gained an ar_error, fails too, so the list stays
exact.  Usage: test_error_params.py SOURCE_ROOT
"""
import glob
import os
import re
import sys

# Return a truth value or a value, not an AR_OK / AR_E* status.
EXEMPT = {
    "ar_mask_fixes_length",         # 1 when the mask fixes the length
    "ar_mask_allows",               # 1 when query may attend to key
    "ar_st_dtype_is_float",         # 1 for the float dtypes
    "ar_seprank_attains_expected",  # 1 when the best rank meets the closed form
    "ar_spectrum_dist_available",   # 1 when built with MPI and ScaLAPACK
    "ar_verify_suite_known",        # 1 when the suite exists
    "ar_verify_in_suite",           # 1 when the check belongs to the suite
    "ar_verify_passed",             # pass/fail of a filled result
    "ar_verify_run",                # pass/fail (the error is in the result)
    "ar_weights_pattern_match",     # 1 on a match
}

# Work on an ar_error itself, which comes first (as in ar_error_set).
ERROR_FIRST = {"ar_error_printable"}

DECL = re.compile(r"AR_API\s+(int|ar_status)\s+(\w+)\s*\(([^;]*?)\)\s*;", re.S)
COMMENT = re.compile(r"/\*.*?\*/", re.S)


def violations(text, exempt):
    """(name, problem) of each declaration in text that breaks the rule."""
    found = []
    seen = set()
    for m in DECL.finditer(COMMENT.sub(" ", text)):
        name, params = m.group(2), m.group(3)
        seen.add(name)
        has_err = re.search(r"\bar_error\s*\*", params) is not None
        if name in exempt:
            if has_err:
                found.append((name, "takes ar_error but is listed as exempt"))
        elif not has_err:
            found.append((name, "returns a status but takes no ar_error *err"))
        elif name not in ERROR_FIRST and not re.search(r"\bar_error\s*\*\s*\w*$",
                                                       params.strip()):
            found.append((name, "takes ar_error *err, but not as its last parameter"))
    return found, seen


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    headers = sorted(glob.glob(os.path.join(root, "include", "attnrank", "*.h")))
    failures = 0
    if len(headers) < 20:
        print("FAIL: only %d public headers under %s" % (len(headers), root))
        failures += 1
    declared = set()
    count = 0
    for path in headers:
        with open(path, encoding="utf-8") as f:
            found, seen = violations(f.read(), EXEMPT)
        declared |= seen
        count += len(seen)
        for name, problem in found:
            print("FAIL: %s: %s %s" % (os.path.relpath(path, root), name, problem))
            failures += 1
    for name in sorted(EXEMPT - declared):
        print("FAIL: exempt %s is not declared in include/attnrank/*.h" % name)
        failures += 1
    # The scan itself must catch each case (guards against a pattern that
    # silently passes everything).
    probe = ("AR_API int ar_probe_a(int x);\n"
             "AR_API ar_status ar_probe_b(ar_error *err, int x);\n"
             "AR_API int ar_probe_c(int x, ar_error *err);\n"
             "AR_API int ar_probe_d(ar_error *err);\n")
    got = sorted(n for n, _ in violations(probe, {"ar_probe_d"})[0])
    if got != ["ar_probe_a", "ar_probe_b", "ar_probe_d"]:
        print("FAIL: the scan finds %s in the probe" % got)
        failures += 1
    if count < 200:
        print("FAIL: only %d status-returning declarations found" % count)
        failures += 1
    if failures:
        print("%d failures" % failures)
        return 1
    print("ok: %d declarations returning int or ar_status, %d exempt" % (count, len(EXEMPT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
