"""Everything wrong or suspicious in a log, as findings: :func:`diagnose` (and
``rank-polars validate``).

Where :func:`rank_polars.evaluate` stops at the first problem, ``diagnose`` lists them all,
with warnings (tied scores, queries one side lacks, unjudged items) and facts (rows,
rankings, label distribution).  The statistics are :mod:`rank_polars.validate`'s (the ones
``evaluate`` checks, over every row and judgment as with ``checks="strict"``); only what
``evaluate`` does not check (gaps in positions, tied scores, coverage, labels) is added here.
With ``engine="duckdb"`` or ``"spark"`` the statistics are the engine's own (the statements
``evaluate`` runs there, :class:`rank_polars.engines.sql_runner.SqlRunner`), so a log too
large for one machine is diagnosed where it lives; what needs the Polars reader is then
said not to be computed.

>>> import polars as pl, rank_polars as rp
>>> log = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "a", "b"],
...                     "position": [1, 2, 1], "relevance": [1, 0, None]})
>>> found = rp.diagnose(log)
>>> found.errors, found.warnings
(2, 0)
>>> for f in found.findings:
...     print(f.level, f.check, f.message)
error duplicates duplicate items within a ranking in 'item' (keep one row per query and item, or pass duplicates='first'): 1 repeated row in 1 ranking, counting every row, e.g. query 'q1'
error nulls null or NaN relevance labels or infinite ones in 'relevance' (label every row with a finite grade, or pass qrels=): 1 row in 1 ranking, counting every row, e.g. query 'q2'
info labels 1 of 2 rankings have no relevant item (every metric is 0 on them), e.g. query 'q2'
info labels labels (run): 0: 1 (50.0%), 1: 1 (50.0%)
>>> found.to_frame().columns
['level', 'check', 'message']
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Mapping, Sequence

import polars as pl

from rank_polars.errors import RankPolarsError, plural, tally
from rank_polars.inputs import Columns, Inputs, Source, judgments_as_log, prepare, scan
from rank_polars.schema import Schema, as_schema
from rank_polars.measures import parse_all
from rank_polars.plan import GRADE, ITEM, N_RET, Q, RANK, SCORE, build_plan
from rank_polars.presentation import cell, count, count_of, did_you_mean, share
from rank_polars.validate import qrels_stats_polars, stat_exprs

if TYPE_CHECKING:  # the engines are imported when asked for
    from rank_polars.engines.sql_runner import SqlRunner

Level = Literal["error", "warning", "info"]
Engine = Literal["polars", "duckdb", "spark"]


@dataclass
class Finding:
    """One thing found: its level, the check that found it, and what to do about it."""

    level: Level
    check: str
    message: str


@dataclass
class Diagnosis:
    """The findings (errors first as found) and the facts (counts) about a log."""

    findings: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(f.level == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.level == "warning" for f in self.findings)

    def add(self, level: Level, check: str, message: str) -> None:
        self.findings.append(Finding(level, check, message))

    def to_frame(self) -> pl.DataFrame:
        """One row per finding: ``level``, ``check``, ``message``."""
        return pl.DataFrame([f.__dict__ for f in self.findings], schema={"level": pl.String, "check": pl.String, "message": pl.String})


# validate.py's statistic -> (level, check, message); {pos} etc. are the user's column names
_RUN_FINDINGS = {
    "item_null": ("error", "nulls", "null item ids in {item}"),
    "item_dup": ("error", "duplicates", "duplicate items within a ranking in {item} (keep one row per query and item, or pass duplicates='first')"),
    "rank_null": ("error", "nulls", "null positions in {pos}"),
    "rank_lt1": ("error", "positions", "positions < 1 in {pos} (1 = shown first)"),
    "rank_dup": ("error", "duplicates", "duplicate positions within a ranking in {pos}"),
    "score_bad": ("error", "nulls", "null or NaN scores in {score}"),
    "grade_bad": ("error", "nulls", "null or NaN relevance labels or infinite ones in {rel} (label every row with a finite grade, or pass qrels=)"),
}
_QRELS_FINDINGS = {
    "q_item_null": ("error", "qrels", "qrels: {n} null values in {item}"),
    "q_grade_null": ("error", "qrels", "qrels: {n} null values in {rel}"),
    "q_grade_nan": ("error", "qrels", "qrels: {n} NaN or infinite grades in {rel}"),
    "q_dup": ("error", "duplicates", "qrels: {n} (query, item) pairs are judged more than once, e.g. query {where}"),
}


def _examples(values: Sequence[Any], limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" (and {len(values) - limit} more)" if len(values) > limit else "")


def diagnose(
    run: Source,
    *,
    qrels: Source | None = None,
    by: str | Sequence[str] | None = None,
    k: int = 10,
    order: Literal["auto", "position", "score"] = "auto",
    schema: Schema | None = None,
    query: str | None = None,
    item: str | None = None,
    position: str | None = None,
    score: str | None = None,
    relevance: str | None = None,
    engine: Engine = "polars",
    spark: Any = None,
    duckdb_memory_limit: str | None = None,
    duckdb_temp_directory: str | None = None,
    expected_shares: Mapping[str, float] | None = None,
    judge: str | None = None,
) -> Diagnosis:
    """Everything wrong or suspicious in ``run`` (and ``qrels``), as a :class:`Diagnosis`.

    Parameters
    ----------
    run, qrels, by, order, schema, query, item, position, score, relevance, judge
        As for :func:`rank_polars.evaluate`.  Judgments of several judges (a judge column) and
        no ``judge``: each judge's label set is diagnosed (:func:`each_judge`), never their
        rows as one (a pair two judges graded is no repeated judgment).
    k
        Depth of the unjudged share (with ``qrels``).
    engine
        Where the statistics are computed.  ``"polars"`` (default): every finding.
        ``"duckdb"`` / ``"spark"``: the engine's own check statistics (the ones
        ``evaluate(..., engine=...)`` runs, over every row and judgment), every failed check
        reported as a finding instead of raised, the counts of rows, rankings, queries and
        judgments, and the coverage findings; what needs the Polars reader (gaps in
        positions, tied scores, the labels' distribution, the unjudged share) is not
        computed, and an ``"info"`` finding of check ``"engine"`` says so.
    spark, duckdb_memory_limit, duckdb_temp_directory
        As for :func:`rank_polars.evaluate`.
    expected_shares
        With ``by``: the share of rankings each group (an A/B arm, by its ``by`` values joined
        with ``/``) was meant to get, e.g. ``{"control": 0.5, "treatment": 0.5}`` (normalised);
        default equal shares.  The **sample-ratio check** compares the groups' counts of
        rankings with them (Pearson's chi-square, ``scipy.stats.chisquare``): a warning when
        p < 0.001 (a sample ratio mismatch: the split, the logging or a filter is broken, and
        the arms' metrics are not comparable), else an ``"info"`` line when the counts differ
        at all; ``facts["sample_ratio"]`` holds the counts, shares and p-value.

    Returns
    -------
    Diagnosis
        ``findings`` (level ``"error"``: ``evaluate`` would refuse the log; ``"warning"``:
        it would run but the numbers may not mean what you think; ``"info"``) and ``facts``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "c"],
    ...                     "position": [1, 1, 1], "relevance": [1, 0, 1]})
    >>> for f in rp.diagnose(log, engine="duckdb").findings:
    ...     print(f.level, f.check, f.message)
    error duplicates duplicate positions within a ranking in 'position': 1 repeated row in 1 ranking, counting every row, e.g. query 'q1'
    info engine not computed in the duckdb engine: gaps in positions, the labels' distribution (engine='polars' computes them)
    """
    if engine not in ("polars", "duckdb", "spark"):
        raise RankPolarsError(f"engine must be 'polars', 'duckdb' or 'spark', got {engine!r}")
    mapping = as_schema(schema, query=query, item=item, position=position, score=score, relevance=relevance)
    if qrels is not None or judge is not None:
        qrels, judges = _label_sets(qrels, mapping, judge)
        if len(judges) > 1:
            return each_judge(judges, lambda who: diagnose(
                run, qrels=qrels, by=by, k=k, order=order, schema=mapping, engine=engine, spark=spark,
                duckdb_memory_limit=duckdb_memory_limit, duckdb_temp_directory=duckdb_temp_directory,
                expected_shares=expected_shares, judge=who))
    out = Diagnosis()
    columns = Columns.of(mapping)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    with _runner(engine, spark, duckdb_memory_limit, duckdb_temp_directory) as runner:
        try:
            if engine == "spark":  # Spark frames, table names, paths: read by Spark
                from rank_polars.engines.spark_engine import schema_frame, spark_frame

                run = spark_frame(runner.spark, run, "run")
                qrels = None if qrels is None else judgments_as_log(spark_frame(runner.spark, qrels, "qrels"), columns)
                run_lf, qrels_lf = schema_frame(run), None if qrels is None else schema_frame(qrels)
            else:
                qrels = judgments_as_log(qrels, columns)  # the judgments' own names, checked and renamed
                run_lf, qrels_lf = scan(run, "run"), None if qrels is None else scan(qrels, "qrels")
        except RankPolarsError as e:
            if "qrels: column" not in str(e):
                raise
            out.add("error", "columns", str(e))
            return out
        if not _columns_ok(out, run_lf.collect_schema(), qrels_lf, columns, by_cols):
            return out
        run_lf, qrels_lf = _same_id_types(out, run_lf, qrels_lf, columns)
        try:
            if runner is None:
                inputs = prepare(run_lf, qrels=qrels_lf, by=by_cols, columns=columns, order=order)
            else:  # the engine reads the sources itself (Parquet files, Spark frames), ids cast as in evaluate
                reading = runner.prepare if engine == "spark" else prepare  # type: ignore[union-attr]
                inputs = reading(run, qrels=qrels, by=by_cols, columns=columns, labels="qrels", order=order)
        except RankPolarsError as e:
            out.add("error", "columns", str(e))
            return out
        inputs.checks = "strict"
        if runner is None:
            _polars_checks(out, inputs, k, expected_shares)
        else:
            _engine_checks(out, inputs, runner, engine, expected_shares)
    return out


def _label_sets(qrels: Source | None, mapping: Schema, judge: str | None) -> tuple[Any, list[str]]:
    """The judgments to diagnose and, when they hold several judges and ``judge`` chooses none,
    the judges (each diagnosed on its own); else ``judge``'s rows (or the judgments as they are)."""
    from rank_polars.judges.table import judges_in, one_judge, read

    if qrels is not None and judge is None:
        source, column = read(qrels, mapping)
        judges = judges_in(source, column) if column is not None else []
        if len(judges) > 1:
            return source, judges  # read once: a stream is not read again for each judge
        return one_judge(source, mapping, None), []
    return one_judge(qrels, mapping, judge), []


