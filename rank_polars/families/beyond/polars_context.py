"""What the beyond-accuracy measures of the Polars engine share
(:mod:`rank_polars.families.beyond.polars`): the call's :class:`Ctx` (its frames, each
measure's top rows, the history with the check of its ids, the catalogue, the labels), the
names of the columns the measures make, an item's popularity and the short head, the check of
shown items missing from a table and the messages it and the id check raise (the SQL engine's
words), and the exact sum of fractions.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from rank_polars.engines.base import FamilyFrames
from rank_polars.errors import DataError
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import GRADE, ITEM, Q, RANK
from rank_polars.families.beyond.checks import ID_DIGITS, ID_SPACE, catalogue


POP, REL, DIM, W = "__rp_pop", "__rp_rel", "__rp_dim", "__rp_w"
HEAD_FLAG, CAT = "__rp_head", "__rp_cat"


class Ctx:
    """What the measures of one call share: the frames, the top rows per cutoff, the checked tables."""

    def __init__(self, frames: FamilyFrames, checked: dict[str, dict[str, Any]]) -> None:
        self.frames, self.checked = frames, checked
        self.keys, self.groups = frames.keys, frames.groups
        lists = frames.universe.lazy().select(self.keys)
        self.run = frames.run.join(lists, on=self.keys, how="semi", nulls_equal=True)
        self.matched: set[int] = set()  # the history tables found to share an item with the log

    def top(self, spec: Beyond) -> pl.LazyFrame:
        run = self.run if spec.k is None else self.run.filter(pl.col(RANK) <= spec.k)
        return run

    def history(self, spec: Beyond) -> pl.LazyFrame:
        return self.frames.source(spec, "history").select(Q, ITEM)

    def popular(self, label: str, spec: Beyond) -> pl.LazyFrame:
        """The history, refused when items of the log match its items only once their ids are
        written alike (:func:`unmatched_message`); checked once per history table of the call."""
        history = self.history(spec)
        key = id(spec.sources.get("history"))
        # integer ids on both sides (the id rule reads the history's as the run's: text on either
        # side makes both text) cannot be written two ways: nothing to compare (0.4 s at 20M rows)
        if key not in self.matched and self.frames.run.collect_schema()[ITEM].is_integer():
            self.matched.add(key)
        if key not in self.matched:
            # the items the measure reads (the top k), not every row of a large log
            logged, past = self.top(spec).select(ITEM).unique(), history.select(ITEM).unique()
            # only the ids found on one side alone are rewritten and compared (few in a sound pipeline)
            canon = pl.col(ITEM).cast(pl.String).str.strip_chars(ID_SPACE)
            digits = canon.str.split(".").list.first().str.strip_chars_start("0").replace("", "0")  # as the SQL's
            canon = pl.when(canon.str.contains(ID_DIGITS)).then(digits).otherwise(canon)
            only_log = logged.join(past, on=ITEM, how="anti").with_columns(canon.alias("__rp_c"))
            only_past = past.join(logged, on=ITEM, how="anti").select(canon.alias("__rp_c"), pl.col(ITEM).alias("__rp_h"))
            pair = (pl.col(ITEM).cast(pl.String) + " as " + pl.col("__rp_h").cast(pl.String)).alias("__rp_pair")
            pairs = only_log.join(only_past, on="__rp_c").select(ITEM, pair).collect()
            if pairs.height:
                raise DataError(unmatched_message(label, pairs[ITEM].n_unique(), sorted(pairs["__rp_pair"])[:5]))
            self.matched.add(key)
        return history

    def items(self, spec: Beyond) -> pl.LazyFrame:
        """The catalogue: ``catalog=``, else the history's distinct items, else the log's
        (every version, every rank: a name such as ``"gini@10"`` carries no table)."""
        name = catalogue(spec)
        if name == "log":
            return self.frames.run.select(ITEM).unique()
        return self.frames.source(spec, name).select(ITEM).unique()

    def labelled(self, top: pl.LazyFrame) -> pl.LazyFrame:
        """``REL``: 1.0 for a relevant row: the judgments' grade when there are judgments (with
        ``labels="run"`` the run's labels agree with them on every relevant row: checked), else
        the run's label."""
        qrels = self.frames.qrels
        if qrels is None:
            return top.with_columns((pl.col(GRADE) > 0).cast(pl.Float64).alias(REL))
        grades = qrels.group_by(Q, ITEM).agg(pl.col(GRADE).max().alias("__rp_grade"))
        joined = top.join(grades, on=[Q, ITEM], how="left")
        return joined.with_columns((pl.col("__rp_grade").fill_null(0) > 0).cast(pl.Float64).alias(REL))

    def relevant(self) -> pl.LazyFrame:
        """(keys, ``ITEM``): the relevant items of each evaluated list (all its judgments, or
        the relevant rows of the whole list when the run carries the labels)."""
        if self.frames.qrels is not None:
            rel = self.frames.qrels.filter(pl.col(GRADE) > 0).select(Q, ITEM).unique()
            lists = self.frames.universe.lazy().select(self.keys)
            return lists.join(rel, on=Q)
        return self.run.filter(pl.col(GRADE) > 0).select(*self.keys, ITEM).unique()


