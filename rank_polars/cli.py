"""The ``rank-polars`` command line.

::

    rank-polars demo                                   # the whole job on the bundled sample log
    rank-polars evaluate log/ -m ndcg@10 -m mrr --by model
    rank-polars compare log/ -m ndcg@10 --by model --baseline bot-v1 --report report.html
    rank-polars validate run.trec --qrels judgments.qrels
    rank-polars sql -m ndcg@10 --table logs --by model --dialect spark

Errors in the data or the arguments print one line, ``error: ...``, to stderr and exit
non-zero (``--debug`` shows the traceback too).
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import click
import polars as pl

from . import io as rio
from .errors import CoverageWarning, RankPolarsError

OUTPUT_FORMATS = ("table", "csv", "json", "parquet", "markdown", "latex")
DEFAULT_COLUMNS = {"query": "query", "item": "item", "position": "position", "score": "score", "relevance": "relevance"}


# ----------------------------------------------------------------------------------------
# errors: one line on stderr, no traceback unless --debug


class CLIError(click.ClickException):
    """A user error found by the command line itself (exit code 1)."""

    exit_code = 1


def _one_line(message: str) -> str:
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    return lines[0] if lines else "unknown error"


def _error_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [RankPolarsError, OSError, pl.exceptions.PolarsError]
    with contextlib.suppress(ImportError):
        import duckdb

        types.append(duckdb.Error)
    return tuple(types)


_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


class RankPolarsGroup(click.Group):
    """A click group whose errors are one line each on stderr."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any) -> Any:  # type: ignore[override]
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
        extra.pop("standalone_mode", None)
        code = 0
        with warnings.catch_warnings():
            warnings.simplefilter("always", CoverageWarning)
            warnings.showwarning = _show_warning
            try:
                rv = super().main(argv, prog_name=prog_name or "rank-polars", standalone_mode=False, **extra)
                code = rv if isinstance(rv, int) else 0
            except _NO_ARGS_IS_HELP as e:
                click.echo(e.ctx.get_help() if e.ctx else e.format_message())
                code = 0
            except click.ClickException as e:
                if debug:
                    traceback.print_exc()
                click.echo(f"error: {_one_line(e.format_message())}", err=True)
                code = e.exit_code
            except click.exceptions.Abort:
                click.echo("error: aborted", err=True)
                code = 1
            except _error_types() as e:
                if debug:
                    traceback.print_exc()
                message = e.strerror + (f": {e.filename!r}" if e.filename else "") if isinstance(e, OSError) and e.strerror else str(e)
                click.echo(f"error: {_one_line(message)}", err=True)
                code = 1
            except Exception as e:  # a bug: still one line, the traceback with --debug
                if debug:
                    traceback.print_exc()
                hint = "" if debug else " (rerun with --debug for the traceback)"
                click.echo(f"error: internal error: {type(e).__name__}: {_one_line(str(e))}{hint}", err=True)
                code = 1
        sys.exit(code)


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    click.echo(f"warning: {_one_line(str(message))}", err=True)


# ----------------------------------------------------------------------------------------
# progress: a spinner on stderr when it is a terminal, nothing otherwise


@contextlib.contextmanager
def progress(message: str) -> Iterator[None]:
    """Show ``message`` with a spinner and the elapsed time while the block runs (TTY only)."""
    stream = sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield
        return
    done = threading.Event()
    start = time.monotonic()

    def spin() -> None:
        for ch in itertools.cycle("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"):
            if done.wait(0.1):
                break
            stream.write(f"\r{ch} {message} ({time.monotonic() - start:.0f}s)")
            stream.flush()

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        stream.write("\r\033[K")
        stream.flush()


# ----------------------------------------------------------------------------------------
# inputs


@dataclass
class Loaded:
    """A run (and judgments) ready for evaluate/compare, with what was read."""

    run: Any
    qrels: Any
    run_lf: pl.LazyFrame
    qrels_lf: pl.LazyFrame | None
    columns: dict[str, str]
    by: list[str]
    n_files: int
    label: str = ""
    schema: pl.Schema = field(default_factory=pl.Schema)

    def what(self, verb: str) -> str:
        files = f" ({self.n_files} files)" if self.n_files > 1 else ""
        return f"{verb} {self.label}{files}"


