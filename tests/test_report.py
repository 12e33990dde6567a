"""The HTML report, rendered in a real headless Chromium.

Chromium is required: the tests install Debian's ``chromium`` when it is missing (as root, as
``.ci/run`` does), and fail with the command to run where they cannot; never a skip, so that a
green run means the page was really rendered.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from rank_polars.cli import main
from rank_polars.datasets import sample_log
from tests.system_deps import ensure
from rank_polars.report import histogram, line_chart, render, report_data, wtl_bars

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars",
]


def chromium() -> str:
    for name in ("chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    # installed from Debian's packages when missing, as Java is for PySpark (never a skip)
    try:
        return ensure("chromium")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        pytest.fail(f"headless Chromium is needed: {exc} (run `apt-get install -y chromium` as root)")


def run_chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    cmd = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame]:
    """``rank-polars compare --report`` on the sample log (a hive-partitioned folder)."""
    tmp = tmp_path_factory.mktemp("report")
    log = tmp / "log"
    for (model,), part in sample_log().partition_by("model", as_dict=True).items():
        (log / f"model={model}").mkdir(parents=True)
        part.drop("model").write_parquet(log / f"model={model}" / "0.parquet")
    page = tmp / "report.html"
    table = tmp / "comparison.csv"
    result = CliRunner().invoke(
        main, ["compare", str(log), "-m", "ndcg@10", "-m", "mrr", "-m", "map", "--by", "model", "--baseline", "bot-v1",
               "--report", str(page), "--format", "csv", "-o", str(table)],
    )
    assert result.exit_code == 0, result.output
    return page, pl.read_csv(table)


def test_page_is_self_contained(report: tuple[Path, pl.DataFrame]) -> None:
    text = report[0].read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert "<link" not in text.lower()
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls


def test_rendered_dom_has_table_and_plots(tmp_path: Path, report: tuple[Path, pl.DataFrame]) -> None:
    page, comparison = report
    dom = run_chromium(tmp_path, page, "--dump-dom").stdout
    assert '<table id="comparison">' in dom
    # the table shows the comparison's numbers
    for row in comparison.iter_rows(named=True):
        assert f"{row['mean_baseline']:.4f}" in dom
        assert f"{row['mean_version']:.4f}" in dom
        assert f"{row['diff']:+.4f}" in dom
        assert f"{row['wins']} / {row['ties']} / {row['losses']}" in dom
    # metric@k curves: one per metric, a <path> per version
    for i in range(3):
        svg = re.search(rf'<svg id="curve-{i}".*?</svg>', dom, re.S)
        assert svg, f"curve-{i} missing"
        assert len(re.findall(r'<path class="series"', svg.group(0))) == 2
        assert len(re.findall(r"<circle", svg.group(0))) == 2 * 20
    # histograms of per-query differences: bars whose heights add up to the queries
    for i in range(3):
        svg = re.search(rf'<svg id="diff-{i}".*?</svg>', dom, re.S)
        assert svg, f"diff-{i} missing"
        counts = [int(n) for n in re.findall(r": (\d+) queries</title>", svg.group(0))]
        assert sum(counts) == comparison["n_queries"][i]
    wtl = re.search(r'<svg id="wtl".*?</svg>', dom, re.S)
    assert wtl and len(re.findall(r'<rect class="bar (wins|ties|losses)"', wtl.group(0))) == 3 * 3
    assert "bot-v2 is better than bot-v1 on ndcg@10" in dom


def test_screenshot_shows_the_plots(tmp_path: Path, report: tuple[Path, pl.DataFrame]) -> None:
    """The SVGs are really drawn: the series and bar colours appear in the pixels."""
    from matplotlib import image
    shot = tmp_path / "report.png"
    run_chromium(tmp_path, report[0], f"--screenshot={shot}", "--window-size=1200,2600")
    pixels = (image.imread(shot)[:, :, :3] * 255).round().astype(int)
    assert pixels.shape[0] >= 2000

    def share(hex_colour: str) -> float:
        rgb = [int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]
        return float((abs(pixels - rgb).sum(axis=2) <= 12).mean())

    for colour in ("#4C72B0", "#DD8452", "#55A868", "#C44E52"):  # two series, wins, losses
        assert share(colour) > 1e-4, colour
    assert share("#FFFFFF") < 0.97  # not a blank page


def test_svg_helpers_handle_edge_cases() -> None:
    empty = histogram("h", "no queries", [], "diff")
    assert empty.startswith('<svg id="h"') and "<rect" in empty
    flat = line_chart("c", "flat", {"a": [(1, 0.5), (2, 0.5)], "b": [(1, float("nan")), (2, 0.5)]}, "k", "v")
    assert flat.count("<path") == 2 and "nan" not in flat.split("</title>")[-1]
    bars = wtl_bars("w", [{"metric": "m", "version": "b", "baseline": "a", "wins": 0, "ties": 0, "losses": 0}])
    assert bars.count('<rect class="bar') == 3


def test_render_without_cutoff_metrics() -> None:
    """Metrics without @k (R-precision) have no curve; the page says so instead of failing."""
    log = sample_log()
    comparison = pl.DataFrame({
        "metric": ["rprec"], "baseline": ["bot-v1"], "version": ["bot-v2"], "n_queries": [200],
        "mean_baseline": [0.5], "mean_version": [0.6], "diff": [0.1], "rel_diff": [0.2], "ci_low": [0.05],
        "ci_high": [0.15], "p_value": [0.001], "p_adjusted": [0.001], "significant": [True], "effect_size": [0.3],
        "wins": [80], "ties": [90], "losses": [30], "test": ["paired_t"],
    })
    data = report_data(log, ["rprec"], comparison=comparison, by="model")
    page = render(comparison, data, title="rprec only")
    assert "No metric here takes a cutoff" in page and 'id="diff-0"' in page


# ----------------------------------------------------------------------------------------
# a sweep of five versions: every pair (Tukey), the pair matrix and the means' intervals


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame, pl.DataFrame]:
    """``rank-polars compare --pairs all --test tukey --report`` on five versions."""
    from rank_polars.datasets import chatbot_log

    tmp = tmp_path_factory.mktemp("sweep")
    log = chatbot_log(n_questions=80, versions=[f"bot-v{i}" for i in range(1, 6)], seed=3)
    log.write_parquet(tmp / "log.parquet")
    page, table = tmp / "sweep.html", tmp / "pairs.csv"
    result = CliRunner().invoke(
        main, ["compare", str(tmp / "log.parquet"), "-m", "ndcg@10", "-m", "mrr", "--by", "model", "--pairs", "all",
               "--test", "tukey", "--confidence", "0.9", "--report", str(page), "--format", "csv", "-o", str(table)],
    )
    assert result.exit_code == 0, result.output
    return page, pl.read_csv(table), log


@pytest.fixture(scope="module")
def sweep_dom(tmp_path_factory: pytest.TempPathFactory, sweep) -> str:
    """The sweep's page as Chromium rendered it (one browser start for the DOM tests)."""
    return run_chromium(tmp_path_factory.mktemp("sweep-dom"), sweep[0], "--dump-dom").stdout


