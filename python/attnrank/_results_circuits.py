"""The records of attnrank.copying_scores and attnrank.circuits: one head's
OV copying scores and the circuits of a checkpoint (attnrank/circuits.h,
attnrank/circuits_model.h; the definitions are in docs/theory/circuits.md).
Circuits is made from the library's schema (attnrank._results.records);
CopyingScores, built from the C struct, is Python's own."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict

import numpy as np

from attnrank._results import _from_json, _real, records

__all__ = ["CopyingScores"]


def _plain(x: Any) -> Any:
    # JSON-ready, as the CLI writes it: NaN (undefined) to None
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()]
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass(frozen=True)
class CopyingScores:
    """Copying scores of one head's OV circuit W_OV = W_O W_V.

    s_eig
        Re(sum lambda) / sum |lambda| over the nonzero eigenvalues (from the
        d_head x d_head core W_V W_O); NaN when ``s_eig_defined`` is False:
        every eigenvalue is zero to its first-order error bound (a nilpotent
        core), never a number made of round-off;
    s_nuc, s_sym
        tr(W_OV) / ||W_OV||_* and tr(S) / sum |eig(S)| with S the symmetric
        part (NaN only for a zero circuit);
    z_eig, z_nuc, z_sym
        each score over its Gaussian-head spread (1.5 / d_head for s_eig,
        1 / sqrt(d d_head) for the others; leading order);
    trace, trace_bound, sign_certain
        tr(W_V W_O) from the stored values, a rigorous bound of its distance
        from the trace of the unrounded weights at the storage precision,
        and whether the sign is therefore certain;
    eigenvalues
        the d_head eigenvalues of the core (complex), zeros included.
    """

    d: int
    head_size: int
    precision: str
    s_eig: float
    s_nuc: float
    s_sym: float
    z_eig: float
    z_nuc: float
    z_sym: float
    s_eig_defined: bool
    nonzero_eigenvalues: int
    eigenvalue_eta: float
    min_rcond: float
    ill_conditioned: bool
    nuclear_norm: float
    trace: float
    trace_bound: float
    sign_certain: bool
    eigenvalues: np.ndarray = field(repr=False)

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's ``copying`` block (without the eigenvalues)."""
        keys = ("s_eig", "s_nuc", "s_sym", "z_eig", "z_nuc", "z_sym", "s_eig_defined",
                "nonzero_eigenvalues", "eigenvalue_eta", "min_rcond", "ill_conditioned",
                "nuclear_norm", "trace", "trace_bound", "sign_certain")
        return {k: _plain(getattr(self, k)) for k in keys}


class _Circuits:
    _repr_hidden = ("circuit_heads", "composition")  # the dataclass repr without them

    @classmethod
    def _from_json(cls, d):
        """The record of the library's JSON (ar_circuits_report_json with
        AR_JSON_NONFINITE): the reals as floats, NaN and the infinities
        included, except the copying blocks' non-finite values, None as
        ``CopyingScores.to_dict`` gives them."""
        def head(e):
            e = dict(e)
            for key in ("copying", "full_copying"):
                if key in e:
                    e[key] = {k: None if isinstance(v, str) else v for k, v in e[key].items()}
            if "ov_singular_values" in e:
                e["ov_singular_values"] = [_real(x) for x in e["ov_singular_values"]]
            if "qk" in e:
                e["qk"] = dict(e["qk"], singular_values=[_real(x) for x in
                                                         e["qk"]["singular_values"]])
            return e

        comp = d.get("composition")
        if comp is not None:
            comp = dict(comp, null_rms=_real(comp["null_rms"]),
                        pairs=[dict(p, score=_real(p["score"]), scaled=_real(p["scaled"]))
                               for p in comp["pairs"]])
        tol = d.get("copying_tolerance")
        return _from_json(cls, dict(
            d, circuit_heads=[head(e) for e in d["circuit_heads"]], composition=comp,
            copying_tolerance=None if tol is None else {k: _real(v) for k, v in tol.items()}))

    def __iter__(self):
        return iter(self.circuit_heads)

    def __len__(self) -> int:
        return len(self.circuit_heads)

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON, without ``source``."""
        out: Dict[str, Any] = {
            "family": self.family, "weight_preprocessing": self.weight_preprocessing,
            "d": self.d, "heads": self.heads, "kv_heads": self.kv_heads,
            "head_size": self.head_size, "layers": list(self.layers),
            "precision": self.precision}
        if self.weights_centred is not None:
            out["weights_centred"] = self.weights_centred
        if self.copying_tolerance is not None:
            out["copying_tolerance"] = _plain(self.copying_tolerance)
        if self.full_circuits is not None:
            out["full_circuits"] = dict(self.full_circuits)
        out["circuit_heads"] = _plain(self.circuit_heads)
        if self.composition is not None:
            out["composition"] = _plain(self.composition)
        return out


__all__ += records(globals(), "circuits", {"Circuits": _Circuits})
