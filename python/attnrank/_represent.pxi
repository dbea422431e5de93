# Included by _core.pyx: representability of attention maps by one head
# (unmasked and masked), head-size bounds of a layer, BERT parameter counts;
# the Python faces of ``attnrank represent``, ``heads`` and ``params``.

from libc.string cimport memcpy

from attnrank._capi cimport (
    uint64_t, ar_matrix, ar_matrix_free, ar_matrix_empty, ar_matrix_cview, ar_axis, AR_AXIS_COL,
    AR_AXIS_ROW, ar_axis_parse, ar_axis_infer_stack, ar_model_config, ar_model_config_read,
    ar_mask, ar_mask_none, ar_mask_free, ar_mask_kind_name, ar_mask_parse, ar_mask_format,
    ar_mask_check_size, ar_mask_from_matrix, ar_mask_from_text, ar_mask_text_kind,
    AR_MASK_TEXT_AUTO, AR_MASK_TEXT_FILE, ar_mask_syntax_list,
    ar_mask_fixes_length, ar_mask_param, ar_mask_params, AR_MASK_MAX_PARAMS,
    ar_generic_status_name, ar_model_masks, ar_represent_opts, ar_represent_opts_init,
    ar_head_config, ar_bert_config, ar_bert_config_init, ar_param_count, ar_bert_params,
    ar_bert_config_make, ar_paper_tables_check,
    ar_param_count_json, ar_paper_tables_json, ar_masked_opts, ar_masked_opts_init, ar_represent_stack_opts,
    ar_represent_stack_opts_init, ar_represent_stack_result, ar_represent_stack_run,
    ar_represent_stack_result_free, ar_represent_run_opts, ar_represent_run_opts_init,
    ar_represent_run_result, ar_represent_run, ar_represent_run_check,
    ar_represent_run_result_free, AR_REPRESENT_STEP_CERTIFICATE, AR_REPRESENT_STEP_FIT,
    ar_option_render, AR_OPTION_STYLE_CLI, ar_bias_spec, AR_BIAS_NONE, AR_BIAS_FILE,
    ar_bias_parse, ar_bias_matrix, AR_REPRESENT_STEP_BIAS, ar_represent_run_json,
    ar_represent_stack_json,
)

import dataclasses
import os

from attnrank._errors import DomainError, SizeError
from attnrank._results import (
    Heads, HeadsModel, Mask, MaskedRepresent, PaperTables, ParamCount, Represent,
    RepresentStack,
)

cdef extern from *:
    """
    #include "attnrank/mask.h"
    static ar_mask *ar_py_model_mask(ar_model_masks *m, size_t k) { return &m->kind[k].mask; }
    static size_t ar_py_model_layers(const ar_model_masks *m, size_t k) { return m->kind[k].layers; }
    static const char *ar_py_model_label(const ar_model_masks *m, size_t k) { return m->kind[k].label; }
    """
    ar_mask *ar_py_model_mask(ar_model_masks *m, size_t k) nogil
    size_t ar_py_model_layers(const ar_model_masks *m, size_t k) nogil
    const char *ar_py_model_label(const ar_model_masks *m, size_t k) nogil

cdef str _mask_syntaxes():
    """The mask kinds' syntaxes as the library's kind table lists them, for
    messages ("none, causal, window:W, ...")."""
    cdef char buf[256]
    ar_mask_syntax_list(buf, sizeof(buf), 0)
    return _text(buf)


# ---- small converters (GIL held) ------------------------------------------

cdef ar_axis _axis(object axis, str fn) except *:
    cdef ar_axis a = AR_AXIS_COL
    ok = isinstance(axis, str) and "\0" not in axis
    if ok:
        data = axis.encode("utf-8", "replace")
        ok = ar_axis_parse(data, &a, NULL) == AR_OK
    if not ok:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"axis must be 'auto', 'col' or 'row', got {axis!r}")
    return a