_LEVELS: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


def each_judge(judges: Sequence[str], diagnosis_of: Callable[[str], Diagnosis]) -> Diagnosis:
    """The diagnoses of several judges' label sets as one: a finding every judge's has (the run's
    own) once, the others under their judge (``judge 'llm': ...``), errors first; the facts all
    judges share at the top, the others in ``facts["judges"][judge]``."""
    parts = {who: diagnosis_of(who) for who in judges}

    def key(f: Finding) -> tuple[str, str, str]:
        return f.level, f.check, f.message

    shared = set.intersection(*({key(f) for f in d.findings} for d in parts.values()))
    out = Diagnosis()
    out.findings = [f for f in next(iter(parts.values())).findings if key(f) in shared]
    out.findings += [Finding(f.level, f.check, f"judge {who!r}: {f.message}")
                     for who, d in parts.items() for f in d.findings if key(f) not in shared]
    out.findings.sort(key=lambda f: _LEVELS[f.level])  # stable: each level in the order found
    facts = [d.facts for d in parts.values()]
    names = set.intersection(*(set(f) for f in facts))
    out.facts = {name: facts[0][name] for name in facts[0] if name in names and all(f[name] == facts[0][name] for f in facts)}
    out.facts["judges"] = {who: {n: v for n, v in d.facts.items() if n not in out.facts} for who, d in parts.items()}
    return out


