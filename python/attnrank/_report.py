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
    previous_token, first_token, diagonal, induction
        the head-type scores of the map (:func:`attnrank.head_scores`):
        mean weight on the previous key, on the first key, on the query's
        own position, and on the key after an earlier occurrence of the
        query's token (needs the token ids or a repetition period); None
        where a score is not defined (rectangular maps, no tokens);
    source
        what computed the map (the record's ``source``);
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
    previous_token: Optional[float] = None
    first_token: Optional[float] = None
    diagonal: Optional[float] = None
    induction: Optional[float] = None
    source: str = ""
    note: str = ""


_FIELDS = [f.name for f in dataclasses.fields(HeadRow)]
_INT = {"call", "batch", "head", "n", "n_keys", "rank", "min_head_size", "head_size"}
_FLOAT = {"stable_rank", "threshold"}
SCORE_COLUMNS = ("previous_token", "first_token", "diagonal", "induction")
_BOOL = {"bottleneck"}


def _parse(name: str, text: str) -> Any:
    if name in _INT:
        return None if text == "" else int(text)
    if name in _FLOAT:
        return float(text)
    if name in SCORE_COLUMNS:
        return None if text == "" else float(text)
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
        """A figure of each layer call's heads: rank and stable rank per head
        (bars: mean over the batch, the range as error bars), the minimal
        head size against the head size when computed, and, beside them,
        the head-type scores (previous-token, first-token, diagonal,
        induction) when any is defined.

        Drawn with matplotlib when it is installed, else with gnuplot (PNG,
        or SVG for a ``.svg`` path); the file is written whole or not at
        all.  With neither, the rows are written as CSV to ``path`` with the
        suffix ``.csv`` instead, with a RuntimeWarning.  Returns the path
        written.
        """
        from attnrank._report_plot import plot_report
        return plot_report(self, Path(path))


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


def _mask_kind(rec: Any, n_q: int, n_k: int) -> str:
    if n_q != n_k:
        return "n/a"
    kind = getattr(rec, "mask_kind", None)
    if kind is None:  # a record-like object without the property
        kind = "none" if rec.mask is None else "given"
    return "auto" if kind == "none" else kind


def _head_size_of(rec: Any, head_size: Union[None, int, Mapping[str, int]]) -> Optional[int]:
    if isinstance(head_size, Mapping):
        hs = head_size.get(rec.layer, getattr(rec, "head_size", None))
    else:
        hs = head_size if head_size is not None else getattr(rec, "head_size", None)
    return None if hs is None else int(hs)


def _tokens_of(tokens: Any, batch: int, n: int) -> Optional[np.ndarray]:
    """The token ids as batch x n int64, or None."""
    if tokens is None:
        return None
    t = tokens.detach().cpu().numpy() if hasattr(tokens, "detach") else np.asarray(tokens)
    if t.ndim == 1:
        t = np.broadcast_to(t, (batch, t.shape[0]))
    if t.ndim != 2 or t.shape[0] != batch or t.shape[1] != n:
        raise ValueError(f"analyze: tokens= has shape {t.shape}, the maps are batch {batch} "
                         f"x n {n}: give batch x n token ids (or n for every batch entry)")
    return t.astype(np.int64, copy=False)


def _scores(p: np.ndarray, tok: Optional[np.ndarray], period: Optional[int]) -> Dict[str, Any]:
    """The head-type scores of one square map (rows as queries), None where
    a score is not defined."""
    fn = getattr(attnrank, "head_scores", None)
    if fn is None or p.shape[0] != p.shape[1]:
        return {}
    result = fn(p, axis="row", tokens=tok, period=period)
    out = {}
    for name in SCORE_COLUMNS:
        v = getattr(result, name, None)
        out[name] = None if v is None or not np.isfinite(v) else float(v)
    return out


def analyze_records(records: Sequence[Any], *,
                    head_size: Union[None, int, Mapping[str, int]] = None,
                    tokens: Any = None, period: Optional[int] = None,
                    rtol: Optional[float] = None, atol: float = 0.0,
                    represent: Union[None, bool, Callable[..., Any]] = None,
                    represent_options: Optional[Mapping[str, Any]] = None,
                    threads: int = 0) -> AttentionReport:
    """The :class:`AttentionReport` of attention records (one head each,
    ``probs`` batch x n_q x n_k, rows as queries).

    head_size
        an int for every layer, or a mapping from layer name to head size;
        it overrides the records' own ``head_size``.  A layer with neither
        gets None (and ``bottleneck`` None);
    tokens, period
        token ids (batch x n, or n) or a repetition period for the induction
        score (:func:`attnrank.head_scores`); without them ``induction`` is
        None;
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
        threads of :func:`attnrank.spectrum` over a record's batch.
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
    rows: List[HeadRow] = []
    for rec in records:
        probs = rec.probs
        if np.ndim(probs) != 3:
            raise ValueError(f"analyze: record {rec.layer} head {rec.head} has probs of shape "
                             f"{np.shape(probs)}, expected batch x n_q x n_k")
        b, nq, nk = probs.shape
        hs = _head_size_of(rec, head_size)
        try:
            stack = attnrank.spectrum(probs, rtol=rtol, atol=atol, precision=rec.precision,
                                      threads=threads)
        except attnrank.Error as e:
            where = f"layer {rec.layer}, call {rec.call}, head {rec.head}"
            raise type(e)(e.status, e.message, e.function,
                          f"{where}: {e.detail}" if e.detail else where) from e
        kind = _mask_kind(rec, nq, nk)
        tok = _tokens_of(tokens, b, nk) if nq == nk else None
        for bi, m in enumerate(stack.matrices):
            mhs: Optional[int] = None
            verdict: Optional[bool] = None
            note = reason
            if kind == "n/a":
                note = "rectangular map (cross-attention): represent needs n x n"
            elif call is not None:
                if kind == "given":
                    mask_arg: Any = (~rec.mask[bi]).astype(np.uint8)  # 1 = may attend
                else:
                    mask_arg = kind
                try:
                    result = call(probs[bi], mask_arg, rec.precision, options)
                except attnrank.Error as e:
                    note = f"represent: {e}"
                else:
                    mhs, verdict, note = _verdict(result, hs)
            scores = _scores(probs[bi], None if tok is None else tok[bi], period)
            rows.append(HeadRow(layer=rec.layer, call=int(rec.call), batch=bi,
                                head=int(rec.head), n=nq, n_keys=nk, precision=rec.precision,
                                rank=m.rank, stable_rank=m.stable_rank,
                                threshold=m.tolerance.threshold, mask=kind,
                                min_head_size=mhs, head_size=hs, bottleneck=verdict,
                                source=getattr(rec, "source", ""), note=note, **scores))
    # rows by call, then batch entry, then head (records come head by head)
    order = {key: i for i, key in enumerate(dict.fromkeys((r.layer, r.call) for r in rows))}
    rows.sort(key=lambda r: (order[(r.layer, r.call)], r.batch, r.head))
    return AttentionReport(rows=tuple(rows), represent_available=call is not None,
                           unavailable=() if call is not None else REPRESENT_COLUMNS,
                           reason=reason)
