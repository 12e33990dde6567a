"""Counterfactual (off-policy) estimates of a new ranker from a click log.

``rp.counterfactual(log, candidate, metrics, examination=..., estimator=...)``:

* position-based IPS (``"ips"``, ``"snips"``) for additive metrics, from an examination curve
  (:func:`rank_polars.position_bias` or a frame ``position, examination``): each logged click on
  item d weighted by λ(rank of d in the candidate) / examination(logged position of d)
  (:mod:`.spec` lists the metrics and why the others are refused);
* the slate estimators of the Open Bandit Pipeline when the log carries the logging policy's
  propensities: ``"standard_ips"`` (``pscore``), ``"independent_ips"``
  (``pscore_item_position``), ``"rips"`` (``pscore_cascade``) and the self-normalised
  ``"sn_*"`` forms; they estimate the expected clicks per ranking (OBP's policy value), for a
  deterministic candidate (a ranking: evaluation propensities 1 or 0) or a stochastic one
  (``candidate=None`` and the log's ``evaluation_policy_pscore*`` columns).

Both engines compute one table of per-ranking sums (:mod:`.plan`) — Polars as a streaming
LazyFrame, DuckDB as one SQL statement (:func:`counterfactual_sql` gives it over your own
tables) — and the estimates, bootstrap and effective sample size follow from it
(:mod:`.finish`).
"""

from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from rank_polars.errors import LowSupportWarning, RankPolarsError
from rank_polars.inputs import scan
from rank_polars.schema import Schema, as_schema
from rank_polars.measures import Measure
from rank_polars.clicks.counterfactual import checks, finish, polars_engine, sql
from rank_polars.clicks.counterfactual.plan import B, C, D, E, P, Q, R, T, Plan
from rank_polars.clicks.counterfactual.spec import ESTIMATORS, EVALUATION, SLATE, SLATE_METRIC, weights

__all__ = ["LowSupportWarning", "counterfactual", "counterfactual_sql"]

Metrics = str | Measure | Sequence[str | Measure]


def _lazy(frame: Any, what: str) -> pl.LazyFrame:
    """Any source evaluate reads (a frame, Parquet paths checked for truncation, a dict, pandas),
    as a LazyFrame: a path given to pl.DataFrame became a one-column frame of its text."""
    return scan(frame, f"counterfactual: the {what}")


def _columns(frame: pl.LazyFrame, cols: Sequence[str], what: str) -> None:
    have = frame.collect_schema().names()
    missing = [c for c in cols if c not in have]
    if missing:
        raise RankPolarsError(f"counterfactual: the {what} has no column {', '.join(map(repr, missing))} "
                              f"(it has {', '.join(map(repr, have))})")


def _plan(candidate: Any, metrics: Metrics | None, examination: Any, estimator: str, by: Sequence[str],
          session: Sequence[str], clip: float | None) -> Plan:
    if estimator not in ESTIMATORS:
        raise RankPolarsError(f"counterfactual: estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")
    if estimator in SLATE:
        ws = [SLATE_METRIC]
        if metrics is not None and [w.label for w in weights(metrics)] != ["clicks"]:
            raise RankPolarsError(f"counterfactual: the slate estimator {estimator!r} estimates the expected clicks "
                                  f"per ranking (metrics='clicks'); the other metrics need estimator='ips'")
        ex_by: tuple[str, ...] = ()
    else:
        if metrics is None:
            raise RankPolarsError("counterfactual: name the metrics to estimate (e.g. ['dcg@10', 'ctr@10'])")
        if examination is None:
            raise RankPolarsError(f"counterfactual: estimator {estimator!r} needs examination= (rp.position_bias(log) "
                                  f"or a frame 'position, examination')")
        if candidate is None:
            raise RankPolarsError(f"counterfactual: estimator {estimator!r} needs the candidate's rankings")
        ws = weights(metrics)
        ex_by = tuple(c for c in by if c in _lazy(examination, "examination frame").collect_schema().names())
    return Plan(estimator, tuple(ws), tuple(by), tuple(session), None if clip is None else float(clip),
                deterministic=candidate is not None, examination_by=ex_by)