def test_pair_matrix_is_rendered_with_the_verdict_colours(sweep, sweep_dom: str) -> None:
    _, comparison, _ = sweep
    dom = sweep_dom
    for i, metric in enumerate(["ndcg@10", "mrr"]):
        table = re.search(rf'<table class="pairs" id="pairs-{i}">.*?</table>', dom, re.S)
        assert table, f"pairs-{i} missing"
        cells = re.findall(r'<td class="pair (\w+)" data-row="([^"]+)" data-col="([^"]+)"[^>]*title="([^"]+)">([^<]*)</td>',
                           table.group(0))
        assert len(cells) == 5 * 4  # every ordered pair, the diagonal empty
        rows = comparison.filter(pl.col("metric") == metric)
        for kind, row, col, title, text in cells:
            title = html.unescape(title)
            pair = rows.filter(((pl.col("version") == row) & (pl.col("baseline") == col))
                               | ((pl.col("version") == col) & (pl.col("baseline") == row))).row(0, named=True)
            sign = 1 if pair["version"] == row else -1
            assert text == f"{sign * pair['diff']:+.4f}"
            # colour by verdict: significant and the row higher -> better (ndcg, mrr: higher is better)
            expected = ("better" if sign * pair["diff"] > 0 else "worse") if pair["significant"] else "same"
            assert kind == expected, (row, col)
            low, high = sorted((sign * pair["ci_low"], sign * pair["ci_high"]))
            assert f"[{low:+.4f}, {high:+.4f}]" in title
            p = pair["p_adjusted"]
            assert ("p adj. <0.0001" if p < 1e-4 else f"p adj. {p:.4f}") in title