def _columns_ok(out: Diagnosis, schema: pl.Schema, qrels: pl.LazyFrame | None, c: Columns, by: list[str]) -> bool:
    """Report every missing column at once (with "did you mean"); False if any."""
    for role in ("query", "item"):
        name = getattr(c, role)
        if name not in schema:
            out.add("error", "columns", f"run has no {role} column {name!r}{did_you_mean(name, schema.names())}")
    for col in by:
        if col not in schema:
            out.add("error", "columns", f"run has no 'by' column {col!r}{did_you_mean(col, schema.names())}")
    if c.position not in schema and c.score not in schema:
        out.add("error", "columns", f"run has neither a position column {c.position!r} nor a score column {c.score!r} to order items"
                + did_you_mean(c.position, schema.names()))
    if qrels is None and c.relevance not in schema:
        out.add("error", "columns", f"run has no relevance column {c.relevance!r} and no qrels were given{did_you_mean(c.relevance, schema.names())}")
    if qrels is not None:
        qschema = qrels.collect_schema()
        for name in (c.query, c.item, c.relevance):
            if name not in qschema:
                out.add("error", "columns", f"qrels have no column {name!r}{did_you_mean(name, qschema.names())}")
    return not out.findings


def _same_id_types(out: Diagnosis, run: pl.LazyFrame, qrels: pl.LazyFrame | None, c: Columns) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    if qrels is None:
        return run, qrels
    rs, qs = run.collect_schema(), qrels.collect_schema()
    if all(rs[col] == qs[col] for col in (c.query, c.item)):
        return run, qrels
    out.add("warning", "columns", f"query/item ids are {rs[c.query]}/{rs[c.item]} in the run and {qs[c.query]}/{qs[c.item]} in the qrels (compared as strings)")
    ids = pl.col(c.query, c.item).cast(pl.String)
    return run.with_columns(ids), qrels.with_columns(ids)