def _deepest(plan: Plan) -> int | None:
    """The deepest candidate rank any weight reads (None: every rank).  Ranks below it carry
    no weight, so the candidate is cut there before it is checked and joined (as evaluate's
    checks="full" reads only the rows that can change a value)."""
    ks = [w.k for w in plan.weights]
    if plan.slate or None in ks:
        return None
    return max(k for k in ks if k is not None)


def _prepare(plan: Plan, log: Any, candidate: Any, examination: Any, names: dict[str, str], score: str | None
             ) -> tuple[pl.LazyFrame, pl.LazyFrame | None, pl.LazyFrame | None]:
    """The inputs renamed to the internal names of :mod:`.plan`, checked."""
    lf = _lazy(log, "log")
    roles = {Q: names[Q], D: names[D], P: names[P], C: names[C]}
    if plan.slate:
        roles[B] = names[B] = SLATE[plan.estimator]
        if not plan.deterministic:
            roles[E] = names[E] = EVALUATION[SLATE[plan.estimator]]
    _columns(lf, [*plan.by, *plan.session, *roles.values()], "log")
    lf = lf.select(*plan.by, *plan.session, *(pl.col(col).alias(role) for role, col in roles.items()))
    checks.check_types(lf, {P: names[P]}, {role: col for role, col in roles.items() if role in (C, B, E)}, "log")
    lf = lf.with_columns(pl.col(C).cast(pl.Float64))
    checks.check_log(plan, lf, names)
    cand = None
    if candidate is not None:
        cf = _lazy(candidate, "candidate")
        rank_col = score or names["candidate_position"]
        _columns(cf, [names[Q], names[D], rank_col], "candidate")
        deepest = _deepest(plan)
        if score:
            cf = cf.select(pl.col(names[Q]).alias(Q), pl.col(names[D]).alias(D), pl.col(score).alias("_score"))
            checks.check_types(cf, {}, {"_score": score}, "candidate")
            cf = cf.with_columns(pl.col("_score").cast(pl.Float64))
            checks.check_candidate(cf, by_score=True, column=score, deepest=None)
            # ranks by score, highest first; ties by item, ascending (deterministic, as the SQL)
            cf = cf.sort([Q, "_score", D], descending=[False, True, False]).with_columns(
                pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(Q).alias(R)).drop("_score")
            if deepest is not None:
                cf = cf.filter(pl.col(R) <= deepest)
        else:
            cf = cf.select(pl.col(names[Q]).alias(Q), pl.col(names[D]).alias(D), pl.col(rank_col).alias(R))
            checks.check_types(cf, {R: rank_col}, {}, "candidate")
            cf = cf.with_columns(pl.col(R).cast(pl.Int64))
            if deepest is not None:  # null positions stay, for the check to name them
                cf = cf.filter(pl.col(R).is_null() | (pl.col(R) <= deepest))
            checks.check_candidate(cf, by_score=False, column=rank_col, deepest=deepest)
        for role in (Q, D):
            left, right = lf.collect_schema()[role], cf.collect_schema()[role]
            if left != right:
                raise RankPolarsError(f"counterfactual: the log's {names[role]!r} is {left} and the candidate's is "
                                      f"{right}: give both the same type so that items can be matched")
        checks.check_coverage(plan, lf, cf)
        cand = cf
    ex = None
    if plan.position_based:
        ef = _lazy(examination, "examination frame")
        _columns(ef, ["position", "examination"], "examination frame")
        for col in plan.examination_by:  # a group column the curve is joined on, as the query and item are
            left, right = lf.collect_schema()[col], ef.collect_schema()[col]
            if left != right:
                raise RankPolarsError(f"counterfactual: the examination frame's {col!r} is {right} and the log's is "
                                      f"{left}: give both the same type so that each group finds its curve")
        ex = ef.select(*plan.examination_by, pl.col("position").alias(P), pl.col("examination").alias(T))
        checks.check_types(ex, {P: "position"}, {T: "examination"}, "examination frame")
        ex = ex.with_columns(pl.col(P).cast(pl.Int64), pl.col(T).cast(pl.Float64))
        checks.check_examination(plan, lf, cand, ex)  # type: ignore[arg-type]
    return lf, cand, ex


