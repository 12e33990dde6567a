"""The dbt package (``dbt/``) built by real dbt (dbt-core with dbt-duckdb) against ``rp.evaluate``.

``dbt/integration_tests/`` is a dbt project that installs the package from its parent folder:
seeds of inputs (a generated log with score ties, unjudged items, judged queries a group never
ranked, a null market, custom column names, two grouping columns; judgments with their own
column names), one model per call of ``rank_polars.evaluate`` / ``evaluate_per_query``, and the
expected values in one long seed (``expected.csv``: model, keys, metric, expected), compared by a
data test at 1e-12, the same fixtures for every adapter (dbt-utils' layout).  Everything in it
is written by :func:`write_integration_tests` (``python -m tests.test_dbt``), the expected
values by ``rp.evaluate``; the tests check that the checked-in files are those, build the
project once in a temporary copy, and also read the built tables back against ``rp.evaluate``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.formula import dbt as generator

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dbt"
PROJECT = PACKAGE / "integration_tests"

# The log's and the judgments' own column names (rp.Schema roles -> names)
LOG = {"query": "search_id", "item": "sku", "position": "slot", "score": "score", "relevance": "grade"}
JUDGED = {"query": "sid", "item": "product", "relevance": "label"}
BY = ["engine", "market"]

METRICS = [
    "ndcg@10", "nDCG", "ndcg(gain=exp)@5", "ndcg_cut.10", "ndcg(discount=jarvelin)@5",
    "map", "ap@5", "ap(denom=min)@5", "gm_map", "mrr", "rr@3", "P@5", "P_5", "P(rel=2)@5",
    "p(relative=true)@5", "recall@10", "success@3", "hits@3", "f1@5", "fallout@10", "rprec", "rprec(mult=0.5)",
    "bpref", "err@10", "err(max=3)@10", "judged@10", "unj@5", "dcg@5", "idcg@5", "cg@5", "infap", "11pt_avg",
    "iprec@0.5", "set_p", "set_r", "set_ap", "utility", "num_q", "num_ret", "num_rel", "num_rel_ret",
    "num_nonrel_judged_ret", "bing", "g", "ndcg_rel", "rndcg", "gm_bpref",
]
RUN_METRICS = ["ndcg@10", "map", "mrr", "P@5", "recall@10", "err@10", "rprec", "ndcg(ideal=run)@5", "num_rel_ret"]

# The relations the models read: the log, and two views of it whose rankings are unique without
# one or both `by` columns (a ranking is one engine's, in one market, for one query)
VIEWS = {"search_log_us": "market = 'us'", "search_log_bm25_us": "market = 'us' AND engine = 'bm25'"}

# One model per call: (macro, keyword arguments).  A model's rows are keyed by its `by` columns
# (and the query column for evaluate_per_query).
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "judged_by_position": ("evaluate", {"metrics": METRICS, "judgments": True, "by": BY, "order": "position", "missing": "zero"}),
    "judged_by_score_skip": ("evaluate", {"metrics": METRICS, "judgments": True, "by": ["engine"], "order": "score",
                                              "missing": "skip", "log": "search_log_us"}),
    "log_labels": ("evaluate", {"metrics": RUN_METRICS, "judgments": False, "by": BY, "order": "position", "missing": "zero"}),
    "log_labels_by_score": ("evaluate", {"metrics": RUN_METRICS, "judgments": False, "by": None, "order": "score",
                                             "missing": "zero", "log": "search_log_bm25_us"}),
    "per_query_judged": ("evaluate_per_query", {"metrics": ["ndcg@10", "map", "fallout@10", "num_rel"],
                                                    "judgments": True, "by": BY, "order": "position", "missing": "zero"}),
    "per_query_log_labels": ("evaluate_per_query", {"metrics": ["ndcg@10", "mrr"], "judgments": False,
                                                        "by": ["engine"], "order": "score", "missing": "zero",
                                                        "log": "search_log_us"}),
    "no_by_named": ("evaluate", {"metrics": {"ndcg_10": "ndcg@10", "map": "map", "p_5": "P@5"}, "judgments": True,
                                     "by": None, "order": "position", "missing": "zero", "log": "search_log_bm25_us"}),
}


# ------------------------------------------------------------------------------- fixtures

def fixtures(seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The log and the judgments: 3 engines x 2 markets (one of them null for a few rows),
    14 queries, rankings of 1 to 9 items with scores rounded to one decimal (ties broken by the
    item id as text), items a query's judgments do not hold, judged queries a group never ranked,
    and a query ranked but never judged."""
    rng = np.random.default_rng(seed)
    queries = [f"s{q:02d}" for q in range(1, 15)]
    judged = queries[:12]  # s13 and s14 are ranked, never judged
    j_rows = []
    for q in judged:
        for i in rng.choice(20, size=int(rng.integers(1, 9)), replace=False):
            j_rows.append((q, f"sku-{i:02d}", int(rng.choice([0, 0, 1, 2, 3]))))
    grades = {(q, i): g for q, i, g in j_rows}
    rows = []
    for engine in ("bm25", "dense", "hybrid"):
        for market in ("us", "de", None):
            for q in queries:
                if market is None and q not in ("s01", "s02", "s13"):
                    continue  # the null market ranks three queries
                if rng.random() < 0.15:
                    continue  # a judged query this group never ranked
                items = rng.choice(20, size=int(rng.integers(1, 10)), replace=False)
                scores = np.round(rng.random(len(items)), 1)
                for position, (i, score) in enumerate(zip(items, scores), start=1):
                    item = f"sku-{i:02d}"
                    # the log's own labels: the judgment where there is one, else a grade of its own
                    grade = grades.get((q, item), int(rng.integers(0, 3)))
                    rows.append((engine, market, q, item, position, float(score), grade))
    log = pl.DataFrame(rows, schema=["engine", "market", *LOG.values()], orient="row")
    judgments = pl.DataFrame(j_rows, schema=list(JUDGED.values()), orient="row")
    return log, judgments


