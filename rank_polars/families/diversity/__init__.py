"""ndeval's measures (:mod:`rank_polars.measures.diversity`) in the Polars and DuckDB engines.

Two parts, shared by both engines and by the drop-in ``rank-polars ndeval``:

* **the greedy ideal** (:func:`ideal_gains`), from the judgments alone: one vectorised step
  per rank over all queries at once (score every unplaced relevant item by the gains its
  subtopics still carry, keep each query's best, ties to the larger item id, decay the
  gains of its subtopics).  It is iterative, so it is computed once per query from the
  judgments (not per ranking), cut at the cutoff, and joined: in DuckDB it runs as the same
  steps in a recursive CTE (:func:`ideal_sql`), each step a group-by and a join over the
  items still unplaced;
* **the run's gains**: the number of earlier items relevant to the same subtopic is a
  window count, so a ranking's ``G_i`` and every measure are one pass (:func:`run_values`
  in Polars, :func:`sql_values` in SQL).

The submodules, each importing only those above it in this list:

* :mod:`~rank_polars.families.diversity.names`: the column names the others share
  (``SUB``, ``POS``, ``G``, ...), the measures normalised by the ideal, how specs are grouped;
* :mod:`~rank_polars.families.diversity.checks`: the subtopic judgments: the rows the measures
  read, what is refused in them (:func:`check_subtopics`, :func:`refuse_subtopics`), and their
  reading and binding from the call's qrels (:func:`bind_subtopics`, :func:`judged_queries`);
* :mod:`~rank_polars.families.diversity.ideal`: the greedy ideal, in both engines' forms
  (:func:`ideal_gains`, :func:`ideal_sql`, :func:`nrbp_depth`);
* :mod:`~rank_polars.families.diversity.plan`: the Polars computation (:func:`polars_values`,
  :func:`run_values`, the ranking codes and :func:`segment_sums`);
* :mod:`~rank_polars.families.diversity.sql`: the SQL (:func:`sql_values`, its statements and
  the checks in the database).

This package re-exports what other code imports from it: the engines find the family by its name
and call :func:`polars_values` and :func:`sql_values`.  The budgets are read where they are
defined: :data:`~rank_polars.families.diversity.plan.RANGE_ROWS` and
:data:`~rank_polars.families.diversity.plan.PACKED_BITS` in ``plan``,
:data:`~rank_polars.families.diversity.sql.SQL_RANGE_ROWS` in ``sql``,
:data:`~rank_polars.families.diversity.checks.JUDGMENT_ROWS` in ``checks`` (set them there).
"""

from __future__ import annotations

from rank_polars.families.diversity.checks import (bind_subtopics, check_subtopics, judged_queries,
                                                   reads_qrels_subtopics, refuse_subtopics, relevant_expr,
                                                   relevant_pairs, relevant_sql)
from rank_polars.families.diversity.ideal import ideal_gains, ideal_sql, nrbp_depth
from rank_polars.families.diversity.plan import polars_values, run_starts, run_values, segment_sums
from rank_polars.families.diversity.sql import SQL_DIALECTS, sql_values

# what the engines (polars_values, sql_values, SQL_DIALECTS), evaluate (bind_subtopics), the drop-in
# ndeval (run_values), the beyond family (run_starts, segment_sums) and the command line read here
__all__ = ["SQL_DIALECTS", "bind_subtopics", "check_subtopics", "ideal_gains", "ideal_sql", "judged_queries",
           "nrbp_depth", "polars_values", "reads_qrels_subtopics", "refuse_subtopics", "relevant_expr",
           "relevant_pairs", "relevant_sql", "run_starts", "run_values", "segment_sums", "sql_values"]
