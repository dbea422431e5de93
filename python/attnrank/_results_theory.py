"""Result records of the theory bindings: separation rank (``attnrank
seprank``), depth/width allocation (``attnrank depthwidth``) and rank
collapse (``attnrank collapse``).

Field names are the CLI's JSON keys; ``to_dict()`` equals the CLI's
``--json`` output for the same arguments, without input-describing fields
(the ``file`` of a fit read from a CSV).  Non-finite floats serialise as None
(the CLI writes null), seeds above INT64_MAX as decimal strings (as every
seed the CLI writes), see attnrank._results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from attnrank import _repr as _r

from attnrank._results import Tolerance, _Record

__all__ = ["PrimeRank", "SeprankEmbedding", "Seprank", "DepthWidthLaw", "DepthWidthEmbedding", "DepthWidthFit", "DepthWidthOptimum",
           "DepthWidthTransitionWidth", "DepthWidthTransitionDepth", "DepthWidthVerdict",
           "CollapseDecayFit", "CollapseBound", "CollapseDepth", "Collapse"]


def _seed_json(seed: int) -> Union[int, str]:
    # jansson integers are signed 64-bit: larger seeds go out as strings.
    return seed if seed <= 9223372036854775807 else str(seed)


# ---- seprank --------------------------------------------------------------------

@dataclass(frozen=True)
class PrimeRank(_Record):
    """The rank of the grid tensor over F_p for one prime p (a certificate:
    the generic rank over Q is at least this)."""

    prime: int
    rank: int


@dataclass(frozen=True)
class SeprankEmbedding(_Record):
    """The token-embedding block of a :class:`Seprank` (only with
    ``embed_rank=``; docs/theory/embedding-rank.md): the embedding rank r,
    m = min(d, r), k = (3^L - 1)/2, the vocabulary V (None without one),
    positions, exact_function_rank (the grid is the whole vocabulary, so its
    rank is the separation rank of the function, rank_meaning
    "separation_rank"; else "lower_bound"), bounds_claim ("proved": the
    bounds of the record are those of m coordinates), bound_log_vocab
    (min(|A|, |B|) ln V, None without a vocabulary), the closed form
    expected_rank (None when unknown or above e^40), expected_rank_log,
    expected_claim ("verified", "conjectured" or "none"), expected_formula
    and attains_expected (None without a closed form)."""

    rank: int
    m: int
    k: Optional[int]
    vocab: Optional[int]
    positions: bool
    exact_function_rank: bool
    rank_meaning: str
    bounds_claim: str
    bound_log_vocab: float
    expected_rank: Optional[int]
    expected_rank_log: float
    expected_claim: str
    expected_formula: Optional[str]
    attains_expected: Optional[bool]


@dataclass(frozen=True)
class Seprank(_Record):
    """Grid-tensor rank of the simplified self-attention network, as
    ``attnrank seprank --json``: a LOWER bound on the separation rank of
    f(X) = r^T y^L_position w.r.t. the partition.

    The network (layers, d, heads, head_size, n, residual, read-out
    position, readout: the output entry read or "seeded" for a random
    linear read-out), the grid (partition "A/B", templates M, rows M^|A|,
    cols M^|B|), the base seed.  With the float evaluation: float_rank, its
    tolerance (threshold, rtol, atol, precision) and the singular values
    (None otherwise).  With exact=True: exact_rank (the largest rank modulo
    the primes, each a certificate), primes (one :class:`PrimeRank` each),
    primes_agree, rational_rank (the rank over Q of an integer instance, or
    None when not computed) and, with both, float_undercounts.  saturated:
    the rank fills the matrix (only a lower bound then).  Bounds are natural
    logs: bound_log the least of the monomial, split and parity bounds
    (proved upper bounds on the separation rank); bound = round(exp(bound_log))
    when bound_log < 40, else None.  l_th = log_3(d) and the paper's regime.
    With ``embed_rank=``: embedding, a :class:`SeprankEmbedding` (the bounds
    are then those of m = min(d, r) coordinates); None (and no JSON key)
    otherwise."""

    layers: int
    d: int
    heads: int
    head_size: int
    n: int
    residual: bool
    position: int
    readout: Union[int, str]
    partition: str
    templates: int
    rows: int
    cols: int
    seed: int
    float_rank: Optional[int]
    tolerance: Optional[Tolerance]
    singular_values: Optional[np.ndarray]
    exact_rank: Optional[int]
    primes: Optional[Tuple[PrimeRank, ...]]
    primes_agree: Optional[bool]
    rational_rank: Optional[int]
    float_undercounts: Optional[bool]
    saturated: bool
    bound_log: float
    bound_log_monomial: float
    bound_log_split: float
    bound_log_parity: float
    bound: Optional[int]
    l_th: float
    regime: str
    embedding: Optional[SeprankEmbedding] = None
    _OMIT = frozenset({"embedding"})

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON: the float block only with the float evaluation,
        the exact block (rational_rank null when not computed) only with
        exact=True, float_undercounts only with both."""
        d = _Record.to_dict(self)
        d["seed"] = _seed_json(self.seed)
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


