"""How results read to people: numbers, the comparison table and the verdict.

Shared by the command line and the HTML report (neither imports the other).

>>> count(23750), share(0.2375)
('23,750', '23.8%')
>>> verdict({"metric": "ndcg@10", "version": "bot-v2", "baseline": "bot-v1", "diff": 0.0547,
...          "p_value": 0.0017, "p_adjusted": 0.0051, "significant": True}, correction="holm")
'bot-v2 is better than bot-v1 on ndcg@10 by +0.0547 (p=0.0051, significant after holm)'
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Sequence

import polars as pl


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def did_you_mean(name: str, names: Sequence[str]) -> str:
    """``; did you mean 'model'?`` when ``name`` is close to one of ``names``, else nothing.

    >>> did_you_mean("modle", ["query", "model"])
    "; did you mean 'model'?"
    """
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def count(n: int) -> str:
    """A count with thousands separators: ``23,750``.

    >>> count(100000)
    '100,000'
    """
    return f"{int(n):,}"


def count_of(part: int, whole: int) -> str:
    """``23,750 of 100,000``.

    >>> count_of(23750, 100000)
    '23,750 of 100,000'
    """
    return f"{count(part)} of {count(whole)}"


def share(x: float) -> str:
    """A fraction as a percentage with one decimal: ``12.5%``."""
    return f"{100 * x:.1f}%"


def cell(value: Any, decimals: int = 4) -> str:
    """A table cell: floats with ``decimals`` places, nothing for a missing value.

    >>> cell(0.123456), cell(None), cell(float("nan")), cell(3)
    ('0.1235', '', 'nan', '3')
    """
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def signed(x: Any, pct: bool = False) -> str:
    """A difference with its sign: ``+0.0312`` (or ``+3.1%``)."""
    if _missing(x):
        return ""
    return f"{x * 100:+.1f}%" if pct else f"{x:+.4f}"


def p_value(x: Any) -> str:
    """``0.0123``, ``<0.0001``, or nothing when there is no p-value."""
    if _missing(x):
        return ""
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def _p(row: dict[str, Any]) -> Any:
    return row["p_adjusted"] if row.get("p_adjusted") is not None else row["p_value"]


def comparison_display(table: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """The comparison as people read it: signed differences, a CI column, W/T/L."""
    rows = []
    for r in table.iter_rows(named=True):
        adjusted = r.get("p_adjusted") is not None and r["p_adjusted"] != r["p_value"]
        rows.append({
            "metric": r["metric"], "version": str(r["version"]), "baseline": str(r["baseline"]),
            "queries": r["n_queries"], "mean": cell(r["mean_version"]), "baseline mean": cell(r["mean_baseline"]),
            "diff": signed(r["diff"]), f"{confidence:.0%} CI": f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]",
            "p adj." if adjusted else "p": p_value(_p(r)),
            # a test too weak for the data says so ("n too small") instead of "no"
            "sig.": r.get("note") or ("yes" if r["significant"] else "no"),
            "W/T/L": f"{r['wins']}/{r['ties']}/{r['losses']}",
        })
    if rows and len({tuple(row) for row in rows}) > 1:  # some rows adjusted, some not: one header
        rows = [{("p adj." if k == "p" else k): v for k, v in row.items()} for row in rows]
    return pl.DataFrame(rows)


def verdict(row: dict[str, Any], correction: str | None = None) -> str:
    """One sentence on one row of :func:`rank_polars.compare`, saying only what the data supports.

    A difference that is not significant is not called a win or a loss; ``correction`` (the
    multiple-comparison correction that was applied) is named beside a significant one.

    >>> row = {"metric": "ndcg@10", "version": "bot-v2", "baseline": "bot-v1", "diff": 0.0005,
    ...        "p_value": 0.8498, "p_adjusted": 0.8498, "significant": False}
    >>> verdict(row)
    'no significant difference between bot-v2 and bot-v1 on ndcg@10 (+0.0005, p=0.8498)'
    >>> verdict({**row, "diff": -0.0547, "p_adjusted": 0.0051, "significant": True}, "holm")
    'bot-v2 is worse than bot-v1 on ndcg@10 by -0.0547 (p=0.0051, significant after holm)'
    >>> verdict({**row, "p_value": None, "p_adjusted": None, "note": "n too small"})
    'cannot tell bot-v2 from bot-v1 on ndcg@10: n too small for the test (+0.0005)'
    """
    diff = row["diff"]
    if row.get("note"):  # the test could not reach significance on this many queries/resamples
        amount = signed(diff) or "n/a"
        return f"cannot tell {row['version']} from {row['baseline']} on {row['metric']}: {row['note']} for the test ({amount})"
    p = _p(row)
    p_text = "p=n/a" if _missing(p) else ("p<0.0001" if p < 1e-4 else f"p={p:.4f}")
    who, metric = f"{row['version']}", row["metric"]
    if not row["significant"] or _missing(diff) or diff == 0:
        amount = signed(diff) or "n/a"
        return f"no significant difference between {who} and {row['baseline']} on {metric} ({amount}, {p_text})"
    word = "better" if diff > 0 else "worse"
    after = f" after {correction}" if correction else ""
    return f"{who} is {word} than {row['baseline']} on {metric} by {diff:+.4f} ({p_text}, significant{after})"


__all__ = ["cell", "comparison_display", "count", "count_of", "did_you_mean", "p_value", "share", "signed", "verdict"]
