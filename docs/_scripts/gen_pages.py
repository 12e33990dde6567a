"""Pages generated at build time (mkdocs-gen-files), so that they follow the code.

* ``metrics/<name>.md``: one page per spec in ``rank_polars.measures.MEASURES`` — its names, the
  formula from its docstring, its declared ``PARAMS`` with their docs, an example run through
  ``rp.evaluate`` at build time, the list-form function's doctest example, and whether SQL can
  express it. A new measure in the registry gets a page with no edit here.
* ``metrics/index.md`` (appended): the table of every metric.
* ``reference/``: one mkdocstrings page per public module, one for the top-level API and one
  listing every metric spec, following ``rank_polars.__all__`` (a name none documents fails).
* ``sql-macros.md`` (appended): every macro of ``sql/``, read from the files' own headers.
* ``benchmarks.md`` and ``trec-eval-semantics.md``: benchmarks/README.md and the semantics
  section of tests/data/conformance/README.md, as they are in the repository.
"""

from __future__ import annotations

import inspect
import re
import types
from pathlib import Path

import mkdocs_gen_files
import polars as pl

import rank_polars as rp
from rank_polars.formula import exprs
from rank_polars.measures import MEASURES, Measure

ROOT = Path(__file__).resolve().parents[2]

# The example every metric page evaluates: two rankings, graded judgments (x is relevant but not
# shown, f is judged non-relevant, d and e are unjudged).
EXAMPLE_RUN = {
    "query": ["q1", "q1", "q1", "q1", "q2", "q2", "q2"],
    "item": ["a", "b", "c", "d", "e", "f", "g"],
    "position": [1, 2, 3, 4, 1, 2, 3],
}
EXAMPLE_QRELS = {
    "query": ["q1", "q1", "q1", "q1", "q2", "q2"],
    "item": ["a", "b", "c", "x", "f", "g"],
    "relevance": [2, 0, 1, 1, 0, 3],
}


def rst_to_md(text: str) -> str:
    """Docstrings use reST literals (``x``); Markdown wants `x`."""
    return re.sub(r"``(.+?)``", r"`\1`", text)


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def list_function(cls: type[Measure]) -> types.FunctionType | None:
    """The typed function of ``rank_polars.formula.exprs`` that computes this measure over one list."""
    names = {cls.NAME, *cls.ALIASES, cls.__name__.lower()}
    for name in exprs.__all__:
        fn = getattr(exprs, name)
        if name in names:
            return fn
    return None


def examples_section(doc: str) -> str:
    """The ``Examples`` section of a numpy-style docstring (doctest lines with their output)."""
    match = re.search(r"^Examples\n-+\n(.*)", doc, flags=re.S | re.M)
    return match.group(1).strip() if match else ""


def candidate_names(cls: type[Measure]) -> list[str]:
    """Spellings to show the measure with: at a cutoff, plain, then with each required parameter set."""
    names = [f"{cls.NAME}@3"] if cls.SUPPORTS_CUTOFF else []
    names.append(cls.NAME)
    required = [p for p, spec in cls.PARAMS.items() if spec.default is None and not spec.choices]
    for value in ("0.5", "1"):
        names.extend(f"{cls.NAME}({p}={value})" for p in required)
    return names


