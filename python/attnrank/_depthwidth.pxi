# Included by _core.pyx (after _seprank.pxi, whose _th_* helpers it uses):
# depth/width allocation by the transition law ln d_x = a + b L and its
# refit from transition points (the Python face of ``attnrank depthwidth``).

import dataclasses
import json as _json_mod

from attnrank._capi cimport (
    ar_dw_fit, ar_dw_fit_table, ar_dw_request, ar_dw_request_init, ar_dw_result, ar_dw_run,
    ar_dw_result_json, AR_DW_MODE_FIT, AR_DW_MODE_OPTIMUM, AR_DW_MODE_TRANSITION_D,
    AR_DW_MODE_TRANSITION_LAYERS, AR_DW_MODE_VERDICT,
    ar_dw_law, ar_dw_law_parse_json, ar_dw_law_read_file,
)

from attnrank._convert import as_real_array
from attnrank._results_theory import (
    DepthWidthFit, DepthWidthOptimum, DepthWidthTransitionDepth, DepthWidthTransitionWidth,
    DepthWidthVerdict,
)

# The record class of each mode (the JSON's "mode").
_DW_RECORDS = {"fit": DepthWidthFit, "optimum": DepthWidthOptimum,
               "transition_d": DepthWidthTransitionWidth,
               "transition_layers": DepthWidthTransitionDepth, "verdict": DepthWidthVerdict}


cdef object _dw_fit_record(const ar_dw_fit *f, object mode):
    """The DepthWidthFit of a refit, from the fit mode's JSON (mode "fit",
    or None: the refit inside another record, check's)."""
    cdef ar_dw_request q
    ar_dw_request_init(&q)
    q.fit = f[0]
    q.have_fit = 1
    rec = _dw_record(&q, "fit")
    return rec if mode == "fit" else dataclasses.replace(rec, mode=mode)


cdef object _dw_record(ar_dw_request *q, object source):
    """ar_dw_run on the request (law source the text source), as the record
    of its mode."""
    cdef bytes src = source.encode("utf-8", "replace")
    q.law_source = src
    cdef ar_dw_result r
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_dw_run(q, &r, &err)
    check_status(rc, "ar_dw_run", &err)
    cdef char *text = NULL
    rc = ar_dw_result_json(&r, AR_JSON_NONFINITE, &text, &err)
    d = _json_of(rc, text, &err, "ar_dw_result_json")
    return _DW_RECORDS[d["mode"]]._from_json(d)


cdef int _dw_fit_points(object points, ar_dw_fit *out, str fn) except -1:
    """The C fit of an (n, 2) or (n, 3) real array-like of depth, width[,
    error] rows (any layout; the GIL released during the fit)."""
    arr, _ = as_real_array(points, fn, "points")
    if arr.ndim != 2:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "points must be an n x 2 (depth, width) or n x 3 (depth, width, "
                            f"width error) array, got shape {arr.shape}")
    cdef ar_cview view
    arr = _views_of(arr, &view, fn, "points")
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_dw_fit_table(view, out, &err)
    check_status(rc, fn, &err)
    return 0


def depthwidth_fit(points):
    """Refit the transition law ln(width) = intercept + slope * depth from
    transition points, as ``attnrank depthwidth --fit FILE --json`` on a
    CSV of the same rows (ar_dw_fit_table; docs/theory/depth-width.md).

    points
        an (n, 2) array-like of (depth, width) rows, or (n, 3) with the
        standard error of the width as third column (then a weighted fit,
        weights 1 / (error / width)^2); n >= 2, widths and errors > 0, two
        distinct depths.  Any numpy layout, lists, torch tensors.

    Returns a :class:`attnrank.DepthWidthFit` (mode "fit"): intercept and
    slope with standard errors and covariance, R^2, chi2, chi2_red;
    ``.to_dict()`` equals the CLI's JSON without ``file``.  Apply the refit
    law with ``depthwidth(params=..., fit=points)`` (or ``law=record``).
    Raises ArgumentError for a wrong shape or fewer than 2 points, SizeError
    for another number of columns, DomainError for a non-finite depth, a
    width or error <= 0 or not finite, or equal depths, UnsupportedError for
    complex/object data.  The GIL is released during the fit.
    """
    cdef ar_dw_fit f
    _dw_fit_points(points, &f, "ar_dw_fit_table")
    return _dw_fit_record(&f, "fit")


cdef object _dw_json_default(object v):
    # numpy's scalars in a mapping built in Python serialise as their values
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not a JSON value")


cdef tuple _dw_read_law(object law, str fn):
    """(intercept, slope, params_coeff, source) of a law given as a JSON
    file's path, a mapping or a record with to_dict() (a fit, a law, a
    mode's record), read by the library's reader (ar_dw_law_parse_json, as
    the CLI's --law).  A file's bad content is a FormatError, a bad mapping
    an ArgumentError."""
    cdef ar_dw_law out
    cdef ar_error err
    cdef bytes text, path
    cdef int rc
    if isinstance(law, (str, os.PathLike)):
        source = os.fspath(law)
        path = os.fsencode(law)
        rc = ar_dw_law_read_file(path, &out, &err)
        check_status(rc, fn, &err)
        return out.intercept, out.slope, out.params_coeff, source
    root = law.to_dict() if hasattr(law, "to_dict") else law
    try:
        text = _json_mod.dumps(root, allow_nan=False, default=_dw_json_default).encode()
    except (TypeError, ValueError):
        text = b"{}"  # not JSON (NaN, an object): the reader names what a law needs
    rc = ar_dw_law_parse_json(text, len(text), &out, &err)
    if rc == AR_EFORMAT:
        rc = AR_EINVAL  # a mapping's content is an argument, not a file's format
    check_status(rc, fn, &err, f"law {type(law).__name__}")
    return out.intercept, out.slope, out.params_coeff, "given"