cdef ar_axis _infer_axis(object arr, ar_precision prec, double sum_tol, str fn) except *:
    """axis="auto": the axis every map of arr sums to 1 along, as the library
    decides it (ar_axis_infer_stack: a doubly stochastic map is refused).
    An empty stack has no map to read and nothing to analyse: "col"."""
    lead = arr.shape[:-2]
    count_obj = 1
    for length in lead:
        count_obj *= length
    cdef size_t count = count_obj
    if count == 0:
        return AR_AXIS_COL
    cdef ar_cview *views = <ar_cview *>malloc(count * sizeof(ar_cview))
    if views == NULL:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"{count} matrix views")
    cdef ar_axis axis = AR_AXIS_COL
    cdef size_t slice = 0
    cdef int rc = AR_OK
    cdef ar_error err
    err.msg[0] = 0
    try:
        arr = _views_of(arr, views, fn, "p")
        with nogil:
            rc = ar_axis_infer_stack(views, count, prec, sum_tol, &axis, &slice, &err)
    finally:
        free(views)
    if rc != AR_OK:
        index = tuple(int(i) for i in np.unravel_index(slice, lead)) if lead else None
        check_status(rc, "ar_axis_infer_stack", &err,
                     f"axis='auto', slice {index} of p" if index is not None else "axis='auto'")
    return axis


cdef object _mask_record(const ar_mask *m):
    cdef char text[256]
    ar_mask_format(m, text, sizeof(text))
    cdef ar_mask_param params[AR_MASK_MAX_PARAMS]
    cdef size_t count = ar_mask_params(m, params)
    kw = {}
    for k in range(count):
        name = _text(params[k].name)
        if params[k].values == NULL:
            kw[name] = params[k].value
        else:
            kw[name] = tuple(params[k].values[e] for e in range(params[k].count))
    return Mask(kind=_text(ar_mask_kind_name(m.kind)), text=_text(text), **kw)


cdef int _mask_from(object mask, ar_axis axis, size_t n, bint for_map, str fn,
                    ar_mask *out, bint *is_auto) except -1:
    """out = the mask of a string (or, for a map, a boolean n x n array in
    the map's layout); is_auto for "auto".  Raises on a bad mask."""
    cdef ar_error err
    err.msg[0] = 0
    out[0] = ar_mask_none()
    is_auto[0] = 0
    cdef ar_mask_text_kind kind
    if isinstance(mask, str):
        # the syntax, "auto", "file:" and the size are the library's (ar_mask_from_text)
        data = mask.encode("utf-8", "replace")
        if b"\0" in data:
            data = b"?"
        check_status(ar_mask_from_text(data, n, for_map, out, &kind, &err), "ar_mask_from_text",
                     &err)
        if kind == AR_MASK_TEXT_FILE:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "mask 'file:PATH' is the CLI's; pass the pattern as a "
                                "boolean n x n array (numpy.load(PATH) != 0)")
        is_auto[0] = kind == AR_MASK_TEXT_AUTO
        return 0
    if not for_map:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"mask must be a string ({_mask_syntaxes()}), "
                            f"got {type(mask).__name__}")
    try:
        pat = np.asarray(mask)
    except Exception as exc:
        raise UnsupportedError(AR_EUNSUPPORTED, strerror(AR_EUNSUPPORTED), fn,
                               f"mask must be a string or a boolean array: {exc}") from exc
    if pat.dtype.kind not in "biuf":
        raise UnsupportedError(AR_EUNSUPPORTED, strerror(AR_EUNSUPPORTED), fn,
                               f"mask must be a string or a boolean array, got dtype {pat.dtype}")
    if pat.ndim != 2:
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"a mask array must be n x n = {n} x {n} (the map's shape), got {pat.shape}")
    # the entries, the axis and the kind are the library's (ar_mask_from_matrix)
    cdef ar_cview mv
    pat = _views_of(pat.astype(np.float64, copy=False), &mv, fn, "mask")
    check_status(ar_mask_from_matrix(mv, axis, n, out, &err), "ar_mask_from_matrix", &err,
                 "the mask array")
    return 0