def _schema(judgments: bool) -> rp.Schema:
    return rp.Schema(**LOG, judgments=rp.Schema(**JUDGED) if judgments else None)


def reference(name: str, log: pl.DataFrame, judgments: pl.DataFrame) -> pl.DataFrame:
    """A model's rows computed by ``rp.evaluate`` (Polars), columns named as the model's."""
    macro, kw = MODELS[name]
    metrics = kw["metrics"]
    names = list(metrics.values()) if isinstance(metrics, dict) else list(metrics)
    view = kw.get("log")
    if view is not None:
        log = pl.SQLContext(search_log=log).execute(f"SELECT * FROM search_log WHERE {VIEWS[view]}", eager=True)
    out = rp.evaluate(
        log, names, qrels=judgments if kw["judgments"] else None, by=kw["by"], per_query=macro == "evaluate_per_query",
        missing=kw["missing"], order=kw["order"], schema=_schema(kw["judgments"]),
    )
    if isinstance(metrics, dict):
        out = out.rename({name: label for label, name in metrics.items()})
    return out


def keys(name: str) -> list[str]:
    macro, kw = MODELS[name]
    return [*(kw["by"] or []), *([LOG["query"]] if macro == "evaluate_per_query" else [])]


def labels(name: str) -> list[str]:
    metrics = MODELS[name][1]["metrics"]
    return list(metrics)  # a mapping: its keys, the output columns


def model_sql(name: str) -> str:
    """A model's SQL: the macro called with the log's and the judgments' own column names."""
    macro, kw = MODELS[name]
    metrics = kw["metrics"]
    args = [f"metrics={metrics!r}"]
    if kw["judgments"]:
        args.append("judgments=ref('judgments'), judgments_columns=" + repr(JUDGED))
    if kw["by"]:
        args.append(f"by={kw['by']!r}")
    args.append(f"query={LOG['query']!r}, item={LOG['item']!r}")
    args.append(f"{kw['order']}={LOG[kw['order']]!r}")
    args.append(f"relevance={LOG['relevance']!r}, missing={kw['missing']!r}")
    body = ",\n    ".join(args)
    log = kw.get("log", "search_log")
    return f"-- written by tests/test_dbt.py (python -m tests.test_dbt)\n{{{{ rank_polars.{macro}(ref({log!r}),\n    {body}) }}}}\n"


