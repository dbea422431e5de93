"""Records of attnrank.softmax_bottleneck and attnrank.weights: field names
are the JSON keys of ``attnrank softmax-bottleneck --json`` and ``attnrank
weights --json`` (docs/conventions.md), so ``to_dict()`` equals the CLI's
output on the same input without ``source``.

Serialisation is that of attnrank._results (non-finite floats as None,
records through their to_dict, tuples and arrays as lists, _OMIT fields left
out when None, _NOT_JSON fields never written), plus one rule of the CLI's:
64-bit unsigned counts and seeds (the fields in _U64) above INT64_MAX are
written as decimal strings.  The records keep them as Python ints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np

from attnrank import _repr as _r

from attnrank._results import Mask, Tolerance, _Record, _from_json
from attnrank._results_bias import ModelBias

__all__ = ["SoftmaxBottleneck", "SoftmaxBottleneckTolerance", "YangCondition",
           "SoftmaxBottleneckFit", "Weights", "WeightsConfig", "WeightsTolerance",
           "QKNoise", "QKHead", "WeightsLayer", "FixedMultiHead", "WeightsVerdict",
           "WeightsVerdicts", "LayerKind", "ModelMasks", "WeightsSummary", "EmbeddingRank",
           "WeightsEmbedding"]

_INT64_MAX = (1 << 63) - 1


class _U64Record(_Record):
    """A record some of whose integer fields are uint64 in C (_U64)."""

    _U64: frozenset = frozenset()

    def to_dict(self) -> Dict[str, Any]:
        d = _Record.to_dict(self)
        for name in self._U64:
            v = d.get(name)
            if isinstance(v, int) and not isinstance(v, bool) and v > _INT64_MAX:
                d[name] = str(v)
        return d


# ---- softmax bottleneck -------------------------------------------------------

@dataclass(frozen=True)
class SoftmaxBottleneckTolerance(_Record):
    """The rank cut ``threshold = max(atol, rtol * sigma_1(log P))`` used
    for every rank (relative to ``||log P||_2``, not to the centred matrix),
    the precision whose epsilon set the default rtol, the row-sum tolerance
    and the largest row-sum defect seen."""

    threshold: float
    rtol: float
    atol: float
    precision: str
    relative_to: str
    sum_tol: float
    max_row_defect: float


@dataclass(frozen=True)
class YangCondition(_Record):
    """Yang et al.'s condition rank(log P) - 1 > d: whether it applies (no
    bias), proves failure, is silent although d is too small, or (with a
    bias) claims failure although d suffices."""

    condition: str
    applies: bool
    proves_failure: bool
    silent_but_fails: bool
    wrong_with_bias: bool


@dataclass(frozen=True)
class SoftmaxBottleneckFit(_U64Record):
    """The probability-space fit at width d (L-BFGS from the truncated SVD
    of the centred log plus seeded jitter): mean and max over contexts of
    KL(P_i || P_hat_i), Frobenius and max-abs errors of P_hat - P, the
    start's mean KL and whether the start was kept, iterations, convergence
    of the gradient test, the final gradient norm and the last GSL status.
    An upper bound of the best probability-space error (non-convex)."""

    d: int
    bias: bool
    seed: int
    jitter: float
    kl_mean: float
    kl_max: float
    fro_error: float
    max_abs_error: float
    start_kl_mean: float
    start_kept: bool
    iterations: int
    converged: bool
    grad_norm: float
    gsl_status: int
    _U64 = frozenset({"seed"})


@dataclass(frozen=True)
class SoftmaxBottleneck(_Record):
    """Can an output layer of width d express P (``attnrank
    softmax-bottleneck --json`` without ``source``)?

    ``required_d`` is exact: rank(L0 Pi_V) without bias, rank(Pi_N L0 Pi_V)
    with it (L0 = log P; ranks at ``tolerance.threshold``); ``sufficient``
    is ``d >= required_d``.  ``logit_error`` is the exact Eckart-Young
    optimum at d in logit space; ``fit`` (None with fit=False) an upper
    bound in probability space.  ``singular_values`` are those of the
    centred matrix that applies (min(N, V) values).

    Not in to_dict (the CLI writes them with ``--csv``): ``logit_errors``,
    the Eckart-Young error at every width k = 0 .. min(N, V) (index k), and
    ``centred_norm``, the Frobenius norm of the centred matrix; see
    :meth:`widths`.
    """

    contexts: int
    vocab: int
    d: int
    bias: bool
    axis: str
    tolerance: SoftmaxBottleneckTolerance
    rank_log: int
    rank_centred: int
    rank_double_centred: int
    ones_in_rowspace: bool
    required_d: int
    sufficient: bool
    yang: YangCondition
    logit_error: float
    logit_error_rel: float
    log_norm: float
    singular_values: np.ndarray
    fit: Optional[SoftmaxBottleneckFit]
    logit_errors: Optional[np.ndarray] = None
    centred_norm: Optional[float] = None
    _NOT_JSON = frozenset({"logit_errors", "centred_norm"})

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


# ---- weights ----------------------------------------------------------------------

@dataclass(frozen=True)
class WeightsConfig(_Record):
    """What config.json beside the model gave (None where absent)."""

    hidden_size: Optional[int]
    num_attention_heads: Optional[int]
    num_key_value_heads: Optional[int]
    head_dim: Optional[int]
    num_hidden_layers: Optional[int]
    max_position_embeddings: Optional[int]
    rotary: bool
    model_type: str


@dataclass(frozen=True)
class WeightsTolerance(_U64Record):
    """The rank rule of the report: the rule in force ("uniform-rounding-mc"
    by default, "given" with rtol/atol), rtol (None for the default rule)
    and atol, the coarsest storage precision with its unit roundoff and
    subnormal error, the base seed and how per-head seeds derive from it,
    the Monte Carlo draws and safety factor, the formulas of both
    thresholds, and with the given rule a note."""

    rule: str
    default_rule: str
    rtol: Optional[float]
    atol: float
    precision: str
    unit_roundoff: float
    subnormal_abs: float
    seed: int
    seed_derivation: str
    draws: int
    factor: float
    certain: str
    default: str
    note: Optional[str] = None
    _OMIT = frozenset({"note"})
    _U64 = frozenset({"seed"})


@dataclass(frozen=True)
class QKNoise(_U64Record):
    """The storage-noise analysis of one head (include/attnrank/weights.h):
    the head's seed, draws, factor, largest and smallest drawn
    ``||dA^T B + A^T dB||_2``, tail = draw_max / (u sigma_1) (None when
    sigma_1 = 0), capped (the default cut hit tau_cert), the factor norms
    ``||A||_2, ||B||_2``, the rounding error bounds e_A, e_B and the float64
    arithmetic floor."""

    rule: str
    seed: int
    draws: int
    factor: float
    draw_max: float
    draw_min: float
    tail: Optional[float]
    capped: bool
    norm_a: float
    norm_b: float
    err_a: float
    err_b: float
    arith_floor: float
    _U64 = frozenset({"seed"})


@dataclass(frozen=True)
class QKHead(_Record):
    """One head's QK circuit W_q^h^T W_k^h: a row of the :class:`Weights`
    table.  The fields are the CLI's per-head JSON in its order: head,
    kv_head (the key head serving it), rank with its tolerance (the rule in
    force) and the effective ranks of docs/theory/spectra.md, rule,
    certain_rank above tau_cert, default_rank above tau_default, noise, the
    min(d_head, d) singular values, and reach/bottleneck at the context
    length (reach_context, None when it is unknown) and at n (reach_n, None
    without n); then ``layer``, the layer index (in the JSON it is the
    enclosing layer's, so not in to_dict)."""

    head: int
    kv_head: int
    rank: int
    tolerance: Tolerance
    stable_rank: float
    roy_vetterli_rank: float
    participation_ratio: float
    energy_rank: int
    energy_fraction: float
    nuclear_rank: float
    rank_margin: float
    rule: str
    certain_rank: int
    tau_cert: float
    default_rank: int
    tau_default: float
    noise: QKNoise
    singular_values: np.ndarray
    reach_context: Optional[int]
    bottleneck_context: Optional[bool]
    reach_n: Optional[int]
    bottleneck_n: Optional[bool]
    layer: int
    _OMIT = frozenset({"reach_context", "bottleneck_context", "reach_n", "bottleneck_n"})
    _NOT_JSON = frozenset({"layer"})

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


@dataclass(frozen=True)
class WeightsLayer(_Record):
    """One analysed layer: its index, the query and key tensors read, and
    its heads."""

    layer: int
    q_tensor: str
    k_tensor: str
    heads: Tuple[QKHead, ...]


@dataclass(frozen=True)
class FixedMultiHead(_U64Record):
    """The FixedMultiHead alternative (d_p = n): head size, attention
    parameters per layer, whether it is still a bottleneck (d < n), and its
    parameters relative to the model's heads."""

    head_size: int
    attention_params: int
    bottleneck: bool
    params_ratio: float
    _U64 = frozenset({"attention_params"})


@dataclass(frozen=True)
class WeightsVerdict(_U64Record):
    """The head-size verdict at one sequence length n: the model's head
    size, its logit rank bound, both bottleneck verdicts, rank deficit,
    longest n without a bottleneck, attention parameters per layer, the
    needed head size under the mask (with its generic status and formula),
    how many trained heads have circuit rank below it, the largest head
    count without a bottleneck and the FixedMultiHead alternative."""

    n: int
    head_size: int
    logit_rank_bound: int
    bottleneck: bool
    bottleneck_paper: bool
    rank_deficit: int
    max_seq_len: int
    attention_params: int
    needed_head_size: int
    mask: Mask
    generic_status: str
    formula: str
    heads_bottlenecked: int
    heads_total: int
    max_heads_exact: int
    fixed_multihead: FixedMultiHead
    _U64 = frozenset({"attention_params"})


@dataclass(frozen=True)
class WeightsVerdicts(_Record):
    """Verdicts at the context length and at n (None when undefined)."""

    context: Optional[WeightsVerdict]
    n: Optional[WeightsVerdict]


@dataclass(frozen=True)
class LayerKind(_Record):
    """One layer kind of the model's masks: label, layer count (0 when
    the config does not say) and its mask."""

    label: str
    layers: int
    mask: Mask


@dataclass(frozen=True)
class ModelMasks(_Record):
    """The masks the verdicts use and why ("--mask" when given)."""

    mask_reason: str
    layer_kinds: Tuple[LayerKind, ...]


@dataclass(frozen=True)
class WeightsSummary(_Record):
    """Over the analysed heads: count, rank min/mean/max, rank-deficient
    heads (rank < min(d_head, d)), mean Roy-Vetterli and stable ranks, and
    the certain and default ranks' min/mean/max."""

    heads_total: int
    rank_min: int
    rank_mean: float
    rank_max: int
    rank_deficient: int
    roy_vetterli_rank_mean: float
    stable_rank_mean: float
    certain_rank_min: int
    certain_rank_mean: float
    certain_rank_max: int
    default_rank_min: int
    default_rank_mean: float
    default_rank_max: int


@dataclass(frozen=True)
class EmbeddingRank(_U64Record):
    """The numerical rank of one stored embedding matrix (rows x cols) under
    the storage rule of its precision (rule "storage"; "relative" for
    float64 or with rtol/atol given): rank above threshold, certain_rank
    above certain_threshold (a rigorous bound of the rounding error), the
    Monte Carlo seed and draws, sigma_1 and the last singular value."""

    rows: int
    cols: int
    precision: str
    rule: str
    rank: int
    threshold: float
    certain_rank: int
    certain_threshold: float
    seed: int
    draws: int
    sigma_1: float
    sigma_last: float
    _U64 = frozenset({"seed"})


@dataclass(frozen=True)
class WeightsEmbedding(_Record):
    """Token embeddings of a checkpoint (only when it stores one;
    docs/theory/embedding-rank.md): the token tensor and its
    :class:`EmbeddingRank`, the position tensor and the rank of the stack
    [W_E; W_pos] (None without positions), config.json's embedding_size
    (ALBERT; None when absent), the model width, the embedding rank (the
    token rank, at most embedding_size) and width_exceeds_rank (width above
    it buys no separation rank)."""

    token_tensor: str
    token: EmbeddingRank
    position_tensor: Optional[str]
    token_and_position: Optional[EmbeddingRank]
    embedding_size: Optional[int]
    width: int
    embedding_rank: int
    width_exceeds_rank: bool


@dataclass(frozen=True)
class Weights(_Record):
    """QK-circuit report of a model's weights (``attnrank weights --json``
    without ``source``), a per-layer, per-head table.

    Iterating gives the :class:`QKHead` rows, layer-major (``len`` is the
    number of heads); :meth:`to_pandas` one DataFrame row per head;
    :meth:`grid` one field as a layers x heads array.  The other fields are
    the CLI's: the naming convention found (family, patterns, fused),
    files and tensors, the config read (None without one), the layout (d,
    heads, kv_heads, head_size), context (None when unknown), rotary (and
    its note), whether Q/K biases were ignored, the tolerance, layers found
    in the file, the analysed layers, the verdicts, the masks and the
    summary; embedding, a :class:`WeightsEmbedding`, when the checkpoint
    stores token embeddings (None, and no JSON key, otherwise);
    positional_bias, a :class:`attnrank.ModelBias`, when config.json
    implies ALiBi or T5 buckets (T5's values read from the checkpoint's
    relative_attention_bias.weight; None, and no JSON key, otherwise).
    """

    family: str
    q_pattern: str
    k_pattern: str
    fused: bool
    files: int
    tensors: int
    config: Optional[WeightsConfig]
    d: int
    heads: int
    kv_heads: int
    head_size: int
    context: Optional[int]
    rotary: bool
    rotary_note: Optional[str]
    qk_biases_ignored: bool
    tolerance: WeightsTolerance
    layers_found: int
    layers: Tuple[WeightsLayer, ...]
    verdicts: WeightsVerdicts
    masks: ModelMasks
    summary: WeightsSummary
    embedding: Optional[WeightsEmbedding] = None
    positional_bias: Optional[ModelBias] = None
    _OMIT = frozenset({"rotary_note", "embedding", "positional_bias"})

    @classmethod
    def _from_json(cls, d, **extra):
        """The record of the library's JSON object d (ar_weights_report_json):
        each head takes its layer from the enclosing layer's key."""
        for layer in d["layers"]:
            for head in layer["heads"]:
                head["layer"] = layer["layer"]
        return _from_json(cls, d, **extra)

    def __iter__(self) -> Iterator[QKHead]:
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
        """A pandas DataFrame with one row per head (:meth:`QKHead.as_row`):
        columns layer, head, kv_head, rank, threshold, rtol, atol,
        precision, the effective ranks, rule, certain_rank, tau_cert,
        default_rank, tau_default, noise_<key>, singular_values (arrays)
        and the defined reach/bottleneck columns.  Raises ImportError when
        pandas is not installed."""
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


# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())
