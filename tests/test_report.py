"""The HTML report, rendered in a real headless Chromium.

Chromium is required: the tests install Debian's ``chromium`` when it is missing (as root, as
``.ci/run`` does), and fail with the command to run where they cannot; never a skip, so that a
green run means the page was really rendered.
"""

from __future__ import annotations

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