@contextlib.contextmanager
def _runner(engine: str, spark: Any, memory_limit: str | None, temp_directory: str | None) -> Iterator[SqlRunner | None]:
    """The engine's runner, open for the statistics statements (None for Polars)."""
    if engine == "polars":
        yield None
    elif engine == "spark":
        from rank_polars.engines.spark_engine import SparkEngine

        runner = SparkEngine(spark)
        try:
            yield runner
        finally:
            runner.close()
    else:
        from rank_polars.engines.duckdb_engine import DuckDBEngine

        with DuckDBEngine(memory_limit=memory_limit, temp_directory=temp_directory).session() as duck:
            yield duck


def _check_names(inputs: Inputs) -> list[str]:
    """The statistics ``evaluate(checks="strict")`` computes over every row, in report order."""
    ranking = ["rank_null", "rank_lt1", "rank_dup"] if inputs.order == "position" else ["score_bad"]
    return ["item_null", "item_dup", *ranking, *(["grade_bad"] if inputs.run_labels else [])]


def _engine_checks(out: Diagnosis, inputs: Inputs, runner: SqlRunner, engine: str,
                   expected_shares: Mapping[str, float] | None = None) -> None:
    """The engine's own statistics statements (``SqlRunner.run_stats`` / ``qrels_stats``),
    each failed check a finding; then coverage, which needs only those statistics."""
    plan = build_plan(parse_all("p@1"))  # any plan: under checks="strict" the statistics read none of it
    src = runner.source(inputs, "error")
    stats = runner.run_stats(plan, src, inputs, "error")
    qstats = runner.qrels_stats(plan, src, inputs) if src.qrels is not None else None
    stats = stats.sort(inputs.keys, nulls_last=True)
    _ranking_findings(out, inputs, stats)
    judged = _qrels_findings(out, inputs, qstats) if qstats is not None else None
    _coverage(out, inputs, stats, judged)
    _sample_ratio(out, inputs, stats, expected_shares)
    skipped = ["gaps in positions" if inputs.order == "position" else "tied scores", "the labels' distribution"]
    if qstats is not None:
        skipped += ["judged queries without a relevant item", "the unjudged share of the top k"]
    out.add("info", "engine", f"not computed in the {engine} engine: {', '.join(skipped)} (engine='polars' computes them)")