def popularity(history: pl.LazyFrame, users: bool = False) -> pl.LazyFrame:
    """(``ITEM``, ``POP``): history rows per item; ``users``: distinct users (queries) per item."""
    count = pl.col(Q).n_unique() if users else pl.len()
    return history.group_by(ITEM).agg(count.cast(pl.Float64).alias(POP))


def short_head(history: pl.LazyFrame, head: float) -> pl.LazyFrame:
    """(``ITEM``): the most popular items (ties by item id) until they make up ``head`` of the
    history's rows: an item is in while the rows before it are fewer than ``head`` x rows (Elliot)."""
    pop = popularity(history).sort([POP, ITEM], descending=[True, False])
    before = pl.col(POP).cum_sum() - pl.col(POP)
    return pop.filter(before < head * pl.col(POP).sum()).select(ITEM)


def missing_items(label: str, shown: pl.LazyFrame, table: pl.LazyFrame, what: str, consequence: str) -> None:
    """Raise when shown items have no row in ``table`` (the same message as the SQL check)."""
    absent = shown.select(ITEM).unique().join(table.select(ITEM).unique(), on=ITEM, how="anti").collect()
    if absent.height:
        raise DataError(missing_message(label, absent.height, sorted(map(str, absent[ITEM].to_list())), what, consequence))


def missing_message(label: str, n: int, some: list[str], what: str, consequence: str) -> str:
    return (f"{label}: {n} shown items have no row in the {what} table, e.g. "
            f"{', '.join(repr(s) for s in some[:5])}: {consequence}")


def unmatched_message(label: str, n: int, pairs: list[str]) -> str:
    """Items of the log without a row in the history that match one of its items once both ids
    are written alike (spaces around, leading zeros, a ".0": ``ID_DIGITS``): "7" against "007"
    or "7.0" (a CSV export, a float column written out).  By the id rule they differ, so each
    would count as never seen (popularity 0, the long tail, no co-occurrence), silently; a
    history whose items are simply other items (cold items) is read as given.  The same message
    as the SQL check (``beyond_sql.check_matched``)."""
    return (f"{label}: {n} items of the log have no row in the history table but match one of its items once the "
            f"ids are written alike, e.g. {', '.join(repr(s) for s in pairs)}: each would count as never seen; "
            "write the ids one way (by the id rule 7 is '7', not '007' or '7.0')")


def exact_sum(values: pl.Expr) -> pl.Expr:
    """The sum of ``values`` below 100 in magnitude (normalised vectors' components, cosine
    weights), exact whatever the order: as Decimal(18, 16) (each term rounded to 1e-16, a few
    ulps, as DuckDB casts), whose sum is exact (Decimal(38, 16), 128 bits), then Float64: the
    same sums as the SQL engines' (``beyond_sql.exact_sum``).  A user's profile over 64
    dimensions as 64 ordered sums made serendipity 3.5x slower (200k lists, 5M history rows:
    6.2 -> 22 s), as exact sums 1.4x (8.7 s)."""
    return values.cast(pl.Decimal(18, 16)).sum().cast(pl.Float64)


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den > 0).then(num / den)


def _by(frame: pl.LazyFrame, on: list[str], *aggs: pl.Expr) -> pl.LazyFrame:
    return frame.group_by(on).agg(*aggs) if on else frame.select(*aggs)
