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
-- __rp_rr(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, rel).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_rr(s, n_ret, k := NULL, rel := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('rr: k must be NULL or a positive integer') ELSE COALESCE(list_max(list_transform(s, lambda x1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (x1.grade > CAST(0.0 AS DOUBLE)) ELSE (x1.grade >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) THEN (CAST(CAST(1.0 AS DOUBLE) AS DOUBLE) / x1.rank) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO rr(l, k := NULL, rel := NULL) AS __rp_rr(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, rel := rel);
