"""Judgments of several judges in one table: reading them, choosing one judge's labels.

A judgments table may carry a ``judge`` column (the schema's ``judge`` role): who gave each
grade, a person, an LLM, clicks turned into labels.  Any source the judgments are read from
today holds it (a frame, a Parquet file or folder, a CSV/TSV file, pandas, Arrow), and a dict
``{judge: judgments}`` stacks one source per judge (a TREC qrels file each, say, whose format
has no judge field), so every format reads.

A table with several judges is never read as one label set: ``evaluate`` then needs
``judge=`` (or ``by_judge=True``) and says which judges there are.  A table with one judge,
or without the column, reads as before.

>>> import polars as pl
>>> from rank_polars.judges.table import judgments_of
>>> both = {"people": pl.DataFrame({"query": ["q1"], "item": ["a"], "relevance": [2]}),
...         "llm": pl.DataFrame({"query": ["q1", "q1"], "item": ["a", "b"], "relevance": [3, 1]})}
>>> judgments_of(both).sort("judge", "item")
shape: (3, 4)
┌───────┬──────┬───────────┬────────┐
│ query ┆ item ┆ relevance ┆ judge  │
│ ---   ┆ ---  ┆ ---       ┆ ---    │
│ str   ┆ str  ┆ i64       ┆ str    │
╞═══════╪══════╪═══════════╪════════╡
│ q1    ┆ a    ┆ 3         ┆ llm    │
│ q1    ┆ b    ┆ 1         ┆ llm    │
│ q1    ┆ a    ┆ 2         ┆ people │
└───────┴──────┴───────────┴────────┘
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Sequence

import polars as pl

from rank_polars import io as rio
from rank_polars.errors import DataError, RankPolarsError, examples
from rank_polars.inputs import Columns, Source, lazy, resolve
from rank_polars.schema import Schema, as_schema


def _is_spark(source: object) -> bool:
    return type(source).__module__.startswith("pyspark.")


def _per_judge(source: object) -> bool:
    """A dict ``{judge: judgments}``, not a pytrec_eval dict ``{query: {item: grade}}`` (whose
    values' values are numbers)."""
    if not isinstance(source, Mapping) or not source:
        return False
    first = next(iter(source.values()))
    if isinstance(first, Mapping):  # {judge: {query: {item: grade}}}
        return all(isinstance(v, Mapping) for v in first.values())
    return True


def _names(schema: Schema) -> Columns:
    """The judgments' own column names (as ``inputs.Columns``)."""
    return Columns(schema.judged("query"), schema.judged("item"), schema.column("position"), schema.column("score"),
                   schema.judged("relevance"))


def read(source: Source, schema: Schema) -> tuple[Any, str | None]:
    """The judgments as a source the engines read, and the judge column's name when they have one.

    ``{judge: source}`` is stacked into one LazyFrame with the judge column; a file without a
    judge field (TREC qrels, ndeval's subtopics), a Spark table name and a path that does not
    exist are returned as they are (the readers name their faults); a Spark DataFrame stays in Spark.
    """
    judge = schema.judged("judge")
    names = _names(schema)
    numeric = rio.numeric_roles(names.position, names.score, names.relevance)
    if _per_judge(source):
        parts = []
        for who, part in source.items():  # a few judges, not a loop over rows
            if not isinstance(who, str) or not who:
                raise RankPolarsError(f"qrels: a dict of judgments per judge needs judge names as keys (text), got {who!r}")
            frame = lazy(resolve(part, "qrels", numeric, names))
            have = frame.collect_schema().names()
            if judge in have:
                raise RankPolarsError(f"qrels: the judgments of judge {who!r} already have a {judge!r} column; give "
                                      "one table with that column, or a dict of tables without it")
            parts.append(frame.with_columns(pl.lit(who, pl.String).alias(judge)))
        return pl.concat(parts, how="vertical_relaxed"), judge
    if _is_spark(source):
        return source, judge if judge in source.columns else None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path) and not rio.is_glob(path):
            return source, None
        if os.path.isfile(path):
            from rank_polars.io.subtopics import looks_like_subtopic_qrels

            fmt = rio.detect_format(path, None, "qrels")
            if fmt in ("trec", "qrels") or looks_like_subtopic_qrels(path):
                return source, None  # their formats have no judge field: read as before
            if fmt in ("csv", "tsv") and judge not in _header(path, "," if fmt == "csv" else "\t"):
                return source, None  # read once, by the readers, as before
    elif (names_of := _columns(source)) is not None and judge not in names_of:
        return source, None  # a frame without the column: left as it is (not converted twice)
    resolved = resolve(source, "qrels", numeric, names)
    return resolved, judge if judge in lazy(resolved).collect_schema().names() else None


