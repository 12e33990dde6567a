"""Position-bias (examination) estimation from a click log.

The log has one row per impression: ``query, item, position, click``. Every method answers the
examination probability of each position relative to position 1:

- ``"ctr"``: the click rate at each position over the rate at position 1 (biased by the ranker;
  the naive baseline, ultr-bias-toolkit's ``NaiveCtrEstimator``).
- ``"pivot"``: intervention harvesting (Agarwal et al., WSDM 2019) against position 1: for every
  (query, item) shown both at position 1 and at position k its click rate at each, summed over
  those pairs; examination(k) = Σ rate at k / Σ rate at 1 (``PivotEstimator``).
- ``"adjacent_chain"``: the same ratios between adjacent positions k, k + 1, multiplied along the
  chain from position 1 (``AdjacentChainEstimator``).
- ``"all_pairs"``: Agarwal et al.'s global fit over every pair of positions, by a deterministic
  solver (weighted least squares on log-ratios; :func:`.estimators.fit_all_pairs` says why) where
  the toolkit's ``AllPairsEstimator`` runs SGD.
- ``"rand_topk"`` and ``"rand_pair"`` (Joachims et al., WSDM 2017; Wang et al., WSDM 2018):
  from the rankings a boolean column ``randomized=`` marks as randomised only, the click rate
  per position (RandTop-k: the shown order is random, so relevance is the same at every position)
  and the swaps of the item at position 1 with the item at position k, harvested as the pivot
  does (RandPair).

Intervention sets come from several rankers shown for the same queries (keep their rows together:
``by`` is for segments, each estimated on its own) or from randomisation. The per-position and
per-pair sums run inside the engine (Polars lazy joins, streamed; DuckDB set-based SQL, see
``sums.py``); the small finishing step is shared (``estimators.py``).
"""

from __future__ import annotations

import os
from typing import Any

import polars as pl

from rank_polars.engines.sql_engine import quote
from rank_polars.schema import Schema, as_schema
from rank_polars.errors import RankPolarsError, examples, plural, warn
from rank_polars.io.parquet import ParquetFiles, parquet_source
from rank_polars.clicks.position_bias.estimators import estimate, unreferenced
from rank_polars.clicks.position_bias.sums import PAIRS, duckdb_pairs, polars_pairs

METHODS = tuple(PAIRS)
OUTPUT = ("position", "examination", "support", "clicks")


