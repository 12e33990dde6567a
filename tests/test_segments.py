"""``compare(..., segments=[...])`` and ``rank-polars compare --segment``: the difference per segment
value against SciPy's paired t test and statsmodels' corrections, the minimum support, the order
(where the candidate loses first), judged queries no version showed, and both engines."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from scipy import stats as sp
from statsmodels.stats.multitest import multipletests

import rank_polars as rp
from rank_polars.cli import main
from rank_polars.errors import DataError, RankPolarsError

METRICS = ["ndcg@10", "mrr"]


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return rp.datasets.monitoring_log(days=1, queries_per_day=500, seed=7, regression=("v3", "country", "fr", 1))


def reference_rows(log: pl.DataFrame, segments: list[str], baseline: str = "v1") -> dict[tuple, dict]:
    """SciPy's paired t test on each segment value's paired per-query values."""
    per = rp.evaluate(log, METRICS, by="model", per_query=True)
    seg = log.select("query", *segments).unique()
    out = {}
    for metric in METRICS:
        wide = per.pivot(on="model", index="query", values=metric).join(seg, on="query")
        for version in ("v2", "v3"):
            groups = [("(all)", "(all)", wide)]
            groups += [(s, v, part) for s in segments for (v,), part in wide.partition_by(s, as_dict=True).items()]
            for s, v, part in groups:
                x, y = part[baseline].to_numpy(), part[version].to_numpy()
                test = sp.ttest_rel(y, x)
                low, high = test.confidence_interval(0.95)
                out[(metric, version, s, v)] = {"n": len(x), "diff": y.mean() - x.mean(), "p": test.pvalue,
                                                "low": low, "high": high}
    return out


@pytest.mark.parametrize("correction,method", [("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")])
def test_every_segment_value_is_scipys_paired_t_test_corrected_as_statsmodels(log, correction, method):
    segments = ["country", "query_type"]
    out = rp.compare(log, METRICS, baseline="v1", segments=segments, correction=correction, min_queries=2)
    ref = reference_rows(log, segments)
    assert out.height == len(ref) == 2 * 2 * (1 + 4 + 2)
    for r in out.iter_rows(named=True):
        want = ref[(r["metric"], r["version"], r["segment"], r["value"])]
        assert r["n_queries"] == want["n"]
        assert r["diff"] == pytest.approx(want["diff"], abs=1e-12)
        assert r["p_value"] == pytest.approx(want["p"], rel=1e-9, abs=1e-300)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((want["low"], want["high"]), rel=1e-9)
    adjusted = multipletests(out["p_value"].to_numpy(), method=method)[1]
    assert out["p_adjusted"].to_numpy() == pytest.approx(adjusted, rel=1e-9, abs=1e-300)
    assert out["significant"].to_list() == (adjusted < 0.05).tolist()


def test_rows_come_per_metric_with_the_largest_loss_first(log):
    out = rp.compare(log, METRICS, baseline="v1", segments=["country"])
    assert out["metric"].to_list() == sorted(out["metric"].to_list(), key=METRICS.index)
    for metric in METRICS:
        loss = out.filter(pl.col("metric") == metric)["loss"].to_list()
        assert loss == sorted(loss, reverse=True)
    worst = out.row(0, named=True)
    assert (worst["version"], worst["segment"], worst["value"], worst["significant"]) == ("v3", "country", "fr", True)
    assert worst["loss"] == pytest.approx(-worst["diff"])
    from rank_polars.monitor.segments import where_it_loses

    text = where_it_loses(out)
    assert "ndcg@10, v3 against v1: loses in country=fr" in text
    assert "ndcg@10, v2 against v1: no segment value loses significantly" in text


def test_segment_values_below_min_queries_are_shown_not_tested(log):
    small = log.filter(pl.col("query").str.ends_with("7") | (pl.col("country") != "jp"))
    out = rp.compare(small, ["ndcg@10"], baseline="v1", segments=["country"], min_queries=30)
    jp = out.filter(pl.col("value") == "jp")
    assert (jp["n_queries"] < 30).all() and jp["p_value"].null_count() == jp.height
    assert jp["note"].to_list() == ["fewer queries than min_queries"] * jp.height
    tested = out.filter(pl.col("p_value").is_not_null())
    assert tested["p_adjusted"].to_numpy() == pytest.approx(multipletests(tested["p_value"].to_numpy(), method="holm")[1])


def test_judged_queries_no_version_showed_count_zero_under_a_null_segment(log):
    qrels = log.filter(pl.col("model") == "v1").select("query", "item", "relevance")
    extra = pl.DataFrame({"query": ["never-shown"], "item": ["i0"], "relevance": [2]}).cast(qrels.schema)
    run = log.drop("relevance")
    out = rp.compare(run, ["ndcg@10"], qrels=pl.concat([qrels, extra]), baseline="v1", segments=["country"],
                     min_queries=2)
    overall = out.filter((pl.col("segment") == "(all)") & (pl.col("version") == "v2")).row(0, named=True)
    assert overall["n_queries"] == 501
    unknown = out.filter(pl.col("value").is_null())
    assert unknown["n_queries"].to_list() == [1, 1]  # the one query, for v2 and v3, shown not tested
    assert unknown["p_value"].null_count() == 2


def test_both_engines_give_the_same_rows(log):
    from polars.testing import assert_frame_equal

    polars = rp.compare(log, METRICS, baseline="v1", segments=["query_type"])
    duck = rp.compare(log, METRICS, baseline="v1", segments=["query_type"], engine="duckdb")
    # the engines' per-query values may differ in the last bit (their sums' order)
    assert_frame_equal(polars, duck, check_exact=False, rel_tol=1e-9, abs_tol=1e-15)
    assert polars.equals(rp.compare(log, METRICS, baseline="v1", segments=["query_type"]))  # the same bits again


def test_bad_segments_are_refused(log):
    with pytest.raises(RankPolarsError, match="no column 'contry'.*did you mean 'country'"):
        rp.compare(log, ["ndcg@10"], baseline="v1", segments=["contry"])
    with pytest.raises(RankPolarsError, match="'model' is the version column"):
        rp.compare(log, ["ndcg@10"], baseline="v1", segments=["model"])
    with pytest.raises(RankPolarsError, match="min_queries"):
        rp.compare(log, ["ndcg@10"], baseline="v1", segments=["country"], min_queries=1)
    with pytest.raises(RankPolarsError, match="paired t test"):
        rp.compare(log, ["ndcg@10"], baseline="v1", segments=["country"], test="wilcoxon")
    moving = log.with_columns(pl.when(pl.col("model") == "v2").then(pl.lit("xx")).otherwise("country").alias("country"))
    with pytest.raises(DataError, match="segment 'country': 500 queries have more than one value, e.g. 'd01-q0001'"):
        rp.compare(moving, ["ndcg@10"], baseline="v1", segments=["country"])
    # without a position column every row is read: a value that varies within a ranking is refused too
    inside = log.with_columns(pl.when(pl.col("position") == 2).then(pl.lit("xx")).otherwise("country").alias("country"))
    by_score = inside.with_columns((-pl.col("position")).alias("score")).drop("position")
    with pytest.raises(DataError, match="segment 'country': 500 queries have more than one value"):
        rp.compare(by_score, ["ndcg@10"], baseline="v1", segments=["country"])


def test_a_ranking_without_a_first_row_still_has_its_segment(log):
    # a query whose rankings start at position 2 is read from all of its rows, not left without a value
    shifted = log.with_columns(pl.when(pl.col("query") == "d01-q0007").then(pl.col("position") + 1)
                               .otherwise("position").alias("position"))
    out = rp.compare(shifted, ["ndcg@10"], baseline="v1", segments=["country"], min_queries=2)
    assert out["value"].null_count() == 0
    assert out.filter(pl.col("segment") == "country")["n_queries"].sum() == 2 * 500


def test_the_command_prints_the_segments_and_where_the_candidate_loses(log, tmp_path):
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    done = CliRunner().invoke(main, ["compare", str(path), "-m", "ndcg@10", "--baseline", "v1", "--segment", "country",
                                     "--format", "csv", "-o", str(tmp_path / "seg.csv")])
    assert done.exit_code == 0, done.output
    table = pl.read_csv(tmp_path / "seg.csv")
    assert table.height == 2 * 5 and table.row(0, named=True)["value"] == "fr"
    shown = CliRunner().invoke(main, ["compare", str(path), "-m", "ndcg@10", "--baseline", "v1", "--segment", "country",
                                      "--report", str(tmp_path / "r.html")])
    assert shown.exit_code == 0, shown.output
    assert "ndcg@10, v3 against v1: loses in country=fr" in shown.stdout
    page = (tmp_path / "r.html").read_text()
    assert 'id="segments"' in page and page.count('<tr class="loss">') >= 1


def test_a_lower_is_better_metric_loses_where_it_rises(log):
    out = rp.compare(log, ["fallout@3"], baseline="v1", segments=["country"])
    fr = out.filter((pl.col("version") == "v3") & (pl.col("value") == "fr")).row(0, named=True)
    assert fr["higher_is_better"] is False and fr["diff"] > 0  # fall-out rose where v3 broke
    assert fr["loss"] == pytest.approx(fr["diff"]) and fr["significant"]
    assert out.row(0, named=True)["value"] == "fr"  # the worst loss first


@pytest.mark.parametrize("scale", [1.0, 1e13])  # 1e13: past the fixed point's bound, ordered sums
def test_the_summary_has_the_same_bits_in_any_row_order_and_is_numpys(scale):
    import math

    from rank_polars.monitor.segments import summary

    rng = np.random.default_rng(5)
    n = 3000
    rows = pl.DataFrame({"metric": "m", "baseline": "a", "version": "b", "country": rng.choice(["fr", "de", "us"], n),
                         "x": rng.random(n) * scale, "y": rng.random(n) * scale})
    d = pl.col("y") - pl.col("x")
    first = summary(rows.lazy(), ["country"], d).sort("segment", "value")
    for seed in range(3):
        again = summary(rows.sample(fraction=1.0, shuffle=True, seed=seed).lazy(), ["country"], d).sort("segment", "value")
        assert again.equals(first)
    for row in first.iter_rows(named=True):
        part = rows if row["segment"] == "(all)" else rows.filter(pl.col("country") == row["value"])
        x, y = part["x"].to_numpy(), part["y"].to_numpy()
        assert row["n"] == len(x)
        assert row["mean_x"] == pytest.approx(math.fsum(x) / len(x), rel=1e-15)
        assert row["mean_d"] == pytest.approx(math.fsum(y - x) / len(x), rel=1e-13, abs=1e-15 * scale)
        assert row["sd_d"] == pytest.approx(np.std(y - x, ddof=1), rel=1e-13)
