# Included by _core.pyx: the softmax bottleneck of an output layer
# (ar_sbn_analyze); the Python face of ``attnrank softmax-bottleneck``.

from libc.string cimport memset

from attnrank._capi cimport (
    ar_sbn_opts, ar_sbn_opts_init, ar_sbn_result, ar_sbn_result_free, ar_sbn_result_json,
    ar_sbn_logit_error, ar_sbn_workspace, ar_sbn_workspace_alloc, ar_sbn_workspace_free,
    ar_sbn_analyze, ar_sbn_option_table,
)

from attnrank._convert import as_real_array, require_matrix
from attnrank._results_weights import SoftmaxBottleneck


cdef object _u64_arg(object value, str name, str fn):
    """A uint64 keyword (seeds): an integer in [0, 2^64)."""
    try:
        v = operator.index(value)
    except TypeError:
        v = None
    if v is None or v < 0 or v >= (1 << 64):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be an integer in [0, 2^64), got {value!r}")
    return v


cdef object _sbn_record(const ar_sbn_result *r):
    """The record of the library's JSON, with the Eckart-Young error at
    every width (not in the JSON: the CLI's --csv) beside it."""
    errors = np.empty(r.nsv + 1, dtype=np.float64)
    cdef double[::1] ev = errors
    cdef size_t k
    for k in range(r.nsv + 1):
        ev[k] = ar_sbn_logit_error(r, k)
    cdef char *text = NULL
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc = ar_sbn_result_json(r, AR_JSON_NONFINITE, &text, &err)
    return SoftmaxBottleneck._from_json(_json_of(rc, text, &err, "ar_sbn_result_json"),
                                        logit_errors=errors, centred_norm=r.centred_norm)


def softmax_bottleneck(p, *, d, bias=False, rtol=None, atol=0.0, precision=None,
                       sum_tol=None, fit=True, seed=0, jitter=1e-3, max_iter=500):
    """Can an output layer of width d express the row-stochastic matrix p?
    As ``attnrank softmax-bottleneck P.npy --d D --json``
    (docs/theory/softmax-bottleneck.md; Yang, Dai, Salakhutdinov and Cohen
    2018).  An optional keyword left None takes the library's default, as
    the CLI without the flag.

    {options}

    p
        the row-stochastic N x V matrix: a numpy array of any layout, a
        torch tensor or nested lists, one 2-D matrix; float32 / float16 /
        bfloat16 set the default tolerances' precision.
    precision
        precision whose epsilon sets the default tolerances: "float64",
        "float32", "float16", "bfloat16" (or f64, ..., or a numpy dtype);
        default None: as stored (p's dtype).  ``--precision`` in the CLI.
    fit
        run the probability-space fit (``fit=False`` is ``--no-fit``: the
        record's ``fit`` is then None).

    CLI options without a keyword: ``--no-fit`` (use ``fit=False``),
    ``--json`` (use the record's ``.to_dict()``), ``--csv FILE`` (the logit error for every width k: the
    record's ``.widths()`` rows or ``.logit_errors``), ``--key NAME`` (the
    array of an .npz archive: pass ``numpy.load(path)[NAME]``), ``--show K``
    (singular values shown in text output: the record's
    ``.singular_values``).

    Returns a :class:`attnrank.SoftmaxBottleneck`; ``.to_dict()`` equals the
    CLI's JSON on the same matrix saved as .npy, without ``source``.
    Raises NonFiniteError for NaN/Inf, DomainError (ValueError) for an
    entry <= 0 or a row not summing to 1, ArgumentError for a matrix that
    is not 2-D, an empty one, or bad keywords, UnsupportedError (TypeError)
    for complex, object or string data, OutOfMemoryError.  The GIL is
    released during the computation.
    """
    cdef str fn = "ar_sbn_analyze"
    arr, stored = as_real_array(p, fn, "p")
    require_matrix(arr, fn, "p")
    if arr.ndim != 2:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"p must be one 2-D N x V matrix, got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"p is an empty matrix (shape {arr.shape})")
    cdef ar_sbn_opts o
    ar_sbn_opts_init(&o)
    # The names and kinds are the library's table; the rules on the values
    # ar_sbn_check's (called first by ar_sbn_analyze).
    _set_options(ar_sbn_option_table(), &o, dict(
        d=d, bias=bias, rtol=rtol, atol=atol, sum_tol=sum_tol, seed=seed, jitter=jitter,
        max_iter=max_iter), fn, [])
    o.rank.precision = _precision(stored if precision is None else precision)
    o.fit = 1 if fit else 0
    cdef ar_cview pv
    arr = _views_of(arr, &pv, fn, "p")
    cdef size_t n = pv.rows, v = pv.cols
    cdef ar_sbn_workspace *ws = NULL
    cdef ar_sbn_result r
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    memset(&r, 0, sizeof(r))
    with nogil:
        rc = ar_sbn_workspace_alloc(&ws, n, v, &err)
        if rc == AR_OK:
            rc = ar_sbn_analyze(ws, pv, o.rank.precision, &o, &r, &err)
    try:
        check_status(rc, fn, &err)
        return _sbn_record(&r)
    finally:
        ar_sbn_result_free(&r)
        ar_sbn_workspace_free(ws)


softmax_bottleneck.__doc__ = _documented(softmax_bottleneck.__doc__, ar_sbn_option_table())
