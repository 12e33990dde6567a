"""A self-contained HTML report of a comparison: one file, inline SVG plots, no JavaScript.

:func:`write_report` (and ``rank-polars compare --report FILE.html``) writes a page with

* a header naming the pairs compared (every pair, or each version against the baseline), the
  judgments (the qrels' name, or the labels the log carries) and the columns read,
* the comparison table (``rank_polars.stats.compare.compare``) and a one-line verdict per row,
* each version's mean per metric with its confidence interval (the t interval over queries,
  :func:`rank_polars.stats.intervals.intervals` on the per-query values),
* for an all-pairs comparison of three or more versions, a pair matrix per metric (versions x
  versions; a cell is row - column, coloured by the verdict, the interval and adjusted p in its
  tooltip),
* metric@k curves for k = 1..20 per version (one ``evaluate`` call with every cutoff), each with a
  legend that wraps below it and its values in a table with k down the rows,
* the distribution of per-query differences (version - baseline) as histograms,
* wins / ties / losses per version as stacked bars.

The plots are SVG written here (no plotting library, nothing fetched from the network), so
the page opens anywhere, offline, and can be mailed as one file.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import re
from pathlib import Path
from typing import Any, Sequence

import polars as pl

from rank_polars.schema import Schema
from rank_polars.errors import RankPolarsError
from rank_polars.measures import parse, parse_all
from rank_polars.measures.base import FamilyMeasure
from rank_polars.presentation import level as percent
from rank_polars.presentation import p_value, verdict

PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")
WIN, TIE, LOSS = "#55A868", "#B8B8B8", "#C44E52"


# ----------------------------------------------------------------------------------------
# data


def curve_metrics(metrics: Sequence[str], max_k: int = 20) -> dict[str, list[tuple[int, str]]]:
    """For each metric that takes a cutoff, ``[(k, name@k), ...]`` for k = 1..max_k."""
    out: dict[str, list[tuple[int, str]]] = {}
    seen: set[str] = set()
    for metric in metrics:
        spec = parse(metric)
        if isinstance(spec, FamilyMeasure):  # its tables and its kind of value: no curve over k
            continue
        base = type(spec)(None, **spec.params).name
        if not type(spec).SUPPORTS_CUTOFF or base in seen:
            continue
        seen.add(base)
        label = re.sub(r"\s*@\s*\S+$", "", metric) if isinstance(metric, str) else base  # "mrr", not "rr"
        out[label] = [(k, type(spec)(k, **spec.params).name) for k in range(1, max_k + 1)]
    return out


def _eval_kwargs(columns: dict[str, str] | Schema | None) -> dict[str, Any]:
    """``evaluate``'s column keywords: the mapping as ``schema=``, or the flat names given."""
    return {"schema": columns} if isinstance(columns, Schema) else dict(columns or {})


def report_data(
    run: Any, metrics: Sequence[str], *, comparison: pl.DataFrame, qrels: Any = None, by: str = "model",
    missing: str = "zero", engine: str = "polars", columns: dict[str, str] | Schema | None = None, max_k: int = 20,
    confidence: float = 0.95, order: str = "auto", qrels_label: str | None = None, judge: str | None = None,
) -> dict[str, Any]:
    """Everything the page shows, computed with :func:`rank_polars.evaluate` (``order``: its
    ``order=``, as the comparison was ranked; ``qrels_label``: the judgments' name in the header,
    by default their path, or what kind of table they are; ``judge``: whose labels of judgments
    with several judges, as ``evaluate``'s)."""
    from rank_polars.evaluate import evaluate
    from rank_polars.stats.intervals import intervals

    kw = _eval_kwargs(columns)
    if order != "auto":
        kw["order"] = order
    if judge is not None:
        kw["judge"] = judge
    setup = setup_rows(run, metrics, qrels=qrels, qrels_label=qrels_label, columns=columns, order=order, judge=judge)
    curves = curve_metrics(metrics, max_k)
    names = [name for pairs in curves.values() for _, name in pairs]
    curve_table = (
        evaluate(run, names, qrels=qrels, by=by, missing=missing, engine=engine, **kw) if names else None
    )
    # a catalogue-level metric has no per-query values: its numbers are the comparison's own
    parsed = parse_all(list(metrics))
    outputs = [(label, spec) for label, spec in parsed if spec.AGGREGATE != "catalog"]
    kept = [metric for metric, (_, spec) in zip(metrics, parsed) if spec.AGGREGATE != "catalog"]
    query_col = columns.column("query") if isinstance(columns, Schema) else (columns or {}).get("query", "query")
    if not outputs:
        return {"curves": curves, "curve_table": curve_table, "diffs": {}, "versions":
                [str(v) for v in comparison.select(pl.concat([pl.col("baseline"), pl.col("version")]).cast(pl.String)
                                                   .unique().sort()).to_series().to_list()],
                "n_queries": int(comparison["n_queries"].max()), "by": by, "means": [], "confidence": confidence,
                "setup": setup}
    per_query = evaluate(run, kept, qrels=qrels, by=by, per_query=True, missing=missing, engine=engine, **kw)
    versions = [str(v) for v in per_query[by].unique().sort().to_list()]
    diffs: dict[tuple[str, str, str], list[float]] = {}
    paired_rows = comparison.filter(pl.col("test") != "delta") if "test" in comparison.columns else comparison
    # unpaired arms (test="delta") have no per-query differences to draw
    for row in paired_rows.select("metric", "baseline", "version").unique(maintain_order=True).iter_rows(named=True):
        metric, base, version = row["metric"], str(row["baseline"]), str(row["version"])
        if metric not in per_query.columns:
            continue
        sides = per_query.select(pl.col(by).cast(pl.String), query_col, metric)
        left = sides.filter(pl.col(by) == base).select(query_col, pl.col(metric).alias("b"))
        right = sides.filter(pl.col(by) == version).select(query_col, pl.col(metric).alias("v"))
        paired = left.join(right, on=query_col, how="inner").drop_nulls()
        diffs[(metric, base, version)] = (paired["v"] - paired["b"]).to_list()
    bounds = intervals(per_query.drop(query_col), outputs, [by], confidence)
    means = per_query.group_by(by).agg([pl.col(label).mean() for label, _ in outputs]).join(bounds, on=by).sort(by)
    means_rows = [
        (label, [(str(r[by]), r[label], r[f"{label}_low"], r[f"{label}_high"]) for r in means.iter_rows(named=True)])
        for label, spec in outputs if spec.AGGREGATE == "mean"
    ]
    return {"curves": curves, "curve_table": curve_table, "diffs": diffs, "versions": versions,
            "n_queries": per_query[query_col].n_unique(), "by": by, "means": means_rows, "confidence": confidence,
            "setup": setup}


