{#-
  Ranking metrics per group, as rank_polars.evaluate(qrels=...) computes them: one row per group
  of the `by` columns with `queries` (the queries evaluated) and one column per metric, named as
  given.  See the package's README for every argument.
-#}
{% macro evaluate(relation, metrics, judgments=none, by=none, query="query", item="item", position=none,
                  score=none, relevance="relevance", judgments_columns=none, missing="zero") -%}
  {{ return(rank_polars.rp_evaluate_sql(relation, metrics, judgments, by, query, item, position, score, relevance,
                                        judgments_columns, missing, false)) }}
{%- endmacro %}