def _names(schema: Schema | None, query: str | None, item: str | None, position: str | None, click: str | None,
           score: str | None) -> tuple[str, str, str, str, str | None]:
    """The log's columns from ``schema=`` and the flat keywords; the candidate is ranked by its
    ``score`` column only when one is named (``score=`` or the schema's), else by its positions."""
    names = as_schema(schema, query=query, item=item, position=position, click=click, score=score)
    return (*(names.column(r) for r in ("query", "item", "position", "click")), names.score)  # type: ignore[return-value]


def counterfactual(log: Any, candidate: Any, metrics: Metrics | None = None, *, examination: Any = None,
                   estimator: str = "ips", by: str | Sequence[str] | None = None,
                   session: str | Sequence[str] | None = None, clip: float | None = None, ci: float | None = None,
                   n_resamples: int = 1000, seed: int = 0, min_clicks: int = 30, engine: str = "polars",
                   schema: Schema | None = None, query: str | None = None, item: str | None = None,
                   position: str | None = None, click: str | None = None, score: str | None = None) -> pl.DataFrame:
    """Estimate how a new ranker (the candidate) would do, from the clicks logged under another.

    Parameters
    ----------
    log : DataFrame, LazyFrame or Parquet path(s) (any source ``evaluate`` reads; so are the candidate and the examination)
        One row per shown item: ``query, item, position, click`` (a 0/1 click or a count), the
        ``by`` and ``session`` columns, and for the slate estimators the logging policy's
        propensity column (``pscore``, ``pscore_item_position`` or ``pscore_cascade``). One item
        per position of a logged ranking: two clicked rows at one position (any two rows for the
        slate estimators) are a :class:`rank_polars.DataError`; an unclicked row beside a click
        carries no term and is let be (each click is weighed at its own logged position).
    candidate : DataFrame, LazyFrame or None
        The new ranker's rankings: ``query, item, position`` or ``query, item`` and a score
        column named by ``score=`` (ranked highest first, ties by item ascending). One ranking
        per query: distinct positions and each item once (down to the deepest cutoff asked for;
        two items at one position or an item twice is a :class:`rank_polars.DataError`, as in
        ``evaluate``).
        ``None`` for a stochastic candidate given as the log's ``evaluation_policy_pscore*``
        columns (slate estimators only).
    metrics : str, spec or list
        Additive metrics for ``"ips"`` / ``"snips"``: ``cg``, ``dcg``, ``p``, ``rbp``, ``clicks``,
        ``ctr`` (with ``@k``; see ``rank_polars.clicks.counterfactual.spec`` for their weights and why
        ``rr``, ``ndcg``, ``ap``... are refused). The slate estimators estimate ``"clicks"``
        (expected clicks per ranking) and need none.
    examination : DataFrame, optional
        ``position, examination`` (relative to position 1, as :func:`rank_polars.position_bias`
        returns it), optionally with ``by`` columns for a curve per group.
    estimator : str
        ``"ips"``, ``"snips"``, ``"standard_ips"``, ``"independent_ips"``, ``"rips"``,
        ``"sn_standard_ips"``, ``"sn_independent_ips"``, ``"sn_rips"``.
        ``"snips"`` rescales the click weights to mean 1 over the group's logged clicks: its
        estimate is bounded by the logged clicks times the largest λ (it cannot blow up on a
        tiny examination probability) but it is biased; it ranks candidates of one log as
        ``"ips"`` does only up to that rescaling. Use ``"ips"`` for the metric's value.
    by : str or list, optional
        Group columns of the log (an estimate per group, e.g. per arm).
    session : str or list, optional
        Columns that, with the query, name one logged ranking when a query was shown several
        times (without them each (group, query) is one ranking).
    clip : float, optional
        The largest importance weight kept (1 / examination for ips, π_e / π_b for the slate
        estimators): ``min(w, clip)``, OBP's ``lambda_``. Lowers variance, biases down.
    ci : float, optional
        Confidence level of a percentile interval from the Poisson bootstrap over logged
        rankings (``n_resamples``, ``seed``).
    min_clicks : int
        Fewer supporting clicks than this raise a :class:`LowSupportWarning`.
    engine : {"polars", "duckdb"}

    Returns
    -------
    DataFrame
        One row per group and metric: ``estimate`` (``ci_low``, ``ci_high``), ``rankings`` (the
        logged rankings), ``clicks`` (the logged clicks with a non-zero weight: those that
        support the estimate), ``logged_clicks`` and ``ess`` (Kish's effective sample size of
        the importance weights: of the supporting clicks for ips, of the rankings for
        standard_ips, of the shown rows for independent_ips and rips).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["x", "y", "x", "z"],
    ...                     "position": [1, 2, 1, 2], "click": [0, 1, 1, 0]})
    >>> new = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["y", "x", "z", "x"], "position": [1, 2, 1, 2]})
    >>> exam = pl.DataFrame({"position": [1, 2], "examination": [1.0, 0.5]})
    >>> rp.counterfactual(log, new, ["clicks@2", "dcg@2"], examination=exam, min_clicks=0)
    shape: (2, 7)
    ┌──────────┬───────────┬──────────┬──────────┬────────┬───────────────┬─────┐
    │ metric   ┆ estimator ┆ estimate ┆ rankings ┆ clicks ┆ logged_clicks ┆ ess │
    │ ---      ┆ ---       ┆ ---      ┆ ---      ┆ ---    ┆ ---           ┆ --- │
    │ str      ┆ str       ┆ f64      ┆ i64      ┆ f64    ┆ f64           ┆ f64 │
    ╞══════════╪═══════════╪══════════╪══════════╪════════╪═══════════════╪═════╡
    │ clicks@2 ┆ ips       ┆ 1.25     ┆ 2        ┆ 2.0    ┆ 2.0           ┆ 1.8 │
    │ dcg@2    ┆ ips       ┆ 1.315465 ┆ 2        ┆ 2.0    ┆ 2.0           ┆ 1.8 │
    └──────────┴───────────┴──────────┴──────────┴────────┴───────────────┴─────┘
    """
    query, item, position, click, score = _names(schema, query, item, position, click, score)
    checks.check_arguments(clip, ci, n_resamples, min_clicks)
    if engine not in ("polars", "duckdb"):
        raise RankPolarsError(f"counterfactual: engine must be 'polars' or 'duckdb'; got {engine!r}")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    session_cols = [session] if isinstance(session, str) else list(session or [])
    names = {Q: query, D: item, P: position, C: click, "candidate_position": position}
    plan = _plan(candidate, metrics, examination, estimator, by_cols, session_cols, clip)
    lf, cand, ex = _prepare(plan, log, candidate, examination, names, score)
    if engine == "polars":
        parts = polars_engine.parts(plan, lf, cand, ex)
    else:
        parts = _duckdb_parts(plan, lf, cand, ex)
    return finish.estimates(plan, parts, ci=ci, n_resamples=n_resamples, seed=seed, min_clicks=min_clicks)


