"""The per-head report of :func:`attnrank.torch.analyze` (torch-free).

:func:`analyze_records` turns attention records (``attnrank.torch``'s
:class:`~attnrank.torch.AttentionRecord`, or anything with the same
``layer``, ``call``, ``probs``, ``mask``, ``is_causal`` and ``precision``)
into an :class:`AttentionReport`: one :class:`HeadRow` per (record, batch,
head) slice with the rank metrics of the map (:func:`attnrank.spectrum`)
and, when the binding ``attnrank.represent`` exists, the minimal head size
under the record's mask and the bottleneck verdict for the layer's head size.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import inspect
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

import attnrank

__all__ = ["AttentionReport", "HeadRow", "analyze_records"]

#: columns that need the representability binding
REPRESENT_COLUMNS = ("min_head_size", "bottleneck")


@dataclass(frozen=True)
class HeadRow:
    """One (layer call, batch, head) slice of an attention record.

    layer, call
        the record's module name and call number;
    batch, head
        the slice of ``probs``;
    n, n_keys
        queries and keys of the map (equal for self-attention);
    precision
        the stored precision that set the rank tolerance;
    rank, stable_rank, threshold
        numerical rank, stable rank and the tolerance threshold (the cut on
        the singular values) of the map, as :func:`attnrank.spectrum`;
    mask
        the mask the representability question was asked under:
        ``"causal"``, ``"given"`` (the captured mask), ``"auto"`` (inferred
        from the exact zeros of the map), or ``"n/a"`` (a rectangular map);
    min_head_size
        the minimal head size of one head reproducing the map under that
        mask, or None (``attnrank.represent`` missing, not applicable, or it
        failed: see ``note``);
    head_size
        the layer's head size (``embed_dim / num_heads``, or as given), or None;
    bottleneck
        ``min_head_size > head_size``, or None when either is unknown;
    note
        why ``min_head_size`` is None, or ``""``.
    """

    layer: str
    call: int
    batch: int
    head: int
    n: int
    n_keys: int
    precision: str
    rank: int
    stable_rank: float
    threshold: float
    mask: str
    min_head_size: Optional[int]
    head_size: Optional[int]
    bottleneck: Optional[bool]
    note: str = ""


_FIELDS = [f.name for f in dataclasses.fields(HeadRow)]
_INT = {"call", "batch", "head", "n", "n_keys", "rank", "min_head_size", "head_size"}
_FLOAT = {"stable_rank", "threshold"}
_BOOL = {"bottleneck"}


def _parse(name: str, text: str) -> Any:
    if name in _INT:
        return None if text == "" else int(text)
    if name in _FLOAT:
        return float(text)
    if name in _BOOL:
        return None if text == "" else text == "True"
    return text


@dataclass(frozen=True)
class AttentionReport:
    """Per-layer, per-head rank report (see :class:`HeadRow` for the columns).

    rows
        one :class:`HeadRow` per (record, batch, head), in record order, then
        batch, then head;
    represent_available
        whether ``min_head_size`` / ``bottleneck`` were computed (the
        ``attnrank.represent`` binding was found and used);
    unavailable
        the columns that were not computed (``("min_head_size",
        "bottleneck")`` without the binding), with ``reason`` saying why.
    """

    rows: Tuple[HeadRow, ...]
    represent_available: bool
    unavailable: Tuple[str, ...] = ()
    reason: str = ""

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def columns(self) -> List[str]:
        return list(_FIELDS)

    @property
    def layers(self) -> List[Tuple[str, int]]:
        """(layer, call) pairs in record order."""
        seen: Dict[Tuple[str, int], None] = {}
        for r in self.rows:
            seen.setdefault((r.layer, r.call), None)
        return list(seen)

    def to_dicts(self) -> List[Dict[str, Any]]:
        """One dict per row, keys in column order (None where unknown)."""
        return [dataclasses.asdict(r) for r in self.rows]

    def to_pandas(self):
        """A pandas DataFrame of the rows (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("AttentionReport.to_pandas needs pandas, which is not "
                              "installed; use to_dicts() or to_csv(path)") from e
        return pd.DataFrame(self.to_dicts(), columns=self.columns)

    def to_csv(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """Write the rows as CSV (header = column names; empty cell = None).

        Written to a temporary file in the same directory and renamed over
        ``path``, so a reader never sees half a file.  Returns the path.
        """
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                   dir=str(path.parent) if str(path.parent) else ".")
        try:
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(_FIELDS)
                for r in self.rows:
                    w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v)
                                for v in dataclasses.astuple(r)])
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def from_csv(cls, path: Union[str, "os.PathLike[str]"]) -> "AttentionReport":
        """Read a report written by :meth:`to_csv`."""
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != _FIELDS:
                raise ValueError(f"{path}: not an attnrank report (columns {reader.fieldnames})")
            rows = tuple(HeadRow(**{k: _parse(k, v) for k, v in rec.items()})
                         for rec in reader)
        available = any(r.min_head_size is not None for r in rows)
        return cls(rows=rows, represent_available=available,
                   unavailable=() if available else REPRESENT_COLUMNS)

    def plot(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """A figure of rank per head, one panel per layer call.

        With matplotlib: bars of the numerical rank per head (mean over the
        batch, the range as error bars), the stable rank as a line, and, when
        computed, the minimal head size (max over the batch) and the layer's
        head size as lines;
        saved to ``path`` (format from its suffix, e.g. PNG).  Without
        matplotlib: the rows are written as CSV to ``path`` with the suffix
        ``.csv`` instead, with a warning.  Returns the path written.
        """
        path = Path(path)
        try:
            import matplotlib
            matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError:
            out = self.to_csv(path.with_suffix(".csv"))
            warnings.warn(f"AttentionReport.plot: matplotlib is not installed; wrote the "
                          f"report as CSV to {out} instead of a figure", RuntimeWarning,
                          stacklevel=2)
            return out
        layers = self.layers
        fig, axes = plt.subplots(len(layers), 1, squeeze=False,
                                 figsize=(6.4, 1.0 + 2.2 * max(len(layers), 1)))
        for ax, (layer, call) in zip(axes[:, 0], layers):
            rows = [r for r in self.rows if r.layer == layer and r.call == call]
            heads = sorted({r.head for r in rows})
            rank = np.array([[r.rank for r in rows if r.head == h] for h in heads], float)
            stable = np.array([np.mean([r.stable_rank for r in rows if r.head == h])
                               for h in heads])
            mean = rank.mean(axis=1)
            err = np.vstack([mean - rank.min(axis=1), rank.max(axis=1) - mean])
            ax.bar(heads, mean, yerr=err, color="tab:blue", alpha=0.7, label="rank")
            ax.plot(heads, stable, "o-", color="tab:orange", label="stable rank")
            top = float(rank.max())
            mins = [[r.min_head_size for r in rows if r.head == h] for h in heads]
            if all(v is not None for m in mins for v in m):
                # the minimal head size is what the layer's head size bounds
                ax.plot(heads, [max(m) for m in mins], "s--", color="tab:red",
                        label="min head size (max over batch)")
                top = max(top, max(max(m) for m in mins))
                hs = {r.head_size for r in rows} - {None}
                if len(hs) == 1:
                    size = hs.pop()
                    ax.axhline(size, color="gray", linestyle=":", label="head size")
                    top = max(top, size)
            title = layer if call == 0 else f"{layer} (call {call})"
            ax.set_title(f"{title}, n = {rows[0].n}", fontsize=9)
            ax.set_xlabel("head")
            ax.set_ylabel("rank")
            ax.set_xticks(heads)
            ax.set_ylim(0, 1.45 * max(top, 1.0))
            ax.legend(fontsize=7, loc="upper center", ncol=4, frameon=False)
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        return path


def _represent_caller(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adapt ``fn(P, mask=..., ...)`` to PyTorch's layout (rows as queries).

    When ``fn`` takes ``axis`` it is called with ``axis="row"``; otherwise P
    (and an array mask) are transposed to columns as queries, the library's
    default layout.  ``precision`` is passed when ``fn`` takes it.
    """
    try:
        params = inspect.signature(fn).parameters
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        takes_axis = var_kw or "axis" in params
        takes_precision = var_kw or "precision" in params
    except (TypeError, ValueError):  # no signature: assume the CLI's options
        takes_axis = takes_precision = True

    def call(p: np.ndarray, mask: Any, precision: str, options: Mapping[str, Any]) -> Any:
        kwargs = dict(options)
        if takes_precision:
            kwargs.setdefault("precision", precision)
        if takes_axis:
            kwargs.setdefault("axis", "row")
        else:
            p = p.T
            if isinstance(mask, np.ndarray):
                mask = mask.T
        return fn(p, mask=mask, **kwargs)

    return call


def _get(result: Any, name: str) -> Any:
    if isinstance(result, Mapping):
        return result.get(name)
    return getattr(result, name, None)


def _is_causal(mask: np.ndarray) -> bool:
    """Every slice of the (..., n, n) bool mask is the causal triangle."""
    n = mask.shape[-1]
    if mask.shape[-2] != n:
        return False
    tri = np.triu(np.ones((n, n), bool), 1)
    return bool(np.array_equal(mask, np.broadcast_to(tri, mask.shape)))


def _verdict(result: Any, head_size: Optional[int]) -> Tuple[Optional[int], Optional[bool], str]:
    mhs = _get(result, "min_head_size")
    if mhs is not None:
        mhs = int(mhs)
        return mhs, (None if head_size is None else mhs > head_size), ""
    lower = _get(result, "min_head_size_lower")
    upper = _get(result, "min_head_size_upper")
    if lower is not None and head_size is not None:
        if int(lower) > head_size:
            return None, True, f"min head size >= {int(lower)} (not decided exactly)"
        if upper is not None and int(upper) <= head_size:
            return None, False, f"min head size <= {int(upper)} (not decided exactly)"
    if lower is not None:
        return None, None, (f"min head size in [{int(lower)}, "
                            f"{'?' if upper is None else int(upper)}] (not decided exactly)")
    return None, None, "not representable by any head size (represent gave no minimum)"


def analyze_records(records: Sequence[Any], *,
                    head_size: Union[None, int, Mapping[str, int]] = None,
                    head_sizes: Optional[Mapping[str, int]] = None,
                    rtol: Optional[float] = None, atol: float = 0.0,
                    represent: Union[None, bool, Callable[..., Any]] = None,
                    represent_options: Optional[Mapping[str, Any]] = None,
                    threads: int = 0) -> AttentionReport:
    """The :class:`AttentionReport` of attention records.

    head_size
        an int for every layer, or a mapping from layer name to head size;
        it overrides ``head_sizes`` (the module's own, from
        :func:`attnrank.torch.analyze`).  A layer with neither gets None
        (and ``bottleneck`` None);
    rtol, atol
        the rank tolerance, as :func:`attnrank.spectrum` (rtol None: from
        the record's ``precision``);
    represent
        None: use ``attnrank.represent`` when the package has it; False:
        skip it; True: require it (AttributeError otherwise); a callable
        ``f(P, mask=..., **options)`` to use instead;
    represent_options
        extra keyword arguments for ``represent``;
    threads
        threads of :func:`attnrank.spectrum` over a record's heads.
    """
    fn: Optional[Callable[..., Any]] = None
    reason = ""
    if callable(represent):
        fn = represent
    elif represent is False:
        reason = "represent=False"
    elif hasattr(attnrank, "represent"):
        fn = attnrank.represent
    elif represent is True:
        raise AttributeError("analyze: represent=True, but this attnrank has no "
                             "attnrank.represent binding")
    else:
        reason = "this attnrank has no attnrank.represent binding"
    call = _represent_caller(fn) if fn is not None else None
    options = dict(represent_options or {})
    sizes: Dict[str, int] = dict(head_sizes or {})
    rows: List[HeadRow] = []
    for rec in records:
        probs = np.asarray(rec.probs)
        if probs.ndim != 4:
            raise ValueError(f"analyze: record {rec.layer} has probs of shape {probs.shape}, "
                             f"expected batch x heads x n_q x n_k")
        b, h, nq, nk = probs.shape
        if isinstance(head_size, Mapping):
            hs = head_size.get(rec.layer, sizes.get(rec.layer))
        else:
            hs = head_size if head_size is not None else sizes.get(rec.layer)
        hs = None if hs is None else int(hs)
        try:
            stack = attnrank.spectrum(probs, rtol=rtol, atol=atol, precision=rec.precision,
                                      threads=threads)
        except attnrank.Error as e:
            where = f"layer {rec.layer}, call {rec.call}"
            raise type(e)(e.status, e.message, e.function,
                          f"{where}: {e.detail}" if e.detail else where) from e
        full = rec.mask
        if nq != nk:
            kind = "n/a"
        elif full is not None and _is_causal(full):
            kind = "causal"
        elif full is not None:
            kind = "given"
        else:
            kind = "auto"
        for (bi, hi), m in zip(np.ndindex(b, h), stack.matrices):
            mhs: Optional[int] = None
            verdict: Optional[bool] = None
            note = reason
            if kind == "n/a":
                note = "rectangular map (cross-attention): represent needs n x n"
            elif call is not None:
                if kind == "given":
                    mask_arg: Any = (~full[bi, hi]).astype(np.uint8)  # 1 = may attend
                else:
                    mask_arg = kind
                try:
                    result = call(probs[bi, hi], mask_arg, rec.precision, options)
                except attnrank.Error as e:
                    note = f"represent: {e}"
                else:
                    mhs, verdict, note = _verdict(result, hs)
            rows.append(HeadRow(layer=rec.layer, call=int(rec.call), batch=bi, head=hi,
                                n=nq, n_keys=nk, precision=rec.precision, rank=m.rank,
                                stable_rank=m.stable_rank, threshold=m.tolerance.threshold,
                                mask=kind, min_head_size=mhs, head_size=hs,
                                bottleneck=verdict, note=note))
    return AttentionReport(rows=tuple(rows), represent_available=call is not None,
                           unavailable=() if call is not None else REPRESENT_COLUMNS,
                           reason=reason)
