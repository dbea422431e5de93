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
        number of layers (depth), 1..AR_COLLAPSE_MAX_LAYERS (100000).
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
