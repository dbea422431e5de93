"""Records of attnrank.check: the verdicts of theorem conditions on a model
configuration, built from the library's record (ar_check_run_json), the
JSON of ``attnrank check --json`` (docs/conventions.md), and made from the
library's schema (attnrank._results.records): the fields are its keys in
order, so ``to_dict()`` and the CLI's output compare key by key."""

from __future__ import annotations

from typing import Tuple

from attnrank import _repr as _r

from attnrank._results import records
from attnrank._results_bias import ModelBias  # noqa: F401 (the hints' globals)
from attnrank._results_theory import DepthWidthFit

class _CheckVerdict:
    _repr_fields = ("condition", "holds", "status", "why")


class _Check:
    @property
    def passed(self) -> bool:
        """True when every required condition holds."""
        return all(v.holds for v in self.conditions)

    @property
    def failures(self) -> Tuple["CheckVerdict", ...]:
        """The verdicts that do not hold."""
        return tuple(v for v in self.conditions if not v.holds)

    def _repr_summary(self) -> str:
        failed = [v.condition for v in self.conditions if not v.holds]
        verdict = f"fails {', '.join(failed)}" if failed else "passes"
        count = len(self.conditions)
        return f"{self.config}: {count} condition{'' if count == 1 else 's'}, {verdict}"


class _CheckReport:
    @property
    def passed(self) -> bool:
        """True when every condition of every configuration holds."""
        return self.failed_conditions == 0

    @property
    def failures(self) -> Tuple[Tuple["Check", "CheckVerdict"], ...]:
        """(configuration, verdict) of every verdict that does not hold."""
        return tuple((c, v) for c in self.configs for v in c.failures)

    def _repr_summary(self) -> str:
        return (f"{len(self.configs)} configurations, {self.failed_conditions} failed "
                f"conditions")


__all__ = records(globals(), "check",
                  {"CheckVerdict": _CheckVerdict, "Check": _Check, "CheckReport": _CheckReport})

# The refit of the law from transition points is depthwidth_fit's record
# (as ``depthwidth --fit``; mode None, so to_dict is the CLI's ``fit``
# object without its ``file``).
CheckLawFit = DepthWidthFit
__all__ += ["CheckLawFit"]

# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())
