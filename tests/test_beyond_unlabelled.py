"""A list of what was shown, without labels (``user, item, position``: the usual recommender
output), evaluates with the measures of what is shown alone (``Measure.NEEDS_LABELS``), in
both engines; every shown row then counts as relevant, as recommenders assumes when a log
carries no relevance (its ``serendipity`` with ``col_relevance=None``).  A measure that reads
labels still asks for them."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.errors import RankPolarsError

LOG = pl.DataFrame({"model": ["a", "a", "a", "b", "b", "b", "b"], "user": [1, 1, 2, 1, 1, 2, 2],
                    "item": ["x", "y", "x", "x", "z", "w", "y"], "position": [1, 2, 1, 1, 2, 1, 2]})
HISTORY = pl.DataFrame({"user": [1, 2, 3, 3, 2], "item": ["x", "y", "x", "z", "w"]})
FEATURES = pl.DataFrame({"item": ["x", "y", "z", "w"], "category": ["a", "b", "a", "c"]})


def measures() -> list:
    return [rp.arp(k=2, history=HISTORY), rp.aplt(k=2, history=HISTORY), rp.aclt(k=2, history=HISTORY),
            rp.diversity(k=2, history=HISTORY, sim="cooccurrence"), rp.ils(k=2, features=FEATURES),
            rp.novelty(k=2, history=HISTORY), rp.serendipity(k=2, history=HISTORY, features=FEATURES),
            rp.entropy(k=2), "gini@2", "catalog_coverage@2", "exposure_gini@2"]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_log_without_labels_counts_every_shown_row(engine: str) -> None:
    got = rp.evaluate(LOG, measures(), by="model", query="user", engine=engine).sort("model")
    labelled = rp.evaluate(LOG.with_columns(relevance=pl.lit(1)), measures(), by="model", query="user",
                           engine=engine).sort("model")
    assert_frame_equal(got, labelled)
    # the labels matter where a measure reads them: serendipity of a log labelled 0 is 0
    zero = rp.evaluate(LOG.with_columns(relevance=pl.lit(0)), [rp.serendipity(k=2, history=HISTORY, features=FEATURES)],
                       by="model", query="user", engine=engine)
    assert zero[zero.columns[-1]].to_list() == [0.0, 0.0]
    assert got[got.columns[-5]].to_list() != [0.0, 0.0]  # serendipity without labels: rel 1


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("metric", ["ndcg@2", rp.epc(k=2, history=HISTORY)])
def test_a_measure_that_reads_labels_still_asks_for_them(engine: str, metric) -> None:
    with pytest.raises(RankPolarsError, match="column 'relevance' .*not found"):
        rp.evaluate(LOG, ["gini@2", metric], by="model", query="user", engine=engine)