def _duckdb_parts(plan: Plan, log: pl.LazyFrame, candidate: pl.LazyFrame | None, examination: pl.LazyFrame | None
                  ) -> pl.DataFrame:
    """The parts in DuckDB, in a session of ``evaluate``'s DuckDB engine (its memory limit and spill
    folder).  The log and the candidate are streamed by Polars into Parquet files in a temporary
    folder and read there by DuckDB (as the DuckDB engine of ``evaluate`` reads a LazyFrame):
    handing DuckDB the frames held the whole log in memory (20M rows: 2.3 GiB)."""
    import tempfile

    from rank_polars.engines.duckdb_engine import DuckDBEngine, read_parquet
    from rank_polars.engines.sql_engine import literal

    with DuckDBEngine().session() as eng, tempfile.TemporaryDirectory(prefix="rank_polars-counterfactual-") as folder:
        assert eng.con is not None
        for name, frame in (("log", log), ("candidate", candidate)):
            if frame is not None:
                path = f"{folder}/{name}.parquet"
                frame.sink_parquet(path)
                eng.con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {read_parquet(literal(path))}")
        if examination is not None:
            eng.con.register("examination", examination.collect())
        parts = eng.query(sql.parts_sql(plan))
    # the groups as the log types them, as the Polars engine gives them (DuckDB reads a
    # Categorical or Enum back as text)
    types = log.collect_schema()
    return parts.with_columns(pl.col(b).cast(types[b]) for b in plan.by)


