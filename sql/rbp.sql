-- rbp: Rank-biased precision of a ranked list.
-- Formula: RBP(p)@k = (1 - p) * sum over i <= k of gain_i * p^(i-1) (no residual: see ``rbp_resid``).
--
-- rbp(l, k := NULL, p := 0.8, rel := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   p: persistence: probability of looking at the next item.
--   rel: relevant means grade >= rel; default: grade > 0.
--
-- Example: SELECT model, query, rbp(list(relevance ORDER BY position), 10) AS rbp
--          FROM logs GROUP BY ALL;
-- __rp_rbp(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, p, rel, gain).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_rbp(s, n_ret, k := NULL, p := 0.8, rel := NULL, gain := 'binary', ideal := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('rbp: k must be NULL or a positive integer') WHEN p IS NULL OR p <= 0 OR p >= 1 THEN error('rbp: p must be in (0, 1)') WHEN gain IS NULL OR lower(gain) NOT IN ('binary', 'graded') THEN error('rbp: gain must be one of binary, graded') WHEN k IS NULL AND p IS NOT NULL AND rel IS NOT NULL AND lower(gain) = 'graded' THEN error('rbp: gain=graded reads every positive grade; rel applies to gain=binary only') WHEN k IS NOT NULL AND p IS NOT NULL AND rel IS NOT NULL AND lower(gain) = 'graded' THEN error('rbp: gain=graded reads every positive grade; rel applies to gain=binary only') ELSE ((CAST(1.0 AS DOUBLE) - p) * COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN CASE WHEN (lower(gain) = 'binary') THEN ((x1.grade > CAST(0.0 AS DOUBLE)) AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) ELSE CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END END ELSE ((x1.grade >= rel) AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) END THEN CASE WHEN (rel IS NULL) THEN CASE WHEN (lower(gain) = 'binary') THEN POWER(p, (x1.rank - CAST(1.0 AS DOUBLE))) ELSE (CASE WHEN (x1.grade > CAST(0.0 AS DOUBLE)) THEN CASE WHEN (COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0) > CAST(1.0 AS DOUBLE)) THEN (CAST(x1.grade AS DOUBLE) / COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0)) ELSE x1.grade END ELSE CAST(0.0 AS DOUBLE) END * POWER(p, (x1.rank - CAST(1.0 AS DOUBLE)))) END ELSE POWER(p, (x1.rank - CAST(1.0 AS DOUBLE))) END ELSE CAST(0.0 AS DOUBLE) END)), 0.0)) END;
CREATE OR REPLACE MACRO rbp(l, k := NULL, p := 0.8, rel := NULL) AS __rp_rbp(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, p := p, rel := rel);
