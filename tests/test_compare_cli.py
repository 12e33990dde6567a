"""rank-polars compare over many versions: every pair with Tukey, the groups view, and the
unpaired delta test, as a user runs them."""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import polars as pl
import pytest

from rank_polars.datasets import chatbot_log
from tests.cli.helpers import invoke


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sweep") / "log.parquet"
    chatbot_log(n_questions=120, versions=[f"bot-v{i}" for i in range(1, 6)], seed=5).write_parquet(path)
    return path


def test_groups_share_a_letter_exactly_when_not_significantly_different(sweep: Path) -> None:
    args = ("compare", sweep, "-m", "ndcg@10", "--by", "model", "--pairs", "all", "--test", "tukey")
    text = invoke(*args).stdout
    table = pl.read_csv(io.StringIO(invoke(*args, "--format", "csv").stdout))
    assert table.height == 10 and set(table["test"]) == {"tukey"}
    assert "significant after" not in text  # Tukey adjusts over the pairs itself: no correction named
    block = text.split("groups on ndcg@10 (versions sharing a letter are not significantly different):\n")[1]
    letters = dict(re.findall(r"^  (bot-v\d)\s+[\d.]+\s+([a-z]+)$", block, flags=re.M))
    assert sorted(letters) == [f"bot-v{i}" for i in range(1, 6)]
    # listed best first: the means descend
    means = [float(m) for m in re.findall(r"^  bot-v\d\s+([\d.]+)\s", block, flags=re.M)]
    assert means == sorted(means, reverse=True)
    for row in table.iter_rows(named=True):
        share = bool(set(letters[row["baseline"]]) & set(letters[row["version"]]))
        assert share == (not row["significant"]), (row["baseline"], row["version"])


def test_two_arms_with_the_delta_test(tmp_path: Path) -> None:
    rows = [(f"arm{a}", f"s{a}-{q}", f"i{p}", p, int((q * 7 + p * 3 + a) % (5 + p) == 0))
            for a in range(2) for q in range(60) for p in range(1, 5)]
    path = tmp_path / "ab.parquet"
    pl.DataFrame(rows, schema=["arm", "query", "item", "position", "click"], orient="row").write_parquet(path)
    out = invoke("compare", path, "-m", "ctr(agg=ratio)@4", "-m", "abandonment@4", "--by", "arm",
                 "--relevance", "click", "--test", "delta").stdout
    assert "groups on" not in out  # two versions: the verdicts say it all
    table = pl.read_csv(io.StringIO(invoke("compare", path, "-m", "ctr(agg=ratio)@4", "--by", "arm", "--relevance",
                                           "click", "--test", "delta", "--format", "csv").stdout))
    row = table.row(0, named=True)
    assert row["test"] == "delta" and row["n_queries"] == 120 and row["wins"] is None
