-- unj: Share of unjudged (null or negative) grades among the first k; missing positions are judged.
-- Formula: unj@k = unjudged documents among the first k / k (trec_eval ``unj``).
--
-- unj(l, k := NULL, n_ret := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   n_ret: the number of items retrieved; default: the length of the list (more than that when the list holds NULLs for positions the ranking skips).
--
-- Example: SELECT model, query, unj(list(relevance ORDER BY position), 10) AS unj
--          FROM logs GROUP BY ALL;
-- __rp_unj(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_unj(s, n_ret, k := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('unj: k must be NULL or a positive integer') ELSE CASE WHEN (k IS NULL) THEN CASE WHEN (n_ret > CAST(0.0 AS DOUBLE)) THEN (CAST((n_ret - COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN ((x1.grade IS NOT NULL AND x1.grade >= 0) AND TRUE) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0)) AS DOUBLE) / n_ret) ELSE CAST(0.0 AS DOUBLE) END ELSE (CAST((LEAST(n_ret, k) - COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN ((x1.grade IS NOT NULL AND x1.grade >= 0) AND (x1.rank <= k)) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0)) AS DOUBLE) / k) END END;
CREATE OR REPLACE MACRO unj(l, k := NULL, n_ret := NULL) AS __rp_unj(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), COALESCE(n_ret, len(l)), k := k);
