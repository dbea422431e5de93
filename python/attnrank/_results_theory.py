"""Result records of the theory bindings: separation rank (``attnrank
seprank``), depth/width allocation (``attnrank depthwidth``) and rank
collapse (``attnrank collapse``), made from the library's schema
(attnrank._results.records).

Field names are the CLI's JSON keys; ``to_dict()`` equals the CLI's
``--json`` output for the same arguments, without input-describing fields
(the ``file`` of a fit read from a CSV).  Non-finite floats serialise as None
(the CLI writes null), seeds above INT64_MAX as decimal strings (as every
seed the CLI writes), see attnrank._results."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from attnrank import _repr as _r

from attnrank._results import Tolerance, _Record, records  # noqa: F401 (the hints' globals)

class _Seprank:
    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON: the float block only with the float evaluation,
        the exact block (rational_rank null when not computed) only with
        exact=True, float_undercounts only with both."""
        d = _Record.to_dict(self)
        have_float = self.float_rank is not None
        have_exact = self.exact_rank is not None
        if not have_float:
            for k in ("float_rank", "tolerance", "singular_values"):
                del d[k]
        if not have_exact:
            for k in ("exact_rank", "primes", "primes_agree", "rational_rank"):
                del d[k]
        if not (have_float and have_exact):
            del d["float_undercounts"]
        return d

    _repr_fields = ("layers", "d", "heads", "head_size", "n", "rows", "cols", "float_rank",
                    "exact_rank", "rational_rank", "bound", "regime")


class _CollapseDepth:
    _repr_fields = ("depth", "rank", "rel_res_fro", "ratio", "stable_rank", "bound_log",
                    "singular_values")


class _Collapse:
    @property
    def rel_res_fro(self) -> np.ndarray:
        """The relative Frobenius residual of every depth 0..layers."""
        return np.array([dp.rel_res_fro for dp in self.depths], dtype=np.float64)

    @property
    def ranks(self) -> np.ndarray:
        """The numerical rank of X_l at every depth 0..layers."""
        return np.array([dp.rank for dp in self.depths], dtype=np.int64)

    def _repr_summary(self) -> str:
        last = (f"; depth {self.depths[-1].depth}: rank {self.depths[-1].rank}, "
                f"rel_res_fro {self.depths[-1].rel_res_fro:.3g}") if self.depths else ""
        return (f"{self.variant}: {self.layers} layers, n={self.n}, d={self.d}, "
                f"heads={self.heads}, skip={self.skip}, mlp={self.mlp}{last}")


__all__ = records(globals(), "theory",
                  {"Seprank": _Seprank, "CollapseDepth": _CollapseDepth, "Collapse": _Collapse})

# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())
