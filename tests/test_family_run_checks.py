"""A call of measure families alone checks the run as a call with nDCG does.

By default the ranking checks (null or out-of-range positions, a position or an item shown twice)
look at the rows that can change a value: for the plan's metrics, the relevant or judged rows.
A family reads other rows: a CTR counts every shown row, a diversity measure the rows relevant to
a subtopic (the plan saw one judgment per query), a beyond-accuracy measure every shown item.
Before, these calls skipped the checks and printed ``inf``, values above 1 and CTRs over
repeated rows; the same inputs with ``ndcg@3`` added were refused.  (Found by an adversarial
pass over the families, November 2026.)
"""

from __future__ import annotations

import polars as pl
import pytest

import rank_polars as rp

LOG = pl.DataFrame({"model": ["m"] * 4, "query": ["q1"] * 4, "item": ["a", "b", "c", "d"], "position": [1, 2, 3, 4],
                    "click": [1, 0, 1, 0]})
SUBTOPICS = pl.DataFrame({"query": ["q1"] * 3, "subtopic": [1, 2, 2], "item": ["a", "c", "x"], "relevance": [1, 1, 1]})
HISTORY = pl.DataFrame({"query": ["q1", "q2", "q2"], "item": ["a", "a", "c"]})


def _row(log: pl.DataFrame, target: str, **values: object) -> pl.DataFrame:
    """``log`` with the row of item ``target`` changed."""
    return log.with_columns(**{c: pl.when(pl.col("item") == target).then(pl.lit(v)).otherwise(pl.col(c))
                               for c, v in values.items()})


# each change touches a row the family reads but the plan would not check: an unclicked row
# ("d", and "d" shown as "b") for the clicks; a row relevant to a subtopic ("c", shown as "a") for
# diversity, whose plan sees one judgment per query; any shown row for beyond accuracy
BAD = {
    "a position 0": (lambda log, t, other: _row(log, t, position=0), "positions must be >= 1"),
    "a null position": (lambda log, t, other: _row(log, t, position=None), "null positions"),
    "two rows at one position": (lambda log, t, other: _row(log, t, position=2), "duplicate positions within a ranking"),
    "an item shown twice": (lambda log, t, other: _row(log, t, item=other), "duplicate items within a ranking"),
}
FAMILIES = {
    "clicks": (lambda: ["ctr@3", "clicks@4", "click_rr"], {}, ("d", "b")),
    "diversity": (lambda: ["alpha_ndcg@3", "nnrbp", "map_ia"], {"qrels": SUBTOPICS}, ("c", "a")),
    "beyond accuracy": (lambda: [rp.arp(k=3, history=HISTORY), rp.ils(k=3, history=HISTORY, sim="cooccurrence")], {},
                        ("c", "a")),
}


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("bad", list(BAD))
def test_families_alone_refuse_what_ndcg_refuses(engine: str, family: str, bad: str) -> None:
    change, message = BAD[bad]
    metrics, kwargs, (target, other) = FAMILIES[family]
    with pytest.raises(rp.DataError, match=message):
        rp.evaluate(change(LOG, target, other), metrics(), by="model", engine=engine, **kwargs)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_repeat_below_every_cutoff_changes_nothing_and_passes(engine: str) -> None:
    """The repeats are looked for down to the deepest cutoff of the call (a family at k reads
    the top k): an item shown again at position 5 leaves ctr@3 and arp@3 as they were."""
    deeper = pl.concat([LOG, LOG.filter(pl.col("item") == "a").with_columns(position=pl.lit(5, pl.Int64))])
    metrics = ["ctr@3", "clicks@4", rp.arp(k=3, history=HISTORY)]
    got = rp.evaluate(deeper, metrics, by="model", engine=engine)
    assert got.rows() == rp.evaluate(LOG, metrics, by="model", engine=engine).rows()
    with pytest.raises(rp.DataError, match="duplicate items within a ranking"):
        rp.evaluate(deeper, [*metrics, "click_rr"], by="model", engine=engine)  # click_rr reads the whole list


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_positions_the_proof_cannot_settle_are_counted_exactly(engine: str) -> None:
    """Over every row, repeated positions are settled by a proof that a ranking numbers its rows
    lo..hi once each; a ranking it cannot prove (a gap, a repeat) gets an exact count down to
    the call's deepest cutoff: a gap or a position repeated below the cutoff passes, the same
    repeat read by a whole-list measure is refused, as is one inside the cutoff beside a gap."""
    metrics = ["ctr@3", rp.arp(k=3, history=HISTORY)]
    gap = _row(LOG, "d", position=7)
    assert rp.evaluate(gap, metrics, by="model", engine=engine).rows() == \
        rp.evaluate(LOG, metrics, by="model", engine=engine).rows()
    below = pl.concat([gap, gap.filter(pl.col("item") == "d").with_columns(item=pl.lit("e"))])  # two rows at 7
    rp.evaluate(below, metrics, by="model", engine=engine)
    with pytest.raises(rp.DataError, match="duplicate positions within a ranking"):
        rp.evaluate(below, [*metrics, "click_rr"], by="model", engine=engine)
    inside = _row(gap, "c", position=2)  # 1, 2, 2, 7
    with pytest.raises(rp.DataError, match=r"duplicate positions within a ranking \(1 repeated row in 1 ranking"):
        rp.evaluate(inside, metrics, by="model", engine=engine)
