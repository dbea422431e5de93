# cython: language_level=3
"""The library's record schema (attnrank/schema.h) for the record modules.

A module of its own, not part of attnrank._core: the record classes of
attnrank._results are made from the schema while _core, which imports
them, is not yet loaded."""

from attnrank._capi cimport (
    ar_error, ar_json_free, ar_schema_json, ar_option_render, AR_OPTION_STYLE_PYTHON, AR_OK,
)


def schema_json():
    """ar_schema_json: the schema of every result record as JSON text, its
    option tokens rendered as Python's keywords (smooth=, tl=True)."""
    cdef char *text = NULL
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc = ar_schema_json(0, &text, &err)
    if rc != AR_OK:
        raise MemoryError(err.msg.decode("utf-8", "replace"))
    try:
        ar_option_render(text, AR_OPTION_STYLE_PYTHON)
        return text.decode("utf-8")
    finally:
        ar_json_free(text)
