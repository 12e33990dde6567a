"""Each method's examination curve from the engine's two small tables (``sums.py``), written
once for every engine, so that the engines cannot differ in a convention.

Conventions, as ultr-bias-toolkit's (commit ba62bcb) where it defines one: a ratio 0/0 is 0
(``fillna(0)``); where it gives inf (x/0: clicks at a position, none at the reference) or skips a
missing link of the chain, the examination here is null (undefined), never inf or NaN.  One
departure, the same for every method: a group whose position 1 has no click (never clicked, or
never shown, among the rows read) has no curve relative to position 1, and every position of it
is null (the toolkit divides by that 0: 0 at position 1 itself and at every unclicked position,
inf at the clicked ones; see :func:`unreferenced`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

OUT = ["p", "examination", "support", "clicks"]


def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """num / den; 0 for 0/0 (the toolkit's convention), null for x/0 or a missing side."""
    return (pl.when(num.is_null() | den.is_null()).then(None)
            .when(den != 0).then(num / den).when(num == 0).then(pl.lit(0.0)))


def at_reference(expr: pl.Expr, position: pl.Expr, groups: list[str]) -> pl.Expr:
    """The value of ``expr`` at position 1 in each group (null if the group never shows position 1)."""
    return expr.filter(position == 1).first().over(groups)


def unreferenced(positions: pl.DataFrame, groups: list[str]) -> pl.DataFrame:
    """The groups (their ``groups`` columns) whose position 1 has no click among the rows read:
    never clicked there, or never shown there.  Every method divides by something measured at
    position 1 (its click rate, the (1, 1) or (1, k) intervention sets, or the fit's anchor
    x_1 = 0), so where that is 0 the examination relative to position 1 is undefined at every
    position of the group, position 1 itself included.

    >>> positions = pl.DataFrame({"g0": ["a", "a", "b", "b"], "p": [1, 2, 1, 2], "clicks": [0.0, 3.0, 1.0, 0.0]})
    >>> unreferenced(positions, ["g0"])["g0"].to_list()
    ['a']
    """
    at_1 = pl.col("clicks").filter(pl.col("p") == 1).sum()
    return positions.group_by(groups).agg(_at_1=at_1).filter(pl.col("_at_1") == 0).select(groups).sort(groups)


def estimate(method: str, positions: pl.DataFrame, pairs: pl.DataFrame | None, groups: list[str]) -> pl.DataFrame:
    """``groups..., p, examination, support, clicks`` for every position of ``positions``; every
    position of a group whose position 1 has no click is null (:func:`unreferenced`)."""
    positions = positions.with_columns(pl.col("p").cast(pl.Int64))
    out = _estimate(method, positions, pairs, groups)
    dead = unreferenced(positions, groups)
    if dead.is_empty():
        return out
    flagged = out.join(dead.with_columns(_dead=pl.lit(True)), on=groups, how="left", nulls_equal=True,
                       maintain_order="left")
    undefined = pl.col("_dead").fill_null(False)
    return flagged.with_columns(examination=pl.when(undefined).then(None).otherwise(pl.col("examination"))
                                ).select(*groups, *OUT)


def _estimate(method: str, positions: pl.DataFrame, pairs: pl.DataFrame | None, groups: list[str]) -> pl.DataFrame:
    if method in ("ctr", "rand_topk"):
        rate = pl.col("clicks") / pl.col("impressions")
        return positions.with_columns(examination=ratio(rate, at_reference(rate, pl.col("p"), groups)),
                                      support=pl.col("impressions")).sort(*groups, "p").select(*groups, *OUT)
    assert pairs is not None
    pairs = pairs.with_columns(pl.col("k0", "k1").cast(pl.Int64))
    if method == "all_pairs":
        return all_pairs(positions, pairs, groups)
    links = pairs.select(*groups, p="k1", e=ratio(pl.col("c1"), pl.col("c0")), support="n", clicks_at="clicks1")
    out = positions.drop("clicks").join(links, on=[*groups, "p"], how="left").sort(*groups, "p")
    if method in ("pivot", "rand_pair"):
        # the toolkit's normalize_bias: divided by the (1, 1) set's own ratio (1, or 0 without clicks)
        exam = ratio(pl.col("e"), at_reference(pl.col("e"), pl.col("p"), groups))
    else:
        # adjacent_chain: the product of the links from position 1; a missing or undefined link
        # leaves every deeper position undefined (the toolkit skips it and multiplies on)
        broken = pl.col("e").is_null().cum_sum().over(groups) > 0
        exam = pl.when(~broken).then(pl.col("e").fill_null(1.0).cum_prod().over(groups))
    return out.with_columns(examination=exam, support=pl.col("support").fill_null(0),
                            clicks=pl.col("clicks_at").fill_null(0)).select(*groups, *OUT)


def all_pairs(positions: pl.DataFrame, pairs: pl.DataFrame, groups: list[str]) -> pl.DataFrame:
    """The global all-pairs fit per group (see :func:`fit_all_pairs`); support and clicks of a
    position are summed over every intervention set it belongs to."""
    sides = pl.concat([pairs.select(*groups, p="k0", n="n", ck="clicks0"),
                       pairs.select(*groups, p="k1", n="n", ck="clicks1")])
    support = sides.group_by(*groups, "p").agg(support=pl.col("n").sum(), clicks=pl.col("ck").sum())
    fitted = []
    for key, part in pairs.partition_by(groups, as_dict=True, maintain_order=False).items():
        pos, exam = fit_all_pairs(part["k0"].to_numpy(), part["k1"].to_numpy(), part["c0"].to_numpy(),
                                  part["c1"].to_numpy(), part["clicks0"].to_numpy(), part["clicks1"].to_numpy())
        fitted.append(pl.DataFrame({**{g: [v] * len(pos) for g, v in zip(groups, key)}, "p": pos,
                                    "examination": exam}, schema_overrides={"p": pl.Int64, "examination": pl.Float64}))
    schema = {**positions.select(groups).schema, "p": pl.Int64, "examination": pl.Float64}
    fit = pl.concat(fitted, how="vertical_relaxed") if fitted else pl.DataFrame(schema=schema)
    fit = fit.with_columns(pl.col(g).cast(schema[g]) for g in groups)
    return (positions.select(*groups, "p").join(fit, on=[*groups, "p"], how="left")
            .join(support, on=[*groups, "p"], how="left")
            .with_columns(pl.col("support", "clicks").fill_null(0)).sort(*groups, "p").select(*groups, *OUT))


def fit_all_pairs(k0: np.ndarray, k1: np.ndarray, c0: np.ndarray, c1: np.ndarray,
                  clicks0: np.ndarray, clicks1: np.ndarray) -> tuple[list[int], list[float | None]]:
    """Agarwal et al.'s global all-pairs estimate (WSDM 2019, §4), solved in closed form.

    Their model says the summed click rate of the intervention set {k, k'} at position k is
    ``p_k · r_kk'`` with a relevance ``r_kk'`` shared by both positions, so ``log(c_k / c_k')`` estimates
    ``log p_k − log p_k'`` whatever the relevance. We fit ``x = log p`` by weighted least squares on
    these log-ratios over every set with clicks at both positions, with ``x_1 = 0`` (examination
    relative to position 1)::

        minimise  Σ_{k<k'} w_kk' (x_k − x_k' − log(c_k / c_k'))²,   w = c_k c_k' / (c_k + c_k')

    ``w`` is the inverse of the delta-method variance of the log-ratio when clicks are Poisson
    (1/c_k + 1/c_k'). Why this rather than the toolkit's SGD on the cross-entropy of
    ``sigmoid(e_k) · sigmoid(r_kk')``: its optimum is one sparse linear solve (the weighted graph
    Laplacian of the positions, reduced at position 1), so it is deterministic, exact and needs
    no epochs, learning rate or starting point; relevance cancels in the ratio, so none of the
    K² nuisance parameters are fitted (the toolkit also indexes them by ``k · k'``, which gives sets
    {2, 6} and {3, 4} one relevance); and as the click counts grow it converges to the same
    ratios as the maximum-likelihood fit. A set with no click at one of its positions has no
    finite log-ratio and is left out of the fit.

    A position reached from position 1 through sets with clicks at both ends gets ``exp(x_k)``;
    one never clicked in any of its sets while a partner fitted from position 1 was clicked
    there gets 0 (the limit of the fit, as the pivot gives 0); any other position is null.

    Returns the positions (sorted) and their examination.

    Examples
    --------
    Sets {1, 2} and {2, 3}, each with half the click rate at its deeper position; position 4
    only ever shown beside 3 and never clicked:

    >>> import numpy as np
    >>> positions, exam = fit_all_pairs(np.array([1, 2, 3]), np.array([2, 3, 4]), np.array([2.0, 1.0, 0.5]),
    ...                                 np.array([1.0, 0.5, 0.0]), np.array([2, 1, 1]), np.array([1, 1, 0]))
    >>> positions, [round(e, 12) for e in exam]
    ([1, 2, 3, 4], [1.0, 0.5, 0.25, 0.0])
    """
    positions = sorted(set(k0.tolist()) | set(k1.tolist()))
    index = {p: j for j, p in enumerate(positions)}
    a = np.array([index[p] for p in k0.tolist()], dtype=np.int64)
    b = np.array([index[p] for p in k1.tolist()], dtype=np.int64)
    use = (c0 > 0) & (c1 > 0)
    a, b, y = a[use], b[use], np.log(c0[use]) - np.log(c1[use])
    w = c0[use] * c1[use] / (c0[use] + c1[use])
    component = _component(len(positions), a, b, index.get(1))
    x = np.full(len(positions), np.nan)
    if component:
        members = sorted(component)
        local = {j: m for m, j in enumerate(members)}
        lap, rhs = np.zeros((len(members), len(members))), np.zeros(len(members))
        for s, t, ws, ys in zip(a.tolist(), b.tolist(), w.tolist(), y.tolist()):
            if s in component:  # a set lies wholly in the component or wholly outside it
                u, v = local[s], local[t]
                lap[u, u] += ws
                lap[v, v] += ws
                lap[u, v] -= ws
                lap[v, u] -= ws
                rhs[u] += ws * ys
                rhs[v] -= ws * ys
        ref = local[index[1]]
        keep = [m for m in range(len(members)) if m != ref]
        solved = np.zeros(len(members))
        if keep:
            solved[keep] = np.linalg.solve(lap[np.ix_(keep, keep)], rhs[keep])
        x[members] = solved
    exam: list[float | None] = [float(np.exp(v)) if not np.isnan(v) else None for v in x]
    clicked = np.zeros(len(positions))
    np.add.at(clicked, [index[p] for p in k0.tolist()], clicks0)
    np.add.at(clicked, [index[p] for p in k1.tolist()], clicks1)
    for s, t, cs, ct in zip(k0.tolist(), k1.tolist(), c0.tolist(), c1.tolist()):
        for me, other, c_other in ((index[s], index[t], ct), (index[t], index[s], cs)):
            if exam[me] is None and clicked[me] == 0 and other in component and c_other > 0:
                exam[me] = 0.0
    return positions, exam


def _component(size: int, a: np.ndarray, b: np.ndarray, start: int | None) -> set[int]:
    """The positions linked to ``start`` by the edges (a, b); empty if ``start`` has none."""
    if start is None:
        return set()
    neighbours: list[list[int]] = [[] for _ in range(size)]
    for s, t in zip(a.tolist(), b.tolist()):
        neighbours[s].append(t)
        neighbours[t].append(s)
    if not neighbours[start]:
        return set()
    seen, todo = {start}, [start]
    while todo:
        for nxt in neighbours[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
