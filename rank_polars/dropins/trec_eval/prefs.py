"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``, ``-m all_prefs``), on pairs.

Why these are not formulas in :mod:`rank_polars.formula.tree`: a formula reduces to per-query sums over
ranked rows plus judgment aggregates, whereas a preference measure counts *pairs of documents*
(which of two judged documents the run puts first), and within a judgment group with several
sub-groups the pairs are the *transitive closure* of the stated preferences.  Neither a pair nor
a closure is a per-row quantity, so these are computed here as vectorised Polars over a table of
pairs (joins per query and judgment group; the closure is a repeated self-join over all queries
at once, never a Python loop per query).

What trec_eval does (``form_prefs_counts.c``, ``m_prefs_*.c``), and this module repeats:

* Ranking: score descending, ties by docno **ascending** (unlike the qrels measures), then
  ``-M``.  The documents of a query's preference lines are *judged*; the retrieved judged ones get
  internal ranks ``0..NJR-1`` in ranking order, the others ``NJR..`` in docno order.
* A judgment group (JG) with one sub-group (JSG) prefers every line to every line of a lower
  level ("EC" groups, counted per line pair); a JG with several JSGs prefers within each JSG and
  adds the transitive preferences ("PA" groups, counted per distinct document pair).
* A preference A>B is *retrieved* if both are, *implied* if one is, and fulfilled when A is
  retrieved and ranked above B.  ``_ret`` measures count retrieved pairs, ``_imp`` retrieved and
  implied, the others all pairs.  ``simp`` = fulfilled / possible over all JGs, ``avgjg`` = the
  mean over JGs of each JG's ratio, ``pair`` = the mean over document pairs of the share of
  JGs whose preference the run fulfils, ``avgjg_Rnonrel`` = ``avgjg`` with the number of
  non-relevant documents (level 0) of each JG set to its number of relevant ones.
* Quirks kept: a JG ratio of 0/0 in ``avgjg_Rnonrel`` makes the query's value 0; when that
  measure recounts an EC group it pairs every line of the group (the non-relevant ones too, and
  each with itself) with the first R non-relevant lines; the ``_ret`` variant adds
  ``num_rel_ret * (R - N)`` fulfilled but ``num_rel * (R - N)`` possible preferences.
"""

from __future__ import annotations

import polars as pl

from rank_polars.dropins.trec_eval.checks import cannot, duplicate_docs, first, first_reader, missing_query
from rank_polars.dropins.trec_eval.evaluation import Failure
from rank_polars.dropins.trec_eval.measures import Column
from rank_polars.dropins.trec_eval.options import Options

_JG = ["query", "jg"]


def ranking(run: pl.DataFrame, opts: Options) -> pl.DataFrame:
    """The run as ``form_prefs_counts`` ranks it: score descending, ties by docno ascending, ``-M``."""
    return run.sort(["query", "score", "item"], descending=[False, True, False]).with_columns(
        position=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query")
    ).filter(pl.col("position") <= max(opts.max_docs, 0))


def judged_ranks(run: pl.DataFrame, prefs: pl.DataFrame, opts: Options) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``query, item, docid`` of every judged document, and ``query, njr`` (judged and retrieved)."""
    ranked = ranking(run, opts)
    judged = prefs.select("query", "item").unique()
    retrieved = ranked.join(judged, on=["query", "item"], how="semi").select(
        "query", "item", docid=pl.int_range(pl.len(), dtype=pl.Int64).over("query", order_by="position")
    )
    njr = judged.select("query").unique().join(
        retrieved.group_by("query").agg(njr=pl.len().cast(pl.Int64)), on="query", how="left"
    ).with_columns(pl.col("njr").fill_null(0))
    rest = judged.join(retrieved, on=["query", "item"], how="anti").join(njr, on="query").select(
        "query", "item", docid=pl.col("njr") + pl.int_range(pl.len(), dtype=pl.Int64).over("query", order_by="item")
    )
    return pl.concat([retrieved, rest]), njr


def _lines(prefs: pl.DataFrame, docids: pl.DataFrame) -> pl.DataFrame:
    """The preference lines with internal ranks, in trec_eval's order, and each JG's kind."""
    lines = prefs.join(docids, on=["query", "item"]).sort(
        ["query", "jg", "jsg", "level", "docid"], descending=[False, False, False, True, False]
    )
    return lines.with_columns(
        ec=(pl.col("jsg").n_unique().over(_JG) == 1),
        order=pl.int_range(pl.len(), dtype=pl.Int64).over(_JG),
    )


