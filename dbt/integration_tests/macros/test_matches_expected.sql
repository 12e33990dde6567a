{#-
  A model's values against expected.csv's rows of that model (model, key columns, metric,
  expected): no row of one without the other, and every value within `tolerance` (relative, or
  absolute below 1); a null expected value (a measure left out) must be null.
-#}
{% test matches_expected(model, keys, metrics, tolerance=1e-12) -%}
  {%- set text = dbt.type_string() -%}
  {%- set name = model.identifier -%}
  WITH got AS (
    {%- for metric in metrics %}
    SELECT {% for k in keys %}CAST({{ adapter.quote(k) }} AS {{ text }}) AS {{ adapter.quote(k) }}, {% endfor -%}
      '{{ metric }}' AS metric, {{ adapter.quote(metric) }} AS got FROM {{ model }}
    {{- " UNION ALL" if not loop.last }}
    {%- endfor %}
  ),
  expected AS (
    SELECT {% for k in keys %}{{ adapter.quote(k) }}, {% endfor %}metric, expected
    FROM {{ ref('expected') }} WHERE model = '{{ name }}'
  )
  SELECT * FROM got FULL OUTER JOIN expected AS e
    ON {% for k in keys %}got.{{ adapter.quote(k) }} IS NOT DISTINCT FROM e.{{ adapter.quote(k) }} AND {% endfor %}got.metric = e.metric
  WHERE got.metric IS NULL OR e.metric IS NULL
     OR (got.got IS NULL) <> (e.expected IS NULL)
     OR ABS(got.got - e.expected) > {{ tolerance }} * GREATEST(1.0, ABS(e.expected))
{%- endtest %}
