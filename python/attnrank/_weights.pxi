# Included by _core.pyx (after _represent.pxi and _softmax_bottleneck.pxi,
# whose helpers it uses, and _state_dict.pxi): QK circuits of a model's
# safetensors weights (ar_weights_analyze_model), on disk or a state dict in
# memory; the Python face of ``attnrank weights``.

from attnrank._capi cimport (
    ar_safetensors, ar_safetensors_open, ar_safetensors_close, ar_safetensors_dir,
    ar_error_printable, ar_model_config, ar_model_config_parse, ar_model_config_read,
    ar_weights_opts, ar_weights_opts_init, ar_weights_opts_tolerance, ar_weights_report,
    ar_weights_analyze_model, ar_weights_analyze_path, ar_weights_report_free, ar_weights_report_json,
    ar_option_render, AR_OPTION_STYLE_PYTHON,
)

import collections.abc
import json as _json
import re

from attnrank._results_weights import Weights

# The given rule's note: its text names the options, so it is the face's (the
# CLI's words, so that to_dict() equals its JSON), not the library record's.
_W_NOTE = ("--rtol/--atol replace the default rule: rank = #{sigma_i > max(atol, rtol sigma_1)}; "
           "certain_rank and default_rank are still reported")


# ---- arguments (GIL held) -------------------------------------------------------

cdef size_t _positive(object value, str name, str fn) except? 0:
    """An optional size keyword given (not None): an integer >= 1."""
    cdef size_t v = _size(value, name, fn)
    if v == 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn, f"{name} must be >= 1, got 0")
    return v


cdef tuple _layer_range(object value, str fn):
    """(first, last) of "A-B", "A", an integer or a pair, first <= last."""
    bad = ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                        f"layer_range must be 'A-B' or 'A' (A <= B), an integer or a pair "
                        f"(A, B), got {value!r}")
    if isinstance(value, str):
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", value)
        if m is None:
            raise bad
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
    elif isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise bad
        first, last = value
    else:
        first = last = value
    try:
        first, last = operator.index(first), operator.index(last)
    except TypeError:
        raise bad
    if first < 0 or last < first or last > SIZE_MAX:
        raise bad
    return first, last


cdef bytes _pattern_bytes(object value, str name, str fn):
    if not isinstance(value, str) or "\0" in value:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be a string without NUL bytes, got {value!r}")
    return value.encode("utf-8")  # its rules are the library's (ar_weights_opts_check)


cdef bytes _model_path(object model_dir, str fn):
    try:
        path = os.fsencode(model_dir)
    except TypeError:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"model_dir must be a path (str, bytes or os.PathLike), got "
                            f"{type(model_dir).__name__}")
    if b"\0" in path or len(path) == 0:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"model_dir must be a non-empty path without NUL bytes, got "
                            f"{model_dir!r}")
    return path


cdef object _model_source_error(str fn, str message):
    return ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn, message)


cdef bint _is_path(object value):
    return isinstance(value, (str, bytes, os.PathLike))


