"""Generate the dbt package's macros (``dbt/macros/generated/``) from the metric specs.

Jinja cannot call Python when dbt compiles a model, so the SQL of every measure is written
here, ahead of time, by the generator of :func:`rank_polars.to_sql`: the spec's formula
compiled by :func:`rank_polars.engines.sql_engine.per_query_query` into one DuckDB statement
per measure, translated to each adapter's dialect by :func:`rank_polars.sqlgen.translate`
(the same sqlglot translation and checks as ``to_sql(dialect=...)``).

A measure's statement is a *block*: the per-query values of one metric over three relations
that the package's ``evaluate`` macro prepares (``__rp_dbt_ranked``: the log with a group id,
the query, the item and the rank; ``__rp_dbt_judgments``; ``__rp_dbt_universe``: the
(group, query) pairs to evaluate).  So a block holds no user column name, no table name and no
``by`` column: only the metric's cutoff and numeric parameters vary, and they are built with a
sentinel value that the template replaces with a Jinja expression (``{{ k }}``,
``{{ params.rel }}``).  Every template is checked here: rendered with other values, it must
equal the block generated for those values, character for character; a parameter for which
it does not is left out of the package (the macro then refuses it by name).

A structural parameter (``gain=exp``, ``denom=min``, a cutoff or none, ``rel`` given or not)
gives a *variant*: its own block.  The variants are the default parameters and each choice
parameter's other values one at a time, each with and without a cutoff and ``rel``.

Regenerate with ``python -m rank_polars.formula.dbt [dbt/]``; ``tests/test_dbt.py`` fails
when the checked-in package differs from what this writes.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rank_polars.engines.sql_engine import (
    QRELS,
    RUN,
    UNIVERSE,
    Query,
    Source,
    metric_column,
    per_query_query,
    qrels_cte,
    quote,
    ranked_cte,
    run_cte,
    universe_sql,
)
from rank_polars.errors import MetricNameError, RankPolarsError
from rank_polars.measures import _CUT, MEASURES
from rank_polars.measures.base import FamilyMeasure, Measure, Param, flag
from rank_polars.measures.clicks import MEASURES as CLICKS
from rank_polars.plan import N_RET, Q, build_plan, by_name
from rank_polars.sqlgen import aggregate_sql, translate

#: dbt adapter (the ``adapter.dispatch`` prefix) -> sqlglot dialect.
ADAPTERS: dict[str, str] = {
    "duckdb": "duckdb", "spark": "spark", "bigquery": "bigquery", "snowflake": "snowflake",
    "postgres": "postgres", "trino": "trino",
}
#: adapters that run another's SQL: Databricks runs Spark SQL (dbt-databricks no longer declares
#: dbt-spark its parent, so dispatch would not find the ``spark__`` macros by itself)
SAME_SQL: dict[str, str] = {"databricks": "spark"}

# The relations the evaluate macro builds (the log with a group id, the judgments) and their columns
JUDGMENTS, LOG = "__rp_dbt_judgments", "__rp_dbt_log"
GROUP, ITEM_COL, ORDER_COL, LABEL_COL, VALUE = "__rp_group", "__rp_item", "__rp_order", "__rp_label", "__rp_value"
KEYS = [by_name(0), Q]  # a block's keys: the group id, the query
# A block's source: the ranked log with the group id as its one ``by`` column, the judgments
SOURCE = Source(run=quote(LOG), qrels=quote(JUDGMENTS), by=[GROUP], order="position", query=Q, item=ITEM_COL,
                position=ORDER_COL, score=ORDER_COL, relevance=LABEL_COL, judged=(Q, ITEM_COL, LABEL_COL))

# The CTEs the blocks share; by score the run is ranked first (the blocks read the rank)
UNRANKED = "__rp_unranked"
SHARED = (RUN, QRELS, UNIVERSE)

# Sentinels: the numeric arguments while the spec builds its formula (values no data holds);
# every other numeric parameter sits at one of the values in (0, 1) that all of them accept.
K_SENTINEL = 7777773
INT_SENTINEL = 7777771
FLOAT_SENTINELS = (0.6180339887, 0.7071067811, 0.5772156649, 0.3183098861, 0.2718281828, 0.1414213562)
# the values a template is rendered with to check it (cutoffs, numbers, integers)
CHECK_K, CHECK_FLOAT, CHECK_INT = (1, 3, 10), (0.25, 0.5, 2.0), (0, 3)


def measures() -> list[type[Measure]]:
    """The registered measures a dbt block computes: the formula measures, not a family (its
    tables beside the run) nor a click metric (the log's click column, not the judgments)."""
    return [cls for cls in MEASURES if not issubclass(cls, FamilyMeasure) and cls not in CLICKS.values()]


def _kind(param: Param) -> str:
    """``choice`` (a structural option), ``number``/``integer`` (a placeholder), or ``other``
    (a gain map or a list of levels: not in the package)."""
    if param.choices is not None or param.dtype is flag:
        return "choice"
    return {float: "number", int: "integer"}.get(param.dtype, "other")


def _choices(param: Param) -> tuple[str, ...]:
    return ("false", "true") if param.dtype is flag else tuple(param.choices or ())


def _default(param: Param) -> str:
    return str(param.default).lower()


@dataclass(frozen=True)
class Variant:
    """One block of a measure: its structural options, and which numbers are placeholders."""

    cls: type[Measure]
    choices: tuple[tuple[str, str], ...]  # non-default choice parameters, sorted
    cutoff: bool
    given: tuple[str, ...]  # numeric parameters without a default that are given (rel, max, ...)

    @property
    def key(self) -> str:
        """The variant's name in the package: ``gain=exp,rel@k`` (the Jinja parser builds the same)."""
        return ",".join([*(f"{n}={v}" for n, v in self.choices), *self.given]) + ("@k" if self.cutoff else "")

    def numbers(self) -> list[str]:
        """The numeric parameters of this block, placeholders in its template."""
        return [n for n, p in self.cls.PARAMS.items() if _kind(p) in ("number", "integer")
                and (p.default is not None or n in self.given)]

    def spec(self, k: int | None, values: dict[str, float]) -> Measure:
        params: dict[str, Any] = dict(self.choices)
        params.update(values)
        return self.cls(k if self.cutoff else None, **params)


def variants(cls: type[Measure]) -> Iterator[Variant]:
    """The blocks of ``cls``: default options and each choice's other values, with and
    without a cutoff and each numeric parameter that has no default; those the spec refuses
    (an option that needs a cutoff, a parameter it must be given) are skipped.

    >>> from rank_polars.measures.rr import RR
    >>> [v.key for v in variants(RR)]
    ['', 'rel', '@k', 'rel@k']
    """
    choices = [()] + [((n, v),) for n, p in cls.PARAMS.items() if _kind(p) == "choice"
                      for v in _choices(p) if v != _default(p)]
    optional = [n for n, p in cls.PARAMS.items() if _kind(p) == "number" and p.default is None]
    givens = [()] + [(n,) for n in optional]
    if len(optional) > 1:
        givens.append(tuple(optional))
    for choice in choices:
        for cutoff in (False, True) if cls.SUPPORTS_CUTOFF else (False,):
            for given in givens:
                variant = Variant(cls, tuple(sorted(choice)), cutoff, tuple(given))
                try:  # a spec may refuse its options when built or when its formula is (sdcg without @k)
                    plan = build_plan([("m", variant.spec(K_SENTINEL, _sentinels(variant)))])
                except MetricNameError:
                    continue
                # a block reads ranks, not scores: a measure over the ties of scores (auc, coverage_error,
                # ties=average) has none to read, and would count every row a tie of its own
                if not plan.tie_columns():
                    yield variant


def _sentinels(variant: Variant) -> dict[str, float]:
    names = variant.numbers()
    floats = iter(FLOAT_SENTINELS)
    return {n: INT_SENTINEL if _kind(variant.cls.PARAMS[n]) == "integer" else next(floats) for n in names}


def block_sql(spec: Measure) -> str:
    """One measure's per-query values (DuckDB): ``__rp_by0`` (the group id), the query id and
    ``__rp_value``.  The statement ``to_sql`` writes for the measure over :data:`SOURCE`, but
    for the CTEs every measure shares (the ranked run, the judgments, the universe: see
    :func:`shared_sql`), which the evaluate macro writes once before the blocks.  A measure
    whose 0 would be its best value is null where the ranking is missing, as in ``to_sql``.

    >>> from rank_polars.measures import parse
    >>> block_sql(parse("rr@3")).splitlines()[-1]
    'SELECT p."__rp_by0", p."__rp_query", p."__rp_m0" AS "__rp_value" FROM "__rp_per_query" AS p'
    """
    q = per_query_query(build_plan([("m", spec)]), SOURCE, quote(UNIVERSE))
    q.ctes = [(name, body) for name, body in q.ctes if name not in SHARED]
    value, join = f"p.{quote(metric_column(0))}", ""
    if spec.missing_scores_best:
        value = f"CASE WHEN u.{quote(N_RET)} > 0 THEN {value} END"
        join = f" LEFT JOIN {quote(UNIVERSE)} AS u ON " + " AND ".join(f"p.{quote(k)} = u.{quote(k)}" for k in KEYS)
    keys = ", ".join(f"p.{quote(k)}" for k in KEYS)
    return q.render(f"SELECT {keys}, {value} AS {quote(VALUE)} FROM {quote('__rp_per_query')} AS p{join}")


def shared_sql(order: str, missing: str) -> str:
    """The CTEs every block reads, as one WITH list (DuckDB): the run with internal names,
    ranked as ``to_sql`` ranks (the position as given; by score, trec_eval's ties: item text
    descending), the judgments, and the (group, query) pairs to evaluate."""
    src = replace(SOURCE, order=order)
    q = Query()
    run = run_cte(replace(src, qrels=None, unlabelled=True))  # no label: the judgments give them
    if order == "score":  # the blocks read the rank from the run: the run by score is ranked first
        q.add(UNRANKED, run)
        run = ranked_cte(src).replace(quote(RUN), quote(UNRANKED))
    q.add(RUN, run)
    q.add(QRELS, qrels_cte(src))
    q.add(UNIVERSE, universe_sql(src, missing))
    return q.render("SELECT 1")


def _number(value: float) -> str:
    return repr(float(value))


def template(variant: Variant, dialect: str, full: bool = False) -> str:
    """The Jinja text of a variant's block in ``dialect``: the sentinels replaced by the macro's
    ``k`` and ``params``.  Checked: rendered with other values, the DuckDB template equals the
    block generated for them, and each dialect's holds each sentinel as often as DuckDB's;
    ``full`` compares every dialect's rendering with its own translation (four times slower)."""
    sentinels = _sentinels(variant)
    duck = block_sql(variant.spec(K_SENTINEL, sentinels))
    text = translate(duck, dialect)
    if any(mark in text for mark in ("{{", "{%", "{#")):
        raise RankPolarsError(f"{variant.cls.NAME} {variant.key}: its SQL holds Jinja delimiters")
    replacements = [(_number(K_SENTINEL), "{{ k | float }}"), (str(K_SENTINEL), "{{ k }}")]
    for name, sentinel in sentinels.items():
        if isinstance(sentinel, int):
            replacements.append((str(sentinel), f"{{{{ params.{name} }}}}"))
        else:
            replacements.append((_number(sentinel), f"{{{{ params.{name} | float }}}}"))
    reference = duck
    for old, new in replacements:
        if text.count(old) != reference.count(old):
            raise RankPolarsError(f"{variant.cls.NAME} {variant.key}: {dialect} changes the number {old}")
        text, reference = text.replace(old, new), reference.replace(old, new)
    for i in range(len(CHECK_K)):
        # increasing over the parameters, as the sentinels are (inst needs min_rel < max_rel)
        values = {n: CHECK_INT[i % 2] if isinstance(s, int) else CHECK_FLOAT[i] + j / 8
                  for j, (n, s) in enumerate(sentinels.items())}
        if dialect != "duckdb" and not full:
            continue
        expected = translate(block_sql(variant.spec(CHECK_K[i], values)), dialect)
        if render(text, CHECK_K[i], values) != expected:
            raise RankPolarsError(f"{variant.cls.NAME} {variant.key}: the template does not reproduce the SQL in {dialect}")
    return text


def render(text: str, k: int, params: dict[str, float]) -> str:
    """A template's SQL for ``k`` and ``params``, as Jinja renders it (``str`` of a float is its repr).

    >>> render("rank <= {{ k }} AND grade >= {{ params.rel | float }}", 10, {"rel": 2})
    'rank <= 10 AND grade >= 2.0'
    """
    text = text.replace("{{ k | float }}", _number(k)).replace("{{ k }}", str(k))
    for name, value in params.items():
        text = text.replace(f"{{{{ params.{name} | float }}}}", _number(value))
        text = text.replace(f"{{{{ params.{name} }}}}", str(value))
    return text


def templates(variant: Variant, full: bool = False) -> dict[str, str] | None:
    """The variant's template per adapter, or None when one of them does not reproduce the SQL."""
    try:
        return {adapter: template(variant, dialect, full) for adapter, dialect in ADAPTERS.items()}
    except RankPolarsError:
        return None


def macro_name(cls: type[Measure]) -> str:
    return "rp_measure_" + re.sub(r"\W", "_", cls.NAME)


HEADER = "{#- generated by `python -m rank_polars.formula.dbt` from rank_polars' metric specs: do not edit -#}\n"


def _dispatched(name: str, args: str, bodies: dict[str, str], doc: str) -> str:
    """A macro dispatched per adapter (dbt-utils' shape): the public name, then one
    ``<adapter>__`` macro per dialect, and a ``default__`` that names the adapters."""
    out = [HEADER, f"{{#- {doc} -#}}\n", f"{{% macro {name}({args}) -%}}\n",
           f"  {{{{ return(adapter.dispatch('{name}', 'rank_polars')({args})) }}}}\n{{%- endmacro %}}\n"]
    for adapter, body in bodies.items():
        out.append(f"\n{{% macro {adapter}__{name}({args}) -%}}\n{body}\n{{%- endmacro %}}\n")
    for adapter, same in SAME_SQL.items():
        out.append(f"\n{{% macro {adapter}__{name}({args}) -%}}\n"
                   f"  {{{{ return(rank_polars.{same}__{name}({args})) }}}}\n{{%- endmacro %}}\n")
    adapters = ", ".join([*ADAPTERS, *SAME_SQL])
    out.append(f"\n{{% macro default__{name}({args}) -%}}\n"
               f"  {{{{ exceptions.raise_compiler_error('rank_polars: no SQL for the ' ~ adapter.type() ~ "
               f"' adapter; the package writes {adapters}') }}}}\n"
               "{%- endmacro %}\n")
    return "".join(out)


def _branches(cases: list[tuple[str, str]], on: str) -> str:
    """``{% if on == 'a' %}text{% elif ... %}{% endif %}``."""
    out = []
    for i, (value, text) in enumerate(cases):
        out.append(f"{{%- {'if' if i == 0 else 'elif'} {on} == '{value}' %}}\n{text}\n")
    return "".join(out) + "{%- endif %}"


def measure_file(cls: type[Measure], chosen: dict[Variant, dict[str, str]]) -> str:
    """A measure's macro file: per adapter, one branch per variant."""
    bodies = {adapter: _branches([(v.key, texts[adapter]) for v, texts in chosen.items()], "variant")
              for adapter in ADAPTERS}
    doc = (f"{cls.NAME}: its per-query values over the relations evaluate prepares, one block per variant "
           "(structural options); k and params fill the placeholders")
    return _dispatched(macro_name(cls), "variant, k, params", bodies, doc)


def _aggregate_sql(kind: str) -> str:
    """The SQL of a group's value from the per-query values (``to_sql``'s aggregate_sql)."""
    spec = next(cls() for cls in measures() if cls.AGGREGATE == kind)
    return f"SELECT {aggregate_sql(quote('__rp_arg'), spec)} AS {quote('__rp_agg')} FROM {quote('__rp_t')}"


def _ctes(sql: str, dialect: str) -> str:
    """The WITH list of :func:`shared_sql`'s statement translated, without ``WITH`` and ``SELECT 1``."""
    text = translate(sql, dialect)
    match = re.fullmatch(r"WITH\s+(.*\S)\s+SELECT 1", text, re.DOTALL)
    if match is None:
        raise RankPolarsError(f"the shared CTEs in {dialect} are not one WITH list: {text[:200]}")
    return match[1]


def _fragment(sql: str, dialect: str, column: tuple[str, str]) -> str:
    """``sql`` (one aggregate) translated, its quoted ``column`` name replaced by a Jinja
    expression, and the text between ``SELECT`` and the alias kept (an expression)."""
    text = translate(sql, dialect)
    name, jinja = column
    text = re.sub(r"[\"`]" + re.escape(name) + r"[\"`]", jinja, text)
    match = re.fullmatch(r"SELECT (.*) AS [\"`]__rp_agg[\"`] FROM [\"`]__rp_t[\"`]", text, re.DOTALL)
    if match is None:
        raise RankPolarsError(f"the aggregate's SQL in {dialect} is not one expression: {text}")
    return match[1]


def _jinja_literal(value: Any) -> str:
    """A Python value as a Jinja literal (JSON but ``none``/``true``/``false``)."""
    return json.dumps(value).replace("null", "none")


# the values a numeric parameter is tried with to find the interval its spec accepts
_PROBES = (-1.0, 0.0, 0.5, 1.0, 1.5)


def domain(chosen: list[Variant], name: str) -> list[Any]:
    """``[low, low_open, high, high_open]``: the interval of values the spec accepts for the
    numeric parameter ``name`` (None: no bound), found by building it with values around 0 and
    1 (the specs' bounds: ``p`` in (0, 1), ``recall`` in [0, 1], ``mult`` at least 0, ``max``
    above 0), for the Jinja parser to refuse what the Python parser refuses.

    >>> from rank_polars.measures.others import ERR
    >>> domain(list(variants(ERR)), "max")
    [0.0, True, None, False]
    """
    variant = next(v for v in chosen if name in v.numbers())
    accepted: dict[float, bool] = {}
    for probe in _PROBES:
        values = {**_sentinels(variant), name: int(probe) if isinstance(_sentinels(variant)[name], int) else probe}
        try:
            variant.spec(K_SENTINEL, values).value()
            accepted[probe] = True
        except MetricNameError:
            accepted[probe] = False
    low = [None, False] if accepted[-1.0] else [0.0, False] if accepted[0.0] else [0.0, True]
    high = [None, False] if accepted[1.5] else [1.0, False] if accepted[1.0] else [1.0, True]
    return [*low, *high]


def lookup(chosen: dict[type[Measure], dict[Variant, dict[str, str]]],
           blocks: dict[type[Measure], type[Measure]]) -> dict[str, Any]:
    """What the Jinja parser reads: every name and alias -> the measure, and per measure the
    measure whose blocks it reads (``blocks``), its aggregate, whether it takes a cutoff, its
    parameters and its variants (each with its numeric placeholders)."""
    names: dict[str, str] = {}
    table: dict[str, Any] = {}
    for cls, chosen_variants in chosen.items():
        for name in (cls.NAME, *cls.ALIASES):
            names[name.lower()] = cls.NAME
        params: dict[str, Any] = {}
        for name, p in cls.PARAMS.items():
            kind = _kind(p)
            if kind == "other":
                continue
            params[name] = {"kind": kind, "choices": list(_choices(p)) if kind == "choice" else None,
                            "default": None if p.default is None else _default(p) if kind == "choice" else p.default}
            if kind != "choice":
                params[name]["range"] = domain(list(chosen_variants), name)
        table[cls.NAME] = {
            "block": blocks[cls].NAME, "aggregate": cls.AGGREGATE, "cutoff": cls.SUPPORTS_CUTOFF,
            "at_param": cls.AT_PARAM, "params": params,
            "variants": {v.key: v.numbers() for v in chosen_variants},
        }
    return {"names": names, "measures": table, "cut": {k: v for k, v in _CUT.items()}}


def files(full: bool = False, only: set[str] | None = None) -> dict[str, str]:
    """Every generated file of the package, by its path under ``dbt/``.  ``full``: check every
    dialect's template by rendering (see :func:`template`); ``only``: the measures' files to
    write (by name; the other files are always written, the lookup then lists only these)."""
    chosen: dict[type[Measure], dict[Variant, dict[str, str]]] = {}
    for cls in measures():
        if only is not None and cls.NAME not in only:
            continue
        found = {v: t for v in variants(cls) if (t := templates(v, full)) is not None}
        if found:
            chosen[cls] = found
    # a measure whose blocks are another's (gm_map's are ap's: only the aggregate differs) reads those
    duckdb = {cls: {v.key: t["duckdb"] for v, t in found.items()} for cls, found in chosen.items()}
    blocks = {cls: next(other for other in chosen if duckdb[other] == duckdb[cls]) for cls in chosen}
    out = {f"macros/generated/measures/{cls.NAME}.sql": measure_file(cls, v) for cls, v in chosen.items()
           if blocks[cls] is cls}
    cases = [(f"{o},{m}", shared_sql(o, m)) for o in ("position", "score") for m in ("zero", "skip")]
    shared = {a: _branches([(case, _ctes(sql, d)) for case, sql in cases], "(order ~ ',' ~ missing)")
              for a, d in ADAPTERS.items()}
    out["macros/generated/rp_shared.sql"] = _dispatched(
        "rp_shared", "order, missing", shared,
        "the CTEs every block reads: the ranked run, the judgments, the (group, query) pairs to evaluate")
    aggregate = {a: _branches([(kind, _fragment(_aggregate_sql(kind), d, ("__rp_arg", "{{ column }}")))
                               for kind in ("mean", "sum", "gmean")], "kind")
                 for a, d in ADAPTERS.items()}
    out["macros/generated/rp_aggregate.sql"] = _dispatched(
        "rp_aggregate", "kind, column", aggregate, "a group's value from its per-query values (mean, sum, gmean)")
    calls = "".join(f"{{%- {'if' if i == 0 else 'elif'} measure == '{cls.NAME}' %}}\n"
                    f"  {{{{ return(rank_polars.{macro_name(cls)}(variant, k, params)) }}}}\n"
                    for i, cls in enumerate(c for c in chosen if blocks[c] is c))
    out["macros/generated/rp_measure.sql"] = (
        f"{HEADER}{{#- a measure's block by its name (dbt reads adapter.dispatch's macro name as a literal) -#}}\n"
        f"{{% macro rp_measure(measure, variant, k, params) -%}}\n{calls}{{%- endif %}}\n{{%- endmacro %}}\n")
    out["macros/generated/rp_measures.sql"] = (
        f"{HEADER}{{#- the metric names, their parameters and variants, read by rp_parse_metric -#}}\n"
        f"{{% macro rp_measures() -%}}\n  {{{{ return({_jinja_literal(lookup(chosen, blocks))}) }}}}\n{{%- endmacro %}}\n")
    return out


def write(root: Path) -> list[Path]:
    """Write the generated files under ``root`` (the package's directory), removing generated
    files that are no longer generated; returns the paths written."""
    generated = root / "macros" / "generated"
    wanted = files(full=True)
    for old in generated.rglob("*.sql") if generated.exists() else []:
        if str(old.relative_to(root)) not in wanted:
            old.unlink()
    paths = []
    for rel, text in wanted.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else "dbt")
    for path in write(root):
        print(path)


__all__ = ["ADAPTERS", "SAME_SQL", "Variant", "block_sql", "files", "measures", "render", "shared_sql", "template", "variants", "write"]


if __name__ == "__main__":
    main()
