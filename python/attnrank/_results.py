"""Result types of attnrank: small immutable records whose field names are the
JSON keys of the CLI (docs/conventions.md), so ``to_dict()`` of a result and
the CLI's ``--json`` output of the same computation compare key by key.

The record classes are made here from the library's schema
(attnrank/schema.h, docs/architecture.md "One schema"): each record's
fields, their order, kinds, defaults and flags, and its description come
from the C table; :func:`records` turns them into frozen dataclasses.  What
stays in Python is only what is Python's: the methods and properties of a
record, in a mixin class given to :func:`records` by the record's name."""

from __future__ import annotations

import dataclasses as _dc
import json as _jsonlib
import math as _math
from typing import Any, Dict, Optional, Tuple

import numpy as np

from attnrank import _repr as _r
from attnrank._schema_c import schema_json as _schema_json


# The library's schema: record name -> {"name", "base", "description", "fields"}.
SCHEMA = {r["name"]: r for r in _jsonlib.loads(_schema_json())["records"]}
_CLASSES: Dict[str, type] = {}  # record name -> its class, once made
_INT64_MAX = (1 << 63) - 1


def _json(v):
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return v if _math.isfinite(v) else None
    if isinstance(v, np.ndarray):
        return [_json(float(x)) for x in v.reshape(-1)]
    if isinstance(v, (tuple, list)):
        return [_json(x) for x in v]
    if hasattr(v, "to_dict"):
        return v.to_dict()
    return v


_NONFINITE = {"nan": _math.nan, "inf": _math.inf, "-inf": -_math.inf}


def _real(v):
    # the library's JSON with AR_JSON_NONFINITE: "nan", "inf", "-inf" for the
    # values plain JSON writes as null; a null real is NaN
    if v is None:
        return _math.nan
    return _NONFINITE[v] if isinstance(v, str) else float(v)


def _int(v):
    return int(v) if isinstance(v, str) else v  # a u64 above INT64_MAX: its decimal text


def _value(field, v):
    """A JSON value as the field (the schema's) holds it."""
    if v is None and field.get("nullable"):
        return None
    kind = field["kind"]
    if kind == "real":
        return _real(v)
    if kind == "int":
        return _int(v)
    if kind == "reals":
        return np.array([_real(x) for x in v], dtype=np.float64)
    if kind == "ints":
        return tuple(_int(x) for x in v)
    if kind == "texts":
        return tuple(v)
    if kind == "record":
        return None if v is None else _from_json(_CLASSES[field["record"]], v)
    if kind == "records":
        return tuple(_from_json(_CLASSES[field["record"]], x) for x in v)
    return v


def _from_json(cls, d, **extra):
    """A record of class cls from its JSON object d (the library's record
    JSON, parsed): each key converted by the schema's kind (nested records,
    nullable values, tuples, float64 arrays; a key left out is the field's
    default, else None); extra sets the fields that are not in the JSON
    (the schema's "face" fields)."""
    fields = cls._schema_fields
    names = {f["key"] for f in fields}
    unknown = set(d) - names
    if unknown:
        raise ValueError(f"{cls.__name__}: JSON keys without a field: {sorted(unknown)}")
    kw = {}
    for f in fields:
        name = f["key"]
        if name in d:
            kw[name] = _value(f, d[name])
        elif name in extra:
            kw[name] = extra[name]
        elif "default" not in f:
            kw[name] = None
    return cls(**kw)


