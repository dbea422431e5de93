# Included by _core.pyx: head-type scores of attention maps, the Python face
# of ar_head_scores_compute (attnrank/head_scores.h).  The scores come from
# the library, one call per map of a batch (the library has no stack type);
# this file converts the maps and the token ids and gathers the results.

from attnrank._capi cimport (
    ar_axis, AR_AXIS_COL, AR_AXIS_ROW,
    ar_head_score, AR_HEAD_SCORE_PREVIOUS_TOKEN, AR_HEAD_SCORE_INDUCTION,
    AR_HEAD_SCORE_DUPLICATE_TOKEN, AR_HEAD_NSCORES, ar_head_score_name,
    AR_HEAD_TARGETS_NONE, AR_HEAD_TARGETS_TOKENS, AR_HEAD_TARGETS_PERIOD,
    ar_head_targets_name, ar_head_scores_opts, ar_head_scores_opts_init, ar_head_scores,
    ar_head_scores_compute,
)
from libc.stdint cimport int64_t

from attnrank._convert import _is_torch_tensor
from attnrank._errors import SizeError
from attnrank._results_scores import SCORE_NAMES, HeadScores


cdef ar_axis _head_scores_axis(object axis, str fn) except *:
    # the default here is "row" (PyTorch's layout), whatever other entry
    # points default to
    if isinstance(axis, str) and axis == "row":
        return AR_AXIS_ROW
    if isinstance(axis, str) and axis in ("col", "column"):
        return AR_AXIS_COL
    raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                        f"axis must be 'row' (rows as queries) or 'col' (columns as "
                        f"queries), got {axis!r}")


def _head_scores_tokens(tokens, tuple lead, size_t n, str fn):
    """(ids, inner): the token ids as a C-order int64 array of shape
    (rows, n), and how many consecutive maps of the batch share a row.
    tokens has shape (n,), or the first k leading axes of the maps and n
    (input_ids (batch, n) for attentions (batch, heads, n, n))."""
    if _is_torch_tensor(tokens):
        tokens = tokens.detach().cpu().numpy()
    try:
        t = np.asarray(tokens)
    except Exception as exc:
        raise UnsupportedError(AR_EUNSUPPORTED, strerror(AR_EUNSUPPORTED), fn,
                               f"tokens is not convertible to a numpy array: {exc}") from exc
    if t.dtype.kind not in "iu":
        raise UnsupportedError(AR_EUNSUPPORTED, strerror(AR_EUNSUPPORTED), fn,
                               f"tokens must be integer token ids, got dtype {t.dtype}")
    if t.ndim == 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "tokens must have an axis of positions, got a scalar")
    if t.shape[-1] != n:
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"tokens has {t.shape[-1]} positions along its last axis, "
                        f"the maps have n = {n}")
    k = t.ndim - 1
    if k > len(lead) or tuple(t.shape[:-1]) != lead[:k]:
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"tokens of shape {tuple(t.shape)} do not fit maps of leading shape "
                        f"{lead}: their leading axes must be the first leading axes of p")
    inner = 1
    for length in lead[k:]:
        inner *= length
    # uint64 ids above 2^63 wrap to negative int64: a bijection, so equal
    # ids stay equal and distinct ids distinct (only equality is used)
    ids = np.ascontiguousarray(t.astype(np.int64, copy=False).reshape(-1, n))
    return ids, inner


cdef size_t _head_scores_period(object period, size_t n, str fn) except? 0:
    if isinstance(period, bool):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"period must be an integer, got {period!r}")
    try:
        L = operator.index(period)
    except TypeError:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"period must be an integer, got {period!r}")
    if L < 0 or L > SIZE_MAX:  # 0 and L >= n reach the library, which names them
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"period {L} must be in [1, n - 1] = [1, {n - 1}] for maps of "
                            f"{n} positions")
    return L


