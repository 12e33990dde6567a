"""The table macros of ``sql/tables.sql``: ``rank_eval`` / ``rank_eval_per_query``, the whole
evaluation of a log and its judgments in DuckDB SQL alone.

The metric names are parsed in SQL (``__rp_metrics``, generated from the registry's names and
the parser's tables, :mod:`rank_polars.measures`), each computed by its measure's macro of
:mod:`rank_polars.formula.macros_scalar` (``__rp_value``) over one list per ranking.
:mod:`rank_polars.formula.macros` writes the file.
"""

from __future__ import annotations

from typing import Sequence

from rank_polars.formula.macros_scalar import (
    _FALSE, _IDEAL_SOURCE, _TRUE, N_RET, ROWS, SCALAR, Option, formula, internal, list_args, measure_options,
)
from rank_polars.measures import _CUT, _PARAM_SYNONYMS, MEASURES, REGISTRY
from rank_polars.measures.base import GM_FLOOR, Measure

def supported() -> dict[str, tuple[str, type[Measure]]]:
    """The measures ``rank_eval`` reads: canonical name -> (the SCALAR macro computing it, the
    spec class).  A measure that is another per query (``gm_map`` is ``ap``, combined by a
    geometric mean: its spec's ``AGGREGATE``) is computed by that one's macro.

    >>> table = supported()
    >>> table["ndcg"][0], table["gm_map"][0], table["r"][0], "infap" in table
    ('ndcg', 'ap', 'recall', False)
    """
    own = {REGISTRY[name]: name for name, _ in SCALAR}
    out: dict[str, tuple[str, type[Measure]]] = {}
    for cls in MEASURES:
        base = next((b for b in cls.__mro__ if b in own), None)
        if base is not None and cls.value is base.value and cls.PARAMS == base.PARAMS:
            out[cls.NAME] = (own[base], cls)
    return out


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_text(v) for v in values) + "]"


def _map(entries: dict[str, str]) -> str:
    return "MAP {" + ", ".join(f"{_text(k)}: {v}" for k, v in entries.items()) + "}"


def _param_kind(measure: type[Measure], name: str, opts: Sequence[Option]) -> str:
    """How the parser reads a parameter: '#' a number, '?' true/false, 'a|b' one of the
    choices, '!' a parameter SQL cannot express (a gain map, ``ties=average``)."""
    if name == _IDEAL_SOURCE:
        return "|".join(measure.PARAMS[name].choices or ())
    opt = next((o for o in opts if o.name == name), None)
    if opt is None:
        return "!"
    if opt.switch:
        return "?"
    return "|".join(opt.choices) if opt.choices is not None else "#"


# trec_eval's spellings that carry a cutoff or a parameter in the name (measures/__init__.py's
# _CUT and _SPELLINGS, for the measures SQL has): pattern, measure, parameters, cutoff.
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_CUTS = "(" + "|".join(_CUT) + r")_(\d+)"
_SPELLED_SQL = (
    (_CUTS, "{cuts}[regexp_extract(base, '^" + _CUTS + "$', 1)]", "''", "regexp_extract(base, '^" + _CUTS + "$', 2)"),
    (r"relative_p_(\d+)", "'p'", "'relative=true'", r"regexp_extract(base, '^relative_p_(\d+)$', 1)"),
    ("rprec_mult_" + _NUMBER, "'rprec'", "'mult=' || regexp_extract(base, '^rprec_mult_" + _NUMBER + "$', 1)", "''"),
)
_NAME_SQL = r"^\s*([a-z0-9][a-z0-9_.\-]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]+))?\s*$"
_STRIP = "'''\"'"  # the quotes around a parameter's value: ' and "


def _quoted(expr: str) -> str:
    return f"'''' || {expr} || ''''"


