{#-
  The statement behind evaluate and evaluate_per_query.  Only this file is written by hand: it
  renames the user's columns (the one place their names are read, each quoted by the adapter),
  numbers the groups of the `by` columns, and joins the generated blocks (one per metric, each
  the SQL rank_polars.to_sql writes for that metric) on the (group, query) pairs to evaluate.
  Its SQL is portable: DISTINCT, ROW_NUMBER / DENSE_RANK OVER (ORDER BY ...), IS NOT DISTINCT
  FROM, joins and COUNT; every dialect's own text comes from the generated macros.
-#}
{% macro rp_evaluate_sql(relation, metrics, judgments, by, query, item, position, score, relevance,
                         judgments_columns, missing, per_query) -%}
  {%- set fail = "rank_polars.evaluate: " -%}
  {%- if missing not in ("zero", "skip") -%}
    {{ exceptions.raise_compiler_error(fail ~ "missing must be 'zero' or 'skip', got " ~ missing) }}
  {%- endif -%}
  {%- if position is not none and score is not none -%}
    {{ exceptions.raise_compiler_error(fail ~ "give position= (rank as shown) or score= (rank by score, descending), not both") }}
  {%- endif -%}
  {%- set by = [] if by is none else ([by] if by is string else by | list) -%}
  {%- if by | unique | list | length != by | length -%}
    {{ exceptions.raise_compiler_error(fail ~ "by: a column is named twice in " ~ by) }}
  {%- endif -%}
  {%- if query in by or item in by -%}
    {{ exceptions.raise_compiler_error(fail ~ "by: " ~ query ~ " or " ~ item ~ " is the query or item column; group by other columns") }}
  {%- endif -%}
  {%- set judged = judgments_columns or {} -%}
  {%- for role in judged if role not in ("query", "item", "relevance") -%}
    {{ exceptions.raise_compiler_error(fail ~ "judgments_columns names the roles query, item and relevance, got " ~ role) }}
  {%- endfor -%}
  {#- (label, name) pairs: a mapping names the output columns, a list is labelled by its names -#}
  {%- set outputs = [] -%}
  {%- if metrics is mapping -%}
    {%- for label, name in metrics.items() -%}{%- do outputs.append((label, name)) -%}{%- endfor -%}
  {%- else -%}
    {%- for name in ([metrics] if metrics is string else metrics) -%}{%- do outputs.append((name, name)) -%}{%- endfor -%}
  {%- endif -%}
  {%- if outputs | length == 0 -%}{{ exceptions.raise_compiler_error(fail ~ "no metric requested") }}{%- endif -%}
  {%- set labels = outputs | map(attribute=0) | list -%}
  {%- if labels | unique | list | length != labels | length -%}
    {{ exceptions.raise_compiler_error(fail ~ "a metric is requested twice: " ~ (labels | join(", "))) }}
  {%- endif -%}
  {%- set specs = [] -%}
  {%- for label, name in outputs -%}{%- do specs.append(rank_polars.rp_parse_metric(name)) -%}{%- endfor -%}

  {%- set n = {} -%}
  {%- for name in ("__rp_dbt_source", "__rp_dbt_groups", "__rp_dbt_pairs", "__rp_dbt_log", "__rp_dbt_judgments",
                   "__rp_universe", "__rp_group", "__rp_key", "__rp_query", "__rp_item",
                   "__rp_order", "__rp_label", "__rp_by0", "__rp_value", "queries") -%}
    {%- do n.update({name.replace("__rp_dbt_", "").replace("__rp_", ""): adapter.quote(name)}) -%}
  {%- endfor -%}
  {%- set cols = [] -%}
  {%- for c in by -%}{%- do cols.append(adapter.quote(c)) -%}{%- endfor -%}
  {%- set run_labels = judgments is none -%}
  {%- set order = "position" if score is none else "score" -%}

  WITH {{ n.source }} AS (
    SELECT {% for c in cols %}{{ c }}, {% endfor -%}
    {{ adapter.quote(query) }} AS {{ n.query }}, {{ adapter.quote(item) }} AS {{ n.item }},
    {{ adapter.quote(score if score is not none else position or "position") }} AS {{ n.order }}
    {%- if run_labels %}, {{ adapter.quote(relevance) }} AS {{ n.label }}{% endif %}
    FROM {{ relation }}
  ),
  {%- if run_labels %}
  {#- without judgments the log's labels are the judgments: each (group, query) is its own query
      (a number, __rp_key), so that every ranking has its own ideal, as rank_polars.evaluate -#}
  {{ n.pairs }} AS (
    SELECT p.*, ROW_NUMBER() OVER (ORDER BY {% for c in cols %}p.{{ c }}, {% endfor %}p.{{ n.query }}) AS {{ n.key }},
    {% if cols %}DENSE_RANK() OVER (ORDER BY {% for c in cols %}p.{{ c }}{{ ", " if not loop.last }}{% endfor %}){% else %}1{% endif %} AS {{ n.group }}
    FROM (SELECT DISTINCT {% for c in cols %}{{ c }}, {% endfor %}{{ n.query }} FROM {{ n.source }}) AS p
  ),
  {{ n.groups }} AS (SELECT DISTINCT {% for c in cols %}{{ c }}, {% endfor %}{{ n.group }} FROM {{ n.pairs }}),
  {{ n.log }} AS (
    SELECT p.{{ n.group }}, p.{{ n.key }} AS {{ n.query }}, s.{{ n.item }}, s.{{ n.order }}, s.{{ n.label }}
    FROM {{ n.source }} AS s JOIN {{ n.pairs }} AS p
    ON {% for c in cols %}s.{{ c }} IS NOT DISTINCT FROM p.{{ c }} AND {% endfor %}s.{{ n.query }} = p.{{ n.query }}
  ),
  {{ n.judgments }} AS (SELECT {{ n.query }}, {{ n.item }}, {{ n.label }} FROM {{ n.log }}),
  {%- else %}
  {{ n.groups }} AS (
    {%- if cols %}
    SELECT g.*, ROW_NUMBER() OVER (ORDER BY {% for c in cols %}g.{{ c }}{{ ", " if not loop.last }}{% endfor %}) AS {{ n.group }}
    FROM (SELECT DISTINCT {{ cols | join(", ") }} FROM {{ n.source }}) AS g
    {%- else %}
    SELECT 1 AS {{ n.group }}
    {%- endif %}
  ),
  {{ n.log }} AS (
    SELECT g.{{ n.group }}, s.{{ n.query }}, s.{{ n.item }}, s.{{ n.order }}
    FROM {{ n.source }} AS s JOIN {{ n.groups }} AS g
    ON {% for c in cols %}s.{{ c }} IS NOT DISTINCT FROM g.{{ c }} AND {% endfor %}TRUE
  ),
  {{ n.judgments }} AS (
    SELECT {{ adapter.quote(judged.get("query", query)) }} AS {{ n.query }}, {{ adapter.quote(judged.get("item", item)) }} AS {{ n.item }},
    {{ adapter.quote(judged.get("relevance", relevance)) }} AS {{ n.label }}
    FROM {{ judgments }}
  ),
  {%- endif %}
  {{ rank_polars.rp_shared(order, "skip" if run_labels else missing) }}
  {%- for spec in specs %},
  {{ adapter.quote("__rp_dbt_m" ~ loop.index0) }} AS (
    {{ rank_polars.rp_measure(spec.block, spec.variant, spec.k, spec.params) }}
  )
  {%- endfor %}
  SELECT
  {%- for c in cols %} g.{{ c }},{% endfor %}
  {%- if per_query %}
    {{ "p." ~ n.query if run_labels else "u." ~ n.query }} AS {{ adapter.quote(query) }}
    {%- for spec in specs %},
    m{{ loop.index0 }}.{{ n.value }} AS {{ adapter.quote(labels[loop.index0]) }}
    {%- endfor %}
  {%- else %}
    COUNT(*) AS {{ n.queries }}
    {%- for spec in specs %},
    {{ rank_polars.rp_aggregate(spec.aggregate, "m" ~ loop.index0 ~ "." ~ n.value) }} AS {{ adapter.quote(labels[loop.index0]) }}
    {%- endfor %}
  {%- endif %}
  FROM {{ n.universe }} AS u
  JOIN {{ n.groups }} AS g ON g.{{ n.group }} = u.{{ n.by0 }}
  {%- if per_query and run_labels %}
  JOIN {{ n.pairs }} AS p ON p.{{ n.key }} = u.{{ n.query }}
  {%- endif %}
  {%- for spec in specs %}
  LEFT JOIN {{ adapter.quote("__rp_dbt_m" ~ loop.index0) }} AS m{{ loop.index0 }}
    ON m{{ loop.index0 }}.{{ n.by0 }} = u.{{ n.by0 }} AND m{{ loop.index0 }}.{{ n.query }} = u.{{ n.query }}
  {%- endfor %}
  {%- if cols and not per_query %}
  GROUP BY {% for c in cols %}g.{{ c }}{{ ", " if not loop.last }}{% endfor %}
  {%- endif %}
{%- endmacro %}
