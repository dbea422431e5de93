# Included by _core.pyx: representability of attention maps by one head
# (unmasked and masked), head-size bounds of a layer, BERT parameter counts;
# the Python faces of ``attnrank represent``, ``heads`` and ``params``.

from libc.string cimport memcpy

from attnrank._capi cimport (
    uint64_t, ar_matrix, ar_view, ar_matrix_free, ar_matrix_empty, ar_matrix_cview, ar_axis,
    AR_AXIS_COL, AR_AXIS_ROW, ar_axis_name, ar_axis_parse, ar_axis_infer_stack, ar_model_config,
    ar_model_config_read, ar_mask, ar_mask_kind, AR_MASK_NONE,
    ar_mask_none, ar_mask_free, ar_mask_copy, ar_mask_kind_name, ar_mask_parse, ar_mask_format,
    ar_mask_check_size, ar_mask_from_pattern, ar_mask_simplify, ar_mask_syntax_list,
    ar_mask_fixes_length, ar_mask_param, ar_mask_params, AR_MASK_MAX_PARAMS, ar_generic_status,
    ar_generic_status_name, ar_mask_generic, ar_model_masks, ar_model_masks_from_config,
    ar_represent_opts, ar_represent_opts_init, ar_represent_result, ar_certificate,
    AR_HEAD_SIZE_MIN, ar_fit_stop_name, ar_fit_method_name, ar_fit_result,
    ar_target_family_name, ar_family_error, ar_head_config, ar_bottleneck_heads_opts,
    ar_bottleneck_heads_opts_init, ar_bottleneck_heads_report, ar_bottleneck_heads_analyze,
    AR_HEADS_ERRORS_SKIP, AR_HEADS_ERRORS_ESTIMATE, ar_bert_config, ar_bert_config_init,
    ar_param_count, ar_bert_params, ar_param_count_json, ar_paper_tables_json,
    ar_masked_opts, ar_masked_opts_init, ar_masked_result, AR_MASKED_STAIRCASE, ar_represent_stack_opts,
    ar_represent_stack_opts_init, ar_represent_stack_slice, ar_represent_stack_result,
    ar_represent_stack_run, ar_represent_stack_result_free, ar_represent_run_opts,
    ar_represent_run_opts_init, ar_represent_run_result, ar_represent_run, ar_represent_run_check,
    ar_represent_run_result_free, ar_represent_side, ar_represent_side_name,
    AR_REPRESENT_SIDE_NONE, AR_REPRESENT_STEP_CERTIFICATE, AR_REPRESENT_STEP_FIT,
    ar_option_render, AR_OPTION_STYLE_CLI, ar_bias_spec, AR_BIAS_NONE, AR_BIAS_ALIBI,
    AR_BIAS_ALIBI_CAUSAL, AR_BIAS_FILE, ar_bias_parse, ar_bias_matrix, ar_bias_kind_name,
    AR_REPRESENT_STEP_BIAS,
)

import dataclasses
import os