def _polars_checks(out: Diagnosis, inputs: Inputs, k: int, expected_shares: Mapping[str, float] | None = None) -> None:
    """Every finding, from one grouped pass over the run (and one over the judgments)."""
    by_position = inputs.order == "position"
    aggs = [pl.len().alias(N_RET), *stat_exprs(_check_names(inputs))]
    if by_position:  # not checked by evaluate: positions are taken as given
        aggs.append((pl.col(RANK).max() != pl.len()).alias("rank_gaps"))
    else:
        s = pl.col(SCORE)
        aggs.append((pl.len() - s.drop_nulls().drop_nans().n_unique() - s.is_null().sum() - s.is_nan().sum()).alias("score_ties"))
    if inputs.run_labels:
        aggs.append((pl.col(GRADE).cast(pl.Float64) > 0).sum().alias("n_rel"))
    stats = inputs.run.group_by(inputs.keys).agg(aggs).collect(engine="streaming").sort(inputs.keys, nulls_last=True)
    where = _ranking_findings(out, inputs, stats)
    if by_position:
        gaps = stats.filter(pl.col("rank_gaps") & (pl.col("rank_dup") == 0) & (pl.col("rank_lt1") == 0))
        if gaps.height:
            out.add("info", "positions", f"{count(gaps.height)} rankings have gaps in their positions (not 1..n); positions are taken as given, e.g. query {where(gaps)}")
    else:
        ties = stats.filter(pl.col("score_ties") > 0)
        out.facts["rankings_with_tied_scores"] = ties.height
        if ties.height:
            out.add("warning", "ties", f"{count_of(ties.height, stats.height)} rankings have tied scores; ties are broken by item id, descending (as trec_eval), e.g. query {where(ties)}")

    if inputs.qrels is not None:
        judged = _qrels_findings(out, inputs, qrels_stats_polars(inputs, pl.lit(True)).collect())
        _coverage(out, inputs, stats, judged)
        labels = _judgment_labels(out, inputs, k)
    else:
        _coverage(out, inputs, stats, None)
    _sample_ratio(out, inputs, stats, expected_shares)
    if inputs.qrels is None:
        no_rel = stats.filter(pl.col("n_rel") == 0)
        if no_rel.height:
            out.add("info", "labels", f"{count_of(no_rel.height, stats.height)} rankings have no relevant item (every metric is 0 on them), e.g. query {where(no_rel)}")
        labels = inputs.run.select(pl.col(GRADE).cast(pl.Float64)).collect().to_series()
    out.add(*_label_distribution(labels, "qrels" if inputs.qrels is not None else "run"))
    clean = labels.drop_nulls().drop_nans()
    if clean.len() and clean.max() <= 0:  # type: ignore[operator]
        out.add("warning", "labels", "no label is positive: every metric will be 0")
    neg = int((clean < 0).sum())
    if neg:
        out.add("warning", "labels", f"{count(neg)} negative labels (they count as not relevant)")


def _ranking_findings(out: Diagnosis, inputs: Inputs, stats: pl.DataFrame) -> Callable[[pl.DataFrame], str]:
    """Facts and the failed checks of the per-ranking statistics (validate.py's, from either
    engine); returns how to name a few rankings of a frame of them."""
    c, by = inputs.columns, inputs.by
    names = {"pos": repr(c.position), "score": repr(c.score), "item": repr(c.item), "rel": repr(c.relevance)}
    out.facts.update(rows=int(stats[N_RET].sum()), rankings=stats.height, queries=stats[Q].n_unique(),
                     groups=stats.select(inputs.by_internal).n_unique() if by else 1)

    def where(frame: pl.DataFrame) -> str:
        shown = []
        for row in frame.head(3).iter_rows(named=True):
            extra = ", ".join(f"{b}={row[key]!r}" for key, b in zip(inputs.by_internal, by))
            shown.append(repr(row[Q]) + (f" ({extra})" if extra else ""))
        return ", ".join(shown) + (f" (and {count(frame.height - 3)} more)" if frame.height > 3 else "")

    null_q = stats.filter(pl.col(Q).is_null())
    if null_q.height:
        n = int(null_q[N_RET].sum())
        out.add("error", "nulls", f"{plural(n, 'row')} {'has' if n == 1 else 'have'} a null query id in {c.query!r}")
    for key, col in zip(inputs.by_internal, by):
        nulls = stats.filter(pl.col(key).is_null())
        if nulls.height:
            n = int(nulls[N_RET].sum())
            out.add("warning", "nulls", f"{plural(n, 'row')} {'has' if n == 1 else 'have'} a null {col!r} (a group of its own)")
    for stat in _check_names(inputs):
        level, check, text = _RUN_FINDINGS[stat]
        bad = stats.filter(pl.col(stat) > 0)
        if bad.height:
            counted = tally(int(bad[stat].sum()), bad.height, stat, "strict")  # validate checks every row
            out.add(level, check, f"{text.format(**names)}: {counted}, e.g. query {where(bad)}")
    return where


