"""``rp.track``: only new or changed partitions are evaluated, the series equals ``evaluate`` per day
(and SciPy's t interval), windows aggregate the stored per-query values, changed settings are
refused or rebuilt, both engines agree, and the command and the docs page run."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal
from scipy import stats as sp

import rank_polars as rp
from rank_polars.cli import main
from rank_polars.errors import RankPolarsError
from rank_polars.monitor import track as track_module

METRICS = ["ndcg@10", "mrr"]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return rp.datasets.monitoring_log(days=6, queries_per_day=80, seed=11)


@pytest.fixture
def calls(monkeypatch) -> list[object]:
    """The sources evaluate is called on by track."""
    seen: list[object] = []
    real = track_module.evaluate

    def counting(source, *args, **kwargs):
        seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(track_module, "evaluate", counting)
    return seen


def write_days(log: pl.DataFrame, folder: Path, days: list[int]) -> None:
    for day in days:
        part = log.filter(pl.col("date").dt.day() == day)
        target = folder / f"date={part['date'][0]}"
        target.mkdir(parents=True, exist_ok=True)
        part.drop("date").write_parquet(target / "0.parquet")


def test_only_new_partitions_are_evaluated_and_the_series_is_evaluates(log, tmp_path, calls):
    folder, store = tmp_path / "log", tmp_path / "store"
    write_days(log, folder, [1, 2, 3])
    first = rp.track(folder, METRICS, store=store)
    assert len(calls) == 3
    again = rp.track(folder, METRICS, store=store)
    assert len(calls) == 3 and again.equals(first)
    write_days(log, folder, [4])
    series = rp.track(folder, METRICS, store=store)
    assert len(calls) == 4 and Path(calls[-1][0]).parent.name == "date=2026-11-04"
    assert series["date"].dtype == pl.Date and series.height == 4 * 3
    for day in range(1, 5):
        want = rp.evaluate(log.filter(pl.col("date").dt.day() == day), METRICS, by="model", ci=0.95)
        got = series.filter(pl.col("date").dt.day() == day).drop("date")
        assert_frame_equal(got, want, check_exact=True)


def test_the_intervals_are_scipys_t_interval_of_the_stored_per_query_values(log, tmp_path):
    series = rp.track(log, METRICS, store=tmp_path / "store", ci=0.9)
    per = rp.evaluate(log.filter(pl.col("date").dt.day() == 2), METRICS, by="model", per_query=True)
    for model in ("v1", "v3"):
        values = per.filter(pl.col("model") == model)["mrr"].to_numpy()
        low, high = sp.t.interval(0.9, len(values) - 1, loc=values.mean(), scale=sp.sem(values))
        row = series.filter((pl.col("model") == model) & (pl.col("date").dt.day() == 2)).row(0, named=True)
        assert (row["mrr_low"], row["mrr_high"]) == pytest.approx((low, high), rel=1e-12)


def test_a_changed_partition_is_evaluated_again(log, tmp_path, calls):
    folder, store = tmp_path / "log", tmp_path / "store"
    write_days(log, folder, [1, 2])
    before = rp.track(folder, METRICS, store=store, ci=None)
    changed = log.filter(pl.col("date").dt.day() == 2).with_columns(
        pl.when(pl.col("position") == 1).then(0).otherwise(pl.col("relevance")).alias("relevance"))
    changed.drop("date").write_parquet(folder / "date=2026-11-02" / "0.parquet")
    os.utime(folder / "date=2026-11-02" / "0.parquet", ns=(1, 1))  # a different mtime, whatever the clock
    after = rp.track(folder, METRICS, store=store, ci=None)
    assert len(calls) == 3
    assert after.filter(pl.col("date").dt.day() == 1).equals(before.filter(pl.col("date").dt.day() == 1))
    want = rp.evaluate(changed, METRICS, by="model")
    assert_frame_equal(after.filter(pl.col("date").dt.day() == 2).drop("date"), want, check_exact=True)


def test_a_frame_is_fingerprinted_by_content(log, tmp_path, calls):
    store = tmp_path / "store"
    rp.track(log, METRICS, store=store)
    assert len(calls) == 6
    rp.track(log.sample(fraction=1.0, shuffle=True, seed=1), METRICS, store=store)  # the same rows, reordered
    assert len(calls) == 6
    edited = log.with_columns(pl.when((pl.col("date").dt.day() == 5) & (pl.col("position") == 2))
                              .then(3).otherwise(pl.col("relevance")).alias("relevance"))
    rp.track(edited, METRICS, store=store)
    assert len(calls) == 7


def test_other_metrics_or_judgments_are_refused_or_rebuilt(log, tmp_path, calls):
    store = tmp_path / "store"
    run = log.drop("relevance")
    qrels = log.filter(pl.col("model") == "v1").select("query", "item", "relevance")
    rp.track(run, ["ndcg@10"], qrels=qrels, store=store)
    with pytest.raises(RankPolarsError, match="made with different metrics.*rebuild=True"):
        rp.track(run, ["ndcg@5"], qrels=qrels, store=store)
    with pytest.raises(RankPolarsError, match="made with different judgments"):
        rp.track(run, ["ndcg@10"], qrels=qrels.head(100), store=store)
    with pytest.raises(RankPolarsError, match="grouping columns"):
        rp.track(run, ["ndcg@10"], qrels=qrels, store=store, by=["model", "country"])
    rebuilt = rp.track(run, ["ndcg@5"], qrels=qrels, store=store, rebuild=True)
    assert len(calls) == 12 and "ndcg@5" in rebuilt.columns
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["settings"]["metrics"] == {"ndcg@5": "ndcg@5"} and manifest["library"]
    assert manifest["settings"]["judgments"].startswith("content:")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(RankPolarsError, match="not empty and has no manifest.json"):
        rp.track(run, ["ndcg@10"], qrels=qrels, store=tmp_path / "other")


def test_a_store_is_one_judges_labels_and_one_label_set(log, tmp_path, calls):
    """The same judgments file under another judge (or other evaluate options) is another series:
    the store made under one is refused under the other, not served as if it were; by_judge and
    bounds would stack the judges' values in one version's rows, and are refused."""
    store = tmp_path / "store"
    run = log.drop("relevance")
    people = log.filter(pl.col("model") == "v1").select("query", "item", "relevance")
    judgments = pl.concat([people.with_columns(judge=pl.lit("people")),
                           people.with_columns(pl.col("relevance").reverse().over("query"), judge=pl.lit("llm"))])
    mine = rp.track(run, ["ndcg@10"], qrels=judgments, judge="people", store=store, ci=None)
    assert_frame_equal(mine, rp.track(run, ["ndcg@10"], qrels=people, store=tmp_path / "alone", ci=None))
    with pytest.raises(RankPolarsError, match=r"different evaluate options .*'judge': 'people'"):
        rp.track(run, ["ndcg@10"], qrels=judgments, judge="llm", store=store)
    rp.track(run, ["ndcg@10"], qrels=judgments, judge="people", store=store, streaming=False, checks="fast")  # the same values
    rp.track(run, ["ndcg@10"], qrels=people, store=tmp_path / "alone", labels="qrels", judge=None)  # evaluate's defaults
    theirs = rp.track(run, ["ndcg@10"], qrels=judgments, judge="llm", store=store, rebuild=True, ci=None)
    want = rp.evaluate(run.filter(pl.col("date") == pl.col("date").min()), ["ndcg@10"], qrels=judgments, judge="llm",
                       by="model")
    assert theirs.filter(pl.col("date") == pl.col("date").min()).drop("date").equals(want)
    for option in ("by_judge", "bounds"):
        with pytest.raises(RankPolarsError, match=f"track: {option}=True is evaluate's .* one call per judge"):
            rp.track(run, ["ndcg@10"], qrels=judgments, store=tmp_path / option, **{option: True})


def test_windows_aggregate_the_stored_per_query_values(log, tmp_path, calls):
    store = tmp_path / "store"
    rp.track(log, METRICS, store=store)
    weekly = rp.track(log, METRICS, store=store, window="3d")
    resampled = rp.track(log, METRICS, store=store, window="3d", ci_method="bootstrap")
    assert len(calls) == 6  # no partition read again for the windows
    starts = weekly["date"].unique().sort().to_list()
    assert len(starts) >= 2
    for start in starts:
        days = log.filter((pl.col("date") >= start) & (pl.col("date") < start + np.timedelta64(3, "D")))
        want = rp.evaluate(days, METRICS, by="model", ci=0.95)
        assert_frame_equal(weekly.filter(pl.col("date") == start).drop("date"), want, check_exact=True)
        # the bootstrap's resamples are seeded per group: close to the t interval, not its bits
        boot = resampled.filter(pl.col("date") == start)
        width = (want["mrr_high"] - want["mrr_low"]).to_numpy()
        assert np.abs(boot["mrr_low"].to_numpy() - want["mrr_low"].to_numpy()).max() < 0.2 * width.min()
    assert weekly["queries"].sum() == 6 * 80 * 3


def test_both_engines_give_the_same_series(log, tmp_path):
    polars = rp.track(log, METRICS, store=tmp_path / "a")
    duck = rp.track(log, METRICS, store=tmp_path / "b", engine="duckdb")
    assert_frame_equal(polars, duck, check_exact=False, rel_tol=1e-12)


def test_the_time_role_of_the_schema_names_the_partition_column(log, tmp_path):
    renamed = log.rename({"date": "day"})
    series = rp.track(renamed, ["ndcg@10"], store=tmp_path / "s", schema=rp.Schema(time="day"), ci=None)
    assert series.columns[:2] == ["day", "model"] and series.height == 18
    with pytest.raises(RankPolarsError, match="no column 'date'.*Schema\\(time="):
        rp.track(renamed, ["ndcg@10"], store=tmp_path / "t")
    assert rp.Schema().column("time") == "date"


def test_the_command_tracks_and_writes_the_chart(log, tmp_path):
    folder = tmp_path / "log"
    write_days(log, folder, [1, 2, 3])
    done = CliRunner().invoke(main, ["track", str(folder), "--store", str(tmp_path / "store"), "-m", "ndcg@10",
                                     "-m", "mrr", "--by", "model", "--time", "date", "--format", "csv",
                                     "--report", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    table = pl.read_csv(done.stdout.encode())
    assert table.height == 9 and {"ndcg@10_low", "mrr_high"} <= set(table.columns)
    page = (tmp_path / "r.html").read_text()
    assert page.count("<svg") == 2 and page.count('class="band"') == 2 * 3 and "date=" not in page


def test_the_command_exits_1_on_bad_input_2_on_a_wrong_command_line(log, tmp_path):
    folder = tmp_path / "log"
    write_days(log, folder, [1])
    base = ["track", str(folder), "--store", str(tmp_path / "store"), "-m", "ndcg@10"]
    runner = CliRunner()
    for args in (["--by", "modle"], ["-m", "ndcg@x"], ["--qrels", str(tmp_path / "none.parquet")]):
        bad = runner.invoke(main, [*base, *args])
        assert bad.exit_code == 1, bad.output  # FAILED, as bad input in every command
        assert bad.stdout == "" and bad.stderr.startswith("error: ")
    assert not (tmp_path / "store" / "summary").exists()
    misspelt = runner.invoke(main, [*base, "--time", "data"])  # the folders are date=: not one partition named 0
    assert misspelt.exit_code == 1 and "in date= folders" in misspelt.stderr and "did you mean 'date'" in misspelt.stderr
    usage = runner.invoke(main, [*base, "--engine", "spark"])
    assert usage.exit_code == 2 and "polars or duckdb" in usage.stderr
    assert runner.invoke(main, [*base, "--window", "1w", "--ci-method", "exact"]).exit_code == 2


def test_the_monitoring_page_runs(tmp_path, monkeypatch, capsys):
    """Every python block of docs/monitoring.md, in order, in one namespace (as markdown-exec's session)."""
    page = (ROOT / "docs" / "monitoring.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python[^\n]*\n(.*?)^```", page, flags=re.S | re.M)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__monitoring__"}
    for code in blocks:
        exec(compile(code, "<docs/monitoring.md>", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out
    # the story the page tells: the days before the regression pass, the days from it fail, in fr
    verdicts = namespace["verdicts"]
    assert all(v == "pass" for d, v in verdicts.items() if d.day < 21), verdicts
    assert all(v == "fail" for d, v in verdicts.items() if d.day >= 21), verdicts
    assert "loses in country=fr" in out
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_the_command_reads_the_time_role_from_the_project_file(log, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rank-polars.toml").write_text('[columns]\ntime = "day"\n')
    log.rename({"date": "day"}).write_parquet(tmp_path / "log", partition_by="day")
    done = CliRunner().invoke(main, ["track", "log", "--store", "store", "-m", "ndcg@10", "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert pl.read_csv(done.stdout.encode()).columns[:2] == ["day", "model"]
    assert sorted(p.name for p in (tmp_path / "store" / "values").iterdir())[0] == "day=2026-11-01"


def test_the_report_shows_the_series_with_its_bands(log, tmp_path):
    from rank_polars.report_segments import report_html

    series = rp.track(log, METRICS, store=tmp_path / "store")
    page = report_html(log, METRICS, baseline="v1", series=series)
    section = page[page.index('<section id="series">'):page.index("<footer>")]
    assert section.count("<svg") == 2 and section.count('class="band"') == 2 * 3
    assert section.count('<path class="series"') == 2 * 3


def test_a_single_file_is_partitioned_by_its_time_column(log, tmp_path, calls):
    log.write_parquet(tmp_path / "all.parquet")
    series = rp.track(tmp_path / "all.parquet", ["ndcg@10"], store=tmp_path / "store", ci=None)
    assert len(calls) == 6 and series.height == 18
    want = rp.evaluate(log.filter(pl.col("date").dt.day() == 3), ["ndcg@10"], by="model")
    assert_frame_equal(series.filter(pl.col("date").dt.day() == 3).drop("date"), want, check_exact=True)
    rp.track(tmp_path / "all.parquet", ["ndcg@10"], store=tmp_path / "store")
    assert len(calls) == 6
    (tmp_path / "more").mkdir()
    log.filter(pl.col("date").dt.day() == 3).write_parquet(tmp_path / "more" / "again.parquet")
    with pytest.raises(RankPolarsError, match="date=2026-11-03 is in more than one place"):
        rp.track([tmp_path / "all.parquet", tmp_path / "more" / "again.parquet"], ["ndcg@10"], store=tmp_path / "store")


@pytest.mark.parametrize("scale", [1.0, 1e20])  # 1e20: past the fixed point (beyond Int128), added in order
def test_a_partitions_means_have_the_same_bits_in_any_row_order(scale):
    import math

    rng = np.random.default_rng(3)
    per = pl.DataFrame({"model": rng.choice(["v1", "v2"], 4000), "query": np.arange(4000),
                        "ndcg@10": rng.random(4000) * scale})
    outputs = rp.measures.parse_all(["ndcg@10"])
    first = track_module._summary(per, outputs, ["model"]).sort("model")
    for seed in range(3):
        shuffled = per.sample(fraction=1.0, shuffle=True, seed=seed)
        assert track_module._summary(shuffled, outputs, ["model"]).sort("model").equals(first)
    for row in first.iter_rows(named=True):
        values = per.filter(pl.col("model") == row["model"])["ndcg@10"].to_numpy()
        assert row["ndcg@10"] == pytest.approx(math.fsum(values) / len(values), rel=1e-15)
