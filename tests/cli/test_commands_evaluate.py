"""rank-polars evaluate: every input format, the engines, the output formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


@pytest.mark.parametrize("kind", ["parquet", "glob", "folder", "csv", "tsv"])
def test_evaluate_every_log_format(kind: str, files: dict[str, Path], log: pl.DataFrame) -> None:
    result = invoke("evaluate", files[kind], *M_ARGS, "--by", "model", "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    assert_frame_equal(got, expected(log), check_dtypes=False)


def test_evaluate_trec_run_and_qrels(files: dict[str, Path], log: pl.DataFrame) -> None:
    result = invoke("evaluate", files["trec"], "--qrels", files["qrels"], *M_ARGS, "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    v1 = log.filter(pl.col("model") == "bot-v1").select("query", "item", "score")  # ordered by score, as trec_eval
    qrels = log.select("query", "item", "relevance").unique()
    assert_frame_equal(got, rp.evaluate(v1, METRICS, qrels=qrels), check_dtypes=False)


def test_format_override_and_columns(tmp_path: Path, log: pl.DataFrame) -> None:
    """--format-in for an unknown extension; --query/--item/--position/--relevance for other names."""
    path = tmp_path / "log.data"
    log.rename({"query": "qid", "item": "doc", "position": "rank", "relevance": "rel"}).write_csv(path, separator="\t")
    result = invoke("evaluate", path, "--format-in", "tsv", "--query", "qid", "--item", "doc", "--position", "rank",
                "--relevance", "rel", *M_ARGS, "--by", "model", "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    assert_frame_equal(got, expected(log), check_dtypes=False)


def test_qrels_ids_of_other_types_are_matched(tmp_path: Path, log: pl.DataFrame) -> None:
    """Integer ids in a CSV run against string ids of TREC qrels are compared as strings."""
    nums = log.with_columns(pl.col("query").str.slice(1).cast(pl.Int64))
    nums.drop("relevance").write_csv(tmp_path / "run.csv")
    judged = nums.select("query", "item", "relevance").unique()
    (tmp_path / "j.qrels").write_text("".join(f"{q} 0 {i} {r}\n" for q, i, r in judged.iter_rows()))
    result = invoke("evaluate", tmp_path / "run.csv", "--qrels", tmp_path / "j.qrels", *M_ARGS, "--by", "model", "--format", "csv")
    want = rp.evaluate(log.drop("relevance"), METRICS, by="model", qrels=log.select("query", "item", "relevance").unique())
    assert_frame_equal(pl.read_csv(io.StringIO(result.stdout)), want, check_dtypes=False)


def test_engines_and_per_query_agree(files: dict[str, Path], log: pl.DataFrame) -> None:
    polars_out = invoke("evaluate", files["folder"], *M_ARGS, "--by", "model", "--per-query", "--format", "csv").stdout
    duckdb_out = invoke("evaluate", files["folder"], *M_ARGS, "--by", "model", "--per-query", "--engine", "duckdb", "--format", "csv").stdout
    a, b = pl.read_csv(io.StringIO(polars_out)), pl.read_csv(io.StringIO(duckdb_out))
    assert a.height == 2 * 30
    assert_frame_equal(a, b, check_dtypes=False)
    assert_frame_equal(a, expected(log, per_query=True), check_dtypes=False)


# ----------------------------------------------------------------------------------------


# outputs


def test_output_table(files: dict[str, Path], log: pl.DataFrame) -> None:
    out = invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model").stdout
    row = expected(log).row(0, named=True)
    assert "ndcg@10" in out and "bot-v1" in out and f"{row['ndcg@10']:.4f}" in out
    assert "shape:" not in out


def test_output_json_markdown_latex(files: dict[str, Path], log: pl.DataFrame) -> None:
    want = expected(log)
    got = json.loads(invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "json").stdout)
    assert [r["model"] for r in got] == ["bot-v1", "bot-v2"]
    assert got[0]["ndcg@10"] == pytest.approx(want["ndcg@10"][0])
    md = invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "markdown").stdout
    assert md.splitlines()[0].startswith("| model") and md.splitlines()[1].startswith("|--")
    tex = invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "latex").stdout
    assert tex.startswith("\\begin{tabular}{lrrrr}") and "\\toprule" in tex and tex.rstrip().endswith("\\end{tabular}")
    assert f"bot-v1 & 30 & {want['ndcg@10'][0]:.4f}" in tex


def test_output_files_and_force(tmp_path: Path, files: dict[str, Path], log: pl.DataFrame) -> None:
    target = tmp_path / "means.parquet"
    result = invoke("evaluate", files["csv"], *M_ARGS, "--by", "model", "--format", "parquet", "-o", target)
    assert result.stdout == ""
    assert_frame_equal(pl.read_parquet(target), expected(log), check_dtypes=False)
    line = one_line_error(invoke("evaluate", files["csv"], *M_ARGS, "--by", "model", "--format", "parquet", "-o", target, code=None))
    assert "exists" in line and "--force" in line
    other = tmp_path / "means.csv"
    other.write_text("old\n")
    invoke("evaluate", files["csv"], *M_ARGS, "--by", "model", "--format", "csv", "-o", other, "--force")
    assert other.read_text().startswith("model,queries,ndcg@10")


def test_duplicates_in_data(tmp_path: Path, log: pl.DataFrame) -> None:
    first = log.head(1)
    pl.concat([log, first]).write_parquet(tmp_path / "dup.parquet")
    line = one_line_error(invoke("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model", "--checks", "strict", code=None))
    assert "duplicate" in line and "'q0001'" in line
    invoke("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model", "--duplicates", "first")
    # by default a repeated row is refused where it can change a value: a relevant one
    relevant = log.filter(pl.col("relevance") > 0).head(1)
    pl.concat([log, relevant]).write_parquet(tmp_path / "dup.parquet")
    line = one_line_error(invoke("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model", code=None))
    assert "duplicate" in line and repr(relevant["query"].item()) in line


def test_order_score_ranks_by_score_when_positions_exist(tmp_path: Path, log: pl.DataFrame) -> None:
    flipped = log.with_columns(score=-pl.col("score"))  # scores now rank the other way round
    flipped.write_parquet(tmp_path / "log.parquet")
    by_score = pl.read_csv(io.StringIO(invoke("evaluate", tmp_path / "log.parquet", *M_ARGS, "--by", "model", "--order", "score", "--format", "csv").stdout))
    assert_frame_equal(by_score, expected(flipped.drop("position")), check_dtypes=False)
    by_position = pl.read_csv(io.StringIO(invoke("evaluate", tmp_path / "log.parquet", *M_ARGS, "--by", "model", "--format", "csv").stdout))
    assert_frame_equal(by_position, expected(log), check_dtypes=False)
    assert by_score["ndcg@10"].to_list() != by_position["ndcg@10"].to_list()
    line = one_line_error(invoke("evaluate", tmp_path / "log.parquet", *M_ARGS, "--order", "score", "--score", "scroe", code=1))
    assert "no column 'scroe' (--score); did you mean 'score'?" in line


def test_markdown_output_escapes_pipes(tmp_path: Path, log: pl.DataFrame) -> None:
    log.with_columns(model=pl.col("model") + "|x").write_parquet(tmp_path / "pipes.parquet")
    md = invoke("evaluate", tmp_path / "pipes.parquet", *M_ARGS, "--by", "model", "--format", "markdown").stdout
    assert "| bot-v1\\|x " in md and md.splitlines()[2].count(" | ") == 4


def test_evaluate_ci_is_scipys_t_interval_of_the_per_query_values(files: dict[str, Path]) -> None:
    from scipy import stats

    result = invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--by", "model", "--ci", "0.9", "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout)).sort("model")
    per = rp.evaluate(pl.read_parquet(files["parquet"]), ["ndcg@10"], by="model", per_query=True)
    for row in got.iter_rows(named=True):
        values = per.filter(pl.col("model") == row["model"])["ndcg@10"].to_numpy()
        low, high = stats.t.interval(0.9, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
        assert row["ndcg@10_low"] == pytest.approx(low, abs=1e-12)
        assert row["ndcg@10_high"] == pytest.approx(high, abs=1e-12)
    assert invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--ci", "1.5", code=2).exit_code == 2
