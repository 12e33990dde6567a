"""Reading a run (and judgments) for the commands: scan, check the named columns (with
"did you mean"), line up id types."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import polars as pl

from rank_polars import io as rio
from rank_polars.errors import RankPolarsError, warn
from rank_polars.schema import Schema
from rank_polars.validate import VERSION_COLUMNS
from rank_polars.cli.errors import CLIError, did_you_mean, one_line

DEFAULT_COLUMNS = {"query": "query", "item": "item", "position": "position", "score": "score", "relevance": "relevance"}


@dataclass
class Loaded:
    """A run (and judgments) ready for evaluate/compare, with what was read."""

    run: Any
    qrels: Any
    run_lf: pl.LazyFrame
    qrels_lf: pl.LazyFrame | None
    columns: dict[str, str]
    by: list[str]
    n_files: int  # the run's files
    label: str = ""
    schema: pl.Schema = field(default_factory=pl.Schema)
    qrels_label: str = ""
    # the metrics to evaluate: the names given, those reading a table given (--history ...) as
    # specs carrying it (:func:`with_tables`)
    metrics: list[Any] = field(default_factory=list)
    # the column mapping the names came from (flags, the project file, the defaults)
    mapping: Schema = field(default_factory=Schema)

    def what(self, verb: str) -> str:
        """``evaluating log (12 files) with judgments qrels.parquet``: each side's files said apart."""
        files = f" ({self.n_files:,} files)" if self.n_files > 1 else ""
        return f"{verb} {self.label}{files}" + (f" with judgments {self.qrels_label}" if self.qrels_label else "")


def check_column(schema: pl.Schema, column: str, what: str, option: str) -> None:
    """Raise naming the option, with "did you mean" and the columns there are."""
    if column not in schema:
        raise CLIError(
            f"{what}: no column {column!r} ({option}){did_you_mean(column, schema.names()) or ';'} "
            f"columns are {', '.join(map(repr, schema.names()))}"
        )


def wants_subtopics(metrics: Sequence[str]) -> bool:
    """Whether a metric of ``metrics`` reads subtopic judgments from the qrels (diversity); a bad
    name is the library's to report."""
    from rank_polars.families.diversity import reads_qrels_subtopics
    from rank_polars.measures import parse_all

    try:
        specs = parse_all(list(metrics))
    except RankPolarsError:
        return False
    return any(reads_qrels_subtopics(spec) for _, spec in specs)


def load(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None, mapping: Schema,
         by: Sequence[str], order: str = "auto", metrics: Sequence[str] = (),
         tables: dict[str, str | None] | None = None) -> Loaded:
    """Scan the run and judgments, check the named columns, line up id types.  With a diversity
    metric among ``metrics``, qrels in ndeval's format (``topic subtopic docno judgment``) are
    read as subtopic judgments, as ``evaluate`` reads the file (as TREC qrels the subtopic was
    trec_eval's unused second field, and the measure said it needs subtopics)."""
    columns = {role: mapping.column(role) for role in DEFAULT_COLUMNS}
    judged = {role: mapping.judged(role) for role in ("query", "item", "relevance")}
    # CSV/TSV: only the columns named for position, score and relevance are numbers; ids stay text
    numeric = rio.numeric_roles(columns["position"], columns["score"], columns["relevance"])
    run_lf = rio.scan(run, format_in, what="run", numeric=numeric)
    run_fmt = rio.detect_format(run, format_in)
    schema = run_lf.collect_schema()
    for role in ("query", "item"):
        check_column(schema, columns[role], "run", f"--{role}")
    for role in ("position", "score"):
        if columns[role] != DEFAULT_COLUMNS[role] or order == role:
            check_column(schema, columns[role], "run", f"--{role}")
    if columns["relevance"] != DEFAULT_COLUMNS["relevance"] and qrels is None:
        check_column(schema, columns["relevance"], "run", "--relevance")
    for col in by:
        check_column(schema, col, "run", "--by")
    # no relevance column and no --qrels: the library says so (clicks are labels only with --relevance click)
    qrels_lf = None
    if qrels is not None:
        subtopics = qrels_format is None and wants_subtopics(metrics)
        if subtopics:
            from rank_polars.io.subtopics import looks_like_subtopic_qrels, read_subtopic_qrels
        if subtopics and looks_like_subtopic_qrels(qrels):
            qrels_lf = read_subtopic_qrels(qrels).lazy()
        else:
            qrels_numeric = rio.numeric_roles(columns["position"], columns["score"], judged["relevance"])
            qrels_lf = rio.scan(qrels, qrels_format, what="qrels", numeric=qrels_numeric)
        qschema = qrels_lf.collect_schema()
        for role in ("query", "item", "relevance"):
            option = f"--qrels-{role}" if judged[role] != columns[role] else f"--{role}"
            check_column(qschema, judged[role], "qrels", option)
    if mapping.judgments_differ:  # ids lined up by the library, which renames the judgments first
        run_h, qrels_h = run_lf, qrels_lf
    else:
        run_h, qrels_h = rio.harmonise_ids(run_lf, qrels_lf, (columns["query"], columns["item"]))
    # Parquet paths go to the engines as paths (DuckDB reads them itself); the rest as frames.
    run_src: Any = run if run_fmt == "parquet" and run_h is run_lf else run_h
    qrels_src: Any = qrels_h
    if qrels is not None and qrels_h is qrels_lf and rio.detect_format(qrels, qrels_format) == "parquet":
        qrels_src = qrels
    return Loaded(run_src, qrels_src, run_h, qrels_h, columns, list(by), len(rio.files_of(run)), Path(run).name or run,
                  schema, (Path(qrels).name or qrels) if qrels else "", with_tables(metrics, tables or {}, qrels is not None),
                  mapping)


