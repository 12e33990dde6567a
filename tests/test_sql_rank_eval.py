"""``rank_eval`` / ``rank_eval_per_query`` (sql/tables.sql): the whole evaluation in DuckDB SQL,
with the judgments in their own table, equal to ``rp.evaluate`` (the reference: its numbers are
checked against trec_eval and pytrec_eval elsewhere) at 1e-12, in the DuckDB Python package and
in the DuckDB command line; metric names read as ``rank_polars.measures.parse`` reads them; bad
input stopped with a message naming the column."""

from __future__ import annotations

import csv
import io
import math
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.formula import macros_tables, sql_macros
from rank_polars.measures import parse

SQL = Path(__file__).resolve().parents[1] / "sql"
TOL = 1e-12

# Every measure the macros compute, in several spellings (ours, trec_eval's, ir_measures'), with
# cutoffs and parameters: each its own column.
METRICS = [
    "ndcg@5", "ndcg(gain=exp)@3", "map", "mrr", "p@3", "recall@5", "P_2", "P.4", "ndcg_cut_4", "recip_rank",
    "bpref", "fallout@4", "err@4", "rbp(p=0.9)", "rbp(gain=graded)", "p(rel=2)@3", "gm_map", "gm_bpref",
    "success@2", "hits@3", "f1@3", "rprec", "Rprec_mult_0.5", "judged@3", "unj@3", "idcg@3",
    "dcg(discount=jarvelin)@4", "cg@3", "ap(denom=min)@3", "relative_P_3", "ndcg(ideal=run)@3",
    "ndcg(ideal_cut=list)@5", "nDCG(dcg='exp-log2')@4", "RR(cutoff=2)", "ap(rel=2)",
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    sql_macros.load(c)
    return c


def cli() -> str:
    binary = shutil.which("duckdb") or shutil.which("duckdb", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.fail("the DuckDB CLI is not installed (pip install duckdb-cli)")
    return binary


def sql_list(values: list[str]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


# ----------------------------------------------------------------------------- generated logs

ITEMS = [f"d{i}" for i in range(8)]
QUERIES = ["q1", "q2", "q3", "q4"]


@st.composite
def logs(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A log (two grouping columns, one of them sometimes null; rankings by slot with gaps and by
    score with ties; labels) and judgments (grades -1..3, items the log never shows, a judged
    query a group did not rank, a run query without judgments)."""
    rows = []
    groups = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["eu", "us", None])),
                           min_size=1, max_size=3, unique=True))
    for model, region in groups:
        for query in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True)):
            items = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=7, unique=True))
            gaps = draw(st.lists(st.integers(1, 2), min_size=len(items), max_size=len(items)))
            slot = 0
            for item, gap in zip(items, gaps):
                slot += gap
                rows.append({"model": model, "region": region, "sid": query, "sku": item, "slot": slot,
                             "s": draw(st.sampled_from([0.1, 0.5, 0.5, 0.9])), "label": draw(st.integers(-1, 3))})
    judged = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    qrels = [{"sid": q, "sku": item, "grade": draw(st.integers(-1, 3))}
             for q in judged for item in draw(st.lists(st.sampled_from(ITEMS), max_size=6, unique=True))]
    log = pl.DataFrame(rows, schema={"model": pl.String, "region": pl.String, "sid": pl.String, "sku": pl.String,
                                     "slot": pl.Int64, "s": pl.Float64, "label": pl.Int64})
    judgments = pl.DataFrame(qrels, schema={"sid": pl.String, "sku": pl.String, "grade": pl.Int64})
    return log, judgments


def one_group_per_key(log: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The rows of one (model, region) per value of ``by``: a ranking is one (by, query)."""
    keys = log.select("model", "region").unique(maintain_order=True)
    first = keys.group_by(by, maintain_order=True).first() if by else keys.head(1)
    return log.join(first, on=["model", "region"], nulls_equal=True, how="semi")


def expected(log: pl.DataFrame, qrels: pl.DataFrame | None, by: list[str], order: str, missing: str,
             per_query: bool) -> pl.DataFrame:
    run = log.drop("s" if order == "position" else "slot")
    if qrels is None:
        run = run.rename({"label": "grade"})
    else:
        run = run.drop("label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coverage warnings: the SQL has no warnings, the numbers say it
        return rp.evaluate(run, METRICS, qrels=qrels, by=by or None, query="sid", item="sku", relevance="grade",
                           missing=missing, per_query=per_query, **({"position": "slot"} if order == "position" else {"score": "s"}))


def call(table: str, qrels: str | None, by: list[str], order: str, missing: str, per_query: bool) -> str:
    args = [table, f"metrics := {sql_list(METRICS)}", f"by := {sql_list(by)}", "query := 'sid'", "item := 'sku'",
            "\"position\" := 'slot'" if order == "position" else "score := 's'",
            f"relevance := '{'grade' if qrels else 'label'}'", f"missing := '{missing}'"]
    if qrels is not None:
        args.insert(1, f"judgments := '{qrels}'")
    return f"FROM {'rank_eval_per_query' if per_query else 'rank_eval'}({', '.join(args)})"


def assert_same(got: pl.DataFrame, want: pl.DataFrame, keys: list[str]) -> None:
    assert got.columns == want.columns
    got, want = got.sort(keys, nulls_last=True), want.sort(keys, nulls_last=True)
    assert got.select(keys).rows() == want.select(keys).rows()
    for name in want.columns:
        if name in keys:
            continue
        for g, e in zip(got[name].to_list(), want[name].to_list()):
            if e is None:
                assert g is None, (name, g, e)
            else:
                assert g is not None and math.isclose(g, e, rel_tol=TOL, abs_tol=TOL), (name, g, e)


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per_query"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=logs(), by=st.sampled_from([[], ["model"], ["model", "region"]]),
       order=st.sampled_from(["position", "score"]), missing=st.sampled_from(["zero", "skip"]),
       judged=st.booleans(), source=st.sampled_from(["glob", "table"]))
def test_equal_to_evaluate(con: duckdb.DuckDBPyConnection, tmp_path_factory: pytest.TempPathFactory, per_query: bool,
                           data: tuple[pl.DataFrame, pl.DataFrame], by: list[str], order: str, missing: str,
                           judged: bool, source: str) -> None:
    log, judgments = data
    log = one_group_per_key(log, by)
    qrels = judgments if judged else None
    want = expected(log, qrels, by, order, missing, per_query)
    if source == "glob":  # the log in two Parquet files read by one glob, the judgments a file
        folder = tmp_path_factory.mktemp("logs")
        half = log.height // 2
        log.slice(0, half).write_parquet(folder / "part-0.parquet")
        log.slice(half).write_parquet(folder / "part-1.parquet")
        judgments.write_parquet(folder / "qrels.parquet")
        table, qrels_name = f"'{folder}/part-*.parquet'", str(folder / "qrels.parquet")
    else:  # tables
        con.execute("CREATE OR REPLACE TABLE the_log AS SELECT * FROM log")
        con.execute("CREATE OR REPLACE TABLE the_qrels AS SELECT * FROM judgments")
        table, qrels_name = "the_log", "the_qrels"
    got = con.sql(call(table, qrels_name if judged else None, by, order, missing, per_query)).pl()
    assert_same(got, want, [*by, "sid"] if per_query else by)


def test_worked_example_in_the_cli(tmp_path: Path) -> None:
    """The DuckDB command line (another DuckDB version than the Python package) gives evaluate's numbers."""
    log, qrels = _fixed_example()
    log.write_parquet(tmp_path / "log.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    by = ["model", "region"]
    for per_query in (False, True):
        for order in ("position", "score"):
            want = expected(log, qrels, by, order, "zero", per_query)
            script = (f".read {SQL / 'all.sql'}\n.mode csv\n.nullvalue ''\n"
                      f"{call(repr(str(tmp_path / 'log.parquet')), str(tmp_path / 'qrels.parquet'), by, order, 'zero', per_query)};\n")
            done = subprocess.run([cli(), "-batch", "-bail"], input=script, text=True, capture_output=True,
                                  timeout=300, check=False)
            assert done.returncode == 0, done.stderr
            rows = list(csv.DictReader(io.StringIO(done.stdout)))
            got = pl.DataFrame([{k: (None if v == "" else v) for k, v in r.items()} for r in rows])
            got = got.with_columns(pl.col(c).cast(pl.Float64) for c in got.columns if c not in [*by, "sid"])
            want = want.with_columns(pl.col(c).cast(pl.Float64) for c in want.columns if c not in [*by, "sid"])
            assert_same(got, want, [*by, "sid"] if per_query else by)


def _fixed_example() -> tuple[pl.DataFrame, pl.DataFrame]:
    log = pl.DataFrame({
        "model": ["a"] * 6 + ["b"] * 4,
        "region": ["eu", "eu", "eu", "eu", "us", "us", "eu", "eu", None, None],
        "sid": ["q1", "q1", "q1", "q2", "q1", "q1", "q1", "q1", "q3", "q3"],
        "sku": ["x", "y", "z", "x", "y", "w", "y", "x", "k", "y"],
        "slot": [1, 2, 4, 1, 1, 2, 1, 2, 1, 3],
        "s": [0.5, 0.5, 0.2, 0.9, 0.3, 0.3, 0.7, 0.1, 0.5, 0.5],
        "label": [0, 1, 2, 1, 0, 3, 2, 0, 1, 1],
    })
    qrels = pl.DataFrame({"sid": ["q1", "q1", "q1", "q2", "q4", "q3"], "sku": ["y", "z", "v", "w", "a", "k"],
                          "grade": [2, 1, 1, 0, 1, -1]})
    return log, qrels


# ----------------------------------------------------------------------------- metric names

NAMES = [
    "ndcg@10", "NDCG@10", "ndcg", "map", "MAP", "mrr", "p@5", "P_5", "P.5", "recall@100", "recall_100", "r@3",
    "ndcg_cut_10", "ndcg_cut.10", "map_cut_5", "recip_rank", "Rprec", "rprec", "Rprec_mult_0.20", "bpref",
    "gm_map", "gmap", "gm_bpref", "success_5", "hit@3", "hits@3", "fallout@4", "err@5", "err(max=4)@5",
    "rbp(p=0.9)", "rbp(p=0.9, gain=graded)", "p(rel=2)@5", "ndcg(gain=exp)@10", "nDCG(dcg='exp-log2')@10",
    "RR(cutoff=10)", "ndcg(k=3)", "relative_P_5", "p(relative=true)@5", "judged@10", "judged_5", "unj_5",
    "idcg@5", "ideal_dcg@5", "dcg(discount=jarvelin)", "cg@3", "ap(denom=found)@5", "ndcg(ideal=run)",
    "ndcg(ideal_cut=list)@5", "f1@5", "precision@5", "mean_ndcg", " ndcg @ 10 ",
]


def sql_specs(con: duckdb.DuckDBPyConnection, names: list[str]) -> list[dict]:
    return con.execute(f"SELECT specs FROM __rp_metrics({sql_list(names)})").fetchall()[0][0]


@pytest.mark.parametrize("name", NAMES)
def test_names_read_as_parse_reads_them(con: duckdb.DuckDBPyConnection, name: str) -> None:
    (spec,) = sql_specs(con, [name])
    cls = macros_tables.supported()[spec["measure"]][1]
    read = cls(spec["k"], **dict(spec["params"]))
    assert read == parse(name), (name, spec)
    assert spec["agg"] == cls.AGGREGATE


@pytest.mark.parametrize(("name", "says"), [
    ("bogus@5", "'bogus@5' is not a measure the SQL macros compute"),
    ("p@0", "positive integer"),
    ("ndcg(gain=cube)", "not one of its choices"),
    ("p(rel=x)@5", "not a finite number"),
    ("ndcg(color=red)", "unknown parameter"),
    ("rprec@5", "takes no cutoff"),
    ("P_5@5", "cutoff is given twice"),
    ("rbp(p=1.5)", "p must be in (0, 1)"),
    ("rbp(gain=graded, rel=2)", "rel applies to gain=binary only"),
])
def test_bad_names_are_refused(con: duckdb.DuckDBPyConnection, name: str, says: str) -> None:
    with pytest.raises(Exception):
        parse(name)  # the Python parser refuses each too
    assert says in refusal(con, name)


def refusal(con: duckdb.DuckDBPyConnection, name: str) -> str:
    con.execute("CREATE OR REPLACE TABLE one AS SELECT 'q' AS query, 'd' AS item, 1 AS position, 1 AS relevance")
    with pytest.raises(duckdb.Error) as caught:
        con.execute(f"FROM rank_eval(one, metrics := {sql_list([name])})").fetchall()
    return str(caught.value)


@pytest.mark.parametrize(("name", "says"), [
    ("infap", "is not a measure the SQL macros compute"), ("alpha_ndcg@10", "is not a measure the SQL macros compute"),
    ("ndcg(gains=1:3;2:9)", "cannot express"),
])
def test_names_without_a_macro_say_what_computes_them(con: duckdb.DuckDBPyConnection, name: str, says: str) -> None:
    parse(name)  # a measure evaluate computes: rank_eval says to use rp.to_sql
    message = refusal(con, name)
    assert says in message and "rp.to_sql" in message, message


# ----------------------------------------------------------------------------- bad input

BAD = {
    "duplicate positions": ("SELECT * FROM (VALUES ('q1', 'x', 1, 1), ('q1', 'y', 1, 0)) t(query, item, position, relevance)",
                            None, "duplicate positions within a ranking (column 'position'), queries 'q1'"),
    "duplicate judged item": ("SELECT * FROM (VALUES ('q1', 'x', 1, 1), ('q1', 'x', 2, 1)) t(query, item, position, relevance)",
                              None, "duplicate items within a ranking (column 'item'), queries 'q1'"),
    "duplicate judgments": ("SELECT * FROM (VALUES ('q1', 'x', 1)) t(query, item, position)",
                            "SELECT * FROM (VALUES ('q1', 'x', 1), ('q1', 'x', 2)) t(query, item, relevance)",
                            "duplicate judgments (a query and item twice; judgments of several judges: pass the rows "
                            "of one), queries 'q1'"),
    "two judges": ("SELECT * FROM (VALUES ('q1', 'x', 1)) t(query, item, position)",
                   "SELECT * FROM (VALUES ('q1', 'x', 1, 'people'), ('q1', 'x', 0, 'llm')) t(query, item, relevance, judge)",
                   "judgments of several judges: pass the rows of one"),
    "null query": ("SELECT * FROM (VALUES (NULL, 'x', 1, 1)) t(query, item, position, relevance)", None,
                   "column 'query' (query) has null query ids"),
    "null position": ("SELECT * FROM (VALUES ('q1', 'x', NULL, 1)) t(query, item, position, relevance)", None,
                      "column 'position' has null values, queries 'q1'"),
    "position 0": ("SELECT * FROM (VALUES ('q2', 'x', 0, 1)) t(query, item, position, relevance)", None,
                   "positions below 1"),
    "NaN label": ("SELECT * FROM (VALUES ('q1', 'x', 1, 'NaN'::DOUBLE)) t(query, item, position, relevance)", None,
                  "column 'relevance' (relevance) has null or NaN relevance labels"),
    "NaN grade": ("SELECT * FROM (VALUES ('q1', 'x', 1)) t(query, item, position)",
                  "SELECT * FROM (VALUES ('q1', 'x', 'NaN'::DOUBLE)) t(query, item, relevance)",
                  "judgments: column 'relevance' has null or NaN grades"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_refused_naming_the_column(con: duckdb.DuckDBPyConnection, case: str) -> None:
    run, qrels, says = BAD[case]
    con.execute(f"CREATE OR REPLACE TABLE bad_run AS {run}")
    judgments = ""
    if qrels is not None:
        con.execute(f"CREATE OR REPLACE TABLE bad_qrels AS {qrels}")
        judgments = ", judgments := 'bad_qrels'"
    with pytest.raises(duckdb.Error) as caught:
        con.execute(f"FROM rank_eval(bad_run{judgments}, metrics := ['ndcg@10', 'bpref'])").fetchall()
    assert says in str(caught.value), str(caught.value)


def test_bad_arguments_are_refused(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE OR REPLACE TABLE ok_run AS SELECT 'm' AS model, 'q' AS query, 'd' AS item, 1 AS position, 1 AS relevance")
    for args, says in [("missing := 'drop'", "missing := must be 'zero' or 'skip'"),
                       ("by := ['modle']", "is not in the log"),
                       ("by := ['query']", "names the query or item column")]:
        with pytest.raises(duckdb.Error) as caught:
            con.execute(f"FROM rank_eval(ok_run, {args})").fetchall()
        assert says in str(caught.value), str(caught.value)


# ----------------------------------------------------------------------------- scalar macros and the judgments

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=logs())
def test_scalar_macros_read_the_judgments(con: duckdb.DuckDBPyConnection, data: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    """ndcg(l, k, ideal := grades), ap(l, r := R), bpref(l, r := R, n := N): each query's value as
    evaluate(qrels=) gives it, the grades joined by hand."""
    log, qrels = data
    run = log.filter(pl.col("model") == log["model"][0], pl.col("region").eq_missing(log["region"][0]))
    con.execute("CREATE OR REPLACE TABLE s_run AS SELECT * FROM run")
    con.execute("CREATE OR REPLACE TABLE s_qrels AS SELECT * FROM qrels")
    got = con.sql("""
        WITH l AS (SELECT r.sid, list(CAST(j.grade AS DOUBLE) ORDER BY r.slot) AS l, max(r.slot) AS deepest, count(*) AS n
                   FROM s_run r LEFT JOIN s_qrels j USING (sid, sku) GROUP BY r.sid),
             i AS (SELECT sid, list(CAST(grade AS DOUBLE)) AS ideal, count_if(grade > 0) AS r,
                          count_if(grade = 0) AS nonrel FROM s_qrels GROUP BY sid)
        SELECT l.sid, ndcg(l.l, 3, ideal := i.ideal) AS ndcg3, ap(l.l, r := i.r) AS ap,
               bpref(l.l, r := i.r, n := i.nonrel) AS bpref, recall(l.l, 5, ideal := i.ideal) AS r5,
               judged(l.l, 3, n_ret := l.n) AS judged3
        FROM l JOIN i USING (sid) WHERE l.deepest = l.n  -- positions 1..n: the list's index is the rank
    """).pl()
    dense = run.group_by("sid").agg(pl.col("slot").max().alias("deepest"), pl.len().alias("n"))
    dense = dense.filter(pl.col("deepest") == pl.col("n"))["sid"].to_list()
    run = run.filter(pl.col("sid").is_in(dense)).drop("s", "label")
    if run.is_empty() or got.is_empty():
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.evaluate(run, ["ndcg@3", "ap", "bpref", "r@5", "judged@3"], qrels=qrels, query="sid", item="sku",
                           position="slot", relevance="grade", per_query=True, missing="skip")
    want = want.rename({"ndcg@3": "ndcg3", "r@5": "r5", "judged@3": "judged3"})
    assert_same(got.select(want.columns), want, ["sid"])


@pytest.mark.parametrize("name", ["bpref", "fallout"])
def test_ideal_without_n_is_refused_as_in_polars(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """With ideal := and without n :=, a macro reading N stops as the Polars function of the
    same name does (with_judgments' ideal holds the grades above 0 alone: N read from it would be
    0, a silently wrong value); with n := it gives the Polars function's value."""
    from rank_polars.formula import exprs

    grades, positives, zeros = [1.0, 0.0, -1.0, 2.0, 0.0], [2.0, 1.0, 1.0], 3
    func = getattr(exprs, name)
    with pytest.raises(rp.errors.RankPolarsError) as polars_error:
        func(pl.col("l"), ideal=pl.col("ideal"))
    said = str(polars_error.value).split(": pass n=")[0].replace("ideal=", "ideal :=")
    with pytest.raises(duckdb.Error) as caught:
        con.execute(f"SELECT {name}(?, ideal := ?)", [grades, positives]).fetchall()
    assert said in str(caught.value) and "pass n :=" in str(caught.value), str(caught.value)
    frame = pl.DataFrame({"l": grades, "ideal": [positives] * len(grades), "n": [zeros] * len(grades)})
    want = frame.select(func("l", ideal="ideal", n="n")).item()
    got = con.execute(f"SELECT {name}(?, ideal := ?, n := ?)", [grades, positives, zeros]).fetchone()[0]
    assert want is not None and math.isclose(got, want, rel_tol=TOL, abs_tol=TOL), (got, want)
    # every judged grade and n := N gives the same value; the ranking's own grades need no n :=
    everything = positives + [0.0] * zeros
    assert math.isclose(con.execute(f"SELECT {name}(?, ideal := ?, n := ?)", [grades, everything, zeros]).fetchone()[0],
                        want, rel_tol=TOL, abs_tol=TOL)
    con.execute(f"SELECT {name}(?)", [grades]).fetchall()
