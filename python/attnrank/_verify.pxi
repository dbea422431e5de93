# Included by _core.pyx (after _seprank.pxi, whose _th_* helpers it uses):
# the Python face of ``attnrank verify``, on ar_verify_run_suite (the
# registry, the seeds, the verdicts and the counts live there).

from attnrank._capi cimport (
    ar_verify_report, ar_verify_run_suite, ar_verify_report_free, ar_verify_report_json,
    AR_JSON_TIMINGS,
)

from attnrank._results_verify import VerifyReport


def verify(suite="all", *, full=False, seed=0, timings=False):
    """Re-measure the toolkit's theoretical claims, as ``attnrank verify
    --json``: each check of the registry re-measures one statement of a
    theory note (docs/theory/) on a seeded instance and compares it with
    the expected value or bound.

    suite
        "all" (default) or one suite: core, bottleneck, masked,
        depthwidth, collapse, softmax-bottleneck (``--suite``).
    full
        larger instances (``--full``; under 30 s on 2 cores).
    seed
        base seed; each check's seed is derived from it and the check's
        name (``--seed``).
    timings
        add each check's wall time, ``seconds`` (``--timings``).

    Returns a :class:`attnrank.VerifyReport`, true when every check
    passed, so a test suite can ``assert attnrank.verify()``.  A failing
    check is a result, not an exception.  Raises ArgumentError for an
    unknown suite or a bad seed.  The GIL is released while the checks run.
    ``--list``, ``--junit FILE`` and ``--quick`` (the default size) are the
    CLI's only.
    """
    cdef str fn = "verify"
    if not isinstance(suite, str):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"suite must be a str, got {type(suite).__name__}")
    cdef bytes name = suite.encode()
    cdef const char *c_name = name
    cdef uint64_t c_seed = _th_seed(seed, fn)
    cdef int c_full = _th_flag(full, "full", fn)
    cdef unsigned flags = AR_JSON_NONFINITE | (AR_JSON_TIMINGS if _th_flag(timings, "timings", fn)
                                               else 0)
    cdef ar_verify_report rep
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_verify_run_suite(c_name, c_seed, c_full, NULL, NULL, &rep, &err)
    cdef char *text = NULL
    try:
        check_status(rc, fn, &err)
        rc = ar_verify_report_json(&rep, flags, &text, &err)
        return _record_of_json(VerifyReport, rc, text, &err, "ar_verify_report_json")
    finally:
        ar_verify_report_free(&rep)
