"""rp.Schema, the one column mapping: every entry point takes it, both engines (and Spark) read the
judgments under their own names, and the command line reads it from a project file.

The reference of each case is the same call on the same data under the data model's default
names: a mapping may rename columns, never change a number.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.project import find_project_file, project_schema, read_schema

METRICS = ["ndcg@10", "map", "mrr", "p@2", "bpref"]
# the log names its roles its own way and carries labels; the judgments call their grade "grade"
# and also carry a decoy "label" column (which must never be read as the grade)
LOG = pl.DataFrame({
    "model": ["a"] * 5 + ["b"] * 5,
    "search_id": ["s1", "s1", "s1", "s2", "s2"] * 2,
    "sku": ["x", "y", "w", "x", "z", "y", "x", "w", "z", "x"],
    "slot": [1, 2, 3, 1, 2] * 2,
    "label": [0, 2, 1, 1, 0, 2, 0, 1, 0, 1],
})
JUDGMENTS = pl.DataFrame({
    "search_id": ["s1", "s1", "s1", "s2", "s2", "s2", "s3"],
    "sku": ["x", "y", "w", "x", "z", "v", "x"],
    "grade": [0, 2, 1, 1, 0, 3, 1],
    "label": [9, 9, 9, 9, 9, 9, 9],
})
SCHEMA = rp.Schema(query="search_id", item="sku", position="slot", relevance="label",
                   judgments=rp.Schema(relevance="grade"))
DEFAULT_LOG = LOG.rename({"search_id": "query", "sku": "item", "slot": "position", "label": "relevance"})
DEFAULT_JUDGMENTS = JUDGMENTS.drop("label").rename({"search_id": "query", "sku": "item", "grade": "relevance"})


def reference(**kwargs: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rp.evaluate(DEFAULT_LOG, METRICS, qrels=DEFAULT_JUDGMENTS, by="model", **kwargs)


def quiet(*args: Any, **kwargs: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rp.evaluate(*args, **kwargs)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("schema")
    LOG.write_parquet(folder / "log.parquet")
    JUDGMENTS.write_parquet(folder / "judgments.parquet")
    return str(folder / "log.parquet"), str(folder / "judgments.parquet")


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("labels", ["qrels", "run"])
@pytest.mark.parametrize("from_files", [False, True], ids=["frames", "parquet"])
def test_a_log_with_label_and_judgments_with_grade_evaluate(engine: str, labels: str, from_files: bool,
                                                            files: tuple[str, str]) -> None:
    run, qrels = files if from_files else (LOG, JUDGMENTS)
    got = quiet(run, METRICS, qrels=qrels, by="model", labels=labels, schema=SCHEMA, engine=engine)
    assert got.equals(reference(labels=labels)), got


def test_spark_reads_the_judgments_under_their_own_names(spark_session: Any, files: tuple[str, str]) -> None:
    for run, qrels in (files, (spark_session.createDataFrame(LOG.to_pandas()),
                               spark_session.createDataFrame(JUDGMENTS.to_pandas()))):
        got = quiet(run, METRICS, qrels=qrels, by="model", labels="run", schema=SCHEMA, engine="spark",
                    spark=spark_session)
        expected = reference(labels="run")
        # Spark's engine sums in its own fixed order: the same values to the last few bits
        assert got.select("model", "queries").equals(expected.select("model", "queries"))
        for column in METRICS:
            assert got[column].to_list() == pytest.approx(expected[column].to_list(), abs=1e-12)


def test_per_query_output_names_the_query_column_as_the_log_does() -> None:
    got = quiet(LOG, ["ndcg@10"], qrels=JUDGMENTS, by="model", schema=SCHEMA, per_query=True)
    assert got.columns == ["model", "search_id", "ndcg@10"]


def test_flat_keywords_still_work_and_agree_with_the_schema() -> None:
    flat = quiet(LOG, METRICS, qrels=JUDGMENTS.drop("label").rename({"grade": "label"}), by="model",
                 query="search_id", item="sku", position="slot", relevance="label")
    assert flat.equals(reference())
    both = quiet(LOG, METRICS, qrels=JUDGMENTS, by="model", schema=SCHEMA, query="search_id")
    assert both.equals(reference())


def test_a_keyword_and_the_schema_that_disagree_is_an_error() -> None:
    with pytest.raises(rp.RankPolarsError, match="query='query' and schema=.* name the query column differently"):
        rp.evaluate(LOG, METRICS, qrels=JUDGMENTS, schema=SCHEMA, query="query")


def test_a_missing_judgments_column_is_named_as_the_user_wrote_it() -> None:
    with pytest.raises(rp.RankPolarsError, match=r"qrels: column 'grade' \(relevance grade\) not found"):
        rp.evaluate(LOG, METRICS, qrels=JUDGMENTS.drop("grade"), schema=SCHEMA)


def test_a_bad_judgments_value_is_named_by_the_judgments_column() -> None:
    bad = JUDGMENTS.with_columns(pl.when(pl.col("sku") == "y").then(None).otherwise(pl.col("grade")).alias("grade"))
    with pytest.raises(rp.DataError, match="'grade'"):
        rp.evaluate(LOG, METRICS, qrels=bad, schema=SCHEMA, by="model")


def test_the_judgments_take_only_their_roles() -> None:
    with pytest.raises(rp.RankPolarsError, match="judgments have only query, item, relevance"):
        rp.Schema(judgments=rp.Schema(position="rank"))
    with pytest.raises(rp.RankPolarsError, match="a column name must be a non-empty string"):
        rp.Schema(item="")


def test_to_sql_reads_the_judgments_under_their_own_names() -> None:
    con = duckdb.connect()
    con.register("logs", LOG.to_arrow())
    con.register("judgments", JUDGMENTS.to_arrow())
    for labels in ("qrels", "run"):
        sql = rp.to_sql(METRICS, table="logs", qrels="judgments", by="model", labels=labels, schema=SCHEMA)
        got = con.sql(sql).pl().with_columns(pl.col("queries").cast(pl.UInt32))
        expected = reference(labels=labels)
        assert got.columns == expected.columns
        for column in METRICS:
            assert got[column].to_list() == pytest.approx(expected[column].to_list(), abs=1e-12)


def test_compare_and_diagnose_take_the_schema() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = rp.compare(LOG, ["ndcg@10"], qrels=JUDGMENTS, by="model", schema=SCHEMA)
        expected = rp.compare(DEFAULT_LOG, ["ndcg@10"], qrels=DEFAULT_JUDGMENTS, by="model")
    assert got.equals(expected)
    found = rp.diagnose(LOG, qrels=JUDGMENTS, by="model", schema=SCHEMA)
    assert not found.errors
    missing = rp.diagnose(LOG, qrels=JUDGMENTS.drop("grade"), by="model", schema=SCHEMA)
    assert any("'grade'" in f.message for f in missing.findings if f.level == "error")


def test_click_metrics_and_position_bias_take_the_click_column_from_the_schema() -> None:
    log = pl.DataFrame({"sid": ["a", "a", "b", "b"], "sku": ["x", "y", "x", "y"], "slot": [1, 2, 1, 2],
                        "clicked": [1, 0, 0, 1]})
    schema = rp.Schema(query="sid", item="sku", position="slot", click="clicked")
    got = quiet(log, ["ctr@2", "click_rr"], schema=schema)
    expected = quiet(log.rename({"sid": "query", "sku": "item", "slot": "position", "clicked": "click"}),
                     ["ctr@2", "click_rr"])
    assert got.equals(expected)
    bias = rp.position_bias(log, schema=schema)
    assert bias.equals(rp.position_bias(log.rename({"sid": "query", "sku": "item", "slot": "position",
                                                    "clicked": "click"})))


def test_counterfactual_takes_the_schema() -> None:
    log = pl.DataFrame({"sid": ["a", "a", "b", "b"], "sku": ["x", "y", "x", "z"], "slot": [1, 2, 1, 2],
                        "clicked": [0, 1, 1, 0]})
    candidate = pl.DataFrame({"sid": ["a", "a", "b", "b"], "sku": ["y", "x", "z", "x"], "slot": [1, 2, 1, 2]})
    examination = pl.DataFrame({"position": [1, 2], "examination": [1.0, 0.5]})
    schema = rp.Schema(query="sid", item="sku", position="slot", click="clicked")
    rename = {"sid": "query", "sku": "item", "slot": "position", "clicked": "click"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = rp.counterfactual(log, candidate, ["clicks@2"], examination=examination, schema=schema)
        expected = rp.counterfactual(log.rename(rename), candidate.rename({k: v for k, v in rename.items() if k != "clicked"}),
                                     ["clicks@2"], examination=examination)
    assert got.equals(expected)


# -- the project file ----------------------------------------------------------------------------

TOML = '[columns]\nquery = "search_id"\nitem = "sku"\nposition = "slot"\nrelevance = "label"\n' \
       '[judgments]\nrelevance = "grade"\n'


def test_the_project_file_is_found_from_the_working_directory_upward(tmp_path: Path) -> None:
    (tmp_path / "rank-polars.toml").write_text(TOML)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_file(deep) == tmp_path / "rank-polars.toml"
    assert project_schema(deep) == SCHEMA


def test_pyproject_tool_table_and_its_precedence(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no table: passed over
    assert find_project_file(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[tool.rank-polars.columns]\nquery = "qid"\n')
    assert read_schema(find_project_file(tmp_path)) == rp.Schema(query="qid")
    (tmp_path / "rank-polars.toml").write_text('[columns]\nquery = "search_id"\n')  # the own file first
    assert find_project_file(tmp_path) == tmp_path / "rank-polars.toml"


def test_a_mistyped_role_in_the_project_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "rank-polars.toml").write_text('[columns]\nqeury = "search_id"\n')
    with pytest.raises(rp.RankPolarsError, match=r"\[columns\]: unknown role 'qeury' \(did you mean 'query'\?\)"):
        project_schema(tmp_path)


def run_cli(folder: Path, *args: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    entry = Path(sys.executable).with_name("rank-polars")  # the installed command, as a user runs it
    done = subprocess.run([str(entry), *args], cwd=folder, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_the_cli_reads_the_project_file_and_a_flag_beats_it(tmp_path: Path, files: tuple[str, str]) -> None:
    log, judgments = files
    (tmp_path / "rank-polars.toml").write_text(TOML)
    args = ["evaluate", log, "--qrels", judgments, "-m", "ndcg@10", "-m", "map", "--by", "model", "--labels", "run",
            "--format", "csv"]
    code, out, err = run_cli(tmp_path, *args, "-v")
    assert code == 0, err
    assert f"column names from {tmp_path / 'rank-polars.toml'}" in err
    expected = reference(labels="run").select("model", "queries", "ndcg@10", "map")
    got = pl.read_csv(out.encode())
    assert got["ndcg@10"].to_list() == pytest.approx(expected["ndcg@10"].to_list(), abs=1e-12)
    # a flag beats the file: the judgments' decoy "label" column (9 everywhere) read as the grade
    code, out, err = run_cli(tmp_path, *args[:-2], "--qrels-relevance", "nope")
    assert code != 0 and "no column 'nope' (--qrels-relevance)" in err


def test_help_shows_the_project_files_names_as_defaults(tmp_path: Path) -> None:
    (tmp_path / "rank-polars.toml").write_text(TOML)
    code, out, _ = run_cli(tmp_path, "evaluate", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "Query id column. [default: search_id]" in text
    assert "[default: grade]" in text


def test_python_errors_say_did_you_mean_and_how_to_name_the_column() -> None:
    log = DEFAULT_LOG.rename({"model": "ranker_version"})
    with pytest.raises(rp.RankPolarsError, match=r"column 'ranker_verison' \(a 'by' grouping column\) not found.*"
                                                 r"did you mean 'ranker_version'\?"):
        rp.evaluate(log, ["ndcg@10"], by="ranker_verison")
    with pytest.raises(rp.RankPolarsError, match=r"column 'query' \(query id\) not found.*name the query id column "
                                                 r"with query='\.\.\.' or schema=rp.Schema\(query='\.\.\.'\)"):
        rp.evaluate(LOG, ["ndcg@10"])
    with pytest.raises(rp.RankPolarsError, match=r"qrels: column 'relevance' \(relevance grade\) not found.*"
                                                 r"schema=rp.Schema\(judgments=rp.Schema\(relevance='\.\.\.'\)\)"):
        rp.evaluate(DEFAULT_LOG, ["ndcg@10"], qrels=DEFAULT_JUDGMENTS.rename({"relevance": "grade"}))
