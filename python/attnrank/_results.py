"""Result types of attnrank: small immutable records whose field names are the
JSON keys of the CLI (docs/conventions.md), so ``to_dict()`` of a result and
the CLI's ``--json`` output of the same computation compare key by key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Tuple

import numpy as np

from attnrank import _repr as _r

__all__ = ["Tolerance", "RankMetrics", "Spectrum", "SpectrumStack"]


@dataclass(frozen=True)
class Tolerance:
    """The tolerance block of a rank: singular values above ``threshold`` count.

    threshold
        the cut actually used;
    rtol, atol
        the relative and absolute tolerances (``threshold = max(atol, rtol *
        sigma_1)``; rtol resolved from its default ``max(m, n) *
        eps(precision)`` when not given; under the storage rule ``rtol`` is
        ``threshold / sigma_1``);
    precision
        the storage precision of the data (``"float64"``, ``"float32"``,
        ``"float16"``, ``"bfloat16"``);
    rule
        ``"relative"`` (numpy's rule: float64 data, or a given rtol/atol) or
        ``"storage"`` (float32/float16/bfloat16 data: the cut is the
        matrix's own rounding noise, docs/theory/spectra.md);
    certain_threshold, certain_rank
        storage rule only (else None): a rigorous bound of the rounding
        error's spectral norm and the number of singular values above it (a
        lower bound of the rank of every matrix that rounds to the stored
        one; at least 1 for a nonzero matrix);
    seed, draws
        storage rule only: the seed and number of the Monte Carlo draws that
        set ``threshold``.
    """

    threshold: float
    rtol: float
    atol: float
    precision: str
    rule: str = "relative"
    certain_threshold: Any = None
    certain_rank: Any = None
    seed: Any = None
    draws: Any = None

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
        ``(||A||_* / ||A||_F)^2``;
    rank_margin
        ``min(s_r / t, t / s_{r+1})`` for the rank r at the threshold t: the
        rank is r for every threshold in ``[t / margin, t * margin)``
        (``inf`` when no singular value limits it; near 1, the rank hangs on
        the tolerance).

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
    rank_margin: float

    @classmethod
    def _from_json(cls, d):
        """The record of the library's JSON object d (rows, cols, then
        ar_rank_metrics_json's keys; for Spectrum ar_spectrum_matrix_json,
        index first; see _from_json)."""
        return _from_json(cls, d)

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

    def _repr_summary(self) -> str:
        where = f" index {self.index}" if self.index else ""
        return (f"{self.rows}x{self.cols}{where}: rank {self.rank} (threshold "
                f"{self.tolerance.threshold:.3g}, {self.tolerance.rule}), stable_rank "
                f"{self.stable_rank:.4g}, singular_values={_r.array_text(self.singular_values)}")


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

    def _repr_summary(self) -> str:
        ranks = [m.rank for m in self.matrices]
        size = (f" of {self.matrices[0].rows}x{self.matrices[0].cols}, ranks "
                f"{min(ranks)}..{max(ranks)}") if ranks else ""
        return (f"{len(ranks)} matrices{size}, singular_values="
                f"{_r.array_text(self.singular_values)}")


# ---- represent, heads, params ----------------------------------------------
#
# The records below serialise through _json: a float that is not finite is
# None (the CLI's JSON writes null), nested records through their to_dict(),
# tuples and arrays as lists.  A field listed in a class's _OMIT is left out
# of to_dict() when it is None, as the CLI leaves the key out; fields in
# _NOT_JSON (numpy weights, the query of a stack) are never serialised.

import dataclasses as _dc
import math as _math
import typing as _typing
from typing import Optional

__all__ += ["Mask", "RepresentTolerance", "Smoothing", "InputX", "Residual",
            "Certificate", "MaskedCertificate", "Fit", "Represent",
            "MaskedTolerance", "InnovationGap", "MaskedRepresent", "RepresentSlice",
            "RepresentSummary", "RepresentStack", "FamilyError", "HeadConfig",
            "Heads", "ModelConfig", "HeadsModel", "ParamBreakdown", "ParamCount",
            "PaperConfig", "PaperTables", "PositionalBias"]


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


def _value(hint, v):
    """A JSON value as the field typed by hint holds it."""
    origin = getattr(hint, "__origin__", None)
    args = getattr(hint, "__args__", ())
    if origin is _typing.Union:
        if v is None and type(None) in args:
            return None
        kinds = [a for a in args if a is not type(None)]
        return _value(kinds[0], v) if len(kinds) == 1 else v
    if origin in (tuple, _typing.Tuple):
        return tuple(_value(args[0], x) for x in v)
    if hint is np.ndarray:
        return np.array([_real(x) for x in v], dtype=np.float64)
    if hint is float:
        return _real(v)
    if hint is int and isinstance(v, str):
        return int(v)  # a u64 above INT64_MAX, written as its decimal text
    if isinstance(hint, type) and _dc.is_dataclass(hint):
        return _from_json(hint, v)
    return v


def _from_json(cls, d, **extra):
    """A record of class cls from its JSON object d (the library's record
    JSON, parsed): each field converted by its type hint (nested records,
    Optional, tuples, float64 arrays; a key left out is the field's default,
    else None); extra sets the fields that are not in the JSON (_NOT_JSON)."""
    hints = _typing.get_type_hints(cls)
    names = {f.name for f in _dc.fields(cls)}
    unknown = set(d) - names
    if unknown:
        raise ValueError(f"{cls.__name__}: JSON keys without a field: {sorted(unknown)}")
    kw = {}
    for f in _dc.fields(cls):
        if f.name in d:
            kw[f.name] = _value(hints[f.name], d[f.name])
        elif f.name in extra:
            kw[f.name] = extra[f.name]
        elif f.default is _dc.MISSING and f.default_factory is _dc.MISSING:
            kw[f.name] = None
    return cls(**kw)


class _Record:
    _OMIT: frozenset = frozenset()
    _NOT_JSON: frozenset = frozenset()

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
        return d


@dataclass(frozen=True)
class Mask(_Record):
    """An attention mask as the CLI prints it: kind (none, causal, window,
    band, prefix, sink_window, dilated, documents, file), its canonical text
    ("window:16"), and the parameters of its kind (w, p, sinks, lengths, d;
    None when the kind has none)."""

    kind: str
    text: str
    w: Optional[int] = None
    p: Optional[int] = None
    sinks: Optional[int] = None
    lengths: Optional[Tuple[int, ...]] = None
    d: Optional[int] = None
    _OMIT = frozenset({"w", "p", "sinks", "lengths", "d"})


@dataclass(frozen=True)
class RepresentTolerance(_Record):
    """Tolerances of the unmasked analysis: the rank cut ``threshold =
    max(atol, rtol * log_norm2)`` on the singular values of Pi log P, the
    column (row) sum tolerance and the feasibility tolerance on X.  Under
    the storage rule (float16/bfloat16 maps, rtol and atol not given) also
    ``rule`` = "storage": threshold is then the rounding noise of log P
    (min_head_size an estimate) and ``certain_rank`` the count above
    ``certain_threshold``, a lower bound for every map that rounds to the
    stored one."""

    threshold: float
    rtol: float
    atol: float
    precision: str
    log_norm2: float
    sum_tol: float
    feasibility_tol: float
    rule: Optional[str] = None
    certain_threshold: Optional[float] = None
    certain_rank: Optional[int] = None
    _OMIT = frozenset({"rule", "certain_threshold", "certain_rank"})


@dataclass(frozen=True)
class Smoothing(_Record):
    """What smooth=EPS changed: eps, zero entries, smallest entry before
    and after, largest change."""

    eps: float
    zeros: int
    min_before: float
    min_after: float
    max_change: float


@dataclass(frozen=True)
class InputX(_Record):
    """The input X: given, and when given its d, rank, rank threshold and
    (unmasked analysis) ``ones_residual = ||(I - R) 1||`` and whether the
    column shift of log P is forced."""

    given: bool
    d: Optional[int] = None
    rank: Optional[int] = None
    threshold: Optional[float] = None
    ones_residual: Optional[float] = None
    shift_forced: Optional[bool] = None
    _OMIT = frozenset({"d", "rank", "threshold", "ones_residual", "shift_forced"})


@dataclass(frozen=True)
class Residual(_Record):
    """Feasibility residuals on X: key side ``||(I - R) L*||_F``, query side
    ``||L* (I - R)||_F``, their sum relative to ``||log P||_F``, and the side
    that failed (None when feasible; "key", "query" or "both")."""

    key: float
    query: float
    relative: float
    failed: Optional[str]


@dataclass(frozen=True)
class Certificate(_Record):
    """W_q, W_k of one head checked by a forward softmax (unmasked or
    masked): head_size x d each, W_q the query projection (columns as
    queries: S = (W_k X)^T (W_q X) / sqrt(K); rows as queries: S = (W_q X)^T
    (W_k X) / sqrt(K)); the max-abs error and KL residuals of the forward
    check, the logit error; rounding_ratio under the masked storage rule
    only: the largest error in units of the entry's rounding half-width
    (<= 1: the map rounds to the stored one).  wq, wk are float64 arrays
    owned by the record when represent(..., certificate=True), else None
    (not in to_dict).  ``max_abs`` is the former name of max_abs_error (the
    unmasked record's until 0.9.0, docs/api-changes.md)."""

    head_size: int
    d: int
    max_abs_error: float
    kl_mean: float
    kl_max: float
    logit_max_abs: float
    rounding_ratio: Optional[float] = None
    wq: Optional[np.ndarray] = None
    wk: Optional[np.ndarray] = None
    _NOT_JSON = frozenset({"wq", "wk"})
    _OMIT = frozenset({"rounding_ratio"})

    @property
    def max_abs(self) -> float:
        return self.max_abs_error

    def _repr_summary(self) -> str:
        kept = (f"wq={_r.array_text(self.wq)}, wk={_r.array_text(self.wk)}"
                if self.wq is not None else "weights not kept")
        return (f"head_size {self.head_size}, d={self.d}, max_abs_error="
                f"{self.max_abs_error:.3g}, kl_max={self.kl_max:.3g}, {kept}")


# The masked record was a second class until 0.9.0; the name stays.
MaskedCertificate = Certificate


@dataclass(frozen=True)
class Fit(_Record):
    """The probability-space fit below the minimal head size (L-BFGS from
    the truncated SVD plus seeded jitter): KL(P || P_hat) mean and max,
    Frobenius and max-abs errors, the start's KL, iterations, why it
    stopped."""

    head_size: int
    kl_mean: float
    kl_max: float
    fro_error: float
    max_abs_error: float
    start_kl_mean: float
    jitter: float
    iterations: int
    converged: bool
    start_kept: bool
    seed: Any
    stop: str
    method: str


@dataclass(frozen=True)
class PositionalBias(_Record):
    """The positional bias of ``represent(bias=...)``, as the CLI's
    ``positional_bias`` (docs/theory/positional-bias.md): kind (alibi,
    alibi_causal, t5, file; an array is "file" without a source), the ALiBi
    slope or the file, the bias rank (the shifted rank of B; None when only
    its bounds are known) with its bounds, and the reach min(n - 1,
    head_size + bias_rank_upper)."""

    kind: str
    slope: Optional[float] = None
    source: Optional[str] = None
    bias_rank: Optional[int] = None
    bias_rank_lower: int = 0
    bias_rank_upper: int = 0
    reach: int = 0
    _OMIT = frozenset({"slope", "source"})


@dataclass(frozen=True)
class Represent(_Record):
    """Unmasked representability of one n x n map, as ``attnrank represent
    --json`` (without ``source``): min_head_size = rank(Pi log P) when
    feasible (None otherwise), the head size tested, the verdict, the
    singular values of Pi log P, the certificate when representable, and
    below the minimum the Eckart-Young logit error and the fit (or why it
    was skipped)."""

    n: int
    axis: str
    tolerance: RepresentTolerance
    max_sum_defect: float
    smoothing: Optional[Smoothing]
    x: InputX
    feasible: bool
    residual: Residual
    centred_rank: int
    min_head_size: Optional[int]
    head_size: int
    representable: bool
    singular_values: np.ndarray
    certificate: Optional[Certificate] = None
    logit_error: Optional[float] = None
    logit_error_rel: Optional[float] = None
    fit: Optional[Fit] = None
    fit_skipped: Optional[str] = None
    positional_bias: Optional[PositionalBias] = None
    _OMIT = frozenset({"smoothing", "certificate", "logit_error", "logit_error_rel",
                       "fit", "fit_skipped", "positional_bias"})

    def _repr_summary(self) -> str:
        extra = ", certificate" if self.certificate is not None else ""
        if self.fit is not None:
            extra += f", fit kl_mean={self.fit.kl_mean:.3g}"
        return (f"{self.n}x{self.n}, axis={self.axis}: min_head_size={self.min_head_size}, "
                f"head_size={self.head_size}, representable={self.representable}{extra}")


@dataclass(frozen=True)
class MaskedTolerance(_Record):
    """Tolerances of the masked analysis: tau (nats, column innovations),
    the certificate accuracy (max-abs), precision, sum tolerance.  Under the
    storage rule (a map stored in float16 or bfloat16 with tau and accuracy
    at their defaults, not smoothed) also ``rule`` = "storage" and
    ``log_rounding`` (the largest bound of the rounding of log P, nats); the
    certificate is then confirmed entry by entry within the map's own
    rounding, and accuracy is the largest half-width of it."""

    tau: float
    accuracy: float
    precision: str
    sum_tol: float
    rule: Optional[str] = None
    log_rounding: Optional[float] = None
    _OMIT = frozenset({"rule", "log_rounding"})


@dataclass(frozen=True)
class InnovationGap(_Record):
    """Smallest innovation counted (None in JSON when none: inf) and largest
    not counted, scaled so that a column counts exactly above tau."""

    min_innovative: float
    max_not_innovative: float


@dataclass(frozen=True)
class MaskedRepresent(_Record):
    """Representability of one map under a mask, as ``attnrank represent
    --mask MASK --json`` (without ``source``).  status "exact" (staircase
    masks, or a lower bound met by a certificate: min_head_size set) or
    "bounds" (min_head_size_lower <= h* <= min_head_size_upper, upper None
    when no certificate passed); representable True, False or None
    (undecided between the bounds); the mask's generic value when known.
    Under the storage rule (``tolerance.rule == "storage"``) the bounds hold
    for every map that rounds to the stored one, min_head_size is the
    default estimate (always set) and status is "exact" only when the
    bounds meet."""

    n: int
    axis: str
    mask: Mask
    mask_source: str
    tolerance: MaskedTolerance
    max_sum_defect: float
    smoothing: Optional[Smoothing]
    x: InputX
    method: str
    status: str
    min_head_size: Optional[int]
    min_head_size_lower: int
    min_head_size_upper: Optional[int]
    block_lower: int
    blocks: int
    innovation_gap: InnovationGap
    generic_min_head_size: Optional[int]
    generic_status: Optional[str]
    generic_lower: Optional[int]
    worst_case_lower: Optional[int]
    worst_case_upper: Optional[int]
    formula: Optional[str]
    head_size: int
    representable: Optional[bool]
    certificate: Optional[Certificate] = None
    logit_error_lower: Optional[float] = None
    fit: Optional[Fit] = None
    fit_skipped: Optional[str] = None
    positional_bias: Optional[PositionalBias] = None
    _OMIT = frozenset({"min_head_size", "generic_min_head_size", "generic_status",
                       "generic_lower", "worst_case_lower", "worst_case_upper", "formula",
                       "certificate", "logit_error_lower", "fit", "fit_skipped", "smoothing",
                       "positional_bias"})

    def _repr_summary(self) -> str:
        upper = self.min_head_size_upper if self.min_head_size_upper is not None else "?"
        return (f"{self.n}x{self.n}, axis={self.axis}, mask={self.mask.text} "
                f"({self.mask_source}): {self.status}, min_head_size={self.min_head_size} "
                f"[{self.min_head_size_lower}..{upper}], head_size={self.head_size}, "
                f"representable={self.representable}")


@dataclass(frozen=True)
class RepresentSlice(_Record):
    """One map of a stack: its index over the leading axes, the mask used,
    status, the minimal head size (exact) or its bounds, and, when a head
    size was given, the verdict (None: undecided)."""

    index: Tuple[int, ...]
    mask: str
    mask_source: str
    status: str
    min_head_size_lower: int
    min_head_size: Optional[int]
    min_head_size_upper: Optional[int]
    representable: Optional[bool] = None
    tested_head_size: Optional[int] = None
    _NOT_JSON = frozenset({"tested_head_size"})

    def to_dict(self) -> Dict[str, Any]:
        d = _Record.to_dict(self)
        if self.tested_head_size is None:
            del d["representable"]
        return d


@dataclass(frozen=True)
class RepresentSummary(_Record):
    """Over the slices: count, how many exact, largest and median of the
    minimal head size (the upper bound where not exact)."""

    slices: int
    exact: int
    max_min_head_size: int
    median_min_head_size: int


@dataclass(frozen=True)
class RepresentStack(_Record):
    """A stack of maps (``attnrank represent`` on a stack, without
    ``source``): n, axis, one :class:`RepresentSlice` per map in C order,
    and the summary."""

    n: int
    axis: str
    slices: Tuple[RepresentSlice, ...]
    summary: RepresentSummary

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


@dataclass(frozen=True)
class FamilyError(_Record):
    """Expected error of one head on a target family: mean exact threshold
    of the drawn targets, Eckart-Young logit error (None above the logit
    cap), fitted KL and max-abs error (None above the fit cap)."""

    family: str
    samples: int
    head_size: int
    min_head_size_mean: float
    logit_error: Optional[float]
    logit_error_rel: Optional[float]
    kl_mean: Optional[float]
    kl_max: Optional[float]
    max_abs_error: Optional[float]


@dataclass(frozen=True)
class HeadConfig(_Record):
    """One layer's heads (standard MultiHead d_p = d/h, or FixedMultiHead):
    defined (False: h does not divide d, every other field None), head
    size, logit rank bound, both bottleneck verdicts, rank deficit, longest
    sequence without a bottleneck, attention parameters per layer; under a
    mask unbounded and the status of the verdict; the error estimates."""

    defined: bool
    head_size: Optional[int] = None
    logit_rank_bound: Optional[int] = None
    bottleneck: Optional[bool] = None
    bottleneck_paper: Optional[bool] = None
    rank_deficit: Optional[int] = None
    max_seq_len: Optional[int] = None
    attention_params: Optional[int] = None
    unbounded: Optional[bool] = None
    status: Optional[str] = None
    errors: Optional[Tuple[FamilyError, ...]] = None
    _OMIT = frozenset({"head_size", "logit_rank_bound", "bottleneck", "bottleneck_paper",
                       "rank_deficit", "max_seq_len", "attention_params", "unbounded",
                       "status", "errors"})


@dataclass(frozen=True)
class Heads(_Record):
    """Head-size bound of a layer (``attnrank heads --json``): the head size
    every pattern needs (or the generic value under a mask), the largest
    head counts without bottleneck, both configurations, the mask and its
    generic value; label and layers (None without a config) name a model's
    layer kind."""

    d: int
    heads: int
    n: int
    needed_head_size: int
    max_heads_exact: int
    max_heads_paper: int
    standard: HeadConfig
    fixed: HeadConfig
    seed: Any
    samples: int
    errors_capped: bool
    mask: Mask
    generic_min_head_size: int
    generic_status: str
    generic_lower: int
    worst_case_lower: int
    worst_case_upper: int
    formula: str
    label: Optional[str] = None
    layers: Optional[int] = None
    _OMIT = frozenset({"label", "layers"})


@dataclass(frozen=True)
class ModelConfig(_Record):
    """What was read from a config.json (0 or "" where absent)."""

    model_type: str
    architecture: str
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    max_position_embeddings: int
    sliding_window: int


@dataclass(frozen=True)
class HeadsModel(_Record):
    """``attnrank heads --config FILE --json`` (without the config's
    ``source``): the config, why that mask was assumed, one
    :class:`Heads` per layer kind, and the config's positional bias (a
    :class:`attnrank.ModelBias`; None, and no JSON key, without one)."""

    config: ModelConfig
    mask_reason: str
    layer_kinds: Tuple[Heads, ...]
    positional_bias: Optional["ModelBias"] = None
    _OMIT = frozenset({"positional_bias"})


@dataclass(frozen=True)
class ParamBreakdown(_Record):
    """Parameter counts of every part of a BERT-style model."""

    embeddings: int
    attention_per_layer: int
    ffn_per_layer: int
    layernorms_per_layer: int
    encoder: int
    pooler: int
    mlm_head: int


@dataclass(frozen=True)
class ParamCount(_Record):
    """``attnrank params --json``: the configuration, the breakdown and the
    total; table, printed_params and deviation for the paper's configs."""

    d: int
    heads: int
    head_size: int
    layers: int
    ffn: int
    vocab: int
    breakdown: ParamBreakdown
    total_params: int
    table: Optional[str] = None
    printed_params: Optional[float] = None
    deviation: Optional[float] = None
    _OMIT = frozenset({"table", "printed_params", "deviation"})


PaperConfig = ParamCount


@dataclass(frozen=True)
class PaperTables(_Record):
    """``attnrank params --paper-tables --json``: the fifteen configurations
    of the paper with the printed counts, the largest relative deviation and
    the tolerance (0.5%)."""

    configs: Tuple[ParamCount, ...]
    max_abs_deviation: float
    tolerance: float


# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())

# HeadsModel.positional_bias names ModelBias, whose module imports this one:
# here, for typing.get_type_hints (_from_json), once Mask and _Record exist.
from attnrank._results_bias import ModelBias  # noqa: E402
