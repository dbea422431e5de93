"""The record of attnrank.head_scores: head-type scores of attention maps
(ar_head_scores_compute, attnrank/head_scores.h; the definitions are in
docs/theory/head-scores.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

__all__ = ["HeadScores", "SCORE_NAMES"]

# The scores, in the order of enum ar_head_score.
SCORE_NAMES = ("previous_token", "first_token", "diagonal", "induction", "duplicate_token")

Score = Union[float, np.ndarray]


def _plain(x: Any) -> Any:
    # JSON-ready: arrays to nested lists, NaN (not defined) to None, as the
    # CLI writes a number that cannot be represented
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()] if x.ndim else _plain(x.item())
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _short(x: Score) -> str:
    if isinstance(x, np.ndarray):
        shape = "x".join(str(d) for d in x.shape)
        finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
        if finite.size == 0:
            return f"[{shape}]"
        return f"[{shape}, mean {float(np.mean(finite)):.4g}]"
    return f"{x:.4g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class HeadScores:
    """Head-type scores of one attention map, or of each map of a batch.

    With w(i, j) the weight query i gives key j of an n x n map
    (docs/theory/head-scores.md has the definitions and their sources):

    previous_token
        mean over queries i >= 1 of w(i, i - 1) (NaN when n = 1);
    first_token
        mean over all queries i (query 0 included) of w(i, 0): the weight
        on the first token, an attention sink;
    diagonal
        mean over all queries of w(i, i): the current token;
    induction
        mean over the queries with an induction target of the weight on
        their targets (the token after each earlier occurrence of the
        current token; with ``period`` L only i - L + 1); NaN without
        tokens or period, or when no query has a target;
    duplicate_token
        the same on the earlier occurrences themselves (i - L with a
        period); NaN exactly when induction is;
    induction_queries
        the queries the two means run over;
    previous_token_queries
        n - 1;
    n, axis
        positions of the (square) map, and the axis the queries lie along
        (``"row"``: rows are queries, PyTorch's layout; ``"col"``);
    targets, period
        ``"none"``, ``"tokens"`` or ``"period"``, and the period given
        (else None);
    shape
        the batch shape: () for one map (the scores are floats and the
        counts ints), else the leading axes of the input, and every score
        and count is an array of that shape;
    not_defined
        the name of each score that is NaN somewhere, with the reason
        (a score missing here is defined in every map).
    """

    n: int
    axis: str
    targets: str
    period: Optional[int]
    shape: Tuple[int, ...]
    previous_token: Score
    first_token: Score
    diagonal: Score
    induction: Score
    duplicate_token: Score
    induction_queries: Union[int, np.ndarray]
    previous_token_queries: int
    not_defined: Mapping[str, str]

    def defined(self, name: str) -> bool:
        """True when score ``name`` (one of SCORE_NAMES) is defined in
        every map."""
        if name not in SCORE_NAMES:
            raise KeyError(f"unknown score {name!r}; the scores are {', '.join(SCORE_NAMES)}")
        return name not in self.not_defined

    def to_dict(self) -> Dict[str, Any]:
        """Every field, JSON-ready: arrays as nested lists, NaN as None."""
        out: Dict[str, Any] = {
            "n": self.n, "axis": self.axis, "targets": self.targets, "period": self.period,
            "shape": list(self.shape),
        }
        for name in SCORE_NAMES:
            out[name] = _plain(getattr(self, name))
        out["induction_queries"] = _plain(self.induction_queries)
        out["previous_token_queries"] = self.previous_token_queries
        out["not_defined"] = dict(self.not_defined)
        return out

    def __repr__(self) -> str:
        head = f"n={self.n}, axis={self.axis!r}, targets={self.targets!r}"
        if self.period is not None:
            head += f", period={self.period}"
        if self.shape:
            head = f"shape={self.shape}, " + head
        parts = []
        for name in SCORE_NAMES:
            value = getattr(self, name)
            text = f"{name}={_short(value)}"
            if name in self.not_defined:
                text += f" ({self.not_defined[name]})"
            parts.append(text)
        parts.append(f"induction_queries={_short(self.induction_queries)}")
        return f"HeadScores({head}, {', '.join(parts)})"