# ----------------------------------------------------------------------------------------
# SVG


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    count = math.ceil((hi - start) / step - 1e-9)
    return [round(start + i * step, 10) for i in range(count + 1)]


def _fmt_tick(v: float) -> str:
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}".rstrip("0").rstrip(".") if abs(v) >= 0.01 else f"{v:.3g}"


def _text_width(text: str, size: float = 11.0) -> float:
    """About how wide ``text`` is drawn at ``size`` px in a sans-serif font (for margins)."""
    return 0.58 * size * len(str(text))


def _title_lines(title: str, room: float) -> list[str]:
    """``title`` on one line, or on two split at the space nearest its middle when it would run
    past ``room`` px (a long version name in a histogram's title)."""
    if _text_width(title, 13) <= room or " " not in title:
        return [title]
    spaces = [i for i, c in enumerate(title) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(title) / 2))
    return [title[:cut], title[cut + 1:]]


class _Axes:
    """A plot area with linear x and y scales, gridlines and labelled ticks."""

    def __init__(self, width: int, height: int, xlim: tuple[float, float], ylim: tuple[float, float],
                 margin: tuple[int, int, int, int] = (34, 16, 44, 56)) -> None:
        self.w, self.h = width, height
        self.top, self.right, self.bottom, self.left = margin
        self.x0, self.x1 = xlim
        self.y0, self.y1 = ylim
        self.parts: list[str] = []

    def x(self, v: float) -> float:
        return self.left + (v - self.x0) / ((self.x1 - self.x0) or 1) * (self.w - self.left - self.right)

    def y(self, v: float) -> float:
        return self.h - self.bottom - (v - self.y0) / ((self.y1 - self.y0) or 1) * (self.h - self.top - self.bottom)

    def frame(self, xticks: Sequence[float], yticks: Sequence[float], xlabel: str, ylabel: str, title: str) -> None:
        p = self.parts
        lines = _title_lines(title, self.w - 16)
        for i, line in enumerate(lines):
            p.append(f'<text class="title" x="{self.w / 2:.1f}" y="{16 + 15 * i}" text-anchor="middle">{_esc(line)}</text>')
        self.top += 15 * (len(lines) - 1)  # a title on two lines takes its room from the plot
        for t in yticks:
            yy = self.y(t)
            p.append(f'<line class="grid" x1="{self.left}" x2="{self.w - self.right}" y1="{yy:.1f}" y2="{yy:.1f}"/>')
            p.append(f'<text class="tick" x="{self.left - 6}" y="{yy + 4:.1f}" text-anchor="end">{_fmt_tick(t)}</text>')
        for t in xticks:
            xx = self.x(t)
            p.append(f'<line class="axis" x1="{xx:.1f}" x2="{xx:.1f}" y1="{self.h - self.bottom}" y2="{self.h - self.bottom + 4}"/>')
            p.append(f'<text class="tick" x="{xx:.1f}" y="{self.h - self.bottom + 16}" text-anchor="middle">{_fmt_tick(t)}</text>')
        p.append(f'<line class="axis" x1="{self.left}" x2="{self.w - self.right}" y1="{self.h - self.bottom}" y2="{self.h - self.bottom}"/>')
        p.append(f'<line class="axis" x1="{self.left}" x2="{self.left}" y1="{self.top}" y2="{self.h - self.bottom}"/>')
        p.append(f'<text class="label" x="{(self.left + self.w - self.right) / 2:.1f}" y="{self.h - 8}" text-anchor="middle">{_esc(xlabel)}</text>')
        cy = (self.top + self.h - self.bottom) / 2
        p.append(f'<text class="label" x="14" y="{cy:.1f}" text-anchor="middle" transform="rotate(-90 14 {cy:.1f})">{_esc(ylabel)}</text>')

    def svg(self, id_: str, label: str) -> str:
        body = "\n".join(self.parts)
        return (f'<svg id="{_esc(id_)}" class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.w} {self.h}" '
                f'width="{self.w}" height="{self.h}" role="img" aria-label="{_esc(label)}">\n{body}\n</svg>')


