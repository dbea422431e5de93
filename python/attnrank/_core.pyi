# Type stub of the extension module attnrank._core (see _core.pyx).
from typing import Any, Dict, NoReturn, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from attnrank._results import RankMetrics

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
    axis: str = ...,
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
