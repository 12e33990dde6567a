"""``run(argv, stdout, stderr)``: trec_eval 10's ``main``, step by step, on rank_polars."""

from __future__ import annotations

from typing import TextIO

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.dropins.trec_eval import judgment_groups, prefs
from rank_polars.dropins.trec_eval.checks import first, wrong_format
from rank_polars.dropins.trec_eval.evaluation import Failure, first_failure, per_query, rank
from rank_polars.dropins.trec_eval.files import read_prefs, read_qrels, read_qrels_jg, read_results, read_zscores
from rank_polars.dropins.trec_eval.measures import REL_FORMATS, Column, Selection
from rank_polars.dropins.trec_eval.options import Options, TrecEvalExit, parse_args
from rank_polars.dropins.trec_eval.output import query_lines, summary_lines
from rank_polars.dropins.trec_eval.zscores import to_zscores

# -R format -> reader of the relevance file (path, format name)
_READERS = {
    "qrels": lambda path, _: read_qrels(path),
    "prefs": read_prefs,
    "jg": lambda path, _: read_qrels_jg(path),
}

HELP = """\
rank-polars trec-eval: trec_eval 10's command line, computed by rank_polars.

  rank-polars trec-eval [-h] [-q] [-c] [-n] [-l <num>] [-M <num>] [-J] [-m measure[.params]]...
                        [-R format] [-T trec_results] [-Z file] rel_info_file results_file

  -q         also print every query's values (before the 'all' lines)
  -m name    a measure (P, map, ndcg_cut, ...) or a set: official (the default), all_trec, set,
             all_prefs, prefs, qrels_jg;
             parameters after a dot: -m P.5,10  -m ndcg.1=3,2=9  -m utility.2,-1,0,0
  -c         average over every query of the rel_info file (a query without results scores 0)
  -n         no summary ('all') lines
  -l <num>   grade needed to be relevant (default 1)
  -M <num>   evaluate each query's first <num> documents only
  -J         drop documents that are not judged before ranking (use with care)
  -R format  the rel_info file's format: qrels (default), prefs, qrels_prefs, qrels_jg
  -Z file    print z-scores against the 'qid measure mean stddev' lines of file
  -v         version

The output and exit status are trec_eval 10's, byte for byte (tested against trec_eval 10.0
built from its source). Where they differ:
  - yaap is not available; -h prints this text, -v a version line of its own;
  - rbp.p outside (0, 1) is refused (status 2): it is not a persistence probability;
  - nan scores rank above every number; trec_eval's order for them depends on the input order;
  - where trec_eval crashes or reads past its data (a query judged only below 0 after the
    first, grades too large to allocate, a file ending in a skipped comment), this command
    prints the values it computes, or stops with status 7 on an empty run with -c;
  - a problem rank_polars finds in the data first stops with status 1.
"""


def _write(stream: TextIO, text: str) -> None:
    """Text decoded from the files as Latin-1 goes back out as the same bytes."""
    if not text:
        return
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(text.encode("latin-1", errors="replace"))
        buffer.flush()
    else:
        stream.write(text.encode("latin-1", errors="replace").decode("utf-8", errors="replace"))


def run(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """Run trec_eval with ``argv`` (its arguments, without the program name); the exit status.

    >>> import io
    >>> from rank_polars.dropins.trec_eval import run
    >>> out, err = io.StringIO(), io.StringIO()
    >>> run(["-m", "nope", "qrels", "run"], out, err), err.getvalue()
    (1, "trec_eval: illegal measure 'nope'\\n")
    """
    try:
        return _run(argv, stdout, stderr)
    except TrecEvalExit as e:
        _write(stderr, e.message)
        return e.status
    except RankPolarsError as e:
        _write(stderr, f"rank-polars trec-eval: {e}\n")
        return 1


def _run(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    selection = Selection()
    opts = parse_args(list(argv), mark_measure=selection.mark)
    if opts.help:
        _write(stdout, HELP)
        return 0
    kind = REL_FORMATS.get(opts.rel_format)
    if kind is None:
        raise TrecEvalExit(2, f"trec_eval: Illegal rel_format '{opts.rel_format}'\n")
    rel = _READERS[kind](opts.qrels, opts.rel_format)
    if opts.results_format != "trec_results":
        raise TrecEvalExit(2, f"trec_eval: Illegal retrieval results format '{opts.results_format}'\n")
    run_frame, runid = read_results(opts.results)
    zscores = read_zscores(opts.zscores) if opts.zscores is not None else None
    columns = selection.columns()
    if rel.height == 0 or (run_frame.height == 0 and opts.complete):
        raise TrecEvalExit(7, "trec_eval: No queries with both results and relevance info\n")

    table, failure = _evaluate(kind, rel, run_frame, columns, opts)
    failure = first(wrong_format(columns, opts.rel_format), failure)
    if failure is not None:
        # trec_eval has printed the queries before the one it stops at
        before = rel.select("query").unique().sort("query").head(failure.index)
        if opts.query and before.height:
            if table is None:
                table = _evaluate(kind, rel.join(before, on="query", how="semi"), run_frame, columns, opts,
                                  checked=True)[0]
            table = table.join(before, on="query", how="semi", maintain_order="left")
            if zscores is not None:
                table = to_zscores(table, columns, zscores)
            _write(stdout, query_lines(table, columns, zscores is not None))
        raise TrecEvalExit(failure.status, failure.message)
    if table is None:
        table = _evaluate(kind, rel, run_frame, columns, opts, checked=True)[0]
    if zscores is not None:
        table = to_zscores(table, columns, zscores)
    z = zscores is not None
    text = query_lines(table, columns, z) if opts.query else ""
    if opts.summary:
        text += summary_lines(table, columns, runid, rel, opts.complete, z)
    _write(stdout, text)
    return 0


def _evaluate(kind: str, rel: pl.DataFrame, run: pl.DataFrame, columns: list[Column], opts: Options,
              checked: bool = False) -> tuple[pl.DataFrame | None, Failure | None]:
    """The per-query table (``query`` in evaluation order, one column per printed label) and the
    first failure.  For qrels, the failure is found first; with one, the table is left to the
    caller (None): the measures are then computed only on the queries trec_eval evaluates.
    Without one and without ``-J``, the ranking the failures were looked for in is the one the
    measures read (ranked once: ~2 s of 13.5 at 2M run lines)."""
    if kind == "prefs":
        return prefs.evaluate(run, rel, columns, opts)
    if kind == "jg":
        return judgment_groups.evaluate(run, rel, columns, opts)
    if checked:
        return per_query(rank(run, rel, opts), rel, columns, opts), None
    ranked = rank(run, rel, opts, judged_only=False)
    failure = first_failure(rel, run, ranked, opts, columns)
    if failure is not None:
        return None, failure
    return per_query(ranked if not opts.judged_only else rank(run, rel, opts), rel, columns, opts), None