def test_means_are_drawn_with_scipys_t_interval(sweep, sweep_dom: str) -> None:
    import scipy.stats as ss

    import rank_polars as rp

    _, _, log = sweep
    dom = sweep_dom
    per = rp.evaluate(log, ["ndcg@10"], by="model", per_query=True)
    svg = re.search(r'<svg id="means-0".*?</svg>', dom, re.S)
    assert svg and "90% interval" in svg.group(0)
    lines = re.findall(r'<line class="ci" data-version="([^"]+)" x1="([\d.]+)" x2="([\d.]+)"[^>]*><title>([^<]+)</title>',
                       svg.group(0))
    assert [v for v, *_ in lines] == [f"bot-v{i}" for i in range(1, 6)]
    for version, x1, x2, title in lines:
        x = per.filter(pl.col("model") == version)["ndcg@10"].to_numpy()
        low, high = ss.t.interval(0.9, x.size - 1, loc=x.mean(), scale=ss.sem(x))
        assert title == f"{version}: {x.mean():.4f} [{low:.4f}, {high:.4f}]"
        assert float(x1) < float(x2)


def test_screenshot_of_the_pair_matrix_shows_its_colours(tmp_path: Path, sweep) -> None:
    """The matrix alone, screenshotted: green and red cells as many as the significant pairs
    (each one twice, once each way), grey for the others."""
    from matplotlib import image

    from rank_polars.report import CSS, pair_matrix

    _, comparison, _ = sweep
    versions = [f"bot-v{i}" for i in range(1, 6)]
    alone = tmp_path / "matrix.html"
    alone.write_text(f"<html><head><style>{CSS}</style></head><body>"
                     f"{pair_matrix('m', comparison, 'ndcg@10', versions)}</body></html>", encoding="utf-8")
    shot = tmp_path / "matrix.png"
    run_chromium(tmp_path, alone, f"--screenshot={shot}", "--window-size=700,400")
    pixels = (image.imread(shot)[:, :, :3] * 255).round().astype(int)

    def area(hex_colour: str) -> int:
        rgb = [int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]
        return int((abs(pixels - rgb).sum(axis=2) <= 6).sum())

    significant = int(comparison.filter(pl.col("metric") == "ndcg@10")["significant"].sum())
    green, red, grey = area("#55A868"), area("#C44E52"), area("#B8B8B8")
    assert significant > 0 and green > 0 and abs(green - red) <= 0.1 * green
    # cells are the same size: the coloured areas split as the pairs do
    assert green / (green + grey / 2) == pytest.approx(significant / 10, abs=0.08)  # grey: both ways


def test_pair_matrix_follows_the_metric_direction() -> None:
    """abandonment-like: the version whose value fell is the better one (green in its row)."""
    from rank_polars.report import all_pairs, pair_matrix

    rows = [("a", "b", -0.2, True), ("a", "c", 0.01, False), ("b", "c", 0.21, True)]
    table = pl.DataFrame({
        "metric": ["abandonment@3"] * 3, "baseline": [r[0] for r in rows], "version": [r[1] for r in rows],
        "diff": [r[2] for r in rows], "ci_low": [r[2] - 0.05 for r in rows], "ci_high": [r[2] + 0.05 for r in rows],
        "p_value": [0.001, 0.7, 0.001], "p_adjusted": [0.002, 0.7, 0.002], "significant": [r[3] for r in rows],
        "higher_is_better": [False] * 3,
    })
    assert all_pairs(table, "abandonment@3") == ["a", "b", "c"]
    cells = dict(((row, col), kind) for kind, row, col in re.findall(
        r'<td class="pair (\w+)" data-row="(\w)" data-col="(\w)"', pair_matrix("m", table, "abandonment@3", ["a", "b", "c"])))
    assert cells[("b", "a")] == "better" and cells[("a", "b")] == "worse"  # b abandons less than a
    assert cells[("c", "b")] == "worse" and cells[("a", "c")] == "same"