def position_bias(log: Any, method: str = "ctr", *, by: str | list[str] | None = None,
                  randomized: str | None = None, schema: Schema | None = None, query: str | None = None,
                  item: str | None = None, position: str | None = None, click: str | None = None,
                  engine: str = "polars") -> pl.DataFrame:
    """Examination probability per position, relative to position 1.

    Parameters
    ----------
    log : DataFrame, LazyFrame, or Parquet path(s) (a file, glob, folder or list)
        One row per impression: ``query, item, position, click`` (``click`` 0/1 or a count).
    method : {"ctr", "pivot", "adjacent_chain", "all_pairs", "rand_topk", "rand_pair"}
        See the module's description; ``rand_*`` need ``randomized``.
    by : column name(s), optional
        Estimate each group (a device, a market) on its own. The rankers whose different orders
        make the interventions belong together: do not pass their column here.
    randomized : column name, optional
        A boolean column marking the impressions of randomised rankings; when given, only those
        rows are read (by every method).
    schema, query, item, position, click : column names, optional
        The log's columns for these roles: a :class:`rank_polars.Schema` or the flat keywords
        (default: each role's own name), as for :func:`rank_polars.evaluate`.
    engine : {"polars", "duckdb"}

    Returns
    -------
    DataFrame
        ``by..., position, examination, support, clicks`` sorted by group and position, one row for
        every position in the log. ``support`` counts what the estimate of that position rests on:
        impressions (ctr, rand_topk), or (query, item) pairs shown at that position and at the
        other position of its intervention sets (pivot, rand_pair: position 1; adjacent_chain:
        the position before; all_pairs: any other); ``clicks`` are the clicks at that position
        among them. Where the examination is undefined (no support, clicks where the reference
        has none, a broken chain) it is null, with a warning giving the count. A group whose
        position 1 has no click (never clicked or never shown there, among the rows read) has no
        curve relative to position 1: every position of it is null, position 1 included, in
        every method, with a warning naming the groups.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"query": ["q"] * 4, "item": ["a", "b", "b", "a"],
    ...                     "position": [1, 2, 1, 2], "click": [1, 0, 1, 1]})
    >>> position_bias(log, "pivot")
    shape: (2, 4)
    ┌──────────┬─────────────┬─────────┬────────┐
    │ position ┆ examination ┆ support ┆ clicks │
    │ ---      ┆ ---         ┆ ---     ┆ ---    │
    │ i64      ┆ f64         ┆ i64     ┆ i64    │
    ╞══════════╪═════════════╪═════════╪════════╡
    │ 1        ┆ 1.0         ┆ 2       ┆ 2      │
    │ 2        ┆ 0.5         ┆ 2       ┆ 1      │
    └──────────┴─────────────┴─────────┴────────┘
    """
    names = as_schema(schema, query=query, item=item, position=position, click=click)
    query, item, position, click = (names.column(r) for r in ("query", "item", "position", "click"))
    if method not in METHODS:
        raise RankPolarsError(f"position_bias: method must be one of {METHODS}, not {method!r}")
    if engine not in ("polars", "duckdb"):
        raise RankPolarsError(f"position_bias: engine must be 'polars' or 'duckdb', not {engine!r}")
    if method.startswith("rand_") and randomized is None:
        raise RankPolarsError(f"position_bias: method={method!r} reads the randomised rankings only: "
                              "name the boolean column that marks them, randomized='...'")
    groups = [by] if isinstance(by, str) else list(by or [])
    roles = {"query": query, "item": item, "position": position, "click": click}
    clash = [g for g in groups if g in OUTPUT or g in roles.values() or g == randomized]
    if clash:
        raise RankPolarsError(f"position_bias: by={clash} names a column the estimate reads or writes")
    internal = [f"g{j}" for j in range(max(len(groups), 1))]
    if engine == "duckdb":
        counts, positions, pairs = _duckdb(log, roles, groups, randomized, PAIRS[method])
    else:
        counts, positions, pairs = _polars(log, roles, groups, randomized, PAIRS[method])
    _refuse(counts, roles, randomized)
    out = estimate(method, positions, pairs, internal)
    _warn_nulls(out, method, unreferenced(positions, internal), groups, randomized)
    out = out.rename({"p": "position", **dict(zip(internal, groups))})
    if out.height and not out["clicks"].is_null().all() and float(out["clicks"].max()) >= 2.0**63:  # type: ignore[arg-type]
        raise RankPolarsError(f"position_bias: the {roles['click']!r} counts at one position add up beyond a 64-bit "
                              f"integer ({float(out['clicks'].max()):.3g}): they are counts of clicks on one shown row")  # type: ignore[arg-type]
    out = out.with_columns(pl.col("support", "clicks").cast(pl.Int64))
    return out.drop("g0") if not groups else out


def _schema_check(schema: dict[str, pl.DataType], roles: dict[str, str], groups: list[str], randomized: str | None) -> None:
    missing = [c for c in [*roles.values(), *groups, *([randomized] if randomized else [])] if c not in schema]
    if missing:
        raise RankPolarsError(f"position_bias: the log has no column {examples(missing)}; it has {examples(list(schema))}")
    if not (schema[roles["click"]].is_numeric() or schema[roles["click"]] == pl.Boolean):
        raise RankPolarsError(f"position_bias: {roles['click']!r} must hold click counts (0/1 or more), not {schema[roles['click']]}")
    if not schema[roles["position"]].is_integer():
        raise RankPolarsError(f"position_bias: {roles['position']!r} must hold integer positions (1 = top), not {schema[roles['position']]}")
    if randomized and schema[randomized] != pl.Boolean:
        raise RankPolarsError(f"position_bias: randomized={randomized!r} must be a boolean column, not {schema[randomized]}")


#: the data checks: name -> (what is wrong, as said in the error)
PROBLEMS = {"null_click": "a null {click!r}", "bad_click": "a negative, non-integer or non-finite {click!r}",
            "bad_position": "a null position or one below 1 in {position!r}",
            "null_key": "a null {query!r}, {item!r} or by column", "null_rand": "a null {randomized!r}"}


def _refuse(counts: dict[str, Any], roles: dict[str, str], randomized: str | None) -> None:
    """A clear error for the first problem found (counts and a few queries come from the engine)."""
    for name, what in PROBLEMS.items():
        if counts.get(name):
            where = examples(counts[f"{name}_queries"])
            verb = "has" if counts[name] == 1 else "have"
            raise RankPolarsError(f"position_bias: {plural(counts[name], 'row')} {verb} {what.format(randomized=randomized, **roles)} "
                                  f"(queries {where})")
    if not counts["rows"]:
        chosen = f" where {randomized!r} is true" if randomized else ""
        raise RankPolarsError(f"position_bias: the log has no rows{chosen} to estimate from")


