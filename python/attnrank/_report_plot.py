"""Figures of an :class:`attnrank._report.AttentionReport`: matplotlib when
it is installed, gnuplot (a dependency of the toolkit's figures) otherwise,
and the rows as CSV with a warning when neither is there."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from attnrank._report import SCORE_COLUMNS, HeadRow

__all__ = ["plot_report"]



def _title(layer: str, call: int, rows: Sequence[HeadRow]) -> str:
    title = layer if call == 0 else f"{layer} (call {call})"
    return f"{title}, n = {rows[0].n}"


def _plot_ranks(ax: Any, layer: str, call: int, rows: Sequence[HeadRow]) -> None:
    """Bars of the rank per head (mean over the batch, range as error bars),
    the stable rank, and the minimal head size against the head size."""
    heads = sorted({r.head for r in rows})
    rank = np.array([[r.rank for r in rows if r.head == h] for h in heads], float)
    stable = np.array([np.mean([r.stable_rank for r in rows if r.head == h]) for h in heads])
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
    ax.set_title(_title(layer, call, rows), fontsize=9)
    ax.set_xlabel("head")
    ax.set_ylabel("rank")
    ax.set_xticks(heads)
    ax.set_ylim(0, 1.45 * max(top, 1.0))
    ax.legend(fontsize=7, loc="upper center", ncol=4, frameon=False)


def _plot_scores(ax: Any, layer: str, call: int, rows: Sequence[HeadRow]) -> None:
    """Grouped bars of the head-type scores per head (mean over the batch)."""
    heads = sorted({r.head for r in rows})
    width = 0.8 / len(SCORE_COLUMNS)
    for j, name in enumerate(SCORE_COLUMNS):
        values = []
        for h in heads:
            v = [getattr(r, name) for r in rows if r.head == h and getattr(r, name) is not None]
            values.append(float(np.mean(v)) if v else np.nan)
        if not np.all(np.isnan(values)):
            ax.bar(np.array(heads) + (j - 1.5) * width, values, width,
                   label=name.replace("_", " "))
    ax.set_title(f"head-type scores: {_title(layer, call, rows)}", fontsize=9)
    ax.set_xlabel("head")
    ax.set_ylabel("score")
    ax.set_xticks(heads)
    ax.set_ylim(0, 1.3)
    ax.legend(fontsize=7, loc="upper center", ncol=4, frameon=False)


def _groups(report: Any) -> List[Tuple[str, int, List[HeadRow]]]:
    return [(layer, call, [r for r in report.rows if r.layer == layer and r.call == call])
            for layer, call in report.layers]


def _scored(report: Any) -> bool:
    return any(getattr(r, c) is not None for r in report.rows for c in SCORE_COLUMNS)


def _with_matplotlib(report: Any, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    groups = _groups(report)
    cols = 2 if _scored(report) else 1
    fig, axes = plt.subplots(len(groups), cols, squeeze=False,
                             figsize=(6.4 * cols, 1.0 + 2.2 * max(len(groups), 1)))
    for i, (layer, call, rows) in enumerate(groups):
        _plot_ranks(axes[i, 0], layer, call, rows)
        if cols == 2:
            _plot_scores(axes[i, 1], layer, call, rows)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _per_head(rows: Sequence[HeadRow], field: str) -> Dict[int, float]:
    """Mean over the batch of a field, per head (NaN when undefined)."""
    out = {}
    for h in sorted({r.head for r in rows}):
        v = [getattr(r, field) for r in rows if r.head == h and getattr(r, field) is not None]
        out[h] = float(np.mean(v)) if v else float("nan")
    return out


def _gnuplot_script(report: Any, out: str, svg: bool) -> str:
    """One row of panels per layer call: ranks, and scores when defined.
    Data inline (datablocks), so the script is the whole input."""
    groups = _groups(report)
    cols = 2 if _scored(report) else 1
    width, height = 640 * cols, 120 + 240 * max(len(groups), 1)
    term = (f"svg size {width},{height} font 'sans,10'" if svg
            else f"pngcairo size {width},{height} font 'sans,9'")
    lines = [f"set terminal {term}", f"set output '{out}'",
             "set style fill solid 0.7 border -1", "set key top center horizontal font ',8'",
             "set xlabel 'head'", "set datafile missing 'NaN'",
             f"set multiplot layout {len(groups)},{cols}"]
    for i, (layer, call, rows) in enumerate(groups):
        heads = sorted({r.head for r in rows})
        rank, stable = _per_head(rows, "rank"), _per_head(rows, "stable_rank")
        mins = _per_head(rows, "min_head_size")
        scores = {c: _per_head(rows, c) for c in SCORE_COLUMNS}
        lines.append(f"$d{i} << EOD")
        lines += [" ".join(repr(v) for v in [h, rank[h], stable[h], mins[h]]
                           + [scores[c][h] for c in SCORE_COLUMNS]) for h in heads]
        lines.append("EOD")
        title = _title(layer, call, rows).replace("'", "")
        sizes = sorted({r.head_size for r in rows} - {None})
        top = max([rank[h] for h in heads] + [m for m in mins.values() if m == m] + sizes
                  + [1.0])
        lines += [f"set title '{title}' noenhanced", "set ylabel 'rank'",
                  f"set xrange [{heads[0] - 0.6}:{heads[-1] + 0.6}]", "set xtics 1",
                  f"set yrange [0:{1.45 * top}]",
                  f"plot $d{i} using 1:2:(0.7) with boxes title 'rank', "
                  "'' using 1:3 with linespoints pt 7 title 'stable rank'"
                  + (", '' using 1:4 with linespoints dt 2 pt 5 title 'min head size'"
                     if any(m == m for m in mins.values()) else "")
                  + (f", {sizes[0]} with lines dt 3 lw 1.5 lc 'black' title 'head size'"
                     if len(sizes) == 1 else "")]
        if cols == 2:
            w = 0.8 / len(SCORE_COLUMNS)
            parts = [f"'' using ($1 + {(j - 1.5) * w}):{5 + j}:({w}) with boxes "
                     f"title '{c.replace('_', ' ')}'" for j, c in enumerate(SCORE_COLUMNS)]
            lines += [f"set title 'head-type scores: {title}' noenhanced",
                      "set ylabel 'score'", "set yrange [0:1.3]",
                      f"plot $d{i} " + ", ".join(parts)[3:]]
    lines.append("unset multiplot")
    return "\n".join(lines) + "\n"


def _with_gnuplot(report: Any, path: Path) -> None:
    """Render into a temporary file beside ``path``, then rename it over."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix or ".png",
                               dir=str(path.parent) if str(path.parent) else ".")
    os.close(fd)
    try:
        script = _gnuplot_script(report, tmp.replace("'", ""), path.suffix.lower() == ".svg")
        run = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True,
                             check=False)
        if run.returncode != 0:
            raise RuntimeError(f"AttentionReport.plot: gnuplot failed: "
                               f"{run.stderr.strip().splitlines()[-1:]}")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def plot_report(report: Any, path: Path) -> Path:
    """The figure of :meth:`AttentionReport.plot` (see there)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass
    else:
        _with_matplotlib(report, path)
        return path
    if shutil.which("gnuplot"):
        _with_gnuplot(report, path)
        return path
    out = report.to_csv(path.with_suffix(".csv"))
    warnings.warn(f"AttentionReport.plot: neither matplotlib nor gnuplot is installed; wrote "
                  f"the report as CSV to {out} instead of a figure", RuntimeWarning,
                  stacklevel=3)
    return out