cdef tuple _square_map(object p, str fn):
    arr, prec = as_matrix_stack(p, fn, "p")
    if arr.shape[-1] != arr.shape[-2]:
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"p must be a square n x n attention map (or a stack of them), "
                        f"got {arr.shape[-2]} x {arr.shape[-1]}")
    return arr, prec


cdef object _views_of(object arr, ar_cview *views, str fn, str name):
    """Fill the views of arr (copying it into C order once when the C rules
    refuse its layout); returns the array the views point into."""
    if _fill_views(arr, views):
        try:
            arr = np.ascontiguousarray(arr)
        except (MemoryError, ValueError):
            raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn,
                                   f"a C-order copy of {name} (shape {arr.shape})")
        if _fill_views(arr, views):
            raise_status(AR_EINVAL, fn, f"the layout of {name} (strides {arr.strides})")
    return arr


cdef object _copy_matrix(const ar_matrix *m):
    out = np.empty((m.rows, m.cols), dtype=np.float64, order="F")
    cdef double[::1, :] o = out
    cdef size_t j
    if m.rows > 0 and m.cols > 0:
        for j in range(m.cols):
            memcpy(&o[0, j], m.data + j * m.ld, m.rows * sizeof(double))
    return out


cdef int _refuse_zeros(object arr, const ar_represent_opts *ro, str fn) except -1:
    """Exact zeros without a mask (the library's check, ar_represent_run_check),
    raised as DomainError with the message in Python's spelling."""
    cdef ar_represent_run_opts o
    ar_represent_run_opts_init(&o)
    o.represent = ro[0]
    cdef ar_cview pv
    arr = _views_of(arr, &pv, fn, "p")
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_represent_run_check(pv, &o, &err)
    if rc != AR_OK:
        raise DomainError(AR_EDOMAIN, strerror(AR_EDOMAIN), fn, _python_text(err.msg))
    return 0


# ---- represent ---------------------------------------------------------------

cdef str _step_name(const ar_represent_run_result *res, bint masked):
    """The library function of the step that failed, for the exception."""
    if res.failed_step == AR_REPRESENT_STEP_BIAS:
        return "ar_bias_remove"
    if res.failed_step == AR_REPRESENT_STEP_CERTIFICATE:
        return "ar_masked_certificate" if masked else "ar_represent_certificate"
    if res.failed_step == AR_REPRESENT_STEP_FIT:
        return "ar_masked_fit" if masked else "ar_fit_lowrank"
    return "ar_masked_analyze" if masked else "ar_represent_analyze"


cdef int _run_map(object arr, object xarr, ar_represent_run_opts *ro, object head_size,
                  bint do_fit, object max_iter, str fn, ar_represent_run_result *res) except -1:
    """ar_represent_run on the single map arr (the library decides the
    verdict, the certificate, the errors and the fit); raises as the step
    that failed."""
    cdef ar_cview pv, xv
    arr = _views_of(arr, &pv, fn, "p")
    cdef const ar_cview *xp = NULL
    if xarr is not None:
        xarr = _views_of(xarr, &xv, fn, "x")
        xp = &xv
    if head_size is not None:
        ro.head_size = _size(head_size, "head_size", fn)
        ro.head_size_given = 1
    ro.fit = do_fit
    if max_iter is not None:
        ro.fit_opts.max_iter = _size(max_iter, "max_iter", fn)
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_represent_run(pv, xp, ro, res, &err)
    if rc != AR_OK:
        masked = ro.mask != NULL or ro.infer_mask
        check_status(rc, _step_name(res, masked), &err,
                     "probability-space fit" if res.failed_step == AR_REPRESENT_STEP_FIT else None)
    return 0


