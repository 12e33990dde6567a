"""Shared fixtures, and how the suite spreads over pytest-xdist workers.

* ``conformance``: the vendored conformance data, ``tests/data/conformance/`` (a byte-identical
  copy of the workplace's ``shared/conformance/``, see ``PROVENANCE.md`` there), so a fresh clone
  passes on its own.
* ``spark_session``: one local Spark session per test process (per xdist worker), started once and
  stopped at the end; ``tests/test_spark.py``'s ``spark`` fixture hands it to the Spark tests.
* Workers: ``pyproject.toml`` runs ``-n auto --dist loadgroup``, with the scheduler below: the
  tests that take the Spark session are one unit (one worker starts one JVM), a file with a
  fixture of module scope is one unit (its docs build, notebook kernel or report is made once),
  every other test is sent on its own to whichever worker is free.  The units go first, the
  slowest first, so the last minutes are not one worker alone on a long unit.
* System packages: ``tests/system_deps.py`` prints one line per Debian package it installs as
  it installs them; the session's summary lists them again.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import settings

from tests import system_deps

CONFORMANCE = Path(__file__).resolve().parent / "data" / "conformance"
# the original, beside the repository in the workplace; absent from a user's clone
SHARED_CONFORMANCE = Path(__file__).resolve().parents[2] / "shared" / "conformance"

# No timing deadline: three workers on two cores (plus Spark's JVM) make a test's wall time
# depend on its neighbours.  A test's own @settings(max_examples=...) wins over the profile; a test
# without one gets 50 examples here (each example runs an engine: the suite has to fit in minutes),
# and 500 with RANK_POLARS_HYPOTHESIS_PROFILE=thorough.
settings.register_profile("rank_polars", deadline=None, print_blob=True, max_examples=50)
settings.register_profile("thorough", deadline=None, print_blob=True, max_examples=500)
settings.load_profile(os.environ.get("RANK_POLARS_HYPOTHESIS_PROFILE", "rank_polars"))


@pytest.fixture(scope="session")
def conformance() -> Path:
    if not (CONFORMANCE / "README.md").is_file():
        pytest.fail(f"vendored conformance data missing at {CONFORMANCE}")
    return CONFORMANCE


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    """One local Spark session for this test process: its JVM starts once (~10 s), not per module."""
    # Not skipped when missing: pyspark is in the test extra and Java comes from tests/system_deps.py.
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        pytest.fail(f"pyspark is a test dependency (pip install 'rank-polars[test]'): {e}")
    try:
        system_deps.ensure("java")
    except RuntimeError as e:
        pytest.fail(str(e))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers on this interpreter
    session = (
        SparkSession.builder.master("local[1]")
        .config("spark.driver.host", "127.0.0.1")  # containers often cannot resolve their hostname
        .config("spark.driver.bindAddress", "127.0.0.1")
        .appName("rank_polars-tests")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        # the tests' frames are tiny and their queries huge (every metric at once): planning and
        # compiling cost, not data.  No adaptive re-planning per stage, no generated Java to compile
        # (interpreted expressions give the same values): 10 metrics 72 s -> 49 s on a busy machine
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        # a test JVM lives for a few hundred small jobs: the C1 compiler alone and the serial
        # collector halve its CPU (measured: start 16.6 -> 9.5 CPU s, 8 diagnose cases 31 -> 16);
        # C2's optimised code only pays back on long jobs, which the tests do not run
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# -- how the tests are spread over the workers -----------------------------------------------------
# xdist's own --dist loadgroup does not group with pytest 9.2 (pytest-xdist issue 1386: it renames
# node ids, which pytest 9.2 no longer lets it do), so the suite brings its scheduler: xdist's
# LoadScopeScheduling with our units.  The controller has no fixtures (only the workers collect),
# so the units come from the test files' source, read once.
SPARK_FIXTURES = {"spark", "spark_session"}


def _shares_a_fixture(tree: ast.Module) -> bool:
    """A fixture of module, class or package scope is defined in the file."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "fixture":
            if any(k.arg == "scope" and getattr(k.value, "value", None) != "function" for k in node.keywords):
                return True
    return False


def _spark_tests(tree: ast.Module) -> set[str]:
    """Names of the file's test functions that take the Spark session, directly or through the
    file's own fixtures."""
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    needs = set(SPARK_FIXTURES)
    grown = True
    while grown:  # a fixture that takes a fixture that takes Spark takes Spark
        before = len(needs)
        needs |= {f.name for f in functions if not f.name.startswith("test") and needs & {a.arg for a in f.args.args}}
        grown = len(needs) > before
    return {f.name for f in functions if f.name.startswith("test") and needs & {a.arg for a in f.args.args}}


def _generated_tests(tree: ast.Module) -> set[str]:
    """Names of the file's test functions run by hypothesis (``@given``): each runs its examples,
    seconds where most tests take milliseconds."""
    def given(d: ast.expr) -> bool:
        f = d.func if isinstance(d, ast.Call) else d
        return getattr(f, "id", getattr(f, "attr", None)) == "given"

    return {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
            and any(given(d) for d in f.decorator_list)}


