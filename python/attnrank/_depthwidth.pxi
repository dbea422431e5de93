# Included by _core.pyx (after _options.pxi, whose _set_options it uses):
# depth/width allocation by the transition law ln d_x = a + b L and its
# refit from transition points (the Python face of ``attnrank depthwidth``).

import dataclasses
import json as _json_mod

from attnrank._capi cimport (
    ar_dw_fit, ar_dw_fit_table, ar_dw_request, ar_dw_request_init, ar_dw_result, ar_dw_run,
    ar_dw_result_json, ar_dw_opts, ar_dw_opts_init, ar_dw_option_table, ar_dw_request_of,
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
    """ar_dw_run on the request (law source the text source, or None: the
    request's), as the record of its mode."""
    cdef bytes src
    if source is not None:
        src = source.encode("utf-8", "replace")
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


cdef int _dw_read_law(object law, ar_dw_opts *o, list keep, str fn) except -1:
    """A law given as a JSON file's path, a mapping or a record with
    to_dict() (a fit, a law, a mode's record), read by the library's reader
    (ar_dw_law_parse_json, as the CLI's --law) into o (the path as its
    source, kept alive in keep).  A file's bad content is a FormatError, a
    bad mapping an ArgumentError."""
    cdef ar_error err
    cdef bytes text
    cdef int rc
    o.have_law = 1
    if isinstance(law, (str, os.PathLike)):
        keep.append(os.fsencode(law))
        rc = ar_dw_law_read_file(keep[-1], &o.law, &err)
        check_status(rc, fn, &err)
        keep.append(os.fspath(law).encode("utf-8", "replace"))
        o.law_source = keep[-1]
        return 0
    root = law.to_dict() if hasattr(law, "to_dict") else law
    try:
        text = _json_mod.dumps(root, allow_nan=False, default=_dw_json_default).encode()
    except (TypeError, ValueError):
        text = b"{}"  # not JSON (NaN, an object): the reader names what a law needs
    rc = ar_dw_law_parse_json(text, len(text), &o.law, &err)
    if rc == AR_EFORMAT:
        rc = AR_EINVAL  # a mapping's content is an argument, not a file's format
    check_status(rc, fn, &err, f"law {type(law).__name__}")
    return 0


def depthwidth(params=None, layers=None, d=None, *, fit=None, law=None, intercept=None,
               slope=None, tolerance=0.15, embed_rank=None):
    """Depth/width allocation as ``attnrank depthwidth --json``
    (ar_dw_request_of, ar_dw_run; docs/theory/depth-width.md).  A keyword
    left None is not given, as the CLI without the flag.

    {options}
    fit
        transition points, an (n, 2|3) array-like of depth, width[, error]
        rows (the rows of the CLI's CSV): refit ln(width) = A + B depth.
        Alone: the refit itself, as :func:`depthwidth_fit`.  With a mode:
        refit, then apply the refit law (the record's ``fit`` holds it).
    law
        apply a saved law: the path of a JSON file (as ``depthwidth --fit
        --json`` writes; the record's law source is the path), or a mapping
        or record with numbers intercept and slope (optionally a positive
        params_coeff), e.g. ``depthwidth_fit(points)`` or its ``to_dict()``.

    The records: :class:`attnrank.DepthWidthOptimum` (params),
    :class:`attnrank.DepthWidthTransitionWidth` (layers),
    :class:`attnrank.DepthWidthTransitionDepth` (d),
    :class:`attnrank.DepthWidthVerdict` (layers and d),
    :class:`attnrank.DepthWidthFit` (fit alone); with ``embed_rank`` the
    record gains ``embedding``, a :class:`attnrank.DepthWidthEmbedding`.

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
    cdef ar_dw_opts o
    ar_dw_opts_init(&o)
    # The names and kinds are the library's table; which options select
    # the mode and the law ar_dw_request_of's; the rules on the values
    # ar_dw_run's.  The law's sources, points and saved laws, are read here.
    _set_options(ar_dw_option_table(), &o, dict(
        params=params, layers=layers, d=d, intercept=intercept, slope=slope,
        tolerance=tolerance, embed_rank=embed_rank), fn, [])
    cdef list keep = []
    if fit is not None:
        _dw_fit_points(fit, &o.fit, "ar_dw_fit_table")
        o.have_fit = 1
    if law is not None:
        _dw_read_law(law, &o, keep, fn)
    cdef ar_dw_request q
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_dw_request_of(&o, &q, &err), fn, &err)
    return _dw_record(&q, None)


depthwidth.__doc__ = _documented(depthwidth.__doc__, ar_dw_option_table())
