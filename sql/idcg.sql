-- idcg: Ideal DCG: the DCG of the list's own grades sorted in descending order.
-- Formula: IDCG@k = DCG@k of the ideal ranking (judgments sorted by gain, descending; only     positive gains).
--
-- idcg(l, k := NULL, gain := 'linear', discount := 'log2', ideal_cut := 'k', ideal := NULL, n_ret := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   gain: gain of a grade g: 'linear' = g, 'exp' = 2^g - 1.
--   discount: 'log2' = 1/log2(i+1); 'jarvelin' = 1 for i <= 2, then 1/log2(i) (ranks 1 and 2 undiscounted).
--   ideal_cut: ideal cut at 'k' (whole ideal list without @k; trec_eval), or at min(k, length of the ranked 'list').
--   ideal: the query's judged grades (a list, any order), e.g. the judgments' grades of the query; default: the list's own grades (the ideal ranking is then the list sorted).
--   n_ret: the number of items retrieved; default: the length of the list (more than that when the list holds NULLs for positions the ranking skips).
--
-- Example: SELECT model, query, idcg(list(relevance ORDER BY position), 10) AS idcg
--          FROM logs GROUP BY ALL;
--          idcg(l, ideal := grades) with grades the query's judged grades (see tables.sql).
-- __rp_idcg(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, gain, discount, ideal_cut).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_idcg(s, n_ret, k := NULL, gain := 'linear', discount := 'log2', ideal_cut := 'k', ideal := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('idcg: k must be NULL or a positive integer') WHEN gain IS NULL OR lower(gain) NOT IN ('linear', 'exp') THEN error('idcg: gain must be one of linear, exp') WHEN discount IS NULL OR lower(discount) NOT IN ('log2', 'jarvelin') THEN error('idcg: discount must be one of log2, jarvelin') WHEN ideal_cut IS NULL OR lower(ideal_cut) NOT IN ('k', 'list') THEN error('idcg: ideal_cut must be one of k, list') ELSE COALESCE(list_sum(list_transform(list_sort(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g1, i1: CASE WHEN CASE WHEN (lower(ideal_cut) = 'k') THEN CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END ELSE (CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END AND (i1 <= n_ret)) END THEN (CAST(CASE WHEN (CASE WHEN (g1 > CAST(0.0 AS DOUBLE)) THEN CASE WHEN (lower(gain) = 'linear') THEN g1 ELSE (POWER(CAST(2.0 AS DOUBLE), g1) - CAST(1.0 AS DOUBLE)) END ELSE CAST(0.0 AS DOUBLE) END > CAST(0.0 AS DOUBLE)) THEN CASE WHEN (g1 > CAST(0.0 AS DOUBLE)) THEN CASE WHEN (lower(gain) = 'linear') THEN g1 ELSE (POWER(CAST(2.0 AS DOUBLE), g1) - CAST(1.0 AS DOUBLE)) END ELSE CAST(0.0 AS DOUBLE) END ELSE CAST(0.0 AS DOUBLE) END AS DOUBLE) / CASE WHEN (lower(discount) = 'log2') THEN (LN((i1 + CAST(1.0 AS DOUBLE))) / LN(2.0)) ELSE CASE WHEN (i1 <= CAST(2.0 AS DOUBLE)) THEN CAST(1.0 AS DOUBLE) ELSE (LN(i1) / LN(2.0)) END END) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO idcg(l, k := NULL, gain := 'linear', discount := 'log2', ideal_cut := 'k', ideal := NULL, n_ret := NULL) AS __rp_idcg(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), COALESCE(n_ret, len(l)), k := k, gain := gain, discount := discount, ideal_cut := ideal_cut, ideal := ideal);