def counterfactual_sql(metrics: Metrics | None = None, *, estimator: str = "ips", by: str | Sequence[str] | None = None,
                       session: str | Sequence[str] | None = None, clip: float | None = None,
                       deterministic: bool = True, examination_by: Sequence[str] = (), log: str = "log",
                       candidate: str = "candidate", examination: str = "examination", schema: Schema | None = None,
                       query: str | None = None, item: str | None = None, position: str | None = None,
                       click: str | None = None, score: str | None = None) -> str:
    """The counterfactual estimate as one DuckDB ``SELECT`` over your own tables.

    It computes the same per-ranking sums as :func:`counterfactual` and ends with one row per
    group and metric: ``metric, estimate, rankings`` (no interval, no checks: run
    :func:`counterfactual` on a sample for those). The candidate table holds ``query, item``
    and ``position`` (or the ``score`` column); the examination table ``position,
    examination`` (and the ``examination_by`` group columns).

    Nothing checks the tables, so they must be what :func:`counterfactual` would accept: the
    candidate one ranking per query with **distinct positions** and each item once (two items
    at one position would each be weighed at that rank and counted twice in a ``ctr@k`` or
    ``p`` length, and an item twice would add its clicks twice: a wrong number, no error); the
    log no two clicked rows at one position of a logged ranking (name its ``session`` columns
    when a query was shown several times); examination probabilities finite and positive at
    every clicked position.

    Examples
    --------
    >>> import duckdb
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE log AS SELECT * FROM (VALUES ('a', 'x', 1, 0), ('a', 'y', 2, 1), "
    ...                 "('b', 'x', 1, 1), ('b', 'z', 2, 0)) AS t(query, item, position, click)")
    >>> _ = con.execute("CREATE TABLE candidate AS SELECT * FROM (VALUES ('a', 'y', 1), ('a', 'x', 2), "
    ...                 "('b', 'z', 1), ('b', 'x', 2)) AS t(query, item, position)")
    >>> _ = con.execute("CREATE TABLE examination AS SELECT * FROM (VALUES (1, 1.0), (2, 0.5)) AS t(position, examination)")
    >>> [(m, round(v, 6), n) for m, v, n in con.sql(counterfactual_sql(["clicks@2", "dcg@2"])).fetchall()]
    [('clicks@2', 1.25, 2), ('dcg@2', 1.315465, 2)]
    """
    query, item, position, click, score = _names(schema, query, item, position, click, score)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    session_cols = [session] if isinstance(session, str) else list(session or [])
    if estimator not in ESTIMATORS:
        raise RankPolarsError(f"counterfactual_sql: estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")
    ws = [SLATE_METRIC] if estimator in SLATE else weights(metrics if metrics is not None else [])
    plan = Plan(estimator, tuple(ws), tuple(by_cols), tuple(session_cols), clip, deterministic=deterministic,
                examination_by=tuple(examination_by))
    col = SLATE.get(estimator, "pscore")
    tables = sql.Tables(log=log, candidate=candidate, examination=examination, query=query, item=item,
                        position=position, click=click, behaviour=col, evaluation=EVALUATION[col],
                        candidate_query=query, candidate_item=item, candidate_rank=score or position,
                        by_score=score is not None, examination_position="position",
                        examination_value="examination")
    return sql.estimate_sql(plan, tables)
