"""Every kind of source, in both engines, gives trec_eval's numbers on its own test collection.

The run and judgments are trec_eval 10's ``results.test`` and ``qrels.test``; the expected
per-query values are trec_eval's (``expected_per_query.parquet``), never ours.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import rank_polars as rp
from rank_polars.errors import RankPolarsError

TREC = Path(__file__).resolve().parent / "data" / "conformance" / "trec_eval"
RUN_FILE, QRELS_FILE = TREC / "test" / "results.test", TREC / "test" / "qrels.test"
# trec_eval measure -> our name
MEASURES = {"ndcg": "ndcg", "ndcg_cut_10": "ndcg@10", "map": "map", "P_5": "p@5", "recip_rank": "mrr",
            "bpref": "bpref", "Rprec": "rprec", "recall_100": "r@100"}
ENGINES = ["polars", "duckdb"]


def _pairs(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


def _run_dict() -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for qid, _, doc, _, score, _ in _pairs(RUN_FILE):
        run.setdefault(qid, {})[doc] = float(score)
    return run


def _qrels_dict() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for qid, _, doc, rel in _pairs(QRELS_FILE):
        qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def _frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    run = _run_dict()
    qrels = _qrels_dict()
    r = pl.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                     schema=["query", "item", "score"], orient="row")
    j = pl.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                     schema=["query", "item", "relevance"], orient="row")
    return r, j


def _write(tmp: Path, name: str, df: pl.DataFrame) -> Path:
    kind = name.rsplit(".", 1)[-1]
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        df.write_csv(path)
    elif kind == "tsv":
        df.write_csv(path, separator="\t")
    else:
        df.write_parquet(path)
    return path


def _hive(tmp: Path, df: pl.DataFrame) -> Path:
    for q in df["query"].unique().to_list():
        _write(tmp, f"hive/query_group=g{q}/part.parquet", df.filter(query=q))
    return tmp / "hive"


# name -> (tmp folder -> (run source, qrels source))
SOURCES = {
    "TREC paths": lambda t: (str(RUN_FILE), QRELS_FILE),
    "TREC content under other names": lambda t: (
        _copy(RUN_FILE, t / "run.parquet"), _copy(QRELS_FILE, t / "judgments.dat")),
    "pytrec_eval dicts": lambda t: (_run_dict(), _qrels_dict()),
    "polars frames": lambda t: _frames(),
    "polars lazy frames": lambda t: tuple(f.lazy() for f in _frames()),
    "pandas frames": lambda t: tuple(f.to_pandas() for f in _frames()),
    "pandas with the query as index": lambda t: tuple(f.to_pandas().set_index("query") for f in _frames()),
    "pyarrow tables": lambda t: tuple(f.to_arrow() for f in _frames()),
    "pyarrow record batch readers": lambda t: tuple(
        pa.RecordBatchReader.from_batches(a.schema, a.to_batches()) for a in (f.to_arrow() for f in _frames())),
    "pyarrow datasets": lambda t: tuple(pads.dataset(f.to_arrow()) for f in _frames()),
    "parquet files": lambda t: (_write(t, "run.parquet", _frames()[0]), str(_write(t, "qrels.parquet", _frames()[1]))),
    "parquet glob and list": lambda t: (
        str(_write(t, "runs/a.parquet", _frames()[0].filter(query="301")).parent / "*.parquet")
        if _write(t, "runs/b.parquet", _frames()[0].filter(pl.col("query") != "301")) else None,
        [_write(t, "q/a.parquet", _frames()[1].head(100)), _write(t, "q/b.parquet", _frames()[1].slice(100))]),
    "hive folder": lambda t: (_hive(t, _frames()[0]), _frames()[1]),
    "csv and tsv": lambda t: (_write(t, "run.csv", _frames()[0]), _write(t, "qrels.tsv", _frames()[1])),
    "integer query ids in parquet, text in TREC qrels": lambda t: (
        _write(t, "run.parquet", _frames()[0].with_columns(pl.col("query").cast(pl.Int64))), QRELS_FILE),
    "integer query ids in a dict, text in a frame": lambda t: (
        {int(q): docs for q, docs in _run_dict().items()}, _frames()[1]),
}


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(src.read_bytes())
    return dst


@pytest.fixture(scope="module")
def expected() -> pl.DataFrame:
    table = pl.read_parquet(TREC / "expected_per_query.parquet")
    return table.filter(pl.col("measure").is_in(list(MEASURES))).select("query", "measure", "value")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(SOURCES))
def test_every_source_gives_trec_eval_numbers(tmp_path, expected, name, engine):
    metrics = list(MEASURES.values())
    run, qrels = SOURCES[name](tmp_path / "a")
    got = rp.evaluate(run, metrics, qrels=qrels, per_query=True, engine=engine)
    run, qrels = SOURCES[name](tmp_path / "b")  # a RecordBatchReader is read once
    means = rp.evaluate(run, metrics, qrels=qrels, engine=engine)
    assert got.height == 3
    checked = 0
    for query, measure, value in expected.iter_rows():
        name_ = MEASURES[measure]
        if query == "all":
            assert means[name_].item() == pytest.approx(value, abs=1e-9), (measure, query)
        else:
            row = got.filter(pl.col("query").cast(pl.String) == query)
            assert row[name_].item() == pytest.approx(value, abs=1e-9), (measure, query)
        checked += 1
    assert checked == 4 * len(MEASURES)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_query_with_an_empty_dict_of_judgments_is_not_evaluated(engine):
    # trec_eval: a query without judgments is not evaluated
    run = {"q1": {"a": 2.0, "b": 1.0}, "q10": {"a": 1.0}}
    qrels = {"q1": {"b": 1}, "q10": {}}
    with pytest.warns(rp.CoverageWarning):
        got = rp.evaluate(run, ["rr"], qrels=qrels, per_query=True, engine=engine)
    assert got.rows() == [("q1", 0.5)]


BAD_SOURCES = [
    ("a number", 42, ["cannot read a builtins.int", "expected a Polars DataFrame", "pandas", "pyarrow",
                      "a dict {query: {item: score or grade}}", "TREC run", "CSV/TSV"]),
    ("a set", {"a"}, ["cannot read a builtins.set"]),
    ("a dict of columns", {"query": ["q1"], "item": ["a"]}, ["maps to a list", "pl.DataFrame(your_dict)"]),
    ("a dict with text scores", {"q1": {"a": "high"}}, ["dict values must be numbers", "'high'"]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "source", "fragments"), BAD_SOURCES, ids=[b[0] for b in BAD_SOURCES])
def test_an_unknown_source_names_what_is_accepted(name, source, fragments, engine):
    with pytest.raises(RankPolarsError) as info:
        rp.evaluate(source, ["p@1"], qrels={"q1": {"a": 1}}, engine=engine)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_pandas_index_and_arrow_schemas_are_kept():
    frame = pd.DataFrame({"query": ["q1", "q1"], "item": ["a", "b"], "position": [1, 2], "relevance": [0, 1]})
    got = rp.evaluate(frame.set_index(["query", "item"]), ["rr"], per_query=True)
    assert got.rows() == [("q1", 0.5)]
