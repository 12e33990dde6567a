"""The ``rank-polars`` command line: every subcommand, input format, output format and bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner, Result
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.cli import main
from rank_polars.datasets import chatbot_log

METRICS = ["ndcg@10", "mrr", "map"]
M_ARGS = [a for m in METRICS for a in ("-m", m)]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def ok(*args: str) -> Result:
    result = invoke(*args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def one_line_error(result: Result) -> str:
    """The failure is one ``error: ...`` line on stderr, no traceback, and nothing on stdout."""
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return chatbot_log(n_questions=30, grades="0-3").select("model", "query", "item", "position", "score", "relevance")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, log: pl.DataFrame) -> dict[str, Path]:
    """The same log in every input format."""
    d = tmp_path_factory.mktemp("inputs")
    out = {"parquet": d / "log.parquet", "csv": d / "log.csv", "tsv": d / "log.tsv", "folder": d / "hive"}
    log.write_parquet(out["parquet"])
    log.write_csv(out["csv"])
    log.write_csv(out["tsv"], separator="\t")
    (d / "parts").mkdir()
    for (model,), part in log.partition_by("model", as_dict=True).items():
        part.write_parquet(d / "parts" / f"{model}.parquet")
        (out["folder"] / f"model={model}").mkdir(parents=True)
        part.drop("model").write_parquet(out["folder"] / f"model={model}" / "0.parquet")
    out["glob"] = d / "parts" / "*.parquet"
    # TREC: bot-v1's ranking as a run (rank column deliberately wrong: ignored), its judgments as qrels
    v1 = log.filter(pl.col("model") == "bot-v1")
    lines = [f"{r['query']} Q0 {r['item']} 999 {r['score']} bot-v1" for r in v1.iter_rows(named=True)]
    out["trec"] = d / "bot-v1.run"
    out["trec"].write_text("\n".join(lines) + "\n")
    judged = log.select("query", "item", "relevance").unique().sort("query", "item")
    out["qrels"] = d / "judgments.qrels"
    out["qrels"].write_text("".join(f"{q}\t0\t{i}\t{r}\n" for q, i, r in judged.iter_rows()))
    return out


def expected(log: pl.DataFrame, **kwargs: object) -> pl.DataFrame:
    return rp.evaluate(log, METRICS, by="model", **kwargs)


# ----------------------------------------------------------------------------------------
# inputs


@pytest.mark.parametrize("kind", ["parquet", "glob", "folder", "csv", "tsv"])
def test_evaluate_every_log_format(kind: str, files: dict[str, Path], log: pl.DataFrame) -> None:
    result = ok("evaluate", files[kind], *M_ARGS, "--by", "model", "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    assert_frame_equal(got, expected(log), check_dtypes=False)


def test_evaluate_trec_run_and_qrels(files: dict[str, Path], log: pl.DataFrame) -> None:
    result = ok("evaluate", files["trec"], "--qrels", files["qrels"], *M_ARGS, "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    v1 = log.filter(pl.col("model") == "bot-v1").select("query", "item", "score")  # ordered by score, as trec_eval
    qrels = log.select("query", "item", "relevance").unique()
    assert_frame_equal(got, rp.evaluate(v1, METRICS, qrels=qrels), check_dtypes=False)


def test_format_override_and_columns(tmp_path: Path, log: pl.DataFrame) -> None:
    """--format-in for an unknown extension; --query/--item/--position/--relevance for other names."""
    path = tmp_path / "log.data"
    log.rename({"query": "qid", "item": "doc", "position": "rank", "relevance": "rel"}).write_csv(path, separator="\t")
    result = ok("evaluate", path, "--format-in", "tsv", "--query", "qid", "--item", "doc", "--position", "rank",
                "--relevance", "rel", *M_ARGS, "--by", "model", "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    assert_frame_equal(got, expected(log), check_dtypes=False)


def test_qrels_ids_of_other_types_are_matched(tmp_path: Path, log: pl.DataFrame) -> None:
    """Integer ids in a CSV run against string ids of TREC qrels are compared as strings."""
    nums = log.with_columns(pl.col("query").str.slice(1).cast(pl.Int64))
    nums.drop("relevance").write_csv(tmp_path / "run.csv")
    judged = nums.select("query", "item", "relevance").unique()
    (tmp_path / "j.qrels").write_text("".join(f"{q} 0 {i} {r}\n" for q, i, r in judged.iter_rows()))
    result = ok("evaluate", tmp_path / "run.csv", "--qrels", tmp_path / "j.qrels", *M_ARGS, "--by", "model", "--format", "csv")
    want = rp.evaluate(log.drop("relevance"), METRICS, by="model", qrels=log.select("query", "item", "relevance").unique())
    assert_frame_equal(pl.read_csv(io.StringIO(result.stdout)), want, check_dtypes=False)


def test_engines_and_per_query_agree(files: dict[str, Path], log: pl.DataFrame) -> None:
    polars_out = ok("evaluate", files["folder"], *M_ARGS, "--by", "model", "--per-query", "--format", "csv").stdout
    duckdb_out = ok("evaluate", files["folder"], *M_ARGS, "--by", "model", "--per-query", "--engine", "duckdb", "--format", "csv").stdout
    a, b = pl.read_csv(io.StringIO(polars_out)), pl.read_csv(io.StringIO(duckdb_out))
    assert a.height == 2 * 30
    assert_frame_equal(a, b, check_dtypes=False)
    assert_frame_equal(a, expected(log, per_query=True), check_dtypes=False)


# ----------------------------------------------------------------------------------------
# outputs


def test_output_table(files: dict[str, Path], log: pl.DataFrame) -> None:
    out = ok("evaluate", files["parquet"], *M_ARGS, "--by", "model").stdout
    row = expected(log).row(0, named=True)
    assert "ndcg@10" in out and "bot-v1" in out and f"{row['ndcg@10']:.4f}" in out
    assert "shape:" not in out


def test_output_json_markdown_latex(files: dict[str, Path], log: pl.DataFrame) -> None:
    want = expected(log)
    got = json.loads(ok("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "json").stdout)
    assert [r["model"] for r in got] == ["bot-v1", "bot-v2"]
    assert got[0]["ndcg@10"] == pytest.approx(want["ndcg@10"][0])
    md = ok("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "markdown").stdout
    assert md.splitlines()[0].startswith("| model") and md.splitlines()[1].startswith("|--")
    tex = ok("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "latex").stdout
    assert tex.startswith("\\begin{tabular}{lrrrr}") and "\\toprule" in tex and tex.rstrip().endswith("\\end{tabular}")
    assert f"bot-v1 & 30 & {want['ndcg@10'][0]:.4f}" in tex


def test_output_files_and_force(tmp_path: Path, files: dict[str, Path], log: pl.DataFrame) -> None:
    target = tmp_path / "means.parquet"
    result = ok("evaluate", files["csv"], *M_ARGS, "--by", "model", "--format", "parquet", "-o", target)
    assert result.stdout == ""
    assert_frame_equal(pl.read_parquet(target), expected(log), check_dtypes=False)
    line = one_line_error(invoke("evaluate", files["csv"], *M_ARGS, "--by", "model", "--format", "parquet", "-o", target))
    assert "exists" in line and "--force" in line
    ok("evaluate", files["csv"], *M_ARGS, "--by", "model", "--format", "csv", "-o", target, "--force")
    assert target.read_text().startswith("model,queries,ndcg@10")


# ----------------------------------------------------------------------------------------
# compare, sql, validate, demo


def test_compare(files: dict[str, Path]) -> None:
    out = ok("compare", files["folder"], *M_ARGS, "--by", "model", "--baseline", "bot-v1", "--correction", "holm").stdout
    assert "bot-v2" in out and "W/T/L" in out
    assert "bot-v2 is better than bot-v1 on ndcg@10 by +" in out and "significant after holm" in out
    table = pl.read_csv(io.StringIO(ok("compare", files["folder"], "-m", "ndcg@10", "--test", "bootstrap",
                                       "--n-resamples", "200", "--format", "csv").stdout))
    assert table["metric"].to_list() == ["ndcg@10"] and table["version"].to_list() == ["bot-v2"]
    assert {"p_value", "ci_low", "ci_high", "wins", "ties", "losses"} <= set(table.columns)


def test_sql() -> None:
    out = ok("sql", "-m", "ndcg@10", "-m", "mrr", "--table", "logs", "--by", "model", "--dialect", "spark").stdout
    assert "SELECT" in out and "logs" in out and "`ndcg@10`" in out
    per_query = ok("sql", "-m", "map", "--table", "logs", "--qrels", "judgments", "--per-query").stdout
    assert "judgments" in per_query
    one_line_error(invoke("sql", "-m", "ndcg@10", "--table", "logs", "--dialect", "no-such-dialect"))


def test_sql_runs_in_duckdb(log: pl.DataFrame) -> None:
    import duckdb

    text = ok("sql", *M_ARGS, "--table", "logs", "--by", "model").stdout
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    got = pl.from_arrow(con.sql(text).arrow())
    assert_frame_equal(got, expected(log), check_dtypes=False)


def test_validate_clean(files: dict[str, Path]) -> None:
    result = ok("validate", files["parquet"], "--by", "model")
    assert "0 errors" in result.stdout and "labels (run): 0:" in result.stdout


def test_validate_finds_errors(tmp_path: Path, log: pl.DataFrame) -> None:
    bad = pl.concat([log, log.head(2)]).with_columns(
        pl.when(pl.col("position") == 3).then(None).otherwise(pl.col("relevance")).alias("relevance")
    )
    bad.write_parquet(tmp_path / "bad.parquet")
    result = invoke("validate", tmp_path / "bad.parquet", "--by", "model")
    assert result.exit_code == 1
    out = result.stdout
    assert "duplicate (query, item) within a ranking" in out
    assert "duplicate positions" in out and "null or NaN relevance" in out
    assert "3 errors" in out
    as_json = json.loads(invoke("validate", tmp_path / "bad.parquet", "--by", "model", "--format", "json").stdout)
    assert as_json["errors"] == 3 and {f["check"] for f in as_json["findings"]} >= {"duplicates", "nulls"}


def test_validate_warnings_alone_exit_0(tmp_path: Path, log: pl.DataFrame, files: dict[str, Path]) -> None:
    """Tied scores and queries missing in one version are warnings: exit code 0."""
    run = log.drop("position").with_columns(pl.col("score").round(1))
    run = run.filter(~((pl.col("model") == "bot-v2") & (pl.col("query") == "q0003")))
    run.write_csv(tmp_path / "run.csv")
    out = ok("validate", tmp_path / "run.csv", "--by", "model").stdout
    assert "tied scores" in out and "bot-v2 lacks 1" in out and "'q0003'" in out
    assert "0 errors" in out
    trec = ok("validate", files["trec"], "--qrels", files["qrels"]).stdout
    assert "unjudged share of the top 10" in trec and "labels (qrels)" in trec


def test_validate_missing_column_is_an_error(tmp_path: Path, log: pl.DataFrame) -> None:
    log.drop("relevance").write_parquet(tmp_path / "nolabels.parquet")
    result = invoke("validate", tmp_path / "nolabels.parquet", "--by", "model")
    assert result.exit_code == 1 and "no relevance column" in result.stdout


def test_demo(tmp_path: Path) -> None:
    out = ok("demo", "--out", tmp_path / "demo").stdout
    assert (tmp_path / "demo" / "log" / "model=bot-v1").is_dir()
    assert "engine=polars and engine=duckdb agree" in out
    assert "verdict: bot-v2 is better than bot-v1 on ndcg@10 by +" in out
    line = one_line_error(invoke("demo", "--out", tmp_path / "demo"))
    assert "not empty" in line


# ----------------------------------------------------------------------------------------
# errors, help, the real entry point


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["evaluate", "{d}/nope.parquet", "-m", "ndcg@10"], "no such file"),
        (["evaluate", "{d}/nope/*.parquet", "-m", "ndcg@10"], "no file matches"),
        (["evaluate", "{parquet}", "-m", "ndcgg@10", "--by", "model"], "did you mean 'ndcg'"),
        (["evaluate", "{parquet}", "-m", "ndcg@ten", "--by", "model"], "cutoff"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "modle"], "did you mean 'model'"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--query", "qid"], "no column 'qid'"),
        (["evaluate", "{parquet}", "-m", "ndcg@10"], "did you mean --by model"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--format", "xml"], "'xml' is not one of"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "model", "--format", "parquet"], "-o FILE"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "model", "--missing", "maybe"], "--missing"),
        (["evaluate", "{parquet}"], "Missing option '-m'"),
        (["evaluate", "{d}/log.unknown", "-m", "ndcg@10"], "cannot tell the format"),
        (["evaluate", "{trec}", "-m", "ndcg@10"], "--qrels"),
        (["evaluate", "{d}/broken.run", "--qrels", "{qrels}", "-m", "map"], "line 2"),
        (["compare", "{parquet}", "-m", "ndcg@10", "--test", "magic"], "'magic' is not one of"),
        (["nonsense"], "No such command"),
    ],
)
def test_bad_inputs_are_one_line(args: list[str], needle: str, files: dict[str, Path]) -> None:
    d = files["parquet"].parent
    (d / "log.unknown").write_text("x")
    (d / "broken.run").write_text("q1 Q0 d1 1 2.0 t\nthis line is broken\n")
    fmt = {"d": d, **{k: v for k, v in files.items()}}
    line = one_line_error(invoke(*[a.format(**fmt) for a in args]))
    assert needle in line


def test_duplicates_in_data(tmp_path: Path, log: pl.DataFrame) -> None:
    first = log.head(1)
    pl.concat([log, first]).write_parquet(tmp_path / "dup.parquet")
    line = one_line_error(invoke("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model", "--checks", "strict"))
    assert "duplicate" in line and "'q0001'" in line
    ok("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model", "--duplicates", "first")
    # by default a repeated row is refused where it can change a value: a relevant one
    relevant = log.filter(pl.col("relevance") > 0).head(1)
    pl.concat([log, relevant]).write_parquet(tmp_path / "dup.parquet")
    line = one_line_error(invoke("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model"))
    assert "duplicate" in line and repr(relevant["query"].item()) in line


def test_debug_shows_the_traceback(files: dict[str, Path]) -> None:
    result = invoke("--debug", "evaluate", files["parquet"], "-m", "ndcgg@10", "--by", "model")
    assert result.exit_code == 1 and "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: unknown metric")


@pytest.mark.parametrize("command", [[], ["evaluate"], ["compare"], ["sql"], ["validate"], ["demo"]])
def test_help(command: list[str]) -> None:
    out = ok(*command, "--help").stdout
    assert out.startswith("Usage: rank-polars") and "--help" in out


def test_version() -> None:
    assert ok("--version").stdout.strip() == f"rank-polars {rp.__version__}"


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from rank_polars.cli.progress import LineProgress, choose
    from rank_polars.progress import NoProgress, RichProgress

    assert isinstance(choose(None), NoProgress)  # pytest's stderr is not a terminal
    assert isinstance(choose(True), LineProgress)

    class TTY(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", TTY())
    assert isinstance(choose(None), RichProgress) and isinstance(choose(False), NoProgress)


def entry_point() -> str:
    exe = Path(sys.executable).parent / "rank-polars"
    if not exe.exists():
        pytest.fail(f"the rank-polars entry point is not installed beside {sys.executable}: pip install -e .")
    return str(exe)


def test_entry_point_subprocess(files: dict[str, Path], log: pl.DataFrame) -> None:
    done = subprocess.run(
        [entry_point(), "evaluate", str(files["folder"]), *M_ARGS, "--by", "model", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got = pl.DataFrame(json.loads(done.stdout))
    assert_frame_equal(got, expected(log), check_dtypes=False)

    bad = subprocess.run([entry_point(), "evaluate", "missing.parquet", "-m", "ndcg@10"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.strip() == "error: run: no such file 'missing.parquet'"
