"""Result types of attnrank: small immutable records whose field names are the
JSON keys of the CLI (docs/conventions.md), so ``to_dict()`` of a result and
the CLI's ``--json`` output of the same computation compare key by key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Tuple

import numpy as np

__all__ = ["Tolerance", "RankMetrics", "Spectrum", "SpectrumStack"]


@dataclass(frozen=True)
class Tolerance:
    """The tolerance block of a rank: singular values above ``threshold`` count.

    threshold
        the cut actually used, ``max(atol, rtol * sigma_1)``;
    rtol, atol
        the relative and absolute tolerances used (rtol resolved from its
        default ``max(m, n) * eps(precision)`` when not given);
    precision
        the storage precision whose epsilon set the default rtol
        (``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``).
    """

    threshold: float
    rtol: float
    atol: float
    precision: str

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's ``tolerance`` object: threshold, rtol, atol, precision."""
        return {"threshold": self.threshold, "rtol": self.rtol, "atol": self.atol,
                "precision": self.precision}


@dataclass(frozen=True)
class RankMetrics:
    """Numerical rank and effective ranks of a singular spectrum
    (docs/theory/spectra.md, sec. 2), with what was used to compute them.

    rows, cols
        the shape (m, n) of the matrix the spectrum came from;
    rank
        the numerical rank: the number of singular values above
        ``tolerance.threshold``;
    tolerance
        a :class:`Tolerance`;
    stable_rank
        ``||A||_F^2 / ||A||_2^2``;
    roy_vetterli_rank
        ``exp(H(p))`` with ``p_i = sigma_i / sum(sigma)``;
    participation_ratio
        ``(sum s^2)^2 / sum s^4``;
    energy_rank
        the least k with ``sum_{i<=k} s_i^2 >= energy_fraction * sum s^2``;
    energy_fraction
        the fraction f of the energy rank;
    nuclear_rank
        ``(||A||_* / ||A||_F)^2``.

    Every effective rank is 0 for an all-zero (or empty) spectrum.
    """

    rows: int
    cols: int
    rank: int
    tolerance: Tolerance
    stable_rank: float
    roy_vetterli_rank: float
    participation_ratio: float
    energy_rank: int
    energy_fraction: float
    nuclear_rank: float

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON for one matrix, in its key order, without the
        singular values and labels: rows, cols, rank, tolerance {threshold,
        rtol, atol, precision}, stable_rank, roy_vetterli_rank,
        participation_ratio, energy_rank, energy_fraction, nuclear_rank."""
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
        }


@dataclass(frozen=True)
class Spectrum(RankMetrics):
    """Singular values of one matrix with its rank metrics (every field of
    :class:`RankMetrics`), and where it sits in a stack.

    index
        the matrix's indices over the stack's leading axes (``()`` for a
        single matrix);
    singular_values
        the singular values, descending, a float64 numpy array of
        ``min(rows, cols)`` values.
    """

    index: Tuple[int, ...] = ()
    singular_values: np.ndarray = None

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON for this matrix (``attnrank spectrum --json``,
        one entry of ``matrices``) without its ``label``: index, the rank
        metrics, singular_values."""
        d = {"index": list(self.index)}
        d.update(RankMetrics.to_dict(self))
        d["singular_values"] = [float(v) for v in self.singular_values]
        return d


@dataclass(frozen=True)
class SpectrumStack:
    """Spectra of a stack of matrices.

    matrices
        one :class:`Spectrum` per matrix, in C order over the leading axes;
    singular_values
        all singular values, shape ``leading axes + (min(rows, cols),)``.
    """

    matrices: Tuple[Spectrum, ...]
    singular_values: np.ndarray

    @property
    def ranks(self) -> np.ndarray:
        """The numerical ranks, shaped as the stack's leading axes."""
        return np.array([m.rank for m in self.matrices],
                        dtype=np.int64).reshape(self.singular_values.shape[:-1])

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON for the stack without ``source`` and the labels:
        ``{"matrices": [...]}``."""
        return {"matrices": [m.to_dict() for m in self.matrices]}