def parser_sql() -> str:
    """``__rp_metrics(metrics)``: metric names as ``rank_polars.measures.parse`` reads it, for the
    measures SQL computes: ``{name, measure, k, params, agg, best}``, or an error naming it."""
    table = supported()
    aliases = {alias: name for name, (_, cls) in table.items()
               for alias in (cls.NAME, *cls.ALIASES) if REGISTRY.get(alias) is cls}
    kinds = {name: _map({p: _text(kind) for p in cls.PARAMS
                         if (kind := _param_kind(cls, p, measure_options(cls))) != "!"})
             for name, (_, cls) in table.items()}
    cutoff = [name for name, (_, cls) in table.items() if cls.SUPPORTS_CUTOFF]
    synonyms = {f"{cls.NAME}:{key}": (new, words) for (cls, key), (new, words) in _PARAM_SYNONYMS.items()
                if cls.NAME in table}
    cuts = _map({k: _text(v) for k, v in _CUT.items()})
    spelled = "|".join(f"(?:{pattern})" for pattern, *_ in _SPELLED_SQL)
    whens = " ".join(f"WHEN regexp_full_match(base, '{pattern}') THEN {{'base': {measure.format(cuts=cuts)}, "
                     f"'args': {args}, 'cutoff': {at}}}" for pattern, measure, args, at in _SPELLED_SQL)
    renamed = " ".join(f"WHEN m || ':' || e.key = {_text(k)} THEN {_text(new)}" for k, (new, _) in synonyms.items())
    reworded = " ".join(f"WHEN m || ':' || e.key = {_text(k)} THEN coalesce({_map({a: _text(b) for a, b in words.items()})}"
                        "[lower(e.value)], e.value)" for k, (_, words) in synonyms.items())
    agg = _map({n: _text(cls.AGGREGATE) for n, (_, cls) in table.items()})
    best = _map({n: str(cls(1 if cls.SUPPORTS_CUTOFF else None).missing_scores_best).lower() for n, (_, cls) in table.items()})
    names = _map({k: _text(v) for k, v in aliases.items()})
    named = f"'rank_eval: ' || {_quoted('name')}"
    first = "list_filter(cuts, lambda c: c IS NOT NULL)[1]"
    words = ", ".join(_text(w) for w in (*_TRUE, *_FALSE))
    checks = [
        ("coalesce(base, '') = ''", f"'rank_eval: cannot parse metric name ' || {_quoted('name')} || '; expected NAME[(PARAM=VALUE, ...)][@K]'"),
        ("m IS NULL", f"'rank_eval: ' || {_quoted('name')} || ' is not a measure the SQL macros compute (they compute "
                      f"{', '.join(sorted(table))}); rp.to_sql or evaluate(engine=''duckdb'') compute in SQL every measure "
                      "rank_polars knows, those reading more than one ranked list (a table beside the run) too'"),
        ("list_bool_or(list_transform(pairs, lambda e: NOT e.sep))", f"{named} || ': a parameter should be written NAME=VALUE'"),
        ("len(list_distinct(list_transform(params, lambda e: e.key))) < len(params)", f"{named} || ': a parameter is given twice'"),
        ("len(list_filter(cuts, lambda c: c IS NOT NULL)) > 1", f"{named} || ': the cutoff is given twice'"),
        ("list_bool_or(list_transform(params, lambda e: kinds[e.key] IS NULL))",
         f"{named} || ': unknown parameter, or one the SQL macros cannot express (a gain map, ties=average: rp.to_sql "
         "computes those); ' || m || ' takes ' || coalesce(NULLIF(array_to_string(map_keys(kinds), ', '), ''), 'none') || ' here'"),
        ("list_bool_or(list_transform(params, lambda e: kinds[e.key] = '#' AND NOT coalesce(isfinite(TRY_CAST(e.value AS DOUBLE)), false)))",
         f"{named} || ': a numeric parameter is not a finite number'"),
        (f"list_bool_or(list_transform(params, lambda e: kinds[e.key] = '?' AND lower(e.value) NOT IN ({words})))",
         f"{named} || ': a true/false parameter is neither'"),
        ("list_bool_or(list_transform(params, lambda e: kinds[e.key] NOT IN ('#', '?') "
         "AND NOT list_contains(string_split(kinds[e.key], '|'), lower(e.value))))",
         f"{named} || ': a parameter is not one of its choices'"),
        (f"{first} IS NOT NULL AND NOT list_contains({_list(cutoff)}, m)", f"{named} || ': ' || m || ' takes no cutoff (@k)'"),
        (f"{first} IS NOT NULL AND NOT coalesce(regexp_full_match({first}, '[+-]?[0-9]+') "
         f"AND TRY_CAST({first} AS HUGEINT) > 0, false)", f"{named} || ': cutoff k must be a positive integer'"),
    ]
    whens_checks = "\n".join(f"  WHEN {cond} THEN error({message})" for cond, message in checks)
    result = (f"{{'name': name, 'measure': m, 'k': CAST({first} AS BIGINT), 'params': "
              "map_from_entries(list_transform(params, lambda e: {'key': e.key, 'value': lower(e.value)})), "
              f"'agg': {agg}[m], 'best': {best}[m]}}")
    return f"""\
-- __rp_metrics(metrics): the metric names read as rank_polars.measures.parse reads them, for the
-- measures the macros compute: specs, a list of {{name, measure, k, params, agg, best}}; an error
-- names a name it cannot read.
-- Spellings: ours (ndcg(gain=exp)@10, p(rel=2)@5, rbp(p=0.9)), trec_eval's printed and -m names
-- (P_5, P.5, ndcg_cut_10, map, recip_rank, Rprec_mult_0.20), ir_measures' (nDCG(dcg='exp-log2')@10,
-- RR(cutoff=10)).  Generated from rank_polars/measures (REGISTRY, _CUT, _PARAM_SYNONYMS).
CREATE OR REPLACE MACRO __rp_metric_text(name) AS CASE WHEN regexp_full_match(lower(trim(name)), '[a-z0-9_]+\\.[^\\s()@]+') AND NOT regexp_full_match(lower(trim(name)), '{spelled}') AND regexp_full_match(regexp_replace(lower(trim(name)), '\\.', '_'), '{spelled}') THEN regexp_replace(lower(trim(name)), '\\.', '_') ELSE trim(name) END;
CREATE OR REPLACE MACRO __rp_metric_spelled(base) AS CASE {whens} ELSE {{'base': base, 'args': '', 'cutoff': ''}} END;
CREATE OR REPLACE MACRO __rp_metric_pairs(args) AS list_transform(list_filter(string_split(args, ','), lambda x: trim(x) <> ''), lambda x: {{'key': lower(trim(split_part(x, '=', 1))), 'value': trim(trim(substr(x, strpos(x, '=') + 1)), {_STRIP}), 'sep': strpos(x, '=') > 0}});
CREATE OR REPLACE MACRO __rp_metric_synonyms(m, pairs) AS list_transform(pairs, lambda e: {{'key': CASE {renamed or "WHEN FALSE THEN NULL"} ELSE e.key END, 'value': CASE {reworded or "WHEN FALSE THEN NULL"} ELSE e.value END, 'sep': e.sep}});
CREATE OR REPLACE MACRO __rp_metric_final(name, base, m, pairs, params, cuts, kinds) AS CASE
{whens_checks}
  ELSE {result}
END;
CREATE OR REPLACE MACRO __rp_metrics(metrics) AS TABLE
WITH
__rp_names AS (SELECT unnest(metrics) AS name, unnest(range(1, len(metrics) + 1)) AS idx),
__rp_parts AS (SELECT name, idx, regexp_extract(__rp_metric_text(name), '{_NAME_SQL}', ['base', 'args', 'cutoff'], 'i') AS parts FROM __rp_names),
__rp_spelled AS (SELECT *, __rp_metric_spelled(lower(parts.base)) AS sp FROM __rp_parts),
__rp_named AS (SELECT *, {names}[sp.base] AS m FROM __rp_spelled),
__rp_pairs AS (SELECT *, __rp_metric_synonyms(m, __rp_metric_pairs(concat_ws(',', NULLIF(sp.args, ''), NULLIF(parts.args, '')))) AS pairs FROM __rp_named),
__rp_read AS (
  SELECT *, list_filter(pairs, lambda e: e.key NOT IN ('cutoff', 'k')) AS params,
         [x.value FOR x IN pairs IF x.key IN ('cutoff', 'k')] || [NULLIF(parts.cutoff, ''), NULLIF(sp.cutoff, '')] AS cuts,
         {_map(kinds)}[m] AS kinds
  FROM __rp_pairs)
SELECT list(__rp_metric_final(name, sp.base, m, pairs, params, cuts, kinds) ORDER BY idx) AS specs FROM __rp_read;
"""