def _did_you_mean(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_column(schema: pl.Schema, column: str, what: str, option: str) -> None:
    if column not in schema:
        raise CLIError(
            f"{what}: no column {column!r} ({option}){_did_you_mean(column, schema.names())} "
            f"columns are {', '.join(map(repr, schema.names()))}"
        )


def load(
    run: str,
    qrels: str | None,
    format_in: str | None,
    qrels_format: str | None,
    columns: dict[str, str],
    by: Sequence[str],
) -> Loaded:
    """Scan the run and judgments, check the named columns, line up id types."""
    run_lf = rio.scan(run, format_in, what="run")
    run_fmt = rio.detect_format(run, format_in)
    schema = run_lf.collect_schema()
    for role in ("query", "item"):
        _check_column(schema, columns[role], "run", f"--{role}")
    for role in ("position", "score"):
        if columns[role] != DEFAULT_COLUMNS[role]:
            _check_column(schema, columns[role], "run", f"--{role}")
    if columns["relevance"] != DEFAULT_COLUMNS["relevance"] and qrels is None:
        _check_column(schema, columns["relevance"], "run", "--relevance")
    for col in by:
        _check_column(schema, col, "run", "--by")
    if qrels is None and columns["relevance"] not in schema:
        raise CLIError(
            f"run: no column {columns['relevance']!r} with relevance labels; pass --qrels FILE "
            f"(or name the label column with --relevance){_did_you_mean(columns['relevance'], schema.names())}"
        )
    qrels_lf = None
    if qrels is not None:
        qrels_lf = rio.scan(qrels, qrels_format, what="qrels")
        qschema = qrels_lf.collect_schema()
        for role in ("query", "item", "relevance"):
            _check_column(qschema, columns[role], "qrels", f"--{role}")
    run_h, qrels_h = rio.harmonise_ids(run_lf, qrels_lf, (columns["query"], columns["item"]))
    # Parquet paths go to the engines as paths (DuckDB reads them itself); the rest as frames.
    run_src: Any = run if run_fmt == "parquet" and run_h is run_lf else run_h
    qrels_src: Any = qrels_h
    if qrels is not None and qrels_h is qrels_lf and rio.detect_format(qrels, qrels_format) == "parquet":
        qrels_src = qrels
    n_files = len(rio.files_of(run)) + (len(rio.files_of(qrels)) if qrels else 0)
    return Loaded(run_src, qrels_src, run_h, qrels_h, columns, list(by), n_files, Path(run).name or run, schema)


def _hint_by(error: RankPolarsError, loaded: Loaded) -> RankPolarsError:
    """Add ``did you mean --by model?`` to a duplicates error on an ungrouped multi-version log."""
    text = str(error)
    if loaded.by or "duplicate" not in text:
        return error
    for col in ("model", "version", "system", "variant", "tag"):
        if col in loaded.schema:
            return type(error)(f"{_one_line(text)}; the run has a {col!r} column: did you mean --by {col}?")
    return error


def input_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """RUN, --qrels, formats and column names, shared by evaluate, compare and validate."""
    options = [
        click.argument("run", metavar="RUN"),
        click.option("--qrels", "qrels", metavar="QRELS", help="Judgments file (query, item, relevance); when given they alone decide relevance."),
        click.option("--format-in", type=click.Choice(rio.FORMATS), help="Format of RUN (default: from its extension; folders are Parquet)."),
        click.option("--qrels-format", type=click.Choice(rio.FORMATS), help="Format of QRELS (default: from its extension)."),
        click.option("--query", default="query", show_default=True, help="Query id column."),
        click.option("--item", default="item", show_default=True, help="Item id column."),
        click.option("--position", default="position", show_default=True, help="Position column (1 = first); used when present."),
        click.option("--score", default="score", show_default=True, help="Score column (higher first); used when there is no position column."),
        click.option("--relevance", default="relevance", show_default=True, help="Relevance label column (in the run, or in QRELS)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True, help="Output format."),
        click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout (needed for parquet)."),
        click.option("--force", is_flag=True, help="Overwrite an existing output file."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _columns(query: str, item: str, position: str, score: str, relevance: str) -> dict[str, str]:
    return {"query": query, "item": item, "position": position, "score": score, "relevance": relevance}


def check_output(output: str | None, fmt: str, force: bool) -> None:
    """Fail before doing any work when the output cannot be written."""
    if fmt == "parquet" and not output:
        raise CLIError("--format parquet writes a binary file: give it with -o FILE")
    if output and Path(output).exists() and not force:
        raise CLIError(f"output file {output!r} exists; pass --force to overwrite it")
    if output and not Path(output).resolve().parent.is_dir():
        raise CLIError(f"cannot write {output!r}: folder {str(Path(output).parent)!r} does not exist")


def check_report(report: str | None, force: bool) -> None:
    if report and Path(report).exists() and not force:
        raise CLIError(f"report file {report!r} exists; pass --force to overwrite it")


# ----------------------------------------------------------------------------------------
# outputs


def _is_float(dtype: pl.DataType) -> bool:
    return dtype in (pl.Float32, pl.Float64)


def _cell(value: Any, decimals: int = 4) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def _latex_escape(text: str) -> str:
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(table.get(ch, ch) for ch in text)


def to_latex(df: pl.DataFrame) -> str:
    align = "".join("r" if (dt.is_numeric()) else "l" for dt in df.dtypes)
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule"]
    lines.append(" & ".join(_latex_escape(c) for c in df.columns) + r" \\")
    lines.append("\\midrule")
    for row in df.iter_rows():
        lines.append(" & ".join(_latex_escape(_cell(v)) for v in row) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _polars_text(df: pl.DataFrame, formatting: str) -> str:
    with pl.Config(
        tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
        float_precision=4, tbl_width_chars=10_000, fmt_str_lengths=200, tbl_formatting=formatting,
        tbl_hide_dtype_separator=True,
    ):
        return str(df) + "\n"


def to_table(df: pl.DataFrame) -> str:
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    return _polars_text(df, "UTF8_FULL_CONDENSED" if encoding == "utf8" else "ASCII_FULL_CONDENSED")


def to_markdown(df: pl.DataFrame) -> str:
    return _polars_text(df, "MARKDOWN")


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def to_json(df: pl.DataFrame) -> str:
    rows = [{k: _json_safe(v) for k, v in row.items()} for row in df.iter_rows(named=True)]
    return json.dumps(rows, indent=2, allow_nan=False) + "\n"


def emit(df: pl.DataFrame, fmt: str, output: str | None, *, display: pl.DataFrame | None = None, footer: str = "") -> None:
    """Write ``df`` as ``fmt``; text formats meant for people show ``display`` when given."""
    shown = display if display is not None and fmt in ("table", "markdown", "latex") else df
    if fmt == "parquet":
        assert output
        df.write_parquet(output)
        click.echo(f"wrote {df.height} rows to {output}", err=True)
        return
    text = {
        "table": to_table, "markdown": to_markdown, "latex": to_latex, "csv": lambda d: d.write_csv(),
        "json": to_json,
    }[fmt](shown)
    if footer and fmt == "table":
        text += footer
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {df.height} rows to {output}", err=True)
    else:
        click.echo(text, nl=False)


# ----------------------------------------------------------------------------------------
# the group


@click.group(name="rank-polars", cls=RankPolarsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.version_option(package_name="rank-polars", prog_name="rank-polars", message="%(prog)s %(version)s")
def main(debug: bool) -> None:
    """Ranking metrics (nDCG, MAP, MRR, ...) over ranking logs, with trec_eval's numbers.

    A log has one row per shown item: query, item, position (or score), relevance (or
    separate judgments via --qrels), and any grouping column such as model.  Inputs are
    Parquet (file, glob or hive-partitioned folder), CSV, TSV, TREC runs and TREC qrels.

    Start with `rank-polars demo`.
    """


# ----------------------------------------------------------------------------------------
# evaluate


@main.command()
@input_options
@click.option("-m", "--metric", "metrics", multiple=True, required=True, help="Metric, e.g. ndcg@10, map, mrr, p@5, 'ap(denom=min)@5'; repeat -m for more.")
@click.option("--by", multiple=True, help="Grouping column, e.g. model; repeat for more.")
@click.option("--engine", type=click.Choice(["polars", "duckdb"]), default="polars", show_default=True)
@click.option("--per-query", is_flag=True, help="One row per (group, query) instead of means.")
@click.option("--missing", type=click.Choice(["zero", "skip"]), default="zero", show_default=True, help="A judged query absent from a group's run scores 0 (zero) or is left out (skip).")
@click.option("--duplicates", type=click.Choice(["error", "first"]), default="error", show_default=True, help="A repeated (query, item) in a ranking is an error, or keep its first occurrence.")
@click.option("--labels", type=click.Choice(["qrels", "run"]), default="qrels", show_default=True, help="With --qrels: grades of the shown rows from the qrels (joined), or from the run's relevance column (checked against the qrels; no join of the whole log).")
@click.option("--checks", type=click.Choice(["full", "strict", "fast"]), default="full", show_default=True, help="full: check item ids and repeated rows where they can change a value; strict: on every row (as trec_eval); fast: no duplicate counts.")
@output_options
def evaluate(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None, query: str, item: str,
             position: str, score: str, relevance: str, metrics: tuple[str, ...], by: tuple[str, ...], engine: str,
             per_query: bool, missing: str, duplicates: str, labels: str, checks: str, fmt: str,
             output: str | None, force: bool) -> None:
    """Evaluate metrics over RUN, per --by group.

    \b
    Examples:
      rank-polars evaluate log/ -m ndcg@10 -m mrr --by model
      rank-polars evaluate run.trec --qrels judgments.qrels -m map -m P_10
    """
    from .evaluate import evaluate as rp_evaluate

    check_output(output, fmt, force)
    loaded = load(run, qrels, format_in, qrels_format, _columns(query, item, position, score, relevance), by)
    with progress(loaded.what("evaluating")):
        try:
            table = rp_evaluate(
                loaded.run, list(metrics), qrels=loaded.qrels, by=list(by) or None, per_query=per_query,
                missing=missing, engine=engine, duplicates=duplicates, labels=labels, checks=checks, **loaded.columns,
            )
        except RankPolarsError as e:
            raise _hint_by(e, loaded) from e
    emit(table, fmt, output)


# ----------------------------------------------------------------------------------------
# compare


def comparison_display(table: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """The comparison as people read it: signed differences, a CI column, W/T/L."""

    def signed(x: Any, pct: bool = False) -> str:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return ""
        return f"{x * 100:+.1f}%" if pct else f"{x:+.4f}"

    def p(x: Any) -> str:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return ""
        return "<0.0001" if x < 1e-4 else f"{x:.4f}"

    rows = []
    for r in table.iter_rows(named=True):
        rows.append({
            "metric": r["metric"], "version": str(r["version"]), "baseline": str(r["baseline"]),
            "queries": r["n_queries"], "mean": _cell(r["mean_version"]), "baseline mean": _cell(r["mean_baseline"]),
            "diff": signed(r["diff"]), f"{confidence:.0%} CI": f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]",
            "p adj." if r.get("p_adjusted") is not None and r["p_adjusted"] != r["p_value"] else "p": p(
                r["p_adjusted"] if r.get("p_adjusted") is not None else r["p_value"]),
            "sig.": "yes" if r["significant"] else "no",
            "W/T/L": f"{r['wins']}/{r['ties']}/{r['losses']}",
        })
    if rows and len({tuple(row) for row in rows}) > 1:  # some rows adjusted, some not: one header
        rows = [{("p adj." if k == "p" else k): v for k, v in row.items()} for row in rows]
    return pl.DataFrame(rows)


def verdict(row: dict[str, Any]) -> str:
    """``bot-v2 beats bot-v1 on ndcg@10 by +0.0312 (p=0.0004, significant)``."""
    diff = row["diff"] or 0.0
    p = row["p_adjusted"] if row.get("p_adjusted") is not None else row["p_value"]
    p_text = "p=n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else ("p<0.0001" if p < 1e-4 else f"p={p:.4f}")
    sig = "significant" if row["significant"] else "not significant"
    if diff > 0:
        verb = "beats"
    elif diff < 0:
        verb = "is behind"
    else:
        return f"{row['version']} ties with {row['baseline']} on {row['metric']} ({p_text}, {sig})"
    return f"{row['version']} {verb} {row['baseline']} on {row['metric']} by {diff:+.4f} ({p_text}, {sig})"


def run_compare(run: Any, metrics: Sequence[str], *, qrels: Any, by: str, baseline: str | None, test: str,
                correction: str | None, alpha: float, n_resamples: int, seed: int, missing: str, engine: str,
                confidence: float, columns: dict[str, str] | None = None) -> pl.DataFrame:
    from .compare import compare

    kwargs: dict[str, Any] = {}
    if columns and columns != DEFAULT_COLUMNS:
        kwargs = dict(columns)
    return compare(
        run, list(metrics), qrels=qrels, by=by, baseline=baseline, test=test, correction=correction, alpha=alpha,
        n_resamples=n_resamples, seed=seed, missing=missing, engine=engine, confidence=confidence, **kwargs,
    )


@main.command()
@input_options
@click.option("-m", "--metric", "metrics", multiple=True, required=True, help="Metric to compare on; repeat -m for more.")
@click.option("--by", default="model", show_default=True, help="The column whose values are the versions compared.")
@click.option("--baseline", help="The version the others are compared with (default: every pair of versions, the first in sorted order as baseline).")
@click.option("--test", type=click.Choice(["paired_t", "wilcoxon", "randomization", "bootstrap"]), default="paired_t", show_default=True, help="Significance test over paired per-query values.")
@click.option("--correction", type=click.Choice(["none", "bonferroni", "holm", "bh"]), default="holm", show_default=True, help="Multiple-comparison correction over all (metric, version) pairs.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True, help="Confidence level of the interval on the difference.")
@click.option("--n-resamples", type=click.IntRange(min=1), default=10_000, show_default=True, help="Resamples for randomization and bootstrap tests.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--engine", type=click.Choice(["polars", "duckdb"]), default="polars", show_default=True)
@click.option("--missing", type=click.Choice(["zero", "skip"]), default="zero", show_default=True)
@click.option("--report", type=click.Path(dir_okay=False), help="Also write a self-contained HTML report (table and plots) to this file.")
@output_options
def compare(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None, query: str, item: str,
            position: str, score: str, relevance: str, metrics: tuple[str, ...], by: str, baseline: str | None,
            test: str, correction: str, alpha: float, confidence: float, n_resamples: int, seed: int, engine: str,
            missing: str, report: str | None, fmt: str, output: str | None, force: bool) -> None:
    """Compare versions of a system (values of --by) against a baseline, query by query.

    \b
    Example:
      rank-polars compare log/ -m ndcg@10 -m mrr --by model --baseline bot-v1 --report report.html
    """
    check_output(output, fmt, force)
    check_report(report, force)
    loaded = load(run, qrels, format_in, qrels_format, _columns(query, item, position, score, relevance), [by])
    corr = None if correction == "none" else correction
    with progress(loaded.what("comparing")):
        table = run_compare(
            loaded.run, metrics, qrels=loaded.qrels, by=by, baseline=baseline, test=test, correction=corr,
            alpha=alpha, n_resamples=n_resamples, seed=seed, missing=missing, engine=engine,
            confidence=confidence, columns=loaded.columns,
        )
    footer = "".join(verdict(r) + "\n" for r in table.iter_rows(named=True))
    emit(table, fmt, output, display=comparison_display(table, confidence), footer=footer)
    if report:
        from .report import write_report

        with progress("writing the report"):
            write_report(
                report, loaded.run, list(metrics), comparison=table, qrels=loaded.qrels, by=by, missing=missing,
                engine=engine, columns=loaded.columns, title=f"{Path(run).name}: {', '.join(metrics)}",
            )
        click.echo(f"wrote the report to {report}", err=True)


# ----------------------------------------------------------------------------------------
# sql


def _to_sql() -> Callable[..., str]:
    import rank_polars

    if hasattr(rank_polars, "to_sql"):
        return rank_polars.to_sql  # type: ignore[no-any-return]
    from .sqlgen import to_sql

    return to_sql


@main.command()
@click.option("-m", "--metric", "metrics", multiple=True, required=True, help="Metric; repeat -m for more.")
@click.option("--table", required=True, help="The table (or view) holding the log.")
@click.option("--by", multiple=True, help="Grouping column; repeat for more.")
@click.option("--qrels", "qrels", metavar="TABLE", help="Table of judgments (query, item, relevance).")
@click.option("--dialect", default="duckdb", show_default=True, help="SQL dialect: duckdb, spark, postgres, bigquery, snowflake, ...")
@click.option("--per-query", is_flag=True, help="One row per (group, query) instead of means.")
@click.option("--missing", type=click.Choice(["zero", "skip"]), default="zero", show_default=True)
@click.option("--order", type=click.Choice(["position", "score"]), default="position", show_default=True, help="Order items by the position column, or by score.")
@click.option("--query", default="query", show_default=True, help="Query id column.")
@click.option("--item", default="item", show_default=True, help="Item id column.")
@click.option("--position", default="position", show_default=True, help="Position column (1 = first).")
@click.option("--score", default="score", show_default=True, help="Score column (higher first).")
@click.option("--relevance", default="relevance", show_default=True, help="Relevance label column.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the SQL to FILE instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def sql(metrics: tuple[str, ...], table: str, by: tuple[str, ...], qrels: str | None, dialect: str, per_query: bool,
        missing: str, order: str, query: str, item: str, position: str, score: str, relevance: str,
        output: str | None, force: bool) -> None:
    """Print the SQL that computes the metrics over --table (nothing is run).

    \b
    Example:
      rank-polars sql -m ndcg@10 -m mrr --table logs --by model --dialect spark
    """
    check_output(output, "sql", force)
    to_sql = _to_sql()
    text = to_sql(
        list(metrics), table=table, by=list(by) or None, qrels=qrels, per_query=per_query, missing=missing,
        dialect=dialect, order=order, **_columns(query, item, position, score, relevance),
    )
    text = text.rstrip("\n") + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote the SQL to {output}", err=True)
    else:
        click.echo(text, nl=False)


# ----------------------------------------------------------------------------------------
# validate


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


@main.command()
@input_options
@click.option("--by", multiple=True, help="Grouping column(s) that, with the query, identify one ranking (e.g. model).")
@click.option("-k", "--depth", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Depth for the unjudged share.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def validate(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None, query: str, item: str,
             position: str, score: str, relevance: str, by: tuple[str, ...], k: int, fmt: str) -> int:
    """Report what is wrong or suspicious in RUN (and QRELS).

    Errors (exit code 1): duplicates, null/NaN values, bad positions, missing columns.
    Warnings (exit code 0): tied scores, queries missing on either side, unjudged items.
    """
    columns = _columns(query, item, position, score, relevance)
    run_lf = rio.scan(run, format_in, what="run")
    qrels_lf = rio.scan(qrels, qrels_format, what="qrels") if qrels else None
    schema = run_lf.collect_schema()
    hint = ""
    if not by:
        for col in ("model", "version", "system"):
            if col in schema:
                hint = f"note: the run has a {col!r} column; pass --by {col} if each of its values is a separate ranking"
                break
    n_files = len(rio.files_of(run))
    with progress(f"validating {Path(run).name}" + (f" ({n_files} files)" if n_files > 1 else "")):
        findings, facts = validate_data(run_lf, qrels_lf, columns, by, k)
    errors = sum(f.level == "error" for f in findings)
    warns = sum(f.level == "warning" for f in findings)
    if fmt == "json":
        click.echo(json.dumps({"run": run, "qrels": qrels, "facts": facts, "errors": errors, "warnings": warns,
                               "findings": [f.__dict__ for f in findings]}, indent=2, default=str))
    else:
        head = f"{run}"
        if facts:
            head += (f": {facts['rows']:,} rows, {facts['rankings']:,} rankings, {facts['queries']:,} queries"
                     + (f", {facts['groups']} groups by {', '.join(by)}" if by else ""))
        if "judgments" in facts:
            head += f"; qrels: {facts['judgments']:,} judgments for {facts['judged_queries']:,} queries"
        click.echo(head)
        if hint and errors:
            click.echo(hint)
        for f in findings:
            click.echo(f"{f.level:<8}{f.check:<11}{f.message}")
        summary = f"{errors} error{'s' * (errors != 1)}, {warns} warning{'s' * (warns != 1)}"
        click.echo(("clean: " if not errors and not warns else "") + summary)
    return 1 if errors else 0


# ----------------------------------------------------------------------------------------
# demo


def write_partitioned(log: pl.DataFrame, folder: Path, by: str = "model") -> list[Path]:
    """Write ``log`` as hive-partitioned Parquet (``folder/model=bot-v1/0.parquet``)."""
    paths = []
    for (value,), part in log.partition_by(by, as_dict=True, maintain_order=True).items():
        sub = folder / f"{by}={value}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / "0.parquet"
        part.drop(by).write_parquet(path)
        paths.append(path)
    return paths


@main.command()
@click.option("--out", type=click.Path(file_okay=False), help="Folder to write the sample log to (default: a temporary folder).")
@click.option("--force", is_flag=True, help="Write into --out even if it is not empty.")
@click.option("--report", type=click.Path(dir_okay=False), help="Also write the HTML report of the comparison to this file.")
def demo(out: str | None, force: bool, report: str | None) -> None:
    """Run the whole job on the bundled sample log of two chatbot versions.

    Writes the log as a hive-partitioned Parquet folder, evaluates it with both engines
    (Polars and DuckDB, which agree), compares bot-v2 with bot-v1 and prints a verdict.
    """
    from .datasets import sample_log
    from .evaluate import evaluate as rp_evaluate

    check_report(report, force)
    if out:
        folder = Path(out)
        if folder.exists() and any(folder.iterdir()) and not force:
            raise CLIError(f"folder {out!r} is not empty; pass --force to write into it")
    else:
        folder = Path(tempfile.mkdtemp(prefix="rank-polars-demo-"))
    log_dir = folder / "log"
    if log_dir.exists():
        shutil.rmtree(log_dir)
    log = sample_log()
    versions = sorted(log["model"].unique().to_list())
    write_partitioned(log, log_dir)
    per_version = log.group_by("model").agg(pl.col("query").n_unique()).sort("model")
    click.echo(
        f"1. wrote the sample log to {log_dir}/ ({log.height:,} rows: {len(versions)} versions "
        f"x {per_version['query'][0]} questions, hive-partitioned by model)"
    )
    metrics = ["ndcg@10", "mrr", "map", "p@5"]
    click.echo(f"\n2. rank-polars evaluate {log_dir} --by model " + " ".join(f"-m {m}" for m in metrics))
    with progress("evaluating with polars"):
        by_polars = rp_evaluate(str(log_dir), metrics, by="model", engine="polars")
    with progress("evaluating with duckdb"):
        by_duckdb = rp_evaluate(str(log_dir), metrics, by="model", engine="duckdb")
    click.echo(to_table(by_polars), nl=False)
    gap = max(
        abs(a - b) for m in metrics for a, b in zip(by_polars.sort("model")[m].to_list(), by_duckdb.sort("model")[m].to_list())
    )
    agree = "agree" if gap < 1e-9 else "DISAGREE"
    click.echo(f"   engine=polars and engine=duckdb {agree} (largest difference {gap:.1e})")

    baseline, challenger = versions[0], versions[-1]
    compare_metrics = ["ndcg@10", "mrr", "map"]
    click.echo(f"\n3. rank-polars compare {log_dir} --by model --baseline {baseline} " + " ".join(f"-m {m}" for m in compare_metrics))
    with progress("comparing"):
        table = run_compare(
            str(log_dir), compare_metrics, qrels=None, by="model", baseline=baseline, test="paired_t", correction="holm",
            alpha=0.05, n_resamples=10_000, seed=0, missing="zero", engine="polars", confidence=0.95,
        )
    click.echo(to_table(comparison_display(table)), nl=False)
    rows = {(r["metric"], str(r["version"])): r for r in table.iter_rows(named=True)}
    main_row = rows.get(("ndcg@10", challenger)) or next(iter(rows.values()))
    click.echo(f"\nverdict: {verdict(main_row)}")
    if report:
        from .report import write_report

        with progress("writing the report"):
            write_report(report, str(log_dir), compare_metrics, comparison=table, by="model", title="rank-polars demo: bot-v1 vs bot-v2")
        click.echo(f"wrote the report to {report}")
    click.echo(f"\nnext: rank-polars validate {log_dir} --by model; rank-polars compare {log_dir} -m ndcg@10 --report report.html")


if __name__ == "__main__":  # pragma: no cover
    main()
