"""Result records of :func:`attnrank.verify` (``attnrank verify --json``).

Built from the library's JSON of the report (ar_verify_report_json), so the
field names and their order are the CLI's keys; ``to_dict()`` equals the
CLI's ``--json`` output for the same suite, seed and size (with
``timings=True`` each check also carries its ``seconds``, which differ from
run to run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from attnrank._results import _Record
from attnrank._results_theory import _seed_json

__all__ = ["VerifyCheck", "VerifyReport"]


@dataclass(frozen=True)
class VerifyCheck(_Record):
    """One check of the registry as run: its suite, name and the statement
    it re-measures (with the docs/theory/ note that states it), the seeded
    instance, the measured value, the relation ("==", "<=", ">="), the
    expected value or bound and the tolerance, and passed.  detail: words
    on the measurement (None when there are none); error: the status text
    when the computation itself failed; seconds: wall time (only with
    ``timings=True``)."""

    suite: str
    name: str
    statement: str
    instance: str
    measured: float
    relation: str
    expected: float
    tolerance: float
    passed: bool
    detail: Optional[str] = None
    error: Optional[str] = None
    seconds: Optional[float] = None
    _OMIT = frozenset({"detail", "error", "seconds"})


@dataclass(frozen=True)
class VerifyReport(_Record):
    """The checks of one suite ("all": every check) on seeds derived from
    the base seed: suite, seed, full (the larger instances), checks in
    registry order, and the counts passed and failed.  ``bool(report)`` is
    True when no check failed."""

    suite: str
    seed: int
    full: bool
    checks: Tuple[VerifyCheck, ...]
    passed: int
    failed: int

    def __bool__(self) -> bool:
        return self.failed == 0

    def to_dict(self) -> Dict[str, Any]:
        d = _Record.to_dict(self)
        d["seed"] = _seed_json(self.seed)
        return d