def _cut_at_k(measure: type[Measure]) -> bool:
    """Whether the measure reads no row below its cutoff (``Measure.depth``): ``rank_eval`` then
    hands it the rows down to k only."""
    return measure.SUPPORTS_CUTOFF and measure(7).depth() == 7


def dispatch_sql() -> str:
    """``__rp_value(m, s, ideal, n_ret, top)``: the value of the parsed metric ``m`` over one ranking."""
    whens: dict[str, list[str]] = {}  # one branch per call: gm_map's is ap's
    for name, (macro, cls) in supported().items():
        own = measure_options(cls)
        rows = f"CASE WHEN m.k IS NULL THEN {ROWS} ELSE list_filter({ROWS}, lambda y: y.rank <= m.k) END"
        args = [rows if _cut_at_k(cls) else ROWS, N_RET]
        for o in own:
            given = f"m.params[{_text(o.name)}]"
            if o.name == "k":
                value = "m.k"
            elif o.switch or o.choices is not None:
                value = f"coalesce({given}, {o.sql_default})"
            elif o.name == "max":  # ERR's scale: the top grade of every judgment (1.0 when none is positive)
                value = f"coalesce(CAST({given} AS DOUBLE), top, 1.0)"
            else:
                value = f"CAST({given} AS DOUBLE)" if o.default is None else f"coalesce(CAST({given} AS DOUBLE), {o.default!r})"
            args.append(f"{o.name} := {value}")
        if "ideal" in list_args(formula(cls, own)):
            # ideal=run (ndcg, idcg): the ranking's own items, which ideal := NULL reads
            choice = (f"coalesce(m.params[{_text(_IDEAL_SOURCE)}], 'judgments') = 'judgments'"
                      if _IDEAL_SOURCE in cls.PARAMS else "TRUE")
            args.append(f"ideal := CASE WHEN {choice} THEN ideal ELSE list_transform({ROWS}, lambda y: y.grade) END")
        whens.setdefault(f"{internal(macro)}({', '.join(args)})", []).append(name)
    cases = "\n".join(f"  WHEN m.measure IN ({', '.join(map(_text, names))}) THEN {call}" for call, names in whens.items())
    return ("-- __rp_value(m, s, ideal, n_ret, top): the parsed metric m (of __rp_metrics) over one ranking's rows\n"
            "-- s (its {rank, grade} structs, every row with a grade), with the query's judged grades ideal (the\n"
            "-- ranking's own without judgments), the number retrieved and the top grade of every judgment (ERR's\n"
            "-- scale).  A measure reading no row below its cutoff gets the rows down to it only.\n"
            f"CREATE OR REPLACE MACRO __rp_value(m, s, ideal, n_ret, top) AS CASE\n{cases}\nEND;\n")


