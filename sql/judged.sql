-- judged: Share of the first k items that are judged (null or negative grade: unjudged).
-- Formula: judged@k = judged items among the first min(k, n) / min(k, n), n = list length (ir_measures).
--
-- judged(l, k := NULL, n_ret := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   n_ret: the number of items retrieved; default: the length of the list (more than that when the list holds NULLs for positions the ranking skips).
--
-- Example: SELECT model, query, judged(list(relevance ORDER BY position), 10) AS judged
--          FROM logs GROUP BY ALL;
-- __rp_judged: the formula, with every argument rank_eval passes (k).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_judged(l, k := NULL, n_ret := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('judged: k must be NULL or a positive integer') ELSE CASE WHEN (CASE WHEN (k IS NULL) THEN COALESCE(n_ret, len(l)) ELSE LEAST(COALESCE(n_ret, len(l)), k) END > CAST(0.0 AS DOUBLE)) THEN (CAST(COALESCE(list_sum(list_transform(CAST(l AS DOUBLE[]), lambda g1, i1: CASE WHEN ((g1 IS NOT NULL AND g1 >= 0) AND CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) AS DOUBLE) / CASE WHEN (k IS NULL) THEN COALESCE(n_ret, len(l)) ELSE LEAST(COALESCE(n_ret, len(l)), k) END) ELSE CAST(0.0 AS DOUBLE) END END;
CREATE OR REPLACE MACRO judged(l, k := NULL, n_ret := NULL) AS __rp_judged(l, k := k, n_ret := n_ret);
