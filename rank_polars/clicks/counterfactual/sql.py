"""The parts table (:mod:`.plan`) and the estimates as DuckDB SQL: set-based, one statement.

The DuckDB engine runs :func:`parts_sql` over the inputs registered under the internal names;
:func:`estimate_sql` (what ``rp.counterfactual_sql`` returns) reads the user's own tables and
columns and ends with the estimate per group and metric, so the IPS sums can run where the log
lives.
"""

from __future__ import annotations

from dataclasses import dataclass

from rank_polars.clicks.counterfactual.plan import B, C, D, E, P, Q, R, SLOT, T, Plan
from rank_polars.clicks.counterfactual.spec import SLATE


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Tables:
    """Where the inputs are: table names and the columns holding each role."""

    log: str = "log"
    candidate: str = "candidate"
    examination: str = "examination"
    query: str = Q
    item: str = D
    position: str = P
    click: str = C
    behaviour: str = B  # the logging policy's propensity column (slate estimators)
    evaluation: str = E  # the candidate's propensity column (stochastic candidate)
    candidate_query: str = Q
    candidate_item: str = D
    candidate_rank: str = R  # the candidate's position, or its score (``by_score``)
    by_score: bool = False
    examination_position: str = P
    examination_value: str = T


def _inputs(plan: Plan, t: Tables) -> list[str]:
    """CTEs ``l``, ``cand``, ``ex`` over the internal names."""
    keep = [*plan.by, *plan.session]
    extra = [f"{_q(t.behaviour)} AS {B}"] if plan.slate else []
    extra += [f"{_q(t.evaluation)} AS {E}"] if plan.slate and not plan.deterministic else []
    cols = ", ".join([*(_q(c) for c in keep), f"{_q(t.query)} AS {Q}", f"{_q(t.item)} AS {D}",
                      f"{_q(t.position)} AS {P}", f"CAST({_q(t.click)} AS DOUBLE) AS {C}", *extra])
    ctes = [f"l AS NOT MATERIALIZED (SELECT {cols} FROM {t.log})"]
    if plan.position_based or plan.deterministic:
        if t.by_score:
            rank = (f"ROW_NUMBER() OVER (PARTITION BY {_q(t.candidate_query)} "
                    f"ORDER BY {_q(t.candidate_rank)} DESC, {_q(t.candidate_item)} ASC)")
        else:
            rank = _q(t.candidate_rank)
        ctes.append(f"cand AS (SELECT {_q(t.candidate_query)} AS {Q}, {_q(t.candidate_item)} AS {D}, "
                    f"{rank} AS {R} FROM {t.candidate})")
    if plan.position_based:
        by = "".join(f"{_q(c)}, " for c in plan.examination_by)
        ctes.append(f"ex AS (SELECT {by}{_q(t.examination_position)} AS {P}, "
                    f"CAST({_q(t.examination_value)} AS DOUBLE) AS {T} FROM {t.examination})")
    return ctes


def _clip(w: str, clip: float | None) -> str:
    return w if clip is None else f"LEAST({w}, {float(clip)!r})"


def parts_sql(plan: Plan, t: Tables = Tables()) -> str:
    """One row per logged ranking (and slot) with the part columns of :mod:`.plan`."""
    ctes = _inputs(plan, t)
    keys = ", ".join(_q(k) for k in plan.keys)
    if plan.position_based:
        ctes += _position_based(plan)
    else:
        ctes += _slate(plan)
    return "WITH " + ",\n".join(ctes) + f"\nSELECT * FROM parts ORDER BY {keys}, {SLOT}"


def _position_based(plan: Plan) -> list[str]:
    keys = [_q(k) for k in plan.keys]
    on_ex = "".join(f" AND x.{_q(c)} = r.{_q(c)}" for c in plan.examination_by)
    on_ex_l = "".join(f" AND x.{_q(c)} = l.{_q(c)}" for c in plan.examination_by)
    select = [*(f"l.{k}" for k in keys), f"l.{C}", f"cand.{R}", f"{_clip(f'1.0 / x.{T}', plan.clip)} AS _w"]
    joins = (f"FROM l LEFT JOIN ex AS x ON x.{P} = l.{P}{on_ex_l} "
             f"LEFT JOIN cand ON cand.{Q} = l.{Q} AND cand.{D} = l.{D}")
    ctes = [f"r AS (SELECT {', '.join(select)} {joins} WHERE l.{C} > 0)"]
    src, theta_r = "r", "NULL"
    if plan.needs_theta_at_rank:
        ctes.append(f"rt AS (SELECT r.*, x.{T} AS _tr FROM r LEFT JOIN ex AS x ON x.{P} = r.{R}{on_ex})")
        src, theta_r = "rt", "_tr"
    if plan.needs_ranks_length:
        # as in Polars: all the rows of the query, or those ranked at most k (ctr@k)
        counts = ", ".join(f"COUNT(*) AS {name}" if k is None else f"SUM(CASE WHEN {R} <= {k} THEN 1 ELSE 0 END) AS {name}"
                           for name, k in plan.lengths.items())
        ctes.append(f"rn AS (SELECT s.*, {', '.join('n.' + name for name in plan.lengths)} FROM {src} AS s LEFT JOIN "
                    f"(SELECT {Q}, {counts} FROM cand GROUP BY {Q}) AS n ON n.{Q} = s.{Q})")
        src = "rn"
    terms = []
    for i, weight in enumerate(plan.weights):
        lam = weight.sql(R, theta_r, weight.length)
        on_k = f"CASE WHEN {lam} > 0 THEN 1.0 ELSE 0.0 END"
        terms += [f"SUM({lam} * {C} * _w) AS y_{i}", f"SUM({C} * {on_k}) AS sup_{i}",
                  f"SUM({C} * _w * {on_k}) AS w1_{i}", f"SUM({C} * _w * _w * {on_k}) AS w2_{i}"]
    terms += [f"SUM({C} * _w) AS den", f"SUM({C}) AS cnt", f"SUM({C}) AS clicks"]
    ctes.append(f"s AS (SELECT {', '.join(keys)}, {', '.join(terms)} FROM {src} GROUP BY ALL)")
    fill = ", ".join(f"COALESCE(CAST(s.{c} AS DOUBLE), 0.0) AS {c}" for c in plan.part_columns())
    on = " AND ".join(f"u.{k} IS NOT DISTINCT FROM s.{k}" for k in keys)
    ctes.append(f"parts AS (SELECT {', '.join(f'u.{k}' for k in keys)}, {fill}, CAST(0 AS BIGINT) AS {SLOT} "
                f"FROM (SELECT DISTINCT {', '.join(keys)} FROM l) AS u LEFT JOIN s ON {on})")
    return ctes