def line_chart(id_: str, title: str, series: dict[str, list[tuple[float, float]]], xlabel: str, ylabel: str,
               width: int = 372, height: int = 290) -> str:
    """One line (an SVG ``<path>``) per series, with a dot and a tooltip per point."""
    ys = [y for pts in series.values() for _, y in pts if y is not None and math.isfinite(y)]
    xs = [x for pts in series.values() for x, _ in pts]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    pad = (hi - lo) * 0.08 or 0.05
    yticks = _nice_ticks(max(0.0, lo - pad) if lo >= 0 else lo - pad, hi + pad)
    ax = _Axes(width, height, (min(xs, default=0), max(xs, default=1)), (yticks[0], yticks[-1]))
    xmax = max(xs, default=1)
    xticks = [1, *range(5, int(xmax) + 1, 5)] if xmax >= 5 else list(range(1, int(xmax) + 1))
    ax.frame(xticks, yticks, xlabel, ylabel, title)
    for i, (name, pts) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        good = [(x, y) for x, y in pts if y is not None and math.isfinite(y)]
        d = " ".join(f"{'M' if j == 0 else 'L'}{ax.x(x):.1f},{ax.y(y):.1f}" for j, (x, y) in enumerate(good))
        ax.parts.append(f'<path class="series" data-series="{_esc(name)}" d="{d}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in good:
            ax.parts.append(f'<circle cx="{ax.x(x):.1f}" cy="{ax.y(y):.1f}" r="2.6" fill="{color}"><title>{_esc(name)} @{x:g}: {y:.4f}</title></circle>')
    return ax.svg(id_, title)


def legend(names: Sequence[str], id_: str = "") -> str:
    """The series' colours and names as an HTML list under a chart (not in the SVG): the browser
    wraps it onto as many lines as the names need, so it never runs past the chart's right
    edge nor over its lines, whatever the versions are called and however many there are."""
    items = "".join(
        f'<li data-series="{_esc(name)}"><span class="swatch" style="background:{PALETTE[i % len(PALETTE)]}"></span>'
        f"{_esc(name)}</li>"
        for i, name in enumerate(names)
    )
    ident = f' id="{_esc(id_)}"' if id_ else ""
    return f'<ul class="legend"{ident}>{items}</ul>'


def histogram(id_: str, title: str, values: Sequence[float], xlabel: str, bins: int = 21,
              width: int = 372, height: int = 290, higher_is_better: bool = True) -> str:
    """Bars (SVG ``<rect>``) of how many queries fall in each bin of the difference (green where
    the version gained: above 0, or below 0 for a metric to minimise)."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    span = max((abs(v) for v in vals), default=0.0) or 0.05
    lo, hi = -span * 1.02, span * 1.02
    width_bin = (hi - lo) / bins
    counts = [0] * bins
    for v in vals:
        counts[min(bins - 1, max(0, int((v - lo) / width_bin)))] += 1
    yticks = _nice_ticks(0, max(counts, default=1) or 1, 4)
    ax = _Axes(width, height, (lo, hi), (0, yticks[-1]))
    ax.frame(_nice_ticks(lo, hi, 6)[1:-1] or [0.0], yticks, xlabel, "queries", title)
    for i, n in enumerate(counts):
        a, b = lo + i * width_bin, lo + (i + 1) * width_bin
        mid = (a + b) / 2
        gain = mid if higher_is_better else -mid
        color = WIN if gain > width_bin / 2 else LOSS if gain < -width_bin / 2 else TIE
        x, y = ax.x(a) + 0.5, ax.y(n)
        ax.parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{max(ax.x(b) - ax.x(a) - 1, 0.5):.1f}" '
            f'height="{ax.y(0) - y:.1f}" fill="{color}"><title>[{a:+.3f}, {b:+.3f}): {n} queries</title></rect>'
        )
    zx = ax.x(0)
    ax.parts.append(f'<line class="zero" x1="{zx:.1f}" x2="{zx:.1f}" y1="{ax.top}" y2="{ax.y(0):.1f}"/>')
    if vals:
        mean = sum(vals) / len(vals)
        mx = ax.x(mean)
        ax.parts.append(f'<line class="mean" x1="{mx:.1f}" x2="{mx:.1f}" y1="{ax.top}" y2="{ax.y(0):.1f}"/>')
        ax.parts.append(f'<text class="legend" x="{mx + 4:.1f}" y="{ax.top + 10}">mean {mean:+.4f}</text>')
    return ax.svg(id_, title)


def wtl_bars(id_: str, rows: Sequence[dict[str, Any]], width: int = 700,
             title: str = "Queries won, tied and lost against the baseline") -> str:
    """One stacked bar per (metric, version): wins, ties, losses of the version over the baseline."""
    labels = [f"{r['metric']}: {r['version']} vs {r['baseline']}" for r in rows]
    bar_h, gap, top = 22, 10, 34
    left = max(210, min(int(max((_text_width(t) for t in labels), default=0)) + 18, width // 2))
    height = top + len(rows) * (bar_h + gap) + 10
    inner = width - left - 20
    parts = [f'<text class="title" x="{width / 2:.1f}" y="16" text-anchor="middle">{_esc(title)}</text>']
    lx = left
    for name, color in (("wins", WIN), ("ties", TIE), ("losses", LOSS)):
        parts.append(f'<rect x="{lx}" y="22" width="12" height="8" fill="{color}"/><text class="legend" x="{lx + 16}" y="30">{name}</text>')
        lx += 80
    for i, (r, label) in enumerate(zip(rows, labels)):
        y = top + i * (bar_h + gap)
        total = (r["wins"] + r["ties"] + r["losses"]) or 1
        parts.append(f'<text class="tick" x="{left - 8}" y="{y + bar_h / 2 + 4}" text-anchor="end">{_esc(label)}</text>')
        x = float(left)
        for key, color in (("wins", WIN), ("ties", TIE), ("losses", LOSS)):
            w = inner * r[key] / total
            parts.append(f'<rect class="bar {key}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}">'
                         f'<title>{_esc(label)}: {r[key]} {key}</title></rect>')
            if w > 26:
                parts.append(f'<text class="inbar" x="{x + w / 2:.1f}" y="{y + bar_h / 2 + 4}" text-anchor="middle">{r[key]}</text>')
            x += w
    body = "\n".join(parts)
    return (f'<svg id="{_esc(id_)}" class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="wins, ties and losses">\n{body}\n</svg>')


def interval_chart(id_: str, title: str, rows: Sequence[tuple[str, float, float | None, float | None]],
                   xlabel: str, width: int = 372) -> str:
    """One row per version: a dot at its mean and a whisker (SVG ``<line class="ci">``) from the
    low to the high end of its interval (no whisker where the interval is null)."""
    vals = [v for _, m, lo, hi in rows for v in (m, lo, hi) if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    pad = (hi - lo) * 0.08 or 0.05
    xticks = _nice_ticks(lo - pad, hi + pad, 4)
    height = 60 + 26 * len(rows)
    left = max(90, min(int(max((_text_width(v) for v, *_ in rows), default=0)) + 14, width // 2))
    ax = _Axes(width, height, (xticks[0], xticks[-1]), (len(rows) + 0.5, 0.5), margin=(34, 16, 44, left))
    ax.frame(xticks, [], xlabel, "", title)
    for i, (version, mean, low, high) in enumerate(rows):
        y = ax.y(i + 1)
        color = PALETTE[i % len(PALETTE)]
        ax.parts.append(f'<text class="tick" x="{ax.left - 6}" y="{y + 4:.1f}" text-anchor="end">{_esc(version)}</text>')
        tip = f"{version}: {_fmt(mean)} [{_fmt(low)}, {_fmt(high)}]"
        if low is not None and high is not None:
            ax.parts.append(f'<line class="ci" data-version="{_esc(version)}" x1="{ax.x(low):.1f}" x2="{ax.x(high):.1f}" '
                            f'y1="{y:.1f}" y2="{y:.1f}" stroke="{color}" stroke-width="3"><title>{_esc(tip)}</title></line>')
        ax.parts.append(f'<circle class="dot" cx="{ax.x(mean):.1f}" cy="{y:.1f}" r="4.5" fill="{color}">'
                        f'<title>{_esc(tip)}</title></circle>')
    return ax.svg(id_, title)


def _fmt(v: float | None) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:.4f}"


def all_pairs(comparison: pl.DataFrame, metric: str) -> list[str] | None:
    """The versions of ``metric`` when the comparison holds every pair of three or more of them."""
    rows = comparison.filter(pl.col("metric") == metric)
    versions = sorted({str(v) for v in rows["baseline"].to_list() + rows["version"].to_list()})
    m = len(versions)
    pairs = {frozenset((str(a), str(b))) for a, b in rows.select("baseline", "version").iter_rows()}
    return versions if m >= 3 and len(pairs) == m * (m - 1) // 2 else None


def pair_matrix(id_: str, comparison: pl.DataFrame, metric: str, versions: Sequence[str]) -> str:
    """Versions x versions for one metric: a cell is row - column, green where the row version is
    significantly better, red where significantly worse, grey where the test cannot tell apart
    (light where it had no p-value); the interval and the adjusted p in the cell's tooltip."""
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for r in comparison.filter(pl.col("metric") == metric).iter_rows(named=True):
        b, v = str(r["baseline"]), str(r["version"])
        cells[(v, b)] = {**r, "sign": 1.0}
        cells[(b, v)] = {**r, "sign": -1.0}
    head = "".join(f'<th class="text">{_esc(c)}</th>' for c in versions)
    body = []
    for row in versions:
        tds = []
        for col in versions:
            if row == col:
                tds.append('<td class="pair self"></td>')
                continue
            r = cells[(row, col)]
            sign, higher = r["sign"], r.get("higher_is_better") is not False
            diff = sign * r["diff"] + 0.0 if r["diff"] is not None else None  # + 0.0: no -0.0000 for a tie
            low, high = r.get("ci_low"), r.get("ci_high")
            if sign < 0 and low is not None and high is not None:
                low, high = -high, -low
            p = r["p_adjusted"] if r.get("p_adjusted") is not None else r.get("p_value")
            if p is None or (isinstance(p, float) and math.isnan(p)):
                kind, colour = "untested", "#F1F1F1"
            elif r["significant"] and diff is not None and diff != 0:
                kind = "better" if (diff > 0) == higher else "worse"
                colour = WIN if kind == "better" else LOSS
            else:
                kind, colour = "same", TIE
            ci = "" if low is None or high is None else f" [{low:+.4f}, {high:+.4f}]"
            why = r.get("note") or ("significant" if r["significant"] else "not significant")
            tip = (f"{row} − {col} on {metric}: {_num(diff, 'signed')}{ci}; "
                   f"p adj. {p_value(p) or 'n/a'} ({why})")
            tds.append(f'<td class="pair {kind}" data-row="{_esc(row)}" data-col="{_esc(col)}" '
                       f'style="background:{colour}" title="{_esc(tip)}">{_num(diff, "signed")}</td>')
        body.append(f'<tr><th class="text">{_esc(row)}</th>{"".join(tds)}</tr>')
    return (f'<div class="scroll"><table class="pairs" id="{_esc(id_)}"><caption>{_esc(metric)}: row − column'
            f'</caption><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


# ----------------------------------------------------------------------------------------
# the header: which pairs, which judgments, which columns


def pairs_compared(comparison: pl.DataFrame) -> dict[str, Any]:
    """Which pairs the comparison holds: ``kind`` ``"all"`` (every pair of three or more versions),
    ``"baseline"`` (each version against one baseline: ``baseline``) or ``"some"`` (other pairs),
    ``versions``, ``pairs`` (each ``(baseline, version)`` once) and ``text``, the header's sentence.

    >>> table = pl.DataFrame({"metric": ["m"] * 3, "baseline": ["a", "a", "b"], "version": ["b", "c", "c"]})
    >>> pairs_compared(table)["text"]
    'every pair of the 3 versions (3 pairs)'
    >>> pairs_compared(table.head(2))["text"]
    'each version against a (b, c); the other versions are not compared with each other (compare without a baseline for every pair)'
    """
    pairs = list(dict.fromkeys((str(b), str(v)) for b, v in comparison.select("baseline", "version").iter_rows()))
    versions = sorted({name for pair in pairs for name in pair})
    m, unordered = len(versions), {frozenset(pair) for pair in pairs}
    baselines = list(dict.fromkeys(b for b, _ in pairs))
    if m >= 3 and len(unordered) == m * (m - 1) // 2:
        kind, text, baseline = "all", f"every pair of the {m} versions ({len(unordered)} pairs)", None
    elif len(baselines) == 1:
        kind, baseline = "baseline", baselines[0]
        others = [v for v in versions if v != baseline]
        text = f"each version against {baseline} ({', '.join(others)})"
        if len(others) >= 2:
            text += "; the other versions are not compared with each other (compare without a baseline for every pair)"
    else:
        kind, baseline = "some", None
        text = f"{len(pairs)} pairs: " + ", ".join(f"{v} against {b}" for b, v in pairs)
    return {"kind": kind, "baseline": baseline, "versions": versions, "pairs": pairs, "text": text}


def _mapping(columns: dict[str, str] | Schema | None) -> Schema:
    """The column mapping ``columns=`` gives (a Schema, or evaluate's flat keywords as a dict)."""
    if isinstance(columns, Schema):
        return columns
    return Schema(**{role: name for role, name in (columns or {}).items() if name is not None})


def _source_name(source: Any) -> str:
    """A table's name for the header: a path as given, else what kind of table it is."""
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, (list, tuple)) and all(isinstance(s, (str, Path)) for s in source):
        return ", ".join(map(str, source))
    if isinstance(source, pl.DataFrame):
        return f"a DataFrame of {source.height:,} rows"
    return f"a {type(source).__name__}"


def _label_columns(metrics: Sequence[Any], schema: Schema) -> tuple[str | None, str | None]:
    """The log's columns the metrics read as labels without judgments: ``(relevance, click)``, the
    relevance column unless every metric is a click metric, the click column when one is."""
    from rank_polars.measures.clicks import clicks_named

    try:
        specs = [spec for _, spec in clicks_named(parse_all(list(metrics)), schema.click)]
    except RankPolarsError:
        return schema.column("relevance"), None
    clicks = [spec.params["click"] for spec in specs if isinstance(spec, FamilyMeasure) and "click" in spec.params]
    relevance = schema.column("relevance") if len(clicks) < len(specs) else None
    return relevance, (clicks[0] or schema.column("click")) if clicks else None


def _ranked_by(run: Any, schema: Schema, order: str) -> str | None:
    """The role the lists are ordered by (``position`` or ``score``), as ``evaluate`` chooses it:
    ``order`` when given, else position when the run has that column; None when unknown."""
    if order in ("position", "score"):
        return order
    from rank_polars.inputs import scan

    try:
        names = scan(run).collect_schema().names()
    except (RankPolarsError, OSError, pl.exceptions.PolarsError):  # a source it cannot look into: both names said
        return None
    return next((role for role in ("position", "score") if schema.column(role) in names), None)


def setup_rows(run: Any, metrics: Sequence[Any], *, qrels: Any, qrels_label: str | None,
               columns: dict[str, str] | Schema | None, order: str = "auto",
               judge: str | None = None) -> list[tuple[str, str, str]]:
    """The header's judgments and columns lines: ``(id, heading, HTML)``."""
    schema = _mapping(columns)

    def named(roles: Sequence[str], judged: bool = False) -> str:
        return ", ".join(f"{role} <code>{_esc(schema.judged(role) if judged else schema.column(role))}</code>"
                         for role in roles)

    relevance, click = _label_columns(metrics, schema)
    said = []
    if qrels is not None:
        whose = f", the labels of judge <code>{_esc(judge)}</code>" if judge is not None else ""
        said.append(f"{_esc(qrels_label or _source_name(qrels))} ({named(('query', 'item', 'relevance'), True)}"
                    f"{whose})")
    elif relevance:
        said.append(f"labels carried by the log (its column <code>{_esc(relevance)}</code>)")
    if click:
        said.append(f"clicks carried by the log (its column <code>{_esc(click)}</code>)")
    judgments = "; ".join(said)
    ranked = _ranked_by(run, schema, order)
    rank = (f"ranked by {named([ranked])}" if ranked else
            f"ranked by position <code>{_esc(schema.column('position'))}</code>, else score "
            f"<code>{_esc(schema.column('score'))}</code>")
    cols = f"{named(('query', 'item'))}; {rank}"
    if qrels is None and relevance:
        cols += f"; relevance <code>{_esc(relevance)}</code>"
    return [("judgments", "Judgments", judgments), ("columns", "Columns", cols)]


# ----------------------------------------------------------------------------------------
# HTML

CSS = """
body { font: 14px/1.45 -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif; color: #222;
       max-width: 1180px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 2px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.meta { color: #666; margin-top: 0; }
.verdict { margin: 4px 0; } .verdict.sig { font-weight: 600; }
table { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 7px; font-size: 13px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th { background: #f4f5f7; font-weight: 600; } td.text, th.text { text-align: left; }
tr.significant td { background: #f1f8f2; }
.scroll { overflow-x: auto; max-width: 100%; }
.plots { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
svg.plot { background: #fff; border: 1px solid #e6e6e6; border-radius: 4px; max-width: 100%; height: auto; }
dl.setup { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 8px 0 0;
           color: #444; }
dl.setup dt { font-weight: 600; } dl.setup dd { margin: 0; overflow-wrap: anywhere; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f4f5f7; padding: 0 3px;
       border-radius: 3px; }
figure.chart { margin: 0; width: 374px; max-width: 100%; }
ul.legend { display: flex; flex-wrap: wrap; gap: 2px 14px; list-style: none; margin: 6px 0 0; padding: 0 4px;
            font-size: 12px; }
ul.legend li { display: inline-flex; align-items: center; gap: 6px; min-width: 0; overflow-wrap: anywhere; }
ul.legend .swatch { flex: none; width: 14px; height: 4px; border-radius: 1px; }
table.atk { margin: 8px 0 0; } table.atk caption { text-align: left; font-weight: 600; padding: 2px 0; }
table.atk th, table.atk td { padding: 2px 7px; font-size: 12px; }
table.atk th.k { position: sticky; left: 0; z-index: 1; text-align: right; }
table.atk thead th.text { white-space: normal; overflow-wrap: anywhere; vertical-align: bottom; }
svg text { font-family: inherit; fill: #333; } svg .title { font-size: 13px; font-weight: 600; }
svg .tick { font-size: 11px; fill: #555; } svg .label, svg .legend { font-size: 12px; }
svg .inbar { font-size: 11px; fill: #fff; font-weight: 600; }
svg .grid { stroke: #eee; } svg .axis { stroke: #888; } svg .zero { stroke: #333; stroke-dasharray: 3 3; }
svg .mean { stroke: #4C72B0; stroke-width: 2; }
table.pairs td.pair { text-align: center; min-width: 64px; color: #111; }
table.pairs td.better, table.pairs td.worse { color: #fff; font-weight: 600; }
table.pairs caption { text-align: left; font-weight: 600; padding: 2px 0; }
footer { color: #888; margin-top: 32px; font-size: 12px; }
"""

_COLUMNS = [
    ("metric", "metric", "text"), ("baseline", "baseline", "text"), ("version", "version", "text"),
    ("n_queries", "queries", "int"), ("mean_baseline", "baseline mean", "num"), ("mean_version", "version mean", "num"),
    ("diff", "diff", "signed"), ("rel_diff", "rel. diff", "pct"), ("ci", "CI of diff", "ci"),
    ("p_value", "p", "p"), ("p_adjusted", "p adj.", "p"), ("significant", "significant", "bool"),
    ("effect_size", "effect size", "num"), ("wtl", "wins / ties / losses", "text"),
]


def _num(v: Any, kind: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if kind == "ci":
        return f"[{_num(v[0], 'signed')}, {_num(v[1], 'signed')}]"
    if kind == "signed":
        return f"{v:+.4f}"
    if kind == "pct":
        return f"{v * 100:+.1f}%"
    if kind == "p":
        return "&lt;0.0001" if v < 1e-4 else f"{v:.4f}"
    if kind == "bool":
        return "yes" if v else "no"
    if kind == "num":
        return f"{v:.4f}"
    return _esc(v)


def comparison_table(table: pl.DataFrame) -> str:
    table = table.with_columns(
        pl.concat_list(pl.col("ci_low").cast(pl.Float64), pl.col("ci_high").cast(pl.Float64)).alias("ci"),
        pl.format("{} / {} / {}", "wins", "ties", "losses").alias("wtl"),
    )
    cols = [c for c in _COLUMNS if c[0] in table.columns]
    head = "".join(f'<th class="{"text" if kind == "text" else "num"}">{_esc(label)}</th>' for _, label, kind in cols)
    rows = []
    for r in table.iter_rows(named=True):
        cells = "".join(
            f'<td class="{"text" if kind == "text" else "num"}" data-col="{key}">{_num(r[key], kind)}</td>' for key, _, kind in cols
        )
        rows.append(f'<tr class="{"significant" if r.get("significant") else ""}">{cells}</tr>')
    return f'<div class="scroll"><table id="comparison"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def atk_table(id_: str, label: str, pairs: Sequence[tuple[int, str]], curve_table: pl.DataFrame, by: str) -> str:
    """One metric's values at every cutoff: k down the rows, a column per version (the numbers
    of its curve), so the table stays narrow whatever the cutoffs; in a scrolling box whose k
    column stays put should many versions make it wider than the page."""
    rows = list(curve_table.sort(by).iter_rows(named=True))
    head = '<th class="k">k</th>' + "".join(f'<th class="text">{_esc(r[by])}</th>' for r in rows)
    body = "".join(
        f'<tr><th class="k">{k}</th>' + "".join(f"<td>{_fmt(r[name])}</td>" for r in rows) + "</tr>"
        for k, name in pairs
    )
    return (f'<div class="scroll atk"><table class="atk" id="{_esc(id_)}"><caption>mean {_esc(label)}@k at each k'
            f'</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')


def render(comparison: pl.DataFrame, data: dict[str, Any], *, title: str = "Comparison", subtitle: str = "",
           correction: str | None = None) -> str:
    """The HTML page as a string (``correction``: the one applied, named in the verdicts)."""
    by = data["by"]
    test = comparison["test"][0] if "test" in comparison.columns and comparison.height else ""
    if test in ("tukey", "randomized-tukey"):  # adjusted over the pairs by the test itself, not by a correction
        correction = None
    verdicts = "".join(
        f'<p class="verdict{" sig" if r["significant"] else ""}">{_esc(verdict(r, correction))}</p>'
        for r in comparison.iter_rows(named=True)
    )
    scope = pairs_compared(comparison)
    curve_svgs = []
    ct = data["curve_table"]
    for i, (base, pairs) in enumerate(data["curves"].items()):
        series = {
            str(r[by]): [(k, r[name]) for k, name in pairs] for r in ct.sort(by).iter_rows(named=True)
        }
        curve_svgs.append(
            f'<figure class="chart">{line_chart(f"curve-{i}", f"{base}@k by {by}", series, "k (cutoff)", f"mean {base}@k")}'
            f'{legend(list(series), f"legend-{i}")}{atk_table(f"atk-{i}", base, pairs, ct, by)}</figure>'
        )
    higher = {r["metric"]: r.get("higher_is_better") is not False for r in comparison.iter_rows(named=True)}
    hist_svgs = [
        histogram(f"diff-{i}", f"{metric}: {version} − {baseline}, per query", values, f"difference in {metric}",
                  higher_is_better=higher.get(metric, True))
        for i, ((metric, baseline, version), values) in enumerate(data["diffs"].items())
    ]
    # rows without query-by-query wins (unpaired arms, catalogue-level measures) have no bar
    wtl_title = ("Queries won, tied and lost against " + scope["baseline"] if scope["kind"] == "baseline" else
                 "Queries each version won, tied and lost against the other of its pair")
    wtl = wtl_bars("wtl", [r for r in comparison.iter_rows(named=True) if r.get("wins") is not None], title=wtl_title)
    level = data.get("confidence", 0.95)
    interval_svgs = [interval_chart(f"means-{i}", f"{metric}: mean and {percent(level)} interval", rows, f"mean {metric}")
                     for i, (metric, rows) in enumerate(data.get("means", []))]
    matrices = []
    for metric in comparison["metric"].unique(maintain_order=True).to_list():
        versions = all_pairs(comparison, metric)
        if versions:
            matrices.append(pair_matrix(f"pairs-{len(matrices)}", comparison, metric, versions))
    pairs_section = (
        '<section id="pairs"><h2>Every pair of versions</h2><p>A cell is the row version − the column version: '
        'green where the row is significantly better, red where significantly worse, grey where the test cannot '
        f'tell them apart; hover a cell for its interval and adjusted p.</p>{"".join(matrices)}</section>'
        if matrices else ""
    )
    means_section = (
        f'<section id="intervals"><h2>Means with {percent(level)} intervals</h2><p>Each version\'s mean over its queries; '
        f'the bar is the t interval over queries.</p><div class="plots">{"".join(interval_svgs)}</div></section>'
        if interval_svgs else ""
    )
    if scope["kind"] == "baseline":
        table_text = (f"Each version against {_esc(scope['baseline'])} on the queries both were judged on; "
                      f"diff = version − baseline.")
    else:
        table_text = ("Every pair of versions on the queries both were judged on; diff = version − baseline, the "
                      "baseline of a pair being the first of the two in sorted order." if scope["kind"] == "all" else
                      "The pairs given, each on the queries both were judged on; diff = version − baseline.")
    setup = [("scope", "Pairs compared", _esc(scope["text"])), *data.get("setup", [])]
    setup_html = "".join(f'<dt>{_esc(head)}</dt><dd id="{key}">{text}</dd>' for key, head, text in setup)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    meta = (f"{len(data['versions'])} versions of {_esc(by)} ({_esc(', '.join(data['versions']))}), "
            f"{data['n_queries']} queries; test: {_esc(test)}; generated {stamp} by rank-polars")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_esc(title)}</title>
<style>{CSS}</style></head>
<body>
<h1>{_esc(title)}</h1>
<p class="meta">{meta}{(' — ' + _esc(subtitle)) if subtitle else ''}</p>
<dl class="setup" id="setup">{setup_html}</dl>
<section id="summary"><h2>Verdict</h2>{verdicts}</section>
<section id="table"><h2>Comparison</h2>
<p>{table_text} Rows in green are significant.</p>
{comparison_table(comparison)}</section>
{pairs_section}
{means_section}
<section id="curves"><h2>Metric@k, k = 1..{max((len(p) for p in data['curves'].values()), default=0)}</h2>
<div class="plots">{''.join(curve_svgs) or '<p>No metric here takes a cutoff.</p>'}</div></section>
<section id="differences"><h2>Per-query differences</h2>
<p>How many queries gained (green) or lost (red) how much; the grey bar holds the queries within half a bin of 0 (ties included), the dashed line is no change, the blue one the mean.</p>
<div class="plots">{''.join(hist_svgs)}</div></section>
<section id="wins"><h2>Wins, ties and losses</h2>{wtl}</section>
<footer>Self-contained: no scripts, no network. Made with rank-polars.</footer>
</body></html>
"""


def report_html(
    run: Any, metrics: Sequence[str], *, comparison: pl.DataFrame | None = None, qrels: Any = None,
    by: str = "model", baseline: str | None = None, missing: str = "zero", engine: str = "polars",
    columns: dict[str, str] | Schema | None = None, title: str = "Comparison", max_k: int = 20, confidence: float = 0.95,
    order: str = "auto", qrels_label: str | None = None, judge: str | None = None, **compare_kwargs: Any,
) -> str:
    """Compare (unless ``comparison`` is given) and return the HTML report as a string
    (``confidence``: the level of the means' intervals, and of compare's own when it runs;
    ``order``: evaluate's, by position or score; ``qrels_label``: the judgments' name in the
    header, by default their path or what kind of table they are; ``judge``: whose labels, of
    judgments with several judges).

    Without a ``baseline`` compare runs every pair of versions and the page shows every pair;
    with one, its header says each version is compared with that baseline only.
    """
    correction = compare_kwargs.pop("correction", None if comparison is not None else "holm")
    if comparison is None:
        from rank_polars.stats.compare import compare

        comparison = compare(run, list(metrics), qrels=qrels, by=by, baseline=baseline, missing=missing,
                             engine=engine, correction=correction, confidence=confidence, **_eval_kwargs(columns),
                             **({"order": order} if order != "auto" else {}),
                             **({"judge": judge} if judge is not None else {}), **compare_kwargs)
    if comparison.height == 0:
        raise RankPolarsError("nothing to report: the comparison is empty (only one version?)")
    data = report_data(run, metrics, comparison=comparison, qrels=qrels, by=by, missing=missing, engine=engine,
                       columns=columns, max_k=max_k, confidence=confidence, order=order, qrels_label=qrels_label,
                       judge=judge)
    return render(comparison, data, title=title, correction=correction)


def write_report(path: str | Path, run: Any, metrics: Sequence[str], **kwargs: Any) -> Path:
    """Compare (unless ``comparison=`` is given) and write the HTML report to ``path``; the
    keyword arguments are :func:`report_html`'s."""
    out = Path(path)
    out.write_text(report_html(run, metrics, **kwargs), encoding="utf-8")
    return out


__all__ = ["all_pairs", "atk_table", "histogram", "interval_chart", "legend", "line_chart", "pair_matrix",
           "pairs_compared", "render", "report_data", "report_html", "setup_rows", "write_report", "wtl_bars"]
