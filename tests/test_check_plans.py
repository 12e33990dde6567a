"""The cheap forms of the default checks are exact: the DuckDB engine's proof that a ranking's
positions are distinct (sql_engine.positions_distinct_sql) and the semi-join it spares.

Expected values are worked out by hand below; the proof is compared with Python's own
``len(set(positions)) == len(positions)``.
"""

from __future__ import annotations

import warnings

import duckdb
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.engines import duckdb_engine
from rank_polars.engines.sql_engine import POS_TOP, positions_distinct_sql, quote
from rank_polars.errors import DataError
from rank_polars.plan import RANK

ENGINES = ["polars", "duckdb"]
TOP = POS_TOP  # the deepest position the proof covers (1024)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        return fn(*args, **kwargs)


def ranking(positions: list[int], relevant: dict[int, int] | None = None, query: str = "q1") -> pl.DataFrame:
    """One ranking: item i{k} at positions[k], relevant where ``relevant`` maps a row index to 1."""
    relevant = relevant or {}
    return pl.DataFrame({
        "query": [query] * len(positions),
        "item": [f"i{k}" for k in range(len(positions))],
        "position": positions,
        "relevance": [relevant.get(k, 0) for k in range(len(positions))],
    })


PROOF_CASES = [
    ("1..10", list(range(1, 11))),
    ("63..65 distinct", [62, 63, 64, 65]),
    ("63 twice", [63, 63, 64]),
    ("64 twice", [1, 64, 64]),
    ("1 and 65", [1, 65]),
    ("1..1024", list(range(1, TOP + 1))),
    ("1024 twice", [TOP, TOP]),
    ("beyond 1024", [1, TOP + 1]),
    ("position 0", [0, 1]),
    ("negative", [-62, 1]),
    ("gaps", [3, 70, 700]),
    ("reversed with a repeat", [900, 5, 899, 5]),
]


@pytest.mark.parametrize("positions", [c[1] for c in PROOF_CASES], ids=[c[0] for c in PROOF_CASES])
def test_the_position_proof_holds_exactly_when_positions_are_distinct_and_in_range(positions):
    con = duckdb.connect()
    con.register("t", pl.DataFrame({RANK: positions}, schema={RANK: pl.Int64}).to_arrow())
    proven = con.sql(f"SELECT {positions_distinct_sql()} FROM t").fetchall()[0][0]
    expected = len(set(positions)) == len(positions) and min(positions) >= 1 and max(positions) <= TOP
    assert proven == int(expected)


def test_the_position_proof_is_false_with_a_null_position():
    con = duckdb.connect()
    con.register("t", pl.DataFrame({RANK: [1, None, 2]}, schema={RANK: pl.Int64}).to_arrow())
    assert con.sql(f"SELECT {positions_distinct_sql()} FROM t").fetchall()[0][0] == 0


def _metric_sql(monkeypatch, log: pl.DataFrame, **kwargs) -> str:
    """The DuckDB engine's last statement (the metric pass) for ``log``."""
    seen: list[str] = []
    original = duckdb_engine.DuckDBEngine.query

    def query(self, sql):
        seen.append(sql)
        return original(self, sql)

    monkeypatch.setattr(duckdb_engine.DuckDBEngine, "query", query)
    quiet(rp.evaluate, log, ["rr"], engine="duckdb", **kwargs)
    return seen[-1]


def test_a_proven_ranking_needs_no_semi_join_and_an_unproven_one_gets_it(monkeypatch):
    clean = pl.concat([ranking([1, 2, 3], {1: 1}), ranking([1, 2], {0: 1}, query="q2")])
    assert "__rp_rep_rank_dup" not in _metric_sql(monkeypatch, clean)
    # a repeat of two non-relevant rows (harmless) leaves the proof open: the exact check runs
    harmless = pl.concat([ranking([1, 2, 2], {0: 1}), ranking([1, 2], {0: 1}, query="q2")])
    assert "__rp_rep_rank_dup" in _metric_sql(monkeypatch, harmless)
    # checks="fast" does not look for repeats
    assert "__rp_rep_rank_dup" not in _metric_sql(monkeypatch, harmless, checks="fast")


# (id, log, rr by hand): rankings the proof cannot clear, whose repeats change nothing
HARMLESS = [
    ("two non-relevant rows share a position", ranking([1, 2, 2, 3], {3: 1}), 1 / 3),
    ("deeper than the proof, relevant at 1050", ranking(list(range(1, 1101)), {1049: 1}), 1 / 1050),
    ("deeper, with a harmless repeat", ranking([*range(1, 1101), 1100], {1049: 1}), 1 / 1050),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("log", "rr"), [c[1:] for c in HARMLESS], ids=[c[0] for c in HARMLESS])
def test_a_ranking_the_proof_cannot_clear_is_checked_exactly(log, rr, engine):
    out = quiet(rp.evaluate, log, ["rr", "p@1"], engine=engine)
    assert out["rr"][0] == pytest.approx(rr, abs=1e-12)
    assert out["p@1"][0] == 0.0


# (id, log): a relevant row shares its position with another row: refused, proof or not
REFUSED = [
    ("at position 1", ranking([1, 1, 2], {0: 1})),
    ("at position 64", ranking([*range(1, 65), 64], {63: 1})),
    ("deeper than the proof", ranking([*range(1, 1101), 1050], {1049: 1})),
    ("in the second of two rankings", pl.concat([ranking([1, 2], {0: 1}), ranking([1, 2, 2], {1: 1}, query="q2")])),
]


@pytest.mark.parametrize("labels", ["run labels", "qrels"])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log", [c[1] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_repeat_at_a_relevant_position_is_refused_whatever_the_depth(log, engine, labels):
    kwargs = {}
    if labels == "qrels":
        kwargs["qrels"] = log.filter(pl.col("relevance") > 0).drop("position")
        log = log.drop("relevance")
    with pytest.raises(DataError, match=r"'position': duplicate positions within a ranking \(1 rows in 1 rankings\)"):
        quiet(rp.evaluate, log, ["rr"], engine=engine, **kwargs)


def test_quote_is_what_the_proof_reads():
    # the proof reads the internal rank column by its quoted name (a rename would break it silently)
    assert quote(RANK) in positions_distinct_sql()
