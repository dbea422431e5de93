# Included by _core.pyx (after _spectrum.pxi, _state_dict.pxi and
# _weights.pxi, whose helpers it uses): the circuits of one head from its
# factors and of a checkpoint; the Python face of attnrank/circuits.h,
# attnrank/circuits_model.h and ``attnrank circuits``.

from attnrank._capi cimport (
    ar_circuit_opts, ar_circuit_opts_init, ar_copying_scores, ar_circuit_copying,
    ar_circuit_factor, ar_circuit_factor_empty, ar_circuit_factor_ov, ar_circuit_factor_qk,
    ar_circuit_factor_free, ar_composition, AR_COMPOSITION_Q, AR_COMPOSITION_K,
    AR_COMPOSITION_V, ar_composition_name, ar_circuit_composition,
    ar_precision_eps,
    AR_CIRCUITS_COMP_Q, AR_CIRCUITS_COMP_K, AR_CIRCUITS_COMP_V,
    ar_circuits_opts, ar_circuits_opts_init, ar_circuits_head, ar_circuits_pair,
    ar_circuits_report, ar_circuits_analyze_model, ar_circuits_analyze_path,
    ar_circuits_report_free,
    ar_circuit_embed, ar_circuit_embed_empty, ar_circuit_embed_init, ar_circuit_embed_free,
    ar_circuit_full_ov, ar_cview_transpose, ar_circuits_report_json,
)

from attnrank._results_circuits import Circuits, CopyingScores


cdef object _circuit_matrix(object a, str fn, str name, ar_cview *view):
    """(array, precision): a real matrix read in place when float64 (any
    layout the C views accept), else converted once; view set on it."""
    arr, precision = as_matrix_stack(a, fn, name)
    if arr.ndim != 2:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be one matrix, got shape {tuple(arr.shape)}")
    if _fill_views(arr, view):
        arr = np.ascontiguousarray(arr)
        if _fill_views(arr, view):
            raise_status(AR_EINVAL, fn, f"the layout of {name}")
    return arr, precision


def copying_scores(W_V, W_O, *, precision=None):
    """Copying scores of one head's OV circuit W_O W_V from its factors
    (ar_circuit_copying, docs/theory/circuits.md), as the ``copying`` block
    of ``attnrank circuits --json``.

    W_V
        the head's value projection, d_head x d (column convention: the
        head writes W_O W_V x for a token x).
    W_O
        its output projection, d x d_head.  numpy arrays (any layout) or
        torch tensors; float64 is read in place.
    precision
        the storage precision the trace's certified bound assumes
        ("float64", "float32", "float16", "bfloat16"; default None: the
        coarser of the two inputs' dtypes, float64 for numpy float64).

    Returns a :class:`attnrank.CopyingScores` with s_eig (NaN when every
    eigenvalue is zero to its error bound: a nilpotent core), s_nuc, s_sym,
    their z figures, the certified trace and its sign, and the core's
    eigenvalues.  Raises SizeError when the shapes do not chain,
    NonFiniteError for NaN/Inf, ArgumentError for empty or non-matrix
    inputs.  The GIL is released while the library computes.

    >>> import numpy as np
    >>> s = attnrank.copying_scores(np.eye(2, 5), np.eye(5, 2))
    >>> s.s_eig, s.s_nuc, s.s_sym, s.sign_certain
    (1.0, 1.0, 1.0, True)
    """
    cdef str fn = "ar_circuit_copying"
    cdef ar_cview vv, vo
    av, pv = _circuit_matrix(W_V, fn, "W_V", &vv)
    ao, po = _circuit_matrix(W_O, fn, "W_O", &vo)
    cdef ar_circuit_opts opts
    ar_circuit_opts_init(&opts)
    if precision is not None:
        opts.storage = _precision(precision)
    else:
        opts.storage = _precision(pv)
        if ar_precision_eps(_precision(po)) > ar_precision_eps(opts.storage):
            opts.storage = _precision(po)
    cdef size_t h = vv.rows
    re = np.zeros(max(h, 1))
    im = np.zeros(max(h, 1))
    cdef double[::1] cre = re, cim = im
    cdef ar_copying_scores s
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_error_printable(&err, ar_circuit_copying(vv, vo, &opts, &s, &cre[0], &cim[0],
                                                         &err))
    check_status(rc, fn, &err)
    return _copying_record(&s, re[:h] + 1j * im[:h])


