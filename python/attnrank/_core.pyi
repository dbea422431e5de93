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