TABLES_DOC = """\
-- rank_eval / rank_eval_per_query: the whole evaluation of a ranking log, as rank_polars.evaluate.
--
-- FROM rank_eval('logs/*.parquet', judgments := 'qrels.parquet',
--                metrics := ['ndcg@10', 'map', 'mrr', 'p@5', 'recall@100'], by := ['model'],
--                query := 'search_id', item := 'sku', position := 'slot', relevance := 'grade',
--                missing := 'zero');
--   one row per group: the by columns, queries, one column per metric (named as given)
-- FROM rank_eval_per_query(...the same arguments...);
--   one row per (group, query): the by columns, the query column, one column per metric
--
--   t: a table or view name, or a file path / glob DuckDB can scan ('logs/*.parquet').
--   judgments: the judgments, a table name or path as text ('qrels', 'qrels.parquet'), with the
--      query, item and relevance columns named as the log's; only judged queries are evaluated,
--      R and the ideal ranking come from every judgment of the query, the log's relevance
--      column is not read.  NULL (default): the log's relevance column is the judgments, each
--      ranking's own (the ideal ranking and R from its labels).
--   metrics: metric names as rank_polars.evaluate reads them (ndcg@10, ndcg(gain=exp)@10,
--      p(rel=2)@5, rbp(p=0.9), map, mrr, P_5, ndcg_cut_10, recip_rank, gm_map, ...), each
--      with its own cutoff; default NULL: ['ndcg@k', 'map', 'mrr', 'p@k', 'recall@k'].
--   by: grouping columns; [] one row; default NULL: by model when the log has a model column.
--   query, item, position, relevance: the column names (defaults: their own names).
--   score: a score column: rank by score descending, ties by item id (as text) descending
--      (trec_eval); default NULL: rank by position (1 = first).
--   missing: 'zero' (default) scores a judged query a group did not rank 0 (left out of the
--      lower-is-better measures, such as fallout); 'skip' leaves it out.
--   k: the cutoff of the default metrics (10).
-- Bad data (null ids or positions, repeated positions, repeated judged items or judgments,
-- NaN labels, an unknown metric) stops the query with an error naming the column and queries.
--
-- Generated by rank_polars/formula/macros.py; do not edit by hand.
"""