cdef object _copying_record(const ar_copying_scores *s, object eigenvalues):
    return CopyingScores(
        d=s.d, head_size=s.d_head, precision=_text(ar_precision_name(s.opts.storage)),
        s_eig=s.s_eig, s_nuc=s.s_nuc, s_sym=s.s_sym, z_eig=s.z_eig, z_nuc=s.z_nuc,
        z_sym=s.z_sym, s_eig_defined=bool(s.eig_defined),
        nonzero_eigenvalues=s.nonzero_eigs, eigenvalue_eta=s.eig_eta,
        min_rcond=s.min_rcond, ill_conditioned=bool(s.ill_conditioned),
        nuclear_norm=s.nuclear_norm, trace=s.trace.trace, trace_bound=s.trace.bound,
        sign_certain=bool(s.trace.sign_certain), eigenvalues=eigenvalues)


cdef ar_composition _composition_mode(object mode, str fn) except *:
    if mode == "q":
        return AR_COMPOSITION_Q
    if mode == "k":
        return AR_COMPOSITION_K
    if mode == "v":
        return AR_COMPOSITION_V
    raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                        f"mode must be 'q', 'k' or 'v', got {mode!r}")


def composition_score(earlier, later, *, mode):
    """Composition score ||M_2 M_1||_F / (||M_2||_F ||M_1||_F) of an earlier
    head into a later one from their factors (ar_circuit_composition,
    docs/theory/circuits.md): M_1 = W_O W_V of the earlier head and, in the
    column convention, M_2 = W_QK^T (mode "q"), W_QK = W_Q^T W_K (mode
    "k") or the later head's W_O W_V (mode "v") -- TransformerLens's
    scores.  The null root mean square for rotation-invariant heads is
    1 / sqrt(d).

    earlier
        the pair (W_V, W_O) of the earlier head (d_head x d and d x d_head).
    later
        (W_Q, W_K) of the later head (both d_head x d) for modes "q" and
        "k", its (W_V, W_O) for mode "v".
    mode
        "q", "k" or "v".

    Returns a float (NaN when a circuit is zero).  Raises SizeError when
    the widths differ, ArgumentError for a bad mode or shapes.

    >>> import numpy as np
    >>> e = np.eye(4, 2)
    >>> round(attnrank.composition_score((e.T, e), (e.T, e.T), mode="k"), 12)
    0.707106781187
    """
    cdef str fn = "ar_circuit_composition"
    cdef ar_composition kind = _composition_mode(mode, fn)
    try:
        wv1, wo1 = earlier
        a2, b2 = later
    except (TypeError, ValueError):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "earlier and later are pairs of matrices")
    cdef ar_cview v1, o1, x2, y2
    keep = (_circuit_matrix(wv1, fn, "earlier W_V", &v1),
            _circuit_matrix(wo1, fn, "earlier W_O", &o1),
            _circuit_matrix(a2, fn, "later first factor", &x2),
            _circuit_matrix(b2, fn, "later second factor", &y2))
    cdef ar_circuit_factor f1 = ar_circuit_factor_empty(), f2 = ar_circuit_factor_empty()
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    cdef double score = 0.0
    with nogil:
        rc = ar_circuit_factor_ov(&f1, v1, o1, &err)
        if rc == AR_OK:
            if kind == AR_COMPOSITION_V:
                rc = ar_circuit_factor_ov(&f2, x2, y2, &err)
            else:
                rc = ar_circuit_factor_qk(&f2, x2, y2, &err)
        if rc == AR_OK:
            rc = ar_circuit_composition(&f2, kind, &f1, &score, NULL, &err)
        ar_circuit_factor_free(&f1)
        ar_circuit_factor_free(&f2)
        rc = ar_error_printable(&err, rc)
    check_status(rc, fn, &err)
    del keep
    return score


cdef unsigned _composition_bits(object composition, str fn) except? 0:
    if isinstance(composition, str):
        items = composition.split(",") if composition else []
    else:
        items = list(composition)
    cdef unsigned bits = 0, b
    for item in items:
        b = {"q": AR_CIRCUITS_COMP_Q, "k": AR_CIRCUITS_COMP_K, "v": AR_CIRCUITS_COMP_V}.get(item, 0)
        if b == 0 or (bits & b):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                f"composition: expected a list of q, k, v such as 'q,k,v', "
                                f"got {composition!r}")
        bits |= b
    if bits == 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"composition: expected q, k and/or v, got {composition!r}")
    return bits


