"""The report's monitoring parts: the segment table and the time series of each metric per version.

* :func:`segment_table`: the rows of ``compare(..., segments=[...])``, worst loss first, the
  significant losses in red;
* :func:`series_chart`: one line per version over time with its interval as a band (an SVG
  polygon under the line), from ``track``'s series;
* :func:`report_html`: :func:`rank_polars.report.report_html`'s page with both as sections
  (``rank-polars compare --segment ... --report``); :func:`series_page`: a page of its own
  (``rank-polars track --report``).  The report imports nothing from here: this module builds
  on it.

Self-contained SVG and HTML, as the rest of the report: no scripts, no network.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Sequence

import polars as pl

from rank_polars.report import CSS, PALETTE, _Axes, _esc, _nice_ticks, _num, legend
from rank_polars.report import report_html as comparison_page

_SEGMENT_COLUMNS = [("metric", "metric", "text"), ("segment", "segment", "text"), ("value", "value", "text"),
                    ("baseline", "baseline", "text"), ("version", "version", "text"), ("n_queries", "queries", "text"),
                    ("mean_baseline", "baseline mean", "num"), ("mean_version", "version mean", "num"),
                    ("diff", "diff", "signed"), ("ci", "interval", "ci"), ("p_adjusted", "p (adj.)", "p"),
                    ("note", "note", "text")]


def segment_table(table: pl.DataFrame) -> str:
    """The segment rows as an HTML table; a significant loss is red, a significant gain green."""
    table = table.with_columns(pl.concat_list(pl.col("ci_low"), pl.col("ci_high")).alias("ci"))
    head = "".join(f'<th class="{"text" if kind == "text" else "num"}">{_esc(label)}</th>'
                   for _, label, kind in _SEGMENT_COLUMNS)
    rows = []
    for r in table.iter_rows(named=True):
        kind = "" if not r["significant"] else "loss" if (r["loss"] or 0) > 0 else "significant"
        cells = "".join(f'<td class="{"text" if k == "text" else "num"}" data-col="{key}">'
                        f'{"–" if r[key] is None else _num(r[key], k)}</td>' for key, _, k in _SEGMENT_COLUMNS)
        rows.append(f'<tr class="{kind}">{cells}</tr>')
    return (f'<div class="scroll"><table id="segments"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _day(value: Any) -> float:
    if isinstance(value, _dt.datetime):
        return value.timestamp() / 86400
    if isinstance(value, _dt.date):
        return float(value.toordinal())
    return float(value)


def series_chart(id_: str, series: pl.DataFrame, metric: str, by: str, time: str,
                 width: int = 560, height: int = 300) -> str:
    """One line per version of ``metric`` over ``time``, with the interval (``<metric>_low/_high``) as a band."""
    band = f"{metric}_low" in series.columns
    times = series[time].unique().sort().to_list()
    place = {t: i for i, t in enumerate(times)} if series[time].dtype == pl.String else {t: _day(t) for t in times}
    cols = [metric, *((f"{metric}_low", f"{metric}_high") if band else ())]
    ys = [v for c in cols for v in series[c].to_list() if v is not None and math.isfinite(v)]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    yticks = _nice_ticks(lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05)
    xs = list(place.values())
    ax = _Axes(width, height, (min(xs, default=0), max(xs, default=1)), (yticks[0], yticks[-1]))
    ax.frame([], yticks, time, f"mean {metric}", f"{metric} per {by} over {time}")
    step = max(1, len(times) // 6)
    for t in times[::step]:
        ax.parts.append(f'<text class="tick" x="{ax.x(place[t]):.1f}" y="{height - ax.bottom + 16}" '
                        f'text-anchor="middle">{_esc(t)}</text>')
    for i, (version, part) in enumerate(series.sort(by, time).partition_by(by, maintain_order=True, as_dict=True).items()):
        color = PALETTE[i % len(PALETTE)]
        rows = [r for r in part.iter_rows(named=True) if r[metric] is not None]
        name = _esc(version[0])
        if band:
            edge = [r for r in rows if r[f"{metric}_low"] is not None]
            points = [(ax.x(place[r[time]]), ax.y(r[f"{metric}_high"])) for r in edge]
            points += [(ax.x(place[r[time]]), ax.y(r[f"{metric}_low"])) for r in reversed(edge)]
            if points:
                ax.parts.append(f'<polygon class="band" data-series="{name}" fill="{color}" fill-opacity="0.15" '
                                f'stroke="none" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}"/>')
        d = " ".join(f"{'M' if j == 0 else 'L'}{ax.x(place[r[time]]):.1f},{ax.y(r[metric]):.1f}" for j, r in enumerate(rows))
        ax.parts.append(f'<path class="series" data-series="{name}" d="{d}" fill="none" stroke="{color}" stroke-width="2"/>')
        for r in rows:
            ax.parts.append(f'<circle cx="{ax.x(place[r[time]]):.1f}" cy="{ax.y(r[metric]):.1f}" r="2.4" fill="{color}">'
                            f'<title>{name} {_esc(r[time])}: {r[metric]:.4f} ({r["queries"]} queries)</title></circle>')
    return ax.svg(id_, f"{metric} per {by} over {time}")


def sections(*, segments: pl.DataFrame | None = None, series: pl.DataFrame | None = None,
             metrics: Sequence[str] = (), by: str = "model", time: str = "date") -> str:
    """The report's segment and time-series sections (empty for what is not given)."""
    out = []
    if segments is not None:
        out.append('<style>#segments tr.loss td { background: #fbe3e3; }</style>'
                   '<section id="segment-view"><h2>Every segment</h2><p>The difference per segment value, '
                   'on the queries of that value; per metric, where the version loses most first. Red: a '
                   'significant loss after the correction over every segment value and metric.</p>'
                   f'{segment_table(segments)}</section>')
    if series is not None:
        names = [m for m in metrics if m in series.columns] or [c for c in series.columns if c not in (time, by, "queries")
                                                                 and not c.endswith(("_low", "_high"))]
        charts = "".join(f'<figure class="chart">{series_chart(f"series-{i}", series, m, by, time)}'
                         f'{legend([str(v) for v in series[by].unique().sort().to_list()], f"series-legend-{i}")}</figure>'
                         for i, m in enumerate(names))
        out.append(f'<section id="series"><h2>Over time</h2><p>Each version\'s mean per {_esc(time)}; the band is '
                   f'its interval.</p><div class="plots">{charts}</div></section>')
    return "\n".join(out)


