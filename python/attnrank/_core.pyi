# Type stub of the extension module attnrank._core (see _core.pyx).
from typing import Any, Dict, Literal, Mapping, NoReturn, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from attnrank._results import RankMetrics
from attnrank._results_verify import VerifyReport

STATUS_CODES: Dict[str, int]
NSTATUS: int

def version() -> str: ...
def strerror(status: int) -> str: ...
def raise_status(status: int, function: str, detail: Optional[str] = ...) -> NoReturn: ...
def rank_metrics(
    singular_values: npt.ArrayLike,
    shape: Optional[Tuple[int, int]] = ...,
    *,
    rtol: Optional[float] = ...,
    atol: float = ...,
    precision: Union[str, npt.DTypeLike] = ...,
    energy_fraction: float = ...,
) -> RankMetrics: ...

# represent, heads, params (_represent.pxi)
import os
from attnrank._results import (
    Heads, HeadsModel, MaskedRepresent, PaperTables, ParamCount, Represent, RepresentStack,
)

def represent(
    p: npt.ArrayLike,
    *,
    axis: Literal["auto", "row", "col", "column"] = ...,  # default "auto"
    mask: Union[None, str, npt.ArrayLike] = ...,
    x: Optional[npt.ArrayLike] = ...,
    head_size: Optional[int] = ...,
    precision: Union[None, str, npt.DTypeLike] = ...,
    rtol: Optional[float] = ...,
    atol: float = ...,
    sum_tol: Optional[float] = ...,
    smooth: float = ...,
    tau: Optional[float] = ...,
    accuracy: Optional[float] = ...,
    extra_rank: int = ...,
    verify_seconds: Optional[float] = ...,
    certificate: bool = ...,
    fit: bool = ...,
    max_iter: Optional[int] = ...,
    seed: int = ...,
) -> Union[Represent, MaskedRepresent, RepresentStack]: ...
def heads(
    d: Optional[int] = ...,
    heads: Optional[int] = ...,
    n: Optional[int] = ...,
    *,
    mask: Optional[str] = ...,
    head_size: Optional[int] = ...,
    samples: int = ...,
    seed: int = ...,
    config: Union[None, str, "os.PathLike[str]"] = ...,
) -> Union[Heads, HeadsModel]: ...
def params(
    d: Optional[int] = ...,
    heads: Optional[int] = ...,
    *,
    head_size: Optional[int] = ...,
    layers: Optional[int] = ...,
    ffn: Optional[int] = ...,
    vocab: Optional[int] = ...,
    paper_tables: bool = ...,
) -> Union[ParamCount, PaperTables]: ...

# ---- softmax bottleneck, weights (_softmax_bottleneck.pxi, _weights.pxi) ----
from attnrank._results_weights import SoftmaxBottleneck, Weights