def circuits(model_dir=None, *, state_dict=None, ov=None, qk=False, full=False,
             composition=None, tl=False, layer_range=None, head_range=None, precision=None,
             heads=None, head_size=None, kv_heads=None, config=True):
    """Circuits of every head of a trained model (safetensors, the naming
    conventions of ``attnrank weights``: GPT-2, LLaMA with grouped-query
    attention, BERT), from the factors, never the d x d products, as
    ``attnrank circuits MODEL --json`` (attnrank/circuits_model.h,
    docs/theory/circuits.md).  Raw stored weights by default: no LayerNorm
    folding or centring (``tl=True`` applies TransformerLens's).

    model_dir
        the model: a directory, a .safetensors file or an index (as
        :func:`weights`).  Give it or ``state_dict``, not both.
    state_dict
        the weights in memory instead, as for :func:`weights`.
    ov
        copying scores and singular values of the OV circuits (default None:
        on unless qk or composition is given).
    qk
        the QK circuit spectra and ranks, as :func:`weights` computes them.
    full
        the copying scores of the full OV circuits W_U W_O W_V W_E^T (V x V,
        never formed) per head (``"full_copying"``, not certified: its z
        fields and ``trace_bound`` are None), and ``full_circuits`` naming
        the embedding, the unembedding (``"tied"`` without lm_head.weight)
        and V.  FormatError when no token embedding is stored.
    composition
        composition modes, "q,k,v" or a subset ("v", ["q", "k"]): every head
        of an earlier layer into every head of a later layer.
    tl
        TransformerLens's default preprocessing (``--tl``; from_pretrained's
        fold_ln, center_writing_weights, center_unembed): the pre-attention
        norm's gain folded into W_Q, W_K, W_V and the final one into the
        unembedding; for LayerNorm models (GPT-2) the reading weights, W_O,
        W_E and the unembedding also centred over d; the unembedding centred
        over the vocabulary.  ``weight_preprocessing`` is then "tl" and
        ``weights_centred`` says whether the centring over d applied
        (False for RMSNorm).  The traces are then not certified.
        UnsupportedError for BERT (post-LayerNorm), FormatError when a gain
        is not stored.
    layer_range
        analyse layers A..B only: "A-B", "A", an integer or a pair.
    head_range
        analyse heads A..B of each layer only (the same forms).
    precision
        judge rounding as if the weights were stored in this type (default
        None: as stored).
    heads
        query heads (default None: config.json).
    head_size
        head size (default None: config head_dim, else rows / heads).
    kv_heads
        key/value heads (default None: config, else value rows / head size).
    config
        read config.json beside the model (default True; False is
        ``--no-config``); with state_dict a dict or a path, as for
        :func:`weights`.

    CLI options without a keyword: ``--no-config`` (use ``config=False``),
    ``--json`` (use the record's ``.to_dict()``), ``--csv FILE`` (one row
    per head: iterate the record), ``--top N`` (the text output's strongest
    pairs: sort ``.composition["pairs"]`` by ``scaled``), ``--heatmap FILE``,
    ``--heatmap-score S`` and ``--heatmap-composition FILE`` (the CLI's gnuplot
    heat maps: plot the heads' scores or the pairs yourself).

    Returns a :class:`attnrank.Circuits`; ``.to_dict()`` equals the CLI's
    JSON without ``source``.  Raises FileError, FormatError,
    UnsupportedError, NonFiniteError and ArgumentError as :func:`weights`
    does.  The GIL is released while the model is read and analysed.
    """
    cdef str fn = "ar_circuits_analyze_model"
    if model_dir is not None and state_dict is not None:
        raise _model_source_error(fn, "give the model as model_dir or as state_dict=, not both")
    if model_dir is None and state_dict is None:
        raise _model_source_error(fn, "give the model: model_dir (safetensors on disk) or "
                                      "state_dict= (tensors in memory)")
    path = views = given_config = None
    if state_dict is None:
        path = _model_path(model_dir, fn)
    else:
        views = _state_dict_views(state_dict)
        given_config = _given_config(config, fn)
    cdef ar_circuits_opts o
    ar_circuits_opts_init(&o)
    o.qk = 1 if qk else 0
    o.full = 1 if full else 0
    o.tl = 1 if tl else 0
    if composition is not None:
        o.composition = _composition_bits(composition, fn)
    o.ov = 1 if (ov or (ov is None and not qk and o.composition == 0)) else 0
    if layer_range is not None:
        o.layer_first, o.layer_last = _layer_range(layer_range, fn)
        o.layer_range = 1
    if head_range is not None:
        o.head_first, o.head_last = _layer_range(head_range, fn)
        o.head_range = 1
    if precision is not None:
        o.precision = _precision(precision)
        o.precision_given = 1
    if heads is not None:
        o.heads = _positive(heads, "heads", fn)
    if head_size is not None:
        o.head_dim = _positive(head_size, "head_size", fn)
    if kv_heads is not None:
        o.kv_heads = _positive(kv_heads, "kv_heads", fn)
    cdef const char *cpath = NULL
    cdef int read_config = 1 if config else 0
    cdef ar_safetensors *st = NULL
    cdef ar_model_config cfg
    cdef ar_circuits_report rep
    cdef char *text = NULL
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    cdef bint found = 0
    memset(&cfg, 0, sizeof(cfg))
    try:
        if views is not None:
            _open_state_dict(views, &st)
            found = _read_given_config(given_config, &cfg)
            with nogil:
                rc = ar_error_printable(&err, ar_circuits_analyze_model(
                    st, &cfg if found else NULL, &o, &rep, &err))
        else:
            cpath = path
            with nogil:
                rc = ar_circuits_analyze_path(cpath, read_config, &o, &rep, &err)
        check_status(rc, fn, &err)
        try:
            rc = ar_circuits_report_json(&rep, AR_JSON_NONFINITE, &text, &err)
            return _record_of_json(Circuits, rc, text, &err, "ar_circuits_report_json")
        finally:
            ar_circuits_report_free(&rep)
    finally:
        ar_safetensors_close(st)


