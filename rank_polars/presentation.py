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


def level(confidence: float) -> str:
    """A confidence level as a percentage with the digits it has: ``95%``, ``99.9%`` (never rounded to ``100%``).

    >>> level(0.95), level(0.975), level(0.999), level(0.57)
    ('95%', '97.5%', '99.9%', '57%')
    """
    return f"{round(100 * confidence, 10):g}%"


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
            "diff": signed(r["diff"]), f"{level(confidence)} CI": f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]",
            "p adj." if adjusted else "p": p_value(_p(r)),
            # a test too weak for the data says so ("n too small") instead of "no"
            "sig.": r.get("note") or ("yes" if r["significant"] else "no"),
            # unpaired arms (test="delta") have no query-by-query wins
            "W/T/L": "" if r["wins"] is None else f"{r['wins']}/{r['ties']}/{r['losses']}",
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
    >>> verdict({**row, "p_value": None, "p_adjusted": None, "note": "the difference is the same on every query"})
    'cannot tell bot-v2 from bot-v1 on ndcg@10: the difference is the same on every query (+0.0005)'

    A metric to minimise (``higher_is_better`` false, e.g. abandonment) is better when lower:

    >>> verdict({**row, "metric": "abandonment@10", "diff": -0.0547, "p_adjusted": 0.0051, "significant": True,
    ...          "higher_is_better": False})
    'bot-v2 is better than bot-v1 on abandonment@10 by -0.0547 (p=0.0051, significant)'
    """
    diff = row["diff"]
    amount = (signed(diff) or "n/a") + _interval(row)
    note = row.get("note")
    if note:  # the test could not be run, or could not reach significance on this many queries/resamples
        why = f"{note} for the test" if note.startswith("n") and "too small" in note else note
        return f"cannot tell {row['version']} from {row['baseline']} on {row['metric']}: {why} ({amount}){_power(row)}"
    p = _p(row)
    p_text = "p=n/a" if _missing(p) else ("p<0.0001" if p < 1e-4 else f"p={p:.4f}")
    if row.get("test") == "catalog-bootstrap":  # a catalogue-level measure: the interval is the test
        p_text = "bootstrap over lists"
        if row["significant"]:
            p_text += ", interval excludes 0"
    who, metric = f"{row['version']}", row["metric"]
    if not row["significant"] or _missing(diff) or diff == 0:
        return f"no significant difference between {who} and {row['baseline']} on {metric} ({amount}, {p_text}){_power(row)}"
    word = "better" if (diff > 0) == bool(row.get("higher_is_better", True)) else "worse"
    after = f" after {correction}" if correction and row.get("test") != "catalog-bootstrap" else ""
    if row.get("test") == "catalog-bootstrap":
        return f"{who} is {word} than {row['baseline']} on {metric} by {amount} ({p_text})"
    return f"{who} is {word} than {row['baseline']} on {metric} by {amount} ({p_text}, significant{after})"


def _interval(row: dict[str, Any]) -> str:
    """`` [0.0163, 0.0931]`` when the row has an interval on the difference."""
    low, high = row.get("ci_low"), row.get("ci_high")
    return "" if _missing(low) or _missing(high) else f" [{low:.4f}, {high:.4f}]"


def _power(row: dict[str, Any]) -> str:
    """What a test that could not tell had as power, and how many queries would do."""
    power, needed = row.get("power"), row.get("queries_needed")
    if _missing(power):
        return ""
    more = f"; about {count(needed)} queries would give 80%" if needed is not None and needed > row.get("n_queries", 0) else ""
    return f"; power {power:.2f} against a difference this large{more}"


def groups(table: pl.DataFrame, metric: str, alpha: float = 0.05) -> pl.DataFrame:
    """The compact letter display of an all-pairs comparison: versions that share a letter are not
    significantly different (Piepho's insert-and-absorb).  Versions from the best mean down
    (descending, or ascending for a metric to minimise: ``higher_is_better`` false); ``a`` is
    the group of the best.

    >>> t = pl.DataFrame({"metric": ["m"] * 3, "baseline": ["x", "x", "y"], "version": ["y", "z", "z"],
    ...                   "mean_baseline": [0.5, 0.5, 0.52], "mean_version": [0.52, 0.7, 0.7],
    ...                   "significant": [False, True, True]})
    >>> groups(t, "m").rows()
    [('z', 0.7, 'a'), ('y', 0.52, 'b'), ('x', 0.5, 'b')]
    """
    rows = table.filter(pl.col("metric") == metric)
    means: dict[Any, float] = {}
    sign = 1.0
    for r in rows.iter_rows(named=True):
        means[r["baseline"]], means[r["version"]] = r["mean_baseline"], r["mean_version"]
        sign = 1.0 if r.get("higher_is_better", True) is not False else -1.0
    order = sorted(means, key=lambda v: (-sign * means[v], str(v)))
    sets: list[set] = [set(order)]
    for r in rows.filter(pl.col("significant")).iter_rows(named=True):
        a, b = r["baseline"], r["version"]
        split: list[set] = []
        for s in sets:
            if a in s and b in s:
                split += [s - {a}, s - {b}]
            else:
                split.append(s)
        # absorb: drop a set contained in another
        sets = [s for i, s in enumerate(split) if s and not any(
            (s < t) or (s == t and j < i) for j, t in enumerate(split))]
    # letters in order of each set's best version
    rank = {v: i for i, v in enumerate(order)}
    sets.sort(key=lambda s: sorted(rank[v] for v in s))
    letters = {v: "".join(chr(ord("a") + i) for i, s in enumerate(sets) if v in s) for v in order}
    return pl.DataFrame({"version": [str(v) for v in order], "mean": [means[v] for v in order],
                         "group": [letters[v] for v in order]})


__all__ = ["cell", "comparison_display", "count", "count_of", "did_you_mean", "groups", "level", "p_value", "share", "signed", "verdict"]
