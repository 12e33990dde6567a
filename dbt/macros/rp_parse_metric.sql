{#-
  A metric name as rank_polars' parser reads it: NAME[(PARAM=VALUE, ...)][@K], any case, NAME one
  of the registered names or aliases (ndcg, map, mrr, P, recall, ...), and trec_eval's printed
  cutoffs (P_5, ndcg_cut_10) and -m spelling (P.5, ndcg_cut.10).  Returns the measure, its
  variant (the structural options, which pick the generated block), the cutoff and the numeric
  parameters; a name or parameter the package does not write is refused naming it.
-#}
{% macro rp_parse_metric(metric) -%}
  {%- set table = rank_polars.rp_measures() -%}
  {%- set fail = "rank_polars: metric '" ~ metric ~ "': " -%}
  {%- if metric is not string -%}
    {{ exceptions.raise_compiler_error("rank_polars: a metric is a name such as 'ndcg@10', got " ~ metric) }}
  {%- endif -%}
  {%- set m = modules.re.fullmatch("\\s*([A-Za-z0-9][A-Za-z0-9_.\\-]*?)\\s*(?:\\((.*)\\))?\\s*(?:@\\s*(\\S+))?\\s*", metric) -%}
  {%- if m is none -%}
    {{ exceptions.raise_compiler_error(fail ~ "cannot parse it; expected NAME[(PARAM=VALUE, ...)][@K]") }}
  {%- endif -%}
  {%- set base = m.group(1) | lower -%}
  {%- set s = namespace(cutoff=m.group(3), base=base) -%}
  {#- trec_eval's P_5 / P.5: the measure and its cutoff -#}
  {%- set cut = modules.re.fullmatch("(" ~ (table.cut.keys() | join("|")) ~ ")[_.](\\d+)", base) -%}
  {%- if cut is not none and base not in table.names -%}
    {%- if s.cutoff is not none -%}{{ exceptions.raise_compiler_error(fail ~ "the cutoff is given twice") }}{%- endif -%}
    {%- set s.base = table.cut[cut.group(1)] -%}
    {%- set s.cutoff = cut.group(2) -%}
  {%- endif -%}
  {%- if s.base not in table.names -%}
    {{ exceptions.raise_compiler_error(fail ~ "unknown metric, or one the dbt package does not compute; it computes "
                                       ~ (table.measures.keys() | join(", ")) ~ " (see the package's README)") }}
  {%- endif -%}
  {%- set name = table.names[s.base] -%}
  {%- set info = table.measures[name] -%}
  {%- set given = {} -%}
  {%- for part in (m.group(2) or "").split(",") if part | trim -%}
    {%- set pair = part.split("=", 1) -%}
    {%- if pair | length != 2 -%}
      {{ exceptions.raise_compiler_error(fail ~ "parameter '" ~ (part | trim) ~ "' should be written NAME=VALUE") }}
    {%- endif -%}
    {%- set key = pair[0] | trim | lower -%}
    {%- set value = pair[1] | trim | replace("'", "") | replace('"', "") -%}
    {%- if key in ("cutoff", "k") -%}
      {%- if s.cutoff is not none -%}{{ exceptions.raise_compiler_error(fail ~ "the cutoff is given twice") }}{%- endif -%}
      {%- set s.cutoff = value -%}
    {%- elif key in given -%}
      {{ exceptions.raise_compiler_error(fail ~ "parameter '" ~ key ~ "' given twice") }}
    {%- elif key not in info.params -%}
      {{ exceptions.raise_compiler_error(fail ~ "parameter '" ~ key ~ "' is not one the dbt package takes for " ~ name
                                         ~ "; it takes " ~ ((info.params.keys() | list + ["k"]) | join(", "))) }}
    {%- else -%}
      {%- do given.update({key: value}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if s.cutoff is not none and info.at_param is not none -%}
    {%- if info.at_param in given -%}{{ exceptions.raise_compiler_error(fail ~ "parameter '" ~ info.at_param ~ "' given twice") }}{%- endif -%}
    {%- do given.update({info.at_param: s.cutoff}) -%}
    {%- set s.cutoff = none -%}
  {%- endif -%}
  {%- set k = none -%}
  {%- if s.cutoff is not none -%}
    {%- if not info.cutoff -%}{{ exceptions.raise_compiler_error(fail ~ name ~ " takes no cutoff (@k)") }}{%- endif -%}
    {%- if modules.re.fullmatch("[+-]?\\d+", s.cutoff) is none or (s.cutoff | int) <= 0 -%}
      {{ exceptions.raise_compiler_error(fail ~ "cutoff k must be a positive integer, got " ~ s.cutoff) }}
    {%- endif -%}
    {%- set k = s.cutoff | int -%}
  {%- endif -%}
  {#- the variant: the non-default choices (sorted), the numbers without a default that are given, @k -#}
  {%- set parts = [] -%}
  {%- set values = {} -%}
  {%- for key in info.params.keys() | sort -%}
    {%- set p = info.params[key] -%}
    {%- if p.kind == "choice" and key in given -%}
      {%- set value = given[key] | lower -%}
      {%- if p.choices == ["false", "true"] -%}
        {%- set value = {"1": "true", "yes": "true", "0": "false", "no": "false"}.get(value, value) -%}
      {%- endif -%}
      {%- if value not in p.choices -%}
        {{ exceptions.raise_compiler_error(fail ~ "parameter " ~ key ~ "=" ~ given[key] ~ " is not one of " ~ (p.choices | join(", "))) }}
      {%- endif -%}
      {%- if value != p.default -%}{%- do parts.append(key ~ "=" ~ value) -%}{%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for key, p in info.params.items() if p.kind != "choice" -%}
    {%- if key in given -%}
      {%- set pattern = "[+-]?\\d+" if p.kind == "integer" else "[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?" -%}
      {%- if modules.re.fullmatch(pattern, given[key]) is none -%}
        {{ exceptions.raise_compiler_error(fail ~ "parameter " ~ key ~ "=" ~ given[key] ~ " is not a" ~ ("n integer" if p.kind == "integer" else " number")) }}
      {%- endif -%}
      {%- do values.update({key: (given[key] | int) if p.kind == "integer" else (given[key] | float)}) -%}
      {#- the interval the spec accepts (found by the generator), refused as rank_polars' parser refuses -#}
      {%- set low, low_open, high, high_open = p.range -%}
      {%- set x = values[key] -%}
      {%- if (low is not none and (x < low or (low_open and x == low)))
             or (high is not none and (x > high or (high_open and x == high))) -%}
        {{ exceptions.raise_compiler_error(fail ~ "parameter " ~ key ~ "=" ~ given[key] ~ " must be"
             ~ ((" >" ~ ("" if low_open else "=") ~ " " ~ low) if low is not none else "")
             ~ (" and" if low is not none and high is not none else "")
             ~ ((" <" ~ ("" if high_open else "=") ~ " " ~ high) if high is not none else "")) }}
      {%- endif -%}
      {%- if p.default is none -%}{%- do parts.append(key) -%}{%- endif -%}
    {%- elif p.default is not none -%}
      {%- do values.update({key: p.default}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set variant = parts | join(",") ~ ("@k" if k is not none else "") -%}
  {%- if variant not in info.variants -%}
    {{ exceptions.raise_compiler_error(fail ~ "the dbt package does not compute " ~ name ~ " with "
                                       ~ ((parts + (["a cutoff"] if k is not none else [])) | join(" and ") or "its defaults")
                                       ~ "; it computes " ~ name ~ "(" ~ (info.variants.keys() | join("), " ~ name ~ "(")) ~ ")"
                                       ~ " (with a cutoff where a variant ends in @k)") }}
  {%- endif -%}
  {%- set params = {} -%}
  {%- for key in info.variants[variant] -%}{%- do params.update({key: values[key]}) -%}{%- endfor -%}
  {{ return({"measure": name, "block": info.block, "aggregate": info.aggregate, "variant": variant, "k": k, "params": params}) }}
{%- endmacro %}