def example_tables(cls: type[Measure]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The example's run and judgments: a measure reading other judgments (subtopics) declares its
    own example qrels, one reading another column of the run (the click metrics' clicks) its own run."""
    run, qrels = getattr(cls, "EXAMPLE_RUN", EXAMPLE_RUN), getattr(cls, "EXAMPLE_QRELS", EXAMPLE_QRELS)
    return pl.DataFrame(run), pl.DataFrame(qrels)


def example_name(cls: type[Measure]) -> str:
    """The first spelling that parses and evaluates on the example; a measure with none is a docs bug."""
    run, qrels = example_tables(cls)
    errors = []
    for name in candidate_names(cls):
        try:
            rp.evaluate(run, [name], qrels=qrels)
        except rp.RankPolarsError as exc:
            errors.append(f"{name}: {exc}")
        else:
            return name
    raise RuntimeError(f"no example evaluates for measure {cls.NAME!r}: {'; '.join(errors)}")


def _columns(frame: dict[str, list]) -> str:
    return "".join(f"...     {name!r}: {values!r},\n" for name, values in frame.items())


def evaluate_example(cls: type[Measure], name: str) -> str:
    run, qrels = example_tables(cls)
    mean = rp.evaluate(run, [name], qrels=qrels)
    # a catalogue-level measure (coverage, Gini) is one value per group: it has no per-query value
    per_query = "" if cls.AGGREGATE == "catalog" else (
        f">>> rp.evaluate(run, [{name!r}], qrels=qrels, per_query=True)\n"
        f"{rp.evaluate(run, [name], qrels=qrels, per_query=True)}\n")
    return (
        "```pycon\n"
        ">>> import polars as pl, rank_polars as rp\n"
        f">>> run = pl.DataFrame({{\n{_columns(getattr(cls, 'EXAMPLE_RUN', EXAMPLE_RUN))}... }})\n"
        f">>> qrels = pl.DataFrame({{\n{_columns(getattr(cls, 'EXAMPLE_QRELS', EXAMPLE_QRELS))}... }})\n"
        f"{per_query}"
        f">>> rp.evaluate(run, [{name!r}], qrels=qrels)\n"
        f"{mean}\n"
        "```\n"
    )


def sql_support(cls: type[Measure], name: str) -> str:
    try:
        rp.to_sql([name], table="run", qrels="qrels")
    except rp.RankPolarsError as exc:
        return f"SQL cannot express `{name}`: {exc}"
    macro = ROOT / "sql" / f"{cls.NAME}.sql"
    text = (
        f"`rp.to_sql([{name!r}], table=..., qrels=...)` and `engine=\"duckdb\"` compute it in SQL, "
        "from the same formula."
    )
    if macro.is_file():
        text += f" DuckDB macro: [`{cls.NAME}(...)`](../sql-macros.md#{cls.NAME})."
    return text


def metric_page(cls: type[Measure]) -> str:
    doc = rst_to_md(inspect.getdoc(cls) or "")
    formula, _, rest = doc.partition("\n")
    formula = formula.replace("`", "")  # shown in a code block
    names = [cls.NAME, *cls.ALIASES]
    spelled = ", ".join(f"`{n}@k`" if cls.SUPPORTS_CUTOFF else f"`{n}`" for n in names)
    out = [f"# {cls.NAME}\n", f"```text\n{formula}\n```\n"]
    if rest.strip():
        out.append(rest.strip() + "\n")
    out.append(f"**Names:** {spelled} (case-insensitive)."
               + (" Without `@k`: the whole list." if cls.SUPPORTS_CUTOFF else " It takes no cutoff.") + "\n")
    out.append("## Parameters\n")
    if cls.PARAMS:
        out.append("| parameter | default | values | meaning |\n|---|---|---|---|")
        for pname, param in cls.PARAMS.items():
            values = ", ".join(f"`{c}`" for c in param.choices) if param.choices else param.dtype.__name__
            default = "none" if param.default is None else f"`{param.default}`"
            out.append(f"| `{pname}` | {default} | {values} | {cell(rst_to_md(param.doc))} |")
        example = f"{cls.NAME}({next(iter(cls.PARAMS))}=...)" + ("@10" if cls.SUPPORTS_CUTOFF else "")
        out.append(f"\nPass them in the name (`{example}`) or to the spec object "
                   f"(`rp.parse({cls.NAME!r})`, `rank_polars.measures.{cls.__name__}`).\n")
    else:
        out.append("None.\n")
    out.append("## Example\n")
    out.append("A run of two rankings and graded judgments (`x` is relevant but not shown, `f` is judged "
               "non-relevant, `d` and `e` are unjudged), computed when this page was built:\n")
    name = example_name(cls)
    out.append(evaluate_example(cls, name))
    fn = list_function(cls)
    if fn is not None:
        fn_doc = inspect.getdoc(fn) or ""
        out.append("## Over one ranked list (Polars expression)\n")
        out.append(f"`rank_polars.formula.exprs.{fn.__name__}{inspect.signature(fn)}`: "
                   f"{rst_to_md(fn_doc.splitlines()[0]) if fn_doc else ''} The list carries its own "
                   "judgments: the ideal ranking and R come from it. The same function is "
                   f"`pl.col(...).ranking.{fn.__name__}(...)`.\n")
        ex = examples_section(fn_doc)
        if ex:
            out.append(f"```pycon\n{ex}\n```\n")
    out.append("## SQL\n")
    out.append(sql_support(cls, name) + "\n")
    return "\n".join(out)


def metric_pages() -> None:
    rows = []
    for cls in MEASURES:
        with mkdocs_gen_files.open(f"metrics/{cls.NAME}.md", "w") as f:
            f.write(metric_page(cls))
        formula = rst_to_md((inspect.getdoc(cls) or "").splitlines()[0])
        names = ", ".join(f"`{n}`" for n in (cls.NAME, *cls.ALIASES))
        params = ", ".join(f"`{p}`" for p in cls.PARAMS) or "—"
        rows.append(f"| [{cls.NAME}]({cls.NAME}.md) | {names} | {params} | {cell(formula)} |")
    with mkdocs_gen_files.open("metrics/index.md", "a") as f:
        f.write("\n## Every metric\n\n| metric | names | parameters | definition |\n|---|---|---|---|\n")
        f.write("\n".join(rows) + "\n")
    with mkdocs_gen_files.open("metrics/SUMMARY.md", "w") as f:
        f.write("* [Overview](index.md)\n")
        f.writelines(f"* [{cls.NAME}]({cls.NAME}.md)\n" for cls in MEASURES)


def reference_pages() -> None:
    """Every name of ``rank_polars.__all__``, each documented once.

    * functions and classes: the top-level page, one mkdocstrings block each, at the module
      that defines them (``rank_polars.stats.compare.compare``, ...);
    * modules (``rp.exprs``, ``rp.datasets``, ``rp.sql_macros``): a page each;
    * metric specs (``rp.ndcg``, ``rp.novelty``, ...): the page ``reference/measures.md``, a table
      of every spec name linking to its metric page, or, for a spec the registry does not list
      (the beyond-accuracy specs, which carry their tables), to its docstring rendered there.

    A name that fits none of these fails the build, so a new export cannot go undocumented.
    """
    top, modules, specs, unlisted = [], [], [], []
    registered = set(MEASURES)
    for name in rp.__all__:
        obj = getattr(rp, name)
        if isinstance(obj, types.ModuleType):
            modules.append(obj.__name__)
        elif isinstance(obj, type) and issubclass(obj, Measure) and obj is not Measure:
            path = f"{obj.__module__}.{obj.__qualname__}"
            if obj in registered:
                specs.append(f"| `rp.{name}` | [{obj.NAME}](../metrics/{obj.NAME}.md) |")
            else:
                specs.append(f"| `rp.{name}` | [`{obj.__qualname__}`](#{path}) |")
                if path not in unlisted:
                    unlisted.append(path)
        elif inspect.isfunction(obj) or inspect.isclass(obj):
            top.append(f"{obj.__module__}.{obj.__qualname__}")
        else:
            raise RuntimeError(f"rank_polars.{name} ({type(obj).__name__}): no reference page documents it")
    with mkdocs_gen_files.open("reference/index.md", "w") as f:
        f.write("# rank_polars\n\nThe top-level API (`import rank_polars as rp`). The metric specs "
                "(`rp.ndcg`, `rp.ap`, `rp.novelty`, ...) are listed in [Metric specs](measures.md), the "
                "modules `rp." + "`, `rp.".join(m.split(".")[-1] for m in modules) + "` have a page each.\n\n")
        f.writelines(f"::: {path}\n\n" for path in top)
    with mkdocs_gen_files.open("reference/measures.md", "w") as f:
        f.write("# Metric specs\n\nEach spec of `rank_polars.__all__` (`rp.ndcg(k=10)`, `rp.novelty(k=10, "
                "history=train)`, ...) and where it is documented: the registered metrics on their metric "
                "page (formula, parameters, an example), the others below.\n\n| spec | documented at |\n|---|---|\n")
        f.write("\n".join(specs) + "\n\n")
        if unlisted:
            f.write("## Specs with auxiliary tables\n\n")
            f.writelines(f"::: {path}\n    options:\n      heading_level: 3\n\n" for path in unlisted)
    for module in modules:
        with mkdocs_gen_files.open(f"reference/{module.split('.')[-1]}.md", "w") as f:
            f.write(f"::: {module}\n")
    with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as f:
        f.write("* [rank_polars](index.md)\n* [Metric specs](measures.md)\n")
        f.writelines(f"* [{m.split('.')[-1]}]({m.split('.')[-1]}.md)\n" for m in modules)


def sql_macro_reference() -> None:
    """Each macro file's header comment: signature, arguments, example."""
    parts = ["\n## Every macro\n"]
    files = sorted(p for p in (ROOT / "sql").glob("*.sql") if p.name not in {"all.sql", "tables.sql"})
    for path in files:
        header = []
        for line in path.read_text().splitlines():
            if not line.startswith("--"):
                break
            if "Generated from" not in line:
                header.append(line[3:] if line.startswith("-- ") else line[2:])
        title, _, body = "\n".join(header).partition("\n")
        name = path.stem
        parts.append(f"### {name}\n\n{cell(title)}\n\n```sql\n{body.strip()}\n```\n")
    with mkdocs_gen_files.open("sql-macros.md", "a") as f:
        f.write("\n".join(parts))


def copied_pages() -> None:
    bench = (ROOT / "benchmarks" / "README.md").read_text()
    with mkdocs_gen_files.open("benchmarks.md", "w") as f:
        f.write(bench)
    conformance = (ROOT / "tests" / "data" / "conformance" / "README.md").read_text()
    match = re.search(r"^##\s+trec_eval semantics[^\n]*\n(.*?)(?=^## )", conformance, flags=re.S | re.M)
    if match is None:
        raise RuntimeError("tests/data/conformance/README.md has no '## trec_eval semantics' section")
    with mkdocs_gen_files.open("trec-eval-semantics.md", "w") as f:
        f.write(
            "# trec_eval semantics\n\nWhat trec_eval 10 computes, read from its source, with the differences "
            "from 9.0.8 (and so pytrec_eval). rank_polars follows it by default; the tests check every "
            "per-query value against trec_eval's own expected files. This page is "
            "`tests/data/conformance/README.md`'s section, as it is in the repository.\n\n"
            + match.group(1)
        )


metric_pages()
reference_pages()
sql_macro_reference()
copied_pages()