def softmax_bottleneck(
    p: npt.ArrayLike,
    *,
    d: int,
    bias: bool = ...,
    rtol: Optional[float] = ...,
    atol: float = ...,
    precision: Union[None, str, npt.DTypeLike] = ...,
    sum_tol: Optional[float] = ...,
    fit: bool = ...,
    seed: int = ...,
    jitter: float = ...,
    max_iter: int = ...,
) -> SoftmaxBottleneck: ...
def weights(
    model_dir: Union[None, str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"] = ...,
    *,
    state_dict: Optional[Mapping[str, Any]] = ...,  # name -> torch.Tensor or np.ndarray
    n: Optional[int] = ...,
    precision: Union[None, str, npt.DTypeLike] = ...,
    mask: Optional[str] = ...,
    layer_range: Union[None, str, int, Tuple[int, int]] = ...,
    q_pattern: Optional[str] = ...,
    k_pattern: Optional[str] = ...,
    heads: Optional[int] = ...,
    head_size: Optional[int] = ...,
    kv_heads: Optional[int] = ...,
    context: Optional[int] = ...,
    # model_dir: bool; state_dict: config.json's contents, a path to it, or None
    config: Union[None, bool, Mapping[str, Any], str, bytes, "os.PathLike[str]",
                  "os.PathLike[bytes]"] = ...,
    rtol: Optional[float] = ...,
    atol: float = ...,
    seed: int = ...,
    energy: float = ...,
) -> Weights: ...

# ---- seprank, depthwidth, collapse (_seprank.pxi, _depthwidth.pxi, _collapse.pxi) ----
from typing import Mapping, Sequence
from attnrank._results_theory import (
    Collapse, DepthWidthFit, DepthWidthOptimum, DepthWidthTransitionDepth,
    DepthWidthTransitionWidth, DepthWidthVerdict, Seprank,
)

def seprank(
    layers: int,
    d: int,
    *,
    heads: int = ...,
    n: int = ...,
    partition: Union[None, str, Tuple[Sequence[int], Sequence[int]]] = ...,
    templates: Optional[int] = ...,
    max_dim: int = ...,
    residual: bool = ...,
    position: int = ...,
    entry: Optional[int] = ...,
    exact: bool = ...,
    primes: Optional[int] = ...,
    rational: bool = ...,
    no_float: bool = ...,
    seed: int = ...,
    rtol: Optional[float] = ...,
    atol: float = ...,
    threads: int = ...,
    max_memory: Optional[float] = ...,
    embed_rank: Optional[int] = ...,
    vocab: Optional[int] = ...,
    positions: bool = ...,
) -> Seprank: ...
def depthwidth_fit(points: npt.ArrayLike) -> DepthWidthFit: ...
def depthwidth(
    params: Optional[float] = ...,
    layers: Optional[int] = ...,
    d: Optional[int] = ...,
    *,
    fit: Optional[npt.ArrayLike] = ...,
    law: Union[None, str, "os.PathLike[str]", Mapping[str, Any], DepthWidthFit] = ...,
    intercept: Optional[float] = ...,
    slope: Optional[float] = ...,
    tolerance: float = ...,
    embed_rank: Optional[int] = ...,
) -> Union[DepthWidthOptimum, DepthWidthTransitionWidth, DepthWidthTransitionDepth,
           DepthWidthVerdict, DepthWidthFit]: ...
def collapse(
    layers: int,
    n: int,
    d: int,
    heads: int,
    *,
    skip: bool = ...,
    mlp: bool = ...,
    mlp_width: Optional[int] = ...,
    seed: int = ...,
    gamma: Optional[float] = ...,
    beta: Optional[float] = ...,
    rtol: Optional[float] = ...,
    atol: float = ...,
    fit_floor: float = ...,
) -> Collapse: ...

# ---- check ----
from typing import Mapping, Sequence
import os

from attnrank._results_check import Check, CheckLaw, CheckReport

def check(
    d: Optional[int] = ...,
    heads: Optional[int] = ...,
    n: Optional[int] = ...,
    *,
    head_size: Optional[int] = ...,
    layers: Optional[int] = ...,
    mask: Optional[str] = ...,
    strict: bool = ...,
    require: Union[None, str, Sequence[str]] = ...,
    config: Union[None, str, "os.PathLike[str]"] = ...,
    configs: Optional[Sequence[Mapping[str, Any]]] = ...,
    law: Union[None, Mapping[str, Any], CheckLaw, npt.ArrayLike] = ...,
) -> Union[Check, CheckReport]: ...
def assert_conditions(
    d: Union[None, int, Check, CheckReport] = ...,
    heads: Optional[int] = ...,
    n: Optional[int] = ...,
    **kwargs: Any,
) -> Union[Check, CheckReport]: ...

# ---- head scores ----
from attnrank._results_scores import HeadScores

def head_scores(
    p: npt.ArrayLike,
    *,
    axis: str = ...,
    tokens: Optional[npt.ArrayLike] = ...,
    period: Optional[int] = ...,
) -> HeadScores: ...

# ---- circuits ----
from attnrank._results_circuits import Circuits, CopyingScores

def copying_scores(
    W_V: npt.ArrayLike, W_O: npt.ArrayLike, *, precision: Optional[str] = ...
) -> CopyingScores: ...
def composition_score(
    earlier: Tuple[npt.ArrayLike, npt.ArrayLike],
    later: Tuple[npt.ArrayLike, npt.ArrayLike],
    *,
    mode: str,
) -> float: ...
def circuits(
    model_dir: Any = ...,
    *,
    state_dict: Optional[Mapping[str, Any]] = ...,
    ov: Optional[bool] = ...,
    qk: bool = ...,
    full: bool = ...,
    composition: Union[None, str, Sequence[str]] = ...,
    tl: bool = ...,
    layer_range: Any = ...,
    head_range: Any = ...,
    precision: Optional[str] = ...,
    heads: Optional[int] = ...,
    head_size: Optional[int] = ...,
    kv_heads: Optional[int] = ...,
    config: Any = ...,
) -> Circuits: ...
def full_copying_scores(
    heads: Sequence[Tuple[npt.ArrayLike, npt.ArrayLike]],
    W_E: npt.ArrayLike,
    W_U: Optional[npt.ArrayLike] = ...,
) -> list: ...

# ---- verify ----

def verify(
    suite: str = ...,
    *,
    full: bool = ...,
    seed: int = ...,
    timings: bool = ...,
) -> VerifyReport: ...
