-- rprec: R-precision: precision at R, the number of relevant grades in the list (``mult``: at floor(mult R + 0.9)).
-- Formula: R-precision = relevant items among the first R / R (even when the list is shorter).
--
-- rprec(l, rel := NULL, mult := 1.0, ideal := NULL, r := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   rel: relevant means grade >= rel; default: grade > 0.
--   mult: multiple of R at which precision is taken (trec_eval Rprec_mult).
--   ideal: the query's judged grades (a list, any order), e.g. the judgments' grades of the query; default: the list's own grades (the ideal ranking is then the list sorted).
--   r: R, the number of relevant judgments of the query; default: counted in ideal.
--
-- Example: SELECT model, query, rprec(list(relevance ORDER BY position)) AS rprec
--          FROM logs GROUP BY ALL;
--          rprec(l, ideal := grades) with grades the query's judged grades (see tables.sql).
-- __rp_rprec(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (rel, mult).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_rprec(s, n_ret, rel := NULL, mult := 1.0, ideal := NULL, r := NULL) AS
CASE WHEN mult IS NULL OR mult < 0 THEN error('rprec: mult must be >= 0') ELSE CASE WHEN (CAST(FLOOR(((mult * CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END) + CAST(0.9 AS DOUBLE))) AS DOUBLE) > CAST(0.0 AS DOUBLE)) THEN (CAST(COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN (CASE WHEN (rel IS NULL) THEN (x1.grade > CAST(0.0 AS DOUBLE)) ELSE (x1.grade >= rel) END AND (x1.rank <= ((mult * CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: CASE WHEN CASE WHEN (rel IS NULL) THEN (g2 > CAST(0.0 AS DOUBLE)) ELSE (g2 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END) + CAST(0.9 AS DOUBLE)))) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) AS DOUBLE) / CAST(FLOOR(((mult * CASE WHEN (r IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE r END) + CAST(0.9 AS DOUBLE))) AS DOUBLE)) ELSE CAST(0.0 AS DOUBLE) END END;
CREATE OR REPLACE MACRO rprec(l, rel := NULL, mult := 1.0, ideal := NULL, r := NULL) AS __rp_rprec(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), rel := rel, mult := mult, ideal := ideal, r := r);