# metrics := NULL: these, at cutoff k (k := 10)
_DEFAULT_METRICS = ("ndcg@{k}", "map", "mrr", "p@{k}", "recall@{k}")
_METRICS = "coalesce(metrics, [" + ", ".join(
    "'" + m.replace("{k}", "' || CAST(k AS VARCHAR)") if "{k}" in m else _text(m) for m in _DEFAULT_METRICS) + "])"
_SIGNATURE = ("t, judgments := NULL, metrics := NULL, \"by\" := NULL, query := 'query', item := 'item', "
              "\"position\" := 'position', score := NULL, relevance := 'relevance', missing := 'zero', k := 10")
_PASS = 't, judgments, metrics, "by", query, item, "position", score, relevance, missing'
_PASS_OUTER = _PASS.replace("metrics", _METRICS)

EXAMPLES = ("CREATE OR REPLACE MACRO __rp_examples(ids) AS array_to_string(list_transform(list_slice(list_sort("
            "list_distinct(ids)), 1, 5), lambda v: '''' || CAST(v AS VARCHAR) || ''''), ', ');\n")


def _check(condition: str, message: str) -> str:
    return f"    WHEN {condition} THEN error('rank_eval: ' || {message})"


def _examples(table: str, where: str | None = None) -> str:
    """The first five query ids of ``table`` (where ``where`` holds), quoted, for a message."""
    ids = f"list(q) FILTER (WHERE {where})" if where else "list(q)"
    return f"(SELECT __rp_examples({ids}) FROM {table})"


# Positions 1..127 as the bits of one 128-bit integer per ranking (as the DuckDB engine's
# positions_distinct_sql): as many bits as rows there means no repeat; the few positions
# beyond are compared as a list.
_REPEATED_POSITION = "low_bits < low_n OR len(list_distinct(high)) < len(high)"

