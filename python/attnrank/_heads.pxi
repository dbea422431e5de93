# Included by _core.pyx: the Python face of ``attnrank heads``, on
# ar_heads_run_analyze (the sizes, their limits, the masks and the per-kind
# analyses live there) and its record, ar_heads_run_json.

from attnrank._capi cimport (
    ar_heads_run_opts, ar_heads_run_opts_init, ar_heads_run, ar_heads_run_analyze,
    ar_heads_run_free, ar_heads_run_json, ar_option_check_positive,
)


cdef size_t _given_size(object value, str name, str fn) except? 0:
    """A size keyword: None is 0 (not given); a given 0, which the library
    would read as not given, by the library's rule (ar_option_check_positive)."""
    if value is None:
        return 0
    cdef size_t v = _size(value, name, fn)
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_option_check_positive(_option_token(name), <double>v, &err), fn, &err)
    return v


def heads(d=None, heads=None, n=None, *, mask=None, head_size=None, samples=2, seed=0,
          config=None):
    """Head-size bound of an attention layer with width d, h heads and
    sequence length n, as ``attnrank heads --json``
    (docs/theory/low-rank-bottleneck.md).

    With full-column-rank inputs (needs d >= n) a head reaches every positive
    attention pattern exactly when d_p >= n - 1; the paper's Theorem 1 takes
    d_p = d >= n, and its informal multi-head form is h > d/n, i.e. d_p < n.
    Reports, for the standard MultiHead (d_p = d/h) and the FixedMultiHead
    (d_p = head_size, default the paper's n): the per-head logit rank bound
    min(d_p, d, n), both bottleneck verdicts, the rank deficit, the longest
    sequence without a bottleneck, attention parameters per layer, and the
    expected error of one head on random Dirichlet, banded and
    near-permutation targets at that head size: logit-space (Eckart-Young,
    exact) and probability-space (L-BFGS fit, an upper bound on the best).
    Estimates use ``samples`` seeded targets per family (default 2; 0 skips
    them, ``seed`` the base seed); fits run for n <= 128 and logit errors
    for n <= 1024.

    mask
        "causal", "window:W", "band:W", "prefix:P", "sink:S+window:W",
        "docs:N1/N2/...": the threshold becomes the generic minimal head size
        under the mask (causal floor(n/2), window floor(min(n, w)/2), band
        min(n, w) - 1, prefix max(p - 1, floor(n/2)), sink + window
        ceil(w/2), documents max_k floor(n_k/2); docs/theory/masked-attention.md),
        with its status (proved, verified over F_p, or conjectural), the
        worst case, and the longest context without a bottleneck (causal
        2 d_p + 1).  The error estimates (bidirectional targets) are skipped
        under a mask.
    config
        a path to a Hugging Face config.json: gives d (hidden_size, n_embd,
        d_model), h (num_attention_heads, n_head, n_heads), the head size
        (head_dim, else d/h), n (max_position_embeddings, n_positions,
        n_ctx, max_seq_len, seq_length) and the mask of the family:
        bidirectional for encoders, causal for decoders, a window where
        sliding_window is set and enabled, one record per layer kind where
        layers alternate (Gemma-2/3) or for encoder-decoders.  Arguments
        override the file; an unknown family needs ``mask``.  A config with
        a positional bias (ALiBi, T5 buckets) adds ``positional_bias``: per
        layer kind and head the bias rank and the reach
        (docs/theory/positional-bias.md).

    Returns a :class:`attnrank.Heads` (``.to_dict()`` = the CLI's JSON), or
    with ``config`` a :class:`attnrank.HeadsModel` (config, mask_reason,
    one Heads per layer kind with its label and layer count).  Raises
    ArgumentError for missing or bad sizes (h not dividing d without
    head_size), a bad mask, FileError / FormatError for an unreadable
    config, UnsupportedError for a family whose mask is unknown.  The GIL is
    released during the computation.

    CLI options without a keyword: ``--json`` is ``.to_dict()``.
    """
    cdef str fn = "ar_heads_run_analyze"
    cdef ar_heads_run_opts o
    ar_heads_run_opts_init(&o)
    o.d = _given_size(d, "d", fn)
    o.heads = _given_size(heads, "heads", fn)
    o.n = _given_size(n, "n", fn)
    o.head_size = _given_size(head_size, "head_size", fn)
    o.samples = _size(samples, "samples", fn)
    try:
        o.seed = operator.index(seed)
    except (TypeError, OverflowError):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"seed must be an integer in [0, 2^64), got {seed!r}")
    cdef ar_model_config cfg
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    cdef const char *cpath = NULL
    shown = None
    if config is not None:
        path = os.fsencode(config)
        if b"\0" in path:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), "ar_model_config_read",
                                f"config path contains a NUL byte: {config!r}")
        cpath = <const char *>path
        with nogil:
            rc = ar_model_config_read(cpath, &cfg, &err)
        check_status(rc, "ar_model_config_read", &err, f"config {os.fsdecode(config)}")
        shown = os.fsdecode(config).encode("utf-8", "replace")
        o.config = &cfg
        o.config_name = <const char *>shown
    cdef ar_mask one = ar_mask_none()
    cdef bint is_auto = 0
    if mask is not None:
        _mask_from(mask, AR_AXIS_ROW, 0, 0, fn, &one, &is_auto)
        o.mask = &one
    cdef ar_heads_run r
    cdef char *text = NULL
    try:
        with nogil:
            rc = ar_heads_run_analyze(&o, &r, &err)
        check_status(rc, fn, &err)
        ar_option_render(r.masks.reason, AR_OPTION_STYLE_PYTHON)
        rc = ar_heads_run_json(&r, &cfg if config is not None else NULL, AR_JSON_NONFINITE,
                               &text, &err)
        return _record_of_json(Heads if config is None else HeadsModel, rc, text, &err,
                               "ar_heads_run_json")
    finally:
        ar_heads_run_free(&r)
        ar_mask_free(&one)