def units(root: Path) -> dict[str, str]:
    """Test file (relative path), or ``file::test`` for a test that takes Spark -> its work unit.

    ``spark:all`` for every test that takes the Spark session: one worker starts one JVM (~10 CPU s,
    and its compiler warms up on the first statements), the other runs everything else meanwhile
    (one unit of ~380 worker-seconds of ~1,050: quiet suite 531 -> 515 s against one Spark unit
    per file, where both workers started a JVM); the file
    itself for a file with a fixture of module scope (a docs build, a notebook kernel, a report is
    made once).  A test found in neither is sent on its own to whichever worker is free.
    """
    return _scan(root)[0]


def generated(root: Path) -> frozenset[str]:
    """``file::test`` of every test run by hypothesis.  Sent on its own (unless a unit holds it)
    but before the quick tests, which then fill the end of the run: a worker left with a test of
    many examples kept the others waiting (quiet: 9 s)."""
    return _scan(root)[1]


@functools.lru_cache(maxsize=None)
def _scan(root: Path) -> tuple[dict[str, str], frozenset[str]]:
    """:func:`units` and :func:`generated`, from one parse of the test files."""
    found: dict[str, str] = {}
    given: set[str] = set()
    for path in sorted((root / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        relative = path.relative_to(root).as_posix()
        found |= {f"{relative}::{name}": "spark:all" for name in _spark_tests(tree)}
        given |= {f"{relative}::{name}" for name in _generated_tests(tree)}
        if _shares_a_fixture(tree):
            found[relative] = relative
    return found, frozenset(given)


def _test(nodeid: str) -> str:
    """``file::test`` of a node id (parameters and class dropped)."""
    path, _, rest = nodeid.partition("::")
    return f"{path}::{rest.split('::')[-1].split('[')[0]}"


def _unit(by_file: dict[str, str], nodeid: str) -> str:
    return by_file.get(_test(nodeid)) or by_file.get(nodeid.partition("::")[0]) or nodeid


# the units that take longest (measured), sent first so that no worker is left alone on one at the end
SLOW_FIRST = ("spark", "tests/test_docs.py", "tests/test_notebooks.py", "tests/test_report.py")


def _slow_rank(unit: str) -> int | None:
    """The place of a unit among the slow ones sent first (every Spark unit counts as ``spark``)."""
    unit = "spark" if unit.startswith("spark:") else unit
    return SLOW_FIRST.index(unit) if unit in SLOW_FIRST else None


@pytest.hookimpl(optionalhook=True, wrapper=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Iterator[int]:
    """``-n auto``: one worker more than xdist counts (its cores), unless
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` gives the number, which is taken as given.

    A worker often waits on a process of its own rather than computing: the Spark worker on its
    JVM (which does the work), others on trec_eval, ndeval, Chromium, a notebook kernel, a docs
    build or a CLI child.  With one worker per core such a wait leaves a core idle; the extra
    worker fills it (2 cores, quiet: 383 -> 355 s of pytest, the machine 98% busy instead of
    ~90%, memory far below the machine's)."""
    counted = yield  # xdist's own count: the variable, else the cores (logical ones for -n logical)
    return counted if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else counted + 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    by_file = units(config.rootpath)
    config.option.loadscopereorder = False  # the order is the collection's, sorted below

    class Units(LoadScopeScheduling):
        """The units in the collection's order (slow ones first), then single tests as workers free up."""

        def _split_scope(self, nodeid: str) -> str:
            return _unit(by_file, nodeid)

    return Units(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow units first, then the other units, then single tests (hypothesis's first); stable, so
    every worker collects the same order (xdist checks that)."""
    by_file, hypothesis_tests = units(config.rootpath), generated(config.rootpath)

    def rank(item: pytest.Item) -> int:
        unit = _unit(by_file, item.nodeid)
        slow = _slow_rank(unit)
        if slow is not None:
            return slow
        if unit != item.nodeid:
            return len(SLOW_FIRST)
        return len(SLOW_FIRST) + (1 if _test(item.nodeid) in hypothesis_tests else 2)

    items.sort(key=rank)


# -- system packages: printed as installed, listed again at the end --------------------------------
_INSTALLED_ON_WORKERS: list[tuple[str, str]] = []


def pytest_configure(config: pytest.Config) -> None:
    system_deps.CAPTURE = config.pluginmanager.getplugin("capturemanager")


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the list to the controller
        workeroutput["rank_polars_installed"] = list(system_deps.INSTALLED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _INSTALLED_ON_WORKERS.extend(tuple(x) for x in getattr(node, "workeroutput", {}).get("rank_polars_installed", []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    installed = [*system_deps.INSTALLED, *_INSTALLED_ON_WORKERS]
    if installed:
        terminalreporter.write_sep("-", f"Packages installed by this run (Debian's; pip references without dependencies): {len(installed)}")
        for name, why in installed:
            terminalreporter.write_line(f"{name}: {why}")