# The checks, the judgments' first (a repeated judgment repeats the rows it joins): (condition,
# message), SQL over the CTEs below.
_CHECKS = (
    ("missing IS NULL OR missing NOT IN ('zero', 'skip')", "'missing := must be ''zero'' or ''skip'''"),
    ("list_contains(CAST(\"by\" AS VARCHAR[]), query) OR list_contains(CAST(\"by\" AS VARCHAR[]), item)",
     "'by := names the query or item column; group by other columns'"),
    ("\"by\" IS NOT NULL AND (SELECT len(json_keys(to_json(any_value(g)))) FROM __rp_lists) <> len(list_distinct(\"by\")) + 1",
     "'a column of by := ' || CAST(\"by\" AS VARCHAR) || ' is not in the log, or is named twice'"),
    ("(SELECT count_if(q IS NULL) FROM __rp_judged) > 0",
     "'judgments: column ''' || query || ''' (query) has null query ids'"),
    ("(SELECT sum(bad_item) FROM __rp_judged) > 0",
     f"'judgments: column ''' || item || ''' (item) has null item ids, queries ' || {_examples('__rp_judged', 'bad_item > 0')}"),
    ("(SELECT sum(bad_grade) FROM __rp_judged) > 0",
     "'judgments: column ''' || relevance || ''' has null or NaN grades or infinite ones, queries ' || "
     f"{_examples('__rp_judged', 'bad_grade > 0')}"),
    ("(SELECT count_if(repeated) FROM __rp_judged) > 0",
     "'judgments: duplicate judgments (a query and item twice; judgments of several judges: pass the rows of one), queries ' || "
     f"{_examples('__rp_judged', 'repeated')}"),
    ("(SELECT count_if(q IS NULL) FROM __rp_lists) > 0", "'column ''' || query || ''' (query) has null query ids in the log'"),
    ("(SELECT sum(bad_order) FROM __rp_lists) > 0",
     "'column ''' || coalesce(score, \"position\") || ''' has null' || CASE WHEN score IS NULL THEN '' ELSE ' or NaN' END "
     f"|| ' values, queries ' || {_examples('__rp_lists', 'bad_order > 0')}"),
    ("score IS NULL AND (SELECT count_if(lo < 1) FROM __rp_lists) > 0",
     f"'column ''' || \"position\" || ''' has positions below 1 (1 = first), queries ' || {_examples('__rp_lists', 'lo < 1')}"),
    (f"score IS NULL AND (SELECT count_if({_REPEATED_POSITION}) FROM __rp_lists) > 0",
     "'duplicate positions within a ranking (column ''' || \"position\" || '''), queries ' || "
     f"{_examples('__rp_lists', _REPEATED_POSITION)} || '; keep one row per position, or rank by score := '"),
    ("(SELECT sum(bad_label) FROM __rp_lists) > 0",
     "'column ''' || relevance || ''' (relevance) has null or NaN relevance labels or infinite ones, queries ' || "
     f"{_examples('__rp_lists', 'bad_label > 0')}"),
    ("(SELECT sum(bad_item) FROM __rp_lists) > 0",
     f"'column ''' || item || ''' (item) has null item ids on labelled rows, queries ' || {_examples('__rp_lists', 'bad_item > 0')}"),
    ("(SELECT count_if(repeated) FROM __rp_lists) > 0",
     "'duplicate items within a ranking (column ''' || item || '''), queries ' || "
     f"{_examples('__rp_lists', 'repeated')} "
     "|| '; keep one row per query and item'"),
)

