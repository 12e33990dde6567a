"""A measure family's tables follow the run's id rule (``io.id_casts``), in every engine.

The rule for a run and its judgments: integers of different widths are compared as integers,
integers against text as text (``7`` is ``"7"``, so ``"07"`` is not ``7``), anything else is
refused.  A family's tables (subtopic judgments, a history, a catalogue, features) were read
as given: Polars raised its own ``SchemaError``, and DuckDB compared text with numbers its own
way (the run's ``"01"`` matched a judgment of item ``1`` for p_ia, not for p@k in the same
call).  The reference for each case is the same tables with their ids already cast by hand.
"""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.measures.diversity import AlphaNDCG, PIA

ENGINES = ["polars", "duckdb"]

RUN = pl.DataFrame({"model": ["m"] * 4 + ["n"] * 4, "query": ["1"] * 4 + ["2"] * 4,
                    "item": ["01", "2", "3", "4", "4", "3", "1", "5"], "position": [1, 2, 3, 4] * 2})
SUBTOPICS = pl.DataFrame({"query": [1, 1, 1, 2, 2], "subtopic": [1, 2, 2, 1, 2], "item": [1, 3, 4, 1, 5],
                          "relevance": [1, 1, 1, 2, 1]})
# the beyond-accuracy tables give every shown item a row: the run's "01" is item 1 there
RUN_B = RUN.with_columns(pl.col("item").replace("01", "1"))
HISTORY = pl.DataFrame({"query": [1, 1, 2, 3, 3, 3], "item": [1, 2, 1, 1, 3, 5]})
CATALOG = pl.DataFrame({"item": [1, 2, 3, 4, 5, 6]})
FEATURES = pl.DataFrame({"item": [1, 2, 3, 4, 5, 6, 7],
                         "vec": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [0.5, 0.5], [1.0, 2.0], [3.0, 1.0]]})


def _text(frame: pl.DataFrame) -> pl.DataFrame:
    """The rule done by hand: integer ids rendered as text."""
    return frame.with_columns(pl.col(c).cast(pl.String) for c in ("query", "item") if c in frame.columns)


def _beyond(history: pl.DataFrame, catalog: pl.DataFrame, features: pl.DataFrame) -> list:
    return [rp.arp(k=4, history=history), rp.novelty(k=4, history=history, unseen="zero"),
            rp.catalog_coverage(k=4, catalog=catalog), rp.ils(k=4, features=features),
            rp.ils(k=4, history=history, sim="cooccurrence"), rp.serendipity(k=4, history=history, features=features)]


@pytest.mark.parametrize("engine", ENGINES)
def test_subtopic_judgments_with_integer_ids_against_text_ids(engine: str) -> None:
    metrics = ["p@4", "alpha_ndcg@4", "p_ia@4", "strec@2"]
    got = rp.evaluate(RUN, metrics, qrels=SUBTOPICS, by="model", engine=engine, per_query=True)
    want = rp.evaluate(RUN, metrics, qrels=_text(SUBTOPICS), by="model", engine=engine, per_query=True)
    assert_frame_equal(got, want)
    assert got.filter(pl.col("model") == "m")["p_ia@4"][0] == 0.25  # "01" is not item 1: two pairs of eight
    on_spec = rp.evaluate(RUN, [AlphaNDCG(4, subtopics=SUBTOPICS), PIA(4, subtopics=SUBTOPICS)], by="model",
                          engine=engine, per_query=True)
    by_hand = rp.evaluate(RUN, [AlphaNDCG(4, subtopics=_text(SUBTOPICS)), PIA(4, subtopics=_text(SUBTOPICS))],
                          by="model", engine=engine, per_query=True)
    assert_frame_equal(on_spec, by_hand)


@pytest.mark.parametrize("engine", ENGINES)
def test_beyond_tables_with_integer_ids_against_text_ids(engine: str) -> None:
    got = rp.evaluate(RUN_B, _beyond(HISTORY, CATALOG, FEATURES), by="model", engine=engine)
    want = rp.evaluate(RUN_B, _beyond(_text(HISTORY), _text(CATALOG), _text(FEATURES)), by="model", engine=engine)
    assert_frame_equal(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_text_tables_against_integer_or_categorical_run_ids(engine: str) -> None:
    """A run of integers (or categoricals) with tables of text: the run is read as text."""
    ints = RUN_B.with_columns(pl.col("query").cast(pl.Int32), pl.col("item").cast(pl.Int64))
    tables = (_text(HISTORY), _text(CATALOG), _text(FEATURES))
    got = rp.evaluate(ints, _beyond(*tables), by="model", engine=engine)
    want = rp.evaluate(_text(ints), _beyond(*tables), by="model", engine=engine)
    assert_frame_equal(got, want)
    categorical = RUN_B.with_columns(pl.col("item").cast(pl.Categorical))
    got = rp.evaluate(categorical, _beyond(*tables), by="model", engine=engine)
    assert_frame_equal(got, rp.evaluate(RUN_B, _beyond(*tables), by="model", engine=engine))


@pytest.mark.parametrize("engine", ENGINES)
def test_float_ids_in_a_table_are_refused_naming_it(engine: str) -> None:
    floats = HISTORY.with_columns(pl.col("item").cast(pl.Float64))
    with pytest.raises(rp.RankPolarsError, match=r"^arp history: column 'item' is Float64 but the run's is String"):
        rp.evaluate(RUN, [rp.arp(k=4, history=floats)], by="model", engine=engine)
