# Included by _core.pyx: singular spectra of a matrix or a stack.

from libc.stdlib cimport malloc, free
from libc.stdint cimport uintptr_t

import itertools
import time

from attnrank._convert import as_matrix_stack


cdef int _view_at(const char *base, Py_ssize_t offset, size_t rows, size_t cols,
                  Py_ssize_t rs, Py_ssize_t cs, ar_cview *v) nogil:
    """The C view of one matrix of a numpy array from byte strides (only the
    strides of axes longer than 1 matter; they must be positive multiples of
    8).  AR_EINVAL when the C rules refuse the layout."""
    cdef size_t r_el = 1, c_el = 1
    if rows > 1:
        if rs <= 0 or rs % 8 != 0:
            return AR_EINVAL
        r_el = <size_t>(rs // 8)
    if cols > 1:
        if cs <= 0 or cs % 8 != 0:
            return AR_EINVAL
        c_el = <size_t>(cs // 8)
    return ar_cview_init(v, <const double *>(base + offset), rows, cols, r_el, c_el, NULL)


cdef object _slice_offsets(object arr):
    """Byte offsets of every matrix of the stack from the array's data
    pointer, in C order over the leading axes (negative strides allowed)."""
    lead = arr.shape[:-2]
    offsets = np.zeros(lead, dtype=np.int64)
    for axis, (length, stride) in enumerate(zip(lead, arr.strides[:-2])):
        shape = [1] * len(lead)
        shape[axis] = length
        offsets = offsets + (np.arange(length, dtype=np.int64) * stride).reshape(shape)
    return np.ascontiguousarray(offsets.reshape(-1))


cdef int _fill_views(object arr, ar_cview *views) except -1:
    """The views of every matrix of arr; 1 when a layout was refused (the
    caller then copies arr into C order once and retries)."""
    cdef const char *base = <const char *><uintptr_t>arr.__array_interface__["data"][0]
    cdef size_t rows = arr.shape[-2], cols = arr.shape[-1]
    cdef Py_ssize_t rs = arr.strides[-2], cs = arr.strides[-1]
    if arr.ndim == 2:  # one matrix at offset 0: no offset table
        return 1 if _view_at(base, 0, rows, cols, rs, cs, &views[0]) != AR_OK else 0
    cdef const long long[::1] offs = _slice_offsets(arr)
    cdef Py_ssize_t t
    for t in range(offs.shape[0]):
        if _view_at(base, offs[t], rows, cols, rs, cs, &views[t]) != AR_OK:
            return 1
    return 0


cdef object _spectrum_record(const ar_rank_metrics *m, tuple index, const double *s, size_t k):
    """The Spectrum of one matrix, from the library's record
    (ar_spectrum_matrix_json)."""
    cdef size_t i, nindex = len(index)
    cdef size_t *idx = <size_t *>malloc((nindex if nindex > 0 else 1) * sizeof(size_t))
    if idx == NULL:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), "ar_spectrum_matrix_json",
                               "a matrix index")
    for i in range(nindex):
        idx[i] = index[i]
    cdef char *text = NULL
    cdef ar_error err
    cdef int rc = ar_spectrum_matrix_json(m, idx, nindex, s, k, -1, AR_JSON_NONFINITE, &text,
                                          &err)
    free(idx)
    return _record_of_json(Spectrum, rc, text, &err, "ar_spectrum_matrix_json")