# One list of grades per (group, query) in rank order, the query's judged grades, and each
# metric's value over them: one row per (group, query, metric), the metric's position idx.  The checks stop the query first where the input is bad.
RANKINGS = f"""\
CREATE OR REPLACE MACRO __rp_rankings({_PASS}) AS TABLE
WITH
__rp_src AS (SELECT *, NULL AS __rp_all FROM query_table(t)),
__rp_run AS (
  SELECT struct_pack(*COLUMNS(lambda c: list_contains(CAST(coalesce("by", ['model']) AS VARCHAR[]), c) OR c = '__rp_all')) AS g,
         struct_pack(*COLUMNS(lambda c: c = query)) AS qs,
         COLUMNS(lambda c: c = query) AS q,
         COLUMNS(lambda c: c = item) AS i,
         COLUMNS(lambda c: c = coalesce(score, "position")) AS o,
         COLUMNS(lambda c: c = CASE WHEN judgments IS NULL THEN relevance ELSE query END) AS lab
  FROM __rp_src),
__rp_qrels AS (
  SELECT struct_pack(*COLUMNS(lambda c: c = query)) AS qs,
         COLUMNS(lambda c: c = query) AS q,
         COLUMNS(lambda c: c = item) AS i,
         CAST(COLUMNS(lambda c: c = relevance) AS DOUBLE) AS grade
  FROM query_table(coalesce(judgments, t)) WHERE judgments IS NOT NULL),
__rp_rows AS (
  SELECT r.g, r.qs, r.q, r.i,
         CASE WHEN score IS NULL THEN CAST(CAST(r.o AS BIGINT) AS DOUBLE) ELSE CAST(r.o AS DOUBLE) END AS o,
         CASE WHEN judgments IS NULL THEN CAST(r.lab AS DOUBLE) ELSE j.grade END AS grade
  FROM __rp_run AS r LEFT JOIN __rp_qrels AS j ON r.q = j.q AND r.i = j.i),
__rp_lists AS MATERIALIZED (
  SELECT g, q, any_value(qs) AS qs,
         list({{'rank': o, 'grade': grade}} ORDER BY o) FILTER (WHERE score IS NULL AND grade IS NOT NULL) AS by_position,
         list(grade ORDER BY o DESC, CAST(i AS VARCHAR) DESC) FILTER (WHERE score IS NOT NULL) AS by_score,
         -- an item judged twice in the ranking (counted here once: a check's condition and its
         -- message's examples would each count it again)
         list_unique(list(hash(i)) FILTER (WHERE grade >= 0)) < count_if(grade >= 0) AS repeated,
         count(*) AS n_ret, min(o) AS lo, count_if(o BETWEEN 1 AND 127) AS low_n,
         bit_count(bit_or(CASE WHEN o BETWEEN 1 AND 127 THEN CAST(1 AS HUGEINT) << CAST(o - 1 AS INTEGER) END)) AS low_bits,
         list(o) FILTER (WHERE o > 127) AS high,
         count_if(o IS NULL OR isnan(o)) AS bad_order,
         count_if(judgments IS NULL AND (grade IS NULL OR isnan(grade) OR isinf(grade))) AS bad_label,
         count_if(judgments IS NULL AND i IS NULL AND grade >= 0) AS bad_item,
         max(grade) FILTER (WHERE grade > 0) AS top
  FROM __rp_rows GROUP BY g, q),
__rp_judged AS MATERIALIZED (
  SELECT q, any_value(qs) AS qs, list(grade) AS ideal, list_unique(list(hash(i))) < count(*) AS repeated, max(grade) FILTER (WHERE grade > 0) AS top,
         count_if(i IS NULL) AS bad_item, count_if(grade IS NULL OR isnan(grade) OR isinf(grade)) AS bad_grade
  FROM __rp_qrels GROUP BY q),
__rp_checks AS (
  SELECT CASE
{chr(10).join(_check(c, m) for c, m in _CHECKS)}
    ELSE TRUE END AS ok),
__rp_groups AS (SELECT DISTINCT g FROM __rp_lists),
__rp_expected AS (
  SELECT gr.g, j.q, j.qs FROM __rp_groups AS gr CROSS JOIN __rp_judged AS j WHERE missing = 'zero'),
__rp_top AS (
  SELECT CASE WHEN judgments IS NULL THEN (SELECT max(top) FROM __rp_lists)
              ELSE (SELECT max(top) FROM __rp_judged) END AS top),
__rp_universe AS (
  SELECT coalesce(x.g, e.g) AS g, coalesce(x.q, e.q) AS q, coalesce(x.qs, e.qs) AS qs,
         CASE WHEN score IS NULL THEN coalesce(x.by_position, [])
              ELSE list_filter(list_transform(coalesce(x.by_score, []), lambda g_, k_: {{'rank': CAST(k_ AS DOUBLE), 'grade': g_}}),
                               lambda y: y.grade IS NOT NULL) END AS s,
         coalesce(x.n_ret, 0) AS n_ret, x.n_ret IS NOT NULL AS shown, j.ideal
  FROM __rp_lists AS x FULL JOIN __rp_expected AS e ON x.g IS NOT DISTINCT FROM e.g AND x.q = e.q
  LEFT JOIN __rp_judged AS j ON j.q = coalesce(x.q, e.q)
  WHERE judgments IS NULL OR j.q IS NOT NULL),
-- the judged grades sorted once per ranking (each measure sorts them again: then in linear time);
-- without judgments the ranking's own
__rp_sorted AS (
  SELECT * REPLACE (list_sort(coalesce(ideal, list_transform(s, lambda y: y.grade)), 'DESC', 'NULLS LAST') AS ideal)
  FROM __rp_universe),
-- one row per (ranking, metric): the measure macros then run over whole vectors of rankings
-- (inside a lambda over each ranking's metrics they cost half as much again)
__rp_specs AS (SELECT unnest(specs) AS m, unnest(range(1, len(specs) + 1)) AS idx FROM __rp_metrics(metrics))
SELECT u.g, u.q, u.qs, s.idx, s.m,
       CASE WHEN NOT u.shown AND s.m.best THEN NULL ELSE __rp_value(s.m, u.s, u.ideal, u.n_ret, p.top) END AS v
FROM __rp_sorted AS u
CROSS JOIN __rp_specs AS s
CROSS JOIN __rp_top AS p CROSS JOIN __rp_checks AS c
WHERE c.ok;
"""