def _slate(plan: Plan) -> list[str]:
    keys = ", ".join(_q(k) for k in plan.keys)
    if plan.deterministic:
        m = f"CASE WHEN cand.{D} = l.{D} THEN 1.0 ELSE 0.0 END"
        over = f"OVER (PARTITION BY {', '.join('l.' + _q(k) for k in plan.keys)}"
        e = {"pscore": f"MIN({m}) {over})",
             "pscore_item_position": m,
             "pscore_cascade": f"CASE WHEN SUM(1.0 - {m}) {over} ORDER BY l.{P} "
                               f"ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) = 0 THEN 1.0 ELSE 0.0 END"}
        rows = (f"SELECT l.*, {e[SLATE[plan.estimator]]} AS {E} FROM l "
                f"LEFT JOIN cand ON cand.{Q} = l.{Q} AND cand.{R} = l.{P}")
    else:
        rows = "SELECT * FROM l"
    slot = f"CAST({P} AS BIGINT)" if plan.per_position else "CAST(0 AS BIGINT)"
    iw = _clip(f"{E} / {B}", plan.clip)
    if plan.estimator in ("standard_ips", "sn_standard_ips"):
        ess = "AVG(_iw) AS w1_0, AVG(_iw) * AVG(_iw) AS w2_0"  # one weight per ranking
    else:
        ess = "SUM(_iw) AS w1_0, SUM(_iw * _iw) AS w2_0"
    return [f"w AS (SELECT *, {iw} AS _iw, {slot} AS {SLOT} FROM ({rows}))",
            f"parts AS (SELECT {keys}, {SLOT}, SUM({C} * _iw) AS y_0, "
            f"SUM(CASE WHEN _iw > 0 THEN {C} ELSE 0.0 END) AS sup_0, {ess}, SUM(_iw) AS den, "
            f"CAST(COUNT(*) AS DOUBLE) AS cnt, SUM({C}) AS clicks FROM w GROUP BY ALL)"]


def estimate_sql(plan: Plan, t: Tables) -> str:
    """The estimate per group and metric, ending the parts with the estimator's aggregation.

    Non-normalised: Σ y / n rankings.  Self-normalised: Σ over slots of Σ y / Σ den · Σ cnt,
    over n (0 where a slot's Σ den is 0, a slot no weight reaches).
    """
    body = parts_sql(plan, t).rsplit("\nSELECT", 1)[0]
    by = [_q(c) for c in plan.by]
    gb = ", ".join(by)
    keys = ", ".join(_q(k) for k in plan.keys)
    n = (f"(SELECT {gb + ', ' if by else ''}COUNT(*) AS n FROM (SELECT DISTINCT {keys} FROM parts)"
         f"{' GROUP BY ' + gb if by else ''})")
    selects = []
    for i, weight in enumerate(plan.weights):
        if plan.self_normalised:
            slot = (f"SELECT {gb + ', ' if by else ''}{SLOT}, CASE WHEN SUM(den) > 0 THEN SUM(y_{i}) / SUM(den) * "
                    f"SUM(cnt) ELSE 0.0 END AS v FROM parts GROUP BY {gb + ', ' if by else ''}{SLOT}")
        else:
            slot = f"SELECT {gb + ', ' if by else ''}SUM(y_{i}) AS v FROM parts{' GROUP BY ' + gb if by else ''}"
        total = (f"SELECT {gb + ', ' if by else ''}SUM(v) AS v FROM ({slot}){' GROUP BY ' + gb if by else ''}")
        # a null group is a group like any other (as in both engines): matched as not distinct
        using = " ON " + (" AND ".join(f"t.{b} IS NOT DISTINCT FROM c.{b}" for b in by) if by else "TRUE")
        selects.append(f"SELECT {', '.join('t.' + b for b in by) + ', ' if by else ''}'{weight.label}' AS metric, "
                       f"t.v / c.n AS estimate, c.n AS rankings FROM ({total}) AS t JOIN {n} AS c{using}")
    order = ", ".join([*by, "metric"])
    return body + ",\nest AS (" + "\nUNION ALL\n".join(selects) + f")\nSELECT * FROM est ORDER BY {order}"
