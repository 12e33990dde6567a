"""The cheap forms of the default checks are exact: the DuckDB engine's proof that a ranking's
positions are distinct (sql_engine.positions_distinct_sql), the Polars engine's randomized
proof (rank_polars.proof, wrong with probability 2^-64 per ranking), and the semi-join they
spare.

Expected values are worked out by hand below; the proof is compared with Python's own
``len(set(positions)) == len(positions)``.
"""

from __future__ import annotations

import warnings

import duckdb
import polars as pl
import pytest

import rank_polars as rp
from rank_polars import proof, validate
from rank_polars.engines import duckdb_engine
from rank_polars.engines.sql_engine import POS_TOP, positions_distinct_sql, quote
from rank_polars.errors import DataError
from rank_polars.plan import N_RET, RANK

ENGINES = ["polars", "duckdb"]
TOP = POS_TOP  # the deepest position the proof covers (127)


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
    ("1..127", list(range(1, TOP + 1))),
    ("127 twice", [TOP, TOP]),
    ("beyond 127", [1, TOP + 1]),
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


# the Polars proof needs the positions to fill lo..hi: gaps leave it open (the exact count runs)
POLARS_CASES = [
    *PROOF_CASES,
    ("1..1100, Polars covers deeper", list(range(1, 1101))),
    ("deepest covered", list(range(proof.DEPTH - 2, proof.DEPTH + 1))),
    ("one beyond", [proof.DEPTH + 1]),
    ("1..8 with the same sum and sum of squares", [1, 1, 4, 5, 5, 6, 6, 8]),
    ("one row", [7]),
    ("1..3 shuffled", [3, 1, 2]),
]


def _polars_proven(positions: list[int | None], draw: proof.PositionProof | None = None) -> bool:
    draw = draw or proof.PositionProof()
    rows = pl.LazyFrame({"q": ["q1"] * len(positions), RANK: positions}, schema={"q": pl.String, RANK: pl.Int64})
    stats = draw.with_word(rows).group_by("q").agg(pl.len().alias(N_RET), *draw.aggs()).collect()
    return draw.unproven(stats, ["q"]).height == 0


@pytest.mark.parametrize("positions", [c[1] for c in POLARS_CASES], ids=[c[0] for c in POLARS_CASES])
def test_the_polars_proof_holds_exactly_for_distinct_positions_filling_their_range(positions):
    dense = max(positions) - min(positions) + 1 == len(positions)
    expected = len(set(positions)) == len(positions) and dense and min(positions) >= 1 and max(positions) <= proof.DEPTH
    assert _polars_proven(positions) == expected


def test_the_polars_proof_never_clears_a_repeat_over_many_draws():
    # each draw of the words is independent: a repeat passes one with probability 2^-64
    for _ in range(200):
        assert not _polars_proven([1, 2, 2, 4])
    assert _polars_proven([1, None, 2]) is False


def test_the_polars_engine_counts_repeats_only_in_rankings_the_proof_leaves_open(monkeypatch):
    seen: list[tuple[list[str], pl.DataFrame | None]] = []
    original = validate.repeats_polars

    def spy(run, contributing, keys, names, shown=None, unproven=None):
        seen.append((list(names), unproven))
        return original(run, contributing, keys, names, shown, unproven)

    monkeypatch.setattr(validate, "repeats_polars", spy)
    monkeypatch.setattr("rank_polars.engines.polars_engine.repeats_polars", spy)
    clean = pl.concat([ranking([1, 2, 3], {1: 1}), ranking([1, 2], {0: 1}, query="q2")])
    quiet(rp.evaluate, clean, ["rr"])
    # every ranking proven: positions are not looked up again (the items are: labels in the run)
    (names, _), = seen
    assert names == ["item_dup"]
    seen.clear()
    harmless = pl.concat([ranking([1, 2, 2], {0: 1}), ranking([1, 2], {0: 1}, query="q2")])
    out = quiet(rp.evaluate, harmless, ["rr"], per_query=True)
    assert out["rr"].to_list() == [1.0, 1.0]
    (names, unproven), = seen
    assert names == ["rank_dup", "item_dup"]
    assert unproven is not None and unproven.to_series(-1).to_list() == ["q1"]


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
    with pytest.raises(DataError, match=r"'position': duplicate positions within a ranking \(1 repeated row in 1 ranking, "):
        quiet(rp.evaluate, log, ["rr"], engine=engine, **kwargs)


def test_quote_is_what_the_proof_reads():
    # the proof reads the internal rank column by its quoted name (a rename would break it silently)
    assert quote(RANK) in positions_distinct_sql()
