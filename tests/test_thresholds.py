"""A metric whose ``rel=`` threshold no grade reaches is 0 everywhere: it warns.

And every metric name and command line the README shows runs on the sample data without
that warning (the sample's labels are marks in [0, 1]).
"""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import rank_polars as rp
from rank_polars.cli import main
from rank_polars.errors import CoverageWarning

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
ENGINES = ["polars", "duckdb"]
LOG = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "a"], "position": [1, 2, 1],
                    "relevance": [0.0, 0.8, 0.5]})


def threshold_warnings(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, CoverageWarning) and "rel=" in str(w.message)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_threshold_above_every_grade_warns_naming_metric_threshold_and_largest_grade(engine):
    got = threshold_warnings(lambda: rp.evaluate(LOG, ["p(rel=2)@5", "r(rel=0.5)@3", "map"], engine=engine))
    assert got == ["metric 'p(rel=2)@5' counts an item as relevant from grade 2 (rel=2), above every grade in the data "
                   "(the largest is 0.8): it is 0 on every query"]
    # with judgments, their grades decide; a threshold some grade reaches says nothing
    qrels = LOG.select("query", "item", relevance=pl.col("relevance") * 3)
    assert threshold_warnings(lambda: rp.evaluate(LOG.drop("relevance"), ["p(rel=2)@5"], qrels=qrels, engine=engine)) == []
    got = threshold_warnings(lambda: rp.evaluate(LOG.drop("relevance"), ["r(rel=3)@5"], qrels=qrels, engine=engine))
    assert len(got) == 1 and "(the largest is 2.4)" in got[0]


def test_the_command_line_warns_on_the_sample(tmp_path):
    rp.datasets.sample_log().write_parquet(tmp_path / "log.parquet")
    result = CliRunner().invoke(main, ["evaluate", str(tmp_path / "log.parquet"), "-m", "p(rel=2)@5", "--by", "model"])
    assert result.exit_code == 0, result.output
    assert "warning: metric 'p(rel=2)@5' counts an item as relevant from grade 2 (rel=2)" in result.stderr
    assert "(the largest is 1)" in result.stderr


def test_every_readme_metric_and_command_runs_on_the_sample_without_that_warning(tmp_path, monkeypatch):
    log = rp.datasets.sample_log()
    metrics = README.split("## Metrics")[1].split("\n## ")[0]
    examples = [m for m in re.findall(r"`([^`]+)`", metrics.split("\n\n")[1]) if "(" in m or "@" in m or "_" in m]
    examples = [m for m in examples if "NAME" not in m]
    assert "p(rel=0.9)@5" in examples and len(examples) >= 8
    for metric in examples:
        if metric == "p(rel=2)@5":  # the README names it as the one that warns
            continue
        assert threshold_warnings(lambda: rp.evaluate(log, [metric], by="model")) == [], metric
    # the console examples that evaluate a log, on the sample written where they look
    run, qrels = rp.datasets.split_judgments(log)
    (tmp_path / "logs").mkdir()
    log.write_parquet(tmp_path / "logs" / "part-0.parquet")
    rp.datasets.sample_judgments().write_parquet(tmp_path / "judgments.parquet")  # two judges
    monkeypatch.chdir(tmp_path)
    console = re.search(r"```console\n(.*?)```", README, flags=re.S).group(1)
    lines = [shlex.split(line[2:])[1:] for line in console.splitlines() if line.startswith("$ rank-polars ")]
    checked = 0
    for args in lines:
        if args[0] not in ("evaluate", "compare", "validate", "agreement") or "run.trec" in args:
            continue
        args = [a for a in args if a != "--report" and a != "report.html"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        assert "rel=" not in result.stderr, (args, result.stderr)
        checked += 1
    assert checked == 5
