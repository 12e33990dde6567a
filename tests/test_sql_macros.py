"""The DuckDB macro files in ``sql/``: generated from the specs, valid SQL, and equal to Polars."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.formula import exprs
from rank_polars.formula import sql_macros
from rank_polars.formula import macros, macros_scalar

SQL = Path(__file__).resolve().parents[1] / "sql"
FILES = sorted(SQL.glob("*.sql"))
TOL = 1e-12


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    sql_macros.load(c)
    return c


def one(con: duckdb.DuckDBPyConnection, sql: str) -> float:
    return con.execute(f"SELECT {sql}").fetchall()[0][0]


# ----------------------------------------------------------------------------- the files

def test_committed_files_are_the_generated_ones() -> None:
    expected = macros.files()
    assert sorted(p.name for p in FILES) == sorted(expected)
    for path in FILES:
        assert path.read_text() == expected[path.name], (
            f"{path.name} is stale: run python -m rank_polars.formula.macros"
        )


def test_loader_finds_the_files() -> None:
    assert (sql_macros.path() / "all.sql").read_text() == (SQL / "all.sql").read_text()


# sqlglot 30 parses CREATE MACRO but not DuckDB's `name := default` in its parameter list:
# the defaults are checked to be plain literals (or a list of texts) and the rest is parsed
# without them.
LITERAL = r"('[^']*'|NULL|-?[0-9.]+|\[(?:'[^']*'(?:, )?)*\])"
PARAM = re.compile(rf"(\w+|\"\w+\")(?: := {LITERAL})?")
DEFAULT = re.compile(rf"(\b\w+|\"\w+\") := {LITERAL}(?=[,)])")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_file_parses_with_sqlglot(path: Path) -> None:
    text = path.read_text()
    assert text.startswith("-- "), "each file starts with a comment"
    headers = re.findall(r"CREATE OR REPLACE MACRO \w+\((.*?)\) AS", text)
    assert headers
    for params in headers:
        assert re.fullmatch(rf"{PARAM.pattern}(, {PARAM.pattern})*", params), params
    statements = [s for s in sqlglot.parse(DEFAULT.sub(r"\1", text), read="duckdb") if s is not None]
    assert len(statements) == len(headers)
    for statement in statements:
        assert isinstance(statement, sqlglot.exp.Create), statement.sql()[:80]


def test_files_run_in_the_duckdb_cli(tmp_path: Path) -> None:
    binary = shutil.which("duckdb") or shutil.which("duckdb", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.fail("the DuckDB CLI is not installed (pip install duckdb-cli)")
    script = ".read sql/all.sql\n.read sql/all.sql\n.mode csv\nSELECT ndcg([0.99, 0.94, 0.74, 0.88, 0.71, 0.68], 5) AS v;\n"
    done = subprocess.run(
        [binary, "-batch", "-bail"], input=script, text=True, capture_output=True,
        cwd=SQL.parent, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["v", "0.9962906539247512"]
    # each file on its own, relative to the sql folder (the table macros need the scalar ones)
    order = [p.name for p in FILES if p.name not in ("all.sql", "tables.sql")] + ["tables.sql"]
    script = "".join(f".read {n}\n" for n in order) + ".mode csv\nSELECT queries FROM rank_eval('t');\n"
    setup = "CREATE TABLE t AS SELECT 'm' AS model, 'q' AS query, 'd' AS item, 1 AS position, 1 AS relevance;\n"
    done = subprocess.run(
        [binary, "-batch", "-bail"], input=setup + script, text=True, capture_output=True,
        cwd=SQL, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["queries", "1"]


# ----------------------------------------------------------------------------- worked examples

@pytest.mark.parametrize(
    ("sql", "expected", "tol"),
    [
        ("cg([0.99, 0.91, 0.83])", 2.73, TOL),
        ("cg([0.99, 0.94, 0.88])", 2.81, TOL),
        ("dcg([0.99, 0.94, 0.88], 3)", 2.02307396835717, TOL),
        ("dcg([0.99, 0.95, 0.8, 0.98, 0.97], gain := 'exp')", 2.7344299716685585, TOL),
        ("dcg([0.99, 0.95, 0.8, 0.98, 0.97])", 2.786693515822315, TOL),
        ("ndcg([0.99, 0.94, 0.74, 0.88, 0.71, 0.68], 5)", 0.9962906539247512, TOL),
        ("p([1, 0, 1, 1, 0, 1, 0, 0], 1)", 1.0, TOL),
        ("p([1, 0, 1, 1, 0, 1, 0, 0], 8)", 0.5, TOL),
        ("recall([1, 0, 1, 1, 0, 1, 0, 0], 1)", 0.25, TOL),
        ("f1([1, 0, 1, 1, 0, 1, 0, 0], 8)", 0.6667, 5e-5),
        ("ap([1, 0, 1, 1, 0, 1, 0, 0], 8)", 0.7708333333333333, TOL),
        ("dcg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0], 10, gain := 'exp')", 16.80260104782745, TOL),
        ("ndcg([3, 2, 3, 0, 0, 1, 2, 2, 3, 0], 10, gain := 'exp')", 0.8951337253357088, TOL),
        ("hit([0, 0, 1], 2) + 10 * success([0, 0, 1], 3)", 10.0, TOL),
    ],
)
def test_worked_examples(con: duckdb.DuckDBPyConnection, sql: str, expected: float, tol: float) -> None:
    assert one(con, sql) == pytest.approx(expected, abs=tol, rel=0)


def test_worked_means(con: duckdb.DuckDBPyConnection) -> None:
    lists = "[[0.99,0.94,0.88,0.89,0.72,0.65],[0.99,0.92,0.93,0.74,0.61,0.68],[0.99,0.96,0.81,0.73,0.76,0.69]]"
    got = one(con, f"avg(ndcg(l, 5)) FROM unnest({lists}) AS t(l)")
    assert got == pytest.approx(0.9961322104432755, abs=TOL, rel=0)
    mrr = one(con, "avg(rr(l)) FROM unnest([[0,0,1],[0,1,0],[1,0,0]]) AS t(l)")
    assert round(mrr, 4) == 0.6111


def test_bad_arguments_raise(con: duckdb.DuckDBPyConnection) -> None:
    for sql in ("ndcg([1, 0], 0)", "ndcg([1, 0], gain := 'cubic')", "rbp([1], p := 1.5)", "err([1], max := 0)"):
        with pytest.raises(duckdb.Error):
            one(con, sql)


# ----------------------------------------------------------------------------- equal to Polars

grades = st.one_of(
    st.integers(-2, 4).map(float),
    st.floats(-1.5, 4.0, allow_nan=False, width=32).map(float),
    st.just(0.0),
    st.none(),
)
lists = st.lists(st.lists(grades, max_size=9), min_size=1, max_size=6)
ks = st.one_of(st.none(), st.integers(1, 10))
rels = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]))


def options_for(name: str) -> st.SearchStrategy[dict[str, object]]:
    func = getattr(exprs, macros_scalar._EXPRS.get(name, name))
    measure = macros_scalar.REGISTRY[name]
    fields: dict[str, st.SearchStrategy[object]] = {}
    for opt in macros_scalar.options(func, measure):
        if opt.name == "k":
            fields["k"] = ks
        elif opt.choices is not None:
            fields[opt.name] = st.sampled_from(opt.choices)
        elif opt.name == "rel":
            fields["rel"] = rels
        elif opt.name == "p":
            fields["p"] = st.sampled_from([0.5, 0.8, 0.95])
        elif opt.name == "max":
            fields["max"] = st.one_of(st.none(), st.sampled_from([1.0, 2.5, 4.0]))
    return st.fixed_dictionaries(fields)


def sql_literal(value: object) -> str:
    return "NULL" if value is None else f"'{value}'" if isinstance(value, str) else repr(value)


NAMES = [name for name, _ in macros_scalar.SCALAR]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_macro_equals_polars(con: duckdb.DuckDBPyConnection, name: str, data: st.DataObject) -> None:
    rows = data.draw(lists, label="lists")
    opts = data.draw(options_for(name), label="options")
    func = getattr(exprs, macros_scalar._EXPRS.get(name, name))
    frame = pl.DataFrame({"id": range(len(rows)), "l": rows}, schema={"id": pl.Int64, "l": pl.List(pl.Float64)})
    expected = frame.select(pl.col("l").list.eval(func(pl.element(), **opts)).list.first()).to_series().to_list()
    args = ", ".join(["l", *(f"{k} := {sql_literal(v)}" for k, v in opts.items())])
    con.register("frame", frame.to_arrow())
    got = [r[0] for r in con.execute(f"SELECT {name}({args}) FROM frame ORDER BY id").fetchall()]
    for row, e, g in zip(rows, expected, got):
        assert g is not None and math.isclose(g, e, rel_tol=TOL, abs_tol=TOL), (name, opts, row, e, g)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    log=st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["q1", "q2", "q3"]), st.lists(st.integers(-1, 3), min_size=1, max_size=12)),
        min_size=1, max_size=6, unique_by=lambda t: (t[0], t[1]),
    ),
    k=st.integers(1, 10),
)
def test_table_macros_equal_evaluate(con: duckdb.DuckDBPyConnection, log: list, k: int) -> None:
    records = [
        {"model": m, "query": q, "item": f"d{i}", "position": i + 1, "relevance": g}
        for m, q, gs in log for i, g in enumerate(gs)
    ]
    frame = pl.DataFrame(records)
    metrics = [f"ndcg@{k}", "map", "mrr", f"p@{k}", f"r@{k}"]
    con.register("logs", frame.to_arrow())
    expected = rp.evaluate(frame, metrics, by="model")
    got = con.sql(f"FROM rank_eval(logs, metrics := {metrics}, by := ['model'])").pl()
    assert got["model"].to_list() == expected["model"].to_list()
    assert got["queries"].to_list() == expected["queries"].to_list()
    for name in metrics:
        for g, e in zip(got[name].to_list(), expected[name].to_list()):
            assert math.isclose(g, e, rel_tol=TOL, abs_tol=TOL), (name, g, e)
    per_query = rp.evaluate(frame, metrics, by="model", per_query=True)
    got_q = con.sql(f"FROM rank_eval_per_query('logs', metrics := {metrics}, by := ['model'])").pl()
    assert got_q.select("model", "query").rows() == per_query.select("model", "query").rows()
    for name in metrics:
        for g, e in zip(got_q[name].to_list(), per_query[name].to_list()):
            assert math.isclose(g, e, rel_tol=TOL, abs_tol=TOL), (name, g, e)