cdef object _represent_one(object arr, object xarr, ar_represent_run_opts *o, object head_size,
                           bint want_weights, bint do_fit, object max_iter, str fn,
                           const ar_bias_spec *bias):
    """One map through ar_represent_run and its record from the library's
    JSON (ar_represent_run_json); the certificate's W_q, W_k, which the JSON
    does not hold, copied when wanted."""
    cdef ar_represent_run_result res
    _run_map(arr, xarr, o, head_size, do_fit, max_iter, fn, &res)
    cdef char *text = NULL
    cdef ar_error err
    err.msg[0] = 0
    try:
        # fit_skipped in the CLI's spelling, as the CLI's JSON has it ("--no-fit")
        ar_option_render(res.fit_skipped, AR_OPTION_STYLE_CLI)
        rc = ar_represent_run_json(&res, bias, AR_JSON_NONFINITE, &text, &err)
        rec = _record_of_json(MaskedRepresent if res.masked else Represent, rc, text, &err,
                              "ar_represent_run_json")
        if want_weights and res.have_certificate:
            rec = dataclasses.replace(rec, certificate=dataclasses.replace(
                rec.certificate, wq=_copy_matrix(&res.certificate.wq),
                wk=_copy_matrix(&res.certificate.wk)))
        return rec
    finally:
        ar_represent_run_result_free(&res)


cdef void _masked_opts(ar_masked_opts *o, ar_axis axis, ar_precision prec, double tau,
                       double accuracy, double sum_tol, double smooth, uint64_t seed,
                       size_t extra_rank, double verify):
    ar_masked_opts_init(o)
    o.axis = axis
    o.precision = prec
    o.tau = tau
    o.accuracy = accuracy
    o.sum_tol = sum_tol
    o.smooth = smooth
    o.seed = seed
    o.extra_rank = extra_rank
    if verify >= 0.0:
        o.verify_seconds = verify


cdef object _bias_of(object bias, size_t n, ar_axis axis, ar_matrix *out, ar_bias_spec *spec,
                     str fn):
    """bias= as the spec the record names (kind none: no bias) and, for a
    string, the matrix built by the library into out (files read as the CLI
    reads them); returns the array given instead (n x n in p's layout: kind
    "file" without a path), or None."""
    cdef ar_error err
    cdef int rc
    err.msg[0] = 0
    if isinstance(bias, str):
        data = bias.encode("utf-8", "replace")
        if b"\0" in data:
            data = b"?"
        check_status(ar_bias_parse(data, spec, &err), "ar_bias_parse", &err)
        if spec.kind != AR_BIAS_NONE:
            with nogil:
                rc = ar_bias_matrix(spec, n, axis, <size_t>-1, out, &err)
            check_status(rc, "ar_bias_matrix", &err)
        return None
    barr, _ = as_matrix_stack(bias, fn, "bias")
    if barr.shape != (n, n):
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"bias must be n x n = {n} x {n} (p's shape), got {barr.shape}")
    spec.kind = AR_BIAS_FILE
    spec.path[0] = 0
    return barr


cdef tuple _slice_index(tuple lead, object k):
    """The multi-index of slice k over the leading axes (C order)."""
    index = []
    for length in reversed(lead):
        index.append(int(k % length))
        k //= length
    return tuple(reversed(index))


