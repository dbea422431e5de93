# cython: language_level=3, binding=True
"""The C extension of attnrank: thin bindings of the C library.

Use the package (``import attnrank``), not this module: its names are
re-exported there, and its helpers (``check_status``) are for bindings.

Conventions every binding here follows:

- a C call's status goes through :func:`check_status` (AR_OK returns, any
  other status raises the :class:`attnrank.Error` subclass of that status
  with the C message; see attnrank._errors);
- arguments are checked and converted while holding the GIL, the C call runs
  without it (``with nogil``), the result is built afterwards;
- results are the records of attnrank._results, named as the CLI's JSON.
"""

from libc.stdint cimport SIZE_MAX
from libc.string cimport memcpy, memset

from attnrank._capi cimport (
    AR_OK, AR_EINVAL, AR_ENOMEM, AR_ENONFINITE, AR_ENOCONV, AR_EIO, AR_EFORMAT,
    AR_EUNSUPPORTED, AR_EDOMAIN, AR_ELAPACK, AR_ESIZE, AR_NSTATUS,
    ar_error, ar_error_set, ar_strerror, ar_version,
    ar_option_render, ar_error_message, AR_OPTION_STYLE_PYTHON, ar_option_check_nonneg, ar_option_check_interval,
    ar_precision, AR_PREC_F64, ar_precision_name, ar_precision_parse,
    ar_rank_opts, ar_rank_opts_init, ar_rank_metrics, ar_rank_metrics_compute,
    ar_rank_metrics_stored,
    ar_cview, ar_cview_init, ar_spectrum_svals_batch, ar_spectrum_run_stack,
    ar_json_free, AR_JSON_NONFINITE,
    ar_spectrum_matrix_json, ar_rank_metrics_json,
)

import json as _jsonlib
import math
import operator

import numpy as np

from attnrank._errors import (
    ArgumentError, OutOfMemoryError, UnsupportedError, error_class,
)
from attnrank._results import RankMetrics, Spectrum, SpectrumStack, Tolerance

# The numbers of enum ar_status as compiled in, for the tests to check
# attnrank._errors.STATUS_NAMES against the header.
STATUS_CODES = {
    "AR_OK": AR_OK, "AR_EINVAL": AR_EINVAL, "AR_ENOMEM": AR_ENOMEM,
    "AR_ENONFINITE": AR_ENONFINITE, "AR_ENOCONV": AR_ENOCONV, "AR_EIO": AR_EIO,
    "AR_EFORMAT": AR_EFORMAT, "AR_EUNSUPPORTED": AR_EUNSUPPORTED,
    "AR_EDOMAIN": AR_EDOMAIN, "AR_ELAPACK": AR_ELAPACK, "AR_ESIZE": AR_ESIZE,
}
NSTATUS = AR_NSTATUS


cdef str _text(const char *s):
    return s.decode("utf-8", "replace") if s != NULL else ""


def strerror(int status):
    """ar_strerror(status): the text of a status code (never fails)."""
    return _text(ar_strerror(status))


cdef int check_status(int status, str function, const ar_error *err=NULL,
                      object detail=None) except -1:
    if status == AR_OK:
        return 0
    # The one place a C message becomes Python text: its option tokens
    # (include/attnrank/status.h) are spelled as keywords, smooth=1e-9.
    cdef ar_error copy
    copy.msg[0] = 0
    if err != NULL:
        memcpy(copy.msg, err.msg, sizeof(copy.msg))
        copy.msg[sizeof(copy.msg) - 1] = 0
    message = _text(ar_error_message(&copy, status, AR_OPTION_STYLE_PYTHON))
    raise error_class(status)(status, message, function, detail)


cdef str _python_text(const char *text):
    """Library text that may name options (a verdict's reason), in Python's
    spelling."""
    cdef bytearray buf = bytearray(<bytes>text)
    buf.append(0)
    cdef char *p = buf
    ar_option_render(p, AR_OPTION_STYLE_PYTHON)
    return _text(p)


cdef object _json_of(int status, char *text, const ar_error *err, str function):
    """The parsed JSON text of a result (attnrank/json.h, written with
    AR_JSON_NONFINITE); the text is released, a failed status raised."""
    try:
        check_status(status, function, err)
        return _jsonlib.loads(_text(text))
    finally:
        ar_json_free(text)


cdef object _record_of_json(object cls, int status, char *text, const ar_error *err,
                            str function):
    """The record cls built from a result's JSON text, the one way a
    converted binding makes its record (_Record._from_json)."""
    return cls._from_json(_json_of(status, text, err, function))


def raise_status(int status, str function, detail=None):
    """Raise the error of a non-zero C status, as check_status does, for
    checks made in Python before a C call (a dtype, a shape)."""
    if status == AR_OK:
        raise ValueError("raise_status: AR_OK is not an error")
    check_status(status, function, NULL, detail)