def full_copying_scores(heads, W_E, W_U=None):
    """Copying scores of full OV circuits W_U W_O W_V W_E^T (V x V, never
    formed) of several heads through one embedding (ar_circuit_embed_init
    once, then ar_circuit_full_ov per head; docs/theory/circuits.md, "Full
    circuits through the embedding").

    heads
        a sequence of pairs (W_V, W_O), d_head x d and d x d_head.
    W_E
        the token embedding as stored, V x d (E = W_E^T).
    W_U
        the unembedding V x d (default None: tied, W_U = W_E).

    Returns a list of :class:`attnrank.CopyingScores`, one per head (not
    certified: ``trace_bound`` and the z fields are NaN).  Raises SizeError,
    NonFiniteError and ArgumentError as :func:`copying_scores`.  The GIL is
    released while the library computes.
    """
    cdef str fn = "ar_circuit_full_ov"
    cdef ar_cview we, wu, vv, vo
    ae, _ = _circuit_matrix(W_E, fn, "W_E", &we)
    if W_U is None:
        wu = we
    else:
        au, _ = _circuit_matrix(W_U, fn, "W_U", &wu)
    cdef ar_circuit_embed emb = ar_circuit_embed_empty()
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    cdef ar_copying_scores s
    out = []
    with nogil:  # E = W_E^T: the transposed view, no copy
        rc = ar_error_printable(&err, ar_circuit_embed_init(&emb, ar_cview_transpose(we), wu, &err))
    try:
        check_status(rc, "ar_circuit_embed_init", &err)
        for pair in heads:
            try:
                a, b = pair
            except (TypeError, ValueError):
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    "heads is a sequence of pairs (W_V, W_O)")
            keep = (_circuit_matrix(a, fn, "W_V", &vv), _circuit_matrix(b, fn, "W_O", &vo))
            with nogil:
                rc = ar_error_printable(&err, ar_circuit_full_ov(&emb, vv, vo, NULL, &s, NULL,
                                                                 &err))
            check_status(rc, fn, &err)
            out.append(_copying_record(&s, None))
            del keep
    finally:
        ar_circuit_embed_free(&emb)
    return out
