-- rr: Reciprocal rank of the first relevant item of a ranked list.
-- Formula: RR@k = 1 / rank of the first relevant item within the first k; 0 if there is none.
--
-- rr(l, k := NULL, rel := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   rel: relevant means grade >= rel; default: grade > 0.
--
-- Example: SELECT model, query, rr(list(relevance ORDER BY position), 10) AS rr
--          FROM logs GROUP BY ALL;
-- __rp_rr: the formula, with every argument rank_eval passes (k, rel).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_rr(l, k := NULL, rel := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('rr: k must be NULL or a positive integer') ELSE COALESCE(list_max(list_transform(CAST(l AS DOUBLE[]), lambda g1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END) THEN (CAST(CAST(1.0 AS DOUBLE) AS DOUBLE) / i1) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO rr(l, k := NULL, rel := NULL) AS __rp_rr(l, k := k, rel := rel);
