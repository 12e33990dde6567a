-- err: Expected reciprocal rank of a ranked list of grades.
-- Formula: ERR@k = sum over i <= k of R_i / i * prod over j < i of (1 - R_j).
--
-- err(l, k := NULL, max := NULL, ideal := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged.
--   k: cutoff (a positive integer); NULL = the whole list.
--   max: maximum grade of the scale; default: highest grade in the judgments.
--   ideal: the query's judged grades (a list, any order), e.g. the judgments' grades of the query; default: the list's own grades (the ideal ranking is then the list sorted).
--
-- Example: SELECT model, query, err(list(relevance ORDER BY position), 10) AS err
--          FROM logs GROUP BY ALL;
--          err(l, ideal := grades) with grades the query's judged grades (see tables.sql).
-- __rp_err(s, n_ret, ...): the formula over the ranking's rows s, a list of {rank, grade} structs
--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number
--   retrieved; with every argument rank_eval passes (k, max).
--
-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO __rp_err(s, n_ret, k := NULL, max := NULL, ideal := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('err: k must be NULL or a positive integer') WHEN max IS NOT NULL AND max <= 0 THEN error('err: max must be NULL or > 0') WHEN ideal IS NOT NULL AND max IS NULL THEN error('err: with ideal := give max := (the top grade of the scale, e.g. the largest grade of all judgments)') ELSE COALESCE(list_sum(list_transform(s, lambda x1, i1: CASE WHEN CASE WHEN (k IS NULL) THEN TRUE ELSE (x1.rank <= k) END THEN ((CAST(CASE WHEN (x1.grade > CAST(0.0 AS DOUBLE)) THEN (CAST((POWER(CAST(2.0 AS DOUBLE), LEAST(x1.grade, CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0) ELSE max END)) - CAST(1.0 AS DOUBLE)) AS DOUBLE) / POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0) ELSE max END)) ELSE CAST(0.0 AS DOUBLE) END AS DOUBLE) / x1.rank) * EXP((COALESCE(list_sum(list_transform(list_slice(s, 1, i1), lambda x2, i2: LN(CASE WHEN (x2.grade > CAST(0.0 AS DOUBLE)) THEN (CAST(((POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g3, i3: g3)), 0.0) ELSE max END) - POWER(CAST(2.0 AS DOUBLE), LEAST(x2.grade, CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g3, i3: g3)), 0.0) ELSE max END))) + CAST(1.0 AS DOUBLE)) AS DOUBLE) / POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g3, i3: g3)), 0.0) ELSE max END)) ELSE CAST(1.0 AS DOUBLE) END))), 0.0) - LN(CASE WHEN (x1.grade > CAST(0.0 AS DOUBLE)) THEN (CAST(((POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0) ELSE max END) - POWER(CAST(2.0 AS DOUBLE), LEAST(x1.grade, CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0) ELSE max END))) + CAST(1.0 AS DOUBLE)) AS DOUBLE) / POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(CAST(COALESCE(ideal, list_transform(s, lambda x0: x0.grade)) AS DOUBLE[]), lambda g2, i2: g2)), 0.0) ELSE max END)) ELSE CAST(1.0 AS DOUBLE) END)))) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
CREATE OR REPLACE MACRO err(l, k := NULL, max := NULL, ideal := NULL) AS __rp_err(list_transform(l, lambda g_, i_: {'rank': i_, 'grade': CAST(g_ AS DOUBLE)}), len(l), k := k, max := max, ideal := ideal);