def _paths(log: Any) -> ParquetFiles | None:
    """Parquet path(s), a glob or a folder, checked; None for anything else."""
    if isinstance(log, (str, os.PathLike)) or (isinstance(log, (list, tuple)) and log
                                               and all(isinstance(x, (str, os.PathLike)) for x in log)):
        return parquet_source(log, "position_bias")
    return None


def _frame(log: Any) -> pl.LazyFrame:
    files = _paths(log)
    if files is not None:
        return files.scan()
    if isinstance(log, pl.LazyFrame):
        return log
    if isinstance(log, pl.DataFrame):
        return log.lazy()
    try:
        return pl.DataFrame(log).lazy()
    except (TypeError, ValueError) as e:
        raise RankPolarsError(f"position_bias: cannot read the log as a table ({type(log).__name__}): {e}") from None


def _polars(log: Any, roles: dict[str, str], groups: list[str], randomized: str | None,
            pairs: str | None) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame | None]:
    lf = _frame(log)
    _schema_check(dict(lf.collect_schema()), roles, groups, randomized)
    gs = [pl.col(g).alias(f"g{j}") for j, g in enumerate(groups)] or [pl.lit(0).alias("g0")]
    rows = lf.select(*gs, q=pl.col(roles["query"]), i=pl.col(roles["item"]), p=pl.col(roles["position"]).cast(pl.Int64),
                     c=pl.col(roles["click"]).cast(pl.Float64),
                     **({"rand": pl.col(randomized)} if randomized else {}))
    c, p = pl.col("c"), pl.col("p")
    key = pl.any_horizontal(pl.col("q", "i", *[f"g{j}" for j in range(len(groups))]).is_null())
    # NaN equals its floor in Polars, and so does an infinity: they are checked as not finite
    bad = {"null_click": c.is_null(), "bad_click": (c < 0) | (c != c.floor()) | ~c.is_finite(),
           "bad_position": p.is_null() | (p < 1),
           "null_key": key, **({"null_rand": pl.col("rand").is_null()} if randomized else {})}
    internal = [f"g{j}" for j in range(max(len(groups), 1))]
    # the per-position counts and the checks' counts in one aggregation (one pass over the log)
    split = ["rand"] if randomized else []
    by_position = rows.group_by(*internal, "p", *split).agg(
        clicks=c.sum(), impressions=pl.len(), **{k: v.sum() for k, v in bad.items()})
    chosen = rows.filter(pl.col("rand")).drop("rand") if randomized else rows
    frames = pl.collect_all([by_position, *([polars_pairs(chosen, internal, pairs)] if pairs else [])], engine="streaming")
    counts: dict[str, Any] = {k: int(frames[0][k].sum()) for k in bad}
    positions = frames[0].filter(pl.col("rand")) if randomized else frames[0]
    counts["rows"] = int(positions["impressions"].sum())
    for k, v in bad.items():  # only on the way to an error: a few of the queries
        if counts[k]:
            counts[f"{k}_queries"] = rows.select(pl.col("q").filter(v).unique(maintain_order=True).head(5)).collect()["q"].to_list()
    return counts, positions.select(*internal, "p", "clicks", "impressions"), frames[1] if pairs else None