def _qrels_findings(out: Diagnosis, inputs: Inputs, qstats: pl.DataFrame) -> pl.DataFrame:
    """The failed checks of validate.py's per-query statistics of the judgments (from either
    engine) and their facts; returns the judged queries."""
    c = inputs.columns
    names = {"item": repr(c.item), "rel": repr(c.relevance)}
    null_q = qstats.filter(pl.col(Q).is_null())
    if null_q.height:
        out.add("error", "qrels", f"qrels: {count(null_q['q_n'].sum())} null values in {c.query!r}")
    for stat, (level, check, text) in _QRELS_FINDINGS.items():
        bad = qstats.filter(pl.col(stat) > 0)
        if bad.height:
            out.add(level, check, text.format(n=count(bad[stat].sum()), where=_examples(bad[Q].sort().to_list()), **names))
    judged = qstats.filter(pl.col(Q).is_not_null()).select(Q)
    out.facts.update(judgments=int(qstats["q_n"].sum()), judged_queries=judged.height)
    return judged


def _coverage(out: Diagnosis, inputs: Inputs, stats: pl.DataFrame, judged: pl.DataFrame | None) -> None:
    """Queries one side lacks: from the per-ranking statistics and the judged queries alone."""
    keys = inputs.keys
    run_q = stats.select(keys)
    groups = stats.select(inputs.by_internal).unique() if inputs.by else None
    if judged is None:
        if groups is None:
            return
        absent = groups.join(run_q.select(Q).unique(), how="cross").join(run_q, on=keys, how="anti", nulls_equal=True)
        if absent.height:
            out.add("warning", "coverage", f"queries missing from some versions (their comparison is not paired): {_per_group(absent, inputs)}, e.g. {_examples(absent[Q].unique().sort().to_list())}")
        return
    unjudged = run_q.select(Q).unique().join(judged, on=Q, how="anti").sort(Q)
    if unjudged.height:
        out.add("warning", "coverage", f"{count(unjudged.height)} queries of the run have no judgments and are not evaluated, e.g. {_examples(unjudged[Q].to_list())}")
    expected = groups.join(judged, how="cross") if groups is not None else judged
    absent = expected.join(run_q, on=keys, how="anti", nulls_equal=True)
    if absent.height:
        out.add("warning", "coverage", f"judged queries with no ranking in the run (scored 0 with missing='zero'): {_per_group(absent, inputs)}, e.g. {_examples(absent[Q].unique().sort().to_list())}")


def _judgment_labels(out: Diagnosis, inputs: Inputs, k: int) -> pl.Series:
    """Judged queries without a relevant item and the unjudged share of each group's top k;
    returns the judgments' grades."""
    assert inputs.qrels is not None
    keys = inputs.keys
    grades = inputs.qrels.select(Q, GRADE).collect()
    no_rel = grades.group_by(Q).agg((pl.col(GRADE) > 0).sum().alias("r")).filter(pl.col("r") == 0)
    if no_rel.height:
        out.add("info", "labels", f"{count(no_rel.height)} judged queries have no relevant item (every metric is 0 on them), e.g. {_examples(no_rel[Q].sort().to_list())}")
    order, desc = ([pl.col(RANK)], [False]) if inputs.order == "position" else ([pl.col(SCORE), pl.col(ITEM)], [True, True])
    group_keys = inputs.by_internal or [pl.lit(1).alias("__all")]
    top = (inputs.run.group_by(keys).agg(pl.col(ITEM).sort_by(order, descending=desc).head(k)).explode(ITEM)
           .join(inputs.qrels.select(Q, ITEM, pl.lit(True).alias("__judged")).unique([Q, ITEM]), on=[Q, ITEM], how="left")
           .group_by(group_keys).agg(pl.len().alias("n"), pl.col("__judged").is_null().sum().alias("u"))
           .collect().sort(inputs.by_internal or "__all"))
    parts = [(", ".join(str(row[key]) for key in inputs.by_internal), row["u"] / row["n"] if row["n"] else 0.0)
             for row in top.iter_rows(named=True)]
    shares = "; ".join(f"{n} {share(s)}" if n else share(s) for n, s in parts)
    worst = max((s for _, s in parts), default=0.0)
    out.facts["unjudged_at_k"] = {n or "all": s for n, s in parts}
    out.add("warning" if worst > 0 else "info", "judged",
            f"unjudged share of the top {k}: {shares}" + (" (unjudged items count as not relevant)" if worst > 0 else ""))
    return grades[GRADE]


