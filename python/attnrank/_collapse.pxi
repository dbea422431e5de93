# Included by _core.pyx:
# rank collapse of a seeded random self-attention network across depth (the
# Python face of ``attnrank collapse``).

from attnrank._capi cimport (
    ar_collapse_opts, ar_collapse_opts_init, ar_collapse_check, ar_collapse_result,
    ar_collapse_result_free, ar_collapse_run, ar_collapse_result_json,
    ar_collapse_option_table,
)

from attnrank._results_theory import Collapse


def collapse(layers, n, d, heads, *, skip=False, mlp=False, mlp_width=None, seed=0,
             gamma=None, beta=None, rtol=None, atol=0.0, fit_floor=1e-12):
    """Rank collapse of a random self-attention network across depth (Dong,
    Cordonnier and Loukas 2021), as ``attnrank collapse --json``
    (ar_collapse_run; docs/theory/rank-collapse.md).  An optional keyword
    left None takes the library's default, as the CLI without the flag.

    {options}

    CLI options without a keyword: ``--show K`` sets how many singular
    values the text output prints per depth; every depth's
    ``.singular_values`` holds all of them.  ``--csv FILE`` writes one row
    per depth; build it from ``.depths`` (or ``.rel_res_fro``, ``.ranks``)
    instead.  ``--json`` prints the result as JSON; use ``.to_dict()``
    instead.

    Returns a :class:`attnrank.Collapse`; ``.to_dict()`` equals the CLI's
    JSON.  Raises ArgumentError (ValueError) for bad sizes, heads not
    dividing d, one of gamma/beta without the other, the bound with skip or
    mlp, or bad tolerances; OutOfMemoryError when the sizes need more than
    16 GB.  The GIL is released during the run.
    """
    cdef str fn = "ar_collapse_run"
    cdef ar_collapse_opts o
    ar_collapse_opts_init(&o)
    # The names, kinds and "given" rules are the library's table; the rules
    # on the values ar_collapse_check's.
    _set_options(ar_collapse_option_table(), &o, dict(
        layers=layers, n=n, d=d, heads=heads, skip=skip, mlp=mlp, mlp_width=mlp_width,
        seed=seed, gamma=gamma, beta=beta, rtol=rtol, atol=atol, fit_floor=fit_floor),
        fn, [])
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_collapse_check(&o, &err), "ar_collapse_check", &err)
    cdef ar_collapse_result r
    cdef int rc
    with nogil:
        rc = ar_collapse_run(&o, &r, &err)
    check_status(rc, fn, &err)
    cdef char *text = NULL
    try:
        rc = ar_collapse_result_json(&r, AR_JSON_NONFINITE, &text, &err)
        return _record_of_json(Collapse, rc, text, &err, "ar_collapse_result_json")
    finally:
        ar_collapse_result_free(&r)


collapse.__doc__ = _documented(collapse.__doc__, ar_collapse_option_table())
