"""Records of a model's positional biases (``positional_bias`` of
``attnrank heads --config`` and ``attnrank weights``; docs/conventions.md,
docs/theory/positional-bias.md): field names are the JSON keys, so
``to_dict()`` equals the CLI's block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from attnrank._results import Mask, _Record

__all__ = ["HeadBias", "BiasLayerKind", "ModelBias"]


@dataclass(frozen=True)
class HeadBias(_Record):
    """One head's bias: its ALiBi slope (0 for T5), bias_rank (the shifted
    rank of the bias at length n under the layer kind's mask), known (False:
    bias_rank is only an upper bound, e.g. T5 without its bucket values),
    proved (a proved closed form, ALiBi) and reach = min(n - 1, head_size +
    bias_rank), an upper bound of the logit rank the head reaches."""

    head: int
    slope: float
    bias_rank: int
    known: bool
    proved: bool
    reach: int


@dataclass(frozen=True)
class BiasLayerKind(_Record):
    """The heads of one layer kind: its label and mask, whether the ranks
    were taken under the causal mask, bound_only (the kind's mask is neither
    none nor causal: upper bounds), values_read (T5: the checkpoint's
    bucket values were read) and one :class:`HeadBias` per head."""

    label: str
    mask: Mask
    causal: bool
    bound_only: bool
    values_read: bool
    heads: Tuple[HeadBias, ...]


@dataclass(frozen=True)
class ModelBias(_Record):
    """The positional bias a config implies: kind ("alibi" or "t5"), the
    reason (which keys decided), the length n and head size the ranks are
    for, one :class:`BiasLayerKind` per layer kind, and T5's buckets and
    max_distance (None for ALiBi)."""

    kind: str
    reason: str
    n: int
    head_size: int
    layer_kinds: Tuple[BiasLayerKind, ...]
    buckets: Optional[int] = None
    max_distance: Optional[int] = None
    _OMIT = frozenset({"buckets", "max_distance"})
