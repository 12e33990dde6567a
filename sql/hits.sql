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
-- __rp_hits(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, rel).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_hits(s, n_ret, k := NULL, rel := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('hits: k must be NULL or a positive integer') ELSE COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (x1.grade > CAST(0.0 AS DOUBLE)) ELSE (x1.grade >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO hits(l, k := NULL, rel := NULL) AS __rp_hits(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, rel := rel);
