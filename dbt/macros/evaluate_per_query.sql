{#-
  Ranking metrics per (group, query), as rank_polars.evaluate(..., per_query=True): the `by`
  columns, the query column (named as in the log) and one column per metric.  The arguments are
  evaluate's.
-#}
{% macro evaluate_per_query(relation, metrics, judgments=none, by=none, query="query", item="item", position=none,
                            score=none, relevance="relevance", judgments_columns=none, missing="zero") -%}
  {{ return(rank_polars.rp_evaluate_sql(relation, metrics, judgments, by, query, item, position, score, relevance,
                                        judgments_columns, missing, true)) }}
{%- endmacro %}