cdef object _given_config(object config, str fn):
    """config= beside a state dict: None (no config), ("text", JSON bytes)
    of a mapping, or ("path", bytes) of a config.json.  True (the default)
    reads nothing: a state dict has no directory to look in."""
    if config is None or config is False or config is True:
        return None
    if isinstance(config, collections.abc.Mapping):
        try:
            text = _json.dumps(dict(config), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise _model_source_error(fn, f"config= mapping is not JSON (a config.json's "
                                          f"contents): {e}") from None
        return ("text", text.encode("utf-8"))
    if _is_path(config):
        path = os.fsencode(config)
        if b"\0" in path or len(path) == 0:
            raise _model_source_error(fn, f"config= must be a non-empty path without NUL bytes, "
                                          f"got {config!r}")
        return ("path", path)
    raise _model_source_error(fn, f"config= with state_dict= must be a dict (config.json's "
                                  f"contents), a path to a config.json, or None, got "
                                  f"{type(config).__name__}")


cdef int _read_given_config(object source, ar_model_config *cfg) except -1:
    """Parse or read the config of _given_config into cfg: 1 when there is one."""
    if source is None:
        return 0
    kind, data = source
    cdef const char *cdata = <bytes>data
    cdef size_t clen = len(<bytes>data)
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    if kind == "text":
        with nogil:
            rc = ar_error_printable(&err, ar_model_config_parse(cdata, clen, "config= (dict)",
                                                                cfg, &err))
        check_status(rc, "ar_model_config_parse", &err)
    else:
        with nogil:
            rc = ar_error_printable(&err, ar_model_config_read(cdata, cfg, &err))
        check_status(rc, "ar_model_config_read", &err)
    return 1


# ---- the record (GIL held) ---------------------------------------------------------

cdef object _weights_record(ar_weights_report *r):
    """The library's record (ar_weights_report_json) with the mask reason in
    Python's spelling and, under the given rule, the face's tolerance note."""
    cdef char *text = NULL
    cdef ar_error err
    err.msg[0] = 0
    ar_option_render(r.masks.reason, AR_OPTION_STYLE_PYTHON)
    cdef int rc = ar_weights_report_json(r, AR_JSON_NONFINITE, &text, &err)
    d = _json_of(rc, text, &err, "ar_weights_report_json")
    if r.rtol_given:
        d["tolerance"]["note"] = _W_NOTE
    return Weights._from_json(d)


# ---- the binding -------------------------------------------------------------------

def weights(model_dir=None, *, state_dict=None, n=None, precision=None, mask=None, layer_range=None,
            q_pattern=None, k_pattern=None, heads=None, head_size=None, kv_heads=None,
            context=None, config=True, rtol=None, atol=0.0, seed=0, energy=0.99):
    """QK-circuit spectra and head-size verdicts of a trained model's
    safetensors weights, as ``attnrank weights MODEL_DIR --json``
    (include/attnrank/weights.h, docs/weights.md).

    Per layer and head of a trained model (safetensors: one file, a
    directory, or a sharded model.safetensors.index.json), the QK circuit
    W_q^h^T W_k^h (d x d, rank <= d_head): its singular values from the two
    factors (never the dense d x d SVD), numerical rank and the rank
    metrics of docs/theory/spectra.md, and the head-size verdict of the
    low-rank bottleneck at the model's context length
    (max_position_embeddings of config.json) and at ``n``: the largest
    attention pattern rank a head reaches (min(rank, n - 1)), whether
    d_head < n - 1, and the FixedMultiHead alternative (d_p = n) with its
    parameter cost.  Query and key projections are found by the BERT
    (attention.self.query/key), GPT-2 (fused c_attn, Conv1D layout) and
    LLaMA (self_attn.q_proj/k_proj, grouped-query) conventions, or by
    ``q_pattern``/``k_pattern`` with a {layer} placeholder (Linear [out, in]
    layout).  Rank of the stored weights (docs/weights.md), per head, with u
    the unit roundoff of the storage type (F16 2^-11, BF16 2^-8, F32
    2^-24): certain rank above tau_cert (Weyl bound of the worst-case
    rounding error, a rank certainly not storage noise) and default rank
    (rule uniform-rounding-mc) above 4 x the largest of 4 seeded Monte Carlo
    draws of ||dA^T B + A^T dB||_2, dA_ij uniform in [-u|a_ij|, u|a_ij|]
    (capped at tau_cert, a model of the rounding, not a bound); ``rtol`` /
    ``atol`` replace the default rule.  Q/K biases do not enter the
    circuit; rotary embeddings are not applied (reported).

    model_dir
        the model: a directory (model.safetensors, an index, or every
        *.safetensors in it), a .safetensors file or an index; str, bytes or
        os.PathLike.  Give it or ``state_dict``, not both.
    state_dict
        the model's weights already in memory instead: a mapping name ->
        torch tensor or numpy array (``model.state_dict()``), named as in
        the checkpoint.  float64, float32, float16 and bfloat16 (a torch
        tensor; numpy has none) are analysed; integer and bool entries
        (position ids) are carried as their dtype and ignored unless named
        as q/k.  C-contiguous CPU memory is read in place, without a copy;
        other values (a transposed view, a slice, a GPU tensor, big-endian
        bytes) are copied once.  torch is imported only by the caller.  The
        result equals ``weights(model_dir)`` of a single-file checkpoint of
        the same tensors (``files`` is 1).
    n
        also judge the heads at sequence length n (an integer >= 1; default
        None: only at the context length).
    precision
        judge rounding as if the weights were stored in this type
        ("float64", "float32", "float16", "bfloat16"; default None: as
        stored).
    mask
        the verdicts' mask (default None: the family's, from config.json;
        bidirectional when the family is unknown): "none", "causal",
        "window:W", "band:W", "prefix:P", "sink:S+window:W".
    layer_range
        analyse layers A..B only: "A-B", "A", an integer or a pair (A, B).
    q_pattern, k_pattern
        query and key tensor name (or suffix) with {layer}, Linear layout;
        both or neither.
    heads
        query heads (default None: config.json).
    head_size
        head size (default None: config head_dim, else rows / heads).
    kv_heads
        key heads (default None: config, else key rows / head size).
    context
        context length (default None: max_position_embeddings).
    config
        with model_dir: read config.json beside the model (default True;
        ``False`` is ``--no-config``: ignore it, the layout then comes from
        the tensor shapes and the keywords).  With state_dict: a dict (the
        contents of config.json, e.g. ``model.config.to_dict()``), a path
        to a config.json, or None/False/True for none (a state dict has no
        directory to look in).
    rtol
        relative rank tolerance, >= 0: replaces the default rule
        (uniform-rounding-mc).
    atol
        absolute rank tolerance, >= 0 (> 0: replaces the default rule;
        default 0).
    seed
        base seed of the default rule's draws, an integer in [0, 2^64)
        (default 0); head (layer, head) uses ar_seed_derive(seed, layer,
        head).
    energy
        energy-rank fraction, in (0, 1] (default 0.99).

    CLI options without a keyword: ``--no-config`` (use ``config=False``),
    ``--json`` (use the record's ``.to_dict()``), ``--csv FILE`` (one row
    per head: iterate the record, or ``.to_pandas()``), ``--heatmap
    FILE.png`` (a heat map of layer x head: ``.grid(field)`` gives the
    layers x heads array to plot), ``--heatmap-metric M`` (rank,
    roy-vetterli, stable, participation, energy, nuclear: the field given
    to ``.grid``, e.g. ``"roy_vetterli_rank"``).

    Returns a :class:`attnrank.Weights`: iterating it gives one
    :class:`attnrank.QKHead` per head (layer, head and the CLI's per-head
    fields); ``.to_dict()`` equals the CLI's JSON without ``source``;
    ``.to_pandas()`` is a DataFrame (needs pandas).  Raises FileError
    (OSError) for a missing model or an unreadable file, FormatError for a
    corrupt safetensors file or config.json, UnsupportedError for
    non-float query/key tensors or an unknown layout, NonFiniteError for
    NaN/Inf weights, ArgumentError for bad keywords or a layout that does
    not fit (heads not dividing the rows, no layer in layer_range), for
    both or neither of model_dir and state_dict, and for a state-dict entry
    that is no tensor or array, has a non-string key or a dtype without a
    safetensors counterpart (complex, object).  Messages name the
    state-dict source ``<state_dict>`` and the tensor.  The GIL is released
    while the model is read and analysed.
    """
    cdef str fn = "ar_weights_analyze_model"
    if model_dir is not None and state_dict is not None:
        raise _model_source_error(fn, "give the model as model_dir or as state_dict=, not both")
    if model_dir is None and state_dict is None:
        raise _model_source_error(fn, "give the model: model_dir (safetensors on disk) or "
                                      "state_dict= (tensors in memory)")
    path = views = given_config = None
    if state_dict is None:
        path = _model_path(model_dir, fn)
        if isinstance(config, collections.abc.Mapping) or _is_path(config):
            raise _model_source_error(fn, "config= as a dict or a path goes with state_dict=; "
                                          "with model_dir it is True (read config.json beside "
                                          "the model) or False")
    else:
        views = _state_dict_views(state_dict)
        given_config = _given_config(config, fn)
    cdef ar_weights_opts o
    ar_weights_opts_init(&o)
    if n is not None:
        o.n = _positive(n, "n", fn)
    if precision is not None:
        o.precision = _precision(precision)
        o.precision_given = 1
    if layer_range is not None:
        o.layer_first, o.layer_last = _layer_range(layer_range, fn)
        o.layer_range = 1
    qb = kb = None  # the rules on the patterns are the library's (ar_weights_opts_check)
    if q_pattern is not None:
        qb = _pattern_bytes(q_pattern, "q_pattern", fn)
        o.q_pattern = <const char *>qb
    if k_pattern is not None:
        kb = _pattern_bytes(k_pattern, "k_pattern", fn)
        o.k_pattern = <const char *>kb
    if heads is not None:
        o.heads = _positive(heads, "heads", fn)
    if head_size is not None:
        o.head_dim = _positive(head_size, "head_size", fn)
    if kv_heads is not None:
        o.kv_heads = _positive(kv_heads, "kv_heads", fn)
    if context is not None:
        o.context = _positive(context, "context", fn)
    cdef double c_atol = _option_nonneg(atol, "atol", fn)
    cdef double c_rtol = 0.0 if rtol is None else _option_nonneg(rtol, "rtol", fn)
    ar_weights_opts_tolerance(&o, rtol is not None, c_rtol, c_atol)
    o.seed = _u64_arg(seed, "seed", fn)
    o.energy_fraction = _real(energy, "energy", fn)
    cdef ar_mask cmask = ar_mask_none()
    cdef bint is_auto = 0
    if mask is not None:
        _mask_from(mask, AR_AXIS_ROW, 0, 0, fn, &cmask, &is_auto)
        o.mask = &cmask

    cdef const char *cpath = NULL
    cdef int read_config = 1 if config else 0
    cdef ar_safetensors *st = NULL
    cdef ar_model_config cfg
    cdef ar_weights_report rep
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    cdef bint found = 0
    memset(&cfg, 0, sizeof(cfg))
    try:
        if views is not None:
            # the arrays stay referenced by views until the handle is closed
            _open_state_dict(views, &st)
            found = _read_given_config(given_config, &cfg)
            with nogil:
                rc = ar_error_printable(&err, ar_weights_analyze_model(
                    st, &cfg if found else NULL, &o, &rep, &err))
        else:
            cpath = path
            with nogil:
                rc = ar_weights_analyze_path(cpath, read_config, &o, &rep, &err)
        check_status(rc, fn, &err)
        try:
            return _weights_record(&rep)
        finally:
            ar_weights_report_free(&rep)
    finally:
        ar_safetensors_close(st)
        ar_mask_free(&cmask)
