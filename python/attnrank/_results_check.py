"""Records of attnrank.check: the verdicts of theorem conditions on a model
configuration, built from the library's record (ar_check_run_json), the
JSON of ``attnrank check --json`` (docs/conventions.md): the fields are its
keys in order, so ``to_dict()`` and the CLI's output compare key by key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from attnrank import _repr as _r

from attnrank._results import _Record
from attnrank._results_bias import ModelBias
from attnrank._results_theory import DepthWidthFit

__all__ = ["CheckVerdict", "Check", "CheckLaw", "CheckLawFit", "CheckReport"]


@dataclass(frozen=True)
class CheckVerdict(_Record):
    """Whether one condition holds, and why.

    condition
        ``"no-bottleneck"``, ``"depth-efficient"`` or
        ``"near-optimal-allocation"``;
    holds
        True when the condition holds;
    why
        the reason, one line (the CLI's text);
    status
        what the value the verdict rests on is: ``"proved"`` (a theorem),
        ``"verified"`` (the generic head size checked over F_p for these
        sizes), ``"conjectural"`` (only a lower bound is proved; ``strict``
        fails such a verdict) or ``"empirical"`` (the fitted depth-width law
        of the allocation conditions).
    """

    condition: str
    holds: bool
    why: str
    status: str

    _repr_fields = ("condition", "holds", "status", "why")


@dataclass(frozen=True)
class Check(_Record):
    """The verdicts of one configuration (one layer kind of a model).

    config
        the label, as the CLI makes it (``"d=768, heads=12, n=512"``, or the
        config.json path with ``" [windowed layers: window:4096]"`` per layer
        kind);
    d, heads, n, layers
        the sizes judged (None: not given);
    head_size
        the head size used: given, or d / heads (None when neither is known);
    mask
        the mask's text as given (``"none"``: bidirectional);
    conditions
        one :class:`CheckVerdict` per required condition, in the order
        no-bottleneck, depth-efficient, near-optimal-allocation;
    positional_bias
        with a config that implies ALiBi or T5 buckets, this layer kind's
        heads (a :class:`attnrank.ModelBias` with one layer kind): bias rank
        and reach per head.  The gates are unchanged by a bias.  None
        otherwise.
    """

    config: str
    d: int
    heads: Optional[int]
    n: Optional[int]
    head_size: Optional[int]
    layers: Optional[int]
    mask: str
    conditions: Tuple[CheckVerdict, ...]
    positional_bias: Optional[ModelBias] = None
    _OMIT = frozenset({"positional_bias"})

    @property
    def passed(self) -> bool:
        """True when every required condition holds."""
        return all(v.holds for v in self.conditions)

    @property
    def failures(self) -> Tuple[CheckVerdict, ...]:
        """The verdicts that do not hold."""
        return tuple(v for v in self.conditions if not v.holds)

    def _repr_summary(self) -> str:
        failed = [v.condition for v in self.conditions if not v.holds]
        verdict = f"fails {', '.join(failed)}" if failed else "passes"
        count = len(self.conditions)
        return f"{self.config}: {count} condition{'' if count == 1 else 's'}, {verdict}"


@dataclass(frozen=True)
class CheckLaw(_Record):
    """The depth-width law ``ln d = intercept + slope L``, size
    ``params_coeff L d^2``, that the allocation conditions used; source
    ``"paper"``, ``"fit"`` (refit from points) or ``"given"`` (a mapping)."""

    intercept: float
    slope: float
    params_coeff: float
    source: str


# The refit of the law from transition points is depthwidth_fit's record
# (as ``depthwidth --fit``; mode None, so to_dict is the CLI's ``fit``
# object without its ``file``).
CheckLawFit = DepthWidthFit


@dataclass(frozen=True)
class CheckReport(_Record):
    """The verdicts of several configurations: every layer kind of a model's
    config.json, or every entry of ``configs``.

    configs
        one :class:`Check` per configuration;
    failed_conditions
        the number of verdicts that do not hold;
    law, fit
        the depth-width law used (:class:`CheckLaw`) when an allocation
        condition was evaluated, else None; its refit (:class:`CheckLawFit`)
        when ``law`` was given as points, else None.
    """

    configs: Tuple[Check, ...]
    failed_conditions: int
    law: Optional[CheckLaw] = None
    fit: Optional[CheckLawFit] = None
    _OMIT = frozenset({"law", "fit"})

    @property
    def passed(self) -> bool:
        """True when every condition of every configuration holds."""
        return self.failed_conditions == 0

    @property
    def failures(self) -> Tuple[Tuple[Check, CheckVerdict], ...]:
        """(configuration, verdict) of every verdict that does not hold."""
        return tuple((c, v) for c in self.configs for v in c.failures)

    def _repr_summary(self) -> str:
        return (f"{len(self.configs)} configurations, {self.failed_conditions} failed "
                f"conditions")


# One summary line per record instead of the dataclass repr (attnrank._repr).
_r.install(globals())
