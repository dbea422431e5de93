"""Short reprs of the result records: one line, the key sizes and verdict.

The dataclass repr of a result printed every array and nested record (an
``attnrank.weights`` result ran to ~11 kB).  Every record class of the
result modules gets :func:`summary_repr` instead (:func:`install`, called at
the end of each module): ``<ClassName summary>`` on one line of at most
:data:`MAX_LENGTH` characters, arrays as shape and dtype, never their data.
The data stays in the attributes and in ``to_dict()``; equality is the
dataclass's.

A class chooses its summary with ``_repr_summary(self) -> str`` (free text)
or ``_repr_fields`` (the fields to show, in order); otherwise the first
scalar fields are shown.  Nested records appear only as their own summary
where a class's ``_repr_summary`` asks for one.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable

import numpy as np

MAX_LENGTH = 200


def shape_text(shape: Iterable[int]) -> str:
    return "x".join(str(int(s)) for s in shape) or "scalar"


def array_text(a: np.ndarray) -> str:
    """An array as shape and dtype: ``array(12x64 float64)``."""
    return f"array({shape_text(a.shape)} {a.dtype})"


def value_text(v: Any) -> str:
    """A field value in a few characters (None for one not worth showing)."""
    if v is None or isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}" if math.isfinite(v) else str(float(v))
    if isinstance(v, str):
        return v if len(v) <= 40 and v.strip() == v and "," not in v else repr(_cut(v, 40))
    if isinstance(v, np.ndarray):
        return array_text(v)
    if isinstance(v, (tuple, list)):
        if len(v) <= 4 and all(isinstance(x, (int, np.integer)) for x in v):
            return "(" + ", ".join(str(int(x)) for x in v) + ")"
        kinds = {type(x).__name__ for x in v}
        return f"{len(v)} {kinds.pop()}" if len(kinds) == 1 else f"{len(v)} items"
    if dataclasses.is_dataclass(v):
        return f"<{type(v).__name__}>"
    return _cut(repr(v), 40)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _default_fields(rec: Any) -> list:
    """The scalar fields (numbers, flags, short strings) that are set."""
    names = []
    for f in dataclasses.fields(rec):
        v = getattr(rec, f.name)
        if v is None or dataclasses.is_dataclass(v):
            continue
        names.append(f.name)
    return names


def fields_text(rec: Any, names: Iterable[str], budget: int = MAX_LENGTH) -> str:
    """``a=1, b=2, ...`` of the named fields that are set, within budget."""
    out = ""
    for name in names:
        v = getattr(rec, name)
        if v is None:
            continue
        item = f"{name}={value_text(v)}"
        if len(out) + len(item) + 2 > budget - 5:  # room for ", ..."
            return out + ", ..." if out else "..."
        out = f"{out}, {item}" if out else item
    return out


def summary_repr(self: Any) -> str:
    name = type(self).__name__
    budget = MAX_LENGTH - len(name) - 3
    if hasattr(self, "_repr_summary"):
        body = self._repr_summary()
    else:
        names = getattr(self, "_repr_fields", None) or _default_fields(self)
        body = fields_text(self, names, budget)
    body = " ".join(body.split())  # one line whatever a field holds
    return f"<{name} {_cut(body, budget)}>" if body else f"<{name}>"


def install(namespace: dict) -> None:
    """Give every dataclass defined in a module (its globals()) the short repr."""
    module = namespace["__name__"]
    for obj in list(namespace.values()):
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and \
                obj.__module__ == module:
            obj.__repr__ = summary_repr