from attnrank._errors import DomainError, SizeError
from attnrank._results import (
    Certificate, Fit, Heads, HeadsModel, InnovationGap, InputX,
    Mask, MaskedRepresent, MaskedTolerance, PaperTables,
    ParamCount, PositionalBias, Represent, RepresentSlice, RepresentStack,
    RepresentSummary, RepresentTolerance, Residual, Smoothing,
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

cdef object _u64(uint64_t v):
    # as the CLI's JSON: above INT64_MAX a decimal string
    return v if v <= 9223372036854775807 else str(v)


cdef ar_axis _axis(object axis, str fn) except *:
    cdef ar_axis a = AR_AXIS_COL
    ok = isinstance(axis, str) and "\0" not in axis
    if ok:
        data = axis.encode("utf-8", "replace")
        ok = ar_axis_parse(data, &a) == AR_OK
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


cdef double _nonneg(object value, str name, str fn) except? -1.0:
    cdef double v = _real(value, name, fn)
    if not (v >= 0.0):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be >= 0, got {value!r}")
    return v


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


cdef dict _generic_fields(const ar_mask_generic *g):
    return dict(generic_min_head_size=g.value,
                generic_status=_text(ar_generic_status_name(g.status)),
                generic_lower=g.lower, worst_case_lower=g.worst_lower,
                worst_case_upper=g.worst_upper, formula=_text(g.formula))


cdef int _mask_from(object mask, ar_axis axis, size_t n, bint for_map, str fn,
                    ar_mask *out, bint *is_auto) except -1:
    """out = the mask of a string (or, for a map, a boolean n x n array in
    the map's layout); is_auto for "auto".  Raises on a bad mask."""
    cdef ar_error err
    err.msg[0] = 0
    out[0] = ar_mask_none()
    is_auto[0] = 0
    if isinstance(mask, str):
        if mask == "auto" or mask.startswith("file:"):
            if not for_map:
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    f"mask {mask!r} needs an attention map; give a kind "
                                    f"({_mask_syntaxes()})")
            if mask == "auto":
                is_auto[0] = 1
                return 0
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "mask 'file:PATH' is the CLI's; pass the pattern as a "
                                "boolean n x n array (numpy.load(PATH) != 0)")
        data = mask.encode("utf-8", "replace")
        if b"\0" in data:
            data = b"?"
        check_status(ar_mask_parse(data, out, &err), "ar_mask_parse", &err)
        if n > 0:
            rc = ar_mask_check_size(out, n, &err)
            if rc != AR_OK:
                ar_mask_free(out)
                check_status(rc, "ar_mask_check_size", &err, f"mask {mask!r} at n = {n}")
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
    if pat.shape != (n, n):
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"a mask array must be n x n = {n} x {n} (the map's shape), got {pat.shape}")
    if not np.all((pat == 0) | (pat == 1)):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn, "a mask array must hold 0 and 1 only")
    # query-major: rows are queries for the row axis, columns for the column axis
    qm = pat if axis == AR_AXIS_ROW else pat.T
    buf = np.ascontiguousarray(qm != 0, dtype=np.uint8)
    cdef const unsigned char[::1] flat = buf.reshape(-1)
    check_status(ar_mask_from_pattern(out, &flat[0], n, &err), "ar_mask_from_pattern", &err,
                 "the mask array")
    ar_mask_simplify(out)
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


cdef object _fit_record(const ar_fit_result *f):
    return Fit(head_size=f.k, kl_mean=f.kl_mean, kl_max=f.kl_max, fro_error=f.fro_error,
               max_abs_error=f.max_abs_error, start_kl_mean=f.start_kl_mean, jitter=f.jitter,
               iterations=f.iterations, converged=bool(f.converged),
               start_kept=bool(f.start_kept), seed=_u64(f.seed),
               stop=_text(ar_fit_stop_name(f.stop)), method=_text(ar_fit_method_name(f.method)))


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

cdef object _represent_record(const ar_represent_result *r, ar_represent_side failed,
                              size_t head_size, bint representable, object cert, object logit,
                              object fit, object fit_skipped):
    svals = np.empty(r.n, dtype=np.float64)
    cdef double[::1] sv = svals
    if r.n > 0:
        memcpy(&sv[0], r.centred_svals, r.n * sizeof(double))
    smoothing = None
    if r.smoothed:
        smoothing = Smoothing(eps=r.smooth.eps, zeros=r.smooth.zeros,
                              min_before=r.smooth.min_before, min_after=r.smooth.min_after,
                              max_change=r.smooth.max_change)
    if r.x_given:
        x = InputX(given=True, d=r.d, rank=r.x_rank, threshold=r.x_threshold,
                   ones_residual=r.ones_residual, shift_forced=bool(r.shift_forced))
    else:
        x = InputX(given=False)
    side = None if failed == AR_REPRESENT_SIDE_NONE else _text(ar_represent_side_name(failed))
    return Represent(
        n=r.n, axis=_text(ar_axis_name(r.axis)),
        tolerance=RepresentTolerance(threshold=r.threshold, rtol=r.rtol, atol=r.atol,
                                     precision=_text(ar_precision_name(r.precision)),
                                     log_norm2=r.log_norm2, sum_tol=r.sum_tol,
                                     feasibility_tol=r.feasibility_tol,
                                     rule="storage" if r.storage_rule else None,
                                     certain_threshold=r.certain_threshold
                                     if r.storage_rule else None,
                                     certain_rank=r.certain_rank if r.storage_rule else None),
        max_sum_defect=r.max_sum_defect, smoothing=smoothing, x=x, feasible=bool(r.feasible),
        residual=Residual(key=r.residual_key, query=r.residual_query,
                          relative=r.residual_rel, failed=side),
        centred_rank=r.centred_rank,
        min_head_size=r.min_head_size if r.feasible else None,
        head_size=head_size, representable=bool(representable), singular_values=svals,
        certificate=cert,
        logit_error=logit[0] if logit is not None else None,
        logit_error_rel=logit[1] if logit is not None else None,
        fit=fit, fit_skipped=fit_skipped)


