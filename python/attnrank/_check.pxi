# Included by _core.pyx: theorem conditions on a model configuration, the
# Python face of ``attnrank check`` (ar_check_run_add, attnrank/check.h).
# The run, its verdicts and its record come from the library; this file
# converts the arguments (sizes, a config.json's path, a list, the law).

from collections.abc import Mapping

from attnrank._capi cimport (
    ar_dw_law_paper, ar_dw_fit, ar_check_require_parse,
    ar_check_config, ar_check_run_opts, ar_check_run_opts_init, ar_check_run, ar_check_run_init,
    ar_check_run_add, ar_check_run_add_csv, ar_check_run_free, ar_check_run_json,
)

from attnrank._results_check import Check, CheckLaw, CheckReport

# The keys of an entry of ``configs``: the CSV columns of ``check --configs``.
_CHECK_ROW_KEYS = ("d", "heads", "n", "head_size", "layers", "mask", "config", "require", "name")


def _check_require(require, str fn):
    """The condition bits of require: a name, "a,b", or a sequence of them."""
    cdef unsigned bits = 0
    cdef ar_error err
    err.msg[0] = 0
    if require is None:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            "no condition required: give require=(\"no-bottleneck\", ...)")
    items = [require] if isinstance(require, str) else require
    try:
        items = list(items)
    except TypeError:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"require must be a condition name or a sequence of them, "
                            f"got {require!r}")
    for item in items:
        if not isinstance(item, str) or "\0" in item:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                f"require: a condition is a name, got {item!r}")
        data = item.encode("utf-8", "replace")
        check_status(ar_check_require_parse(data, &bits, &err), "ar_check_require_parse", &err,
                     "conditions: no-bottleneck, depth-efficient, near-optimal-allocation")
    return bits


cdef object _check_law(object law, ar_check_run_opts *o, ar_dw_fit *fit, str fn):
    """Set o's law from law (None, a mapping, a CheckLaw, a JSON file's path
    or transition points, then fit is the refit); returns the source's
    bytes, which o borrows.  The library judges whether the numbers make a
    law when a verdict needs one."""
    o.law = ar_dw_law_paper()
    if law is None:
        return b"paper"
    cdef ar_dw_opts read
    cdef list keep = []
    if isinstance(law, (Mapping, CheckLaw, str, os.PathLike)):
        # read as `depthwidth(law=...)` and the CLI's --law read it
        ar_dw_opts_init(&read)
        _dw_read_law(law, &read, keep, fn)
        o.law = read.law
        return keep[-1] if read.law_source != NULL else b"given"
    # transition points: rows depth, width[, width error]
    _dw_fit_points(law, fit, "ar_dw_fit_table")
    o.law.intercept, o.law.slope = fit.intercept, fit.slope
    o.fit = fit
    return b"fit"


cdef int _check_add(ar_check_run *run, object d, object heads, object n, object head_size,
                    object layers, object mask, unsigned bits, object config,
                    object name) except -1:
    """Judge one configuration into run (ar_check_run_add): with a config.json
    one entry per layer kind of the model (its sizes fill what is not given)."""
    cdef str fn = "ar_check_run_add"
    cdef ar_check_config c
    memset(&c, 0, sizeof(c))
    sizes = {}
    for key, value in (("d", d), ("heads", heads), ("n", n), ("layers", layers)):
        sizes[key] = 0 if value is None else _size(value, key, fn)
    c.d, c.heads, c.n, c.layers = sizes["d"], sizes["heads"], sizes["n"], sizes["layers"]
    if head_size is not None:
        c.head_size = _size(head_size, "head_size", fn)
        if c.head_size == 0:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "head_size must be >= 1 (None: d / heads)")
    if mask is not None and not isinstance(mask, str):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"mask must be a string ({_mask_syntaxes()}), "
                            f"got {type(mask).__name__}")
    if name is not None and not isinstance(name, str):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"name must be a string, got {name!r}")
    path = None
    if config is not None:
        try:
            path = os.fsencode(config)
        except TypeError:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), "ar_model_config_read",
                                f"config must be a path, got {config!r}")
        if b"\0" in path:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), "ar_model_config_read",
                                f"config path contains a NUL byte: {config!r}")
        c.config = path
    label_c = name.encode("utf-8", "replace") if name else None  # None: the library's label
    if label_c is not None:
        c.label = label_c
    mask_c = None
    if mask is not None:
        mask_c = mask.encode("utf-8", "replace")
        c.mask = mask_c
    c.require = bits
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_check_run_add(run, &c, &err)
    return check_status(rc, fn, &err)