def _header(path: str, separator: str) -> list[str]:
    """A CSV/TSV file's column names, from its first line only."""
    try:
        return pl.read_csv(path, separator=separator, n_rows=0, infer_schema=False, glob=False).columns
    except pl.exceptions.PolarsError:  # the reader names the fault when it reads the file
        return []


def _columns(source: object) -> list[str] | None:
    """The column names of a frame-like source without reading its rows; None when they cannot
    be known without reading it (a stream: it is then read once, here)."""
    if isinstance(source, pl.LazyFrame):
        return source.collect_schema().names()
    if isinstance(source, pl.DataFrame):
        return source.columns
    if isinstance(source, Mapping):  # a pytrec_eval dict {query: {item: grade}}: no judge
        return []
    names = getattr(source, "column_names", None)  # a pyarrow Table or RecordBatch
    if isinstance(names, list):
        return names
    if type(source).__module__.startswith("pandas."):  # its columns and named index levels
        return [str(c) for c in source.columns] + [str(n) for n in source.index.names if n is not None]
    return None


def judges_in(source: Any, judge: str) -> list[str]:
    """The judges of a judgments table, sorted; a null judge is an error (whose grade would it be?)."""
    if _is_spark(source):
        values = [row[0] for row in source.select(judge).distinct().collect()]
    else:
        values = lazy(source).select(pl.col(judge).unique()).collect().to_series().to_list()
    if any(v is None for v in values):
        raise RankPolarsError(f"qrels: column {judge!r} (judge) has null values: say who gave each grade")
    return sorted(values, key=str)


def _only(source: Any, judge: str, who: Any) -> Any:
    """The rows of judge ``who``, without the judge column (the engines read query, item, relevance)."""
    if _is_spark(source):
        from pyspark.sql import functions as F

        return source.filter(F.col(judge) == F.lit(who)).drop(judge)
    return lazy(source).filter(pl.col(judge) == who).drop(judge)


def one_judge(qrels: Source | None, schema: Schema, judge: str | None) -> Source | None:
    """The label set ``evaluate`` reads: the judgments of ``judge``; the judgments themselves when
    they have no judge column (``judge=`` is then an error) or one judge only.  Several judges and
    no ``judge=`` is an error naming them: labels of different judges are never mixed."""
    if qrels is None:
        if judge is not None:
            raise RankPolarsError(f"judge={judge!r} chooses among the judgments' judges: pass qrels=")
        return None
    source, column = read(qrels, schema)
    if column is None:
        if judge is not None:
            raise RankPolarsError(f"judge={judge!r}: the judgments have no judge column {schema.judged('judge')!r}; "
                                  "name it with schema=rp.Schema(judge='...'), or give {judge: judgments}")
        return source  # as given, or read once here (a stream cannot be read twice)
    judges = judges_in(source, column)
    if judge is None:
        if len(judges) > 1:
            raise RankPolarsError(f"qrels: column {column!r} holds {len(judges)} judges ({examples(judges, 8)}): "
                                  "choose one with judge='...' (or pass one judge's rows), or evaluate under each with by_judge=True")
        return _only(source, column, judges[0]) if judges else lazy(source).drop(column)
    if judge not in judges:
        raise RankPolarsError(f"judge={judge!r} is not among the judges of column {column!r}: {examples(judges, 8)}")
    return _only(source, column, judge)


def judgments_of(source: Source, schema: Schema | None = None, *, judge: str | None = None) -> pl.DataFrame:
    """Judgments as a DataFrame ``query, item, relevance, judge`` under the schema's names (a table
    without a judge column, or ``{judge: judgments}``, reads too); ``judge=`` required of none."""
    schema = as_schema(schema)
    frame, column = read(source, schema)
    if _is_spark(frame):
        frame = pl.from_pandas(frame.toPandas())
    names = _names(schema)
    cols = [names.query, names.item, names.relevance]
    out = lazy(frame).collect()
    if column is None:
        column = schema.judged("judge")
        out = out.with_columns(pl.lit(judge or "judge", pl.String).alias(column))
    have = out.columns
    for col, role in zip(cols, ("query id", "item id", "relevance grade")):
        if col not in have:
            raise RankPolarsError(f"qrels: column {col!r} ({role}) not found; columns are {', '.join(map(repr, have))}")
    return out.select(*cols, pl.col(column))