def spectrum(a, *, rtol=None, atol=0.0, precision=None, energy_fraction=0.99,
             seed=0, threads=0):
    """Singular values, numerical rank (with the threshold used) and the rank
    metrics of docs/theory/spectra.md (stable rank, Roy-Vetterli rank,
    participation ratio, energy rank, nuclear rank) of a matrix or of a
    stack of matrices (ar_spectrum_run_stack), as
    ``attnrank spectrum --json``.

    a
        a real matrix (2-D), or a stack of any rank over its leading axes
        (batch x heads x n x n as PyTorch returns attentions); 0-d and 1-d
        inputs are refused (ArgumentError: reshape(1, -1) for one row).
        numpy arrays of any layout (C or Fortran order, slices, transposes,
        negative strides on the leading axes) are read in
        place when float64; float32 / float16 / integers are converted to
        float64 once and set the default tolerance's precision.  torch
        tensors: detached, moved to the CPU, bfloat16 widened exactly.
    rtol, atol, energy_fraction
        as in :func:`rank_metrics`.  With neither rtol nor atol given,
        float64 data take numpy's rule (``max(m, n) * eps * sigma_1``) and
        float32, float16 and bfloat16 data the storage rule: the cut is the
        matrix's own rounding noise (a seeded Monte Carlo estimate), and
        ``tolerance.certain_rank`` counts the singular values above a
        rigorous bound of it (docs/theory/spectra.md).
    precision
        storage precision of the data; None: the input's dtype.
    seed
        seed of the storage rule's draws (as ``--seed``).
    threads
        threads over the matrices of a stack (0: one per CPU).

    Returns a :class:`attnrank.Spectrum` for one matrix, a
    :class:`attnrank.SpectrumStack` for a stack; ``.to_dict()`` is the
    CLI's JSON for the same data (without ``source`` and ``label``).  Raises
    UnsupportedError (TypeError) for complex/object/bool data,
    ArgumentError (ValueError) for a 0-d or 1-d input (not a matrix), an
    empty matrix or bad options,
    NonFiniteError (ValueError) for NaN/Inf (naming the matrix), and
    OutOfMemoryError.  The GIL is released during the computation.

    CLI options without a keyword: ``--energy F`` is ``energy_fraction``;
    ``--json`` is ``.to_dict()``; ``--csv FILE`` writes plot data
    (``.singular_values`` holds them; attnrank.torch's report has
    ``to_csv``); ``--show K`` shapes the text output only; ``--key NAME``
    picks an array of an .npz file (load it with ``numpy.load``);
    ``--random-attention`` with ``--n``, ``--d``, ``--heads``,
    ``--head-size``, ``--head``, ``--of``, ``--axis`` and ``--seed`` draws a
    random layer in the CLI (in Python, build the logits or scores of your
    layer, e.g. with :mod:`attnrank.torch`, and pass them); ``--distributed``,
    ``--block`` and ``--grid`` run ScaLAPACK under mpirun (CLI only).
    """
    cdef str fn = "ar_spectrum_run_stack"
    arr, stored = as_matrix_stack(a, fn, "a")
    prec = stored if precision is None else precision
    cdef size_t rows = arr.shape[-2], cols = arr.shape[-1]
    cdef size_t k = rows if rows < cols else cols
    lead = arr.shape[:-2]
    count_obj = 1
    for length in lead:
        count_obj *= length
    if count_obj * max(k, 1) * 8 > SIZE_MAX:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"a stack of shape {arr.shape}")
    cdef size_t count = count_obj
    try:
        sv = np.empty(tuple(lead) + (k,), dtype=np.float64)
    except (MemoryError, ValueError):
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn,
                               f"{k} singular values for each matrix of a stack {lead}")
    if count == 0:
        return SpectrumStack(matrices=(), singular_values=sv)
    cdef ar_cview *views = <ar_cview *>malloc(count * sizeof(ar_cview))
    if views == NULL:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"{count} matrix views")
    cdef double[::1] out = sv.reshape(-1)
    cdef size_t failed = 0, nthreads = _size(threads, "threads", fn)
    cdef ar_rank_opts opts = _rank_opts(rtol, atol, prec, energy_fraction, fn)
    opts.seed = _th_seed(seed, fn)
    cdef ar_rank_metrics *metrics = NULL
    cdef ar_error err
    cdef int rc = AR_OK
    cdef size_t t
    try:
        if _fill_views(arr, views):
            try:  # a layout the C views refuse (zero or overlapping strides): one copy
                arr = np.ascontiguousarray(arr)
            except (MemoryError, ValueError):
                raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn,
                                       f"a C-order copy of a (shape {arr.shape})")
            if _fill_views(arr, views):
                raise_status(AR_EINVAL, fn, f"the layout of a (strides {arr.strides})")
        metrics = <ar_rank_metrics *>malloc(count * sizeof(ar_rank_metrics))
        if metrics == NULL:
            raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"{count} results")
        with nogil:
            rc = ar_spectrum_run_stack(views, count, &opts, nthreads, &out[0], metrics, &failed,
                                       &err)
        if rc == AR_EINVAL and (<bytes>err.msg).startswith(b"{opt:energy}"):
            # The library's rule on the CLI's --energy: this face's keyword
            # is energy_fraction.
            renamed = b"{opt:energy-fraction}" + (<bytes>err.msg)[12:]
            ar_error_set(&err, AR_EINVAL, "%s", <const char *>renamed)
        if rc != AR_OK:
            where = list(np.unravel_index(failed, lead)) if lead else []
            check_status(rc, fn, &err, f"matrix {[int(i) for i in where]} of a" if lead else None)
        matrices = tuple(_spectrum_record(&metrics[t], index, &out[t * k], k)
                         for t, index in zip(range(count),
                                             itertools.product(*[range(n) for n in lead])))
    finally:
        free(views)
        free(metrics)
    if not lead:
        return matrices[0]
    return SpectrumStack(matrices=matrices, singular_values=sv)


def _c_loop_seconds(a, size_t calls):
    """Seconds per call of the C calls spectrum() makes for the float64
    matrix a (views, batch SVD, rank metrics), looped in C without the GIL:
    the reference against which bench/bench_python.py measures the binding's
    per-call overhead.  Not part of the API."""
    cdef str fn = "_c_loop_seconds"
    arr, _ = as_matrix_stack(a, fn, "a")
    if arr.ndim != 2:
        raise_status(AR_EINVAL, fn, "one matrix")
    cdef ar_cview view
    if _fill_views(arr, &view):
        raise_status(AR_EINVAL, fn, "layout")
    cdef size_t rows = arr.shape[0], cols = arr.shape[1]
    cdef size_t k = rows if rows < cols else cols
    s = np.empty(k)
    cdef double[::1] out = s
    cdef ar_rank_opts opts
    ar_rank_opts_init(&opts)
    cdef ar_rank_metrics m
    cdef size_t i, failed = 0
    cdef int rc = AR_OK
    t0 = time.perf_counter()
    with nogil:
        for i in range(calls):
            rc = ar_spectrum_svals_batch(&view, 1, &out[0], 0, &failed, NULL)
            if rc == AR_OK:
                rc = ar_rank_metrics_compute(&out[0], k, rows, cols, &opts, &m, NULL)
            if rc != AR_OK:
                break
    elapsed = time.perf_counter() - t0
    check_status(rc, fn)
    return elapsed / max(calls, 1)