def _error_roundtrip(int status, str message):
    """Fill an ar_error with ar_error_set(status, message) as a C function
    reports a failure, and pass it through check_status (for the tests)."""
    cdef ar_error err
    err.msg[0] = 0
    data = message.encode("utf-8")
    cdef int rc = ar_error_set(&err, status, "%s", <const char *>data)
    check_status(rc, "ar_error_set", &err)
    return None


def version():
    """Version of the C library this extension was built with
    (ar_version(), e.g. ``"0.9.0"``)."""
    return _text(ar_version())


# ---- argument conversion (GIL held) --------------------------------------

cdef object _spectrum_array(object values, str function):
    """A C-contiguous float64 1-D copy (or the array itself when it already
    is one) of a real 1-D array-like; attnrank errors otherwise."""
    try:
        a = np.asarray(values)
    except MemoryError:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), function,
                               "converting singular_values to an array")
    except Exception as exc:
        raise UnsupportedError(
            AR_EUNSUPPORTED, strerror(AR_EUNSUPPORTED), function,
            f"singular_values is not convertible to a numpy array: {exc}") from exc
    if a.dtype.kind not in "fiu":
        raise UnsupportedError(
            AR_EUNSUPPORTED, strerror(AR_EUNSUPPORTED), function,
            f"singular_values must be real (float16, float32, float64 or integer), "
            f"got dtype {a.dtype}")
    if a.ndim != 1:
        raise ArgumentError(
            AR_EINVAL, strerror(AR_EINVAL), function,
            f"singular_values must be a 1-D vector, got shape {a.shape}")
    try:
        return np.ascontiguousarray(a, dtype=np.float64)
    except MemoryError:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), function,
                               f"a float64 copy of {a.shape[0]} singular values")


cdef size_t _size(object value, str name, str function) except? 0:
    try:
        v = operator.index(value)
    except TypeError:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), function,
                            f"{name} must be an integer, got {value!r}")
    if v < 0 or v > SIZE_MAX:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), function,
                            f"{name} must be in [0, {SIZE_MAX}], got {v}")
    return v


cdef double _real(object value, str name, str function) except? -1.0:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), function,
                            f"{name} must be a real number, got {value!r}")


cdef bytes _option_token(str name):
    """An option's name as the library's tokens spell it (status.h)."""
    return name.replace("_", "-").encode("ascii")


cdef double _option_nonneg(object value, str name, str fn) except? -1.0:
    """value as a double, finite and >= 0 by the library's rule
    (ar_option_check_nonneg; name as Python spells it).  Also for a given
    tolerance whose library default is a negative sentinel, which the
    analysis cannot tell from the default."""
    cdef double v = _real(value, name, fn)
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_option_check_nonneg(_option_token(name), v, &err), fn, &err)
    return v


cdef double _option_interval(object value, str name, double lo, bint lo_open, double hi,
                             bint hi_open, str fn) except? -1.0:
    """value as a double inside the interval by the library's rule
    (ar_option_check_interval)."""
    cdef double v = _real(value, name, fn)
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_option_check_interval(_option_token(name), v, lo, lo_open, hi, hi_open,
                                          &err), fn, &err)
    return v


cdef ar_precision _precision(object precision) except *:
    cdef ar_precision p = AR_PREC_F64
    if not isinstance(precision, str):
        try:
            precision = np.dtype(precision).name
        except TypeError:
            raise ArgumentError(
                AR_EINVAL, strerror(AR_EINVAL), "ar_precision_parse",
                f"precision must be a name or a float dtype, got {precision!r}")
    name = precision.encode("utf-8", "replace")
    if b"\0" in name:
        name = b"?"  # a C string ends at the NUL: never accept a prefix
    check_status(ar_precision_parse(name, &p, NULL),
                 "ar_precision_parse", NULL,
                 "precision must be one of float64, float32, float16, bfloat16 "
                 f"(or f64, f32, f16, bf16), got {precision!r}")
    return p


def _rank_detail(s, double rtol, double atol, double fraction):
    """Which argument ar_rank_metrics_compute refused (error path only)."""
    if not (fraction > 0.0 and fraction <= 1.0):
        return f"energy_fraction must be in (0, 1], got {fraction!r}"
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        return f"singular_values[{bad[0]}] = {s[bad[0]]!r}"
    if s.size > 1:
        up = np.flatnonzero(s[1:] > s[:-1])
        if up.size:
            i = int(up[0]) + 1
            return (f"singular values must be non-increasing: "
                    f"singular_values[{i}] = {s[i]!r} > singular_values[{i - 1}] = {s[i - 1]!r}")
    neg = np.flatnonzero(s < 0)
    if neg.size:
        return f"singular values must be >= 0: singular_values[{neg[0]}] = {s[neg[0]]!r}"
    if not math.isfinite(rtol):
        return f"rtol must be finite, got {rtol!r}"
    if not (atol >= 0.0 and math.isfinite(atol)):
        return f"atol must be finite and >= 0, got {atol!r}"
    return None