def with_tables(metrics: Sequence[str], tables: dict[str, str | None], has_qrels: bool) -> list[Any]:
    """``metrics``, each name of a measure that reads a table (``--history`` ...) as its spec
    carrying the files given (a Parquet or ndeval file as its path, which the engines read; a
    CSV or TSV scanned); the other names as they are (``evaluate`` reports every bad name at
    once).  A measure whose table is not given is refused in the options' words (the library
    would say ``history=``)."""
    from rank_polars.measures import parse
    from rank_polars.measures.base import ROLES, FamilyMeasure
    from rank_polars.measures.beyond import Beyond, needed_tables

    given = {role: _table(path, role) for role, path in tables.items() if path is not None}
    out: list[Any] = []
    for name in metrics:
        try:
            spec = parse(name, given)
        except RankPolarsError:
            out.append(name)
            continue
        if not isinstance(spec, FamilyMeasure):
            out.append(name)
            continue
        missing = [role for role in needed_tables(spec) if role not in given] if isinstance(spec, Beyond) else []
        if "subtopics" in spec.SOURCES and "subtopics" not in given and not has_qrels:
            missing = ["subtopics"]
        if missing:
            options = " and ".join(f"--{role} FILE ({ROLES[role]})" for role in missing)
            also = " or --qrels FILE with a 'subtopic' column" if missing == ["subtopics"] else ""
            raise CLIError(f"{spec.name} needs {options}{also}")
        out.append(spec if any(v is not None for v in spec.sources.values()) else name)
    read = {role for spec in out if isinstance(spec, FamilyMeasure) for role, v in spec.sources.items() if v is not None}
    for role in given.keys() - read:  # a table no metric reads: a mistyped -m, or the wrong option
        warn(f"--{role} is read by no metric of this call ({', '.join(metrics)})")
    return out


def _table(path: str, role: str) -> Any:
    """A table given on the command line: a Parquet file (or folder) or an ndeval file as its
    path, anything else scanned by its extension (CSV, TSV)."""
    if role == "subtopics":
        from rank_polars.io.subtopics import looks_like_subtopic_qrels

        if looks_like_subtopic_qrels(path):
            return path
    if rio.detect_format(path, None) == "parquet":
        return path
    return rio.scan(path, None, what=role)


def hint_by(error: RankPolarsError, loaded: Loaded) -> RankPolarsError:
    """Add ``did you mean --by model?`` to a duplicates error on an ungrouped multi-version log."""
    text = one_line(str(error))
    if loaded.by or "duplicate" not in text:
        return error
    for col in VERSION_COLUMNS:
        if col in loaded.schema:
            said = f'did you mean by="{col}"?'  # the library's own hint, in the command line's words
            if said in text:
                return type(error)(text.replace(said, f"did you mean --by {col}?"))
            return type(error)(f"{text}; the run has a {col!r} column: did you mean --by {col}?")
    return error


__all__ = ["DEFAULT_COLUMNS", "Loaded", "check_column", "hint_by", "load", "with_tables"]
