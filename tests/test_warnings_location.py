"""Warnings point at the caller's line, not at a line inside rank_polars.

``rank_polars.errors.warn`` walks out of the package; these tests record the warnings of
public calls and check the filename and line they carry are this file's own call.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import CoverageWarning, SmallSampleWarning

PACKAGE = Path(rp.__file__).parent


def here() -> int:
    """The caller's line number."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def points_here(found: list[warnings.WarningMessage], line: int) -> None:
    for w in found:
        assert Path(w.filename).resolve() == Path(__file__).resolve(), (w.filename, w.lineno)
        assert w.lineno == line, (w.filename, w.lineno)


RUN = pl.DataFrame({"query": ["q1", "q1", "q9"], "item": ["a", "b", "c"], "position": [1, 2, 1]})
QRELS = pl.DataFrame({"query": ["q1", "q2"], "item": ["a", "x"], "relevance": [1, 1]})


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_coverage_warning_from_evaluate_names_the_callers_line(engine):
    # q9 has no judgments (not evaluated) and q2 has no ranking (scored 0): two CoverageWarnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rp.evaluate(RUN, "p@1", qrels=QRELS, engine=engine); line = here()  # noqa: E702
    found = [w for w in caught if issubclass(w.category, CoverageWarning)]
    assert len(found) == 2, [str(w.message) for w in caught]
    points_here(found, line)


def test_small_sample_warning_from_compare_names_the_callers_line():
    log = pl.DataFrame({"model": ["a", "b"], "query": ["q1", "q1"], "item": ["x", "x"], "position": [1, 1],
                        "relevance": [1, 0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rp.compare(log, "p@1", n_resamples=50); line = here()  # noqa: E702
    found = [w for w in caught if issubclass(w.category, SmallSampleWarning)]
    assert len(found) == 1 and "n too small" in str(found[0].message), [str(w.message) for w in caught]
    points_here(found, line)


def test_the_warning_classes_are_exported_beside_each_other():
    assert rp.CoverageWarning is CoverageWarning and rp.SmallSampleWarning is SmallSampleWarning
    assert {"CoverageWarning", "SmallSampleWarning"} <= set(rp.__all__)
    assert SmallSampleWarning.__module__ == "rank_polars.errors"


def test_no_warning_in_the_package_bypasses_the_helper():
    """Every warning goes through errors.warn (the one place that computes the caller's frame)."""
    offenders = [f"{p.relative_to(PACKAGE)}:{i}" for p in PACKAGE.rglob("*.py") if p.name != "errors.py"
                 for i, text in enumerate(p.read_text().splitlines(), 1) if "warnings.warn(" in text]
    assert not offenders, offenders