# Each metric's column by name: a MAP of the values as JSON, read back as a STRUCT whose fields
# are the metric names (PIVOT cannot take its columns from a macro's argument).
_WIDE = (f"unnest(from_json(to_json(map({_METRICS}, vals)), "
         f"'{{' || array_to_string(list_transform({_METRICS}, lambda m: to_json(m) || ': \"DOUBLE\"'), ', ') || '}}'))")

PER_QUERY = f"""\
CREATE OR REPLACE MACRO rank_eval_per_query({_SIGNATURE}) AS TABLE
SELECT * EXCLUDE (__rp_all) FROM (
  SELECT unnest(g), unnest(qs), {_WIDE}
  FROM (SELECT g, q, any_value(qs) AS qs, list(v ORDER BY idx) AS vals FROM __rp_rankings({_PASS_OUTER}) GROUP BY g, q))
ORDER BY ALL;
"""

MEANS = f"""\
CREATE OR REPLACE MACRO rank_eval({_SIGNATURE}) AS TABLE
WITH
__rp_pq AS (FROM __rp_rankings({_PASS_OUTER})),
__rp_means AS (
  SELECT g, idx, CASE any_value(m.agg) WHEN 'sum' THEN coalesce(sum(v), 0.0)
                                       WHEN 'gmean' THEN exp(avg(ln(greatest(v, {GM_FLOOR!r}))))
                                       ELSE avg(v) END AS v
  FROM __rp_pq GROUP BY g, idx),
__rp_counts AS (SELECT g, count(*) AS queries FROM __rp_pq WHERE idx = 1 GROUP BY g),
__rp_wide AS (
  SELECT c.g, c.queries, list(a.v ORDER BY a.idx) AS vals
  FROM __rp_counts AS c JOIN __rp_means AS a ON c.g IS NOT DISTINCT FROM a.g GROUP BY c.g, c.queries)
SELECT * EXCLUDE (__rp_all) FROM (SELECT unnest(g), queries, {_WIDE} FROM __rp_wide)
ORDER BY ALL;
"""


def tables_sql() -> str:
    """``tables.sql``: the metric-name parser, the dispatch to the measure macros, and the table macros."""
    return TABLES_DOC + parser_sql() + dispatch_sql() + EXAMPLES + RANKINGS + PER_QUERY + MEANS


__all__ = ["dispatch_sql", "parser_sql", "supported", "tables_sql"]