def _sample_ratio(out: Diagnosis, inputs: Inputs, stats: pl.DataFrame, expected: Mapping[str, float] | None) -> None:
    """The sample-ratio check: rankings per group against the expected shares, chi-square."""
    if not inputs.by:
        if expected is not None:
            raise RankPolarsError("expected_shares= needs by= (the groups whose shares are expected)")
        return
    label = pl.concat_str([pl.col(c).cast(pl.String).fill_null("null") for c in inputs.by_internal], separator="/")
    counts = stats.group_by(label.alias("group")).len().sort("group")
    groups, observed = counts["group"].to_list(), counts["len"].to_list()
    if expected is None:
        weights = [1.0] * len(groups)
    else:
        unknown = sorted(set(groups) - set(expected))
        if unknown or any(not (0 < float(w) < float("inf")) for w in expected.values()):
            raise RankPolarsError(f"expected_shares: give a positive share for every group; missing {_examples(unknown)}"
                                  if unknown else f"expected_shares must be positive numbers, got {dict(expected)!r}")
        weights = [float(expected[g]) for g in groups]
    if len(groups) < 2:
        return
    from scipy import stats as st  # scipy only when a diagnosis has groups

    total, wsum = sum(observed), sum(weights)
    result = st.chisquare(observed, [total * w / wsum for w in weights])
    p = float(result.pvalue)
    shares = ", ".join(f"{g} {count(n)} ({share(n / total)}, expected {share(w / wsum)})"
                       for g, n, w in zip(groups, observed, weights))
    out.facts["sample_ratio"] = {"groups": groups, "rankings": observed, "expected": [w / wsum for w in weights],
                                 "chi2": float(result.statistic), "p_value": p}
    if p < 0.001:
        out.add("warning", "sample_ratio", f"sample ratio mismatch: rankings per group {shares}; chi-square p = {p:.2g} "
                "< 0.001: the split, the logging or a filter is broken, and the groups' metrics are not comparable")
    elif len(set(n * wsum / w for n, w in zip(observed, weights))) > 1:
        out.add("info", "sample_ratio", f"rankings per group {shares}; chi-square p = {p:.2g} (no mismatch)")


def _per_group(absent: pl.DataFrame, inputs: Inputs) -> str:
    if not inputs.by:
        return f"{count(absent.height)} queries"
    counts = absent.group_by(inputs.by_internal).len().sort(inputs.by_internal)
    return ", ".join(f"{'/'.join(str(row[key]) for key in inputs.by_internal)} lacks {count(row['len'])}" for row in counts.iter_rows(named=True))


def _label_distribution(labels: pl.Series, side: str) -> tuple[Level, str, str]:
    clean = labels.drop_nulls().drop_nans()
    n = clean.len()
    if n == 0:
        return ("info", "labels", f"labels ({side}): none")
    counts = clean.value_counts(sort=False).sort(clean.name)
    if counts.height <= 8:
        parts = [f"{cell(v, 2) if not float(v).is_integer() else int(v)}: {count(cnt)} ({share(cnt / n)})" for v, cnt in counts.iter_rows()]
        return ("info", "labels", f"labels ({side}): " + ", ".join(parts))
    pos = clean.filter(clean > 0)
    zero = int((clean <= 0).sum())
    text = f"labels ({side}): {counts.height} distinct values; <= 0: {count(zero)} ({share(zero / n)}), > 0: {count(pos.len())} ({share(pos.len() / n)})"
    if pos.len():
        text += f", positive min {pos.min():.3g} / median {pos.median():.3g} / max {pos.max():.3g}"
    return ("info", "labels", text)


__all__ = ["Diagnosis", "Finding", "diagnose"]