def check_pair_names(judges: Sequence[Any]) -> None:
    """Refuse a judge whose name has a ``|``: a pair of judges is named ``"a|b"``, so ``"x|y"``
    and ``"z"`` would read as ``"x|y|z"``, any two of three."""
    piped = [j for j in judges if "|" in str(j)]
    if piped:
        raise RankPolarsError(f"judges: {piped[0]!r} has a '|' in its name, which names a pair of judges "
                              "(\"a|b\"); rename the judge")


def check_grades(frame: pl.LazyFrame, query: str, relevance: str, name: str = "qrels") -> None:
    """Every grade a finite number, as the engines' judgments check says, or an error naming a few
    queries (``name``: the argument's): a null, NaN or infinite grade is no grade (not "judged",
    not one more grade of the scale)."""
    grade = pl.col(relevance)
    odd = grade.is_null() | (~grade.is_finite() if frame.collect_schema()[relevance].is_float() else pl.lit(False))
    bad = frame.filter(odd).select(query, grade.is_null().alias("null")).collect()
    if bad.height:
        nulls = int(bad["null"].sum())
        what = ("null values" if nulls == bad.height else "NaN grades or infinite ones" if not nulls
                else "null, NaN or infinite grades")
        raise DataError(f"{name}: column {relevance!r} has {bad.height} {what} (every grade must be a finite "
                        f"number), e.g. query {examples(bad[query].unique().sort(nulls_last=True).to_list())}")


def check_judgments(frame: pl.DataFrame, query: str, item: str, relevance: str, judge: str,
                    duplicates: bool = True) -> pl.DataFrame:
    """Numeric, non-null, finite grades and one grade per (query, item, judge), or an error naming
    a few (``duplicates=False``: the caller counts the repeats in a group-by of its own)."""
    dtype = frame.schema[relevance]
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        raise RankPolarsError(f"qrels: column {relevance!r} must be numeric, got {dtype}")
    roles = ((query, "query id"), (item, "item id"), (judge, "judge"))  # the grades: check_grades
    counted = frame.select(pl.col(col).null_count() for col, _ in roles).row(0)
    for (col, role), count in zip(roles, counted):
        nulls = frame.filter(pl.col(col).is_null()) if count else frame.clear()
        if nulls.height:
            raise RankPolarsError(f"qrels: column {col!r} ({role}) has {nulls.height} null values, e.g. in queries "
                                  f"{examples(nulls[query].unique().sort(nulls_last=True).to_list())}")
    check_grades(frame.lazy(), query, relevance)
    twice = frame.group_by(query, item, judge).len().filter(pl.col("len") > 1) if duplicates else frame.clear()
    if twice.height:
        raise RankPolarsError(f"qrels: {twice.height} (query, item) pairs are judged twice by one judge, e.g. in queries "
                              f"{examples(twice[query].unique().sort().to_list())}; keep one grade per judge")
    return frame.with_columns(pl.col(relevance).cast(pl.Float64))


def per_judge(qrels: Source, schema: Schema, judges: Sequence[str] | None = None) -> dict[str, Any]:
    """Each judge's judgments without the judge column (``by_judge``, the leaderboards), in the
    order of ``judges`` (default: every judge, sorted): read and split once, so that each judge's
    evaluation reads its own rows only (a Spark DataFrame is filtered in Spark)."""
    source, column = read(qrels, schema)
    if column is None:
        raise RankPolarsError(f"by_judge=True: the judgments have no judge column {schema.judged('judge')!r}; "
                              "name it with schema=rp.Schema(judge='...'), or give {judge: judgments}")
    have = judges_in(source, column)
    unknown = [j for j in judges or [] if j not in have]
    if unknown:
        raise RankPolarsError(f"judges: {unknown[0]!r} is not among the judges of column {column!r}: {examples(have, 8)}")
    chosen = list(judges) if judges is not None else have
    if _is_spark(source):
        return {who: _only(source, column, who) for who in chosen}
    rows = lazy(source).filter(pl.col(column).is_in(chosen)).collect()
    # a filter per judge: a few scans of one column (partition_by hashes every row's text: 0.9 s
    # against 0.05 s for 13.5M judgments of three judges)
    return {who: rows.filter(pl.col(column) == who).drop(column) for who in chosen}


__all__ = ["check_grades", "check_judgments", "check_pair_names", "judges_in", "judgments_of", "one_judge", "per_judge",
           "read"]
