-- dcg: Discounted cumulative gain: sum of gain(rel_i) / log2(i + 1) over the first ``k`` items.
-- Formula: DCG@k = sum over i <= k of gain(rel_i) * discount(i).
--
-- dcg(l, k := NULL, gain := 'linear', discount := 'log2')
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   gain: gain of a grade g: 'linear' = g, 'exp' = 2^g - 1.
--   discount: 'log2' = 1/log2(i+1); 'jarvelin' = 1 for i <= 2, then 1/log2(i) (ranks 1 and 2 undiscounted).
--
-- Example: SELECT model, query, dcg(list(relevance ORDER BY position), 10) AS dcg
--          FROM logs GROUP BY ALL;
-- __rp_dcg(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, gain, discount).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_dcg(s, n_ret, k := NULL, gain := 'linear', discount := 'log2') AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('dcg: k must be NULL or a positive integer') WHEN gain IS NULL OR lower(gain) NOT IN ('linear', 'exp') THEN error('dcg: gain must be one of linear, exp') WHEN discount IS NULL OR lower(discount) NOT IN ('log2', 'jarvelin') THEN error('dcg: discount must be one of log2, jarvelin') ELSE COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END THEN (CAST(CASE WHEN (x1.grade > CAST(0.0 AS DOUBLE)) THEN CASE WHEN (lower(gain) = 'linear') THEN x1.grade ELSE (POWER(CAST(2.0 AS DOUBLE), x1.grade) - CAST(1.0 AS DOUBLE)) END ELSE CAST(0.0 AS DOUBLE) END AS DOUBLE) / CASE WHEN (lower(discount) = 'log2') THEN (LN((x1.rank + CAST(1.0 AS DOUBLE))) / LN(2.0)) ELSE CASE WHEN (x1.rank <= CAST(2.0 AS DOUBLE)) THEN CAST(1.0 AS DOUBLE) ELSE (LN(x1.rank) / LN(2.0)) END END) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO dcg(l, k := NULL, gain := 'linear', discount := 'log2') AS __rp_dcg(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, gain := gain, discount := discount);