def report_html(run: Any, metrics: Sequence[Any], *, segments: pl.DataFrame | None = None,
                series: pl.DataFrame | None = None, by: str = "model", time: str = "date", **kwargs: Any) -> str:
    """:func:`rank_polars.report.report_html` (its keyword arguments) with the segment table
    (``segments``: ``compare(..., segments=[...])``'s rows) and the charts over time (``series``:
    ``track``'s) as sections before the footer."""
    page = comparison_page(run, metrics, by=by, **kwargs)
    extra = sections(segments=segments, series=series, metrics=[str(m) for m in metrics], by=by, time=time)
    return page.replace("<footer>", f"{extra}\n<footer>", 1)


def series_page(series: pl.DataFrame, metrics: Sequence[str], *, by: Sequence[str] | str = "model",
                time: str = "date", title: str = "Over time") -> str:
    """A self-contained page of ``track``'s series: one chart per metric (``by``: its first column)."""
    group = by if isinstance(by, str) else by[0]
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
            f'<style>{CSS}</style></head><body><h1>{_esc(title)}</h1><p class="meta">generated {stamp} by rank-polars'
            f'</p>{sections(series=series, metrics=metrics, by=group, time=time)}'
            '<footer>Self-contained: no scripts, no network. Made with rank-polars.</footer></body></html>\n')


__all__ = ["report_html", "sections", "segment_table", "series_chart", "series_page"]