# ---- depthwidth -----------------------------------------------------------------

@dataclass(frozen=True)
class DepthWidthLaw(_Record):
    """The transition law applied: ln d_x = intercept + slope L with
    N_params = params_coeff L d_x^2, and where it came from ("paper",
    "fit" for a refit from points, "given" for intercept/slope or a
    mapping, or the path of a JSON law file)."""

    intercept: float
    slope: float
    params_coeff: float
    source: str


@dataclass(frozen=True)
class DepthWidthFit(_Record):
    """Least-squares refit ln(width) = intercept + slope depth from
    transition points (``attnrank depthwidth --fit FILE --json`` without
    ``file``): points used, weighted (errors given: weights 1 / (sigma_w /
    w)^2), the coefficients with standard errors and covariance, the
    (weighted) R^2, chi2 and chi2_red = chi2 / (n - 2) (None when n = 2).
    mode is "fit" for the refit alone (None, left out, inside a mode's
    record)."""

    points: int
    weighted: bool
    intercept: float
    slope: float
    intercept_err: float
    slope_err: float
    covariance: float
    r2: float
    chi2: float
    chi2_red: float
    mode: Optional[str] = None
    _OMIT = frozenset({"mode"})


@dataclass(frozen=True)
class DepthWidthEmbedding(_Record):
    """The embedding crossover of a depthwidth mode (only with
    ``embed_rank=``; derived, docs/theory/embedding-rank.md): the embedding
    rank, the width compared with it (compared_d: the given width, the
    optimal width of the budget or the transition width of the depth), the
    effective width min(compared_d, embed_rank), width_capped (the width
    exceeds the embedding rank: the excess buys no separation rank),
    crossover_layers (the law's transition depth of the effective width),
    l_th = log_3 of the effective width, depth_efficient (the depth judged
    is at most the crossover; None when no depth is judged) and claim
    ("derived")."""

    embed_rank: int
    compared_d: float
    effective_d: float
    width_capped: bool
    crossover_layers: float
    l_th: float
    depth_efficient: Optional[bool]
    claim: str


@dataclass(frozen=True)
class _DepthWidthMode(_Record):
    """What every mode's record starts with, in the CLI's key order: the
    mode, the law applied and, when the law was refit from points, the
    refit (None otherwise, left out of to_dict)."""

    mode: str
    law: DepthWidthLaw
    fit: Optional[DepthWidthFit]
    _OMIT = frozenset({"fit", "embedding"})


@dataclass(frozen=True)
class DepthWidthOptimum(_DepthWidthMode):
    """Optimal depth L* and width for a parameter budget (mode "optimum"):
    the root of params_coeff L exp(2 (a + b L)) = total_params; l_th =
    log_3(optimal_d)."""

    total_params: float
    optimal_layers: float
    optimal_d: float
    l_th: float
    embedding: Optional[DepthWidthEmbedding] = None


@dataclass(frozen=True)
class DepthWidthTransitionWidth(_DepthWidthMode):
    """Transition width exp(a + b L) for a depth (mode "transition_d")."""

    layers: int
    transition_d: float
    l_th: float
    embedding: Optional[DepthWidthEmbedding] = None