cdef object _represent_stack(object arr, bint masked, bint is_auto, const ar_mask *mask,
                             ar_represent_opts *ro, ar_masked_opts *mo, object head_size,
                             str fn):
    # The loop, the verdicts, the summary and the record are the library's
    # (ar_represent_stack_run, ar_represent_stack_json); this face names the
    # failing slice.
    lead = tuple(int(m) for m in arr.shape[:-2])
    count_obj = 1
    for length in lead:
        count_obj *= length
    cdef size_t count = count_obj, nlead = len(lead), t
    cdef int rc = AR_OK
    cdef ar_error err
    err.msg[0] = 0
    cdef ar_represent_stack_opts so
    cdef ar_represent_stack_result res
    ar_represent_stack_opts_init(&so)
    so.represent = ro[0]
    so.masked = mo[0]
    so.mask = (NULL if is_auto else mask) if masked else NULL
    so.infer_mask = masked and is_auto
    hs = None if head_size is None else _size(head_size, "head_size", fn)
    if hs is not None:
        so.head_size_given = 1
        so.head_size = hs
    cdef ar_cview *views = <ar_cview *>malloc(max(count, 1) * sizeof(ar_cview))
    cdef size_t *shape = <size_t *>malloc(max(nlead, 1) * sizeof(size_t))
    if views == NULL or shape == NULL:
        free(views)
        free(shape)
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"{count} matrix views")
    for t in range(nlead):
        shape[t] = lead[t]
    # An empty stack calls no analysis (the library refuses count 0): its
    # record has no slices and a summary of zeros.
    memset(&res, 0, sizeof(res))
    res.n = arr.shape[-1]
    res.axis = ro.axis
    res.head_size_given = so.head_size_given
    cdef char *text = NULL
    try:
        if count > 0:
            arr = _views_of(arr, views, fn, "p")
            with nogil:
                rc = ar_represent_stack_run(views, count, &so, &res, &err)
            if rc != AR_OK and res.failed_slice != SIZE_MAX:
                check_status(rc, "ar_masked_analyze" if masked else "ar_represent_analyze", &err,
                             f"slice {_slice_index(lead, res.failed_slice)} of p")
            check_status(rc, "ar_represent_workspace_alloc")
        rc = ar_represent_stack_json(&res, shape, nlead, AR_JSON_NONFINITE, &text, &err)
        rec = _record_of_json(RepresentStack, rc, text, &err, "ar_represent_stack_json")
    finally:
        free(views)
        free(shape)
        ar_represent_stack_result_free(&res)
    # the tested size, which tells a verdict from its absence (not in the JSON)
    return dataclasses.replace(rec, slices=tuple(
        dataclasses.replace(sl, tested_head_size=hs) for sl in rec.slices))


