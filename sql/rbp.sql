-- rbp: Rank-biased precision of a ranked list.
-- Formula: RBP(p)@k = (1 - p) * sum over i <= k of gain_i * p^(i-1) (no residual: see ``rbp_resid``).
--
-- rbp(l, k := NULL, p := 0.8, rel := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged; the ideal ranking and R come from this list.
--   k: cutoff (a positive integer); NULL = the whole list.
--   p: persistence: probability of looking at the next item.
--   rel: relevant means grade >= rel; default: grade > 0.
--
-- Example: SELECT model, query, rbp(list(relevance ORDER BY position), 10) AS rbp
--          FROM logs GROUP BY ALL;
--
-- Generated from rank_polars/measures by rank_polars/engines/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO rbp(l, k := NULL, p := 0.8, rel := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('rbp: k must be NULL or a positive integer') WHEN p IS NULL OR p <= 0 OR p >= 1 THEN error('rbp: p must be in (0, 1)') ELSE ((CAST(1.0 AS DOUBLE) - p) * COALESCE(list_sum(list_transform(CAST(l AS DOUBLE[]), lambda g1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END) THEN POWER(p, (i1 - CAST(1.0 AS DOUBLE))) ELSE CAST(0.0 AS DOUBLE) END)), 0.0)) END;