def _head_scores_not_defined(counts, size_t total, size_t n, str targets):
    """The reason of every score that is NaN in some map (counts[s]: the
    maps where score s is not defined; with no map at all, the reasons the
    sizes and options alone give)."""
    reasons = {}
    for s in range(AR_HEAD_NSCORES):
        if s == AR_HEAD_SCORE_PREVIOUS_TOKEN:
            always, why = n == 1, "n = 1: no query has a previous token"
        elif s == AR_HEAD_SCORE_INDUCTION or s == AR_HEAD_SCORE_DUPLICATE_TOKEN:
            always = targets == "none"
            why = "no tokens or period given" if always else "no token occurs twice"
        else:
            continue  # first_token and diagonal are defined for every n >= 1
        if (total == 0 and not always) or (total > 0 and counts[s] == 0):
            continue
        if 0 < counts[s] < total:
            why += f" in {counts[s]} of {total} maps (NaN there)"
        reasons[_text(ar_head_score_name(<ar_head_score>s))] = why
    return reasons


def head_scores(p, *, axis="row", tokens=None, period=None):
    """Head-type scores of an attention map or of a batch of maps
    (ar_head_scores_compute): previous-token, first-token (sink), diagonal
    (current token), induction and duplicate-token scores, as defined in
    docs/theory/head-scores.md.

    Parameters
    ----------
    p : array_like, shape (n, n) or (..., n, n)
        attention weights, >= 0 and finite (rows need not sum to one; the
        weights are used as given).  numpy arrays of any layout (C or
        Fortran order, slices, transposes) are read in place when float64;
        float32, float16 and integer maps are converted to float64 once;
        torch tensors are detached and moved to the CPU.  The maps must be
        square: queries and keys at the same positions.
    axis : {"row", "col"}
        the axis the queries lie along.  Default ``"row"``: row i holds the
        weights query i gives the keys, as PyTorch and Hugging Face return
        attentions (the library's other entry points may default
        differently; here it is always "row" unless given).  ``"col"``:
        columns are queries, the low-rank bottleneck paper's layout.
    tokens : array_like of int, shape (n,) or p.shape[:k] + (n,), optional
        the token ids of the n positions.  Shape (n,) is shared by every
        map; shape (batch, n) for maps (batch, heads, n, n) gives each
        batch element its own ids (the leading axes of tokens are the first
        leading axes of p).  Sets the induction targets (the token after
        each earlier occurrence of the current token) and the
        duplicate-token targets (the earlier occurrences).
    period : int, optional
        for a repeated sequence without its ids: the period L,
        1 <= L <= n - 1; query i >= L has the induction target i - L + 1
        and the duplicate-token target i - L.  Not together with tokens.

    Returns
    -------
    HeadScores
        floats for one map; for a batch, arrays of the leading shape
        ``p.shape[:-2]``.  A score that is not defined (previous-token at
        n = 1, induction without tokens or period, or when no token
        repeats) is NaN and named, with the reason, in ``not_defined``.

    Raises
    ------
    ArgumentError
        a 0-d or 1-d input, an empty map, an unknown axis, tokens and
        period together, a period outside [1, n - 1];
    SizeError
        a rectangular map, tokens whose shape does not fit the maps;
    NonFiniteError, DomainError
        a NaN or infinite entry, a negative entry (the message names it,
        and for a batch the detail names the map);
    UnsupportedError
        complex, object or bool maps; tokens that are not integers;
    OutOfMemoryError
        when a float64 copy cannot be made.

    The GIL is released while the library computes.

    Examples
    --------
    A perfect induction head on a random block of L tokens repeated once:

    >>> L = 8
    >>> ids = np.tile(np.random.default_rng(0).permutation(1000)[:L], 2)
    >>> p = np.zeros((2 * L, 2 * L))
    >>> p[:L, 0] = 1.0
    >>> p[np.arange(L, 2 * L), np.arange(1, L + 1)] = 1.0
    >>> s = attnrank.head_scores(p, tokens=ids)
    >>> s.induction, s.induction_queries, attnrank.head_scores(p, period=L).induction
    (1.0, 8, 1.0)
    """
    cdef str fn = "ar_head_scores_compute"
    cdef ar_axis ax = _head_scores_axis(axis, fn)
    if tokens is not None and period is not None:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "give tokens or period, not both")
    arr, _ = as_matrix_stack(p, fn, "p")
    cdef size_t rows = arr.shape[-2], cols = arr.shape[-1]
    if rows != cols:
        raise SizeError(AR_ESIZE, strerror(AR_ESIZE), fn,
                        f"head scores need square maps (queries and keys at the same "
                        f"positions), got {rows} x {cols}")
    cdef size_t n = rows
    cdef tuple lead = tuple(arr.shape[:-2])
    count_obj = 1
    for length in lead:
        count_obj *= length
    cdef size_t count = count_obj

    cdef ar_head_scores_opts opts
    ar_head_scores_opts_init(&opts)
    cdef const int64_t[:, ::1] ids
    cdef const int64_t *ids_ptr = NULL
    cdef size_t inner = 1
    if tokens is not None:
        ids_obj, inner = _head_scores_tokens(tokens, lead, n, fn)
        ids = ids_obj
        opts.targets = AR_HEAD_TARGETS_TOKENS
        opts.n_tokens = n
        if count > 0:
            ids_ptr = &ids[0, 0]
    elif period is not None:
        opts.targets = AR_HEAD_TARGETS_PERIOD
        opts.period = _head_scores_period(period, n, fn)
    targets = _text(ar_head_targets_name(opts.targets))

    try:
        values = np.full((AR_HEAD_NSCORES, count), np.nan)
        queries_arr = np.zeros(count, dtype=np.int64)
        undefined = np.zeros(AR_HEAD_NSCORES, dtype=np.int64)
    except (MemoryError, ValueError):
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"scores of {count} maps")
    cdef double[:, ::1] vals = values
    cdef int64_t[::1] queries = queries_arr
    cdef int64_t[::1] undef = undefined
    cdef ar_cview *views = NULL
    cdef ar_head_scores res
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc = AR_OK
    cdef size_t t = 0, failed = 0
    cdef int s
    if count > 0:
        views = <ar_cview *>malloc(count * sizeof(ar_cview))
        if views == NULL:
            raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn, f"{count} map views")
    try:
        if count > 0 and _fill_views(arr, views):
            try:  # a layout the C views refuse (zero or negative strides): one copy
                arr = np.ascontiguousarray(arr)
            except (MemoryError, ValueError):
                raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), fn,
                                       f"a C-order copy of p (shape {arr.shape})")
            if _fill_views(arr, views):
                raise_status(AR_EINVAL, fn, f"the layout of p (strides {arr.strides})")
        with nogil:
            while t < count:
                if ids_ptr != NULL:
                    opts.tokens = ids_ptr + (t // inner) * n
                rc = ar_head_scores_compute(views[t], ax, &opts, &res, &err)
                if rc != AR_OK:
                    failed = t
                    break
                vals[0, t] = res.previous_token
                vals[1, t] = res.first_token
                vals[2, t] = res.diagonal
                vals[3, t] = res.induction
                vals[4, t] = res.duplicate_token
                queries[t] = <int64_t>res.induction_queries
                for s in range(AR_HEAD_NSCORES):
                    if not (res.defined >> s) & 1u:
                        undef[s] += 1
                t += 1
    finally:
        free(views)
    if rc != AR_OK:
        where = [int(i) for i in np.unravel_index(failed, lead)] if lead else None
        check_status(rc, fn, &err, f"map {where} of p" if lead else None)

    not_defined = _head_scores_not_defined(undefined, count, n, targets)
    fields = {}
    if lead:
        for s, name in enumerate(SCORE_NAMES):
            fields[name] = values[s].reshape(lead)
        fields["induction_queries"] = queries_arr.reshape(lead)
    else:
        for s, name in enumerate(SCORE_NAMES):
            fields[name] = float(values[s, 0])
        fields["induction_queries"] = int(queries_arr[0])
    return HeadScores(n=n, axis="row" if ax == AR_AXIS_ROW else "col", targets=targets,
                      period=int(opts.period) if period is not None else None,
                      shape=lead, previous_token_queries=n - 1,
                      not_defined=not_defined, **fields)