def represent(p, *, axis="auto", mask=None, x=None, head_size=None, precision=None,
              rtol=None, atol=0.0, sum_tol=None, smooth=0.0, tau=None, accuracy=None,
              extra_rank=4, verify_seconds=None, certificate=False, fit=True,
              max_iter=None, seed=0, bias=None):
    """Decide whether one attention head reproduces the stochastic n x n
    matrix p, with the minimal head size and a certificate, as ``attnrank
    represent P.npy --json`` (docs/theory/low-rank-bottleneck.md,
    docs/theory/masked-attention.md).

    p
        an n x n map, stochastic along ``axis``, or a stack of maps over any
        leading axes (batch x heads x n x n): one record per slice with a
        summary, as the CLI on a stack.  Any numpy layout, torch tensors;
        float32 / float16 / bfloat16 set the default tolerances' precision.
    axis
        "auto" (default): read from the sums, within the sum tolerance of
        ``precision`` (or ``sum_tol``): rows summing to 1 are PyTorch's layout
        (``softmax(dim=-1)``, rows as queries, "row"), columns the paper's
        ("col"); the record's ``axis`` says which.  A map whose rows and
        columns both sum to 1 (doubly stochastic: symmetric, a permutation)
        raises ArgumentError, one whose neither do DomainError; a stack takes
        one axis for all its slices (a doubly stochastic slice goes with the
        others) and names the slice that disagrees.  A 1 x 1 map is "col"
        (the same map either way).  "row" or "col" states the axis, as the
        CLI's ``--axis`` (whose default stays "col").
    mask
        None (or "none"): the unmasked analysis.  With any full-column-rank
        input (needs d >= n) the minimal head size is rank(Pi log P) <=
        n - 1, Pi centring each column; with a given x (d x n, tokens as
        columns) p may be unreachable for every head size and the failing
        constraint is named.  Exact zeros are refused (a masked map? give the
        mask; underflow needs ``smooth``).
        A mask: "causal", "window:W" (W keys including the query's own),
        "band:W" (|i - j| < W), "prefix:P", "sink:S+window:W",
        "docs:N1/N2/...", "auto" (from the exact zeros of p; the record
        names the mask found) or a boolean n x n array in p's layout.  Zeros
        outside the mask are the mask; zeros inside and positive entries
        outside are refused.  "auto" refuses zeros inside the best-fitting
        named mask in queries that also hold entries below the dtype's
        smallest normal (underflow, float16: 6.1e-5; state that mask and
        ``smooth``); zeros no named mask explains are an irregular pattern
        (``mask.kind == "file"``).  Staircase masks (causal, prefix, documents,
        sinks with causal attention) give the EXACT minimal head size (shift
        removal and a column-innovation count at tolerance ``tau``, nats;
        default max(1e-9, 10 sqrt(n) u) max(1, max|log P|)); windows and
        bands give a proved lower bound and the smallest certificate the
        masked forward check confirmed (tried at the lower bound and up to
        ``extra_rank`` more, default 4; a certificate passes at max-abs
        error <= ``accuracy``), with the mask's generic value and its status
        (proved, verified over F_p within ``verify_seconds``, default 1, or
        conjectural).  A masked x must have full column rank.
    x
        the input X (d x n, tokens as columns); None: any full-column-rank
        input (the certificate is for X = I).  A single map only.
    head_size
        the head size K to test (default the minimal one).  Below the
        minimum: the best logit-space error (Eckart-Young; under a mask a
        lower bound from fully specified blocks) and a probability-space fit
        (L-BFGS from the truncated SVD, seeded jitter ``seed``, at most
        ``max_iter`` iterations, default 400); ``fit=False`` skips it (the
        record then says ``fit_skipped="--no-fit"`` as the CLI does).
    precision
        precision whose epsilon sets the default tolerances (default: p's
        dtype).  Unmasked: rank cut ``rtol * ||log P||_2`` with rtol = n eps
        (``rtol``, ``atol`` >= 0 override); sums within 2 max(n, 4) eps for
        float64, 2 u + n t + 2 max(n, 4) 2^-24 for float32/float16/bfloat16
        (u the storage roundoff, t its smallest subnormal; ``sum_tol``).
    smooth
        EPS in [0, 1): replace p by (p + EPS) renormalised (inside the mask
        only, with a mask) before the analysis.
    bias
        a fixed positional bias B added to the logits
        (docs/theory/positional-bias.md), as the CLI's ``--bias``: a string
        "alibi:M" (-M |i - j|), "alibi-causal:M" (-M (i - j) on keys
        j <= i), "t5:FILE" (T5 bucket values, a vector file), "file:PATH"
        (the n x n bias file) or "none", or an n x n array in p's layout.
        p is analysed as normalize(p exp(-B)) (under a mask on its
        support), the certificate is checked by softmax(S + B) against p,
        no fit runs, and the record's ``positional_bias`` gives the bias
        rank and the reach min(n - 1, head_size + bias rank).  A single map
        only.
    certificate
        True: the returned certificate carries W_q and W_k (K x d float64
        arrays, owned copies; W_q the query projection: columns as queries
        S = (W_k X)^T (W_q X) / sqrt(K), rows as queries S = (W_q X)^T
        (W_k X) / sqrt(K), PyTorch's q and k blocks of in_proj_weight), as
        ``--weights-out`` writes them.  Single maps only.

    Returns a :class:`attnrank.Represent` (unmasked), a
    :class:`attnrank.MaskedRepresent` (masked) or a
    :class:`attnrank.RepresentStack` (a stack); ``.to_dict()`` equals the
    CLI's JSON on the same input without ``source``.  Raises
    NonFiniteError for NaN/Inf, DomainError (ValueError) for a map that is
    not stochastic, not positive, or breaks the mask, SizeError for a
    non-square p or an x of the wrong width, ArgumentError for a 0-d or 1-d
    p or x (not a matrix), bad options
    or masks, UnsupportedError for complex/object data.  The GIL is released
    during the computation.

    CLI options without a keyword: ``--weights-out PREFIX`` is
    ``certificate=True`` (save ``.certificate.wq`` / ``.wk`` with
    ``numpy.save``); ``--no-fit`` is ``fit=False``; ``--json`` is
    ``.to_dict()``; ``--X FILE`` is ``x`` (an array, not a file).
    """
    cdef str fn = "ar_represent_analyze"
    arr, stored = _square_map(p, fn)
    cdef ar_precision prec = _precision(stored if precision is None else precision)
    # axis="auto" reads the maps, after every argument is checked
    axis_auto = isinstance(axis, str) and axis == "auto"
    cdef ar_axis ax = AR_AXIS_COL if axis_auto else _axis(axis, fn)
    masked = mask is not None and not (isinstance(mask, str) and mask == "none")
    cdef size_t n = arr.shape[-1]
    if not masked:
        for name, value in (("tau", tau), ("accuracy", accuracy),
                            ("verify_seconds", verify_seconds)):
            if value is not None:
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    f"{name} applies with a mask only")
    cdef ar_represent_opts ro
    ar_represent_opts_init(&ro)
    ro.axis = ax
    ro.precision = prec
    if rtol is not None:
        ro.rtol = _option_nonneg(rtol, "rtol", fn)
    ro.atol = _option_nonneg(atol, "atol", fn)
    if sum_tol is not None:
        ro.sum_tol = _option_nonneg(sum_tol, "sum_tol", fn)
    ro.smooth = _option_interval(smooth, "smooth", 0.0, 0, 1.0, 1, fn)
    cdef uint64_t c_seed
    try:
        c_seed = operator.index(seed)
    except (TypeError, OverflowError):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"seed must be an integer in [0, 2^64), got {seed!r}")
    cdef ar_masked_opts mo
    _masked_opts(&mo, ax, prec,
                 -1.0 if tau is None else _option_nonneg(tau, "tau", fn),
                 -1.0 if accuracy is None else _option_nonneg(accuracy, "accuracy", fn),
                 ro.sum_tol, ro.smooth, c_seed, _size(extra_rank, "extra_rank", fn),
                 -1.0 if verify_seconds is None else _option_nonneg(verify_seconds, "verify_seconds", fn))
    xarr = None
    if x is not None:
        if arr.ndim > 2:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "x takes a single map, p is a stack")
        xarr, x_prec = as_matrix_stack(x, fn, "x")
        if xarr.ndim != 2:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                f"x must be a single d x n matrix, got shape {xarr.shape}")
        if xarr.shape[1] != n:
            raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                            f"x must be d x n with n = {n} columns (tokens), got "
                            f"{xarr.shape[0]} x {xarr.shape[1]}")
        ro.x_precision = _precision(x_prec)
    if certificate and arr.ndim > 2:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "certificate=True takes a single map, p is a stack")
    if axis_auto:
        ax = _infer_axis(arr, prec, ro.sum_tol, fn)
        ro.axis = mo.axis = ax
    cdef ar_mask cmask = ar_mask_none()
    cdef bint is_auto = 0
    cdef ar_matrix cbias = ar_matrix_empty()
    cdef ar_bias_spec spec
    memset(&spec, 0, sizeof(spec))  # kind none: no bias
    cdef ar_cview bview
    cdef ar_represent_run_opts o
    ar_represent_run_opts_init(&o)
    if bias is not None:
        if arr.ndim > 2:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "bias takes a single map, p is a stack")
        # barr (an array given) stays referenced while the view is in use
        barr = _bias_of(bias, n, ax, &cbias, &spec, fn)
        if barr is not None:
            barr = _views_of(barr, &bview, fn, "bias")
        elif spec.kind != AR_BIAS_NONE:
            bview = ar_matrix_cview(&cbias)
        if spec.kind != AR_BIAS_NONE:
            o.bias = &bview
    if masked:
        _mask_from(mask, ax, n, 1, fn, &cmask, &is_auto)
    try:
        if arr.ndim > 2:
            return _represent_stack(arr, masked, is_auto, &cmask, &ro, &mo, head_size, fn)
        if masked:
            o.masked = mo
            o.mask = NULL if is_auto else &cmask
            o.infer_mask = is_auto
            fn = "ar_masked_analyze"
        else:
            _refuse_zeros(arr, &ro, fn)
            o.represent = ro
        o.fit_opts.seed = c_seed
        return _represent_one(arr, xarr, &o, head_size, certificate, fit, max_iter, fn, &spec)
    finally:
        ar_mask_free(&cmask)
        ar_matrix_free(&cbias)