cdef ar_rank_opts _rank_opts(object rtol, object atol, object precision,
                             object energy_fraction, str fn) except *:
    """The C options of the rank keywords (rtol None: the default rule)."""
    cdef ar_rank_opts opts
    ar_rank_opts_init(&opts)
    cdef ar_error err
    err.msg[0] = 0
    if rtol is not None:
        # A negative rtol is the library's default: a given one meets the
        # library's rule here (the other rules: ar_rank_opts_check).
        opts.rtol = _real(rtol, "rtol", fn)
        if ar_option_check_nonneg("rtol", opts.rtol, &err) != AR_OK:  # in the detail, as ar_rank_opts_check
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn, _python_text(err.msg))
    opts.atol = _real(atol, "atol", fn)
    opts.energy_fraction = _real(energy_fraction, "energy_fraction", fn)
    opts.precision = _precision(precision)
    return opts


cdef object _rank_metrics_record(const ar_rank_metrics *out):
    """The RankMetrics of a C result: the library's metrics block
    (ar_rank_metrics_json) after the shape."""
    cdef char *text = NULL
    cdef ar_error err
    rc = ar_rank_metrics_json(out, AR_JSON_NONFINITE, &text, &err)
    block = _json_of(rc, text, &err, "ar_rank_metrics_json")
    return RankMetrics._from_json({"rows": out.m, "cols": out.n, **block})


# ---- bindings --------------------------------------------------------------

def rank_metrics(singular_values, shape=None, *, rtol=None, atol=0.0,
                 precision="float64", energy_fraction=0.99):
    """Numerical rank and effective ranks of a singular spectrum
    (ar_rank_metrics_compute; docs/theory/spectra.md, docs/python.md).

    singular_values
        a 1-D real array-like in non-increasing order, >= 0, finite: float16,
        float32, float64 or integer, any strides (a contiguous float64 copy is
        made when it is not one already).  Empty is allowed (rank 0).
    shape
        ``(m, n)``, the shape of the matrix the spectrum came from; it sets
        the default rtol ``max(m, n) * eps(precision)``.  Default
        ``(k, k)`` with k = len(singular_values).
    rtol
        relative tolerance, >= 0; None for the default rule.
    atol
        absolute tolerance, >= 0 (default 0).
    precision
        storage precision whose epsilon sets the default rtol: ``"float64"``
        (default), ``"float32"``, ``"float16"``, ``"bfloat16"`` (or f64, f32,
        f16, bf16, or a numpy float dtype).  Pass the precision the matrix was
        stored in, as the CLI does for a float32 .npy.
    energy_fraction
        the f of the energy rank, in (0, 1] (default 0.99).

    Returns a :class:`attnrank.RankMetrics`; ``.to_dict()`` has the keys of
    ``attnrank spectrum --json``.  Raises attnrank.UnsupportedError
    (TypeError) for complex, object, bool or string data, ArgumentError
    (ValueError) for a wrong shape, an increasing or negative spectrum or a
    bad tolerance, NonFiniteError (ValueError) for NaN or Inf, and
    OutOfMemoryError when the float64 copy cannot be made.  The GIL is
    released during the computation.
    """
    cdef str fn = "ar_rank_metrics_compute"
    s = _spectrum_array(singular_values, fn)
    cdef const double[::1] view = s
    cdef size_t k = view.shape[0]
    cdef size_t m = k, n = k
    if shape is not None:
        try:
            m_obj, n_obj = shape
        except (TypeError, ValueError):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                f"shape must be a pair (m, n), got {shape!r}")
        m = _size(m_obj, "shape[0]", fn)
        n = _size(n_obj, "shape[1]", fn)
    cdef ar_rank_opts opts = _rank_opts(rtol, atol, precision, energy_fraction, fn)

    cdef const double *ptr = &view[0] if k > 0 else NULL
    cdef ar_rank_metrics out
    cdef int rc
    with nogil:
        rc = ar_rank_metrics_compute(ptr, k, m, n, &opts, &out, NULL)
    if rc != AR_OK:
        check_status(rc, fn, NULL, _rank_detail(s, opts.rtol, opts.atol, opts.energy_fraction))

    return _rank_metrics_record(&out)


include "_options.pxi"
include "_spectrum.pxi"
include "_represent.pxi"
include "_bias.pxi"
include "_heads.pxi"
include "_softmax_bottleneck.pxi"
include "_state_dict.pxi"
include "_weights.pxi"
include "_seprank.pxi"
include "_depthwidth.pxi"
include "_collapse.pxi"
include "_check.pxi"
include "_head_scores.pxi"
include "_circuits.pxi"
include "_verify.pxi"
