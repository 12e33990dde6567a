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
-- __rp_judged(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_judged(s, n_ret, k := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('judged: k must be NULL or a positive integer') ELSE CASE WHEN (CASE WHEN (k IS NULL) THEN n_ret ELSE LEAST(n_ret, k) END > CAST(0.0 AS DOUBLE)) THEN (CAST(COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN ((x1.grade IS NOT NULL AND x1.grade >= 0) AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) AS DOUBLE) / CASE WHEN (k IS NULL) THEN n_ret ELSE LEAST(n_ret, k) END) ELSE CAST(0.0 AS DOUBLE) END END;
CREATE OR REPLACE MACRO judged(l, k := NULL, n_ret := NULL) AS __rp_judged(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), COALESCE(n_ret, len(l)), k := k);
