-- cg: Cumulative gain of the first ``k`` grades of a ranked list (all of them without ``k``).
-- Formula: CG@k = sum of the gains of the first k items.
--
-- cg(l, k := NULL, gain := 'linear')
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   gain: gain of a grade g: 'linear' = g, 'exp' = 2^g - 1.
--
-- Example: SELECT model, query, cg(list(relevance ORDER BY position), 10) AS cg
--          FROM logs GROUP BY ALL;
-- __rp_cg(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, gain).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_cg(s, n_ret, k := NULL, gain := 'linear') AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('cg: k must be NULL or a positive integer') WHEN gain IS NULL OR lower(gain) NOT IN ('linear', 'exp') THEN error('cg: gain must be one of linear, exp') ELSE COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END THEN CASE WHEN (x1.grade > CAST(0.0 AS DOUBLE)) THEN CASE WHEN (lower(gain) = 'linear') THEN x1.grade ELSE (POWER(CAST(2.0 AS DOUBLE), x1.grade) - CAST(1.0 AS DOUBLE)) END ELSE CAST(0.0 AS DOUBLE) END ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO cg(l, k := NULL, gain := 'linear') AS __rp_cg(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, gain := gain);