def depthwidth(params=None, layers=None, d=None, *, fit=None, law=None, intercept=None,
               slope=None, tolerance=0.15, embed_rank=None):
    """Allocation by the fitted transition law ln(d_x) = A + B L (default the
    paper's A = 5.039, B = 0.0555) with N_params = 12 L d_x^2, as
    ``attnrank depthwidth --json`` (ar_dw_optimal, ar_dw_transition_d,
    ar_dw_transition_layers, ar_dw_verdict_of; docs/theory/depth-width.md).

    The mode follows from the arguments, as the CLI's:

    params
        N: the optimal depth L* and width for a parameter budget N (> 0,
        e.g. 175e9); a :class:`attnrank.DepthWidthOptimum`.
    layers
        L (an integer >= 1): the transition width for depth L; a
        :class:`attnrank.DepthWidthTransitionWidth`.
    d
        D (an integer >= 1): the transition depth for width D; a
        :class:`attnrank.DepthWidthTransitionDepth`.  With both ``layers``
        and ``d``: the verdict, depth-efficient (L <= transition depth of D)
        or depth-inefficient (too deep), and whether L is within
        ``tolerance`` of the optimal depth for its size; a
        :class:`attnrank.DepthWidthVerdict`.
    fit
        transition points, an (n, 2|3) array-like of depth, width[, error]
        rows (error = standard error of the width; weighted fit if given),
        the rows of the CLI's CSV: refit ln(width) = A + B depth.  Alone:
        the refit itself, as :func:`depthwidth_fit`.  With ``params``,
        ``layers`` or ``d``: refit, then apply the refit law (the record's
        ``fit`` holds the refit).
    law
        apply a saved law: the path of a JSON file (as ``depthwidth --fit
        --json`` writes; the record's law source is the path), or a mapping
        or record with numbers intercept and slope (optionally a positive
        params_coeff), e.g. ``depthwidth_fit(points)`` or its ``to_dict()``.
    intercept
        law intercept A (default 5.039).
    slope
        law slope B per layer (default 0.0555).
    tolerance
        relative distance to the optimal depth counted as optimal (>= 0,
        default 0.15).
    embed_rank
        token embeddings of rank R (>= 1; default None): add the crossover
        with min(d, R) (derived; docs/theory/embedding-rank.md): width above
        R buys no separation rank, so each mode's record gains
        ``embedding``, a :class:`attnrank.DepthWidthEmbedding` with the
        transition depth of the effective width.

    ``fit``, ``law`` and ``intercept``/``slope`` each set the law: give one.
    The theory's threshold L_th = log_3(d_x) is reported beside the fitted
    one.  The constants 5.039 and 0.0555 come from secondary summaries of
    Levine et al. 2020; refit them from your own points with ``fit``.

    CLI options without a keyword: ``--json`` prints the result as JSON;
    use ``.to_dict()`` of the record instead (the CLI's ``--fit FILE``
    takes a CSV file: pass its rows as ``fit``, e.g.
    ``numpy.loadtxt(FILE, delimiter=",", skiprows=1, ndmin=2)``).

    ``.to_dict()`` equals the CLI's JSON for the same arguments (without the
    fit's ``file``).  Raises ArgumentError (ValueError) for no mode or two,
    bad numbers, several law sources, or no optimum under the law
    (DomainError), the errors of :func:`depthwidth_fit` for bad points,
    FileError / FormatError for an unreadable or malformed law file.
    """
    cdef str fn = "depthwidth"
    # The rules are ar_dw_run's; here the conversions and which keywords
    # select the mode.
    cdef double tol = _th_finite(tolerance, "tolerance", fn)
    has_params = params is not None
    has_size = layers is not None or d is not None
    if has_params and has_size:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "params and layers/d are separate modes: give one")
    cdef double budget = 0.0
    if has_params:
        budget = _th_finite(params, "params", fn)
    cdef size_t nl = 0, nd = 0
    if layers is not None:
        nl = _th_count(layers, "layers", fn, 1)
    if d is not None:
        nd = _th_count(d, "d", fn, 1)
    given = intercept is not None or slope is not None
    if (fit is not None) + (law is not None) + given > 1:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "fit, law and intercept/slope each set the law: give one")

    cdef ar_dw_request q
    ar_dw_request_init(&q)
    source = "paper"
    if fit is not None:
        _dw_fit_points(fit, &q.fit, "ar_dw_fit_table")
        q.have_fit = 1
        q.law.intercept = q.fit.intercept
        q.law.slope = q.fit.slope
        source = "fit"
    elif law is not None:
        q.law.intercept, q.law.slope, q.law.params_coeff, source = _dw_read_law(law, fn)
    elif given:
        if intercept is not None:
            q.law.intercept = _th_finite(intercept, "intercept", fn)
        if slope is not None:
            q.law.slope = _th_finite(slope, "slope", fn)
        source = "given"
    q.params = budget
    q.layers = nl
    q.d = nd
    q.tolerance = tol
    if embed_rank is not None:
        q.embed_rank = _th_count(embed_rank, "embed_rank", fn, 1)
    q.mode = (AR_DW_MODE_OPTIMUM if has_params else
              AR_DW_MODE_VERDICT if layers is not None and d is not None else
              AR_DW_MODE_TRANSITION_D if layers is not None else
              AR_DW_MODE_TRANSITION_LAYERS if d is not None else AR_DW_MODE_FIT)
    return _dw_record(&q, source)
