-- fallout: Fall-out at k: the judged non-relevant items among the first k over the list's judged     non-relevant items (grade 0; a null or negative grade is unjudged), 0 when it has none.
-- Formula: fallout@k = judged non-relevant items among the first k / judged non-relevant items of the query.
--
-- fallout(l, k := NULL, rel := NULL, ideal := NULL, n := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   rel: relevant means grade >= rel; default: grade > 0.
--   ideal: the query's judged grades (a list, any order), e.g. the judgments' grades of the query; default: the list's own grades (the ideal ranking is then the list sorted).
--   n: N, the number of judged non-relevant judgments of the query; default: counted in the list (with ideal := it must be given: ideal := may hold the grades above 0 alone).
--
-- Example: SELECT model, query, fallout(list(relevance ORDER BY position), 10) AS fallout
--          FROM logs GROUP BY ALL;
--          fallout(l, ideal := grades) with grades the query's judged grades (see tables.sql).
-- __rp_fallout(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, rel).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_fallout(s, n_ret, k := NULL, rel := NULL, ideal := NULL, n := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('fallout: k must be NULL or a positive integer') ELSE CASE WHEN (CASE WHEN (n IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN ((g1 IS NOT NULL AND g1 >= 0) AND (NOT CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END)) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE n END > CAST(0.0 AS DOUBLE)) THEN (CAST(COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN (((x1.grade IS NOT NULL AND x1.grade >= 0) AND (NOT CASE WHEN (rel IS NULL) THEN (x1.grade > CAST(0.0 AS DOUBLE)) ELSE (x1.grade >= rel) END)) AND CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) AS DOUBLE) / CASE WHEN (n IS NULL) THEN COALESCE(list_sum(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g1, i1: CASE WHEN ((g1 IS NOT NULL AND g1 >= 0) AND (NOT CASE WHEN (rel IS NULL) THEN (g1 > CAST(0.0 AS DOUBLE)) ELSE (g1 >= rel) END)) THEN CAST(1.0 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) ELSE n END) ELSE CAST(0.0 AS DOUBLE) END END;
CREATE OR REPLACE MACRO fallout(l, k := NULL, rel := NULL, ideal := NULL, n := NULL) AS CASE WHEN ideal IS NOT NULL AND n IS NULL THEN error('fallout reads N, the judged non-relevant judgments, and ideal := (the ideal ranking) need not hold the grade-0 judgments: pass n :=, their number (rp.with_judgments'' num_nonrel)') ELSE __rp_fallout(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, rel := rel, ideal := ideal, n := n) END;
