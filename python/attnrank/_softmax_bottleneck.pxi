# Included by _core.pyx: the softmax bottleneck of an output layer
# (ar_sbn_analyze); the Python face of ``attnrank softmax-bottleneck``.

from libc.string cimport memset

from attnrank._capi cimport (
    ar_sbn_opts, ar_sbn_opts_init, ar_sbn_result, ar_sbn_result_free, ar_sbn_result_json,
    ar_sbn_logit_error, ar_sbn_workspace, ar_sbn_workspace_alloc, ar_sbn_workspace_free,
    ar_sbn_analyze,
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
    2018).

    p is a row-stochastic N x V matrix (contexts x vocabulary, entries > 0):
    a numpy array of any layout, a torch tensor or nested lists, one 2-D
    matrix; float32 / float16 / bfloat16 set the default tolerances'
    precision.  An output layer of width d gives logits H W^T (H: N x d, W:
    V x d), with ``bias=True`` also + 1 b^T.  Reports the exact required
    width, rank(L0 Pi_V) with L0 = log P and Pi_V the row centring (with
    the bias rank(Pi_N L0 Pi_V)); ranks use a threshold relative to
    ||L0||_2; whether d suffices; Yang et al.'s condition rank(log P) - 1 >
    d (sufficient for failure, not necessary) and whether it misses a
    failure; the best logit-space error at d (Eckart-Young on the centred
    log, exact); and a probability-space fit (L-BFGS from the truncated
    SVD, seeded jitter; an upper bound) with KL(P_i || P_hat_i) mean/max
    over contexts, Frobenius and max-abs errors.  Whether or not d suffices
    is the record's ``sufficient`` (never an exception).

    d
        output-layer width to test (required), an integer >= 0.
    bias
        allow a per-word output bias.
    rtol
        rank tolerance relative to sigma_1(log P), >= 0 (default None:
        max(N, V) * eps of the precision).
    atol
        absolute rank tolerance, >= 0 (default 0).
    precision
        precision whose epsilon sets the default tolerances: "float64",
        "float32", "float16", "bfloat16" (or f64, ..., or a numpy dtype);
        default None: as stored (p's dtype).
    sum_tol
        allowed |row sum - 1|, >= 0 (default None: the sum rule of
        ``represent`` with n = V).
    fit
        run the probability-space fit (``fit=False`` is ``--no-fit``: the
        record's ``fit`` is then None).
    seed
        seed of the fit's start jitter, an integer in [0, 2^64) (default 0).
    jitter
        relative start jitter, >= 0 (default 1e-3).
    max_iter
        fit iterations, >= 1 (default 500).

    CLI options without a keyword: ``--no-fit`` (use ``fit=False``),
    ``--json`` (use the record's
    ``.to_dict()``), ``--csv FILE`` (the logit error for every width k: the
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
    o.rank.precision = _precision(stored if precision is None else precision)
    o.d = _size(d, "d", fn)
    o.bias = 1 if bias else 0
    # The rules on the values are the library's (ar_sbn_check, called
    # first by ar_sbn_analyze); only the conversions are here.
    if rtol is not None:
        o.rank.rtol = _option_nonneg(rtol, "rtol", fn)
    o.rank.atol = _real(atol, "atol", fn)
    if sum_tol is not None:
        o.sum_tol = _option_nonneg(sum_tol, "sum_tol", fn)
    o.fit = 1 if fit else 0
    o.seed = _u64_arg(seed, "seed", fn)
    o.jitter = _real(jitter, "jitter", fn)
    o.max_iter = _size(max_iter, "max_iter", fn)
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
