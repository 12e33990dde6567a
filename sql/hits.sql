-- hits: The number of relevant items among the first k of a ranked list (ranx's ``hits``).
-- Formula: hits@k = the number of relevant items among the first k (ranx ``hits``); mean over queries.
--
-- hits(l, k := NULL, rel := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   rel: relevant means grade >= rel; default: grade > 0.
--
-- Example: SELECT model, query, hits(list(relevance ORDER BY position), 10) AS hits
--          FROM logs GROUP BY ALL;
-- __rp_hits: the formula, with every argument rank_eval passes (k, rel).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_hits(l, k := NULL, rel := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('hits: k must be NULL or a positive integer') ELSE COALESCE(list_sum(list_transform(CAST(l AS DOUBLE[]), lambda g1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO hits(l, k := NULL, rel := NULL) AS __rp_hits(l, k := k, rel := rel);