cdef object _fit_skipped(ar_represent_run_result *res):
    """Why no fit ran, or None; spelled as the CLI's (the record says
    "--no-fit", as the CLI's JSON)."""
    if res.fit_skipped[0] == 0:
        return None
    return _text(ar_option_render(res.fit_skipped, AR_OPTION_STYLE_CLI))


cdef object _bias_record(const ar_represent_run_result *res, tuple info):
    """The positional_bias record of a biased run (info: kind, slope, source)."""
    if not res.biased:
        return None
    b = &res.bias_rank
    return PositionalBias(kind=info[0], slope=info[1], source=info[2],
                          bias_rank=b.lower if b.exact else None, bias_rank_lower=b.lower,
                          bias_rank_upper=b.upper, reach=res.bias_reach)


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


cdef object _represent_plain(object arr, object xarr, ar_represent_opts *ro, object head_size,
                             bint want_weights, bint do_fit, object max_iter, uint64_t seed,
                             str fn, const ar_cview *bias, tuple bias_info):
    cdef ar_represent_run_opts o
    ar_represent_run_opts_init(&o)
    o.represent = ro[0]
    o.bias = bias
    o.fit_opts.seed = seed
    cdef ar_represent_run_result res
    _run_map(arr, xarr, &o, head_size, do_fit, max_iter, fn, &res)
    try:
        cert_rec = logit = fit = None
        if res.have_certificate:
            cert_rec = Certificate(
                head_size=res.certificate.head_size, d=res.certificate.d,
                max_abs_error=res.certificate.max_abs, kl_mean=res.certificate.kl_mean,
                kl_max=res.certificate.kl_max, logit_max_abs=res.certificate.logit_max_abs,
                wq=_copy_matrix(&res.certificate.wq) if want_weights else None,
                wk=_copy_matrix(&res.certificate.wk) if want_weights else None)
        if res.have_logit_error:
            logit = (res.logit_error, res.logit_error_rel)
        if res.have_fit:
            fit = _fit_record(&res.fit)
        fit_skipped = _fit_skipped(&res)
        rec = _represent_record(&res.plain, res.failed, res.head_size, res.representable == 1,
                                cert_rec, logit, fit, fit_skipped)
        return rec if not res.biased else dataclasses.replace(
            rec, positional_bias=_bias_record(&res, bias_info))
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


cdef object _represent_masked(object arr, object xarr, const ar_mask *mask,
                              const ar_masked_opts *mo, object head_size, bint want_weights,
                              bint do_fit, object max_iter, str fn, const ar_cview *bias,
                              tuple bias_info):
    cdef ar_represent_run_opts o
    ar_represent_run_opts_init(&o)
    o.masked = mo[0]
    o.bias = bias
    o.mask = mask
    o.infer_mask = mask == NULL
    o.fit_opts.seed = mo.seed
    cdef ar_represent_run_result res
    _run_map(arr, xarr, &o, head_size, do_fit, max_iter, fn, &res)
    cdef const ar_masked_result *r = &res.masked_res
    cdef const ar_certificate *cert = &res.certificate
    try:
        verdict = None if res.representable < 0 else bool(res.representable)
        cert_rec = lower = fit = None
        if res.have_certificate:
            cert_rec = Certificate(
                head_size=cert.head_size, d=cert.d, max_abs_error=cert.max_abs,
                kl_mean=cert.kl_mean, kl_max=cert.kl_max, logit_max_abs=cert.logit_max_abs,
                rounding_ratio=cert.rounding_ratio if r.storage_rule else None,
                wq=_copy_matrix(&cert.wq) if want_weights else None,
                wk=_copy_matrix(&cert.wk) if want_weights else None)
        if res.have_logit_error_lower:
            lower = res.logit_error_lower
        if res.have_fit:
            fit = _fit_record(&res.fit)
        fit_skipped = _fit_skipped(&res)
        if r.x_given:
            x = InputX(given=True, d=r.d, rank=r.x_rank, threshold=r.x_threshold)
        else:
            x = InputX(given=False)
        generic = _generic_fields(&r.generic) if r.generic_known else dict.fromkeys(
            ["generic_min_head_size", "generic_status", "generic_lower", "worst_case_lower",
             "worst_case_upper", "formula"])
        smoothing = None
        if r.smoothed:
            smoothing = Smoothing(eps=r.smooth.eps, zeros=r.smooth.zeros,
                                  min_before=r.smooth.min_before, min_after=r.smooth.min_after,
                                  max_change=r.smooth.max_change)
        return MaskedRepresent(
            n=r.n, axis=_text(ar_axis_name(r.axis)), mask=_mask_record(r.mask),
            mask_source="inferred" if r.mask_inferred else "given",
            tolerance=MaskedTolerance(tau=r.tau, accuracy=r.accuracy,
                                      precision=_text(ar_precision_name(r.precision)),
                                      sum_tol=r.sum_tol,
                                      rule="storage" if r.storage_rule else None,
                                      log_rounding=r.log_rounding if r.storage_rule else None),
            max_sum_defect=r.max_sum_defect, x=x,
            method="staircase" if r.method == AR_MASKED_STAIRCASE else "bounds",
            status="exact" if r.exact else "bounds",
            min_head_size=r.min_head_size if r.exact or r.storage_rule else None,
            min_head_size_lower=r.lower,
            min_head_size_upper=r.upper if r.certified else None,
            block_lower=r.block_lower, blocks=r.blocks,
            innovation_gap=InnovationGap(min_innovative=r.min_innovative,
                                         max_not_innovative=r.max_not_innovative),
            head_size=res.head_size, representable=verdict, certificate=cert_rec,
            logit_error_lower=lower, fit=fit, fit_skipped=fit_skipped, smoothing=smoothing,
            positional_bias=_bias_record(&res, bias_info), **generic)
    finally:
        ar_represent_run_result_free(&res)