# ---- params --------------------------------------------------------------------

def params(d=None, heads=None, *, head_size=None, layers=None, ffn=None, vocab=None,
           paper_tables=False):
    """Parameter count of a BERT-style model as Bhojanapalli et al. 2020
    count it (width d, ``heads`` heads per layer), as ``attnrank params
    --json``: token (vocabulary V), 512
    position and 2 type embeddings with LayerNorm; per layer Q/K/V/O with
    biases, 3 (d h d_p + h d_p) + h d_p d + d, two LayerNorms and an FFN
    d -> F -> d with biases; pooler d x d; MLM head transform + LayerNorm +
    output bias (decoder tied).  Defaults: layers 24, vocab 30522, ffn 4096
    for d = 512 and 1024, 3072 for d = 768, else 4 d; head_size d/h
    (standard MultiHead).

    ``paper_tables=True`` (no sizes) gives the fifteen configurations of the
    paper's Tables 1, 2A, 2B and 3A with the printed counts and the relative
    deviation: a :class:`attnrank.PaperTables`.  Otherwise a
    :class:`attnrank.ParamCount`.  Raises ArgumentError for missing, zero or
    non-dividing sizes, DomainError for sizes above 2^20 (2^32 for the
    vocabulary).

    CLI options without a keyword: ``--json`` is ``.to_dict()``.
    """
    cdef str fn = "ar_bert_params"
    cdef ar_bert_config cfg
    cdef ar_param_count pc
    cdef char *text = NULL
    cdef ar_error err
    cdef int rc
    err.msg[0] = 0
    if paper_tables:
        rc = ar_paper_tables_check(
            any(v is not None for v in (d, heads, head_size, layers, ffn, vocab)), &err)
        check_status(rc, fn, &err)
        rc = ar_paper_tables_json(AR_JSON_NONFINITE, &text, &err)
        return _record_of_json(PaperTables, rc, text, &err, "ar_paper_tables_json")
    # The rules on the sizes are the library's (ar_bert_config_make,
    # ar_bert_params); a given 0 (0 is "not given" there) by _given_size.
    rc = ar_bert_config_make(&cfg, _given_size(d, "d", fn), _given_size(heads, "heads", fn),
                             _given_size(head_size, "head_size", fn), &err)
    check_status(rc, fn, &err)
    if layers is not None:
        cfg.layers = _size(layers, "layers", fn)
    if ffn is not None:
        cfg.ffn = _size(ffn, "ffn", fn)
    if vocab is not None:
        cfg.vocab = _size(vocab, "vocab", fn)
    rc = ar_bert_params(&cfg, &pc, &err)
    check_status(rc, fn, &err)
    rc = ar_param_count_json(&cfg, &pc, AR_JSON_NONFINITE, &text, &err)
    return _record_of_json(ParamCount, rc, text, &err, "ar_param_count_json")
