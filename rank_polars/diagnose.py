"""Everything wrong or suspicious in a log, as findings (``rank-polars validate``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from .presentation import cell as _cell, did_you_mean as _did_you_mean

@dataclass
class Finding:
    level: str  # "error", "warning" or "info"
    check: str
    message: str


def _examples(values: Sequence[Any], limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" (and {len(values) - limit} more)" if len(values) > limit else "")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def validate_data(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, columns: dict[str, str], by: Sequence[str], k: int = 10,
) -> tuple[list[Finding], dict[str, Any]]:
    """Everything wrong or suspicious in a log, as findings; computed with grouped Polars passes."""
    c = columns
    by = list(by)
    findings: list[Finding] = []
    add = lambda level, check, message: findings.append(Finding(level, check, message))  # noqa: E731
    schema = run.collect_schema()
    facts: dict[str, Any] = {}

    for role in ("query", "item"):
        if c[role] not in schema:
            add("error", "columns", f"run has no {role} column {c[role]!r}{_did_you_mean(c[role], schema.names())}")
    for col in by:
        if col not in schema:
            add("error", "columns", f"run has no --by column {col!r}{_did_you_mean(col, schema.names())}")
    has_pos, has_score = c["position"] in schema, c["score"] in schema
    has_rel = c["relevance"] in schema and qrels is None
    if not (has_pos or has_score):
        add("error", "columns", f"run has neither a position column {c['position']!r} nor a score column {c['score']!r} to order items")
    if qrels is None and c["relevance"] not in schema:
        add("error", "columns", f"run has no relevance column {c['relevance']!r} and no --qrels were given")
    for col, role, numeric in ((c["position"], "position", has_pos), (c["score"], "score", has_score), (c["relevance"], "relevance", has_rel)):
        if numeric and not (schema[col].is_numeric() or schema[col] == pl.Boolean):
            add("error", "columns", f"{role} column {col!r} must be numeric, got {schema[col]}")
            has_pos, has_score, has_rel = (has_pos and role != "position"), (has_score and role != "score"), (has_rel and role != "relevance")
    if findings:
        return findings, facts
    if has_pos and not schema[c["position"]].is_integer():
        add("warning", "columns", f"position column {c['position']!r} is {schema[c['position']]}, not an integer type (evaluate needs integers)")

    keys = [*by, c["query"]]
    q, it = pl.col(c["query"]), pl.col(c["item"])

    def bad_float(col: str) -> pl.Expr:
        e = pl.col(col)
        return e.is_null().sum() + e.cast(pl.Float64).is_nan().sum()

    aggs = [pl.len().alias("n"), it.null_count().alias("item_null"), (pl.len() - it.n_unique()).alias("item_dup")]
    if has_pos:
        p = pl.col(c["position"])
        aggs += [p.null_count().alias("pos_null"), (p < 1).sum().alias("pos_lt1"),
                 (pl.len() - p.n_unique()).alias("pos_dup"), (p.max() != pl.len()).alias("pos_gaps")]
    if has_score:
        s = pl.col(c["score"]).cast(pl.Float64)
        aggs += [bad_float(c["score"]).alias("score_bad"), (pl.len() - s.drop_nulls().drop_nans().n_unique() - s.is_null().sum() - s.is_nan().sum()).alias("score_ties")]
    if has_rel:
        aggs += [bad_float(c["relevance"]).alias("rel_bad"), (pl.col(c["relevance"]).cast(pl.Float64) > 0).sum().alias("n_rel")]
    stats = run.group_by(keys).agg(aggs).collect(engine="streaming").sort(keys, nulls_last=True)

    n_rows = int(stats["n"].sum())
    facts.update(rows=n_rows, rankings=stats.height, queries=stats[c["query"]].n_unique())
    groups = stats.select(by).unique().sort(by) if by else None
    facts["groups"] = groups.height if groups is not None else 1

    def where(frame: pl.DataFrame) -> str:
        out = []
        for row in frame.head(3).iter_rows(named=True):
            extra = ", ".join(f"{b}={row[b]!r}" for b in by)
            out.append(repr(row[c["query"]]) + (f" ({extra})" if extra else ""))
        more = f" (and {frame.height - 3} more)" if frame.height > 3 else ""
        return ", ".join(out) + more

    null_q = stats.filter(pl.col(c["query"]).is_null())
    if null_q.height:
        add("error", "nulls", f"{int(null_q['n'].sum())} rows have a null query id in {c['query']!r}")
    for col in by:
        nulls = stats.filter(pl.col(col).is_null())
        if nulls.height:
            add("warning", "nulls", f"{int(nulls['n'].sum())} rows have a null {col!r} (they form a group of their own)")
    checks = [
        ("item_null", "error", "nulls", f"null item ids in {c['item']!r}"),
        ("item_dup", "error", "duplicates", f"duplicate (query, item) within a ranking in {c['item']!r} (evaluate refuses them; --duplicates first keeps the first)"),
        ("pos_null", "error", "nulls", f"null positions in {c['position']!r}"),
        ("pos_lt1", "error", "positions", f"positions < 1 in {c['position']!r} (1 = shown first)"),
        ("pos_dup", "error", "duplicates", f"duplicate positions within a ranking in {c['position']!r}"),
        ("score_bad", "error" if not has_pos else "warning", "nulls", f"null or NaN scores in {c['score']!r}"),
        ("rel_bad", "error", "nulls", f"null or NaN relevance labels in {c['relevance']!r} (label every row, or pass --qrels)"),
    ]
    for stat, level, check, text in checks:
        if stat not in stats.columns:
            continue
        bad = stats.filter(pl.col(stat) > 0)
        if bad.height:
            add(level, check, f"{text}: {int(bad[stat].sum())} rows in {bad.height} ranking{'s' * (bad.height != 1)}, e.g. query {where(bad)}")
    if "pos_gaps" in stats.columns:
        gaps = stats.filter(pl.col("pos_gaps") & (pl.col("pos_dup") == 0) & (pl.col("pos_lt1") == 0))
        if gaps.height:
            add("info", "positions", f"{gaps.height} rankings have gaps in their positions (not 1..n); positions are taken as given, e.g. query {where(gaps)}")
    if "score_ties" in stats.columns:
        ties = stats.filter(pl.col("score_ties") > 0)
        facts["rankings_with_tied_scores"] = ties.height
        if ties.height:
            if has_pos:
                add("info", "ties", f"{ties.height} of {stats.height} rankings have tied scores (items are ordered by {c['position']!r}, so ties do not matter)")
            else:
                add("warning", "ties", f"{ties.height} of {stats.height} rankings have tied scores; ties are broken by item id, descending (as trec_eval), e.g. query {where(ties)}")

    # coverage: which queries each side (and each version) has
    run_q = stats.select(*keys).unique()
    all_q = run_q.select(c["query"]).unique()
    if qrels is not None:
        qschema = qrels.collect_schema()
        missing = [col for col in (c["query"], c["item"], c["relevance"]) if col not in qschema]
        if missing:
            add("error", "columns", f"qrels have no column {missing[0]!r}{_did_you_mean(missing[0], qschema.names())}")
            return findings, facts
        qr = qrels.select(c["query"], c["item"], pl.col(c["relevance"])).collect()
        if qr[c["query"]].dtype != run_q[c["query"]].dtype:
            add("warning", "columns", f"query ids are {run_q[c['query']].dtype} in the run and {qr[c['query']].dtype} in the qrels (compared as strings)")
            qr = qr.with_columns(pl.col(c["query"], c["item"]).cast(pl.String))
            run = run.with_columns(pl.col(c["query"], c["item"]).cast(pl.String))
            run_q = run_q.with_columns(pl.col(c["query"]).cast(pl.String))
            all_q = all_q.with_columns(pl.col(c["query"]).cast(pl.String))
        for col in (c["query"], c["item"], c["relevance"]):
            n = qr[col].null_count()
            if n:
                add("error", "qrels", f"qrels: {n} null values in {col!r}")
        nan = qr.filter(pl.col(c["relevance"]).cast(pl.Float64).is_nan()).height
        if nan:
            add("error", "qrels", f"qrels: {nan} NaN grades in {c['relevance']!r}")
        dup = qr.group_by(c["query"], c["item"]).len().filter(pl.col("len") > 1).sort(c["query"], c["item"])
        if dup.height:
            add("error", "duplicates", f"qrels: {dup.height} (query, item) pairs are judged more than once, e.g. query {_examples(dup[c['query']].unique(maintain_order=True).to_list())}")
        judged_q = qr.select(c["query"]).unique()
        facts.update(judgments=qr.height, judged_queries=judged_q.height)
        unjudged_q = all_q.join(judged_q, on=c["query"], how="anti").sort(c["query"])
        if unjudged_q.height:
            add("warning", "coverage", f"{unjudged_q.height} queries of the run have no judgments and are not evaluated, e.g. {_examples(unjudged_q[c['query']].to_list())}")
        expected = groups.join(judged_q, how="cross") if by else judged_q
        absent = expected.join(run_q, on=keys, how="anti")
        if absent.height:
            per = _per_group(absent, by)
            add("warning", "coverage", f"judged queries with no ranking in the run (scored 0 with --missing zero): {per}, e.g. {_examples(absent[c['query']].unique().sort().to_list())}")
        labels = qr[c["relevance"]].cast(pl.Float64)
        no_rel = qr.group_by(c["query"]).agg((pl.col(c["relevance"]) > 0).sum().alias("r")).filter(pl.col("r") == 0)
        if no_rel.height:
            add("info", "labels", f"{no_rel.height} judged queries have no relevant item (every metric is 0 on them), e.g. {_examples(no_rel[c['query']].sort().to_list())}")
        # unjudged share in the top k of each ranking
        order = [pl.col(c["position"])] if has_pos else [pl.col(c["score"]), it]
        desc = [False] if has_pos else [True, True]
        top = (run.group_by(keys).agg(it.sort_by(order, descending=desc).head(k)).explode(c["item"])
               .join(qr.lazy().select(c["query"], c["item"], pl.lit(True).alias("__judged")), on=[c["query"], c["item"]], how="left")
               .group_by(by or pl.lit(1).alias("__all")).agg(pl.len().alias("n"), pl.col("__judged").is_null().sum().alias("u"))
               .collect().sort(by or "__all"))
        parts = []
        for row in top.iter_rows(named=True):
            share = row["u"] / row["n"] if row["n"] else 0.0
            name = ", ".join(str(row[b]) for b in by)
            parts.append((name, share))
        shares = "; ".join(f"{n} {_pct(s)}" if n else _pct(s) for n, s in parts)
        worst = max((s for _, s in parts), default=0.0)
        facts["unjudged_at_k"] = {n or "all": s for n, s in parts}
        add("warning" if worst > 0 else "info", "judged", f"unjudged share of the top {k}: {shares}" + (" (unjudged items count as not relevant)" if worst > 0 else ""))
    else:
        labels = None
        if by:
            expected = groups.join(all_q, how="cross")
            absent = expected.join(run_q, on=keys, how="anti")
            if absent.height:
                add("warning", "coverage", f"queries missing from some versions (their comparison is not paired): {_per_group(absent, by)}, e.g. {_examples(absent[c['query']].unique().sort().to_list())}")
        if has_rel:
            no_rel = stats.filter(pl.col("n_rel") == 0)
            if no_rel.height:
                add("info", "labels", f"{no_rel.height} of {stats.height} rankings have no relevant item (every metric is 0 on them), e.g. query {where(no_rel)}")
    # label distribution
    if labels is None and has_rel:
        labels = run.select(pl.col(c["relevance"]).cast(pl.Float64)).collect().to_series()
    if labels is not None:
        add(*_label_distribution(labels, "qrels" if qrels is not None else "run"))
        if labels.drop_nulls().drop_nans().len() and labels.max() <= 0:  # type: ignore[operator]
            add("warning", "labels", "no label is positive: every metric will be 0")
        neg = int((labels < 0).sum())
        if neg:
            add("warning", "labels", f"{neg} negative labels (they count as not relevant)")
    return findings, facts


def _per_group(absent: pl.DataFrame, by: Sequence[str]) -> str:
    if not by:
        return f"{absent.height} queries"
    counts = absent.group_by(by).len().sort(by)
    return ", ".join(f"{'/'.join(str(row[b]) for b in by)} lacks {row['len']}" for row in counts.iter_rows(named=True))


def _label_distribution(labels: pl.Series, side: str) -> tuple[str, str, str]:
    clean = labels.drop_nulls().drop_nans()
    n = clean.len()
    if n == 0:
        return ("info", "labels", f"labels ({side}): none")
    counts = clean.value_counts(sort=False).sort(clean.name)
    if counts.height <= 8:
        parts = [f"{_cell(v, 2) if not float(v).is_integer() else int(v)}: {cnt:,} ({_pct(cnt / n)})" for v, cnt in counts.iter_rows()]
        return ("info", "labels", f"labels ({side}): " + ", ".join(parts))
    pos = clean.filter(clean > 0)
    zero = int((clean <= 0).sum())
    text = f"labels ({side}): {counts.height} distinct values; <= 0: {zero:,} ({_pct(zero / n)}), > 0: {pos.len():,} ({_pct(pos.len() / n)})"
    if pos.len():
        text += f", positive min {pos.min():.3g} / median {pos.median():.3g} / max {pos.max():.3g}"
    return ("info", "labels", text)