class _Record:
    _OMIT: frozenset = frozenset()
    _NOT_JSON: frozenset = frozenset()
    _U64: frozenset = frozenset()

    @classmethod
    def _from_json(cls, d, **extra):
        """The record of the library's JSON object d (see _from_json)."""
        return _from_json(cls, d, **extra)

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON object of this record (see the class docstring)."""
        d = {}
        for f in _dc.fields(self):
            v = getattr(self, f.name)
            if f.name in self._NOT_JSON or (v is None and f.name in self._OMIT):
                continue
            d[f.name] = _json(v)
            if f.name in self._U64 and isinstance(v, int) and not isinstance(v, bool) \
                    and v > _INT64_MAX:
                d[f.name] = str(v)  # as the library writes a u64 above INT64_MAX
        return d


# ---- the record classes of the schema -----------------------------------------

_HINTS = {"int": int, "real": float, "bool": bool, "text": str, "reals": np.ndarray,
          "ints": Tuple[int, ...], "texts": Tuple[str, ...], "any": Any}


def _hint(field):
    """The type hint of a field of the schema (a nested record not made yet
    is a forward reference, resolved in its module's globals)."""
    kind = field["kind"]
    if kind in ("record", "records"):
        rec = _CLASSES.get(field["record"], field["record"])
        hint = rec if kind == "record" else Tuple[rec, ...]
    else:
        hint = _HINTS[kind]
    return Optional[hint] if field.get("nullable") else hint


def _default(field):
    v = field["default"]
    return tuple(v) if isinstance(v, list) else v


def _flags_text(field):
    words = [field["kind"] if "record" not in field else
             f"{field['kind']} of {field['record']}" if field["kind"] == "records" else
             field["record"]]
    for flag, word in (("nullable", "or None"), ("omit", "left out of to_dict() when None"),
                       ("face", "not in the JSON"), ("u64", "unsigned 64-bit"),
                       ("leads", "before the base's keys in the JSON")):
        if field.get(flag):
            words.append(word)
    return ", ".join(words)


def _doc(rec):
    """The docstring: the schema's description and its fields with their kinds."""
    lines = [rec["description"], "", "Fields (the JSON keys, in order"
             + (f", after those of {rec['base']}" if rec["base"] else "") + "):"]
    for f in rec["fields"]:
        lines.append(f"    {f['key']}: {_flags_text(f)}" + (f"; {f['doc']}" if "doc" in f else ""))
    return "\n".join(lines)


def records(namespace: dict, families, mixins: Optional[Dict[str, type]] = None) -> list:
    """Make the records of the schema's families (a family's name or a tuple
    of them; bases come first in the schema) as frozen dataclasses of the
    module whose globals() namespace is, each with its mixin (methods,
    properties, a custom to_dict) when mixins has one for its name.  Returns
    the public names made (not those from '_'), in the schema's order: the
    module's __all__."""
    mixins = mixins or {}
    module = namespace["__name__"]
    families = (families,) if isinstance(families, str) else tuple(families)
    names = [name for name, rec in SCHEMA.items() if rec["family"] in families]
    for name in names:
        rec = SCHEMA[name]
        base = _CLASSES[rec["base"]] if rec["base"] else None
        bases = tuple(b for b in (mixins.get(name), base) if b is not None)
        if base is None:
            bases += (_Record,)
        hidden = getattr(mixins.get(name), "_repr_hidden", ())  # left out of the repr
        fields = [(f["key"], _hint(f), _dc.field(repr=f["key"] not in hidden,
                                                 **({"default": _default(f)} if "default" in f
                                                    else {})))
                  for f in rec["fields"]]
        every = (base._schema_fields if base is not None else ()) + tuple(rec["fields"])
        ns = {"__doc__": _doc(rec), "__module__": module, "_schema_fields": every,
              "_OMIT": frozenset(f["key"] for f in every if f.get("omit")),
              "_NOT_JSON": frozenset(f["key"] for f in every if f.get("face")),
              "_U64": frozenset(f["key"] for f in every if f.get("u64"))}
        cls = _dc.make_dataclass(name, fields, bases=bases, namespace=ns, frozen=True)
        cls.__qualname__ = name
        _CLASSES[name] = namespace[name] = cls
    return [name for name in names if not name.startswith("_")]


# ---- spectrum -------------------------------------------------------------------

class _Tolerance:
    def to_dict(self) -> Dict[str, Any]:
        """The CLI's ``tolerance`` object: threshold, rtol, atol, precision,
        and under the storage rule also rule, certain_threshold,
        certain_rank, seed, draws."""
        out = {"threshold": self.threshold, "rtol": self.rtol, "atol": self.atol,
               "precision": self.precision}
        if self.rule == "storage":
            out.update(rule=self.rule, certain_threshold=self.certain_threshold,
                       certain_rank=self.certain_rank, seed=self.seed, draws=self.draws)
        return out


class _RankMetrics:
    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON for one matrix, in its key order, without the
        singular values and labels: rows, cols, rank, tolerance {threshold,
        rtol, atol, precision}, stable_rank, roy_vetterli_rank,
        participation_ratio, energy_rank, energy_fraction, nuclear_rank,
        rank_margin."""
        return {
            "rows": self.rows,
            "cols": self.cols,
            "rank": self.rank,
            "tolerance": self.tolerance.to_dict(),
            "stable_rank": self.stable_rank,
            "roy_vetterli_rank": self.roy_vetterli_rank,
            "participation_ratio": self.participation_ratio,
            "energy_rank": self.energy_rank,
            "energy_fraction": self.energy_fraction,
            "nuclear_rank": self.nuclear_rank,
            "rank_margin": _json(self.rank_margin),
        }


class _Spectrum:
    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON for this matrix (``attnrank spectrum --json``,
        one entry of ``matrices``) without its ``label``: index, the rank
        metrics, singular_values."""
        d = {"index": list(self.index)}
        d.update(RankMetrics.to_dict(self))
        d["singular_values"] = [float(v) for v in self.singular_values]
        return d

    def _repr_summary(self) -> str:
        where = f" index {self.index}" if self.index else ""
        return (f"{self.rows}x{self.cols}{where}: rank {self.rank} (threshold "
                f"{self.tolerance.threshold:.3g}, {self.tolerance.rule}), stable_rank "
                f"{self.stable_rank:.4g}, singular_values={_r.array_text(self.singular_values)}")


class _SpectrumStack:
    @property
    def ranks(self) -> np.ndarray:
        """The numerical ranks, shaped as the stack's leading axes."""
        return np.array([m.rank for m in self.matrices],
                        dtype=np.int64).reshape(self.singular_values.shape[:-1])

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON for the stack without ``source`` and the labels:
        ``{"matrices": [...]}``."""
        return {"matrices": [m.to_dict() for m in self.matrices]}

    def _repr_summary(self) -> str:
        ranks = [m.rank for m in self.matrices]
        size = (f" of {self.matrices[0].rows}x{self.matrices[0].cols}, ranks "
                f"{min(ranks)}..{max(ranks)}") if ranks else ""
        return (f"{len(ranks)} matrices{size}, singular_values="
                f"{_r.array_text(self.singular_values)}")


__all__ = records(globals(), "spectrum",
                  {"Tolerance": _Tolerance, "RankMetrics": _RankMetrics, "Spectrum": _Spectrum,
                   "SpectrumStack": _SpectrumStack})


# ---- represent, heads, params ----------------------------------------------
#
# These records serialise through _Record.to_dict: a float that is not
# finite is None (the CLI's JSON writes null), nested records through their
# to_dict(), tuples and arrays as lists; a field the schema marks "omit" is
# left out when None, as the CLI leaves the key out; "face" fields (numpy
# weights, the query of a stack) are never serialised.



class _Certificate:
    @property
    def max_abs(self) -> float:
        return self.max_abs_error

    def _repr_summary(self) -> str:
        kept = (f"wq={_r.array_text(self.wq)}, wk={_r.array_text(self.wk)}"
                if self.wq is not None else "weights not kept")
        return (f"head_size {self.head_size}, d={self.d}, max_abs_error="
                f"{self.max_abs_error:.3g}, kl_max={self.kl_max:.3g}, {kept}")


class _Represent:
    def _repr_summary(self) -> str:
        extra = ", certificate" if self.certificate is not None else ""
        if self.fit is not None:
            extra += f", fit kl_mean={self.fit.kl_mean:.3g}"
        return (f"{self.n}x{self.n}, axis={self.axis}: min_head_size={self.min_head_size}, "
                f"head_size={self.head_size}, representable={self.representable}{extra}")


class _MaskedRepresent:
    def _repr_summary(self) -> str:
        upper = self.min_head_size_upper if self.min_head_size_upper is not None else "?"
        return (f"{self.n}x{self.n}, axis={self.axis}, mask={self.mask.text} "
                f"({self.mask_source}): {self.status}, min_head_size={self.min_head_size} "
                f"[{self.min_head_size_lower}..{upper}], head_size={self.head_size}, "
                f"representable={self.representable}")


class _RepresentSlice:
    def to_dict(self) -> Dict[str, Any]:
        d = _Record.to_dict(self)
        if self.tested_head_size is None:
            del d["representable"]
        return d


class _RepresentStack:
    @property
    def min_head_sizes(self) -> np.ndarray:
        """Per slice the exact minimal head size, else its upper bound (-1
        when no certificate): shaped as the stack's leading axes."""
        vals = [s.min_head_size if s.min_head_size is not None else
                (s.min_head_size_upper if s.min_head_size_upper is not None else -1)
                for s in self.slices]
        shape = tuple(np.max([s.index for s in self.slices], axis=0) + 1) if self.slices else (0,)
        return np.array(vals, dtype=np.int64).reshape(shape)

    def _repr_summary(self) -> str:
        s = self.summary
        return (f"{len(self.slices)} slices of {self.n}x{self.n}, axis={self.axis}: exact "
                f"{s.exact}/{s.slices}, max_min_head_size={s.max_min_head_size}, "
                f"median_min_head_size={s.median_min_head_size}")


__all__ += records(globals(), ("represent", "heads"),
                   {"Certificate": _Certificate, "Represent": _Represent,
                    "MaskedRepresent": _MaskedRepresent, "RepresentSlice": _RepresentSlice,
                    "RepresentStack": _RepresentStack})

# The masked record was a second class until 0.9.0; the name stays.
MaskedCertificate = Certificate
PaperConfig = ParamCount
__all__ += ["MaskedCertificate", "PaperConfig"]

# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())

# HeadsModel.positional_bias names ModelBias, whose module imports this one:
# here, for typing.get_type_hints, once Mask and _Record exist.
from attnrank._results_bias import ModelBias  # noqa: E402
