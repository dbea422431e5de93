# Included by _core.pyx (after _seprank.pxi, whose _th_* helpers it uses):
# rank collapse of a seeded random self-attention network across depth (the
# Python face of ``attnrank collapse``).

from attnrank._capi cimport (
    ar_collapse_norms, ar_collapse_opts, ar_collapse_opts_init, ar_collapse_check,
    ar_collapse_depth, ar_collapse_result, ar_collapse_result_free, ar_collapse_run,
)

from attnrank._results_theory import Collapse, CollapseBound, CollapseDecayFit, CollapseDepth

# The CLI's limit on --layers (a depth's record holds min(n, d) values).
_COLLAPSE_MAX_LAYERS = 100000


cdef str _collapse_variant(const ar_collapse_opts *o):
    if o.skip:
        return "attention+mlp, skip" if o.mlp else "attention, skip"
    return "attention+mlp, no skip" if o.mlp else "pure attention"


cdef object _collapse_depth(const ar_collapse_result *r, const ar_collapse_depth *dp):
    svals = np.empty(r.nsv, dtype=np.float64)
    cdef double[::1] sv = svals
    if r.nsv > 0:
        memcpy(&sv[0], dp.singular_values, r.nsv * sizeof(double))
    m = _metrics_fields(&dp.rank)
    del m["rows"], m["cols"]
    cdef const ar_collapse_norms *nm = &dp.norms
    return CollapseDepth(
        depth=dp.depth, norm_fro=nm.norm_fro, res_fro=nm.res_fro, rel_res_fro=nm.rel_res_fro,
        norm_1inf=nm.norm_1inf, res_1inf=nm.res_1inf, rel_res_1inf=nm.rel_res_1inf,
        ratio=dp.ratio, singular_values=svals,
        bound_log=dp.bound_log if r.opts.have_bound else None, **m)


cdef object _collapse_record(const ar_collapse_result *r):
    cdef const ar_collapse_opts *o = &r.opts
    fit = CollapseDecayFit(floor=o.fit_floor, last_depth=r.fit_last,
                           geometric_slope=r.geometric_slope,
                           geometric_factor=r.geometric_factor, order=r.order,
                           order_log_c=r.order_log_c, order_pairs=r.order_pairs)
    bound = None
    if o.have_bound:
        bound = CollapseBound(gamma=o.gamma, beta=o.beta, worst_margin_log=r.worst_bound_margin)
    depths = []
    cdef size_t l
    for l in range(r.count):
        depths.append(_collapse_depth(r, &r.depths[l]))
    return Collapse(
        variant=_collapse_variant(o), layers=o.layers, n=o.n, d=o.d, heads=o.heads,
        head_size=r.head_size, skip=bool(o.skip), mlp=bool(o.mlp),
        mlp_width=o.mlp_width if o.mlp else 0, seed=o.seed, axis="row",
        residual="X - 1 x^T, x = column means (Frobenius minimiser)",
        decay_fit=fit, bound=bound, depths=tuple(depths))


def collapse(layers, n, d, heads, *, skip=False, mlp=False, mlp_width=None, seed=0,
             gamma=None, beta=None, rtol=None, atol=0.0, fit_floor=1e-12):
    """Rank collapse of a random self-attention network across depth (Dong,
    Cordonnier and Loukas 2021), as ``attnrank collapse --json``
    (ar_collapse_run; docs/theory/rank-collapse.md).

    Runs a random self-attention network (rows as tokens: X is n x d, row
    softmax, H heads of size d/H, seeded Gaussian weights, no biases) on a
    random N(0,1) input and measures every depth: the residual res(X) =
    X - 1 x^T with x the column means (the Frobenius minimiser, used for
    every norm), its Frobenius norm relative to ||X||_F, the paper's
    composite sqrt(||res||_1 ||res||_inf) of induced norms, the numerical
    rank and singular values of X.  A layer is SA(X) [+ X with skip], then
    with mlp ReLU(Y W1) W2 [+ Y with skip].  The decay is summarised by a
    geometric fit of log residual against depth and by the order k of
    r_{l+1} ~ c r_l^k.  The paper's bound (pure attention only) is
    evaluated only when both of its constants ``gamma`` and ``beta`` are
    given.

    layers
        number of layers (depth), 1..100000.
    n
        number of tokens (rows of X), >= 1.
    d
        embedding size (columns of X), >= 1.
    heads
        heads per layer (must divide d).
    skip
        True: skip connections around each sublayer.
    mlp
        True: add a 2-layer ReLU MLP sublayer per layer.
    mlp_width
        MLP hidden width (>= 1; default None: 4 d).
    seed
        random seed, an integer in [0, 2^64) (default 0): the same seed
        gives the same network, input and result as the CLI's ``--seed``.
    gamma
        the paper's constant gamma (> 0; with ``beta`` enables the bound).
    beta
        the paper's weight bound beta (> 0; with ``gamma`` enables the
        bound).
    rtol
        relative rank tolerance (>= 0; default None: max(n, d) * eps).
    atol
        absolute rank tolerance (>= 0, default 0).
    fit_floor
        relative residuals at or below fit_floor are roundoff, left out of
        the fits (in (0, 1), default 1e-12).

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
    o.layers = _th_count(layers, "layers", fn, 1)
    o.n = _th_count(n, "n", fn, 1)
    o.d = _th_count(d, "d", fn, 1)
    o.heads = _th_count(heads, "heads", fn, 1)
    if o.layers > _COLLAPSE_MAX_LAYERS:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"layers: at most {_COLLAPSE_MAX_LAYERS}, got {layers!r}")
    o.skip = _th_flag(skip, "skip", fn)
    o.mlp = _th_flag(mlp, "mlp", fn)
    o.mlp_width = 0 if mlp_width is None else _th_count(mlp_width, "mlp_width", fn, 1)
    o.seed = _th_seed(seed, fn)
    if (gamma is None) != (beta is None):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "the bound needs both gamma and beta")
    if gamma is not None:
        o.have_bound = 1
        o.gamma = _th_finite(gamma, "gamma", fn)
        o.beta = _th_finite(beta, "beta", fn)
        if not (o.gamma > 0.0 and o.beta > 0.0):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                f"gamma and beta must be > 0, got {gamma!r}, {beta!r}")
        if o.skip or o.mlp:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "the paper's bound covers pure attention only "
                                "(skip=False, mlp=False)")
    if rtol is not None:
        o.rank.rtol = _th_tol(rtol, "rtol", fn)
    o.rank.atol = _th_tol(atol, "atol", fn)
    o.fit_floor = _th_finite(fit_floor, "fit_floor", fn)
    if not (o.fit_floor > 0.0 and o.fit_floor < 1.0):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"fit_floor must be in (0, 1), got {fit_floor!r}")
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_collapse_check(&o, &err), "ar_collapse_check", &err)
    cdef ar_collapse_result r
    cdef int rc
    with nogil:
        rc = ar_collapse_run(&o, &r, &err)
    check_status(rc, fn, &err)
    try:
        return _collapse_record(&r)
    finally:
        ar_collapse_result_free(&r)