cdef tuple _bias_of(object bias, size_t n, ar_axis axis, ar_matrix *out, str fn):
    """(array or None, (kind, slope, source)) for bias=: a string is parsed
    and built by the library (files read as the CLI reads them) into out;
    an array must be n x n in p's layout.  (None, None) for "none"."""
    cdef ar_bias_spec spec
    cdef ar_error err
    cdef int rc
    err.msg[0] = 0
    if isinstance(bias, str):
        data = bias.encode("utf-8", "replace")
        if b"\0" in data:
            data = b"?"
        check_status(ar_bias_parse(data, &spec, &err), "ar_bias_parse", &err)
        if spec.kind == AR_BIAS_NONE:
            return None, None
        with nogil:
            rc = ar_bias_matrix(&spec, n, axis, <size_t>-1, out, &err)
        check_status(rc, "ar_bias_matrix", &err)
        alibi = spec.kind == AR_BIAS_ALIBI or spec.kind == AR_BIAS_ALIBI_CAUSAL
        return None, (_text(ar_bias_kind_name(spec.kind)), spec.slope if alibi else None,
                      None if alibi else _text(spec.path))
    barr, _ = as_matrix_stack(bias, fn, "bias")
    if barr.shape != (n, n):
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"bias must be n x n = {n} x {n} (p's shape), got {barr.shape}")
    return barr, (_text(ar_bias_kind_name(AR_BIAS_FILE)), None, None)


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
    # The loop, the verdicts and the summary are the library's
    # (ar_represent_stack_run); this face names the slices and builds records.
    lead = tuple(int(m) for m in arr.shape[:-2])
    cdef size_t n = arr.shape[-1]
    count_obj = 1
    for length in lead:
        count_obj *= length
    cdef size_t count = count_obj
    cdef size_t k
    cdef int rc = AR_OK
    cdef ar_error err
    err.msg[0] = 0
    cdef ar_represent_stack_opts so
    cdef ar_represent_stack_result res
    cdef ar_represent_stack_slice *sl
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
    if views == NULL:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"{count} matrix views")
    # An empty stack calls nothing (the library refuses count 0): its summary is zeros.
    res.count = res.exact = res.max = res.median = res.failed = 0
    res.slices = NULL
    slices = []
    try:
        if count > 0:
            arr = _views_of(arr, views, fn, "p")
            with nogil:
                rc = ar_represent_stack_run(views, count, &so, &res, &err)
            if rc != AR_OK and res.failed_slice != SIZE_MAX:
                check_status(rc, "ar_masked_analyze" if masked else "ar_represent_analyze", &err,
                             f"slice {_slice_index(lead, res.failed_slice)} of p")
            check_status(rc, "ar_represent_workspace_alloc")
        for k in range(res.count):
            sl = &res.slices[k]
            exact, certified = bool(sl.exact), bool(sl.certified)
            verdict = None if sl.representable < 0 else bool(sl.representable)
            slices.append(RepresentSlice(
                index=_slice_index(lead, k), mask=_text(sl.mask),
                mask_source="inferred" if sl.mask_inferred else "given",
                status="exact" if exact else "bounds", min_head_size_lower=sl.lower,
                min_head_size=sl.lower if exact else None,
                min_head_size_upper=sl.upper if certified else None,
                representable=verdict, tested_head_size=hs))
        summary = RepresentSummary(slices=res.count, exact=res.exact,
                                   max_min_head_size=res.max,
                                   median_min_head_size=res.median)
    finally:
        free(views)
        ar_represent_stack_result_free(&res)
    axis_name = _text(ar_axis_name(mo.axis if masked else ro.axis))
    return RepresentStack(n=n, axis=axis_name, slices=tuple(slices), summary=summary)


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
        ro.rtol = _nonneg(rtol, "rtol", fn)
    ro.atol = _nonneg(atol, "atol", fn)
    if sum_tol is not None:
        ro.sum_tol = _nonneg(sum_tol, "sum_tol", fn)
    ro.smooth = _real(smooth, "smooth", fn)
    if not (ro.smooth >= 0.0 and ro.smooth < 1.0):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"smooth must be in [0, 1), got {smooth!r}")
    cdef uint64_t c_seed
    try:
        c_seed = operator.index(seed)
    except (TypeError, OverflowError):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"seed must be an integer in [0, 2^64), got {seed!r}")
    cdef ar_masked_opts mo
    _masked_opts(&mo, ax, prec,
                 -1.0 if tau is None else _nonneg(tau, "tau", fn),
                 -1.0 if accuracy is None else _nonneg(accuracy, "accuracy", fn),
                 ro.sum_tol, ro.smooth, c_seed, _size(extra_rank, "extra_rank", fn),
                 -1.0 if verify_seconds is None else _nonneg(verify_seconds, "verify_seconds", fn))
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
    cdef ar_cview bview
    cdef const ar_cview *bp = NULL
    bias_info = None
    if bias is not None:
        if arr.ndim > 2:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "bias takes a single map, p is a stack")
        # barr (an array given) stays referenced while the view is in use
        barr, bias_info = _bias_of(bias, n, ax, &cbias, fn)
        if barr is not None:
            barr = _views_of(barr, &bview, fn, "bias")
        elif bias_info is not None:
            bview = ar_matrix_cview(&cbias)
        if bias_info is not None:
            bp = &bview
    if masked:
        _mask_from(mask, ax, n, 1, fn, &cmask, &is_auto)
    try:
        if arr.ndim > 2:
            return _represent_stack(arr, masked, is_auto, &cmask, &ro, &mo, head_size, fn)
        if masked:
            return _represent_masked(arr, xarr, NULL if is_auto else &cmask, &mo, head_size,
                                     certificate, fit, max_iter, "ar_masked_analyze", bp,
                                     bias_info)
        _refuse_zeros(arr, &ro, fn)
        return _represent_plain(arr, xarr, &ro, head_size, certificate, fit, max_iter,
                                c_seed, fn, bp, bias_info)
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
    if paper_tables:
        if any(v is not None for v in (d, heads, head_size, layers, ffn, vocab)):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "paper_tables=True takes no size arguments")
        rc = ar_paper_tables_json(AR_JSON_NONFINITE, &text, &err)
        return _record_of_json(PaperTables, rc, text, &err, "ar_paper_tables_json")
    if d is None or heads is None:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "needs d and heads (or paper_tables=True)")
    cdef size_t cd = _size(d, "d", fn), ch = _size(heads, "heads", fn)
    if ch == 0 or cd == 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn, "d and heads must be >= 1")
    if head_size is None and cd % ch != 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"heads {ch} does not divide d {cd}; give head_size")
    ar_bert_config_init(&cfg, cd, ch, cd // ch if head_size is None else _size(head_size, "head_size", fn))
    if layers is not None:
        cfg.layers = _size(layers, "layers", fn)
    if ffn is not None:
        cfg.ffn = _size(ffn, "ffn", fn)
    if vocab is not None:
        cfg.vocab = _size(vocab, "vocab", fn)
    rc = ar_bert_params(&cfg, &pc)
    check_status(rc, fn, NULL, "sizes too large to count (limit 2^20 per size)"
                 if rc == AR_EDOMAIN else None)
    rc = ar_param_count_json(&cfg, &pc, AR_JSON_NONFINITE, &text, &err)
    return _record_of_json(ParamCount, rc, text, &err, "ar_param_count_json")