def _closure(edges: pl.DataFrame) -> pl.DataFrame:
    """Transitive closure of ``query, jg, x, y`` (x preferred to y), all groups at once."""
    closure = delta = edges.unique()
    while True:  # each round adds paths one step longer; it ends, as the pairs of a group are finite
        step = delta.join(edges.rename({"x": "m", "y": "y2"}), left_on=[*_JG, "y"], right_on=[*_JG, "m"])
        new = step.select(*_JG, "x", y="y2").unique().join(closure, on=[*_JG, "x", "y"], how="anti")
        if new.height == 0:
            break
        closure, delta = pl.concat([closure, new]), new
    return closure.filter(pl.col("x") != pl.col("y"))


def pairs(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``query, jg, x, y, last, pa`` preference pairs (EC line pairs and PA closure pairs), and the
    EC pairs of a document with itself (trec_eval's error)."""
    ec = lines.filter("ec")
    low = ec.group_by(_JG).agg(min_level=pl.col("level").min())
    ec_pairs = (
        ec.join(ec, on=_JG, suffix="_y").filter(pl.col("level") > pl.col("level_y"))
        .join(low, on=_JG)
        .select(*_JG, x="docid", y="docid_y", last=pl.col("level_y") == pl.col("min_level"),
                level="level", level_y="level_y")
    )
    same = ec_pairs.filter(pl.col("x") == pl.col("y"))
    pa = lines.filter(~pl.col("ec"))
    stated = pa.join(pa, on=[*_JG, "jsg"], suffix="_y").filter(pl.col("level") > pl.col("level_y"))
    pa_pairs = _closure(stated.select(*_JG, x="docid", y="docid_y"))
    both = pl.concat([
        ec_pairs.select(*_JG, "x", "y", "last", pa=pl.lit(False)),
        pa_pairs.with_columns(last=pl.lit(False), pa=pl.lit(True)),
    ])
    return both, same


def members(lines: pl.DataFrame) -> pl.DataFrame:
    """``query, jg, docid, level, ec``: an EC group's lines, a PA group's documents with the level
    trec_eval keeps (its last line's), and ``rel`` / ``nonrel`` as trec_eval classifies them."""
    pa = lines.filter(~pl.col("ec")).group_by([*_JG, "docid"]).agg(pl.col("level").sort_by("order").last(),
                                                                    pl.col("ec").first())
    both = pl.concat([lines.filter("ec").select(*_JG, "docid", "level", "ec"), pa.select(*_JG, "docid", "level", "ec")])
    return both.with_columns(
        rel=pl.col("level") > 0,
        nonrel=pl.when(pl.col("ec")).then(pl.col("level") <= 0).otherwise(pl.col("level") == 0),
    )


def _classify(frame: pl.DataFrame) -> pl.DataFrame:
    x_ret, y_ret = pl.col("x") < pl.col("njr"), pl.col("y") < pl.col("njr")
    return frame.with_columns(
        ret=x_ret & y_ret, imp=x_ret ^ y_ret, ful=(pl.col("x") < pl.col("y")) & x_ret
    )


def group_counts(both: pl.DataFrame, mem: pl.DataFrame, njr: pl.DataFrame) -> pl.DataFrame:
    """Per JG: trec_eval's fulfilled / possible counts and its relevant / non-relevant counts."""
    ret, imp, ful = pl.col("ret"), pl.col("imp"), pl.col("ful")
    counts = _classify(both.join(njr, on="query")).group_by(_JG).agg(
        ful_ret=(ful & ret).sum(), poss_ret=ret.sum(), ful_imp=(ful & imp).sum(), poss_imp=imp.sum(),
        notoccur=(~ret & ~imp).sum(),
    )
    retrieved = pl.col("docid") < pl.col("njr")
    sizes = mem.join(njr, on="query").group_by(_JG).agg(
        num_rel=pl.col("rel").sum(), num_nonrel=pl.col("nonrel").sum(),
        num_rel_ret=(pl.col("rel") & retrieved).sum(), num_nonrel_ret=(pl.col("nonrel") & retrieved).sum(),
        ec=pl.col("ec").first(),
    )
    return sizes.join(counts, on=_JG, how="left").with_columns(
        pl.col("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur").fill_null(0).cast(pl.Int64),
        pl.col("num_rel", "num_nonrel", "num_rel_ret", "num_nonrel_ret").cast(pl.Int64),
    )


def _recount(both: pl.DataFrame, lines: pl.DataFrame, mem: pl.DataFrame, counts: pl.DataFrame,
             njr: pl.DataFrame, retrieved_only: bool) -> pl.DataFrame:
    """``query, jg, ful, poss`` recounted for the JGs with more non-relevant than relevant documents
    (trec_eval's ``recalculate`` in ``m_prefs_avgjg_Rnonrel*.c``)."""
    r_col, n_col = ("num_rel_ret", "num_nonrel_ret") if retrieved_only else ("num_rel", "num_nonrel")
    todo = counts.filter(pl.col(r_col) < pl.col(n_col)).select(*_JG, "ec", "num_rel", r=pl.col(r_col))
    x_ret, y_ret = pl.col("x") < pl.col("njr"), pl.col("y") < pl.col("njr")
    keep_pair = (x_ret & y_ret) if retrieved_only else pl.lit(True)
    ful = (pl.col("x") < pl.col("y")) & x_ret
    # EC groups: the pairs not ending in the last class, plus every line x the first R lines y of it
    ec = todo.filter("ec")
    kept = both.join(ec, on=_JG, how="semi").filter(~pl.col("last")).join(njr, on="query")
    low = lines.filter("ec").join(ec, on=_JG).filter(pl.col("level") == pl.col("level").min().over(_JG))
    first_r = low.filter(pl.int_range(pl.len()).over(_JG, order_by="docid") < pl.col("r")).select(*_JG, y="docid")
    every = lines.join(ec, on=_JG, how="semi").select(*_JG, x="docid")
    crossed = every.join(first_r, on=_JG).join(njr, on="query")
    ec_pairs = pl.concat([kept.select(*_JG, "x", "y", "njr"), crossed.select(*_JG, "x", "y", "njr")])
    # PA groups: drop the non-relevant documents after the first num_rel of them (internal order)
    pa = todo.filter(~pl.col("ec"))
    nonrel = mem.join(pa, on=_JG).filter("nonrel").join(njr, on="query")
    if retrieved_only:
        nonrel = nonrel.filter(pl.col("docid") < pl.col("njr"))
    dropped = nonrel.filter(pl.int_range(pl.len()).over(_JG, order_by="docid") >= pl.col("num_rel")).select(
        *_JG, "docid")
    pa_pairs = (
        both.join(pa, on=_JG, how="semi")
        .join(dropped.rename({"docid": "x"}), on=[*_JG, "x"], how="anti")
        .join(dropped.rename({"docid": "y"}), on=[*_JG, "y"], how="anti")
        .join(njr, on="query").select(*_JG, "x", "y", "njr")
    )
    return pl.concat([ec_pairs, pa_pairs]).filter(keep_pair).group_by(_JG).agg(
        ful=ful.sum().cast(pl.Int64), poss=pl.len().cast(pl.Int64)
    )


def _ratio_mean(per_jg: pl.DataFrame, ratio: pl.Expr, name: str, nan_is_zero: bool = False) -> pl.DataFrame:
    """trec_eval's ``sum / num_jgs if sum > 0 else 0`` (a NaN sum, from a 0/0 ratio, gives 0)."""
    s = pl.col("s")
    bad = s.is_nan() | (s <= 0) if nan_is_zero else s <= 0
    per_jg = per_jg.sort(_JG)  # summed in trec_eval's order: the same rounding
    return per_jg.group_by("query", maintain_order=True).agg(s=ratio.sum(), n=pl.len()).select(
        "query", pl.when(bad).then(0.0).otherwise(s / pl.col("n")).alias(name)
    )


def _pair_measures(both: pl.DataFrame, njr: pl.DataFrame) -> pl.DataFrame:
    """``prefs_pair``, ``_ret``, ``_imp``: the mean over document pairs of the share of
    preferences (over JGs) for the pair that the run fulfils."""
    lo, hi = pl.min_horizontal("x", "y"), pl.max_horizontal("x", "y")
    per_pair = both.group_by("query", lo.alias("lo"), hi.alias("hi")).agg(
        share=(pl.col("x") < pl.col("y")).mean()
    ).join(njr, on="query")
    some, all_ret = pl.col("lo") < pl.col("njr"), pl.col("hi") < pl.col("njr")
    # summed in trec_eval's loop order (retrieved pairs first, then retrieved-unretrieved, each by
    # rank), so that the rounding is the same; adding the 0.0 of a pair left out changes nothing
    order = [~all_ret, "lo", "hi"]

    def mean(where: pl.Expr, counted: pl.Expr) -> pl.Expr:
        n = counted.sum()
        total = pl.when(where).then(pl.col("share")).otherwise(0.0).sort_by(order).sum()
        return pl.when(n > 0).then(total / n).otherwise(0.0)

    return per_pair.group_by("query").agg(
        prefs_pair=mean(some, pl.col("lo").is_not_null()),
        prefs_pair_ret=mean(all_ret, all_ret),
        prefs_pair_imp=mean(some, some),
    )


def evaluate(run: pl.DataFrame, prefs: pl.DataFrame, columns: list[Column],
             opts: Options) -> tuple[pl.DataFrame, Failure | None]:
    """``query`` (evaluation order) with one column per printed preference label, and the first
    query at which trec_eval stops (the values of the queries before it are the ones it printed).

    Examples
    --------
    get_prefs.c's first example: one user ranks six documents (13 preferences); the run
    retrieves d4, d1, d2 in that order, so 11 are fulfilled, 3 with both documents retrieved.

    >>> import polars as pl
    >>> from rank_polars.dropins.trec_eval.measures import Selection
    >>> from rank_polars.dropins.trec_eval.options import Options
    >>> levels = {"d1": 3.0, "d2": 2.0, "d3": 0.0, "d4": 6.0, "d5": 0.0, "d6": 2.0}
    >>> prefs = pl.DataFrame({"query": "q1", "jg": "u1", "jsg": "s1", "item": list(levels),
    ...                       "level": list(levels.values())})
    >>> run = pl.DataFrame({"query": "q1", "item": ["d4", "d1", "d2"], "score": [3.0, 2.0, 1.0]})
    >>> selection = Selection()
    >>> selection.mark("prefs")
    >>> table, failure = evaluate(run, prefs, selection.columns(), Options())
    >>> table.select("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    ...              pl.col("prefs_simp").round(4)), failure
    (shape: (1, 4)
    ┌──────────────────────┬─────────────────────┬─────────────────────────┬────────────┐
    │ prefs_num_prefs_poss ┆ prefs_num_prefs_ful ┆ prefs_num_prefs_ful_ret ┆ prefs_simp │
    │ ---                  ┆ ---                 ┆ ---                     ┆ ---        │
    │ f64                  ┆ f64                 ┆ f64                     ┆ f64        │
    ╞══════════════════════╪═════════════════════╪═════════════════════════╪════════════╡
    │ 13.0                 ┆ 11.0                ┆ 3.0                     ┆ 0.8462     │
    └──────────────────────┴─────────────────────┴─────────────────────────┴────────────┘, None)
    """
    queries = prefs.select("query").unique().sort("query")
    reader = first_reader(columns, "prefs")
    if reader is None:  # runid and num_q only: trec_eval never reads the preferences
        return queries, missing_query(queries, run, opts)
    docids, njr = judged_ranks(run, prefs, opts)
    lines = _lines(prefs, docids)
    both, same = pairs(lines)
    table = _measures(queries, both, lines, njr, columns)
    return table, _first_failure(queries, run, lines, both, same, reader, opts)


def _measures(queries: pl.DataFrame, both: pl.DataFrame, lines: pl.DataFrame, njr: pl.DataFrame,
              columns: list[Column]) -> pl.DataFrame:
    mem = members(lines)
    counts = group_counts(both, mem, njr)
    c = {k: pl.col(k) for k in counts.columns}
    ful_all, poss_all = c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"] + c["notoccur"]
    ful_imp, poss_imp = c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"]

    def simp(f: pl.Expr, p: pl.Expr) -> pl.Expr:
        return pl.when(p.sum() > 0).then(f.sum() / p.sum()).otherwise(0.0)

    def avg(f: pl.Expr, p: pl.Expr) -> pl.Expr:
        return pl.when(p > 0).then(f / p).otherwise(0.0)

    sums = counts.group_by("query").agg(
        prefs_num_prefs_poss=poss_all.sum(), prefs_num_prefs_ful=ful_all.sum(),
        prefs_num_prefs_ful_ret=c["ful_ret"].sum(),
        prefs_simp=simp(ful_all, poss_all), prefs_simp_ret=simp(c["ful_ret"], c["poss_ret"]),
        prefs_simp_imp=simp(ful_imp, poss_imp),
    )
    table = queries.join(sums, on="query", how="left")
    for name, f, p in (("prefs_avgjg", ful_all, poss_all), ("prefs_avgjg_ret", c["ful_ret"], c["poss_ret"]),
                       ("prefs_avgjg_imp", ful_imp, poss_imp)):
        table = table.join(_ratio_mean(counts, avg(f, p), name), on="query", how="left")
    for name, retrieved_only in (("prefs_avgjg_Rnonrel", False), ("prefs_avgjg_Rnonrel_ret", True)):
        table = table.join(_rnonrel(both, lines, mem, counts, njr, retrieved_only, name), on="query", how="left")
    table = table.join(_pair_measures(both, njr), on="query", how="left")
    labels = [col.label for col in columns if col.measure.needs == "prefs"]
    return table.select("query", *(pl.col(label).fill_null(0).cast(pl.Float64) for label in labels))


def _rnonrel(both: pl.DataFrame, lines: pl.DataFrame, mem: pl.DataFrame, counts: pl.DataFrame,
             njr: pl.DataFrame, retrieved_only: bool, name: str) -> pl.DataFrame:
    """``prefs_avgjg_Rnonrel`` (or its ``_ret`` variant) per query."""
    c = {k: pl.col(k) for k in counts.columns}
    if retrieved_only:
        r, n, ful, poss = c["num_rel_ret"], c["num_nonrel_ret"], c["ful_ret"], c["poss_ret"]
    else:
        r, n = c["num_rel"], c["num_nonrel"]
        ful, poss = c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"] + c["notoccur"]
    recount = _recount(both, lines, mem, counts, njr, retrieved_only)
    per_jg = counts.join(recount, on=_JG, how="left").with_columns(
        ratio=pl.when(r >= n)
        .then((ful + c["num_rel_ret"] * (r - n)).cast(pl.Float64) / (poss + c["num_rel"] * (r - n)))
        .otherwise(pl.col("ful").fill_null(0).cast(pl.Float64) / pl.col("poss").fill_null(0))
    )
    return _ratio_mean(per_jg, pl.col("ratio"), name, nan_is_zero=True)


def _first_failure(queries: pl.DataFrame, run: pl.DataFrame, lines: pl.DataFrame, both: pl.DataFrame,
                   same: pl.DataFrame, reader: tuple[int, str], opts: Options) -> Failure | None:
    """The first query at which trec_eval stops: no results (without ``-c``), duplicate documents,
    or preferences it rejects (a document at two levels of one sub-group, at level 0 and above 0
    in one group, or preferred both ways after the closure — on which trec_eval aborts)."""
    errors = [
        same.sort(*_JG, "level", "level_y", "x", descending=[False, False, True, True, False])
        .group_by(_JG, maintain_order=True).first()
        .select(*_JG, step=pl.lit(0), message=pl.format(
            "trec_eval.form_prefs_counts: Internal docid {} occurs with different rel_level in same jsg\n", "x")),
        _zero_and_nonzero(lines),
        _conflicts(both.filter("pa")),
    ]
    found = pl.concat(errors).sort(*_JG, "step").group_by("query", maintain_order=True).first()
    found = queries.with_row_index("index").join(found, on="query").sort("index")
    group = None
    if found.height:
        index, step, message = found.select("index", "step", "message").row(0)
        group = (Failure(index, 134, message, reader[0]) if step == 2
                 else Failure(index, 4, message + cannot(reader[1]), reader[0]))
    return first(missing_query(queries, run, opts),
                 duplicate_docs(queries, ranking(run, opts), reader, "form_prefs_counts"), group)


def _zero_and_nonzero(lines: pl.DataFrame) -> pl.DataFrame:
    """PA groups: a document given level 0 right after a level above 0, or the other way round."""
    level = pl.col("level")
    before = level.shift(1).over([*_JG, "docid"], order_by="order")
    bad = lines.filter(~pl.col("ec")).filter(((before > 0) & (level == 0)) | ((before == 0) & (level > 0)))
    return bad.sort(*_JG, "order").group_by(_JG, maintain_order=True).first().select(
        *_JG, step=pl.lit(1), message=pl.format(
            "trec_eval.form_prefs_counts: doc '{}' has both 0 and non-0 rel_level assigned\n", "item"))


def _conflicts(closure: pl.DataFrame) -> pl.DataFrame:
    """PA groups whose closure prefers two documents both ways (trec_eval calls ``abort()``)."""
    both_ways = closure.join(closure, left_on=[*_JG, "x", "y"], right_on=[*_JG, "y", "x"], how="semi")
    return both_ways.sort(*_JG, "x", "y").group_by(_JG, maintain_order=True).first().select(
        *_JG, step=pl.lit(2), message=pl.format(
            "trec_eval.form_prefs_counts: Pref inconsistency found\n"
            "      internal rank {} and internal rank {} are conflicted\n", "x", "y"))
