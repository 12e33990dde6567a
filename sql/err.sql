-- err: Expected reciprocal rank of a ranked list of grades.
-- Formula: ERR@k = sum over i <= k of R_i / i * prod over j < i of (1 - R_j).
--
-- err(l, k := NULL, max := NULL)
--   l: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);
--      NULL or negative grades are unjudged; the ideal ranking and R come from this list.
--   k: cutoff (a positive integer); NULL = the whole list.
--   max: maximum grade of the scale; default: highest grade in the judgments.
--
-- Example: SELECT model, query, err(list(relevance ORDER BY position), 10) AS err
--          FROM logs GROUP BY ALL;
--
-- Generated from rank_polars/measures by rank_polars/engines/macros.py; do not edit by hand.
CREATE OR REPLACE MACRO err(l, k := NULL, max := NULL) AS
CASE WHEN k IS NOT NULL AND (k < 1 OR k <> floor(k)) THEN error('err: k must be NULL or a positive integer') WHEN max IS NOT NULL AND max <= 0 THEN error('err: max must be NULL or > 0') ELSE COALESCE(list_sum(list_transform(CAST(l AS DOUBLE[]), lambda g1, i1: CASE WHEN CASE WHEN (k IS NULL) THEN TRUE ELSE (i1 <= k) END THEN ((CAST(CASE WHEN (g1 > CAST(0.0 AS DOUBLE)) THEN (CAST((POWER(CAST(2.0 AS DOUBLE), LEAST(g1, CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(list_sort(CAST(l AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g2, i2: g2)), 0.0) ELSE max END)) - CAST(1.0 AS DOUBLE)) AS DOUBLE) / POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(list_sort(CAST(l AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g2, i2: g2)), 0.0) ELSE max END)) ELSE CAST(0.0 AS DOUBLE) END AS DOUBLE) / i1) * EXP((COALESCE(list_sum(list_transform(list_slice(CAST(l AS DOUBLE[]), 1, i1), lambda g2, i2: LN((CAST(1.0 AS DOUBLE) - CASE WHEN (g2 > CAST(0.0 AS DOUBLE)) THEN (CAST((POWER(CAST(2.0 AS DOUBLE), LEAST(g2, CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(list_sort(CAST(l AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g3, i3: g3)), 0.0) ELSE max END)) - CAST(1.0 AS DOUBLE)) AS DOUBLE) / POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(list_sort(CAST(l AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g3, i3: g3)), 0.0) ELSE max END)) ELSE CAST(0.0 AS DOUBLE) END)))), 0.0) - LN((CAST(1.0 AS DOUBLE) - CASE WHEN (g1 > CAST(0.0 AS DOUBLE)) THEN (CAST((POWER(CAST(2.0 AS DOUBLE), LEAST(g1, CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(list_sort(CAST(l AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g2, i2: g2)), 0.0) ELSE max END)) - CAST(1.0 AS DOUBLE)) AS DOUBLE) / POWER(CAST(2.0 AS DOUBLE), CASE WHEN (max IS NULL) THEN COALESCE(list_max(list_transform(list_sort(CAST(l AS DOUBLE[]), 'DESC', 'NULLS LAST'), lambda g2, i2: g2)), 0.0) ELSE max END)) ELSE CAST(0.0 AS DOUBLE) END))))) ELSE CAST(0.0 AS DOUBLE) END)), 0.0) END;
