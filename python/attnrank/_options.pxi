# Included by _core.pyx before the bindings: the conversions of keyword
# arguments (GIL held), and _set_options, which stores keywords in an
# analysis's options struct through the library's option table
# (attnrank/option_table.h), the one home of their names and kinds.

from libc.math cimport isfinite
from libc.stdint cimport uint64_t

from attnrank._capi cimport (
    ar_option_table, ar_option_spec, ar_option_find, ar_option_set_count,
    ar_option_set_real, ar_option_set_switch, ar_option_set_text,
    AR_OPTION_COUNT, AR_OPTION_SEED, AR_OPTION_REAL, AR_OPTION_SWITCH, AR_OPTION_REQUIRED,
)


cdef size_t _th_count(object value, str name, str fn, size_t minimum) except? 0:
    """An integer >= minimum (a size_t), as the CLI's counts."""
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be an integer, got {value!r}")
    cdef size_t v = _size(value, name, fn)
    if v < minimum:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be >= {minimum}, got {value!r}")
    return v


cdef uint64_t _th_seed(object seed, str fn) except? 0:
    if isinstance(seed, (bool, np.bool_)):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"seed must be an integer in [0, 2^64), got {seed!r}")
    try:
        v = operator.index(seed)
    except TypeError:
        v = None
    if v is None or v < 0 or v > 18446744073709551615:
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"seed must be an integer in [0, 2^64), got {seed!r}")
    return v


cdef bint _th_flag(object value, str name, str fn) except -1:
    """A switch of the CLI: True or False (numpy booleans too), nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be True or False, got {value!r}")
    return bool(value)


cdef double _th_finite(object value, str name, str fn) except? -1.0:
    """A finite real number (the CLI refuses inf and nan in every real option)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be a real number, got {value!r}")
    cdef double v = _real(value, name, fn)
    if not isfinite(v):
        raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                            f"{name} must be finite, got {value!r}")
    return v


cdef int _set_options(const ar_option_table *table, void *opts, dict values, str fn,
                      list keep) except -1:
    """Store each keyword of values (name as Python spells it) in opts by
    table.  None leaves the library's default of an optional count, real or
    text; a switch, a seed or a required option must be given.  Texts are encoded into keep,
    which must outlive the run (the struct borrows them)."""
    cdef const ar_option_spec *spec
    cdef ar_error err
    cdef int rc
    err.msg[0] = 0
    for name, value in values.items():
        key = name.encode("ascii")
        spec = ar_option_find(table, key, len(key))
        if spec == NULL:
            raise TypeError(f"{fn}: no option {name!r} in the library's table")
        if (value is None and not (spec.flags & AR_OPTION_REQUIRED)
                and spec.kind not in (AR_OPTION_SWITCH, AR_OPTION_SEED)):
            continue
        if spec.kind == AR_OPTION_COUNT:
            rc = ar_option_set_count(spec, opts, _th_count(value, name, fn, 0), &err)
        elif spec.kind == AR_OPTION_SEED:
            rc = ar_option_set_count(spec, opts, _th_seed(value, fn), &err)
        elif spec.kind == AR_OPTION_REAL:
            rc = ar_option_set_real(spec, opts, _th_finite(value, name, fn), &err)
        elif spec.kind == AR_OPTION_SWITCH:
            rc = ar_option_set_switch(spec, opts, _th_flag(value, name, fn), &err)
        else:
            if not isinstance(value, str) or "\0" in value:
                raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                    f"{name} must be a text without NUL, got {value!r}")
            keep.append(value.encode("utf-8", "replace"))
            rc = ar_option_set_text(spec, opts, keep[-1], &err)
        check_status(rc, fn, &err)
    return 0


cdef str _documented(str doc, const ar_option_table *table):
    """doc with its ``{options}`` line replaced by the table's summary and
    one entry per option (keyword, then its help indented), in Python's
    spelling: the docstring says what ``attnrank <analysis> --help`` says,
    from the same text.  (Needs the binding=True directive: a compiled
    function's __doc__ is writable only then.)"""
    cdef size_t i
    lines = [_python_text(table.summary), ""]
    for i in range(table.count):
        lines.append(_text(table.specs[i].name).replace("-", "_"))
        lines.append("    " + _python_text(table.specs[i].help))
    text = "\n".join(("    " + line) if line else "" for line in "\n".join(lines).split("\n"))
    return doc.replace("{options}", text.lstrip())