cdef bytes _check_csv_path(object configs, str fn):
    path = os.fsencode(configs)
    if b"\0" in path or not path:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"configs: not a usable path: {configs!r}")
    return path


cdef int _check_add_csv(ar_check_run *run, bytes path, object mask, unsigned bits) except -1:
    """Judge every row of a configurations CSV into run (ar_check_run_add_csv);
    mask and bits are the defaults of the rows that give none."""
    cdef ar_check_config defaults
    memset(&defaults, 0, sizeof(defaults))
    if mask is not None and not isinstance(mask, str):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), "ar_check_run_add_csv",
                            f"mask must be a string ({_mask_syntaxes()}), "
                            f"got {type(mask).__name__}")
    mask_c = mask.encode("utf-8", "replace") if mask is not None else None
    if mask_c is not None:
        defaults.mask = mask_c
    defaults.require = bits
    cdef const char *cpath = path
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    with nogil:
        rc = ar_check_run_add_csv(run, cpath, &defaults, NULL, &err)
    return check_status(rc, "ar_check_run_add_csv", &err)


def check(d=None, heads=None, n=None, *, head_size=None, layers=None, mask=None, strict=False,
          require=None, config=None, configs=None, law=None):
    """Gate a model configuration on theorem conditions, for CI, as
    ``attnrank check --json`` (ar_check_run_add; docs/cli.md, "attnrank check").  Each
    required condition gets a verdict: whether it holds, why (the CLI's
    text), and the status of the value it rests on.

    require
        the conditions, a name, a comma-separated list or a sequence of
        names (required; the CLI's repeatable ``--require``):

        ``"no-bottleneck"``
            head size d_p >= n - 1 and d >= n: one head can produce every
            attention pattern (exact criterion; given d >= n the paper's
            d_p >= n is sufficient, not tight;
            docs/theory/low-rank-bottleneck.md).  Needs d, heads and n.
        ``"depth-efficient"``
            layers <= the fitted transition depth of the width,
            (ln d - 5.039) / 0.0555 (needs layers and d only;
            docs/theory/depth-width.md).
        ``"near-optimal-allocation"``
            layers within 15% of the optimal depth for the size 12 L d^2
            (needs layers and d).
    d, heads, n
        model width, heads per layer, sequence length.
    head_size
        head size (default d / heads; heads must then divide d).
    layers
        depth.
    mask
        attention mask: "none", "causal", "window:W", "band:W", "prefix:P",
        "sink:S+window:W", "docs:N1/N2/...".  no-bottleneck then uses the
        generic minimal head size under the mask instead of n - 1 (causal:
        floor(n/2); docs/theory/masked-attention.md); every verdict names
        the status of the value it rests on (proved, verified, conjectural;
        the allocation conditions: empirical).
    strict
        True: fail a verdict that rests on a conjectural value.
    config
        a model's config.json (a path): d, heads, the head size, n and the
        masks of the model's family from a Hugging Face config (arguments
        override it); a verdict per layer kind when layers alternate, e.g.
        Gemma-2's windowed and global layers.
    configs
        several configurations: a sequence of mappings with the keys of the
        CLI's CSV columns, ``d``, ``heads``, ``n``, ``head_size`` (or
        ``"head-size"``), ``layers``, ``mask``, ``config`` (a config.json
        path), ``require`` (conditions as above; default the ``require``
        argument) and ``name`` (the label); or the path of a CSV file
        with those columns, the CLI's ``--configs FILE`` (read by the
        library, ar_check_run_add_csv: rows without a mask or require take
        the ``mask`` and ``require`` arguments).  Excludes d, heads, n,
        head_size, layers and config.
    law
        the depth-width law of the allocation conditions: None for the
        paper's; the path of a JSON law file, or a mapping, with
        "intercept" and "slope" and optionally a positive "params_coeff"
        (each at the top level or under "law"), as the CLI reads a
        ``--law`` file; a :class:`attnrank.CheckLaw` or any record of
        :func:`depthwidth_fit`; or transition points to refit it from, an
        array of rows (depth, width[, width error]).

    CLI options without a keyword: ``--fit POINTS.csv`` refits the law from
    a CSV file: pass the points as ``law=numpy.loadtxt(path, delimiter=",",
    skiprows=1)``; ``--law FILE`` is ``law=FILE``;
    ``--json`` is ``.to_dict()`` of the result; ``--junit FILE`` has no
    equivalent: use :func:`attnrank.assert_conditions` in a pytest test and
    pytest's ``--junitxml``.

    Returns a :class:`attnrank.Check` for a configuration given by its
    sizes (``.to_dict()`` = the CLI JSON's entry of ``configs``;
    ``.passed``; ``.conditions``, one :class:`attnrank.CheckVerdict` each);
    with ``config`` or ``configs`` a :class:`attnrank.CheckReport` (one
    Check per configuration and layer kind, failed_conditions, the law
    used; ``.to_dict()`` = the CLI's JSON).  Raises ArgumentError for
    missing or bad sizes (above 2^48 included) or conditions, a bad mask or law, FileError /
    FormatError for an unreadable config, UnsupportedError for a family
    whose mask is unknown, DomainError for a law no verdict exists under or
    bad points.  The GIL is released during the computation.
    """
    cdef str fn = "ar_check_run_add"
    cdef ar_check_run_opts o
    cdef ar_dw_fit fit
    ar_check_run_opts_init(&o)
    rows = ()
    csv_path = None
    source = _check_law(law, &o, &fit, fn)
    o.law_source = source
    o.strict = bool(strict)
    o.style = AR_OPTION_STYLE_PYTHON
    if configs is not None:
        if any(v is not None for v in (d, heads, n, head_size, layers, config)):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "configs excludes d, heads, n, head_size, layers and config")
        if isinstance(configs, (str, bytes, os.PathLike)):
            csv_path = _check_csv_path(configs, fn)
        elif isinstance(configs, Mapping):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "configs must be a sequence of mappings (one per configuration) "
                                "or a CSV file's path")
        else:
            try:
                rows = list(configs)
            except TypeError:
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    f"configs must be a sequence of mappings, got {configs!r}")
            if not rows:
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    "configs: no configuration")
    cdef ar_check_run run
    ar_check_run_init(&run, &o)
    cdef char *text = NULL
    cdef ar_error err
    err.msg[0] = 0
    try:
        if configs is None:
            _check_add(&run, d, heads, n, head_size, layers, mask, _check_require(require, fn),
                       config, None)
        if csv_path is not None:
            _check_add_csv(&run, csv_path, mask, 0 if require is None else
                           _check_require(require, fn))
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    f"configs[{i}] must be a mapping, got {row!r}")
            row = {str(k).replace("-", "_"): v for k, v in row.items()}
            bad = [k for k in row if k not in _CHECK_ROW_KEYS]
            if bad:
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    f"configs[{i}]: unknown key {bad[0]!r} (keys: "
                                    f"{', '.join(_CHECK_ROW_KEYS)})")
            rreq = row.get("require")
            _check_add(&run, row.get("d"), row.get("heads"), row.get("n"), row.get("head_size"),
                       row.get("layers"), row.get("mask", mask),
                       _check_require(require if rreq is None else rreq, fn),
                       row.get("config"), row.get("name"))
        rc = ar_check_run_json(&run, AR_JSON_NONFINITE, &text, &err)
        report = _record_of_json(CheckReport, rc, text, &err, "ar_check_run_json")
    finally:
        ar_check_run_free(&run)
    # a configuration given by its sizes is one Check
    return report.configs[0] if configs is None and config is None else report


def assert_conditions(d=None, heads=None, n=None, **kwargs):
    """Assert that theorem conditions hold for a model configuration, for a
    pytest test in CI: ``attnrank.assert_conditions(config="config.json",
    require="no-bottleneck")``.

    Takes the arguments of :func:`attnrank.check` (its docstring lists
    them, the conditions and the CLI options), or a result of it as the
    only argument.  Returns the result when every verdict holds; raises
    AssertionError naming every failing verdict, one line each
    ``LABEL: CONDITION fails: WHY [status]``.  Bad input raises the
    attnrank.Error of :func:`attnrank.check`, not AssertionError.
    """
    if isinstance(d, (Check, CheckReport)):
        if heads is not None or n is not None or kwargs:
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), "assert_conditions",
                                "a result takes no further arguments")
        result = d
    else:
        result = check(d, heads, n, **kwargs)
    failing = ([(result, v) for v in result.failures] if isinstance(result, Check)
               else list(result.failures))
    if failing:
        lines = [f"{c.config}: {v.condition} fails: {v.why} [{v.status}]" for c, v in failing]
        raise AssertionError(f"{len(failing)} condition{'s' if len(failing) != 1 else ''} "
                             "failed:\n  " + "\n  ".join(lines))
    return result
