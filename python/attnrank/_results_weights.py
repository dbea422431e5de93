"""Records of attnrank.softmax_bottleneck and attnrank.weights, made from the
library's schema (attnrank._results.records): field names are the JSON keys
of ``attnrank softmax-bottleneck --json`` and ``attnrank weights --json``
(docs/conventions.md), so ``to_dict()`` equals the CLI's output on the same
input without ``source``.

Serialisation is that of attnrank._results (non-finite floats as None,
records through their to_dict, tuples and arrays as lists, "omit" fields left
out when None, "face" fields never written, 64-bit unsigned counts and
seeds (the schema's "u64") above INT64_MAX as decimal strings; the records
keep them as Python ints).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Tuple

import numpy as np

from attnrank import _repr as _r

from attnrank._results import Mask, Tolerance, _from_json, records  # noqa: F401 (hints)
from attnrank._results_bias import ModelBias  # noqa: F401 (the hints' globals)


class _SoftmaxBottleneck:
    def widths(self) -> Tuple[Dict[str, Any], ...]:
        """One row per width k = 0 .. min(N, V), the rows of the CLI's
        ``--csv``: k, sigma_k (0 for k = 0), logit_error, logit_error_rel
        (0 when the centred matrix is 0) and expressible (k >= required_d)."""
        rows = []
        norm = self.centred_norm or 0.0
        for k, e in enumerate(self.logit_errors):
            rows.append({"k": k,
                         "sigma_k": float(self.singular_values[k - 1]) if k > 0 else 0.0,
                         "logit_error": float(e),
                         "logit_error_rel": float(e) / norm if norm > 0.0 else 0.0,
                         "expressible": k >= self.required_d})
        return tuple(rows)

    def _repr_summary(self) -> str:
        return (f"{self.contexts}x{self.vocab}, d={self.d}, bias={self.bias}: rank_log "
                f"{self.rank_log}, required_d={self.required_d}, sufficient={self.sufficient}, "
                f"singular_values={_r.array_text(self.singular_values)}")


class _QKHead:
    def as_row(self) -> Dict[str, Any]:
        """The head as one flat table row: layer, head, kv_head, rank, the
        tolerance's keys (threshold, rtol, atol, precision, as the CLI's
        ``--csv`` names them), the effective ranks, rule, certain_rank,
        tau_cert, default_rank, tau_default, the noise keys as noise_<key>,
        singular_values (the array), and the reach/bottleneck fields that
        are defined."""
        row: Dict[str, Any] = {"layer": self.layer, "head": self.head,
                               "kv_head": self.kv_head, "rank": self.rank}
        row.update(self.tolerance.to_dict())
        for name in ("stable_rank", "roy_vetterli_rank", "participation_ratio",
                     "energy_rank", "energy_fraction", "nuclear_rank", "rule",
                     "certain_rank", "tau_cert", "default_rank", "tau_default"):
            row[name] = getattr(self, name)
        for f in QKNoise.__dataclass_fields__:
            row["noise_" + f] = getattr(self.noise, f)
        row["singular_values"] = self.singular_values
        for name in ("reach_context", "bottleneck_context", "reach_n", "bottleneck_n"):
            if getattr(self, name) is not None:
                row[name] = getattr(self, name)
        return row


class _Weights:
    @classmethod
    def _from_json(cls, d, **extra):
        """The record of the library's JSON object d (ar_weights_report_json):
        each head takes its layer from the enclosing layer's key."""
        for layer in d["layers"]:
            for head in layer["heads"]:
                head["layer"] = layer["layer"]
        return _from_json(cls, d, **extra)

    def __iter__(self) -> Iterator["QKHead"]:
        for layer in self.layers:
            yield from layer.heads

    def __len__(self) -> int:
        return sum(len(layer.heads) for layer in self.layers)

    def grid(self, field: str = "rank") -> np.ndarray:
        """One numeric per-head field (rank, roy_vetterli_rank, stable_rank,
        participation_ratio, energy_rank, nuclear_rank, certain_rank,
        default_rank, tau_cert, ...) as a float64 array of shape (analysed
        layers, heads): what the CLI's ``--heatmap`` draws."""
        rows = []
        for layer in self.layers:
            vals = []
            for h in layer.heads:
                v = getattr(h, field, None)
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ValueError(f"grid: {field!r} is not a numeric per-head field")
                vals.append(float(v))
            rows.append(vals)
        return np.array(rows, dtype=np.float64).reshape(len(self.layers), self.heads)

    def to_pandas(self):
        """A pandas DataFrame with one row per head (QKHead.as_row): columns
        layer, head, kv_head, rank, threshold, rtol, atol, precision, the
        effective ranks, rule, certain_rank, tau_cert, default_rank,
        tau_default, noise_<key>, singular_values (arrays) and the defined
        reach/bottleneck columns.  Raises ImportError when pandas is not
        installed."""
        try:
            import pandas
        except ImportError as exc:
            raise ImportError(
                "Weights.to_pandas() needs pandas, which is not installed "
                "(pip install pandas); iterate the record or use to_dict() instead") from exc
        return pandas.DataFrame([h.as_row() for h in self])

    def _repr_summary(self) -> str:
        s = self.summary
        return (f"{self.family}: {self.layers_found} layers x {self.heads} heads, d={self.d}, "
                f"head_size={self.head_size}, rank {s.rank_min}..{s.rank_max}/{self.head_size} "
                f"(mean {s.rank_mean:.4g}), rule {self.tolerance.rule}")


__all__ = records(globals(), "weights",
                  {"SoftmaxBottleneck": _SoftmaxBottleneck, "QKHead": _QKHead, "Weights": _Weights})

# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())