def expected_csv(log: pl.DataFrame, judgments: pl.DataFrame) -> str:
    """Every model's values in one long table: model, the key columns, metric, expected."""
    columns = ["model", *BY, LOG["query"], "metric", "expected"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for name in MODELS:
        frame = reference(name, log, judgments)
        for row in frame.iter_rows(named=True):
            for label in ["queries", *labels(name)] if MODELS[name][0] == "evaluate" else labels(name):
                value = row[label]
                cells = {c: row.get(c) for c in keys(name)}
                writer.writerow([name, *(cells.get(c) for c in [*BY, LOG["query"]]), label,
                                 "" if value is None else repr(float(value))])
    return out.getvalue()


def integration_files() -> dict[str, str]:
    """Every file of ``dbt/integration_tests`` this module writes, by its path there."""
    log, judgments = fixtures()
    files = {
        "seeds/search_log.csv": log.write_csv(),
        "seeds/judgments.csv": judgments.write_csv(),
        "seeds/expected.csv": expected_csv(log, judgments),
    }
    for name in MODELS:
        files[f"models/{name}.sql"] = model_sql(name)
    for view, where in VIEWS.items():
        files[f"models/{view}.sql"] = f"-- written by tests/test_dbt.py\nSELECT * FROM {{{{ ref('search_log') }}}} WHERE {where}\n"
    tests = []
    for name in MODELS:
        tests.append(f"  - name: {name}\n    data_tests:\n      - matches_expected:\n          arguments:\n"
                     f"            keys: {keys(name)!r}\n"
                     f"            metrics: {(['queries'] if MODELS[name][0] == 'evaluate' else []) + labels(name)!r}\n")
    files["models/schema.yml"] = "# written by tests/test_dbt.py (python -m tests.test_dbt)\nversion: 2\nmodels:\n" + "".join(tests)
    return files


def write_integration_tests(root: Path = PROJECT) -> None:
    for rel, text in integration_files().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# ------------------------------------------------------------------------------- the checked-in files

@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return generator.files()


def test_package_is_the_generated_one(generated: dict[str, str]) -> None:
    # the macros under dbt/macros/generated are what rank_polars.formula.dbt writes from the specs today
    got = {str(p.relative_to(PACKAGE)): p.read_text() for p in (PACKAGE / "macros" / "generated").rglob("*.sql")}
    stale = sorted(set(got) ^ set(generated))
    assert not stale, f"generated files added or removed: {stale}; run python -m rank_polars.formula.dbt dbt/"
    changed = sorted(rel for rel in generated if got[rel] != generated[rel])
    assert not changed, f"the dbt package drifted from its generator: {changed}; run python -m rank_polars.formula.dbt dbt/"


def test_readme_names_every_measure_the_package_computes(generated: dict[str, str]) -> None:
    lookup = generated["macros/generated/rp_measures.sql"]
    literal = lookup[lookup.index("return(") + len("return("):lookup.rindex(") }}")]
    measures = json.loads(re.sub(r"\bnone\b", "null", literal))["measures"]
    readme = (PACKAGE / "README.md").read_text()
    table = readme[readme.index("## Metric names"):readme.index("## How the SQL is made")]
    supported, refused = table.split("Not in the package")
    missing = [name for name in measures if f"`{name}`" not in supported]
    assert not missing, f"dbt/README.md does not list {missing}"
    wrong = [name for name in measures if f"`{name}`" in refused]
    assert not wrong, f"dbt/README.md says the package does not compute {wrong}"
    # every formula measure is either computed or said not to be
    unsaid = [cls.NAME for cls in generator.measures() if cls.NAME not in measures and f"`{cls.NAME}`" not in refused]
    assert not unsaid, f"dbt/README.md says nothing of {unsaid}"


def test_integration_project_is_the_written_one() -> None:
    # seeds, models and expected values are this module's (the expected values rp.evaluate's today)
    for rel, text in integration_files().items():
        path = PROJECT / rel
        assert path.is_file(), f"{rel} missing: run python -m tests.test_dbt"
        if rel.endswith("expected.csv"):
            _same_numbers(path.read_text(), text)
        else:
            assert path.read_text() == text, f"{rel} differs: run python -m tests.test_dbt"


def _same_numbers(got: str, want: str) -> None:
    a, b = list(csv.reader(io.StringIO(got))), list(csv.reader(io.StringIO(want)))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x[:-1] == y[:-1]
        assert (x[-1] == "") == (y[-1] == "")
        if x[-1] and x[-1] != y[-1]:
            assert math.isclose(float(x[-1]), float(y[-1]), rel_tol=1e-12, abs_tol=1e-12), (x, y)


def test_the_fixtures_have_what_they_promise() -> None:
    log, judgments = fixtures()
    ranked = log.select(["engine", "market", "search_id"]).unique()
    judged = set(judgments["sid"])
    # ties in score within a ranking, unjudged items, a null market, judged queries a group never ranked
    assert log.group_by(["engine", "market", "search_id", "score"]).len()["len"].max() > 1
    assert log.join(judgments, left_on=["search_id", "sku"], right_on=["sid", "product"], how="anti").height > 0
    assert log["market"].null_count() > 0
    groups = ranked.group_by(["engine", "market"]).agg(pl.col("search_id"))
    assert any(judged - set(qs) for qs in groups["search_id"])
    assert set(log["search_id"]) - judged


# ------------------------------------------------------------------------------- dbt build

def _dbt(project: Path, *args: str) -> tuple[Any, str]:
    """``dbt <args>`` in ``project``, in this process (dbt's startup is paid once per call): its
    result, and the text of the events it logged (where a compilation error's message is)."""
    from dbt.cli.main import dbtRunner

    said: list[str] = []
    cwd = os.getcwd()
    os.chdir(project)  # dbt reads packages and profiles relative to the working directory
    try:
        result = dbtRunner(callbacks=[lambda event: said.append(event.info.msg)]).invoke(
            [*args, "--quiet", "--no-use-colors", "--project-dir", str(project), "--profiles-dir", str(project)])
    finally:
        os.chdir(cwd)
    return result, "\n".join(said)


def _copy(tmp: Path, profile: str) -> Path:
    """The integration project in ``tmp`` (its target/ and dbt_packages/ stay out of the
    repository), installing the package from dbt/ as a local path, with this ``profile``."""
    project = tmp / "integration_tests"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb"))
    (project / "packages.yml").write_text(f"packages:\n  - local: {PACKAGE}\n")
    (project / "profiles.yml").write_text(
        f"rank_polars_integration_tests:\n  target: it\n  outputs:\n    it:\n{profile}")
    return project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The integration project built once (seeds, models, data tests) in a DuckDB file beside it."""
    pytest.importorskip("dbt.adapters.duckdb")
    tmp = tmp_path_factory.mktemp("dbt")
    project = _copy(tmp, f"      type: duckdb\n      path: {tmp / 'warehouse.duckdb'}\n      threads: 2\n")
    for command in ("deps", "build"):
        result, said = _dbt(project, command)
        assert result.success, f"dbt {command} failed: {result.exception}\n{said[-3000:]}"
    yield project


@pytest.fixture(scope="module")
def built(project: Path) -> Path:
    return project.parent / "warehouse.duckdb"


def test_dbt_build_passes_its_data_tests(built: Path) -> None:
    # the build (seeds, every model, the matches_expected test of each) succeeded; the tests ran
    import duckdb

    with duckdb.connect(str(built)) as con:  # dbt-duckdb holds it open in this process, read-write
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert set(MODELS) <= tables


def _assert_equals_evaluate(name: str, got: pl.DataFrame) -> None:
    """A model's table against rp.evaluate on the same seeds: the same rows and columns, the
    values at 1e-12, a null where rp.evaluate leaves a value out."""
    log, judgments = fixtures()
    want = reference(name, log, judgments)
    key = keys(name)
    columns = [c for c in want.columns if c not in key]
    assert sorted(got.columns) == sorted([*key, *columns])
    assert got.height == want.height
    if key:
        got, want = got.sort(key, nulls_last=True), want.sort(key, nulls_last=True)
    for column in columns:
        for a, b in zip(got[column].to_list(), want[column].to_list()):
            assert (a is None) == (b is None), (name, column, a, b)
            if a is not None:
                assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), (name, column, a, b)
    for column in key:
        assert got[column].cast(pl.String).to_list() == want[column].cast(pl.String).to_list()


@pytest.mark.parametrize("name", list(MODELS))
def test_model_equals_evaluate(built: Path, name: str) -> None:
    # each built table read back, against rp.evaluate on the same seeds, at 1e-12
    import duckdb

    with duckdb.connect(str(built)) as con:
        got = con.sql(f'SELECT * FROM "{name}"').pl()
    _assert_equals_evaluate(name, got)


def test_the_data_test_fails_on_a_wrong_value(project: Path, built: Path) -> None:
    # the package's data test is not vacuous: one value of a built table moved by 1e-9 fails it
    import duckdb

    with duckdb.connect(str(built)) as con:
        con.execute('CREATE TABLE no_by_named_kept AS SELECT * FROM no_by_named')
        con.execute('UPDATE no_by_named SET "map" = "map" + 1e-9')
    try:
        result, said = _dbt(project, "test", "--select", "no_by_named")
        assert not result.success
        assert [r.status for r in result.result] == ["fail"], said[-2000:]
    finally:  # the table as built, for the other tests
        with duckdb.connect(str(built)) as con:
            con.execute('CREATE OR REPLACE TABLE no_by_named AS SELECT * FROM no_by_named_kept')
            con.execute('DROP TABLE no_by_named_kept')


# the models Spark builds: a few metrics each (Spark plans one statement per model, and its
# planning time grows with the metrics' blocks: the 47-metric models took minutes on two cores)
SPARK_MODELS = ["per_query_judged", "per_query_log_labels", "no_by_named"]


def test_spark_session_builds_the_same_numbers(spark_session: Any, tmp_path: Path) -> None:
    # dbt-spark in session mode, on this process's Spark session (its getOrCreate finds the suite's):
    # the same seeds and models, the data tests, and the tables read back against rp.evaluate
    pytest.importorskip("dbt.adapters.spark", reason="dbt-spark is not installed: pip install 'dbt-spark[session]>=1.11,<1.12'")
    project = _copy(tmp_path, "      type: spark\n      method: session\n      host: NA\n      schema: rp_dbt_it\n"
                              "      threads: 1\n")
    spark_session.sql("DROP SCHEMA IF EXISTS rp_dbt_it CASCADE")  # the session is the suite's: start clean
    select = ["expected", *(f"+{name}" for name in SPARK_MODELS)]
    # the tables in tmp_path, not in the session's spark-warehouse/ (where a second run would find them)
    where = f"{{location_root: '{tmp_path / 'warehouse'}'}}"
    for command in (["deps"], ["build", "--indirect-selection", "cautious", "--vars", where, "--select", *select]):
        result, said = _dbt(project, *command)
        assert result.success, f"dbt {command[0]} on Spark failed: {result.exception}\n" + "\n".join(l for l in said.splitlines() if "rror" in l)[-3000:]
    assert sum(r.node.resource_type == "test" for r in result.result) == len(SPARK_MODELS)
    for name in SPARK_MODELS:
        got = pl.from_arrow(spark_session.table(f"rp_dbt_it.`{name}`").toArrow())
        # dbt-spark's session seeds load an empty cell as the text 'None' (the null market is a
        # group named 'None' there, in the seeds and so in the models): read it back as the null
        _assert_equals_evaluate(name, got.with_columns(pl.col(pl.String).replace("None", None)))
    spark_session.sql("DROP SCHEMA rp_dbt_it CASCADE")


BAD = {
    "unknown": ("['ndcg@10', 'ndgc@10']", "metric 'ndgc@10': unknown metric"),
    "combination": ("['ndcg(gain=exp, discount=jarvelin)@10']", "does not compute ndcg with discount=jarvelin and gain=exp"),
    "cutoff": ("['map@0']", "cutoff k must be a positive integer, got 0"),
    "number": ("['P(rel=two)@5']", "parameter rel=two is not a number"),
    "range": ("['rprec(mult=-1)']", "parameter mult=-1 must be >= 0.0"),  # as the spec refuses it
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_metric_is_refused_when_dbt_compiles(project: Path, case: str) -> None:
    # refused by the package's parser with the metric named, not SQL that fails (or computes) later
    metrics, message = BAD[case]
    sql = f"{{{{ rank_polars.evaluate(ref('search_log'), metrics={metrics}, query='search_id', item='sku', " \
          "position='slot', relevance='grade') }}"
    result, said = _dbt(project, "compile", "--inline", sql)
    assert not result.success
    assert message in said, said[-2000:]


if __name__ == "__main__":
    write_integration_tests()
