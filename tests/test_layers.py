"""The house's floors: no module of rank_polars imports a module of a floor above its own
(imports inside functions count too, as in the cycle test of tests/test_imports.py).

A new module needs a floor here; a module that must import upward is in the wrong place.
"""

from __future__ import annotations

import pytest

from .test_imports import graph

#: Floors, lowest first, each a list of module prefixes (the longest matching prefix wins).
FLOORS: list[tuple[str, list[str]]] = [
    # the packages whose __init__ imports nothing (a table of contents): below everything
    ("tables of contents", ["formula", "stats", "clicks", "dropins", "families", "judges"]),
    ("foundations", ["errors", "schema", "formula.tree", "progress", "presentation", "stats.resampling",
                     "formula.sql_macros"]),
    ("specs and readers", ["measures", "io", "datasets", "stats.tests", "stats.intervals", "project"]),
    ("plan and checks", ["plan", "proof", "inputs", "validate", "formula.listform"]),
    ("list expressions", ["formula.exprs", "formula.exprs_diversity", "formula.namespace", "formula.macros",
                           "formula.macros_scalar", "formula.macros_tables"]),
    ("engines", ["engines", "families.beyond", "families.diversity", "families.compat", "clicks.metrics", "judges.table", "judges.calls",
                 "judges.sql"]),
    ("library functions", ["evaluate", "attach", "sqlgen", "diagnose", "judges.agreement", "judges.leaderboard", "judges.pool",
                           "stats.compare", "stats.pairs", "stats.catalog", "report",
                           "stats.anova", "stats.planning", "clicks.position_bias", "clicks.counterfactual",
                           "monitor", "report_segments"]),
    ("front ends", ["formula.dbt", "dropins.trec_eval", "dropins.ndeval", "dropins.gdeval", "dropins.risk", "cli", ""]),  # "": the package
]


def floor_of(module: str) -> int:
    """The floor of ``rank_polars.x.y``: that of the longest prefix of ``x.y`` in FLOORS."""
    name = module.removeprefix("rank_polars").removeprefix(".")
    best: tuple[int, int] | None = None
    for level, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + ".") or (prefix == "" and name == ""):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), level)
    if best is None:
        raise KeyError(module)
    return best[1]


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a floor above the importer's, as readable lines."""
    out = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            if floor_of(target) > floor_of(module):
                out.append(f"{module} ({FLOORS[floor_of(module)][0]}) imports {target} ({FLOORS[floor_of(target)][0]})")
    return out


def test_the_walker_sees_an_upward_import() -> None:
    # the import this test was written to forbid: exprs importing an engine module
    assert upward({"rank_polars.formula.exprs": {"rank_polars.engines.listform"}}) == [
        "rank_polars.formula.exprs (list expressions) imports rank_polars.engines.listform (engines)"
    ]
    assert upward({"rank_polars.engines.polars_engine": {"rank_polars.validate"}}) == []
    assert floor_of("rank_polars") == len(FLOORS) - 1
    assert floor_of("rank_polars.io.subtopics") < floor_of("rank_polars.dropins.ndeval.command")
    with pytest.raises(KeyError):
        floor_of("rank_polars.nowhere")


def test_every_module_has_a_floor() -> None:
    unplaced = []
    for module in graph():
        try:
            floor_of(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, f"give these modules a floor in tests/test_layers.py: {unplaced}"


def test_no_module_imports_a_floor_above_its_own() -> None:
    found = upward(graph())
    assert not found, "imports that run upward:\n" + "\n".join(found)
