-- recall: Recall at k of a ranked list; R is the number of relevant grades in the list.
-- Formula: R@k = relevant items among the first k / R; 0 when R = 0.
--
-- recall(l, k := NULL, rel := NULL, ideal := NULL, r := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   rel: relevant means grade >= rel; default: grade > 0.
--   ideal: the query's judged grades (a list, any order), e.g. the judgments' grades of the query; default: the list's own grades (the ideal ranking is then the list sorted).
--   r: R, the number of relevant judgments of the query; default: counted in ideal.
--
-- Example: SELECT model, query, recall(list(relevance ORDER BY position), 10) AS recall
--          FROM logs GROUP BY ALL;
--          recall(l, ideal := grades) with grades the query's judged grades (see tables.sql).
-- __rp_recall(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, rel).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_recall(s, n_ret, k := NULL, rel := NULL, ideal := NULL, r := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('recall: k must be NULL or a positive integer') ELSE CASE WHEN (CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END > CAST(0.0 AS DOUBLE)) THEN (CAST(COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (x1.grade > CAST(0.0 AS DOUBLE)) ELSE (x1.grade >= rel) END AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) AS DOUBLE) / CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END) ELSE CAST(0.0 AS DOUBLE) END END;
CREATE OR REPLACE MACRO recall(l, k := NULL, rel := NULL, ideal := NULL, r := NULL) AS __rp_recall(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, rel := rel, ideal := ideal, r := r);
