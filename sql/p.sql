-- p: Precision at k of a ranked list (``relative=True``: divided by min(k, R), trec_eval's relative_P).
-- Formula: P@k = relevant items among the first k / k (missing positions count as non-relevant).
--
-- p(l, k := NULL, rel := NULL, n_ret := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   rel: relevant means grade >= rel; default: grade > 0.
--   n_ret: the number of items retrieved; default: the length of the list (more than that when the list holds NULLs for positions the ranking skips).
--
-- Example: SELECT model, query, p(list(relevance ORDER BY position), 10) AS p
--          FROM logs GROUP BY ALL;
-- __rp_p(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, rel, relative).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_p(s, n_ret, k := NULL, rel := NULL, relative := 'false', ideal := NULL, r := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('p: k must be NULL or a positive integer') WHEN relative IS NULL OR lower(CAST(relative AS VARCHAR)) NOT IN ('true', '1', 'yes', 'false', '0', 'no') THEN error('p: relative must be true or false') ELSE CASE WHEN (CASE WHEN (lower(CAST(relative AS VARCHAR)) IN ('false', '0', 'no')) THEN CASE WHEN (k IS NULL) THEN n_ret ELSE k END ELSE LEAST(CASE WHEN (k IS NULL) THEN n_ret ELSE k END, CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END) END > CAST(0.0 AS DOUBLE)) THEN (CAST(COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (x1.grade > CAST(0.0 AS DOUBLE)) ELSE (x1.grade >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) AS DOUBLE) / CASE WHEN (lower(CAST(relative AS VARCHAR)) IN ('false', '0', 'no')) THEN CASE WHEN (k IS NULL) THEN n_ret ELSE k END ELSE LEAST(CASE WHEN (k IS NULL) THEN n_ret ELSE k END, CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END) END) ELSE CAST(0.0 AS DOUBLE) END END;
CREATE OR REPLACE MACRO p(l, k := NULL, rel := NULL, n_ret := NULL) AS __rp_p(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), COALESCE(n_ret, len(l)), k := k, rel := rel);