@dataclass(frozen=True)
class DepthWidthTransitionDepth(_DepthWidthMode):
    """Transition depth (ln d - a) / b for a width (mode
    "transition_layers"; negative: past the transition at every depth)."""

    d: int
    transition_layers: float
    l_th: float
    embedding: Optional[DepthWidthEmbedding] = None


@dataclass(frozen=True)
class DepthWidthVerdict(_DepthWidthMode):
    """Verdict on a network (L, d) (mode "verdict"): its size, the
    transition depth of its width and width of its depth, the optimal
    depth and width for its size, depth_ratio = L / L*, "depth-efficient"
    (L <= transition depth of d) or "depth-inefficient", near_optimal
    (|L - L*| <= tolerance L*)."""

    layers: int
    d: int
    total_params: float
    transition_layers: float
    transition_d: float
    optimal_layers: float
    optimal_d: float
    depth_ratio: float
    verdict: str
    depth_efficient: bool
    near_optimal: bool
    tolerance: float
    l_th: float
    embedding: Optional[DepthWidthEmbedding] = None


# ---- collapse -------------------------------------------------------------------

@dataclass(frozen=True)
class CollapseDecayFit(_Record):
    """Decay of the relative Frobenius residual over depths 0..last_depth
    (before it first falls to floor): geometric fit (slope of log r_l per
    layer, factor exp(slope)) and order k of r_{l+1} ~ c r_l^k (None with
    fewer than 2 points / pairs)."""

    floor: float
    last_depth: int
    geometric_slope: float
    geometric_factor: float
    order: float
    order_log_c: float
    order_pairs: int


@dataclass(frozen=True)
class CollapseBound(_Record):
    """The paper's constants and the worst log margin log(res_1inf) -
    bound_log over depths >= 1 (<= 0: the bound holds at every depth)."""

    gamma: float
    beta: float
    worst_margin_log: float


@dataclass(frozen=True)
class CollapseDepth(_Record):
    """One depth (0 = the input): norms of X_l and of its residual
    res(X) = X - 1 x^T (Frobenius and the paper's composite sqrt(||.||_1
    ||.||_inf), absolute and relative), ratio of relative residuals to the
    previous depth (None at depth 0), the numerical rank of X_l with its
    tolerance and the effective ranks, the singular values, and the log of
    the paper's bound (only when gamma and beta were given)."""

    depth: int
    norm_fro: float
    res_fro: float
    rel_res_fro: float
    norm_1inf: float
    res_1inf: float
    rel_res_1inf: float
    ratio: float
    rank: int
    tolerance: Tolerance
    stable_rank: float
    roy_vetterli_rank: float
    participation_ratio: float
    energy_rank: int
    energy_fraction: float
    nuclear_rank: float
    rank_margin: float
    singular_values: np.ndarray
    bound_log: Optional[float] = None
    _OMIT = frozenset({"bound_log"})

    _repr_fields = ("depth", "rank", "rel_res_fro", "ratio", "stable_rank", "bound_log",
                    "singular_values")


@dataclass(frozen=True)
class Collapse(_Record):
    """Rank collapse across depth, as ``attnrank collapse --json``: the
    variant ("pure attention", "attention, skip", "attention+mlp, no skip",
    "attention+mlp, skip"), the sizes, mlp_width (0 without the MLP), the
    seed, axis "row" (rows are tokens), the residual's definition, the
    decay fit, the bound (None without gamma and beta) and one
    :class:`CollapseDepth` per depth 0..layers."""

    variant: str
    layers: int
    n: int
    d: int
    heads: int
    head_size: int
    skip: bool
    mlp: bool
    mlp_width: int
    seed: int
    axis: str
    residual: str
    decay_fit: CollapseDecayFit
    bound: Optional[CollapseBound]
    depths: Tuple[CollapseDepth, ...]
    _OMIT = frozenset({"bound"})

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON (bound only when gamma and beta were given)."""
        d = _Record.to_dict(self)
        d["seed"] = _seed_json(self.seed)
        return d

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


# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())