def _duckdb(log: Any, roles: dict[str, str], groups: list[str], randomized: str | None,
            pairs: str | None) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame | None]:
    log = _paths(log) or (log if isinstance(log, (pl.DataFrame, pl.LazyFrame)) else _frame(log).collect())
    # imported here: DuckDB's import is a sixth of rank_polars' own, and calls in Polars do not need it
    import duckdb

    from rank_polars.engines.duckdb_engine import DuckDBEngine

    with DuckDBEngine().session() as eng:
        rel = eng.relation(log, "position_bias_log", "position_bias")
        schema = dict(eng.query(f"SELECT * FROM {rel} LIMIT 0").schema)
        _schema_check(schema, roles, groups, randomized)
        gs = ", ".join(f"{quote(g)} AS g{j}" for j, g in enumerate(groups)) or "0 AS g0"
        rand = f", {quote(randomized)} AS rand" if randomized else ""
        eng.con.execute(f"CREATE TEMP VIEW pb_rows AS SELECT {gs}, {quote(roles['query'])} AS q, {quote(roles['item'])} AS i, "
                        f"CAST({quote(roles['position'])} AS BIGINT) AS p, CAST({quote(roles['click'])} AS DOUBLE) AS c{rand} "
                        f"FROM {rel}")
        bad = {"null_click": "c IS NULL", "bad_click": "c < 0 OR c <> floor(c) OR NOT isfinite(c)",
               "bad_position": "p IS NULL OR p < 1",
               "null_key": " OR ".join(f"{c} IS NULL" for c in ["q", "i", *[f"g{j}" for j in range(len(groups))]]), **({"null_rand": "rand IS NULL"} if randomized else {})}
        internal = [f"g{j}" for j in range(max(len(groups), 1))]
        keys = ", ".join([*internal, "p", *(["rand"] if randomized else [])])
        flags = ", ".join(f"COUNT(*) FILTER (WHERE {v}) AS {k}" for k, v in bad.items())
        by_position = eng.query(f"SELECT {keys}, SUM(c) AS clicks, COUNT(*) AS impressions, {flags} FROM pb_rows GROUP BY {keys}")
        counts: dict[str, Any] = {k: int(by_position[k].sum()) for k in bad}
        positions = by_position.filter(pl.col("rand")) if randomized else by_position
        counts["rows"] = int(positions["impressions"].sum())
        for k, v in bad.items():  # only on the way to an error: a few of the queries
            if counts[k]:
                counts[f"{k}_queries"] = eng.query(f"SELECT DISTINCT q FROM pb_rows WHERE {v} LIMIT 5")["q"].to_list()
        if any(counts[k] for k in bad):
            return counts, positions, None
        if randomized:
            eng.con.execute("CREATE TEMP VIEW pb_chosen AS SELECT * EXCLUDE (rand) FROM pb_rows WHERE rand")
        try:
            table = duckdb_pairs(eng.query, "pb_chosen" if randomized else "pb_rows", internal, pairs) if pairs else None
        except duckdb.Error as e:
            raise RankPolarsError(f"position_bias: DuckDB could not read the log: {str(e).splitlines()[0]}") from None
    # the groups as the log types them, as the Polars engine gives them (DuckDB hands a
    # Categorical or Enum back as text: a curve per arm would no longer join the log's arms)
    lf = log.scan() if isinstance(log, ParquetFiles) else log.lazy()
    types = lf.collect_schema()
    cast = [pl.col(f"g{j}").cast(types[g]) for j, g in enumerate(groups)]
    return (counts, positions.select(*internal, "p", "clicks", "impressions").with_columns(cast),
            table.with_columns(cast) if table is not None else None)


def _warn_nulls(out: pl.DataFrame, method: str, dead: pl.DataFrame, groups: list[str], randomized: str | None) -> None:
    """The warnings for null positions: one for the groups whose position 1 has no click (every
    position of them is null: ``dead``, internal group columns), one counting the other null
    positions, without support and with support but undefined."""
    internal = list(dead.columns)
    if dead.height:
        rows = f", among the rows where {randomized!r} is true," if randomized else ""
        if groups:
            named = [", ".join(f"{g}={v!r}" for g, v in zip(groups, row)) for row in dead.iter_rows()]
            shown = examples([n if len(groups) == 1 else f"({n})" for n in named], quote=False)
            total = out.select(internal).n_unique()
            where = f"{dead.height:,} of {total:,} groups ({shown})"
        else:
            where = "the log"
        pool = ", or pool the groups (fewer by columns)" if groups else ""
        warn(f"position_bias(method={method!r}): position 1 has no click in {where}{rows} (never clicked or never "
             f"shown there): the examination relative to position 1 is undefined, so every position "
             f"{'of those groups ' if groups else ''}is null. The curve is a ratio to the clicks at position 1: "
             f"estimate it from more {'randomised ' if randomized else ''}traffic{pool}")
        out = out.join(dead, on=internal, how="anti", nulls_equal=True)
    null = out.filter(pl.col("examination").is_null())
    if null.is_empty():
        return
    bare = null.filter(pl.col("support") == 0)
    said = []
    if bare.height:
        said.append(f"{plural(bare.height, 'position')} without support (positions {examples(bare['p'].unique().sort().to_list(), quote=False)})")
    if null.height - bare.height:
        rest = null.filter(pl.col("support") > 0)["p"].unique().sort().to_list()
        said.append(f"{plural(null.height - bare.height, 'position')} where the ratio to position 1 is undefined "
                    f"(clicks where the reference has none, a broken chain, or no link to position 1; "
                    f"positions {examples(rest, quote=False)})")
    across = f" (over {plural(null.select(internal).n_unique(), 'group')})" if out.select(internal).n_unique() > 1 else ""
    warn(f"position_bias(method={method!r}): examination is null at " + " and at ".join(said) + across)


__all__ = ["METHODS", "position_bias"]
