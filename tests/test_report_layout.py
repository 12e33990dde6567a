"""The HTML report of three or more versions: its header (which pairs, which judgments, which
columns) and its layout in a real headless Chromium (the page no wider than the window, the
metric@k tables and the curves' legends inside their charts' column).

The layout is measured by a probe script added to a copy of the page (the report itself has no
script): it writes the boxes Chromium laid out into the DOM, which ``--dump-dom`` returns.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from rank_polars import Schema
from rank_polars.cli import main
from rank_polars.datasets import chatbot_log, split_judgments
from rank_polars.report import pairs_compared, report_html, write_report
from tests.test_report import run_chromium

VERSIONS = ["bot-v1", "bot-v2", "bot-v3"]
METRICS = ["ndcg@10", "p@5", "mrr"]


def header(page: str, key: str) -> str:
    """The text of the header's line ``key`` (scope, judgments, columns), tags dropped."""
    found = re.search(rf'<dd id="{key}">(.*?)</dd>', page, re.S)
    assert found, f"no header line {key!r}"
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def table_pairs(page: str) -> set[tuple[str, str, str]]:
    """(metric, baseline, version) of each row of the comparison table."""
    table = re.search(r'<table id="comparison">.*?</table>', page, re.S).group(0)
    cells = re.findall(r'<td class="text" data-col="(metric|baseline|version)">([^<]*)</td>', table)
    values = [html.unescape(v) for _, v in cells]
    return {tuple(values[i : i + 3]) for i in range(0, len(values), 3)}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three versions, the columns named otherwise than the defaults: a log carrying its labels
    (``mark``), and the same log as a run without labels with judgments of their own (``grade``)."""
    tmp = tmp_path_factory.mktemp("three")
    log = chatbot_log(n_questions=60, versions=VERSIONS, seed=5).rename(
        {"query": "sid", "item": "vid", "position": "slot", "relevance": "mark"})
    log.write_parquet(tmp / "log.parquet")
    run, qrels = split_judgments(log, query="sid", item="vid", relevance="mark")
    run.write_parquet(tmp / "run.parquet")
    qrels.rename({"mark": "grade"}).write_parquet(tmp / "judged.parquet")
    return tmp


def cli_report(folder: Path, name: str, *args: str) -> str:
    page = folder / f"{name}.html"
    result = CliRunner().invoke(main, ["compare", *args, "-m", ",".join(METRICS), "--by", "model",
                                       "--query", "sid", "--item", "vid", "--position", "slot",
                                       "--report", str(page), "--force"])
    assert result.exit_code == 0, result.output
    return page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def every_pair(logs: Path) -> str:
    """``compare`` without ``--baseline``, judgments from their own file."""
    return cli_report(logs, "every-pair", str(logs / "run.parquet"), "--qrels", str(logs / "judged.parquet"),
                      "--qrels-relevance", "grade")


@pytest.fixture(scope="module")
def against_v2(logs: Path) -> str:
    """``compare --baseline bot-v2``, the labels carried by the log."""
    return cli_report(logs, "against-v2", str(logs / "log.parquet"), "--relevance", "mark", "--baseline", "bot-v2")


# -- 1. which pairs ---------------------------------------------------------------------------


def test_without_a_baseline_the_page_shows_every_pair(every_pair: str) -> None:
    page = every_pair
    assert header(page, "scope") == "every pair of the 3 versions (3 pairs)"
    pairs = {("bot-v1", "bot-v2"), ("bot-v1", "bot-v3"), ("bot-v2", "bot-v3")}
    assert table_pairs(page) == {(m, b, v) for m in METRICS for b, v in pairs}
    assert "Every pair of versions on the queries both were judged on" in page
    # a pair matrix, a histogram per pair and metric, a wins bar per pair and metric
    assert len(re.findall(r'<table class="pairs" id="pairs-\d+">', page)) == len(METRICS)
    assert len(re.findall(r'<svg id="diff-\d+"', page)) == 3 * len(METRICS)
    wtl = re.search(r'<svg id="wtl".*?</svg>', page, re.S).group(0)
    assert len(re.findall(r'<rect class="bar wins"', wtl)) == 3 * len(METRICS)
    assert "bot-v3 vs bot-v2" in wtl


def test_with_a_baseline_the_header_says_each_version_against_it(against_v2: str) -> None:
    page = against_v2
    scope = header(page, "scope")
    assert scope.startswith("each version against bot-v2 (bot-v1, bot-v3)"), scope
    assert "the other versions are not compared with each other" in scope
    assert table_pairs(page) == {(m, "bot-v2", v) for m in METRICS for v in ("bot-v1", "bot-v3")}
    assert "Each version against bot-v2 on the queries both were judged on" in page
    assert 'class="pairs"' not in page  # no matrix: bot-v1 and bot-v3 were not compared
    assert "Queries won, tied and lost against bot-v2" in page


def test_the_library_call_says_the_same() -> None:
    """``write_report`` runs compare itself: every pair without a baseline, else the baseline's."""
    log = chatbot_log(n_questions=30, versions=VERSIONS, seed=2)
    every = report_html(log, ["ndcg@10"], by="model")
    assert header(every, "scope") == "every pair of the 3 versions (3 pairs)"
    assert len(table_pairs(every)) == 3
    against = report_html(log, ["ndcg@10"], by="model", baseline="bot-v3")
    assert header(against, "scope").startswith("each version against bot-v3 (bot-v1, bot-v2);")
    assert table_pairs(against) == {("ndcg@10", "bot-v3", "bot-v1"), ("ndcg@10", "bot-v3", "bot-v2")}
    # two versions: one pair, no sentence about the others
    two = report_html(log.filter(pl.col("model") != "bot-v3"), ["ndcg@10"], by="model")
    assert header(two, "scope") == "each version against bot-v1 (bot-v2)"


def test_pairs_compared_names_a_hand_picked_table() -> None:
    table = pl.DataFrame({"metric": ["m"] * 2, "baseline": ["a", "b"], "version": ["b", "c"]})
    said = pairs_compared(table)
    assert said["kind"] == "some" and said["text"] == "2 pairs: b against a, c against b"


# -- 4. judgments and columns -----------------------------------------------------------------


def test_header_names_the_judgments_file_and_the_columns(every_pair: str) -> None:
    # the file's name as the command line read it, not a frame's repr
    assert header(every_pair, "judgments") == "judged.parquet (query sid, item vid, relevance grade)"
    assert header(every_pair, "columns") == "query sid, item vid; ranked by position slot"
    assert "LazyFrame" not in every_pair and "DataFrame" not in every_pair


def test_header_names_the_labels_the_log_carries(against_v2: str) -> None:
    assert header(against_v2, "judgments") == "labels carried by the log (its column mark)"
    assert header(against_v2, "columns") == "query sid, item vid; ranked by position slot; relevance mark"


@pytest.mark.parametrize("columns", [
    Schema(query="sid", item="vid", position="slot", judgments=Schema(relevance="grade")),
    {"query": "sid", "item": "vid", "position": "slot"},
], ids=["Schema", "dict"])
def test_header_from_python_with_a_schema_or_a_dict(logs: Path, columns) -> None:
    run, qrels = pl.read_parquet(logs / "run.parquet"), pl.read_parquet(logs / "judged.parquet")
    if isinstance(columns, dict):  # the flat keywords name one relevance column for both sides
        qrels = qrels.rename({"grade": "relevance"})
    page = report_html(run, ["ndcg@10"], qrels=qrels, by="model", columns=columns)
    judged = "grade" if isinstance(columns, Schema) else "relevance"
    assert header(page, "judgments") == f"a DataFrame of {qrels.height:,} rows (query sid, item vid, relevance {judged})"
    assert header(page, "columns") == "query sid, item vid; ranked by position slot"
    named = report_html(run, ["ndcg@10"], qrels=qrels, by="model", columns=columns, qrels_label="teachers' marks")
    assert header(named, "judgments").startswith("teachers' marks (query sid")
    assert "teachers&#x27; marks (" in named  # escaped once


def test_header_says_the_score_orders_the_lists(tmp_path: Path) -> None:
    log = chatbot_log(n_questions=30, versions=VERSIONS[:2], seed=4)
    by_score = log.drop("position")
    page = write_report(tmp_path / "score.html", by_score, ["ndcg@10"], by="model").read_text(encoding="utf-8")
    assert header(page, "columns") == "query query, item item; ranked by score score; relevance relevance"
    # order="score" with both columns there: the score, in the header and in the numbers
    forced = report_html(log, ["ndcg@10"], by="model", order="score")
    assert "ranked by score score" in header(forced, "columns")
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    from_path = report_html(str(path), ["ndcg@10"], by="model", qrels=None)
    assert "ranked by position position" in header(from_path, "columns")


def test_header_names_a_click_logs_click_column() -> None:
    from rank_polars.report import setup_rows

    log = pl.DataFrame({"query": ["a", "a"], "item": ["x", "y"], "position": [1, 2], "clicked": [1, 0]})
    rows = {key: html.unescape(re.sub(r"<[^>]+>", "", text))
            for key, _, text in setup_rows(log, ["ctr@10"], qrels=None, qrels_label=None, columns={"click": "clicked"})}
    assert rows["judgments"] == "clicks carried by the log (its column clicked)"
    assert rows["columns"] == "query query, item item; ranked by position position"


# -- 2. and 3. the layout in Chromium ---------------------------------------------------------

PROBE = """<script>
(() => {
  const de = document.documentElement, box = el => { const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const out = {scrollWidth: de.scrollWidth, innerWidth: window.innerWidth, figures: []};
  for (const fig of document.querySelectorAll('figure.chart')) {
    const scroller = fig.querySelector('div.atk'), table = scroller.querySelector('table');
    out.figures.push({
      figure: box(fig), svg: box(fig.querySelector('svg')), svgId: fig.querySelector('svg').id,
      legend: [...fig.querySelectorAll('ul.legend li')].map(li => ({...box(li), name: li.dataset.series})),
      table: {...box(scroller), scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth,
              rows: table.tBodies[0].rows.length, sticky: getComputedStyle(table.querySelector('th.k')).position},
    });
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def layout(tmp_path: Path, page: str, width: int) -> dict:
    """The page's boxes as Chromium lays it out in a window ``width`` px wide."""
    probed = tmp_path / f"probed-{width}.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = run_chromium(tmp_path, probed, "--dump-dom", f"--window-size={width},900").stdout
    found = re.findall(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found[-1]))


@pytest.fixture(scope="module")
def wide_page() -> str:
    """Six versions, one with a long name, and five metrics that take a cutoff."""
    versions = ["a-rather-long-version-name-2024-11", *(f"bot-v{i}" for i in range(1, 6))]
    log = chatbot_log(n_questions=40, versions=versions, seed=7)
    return report_html(log, ["ndcg@10", "p@5", "mrr", "map", "recall@10"], by="model", baseline="bot-v1")


def check_fits(found: dict, versions: int, metrics: int) -> None:
    assert found["scrollWidth"] <= found["innerWidth"], found["scrollWidth"]  # no sideways scrolling
    assert len(found["figures"]) == metrics
    for fig in found["figures"]:
        f, svg, table = fig["figure"], fig["svg"], fig["table"]
        assert f["right"] <= found["innerWidth"]
        # the metric@k table: k down the rows (20 of them), within its chart's column; its k stays put
        assert table["rows"] == 20 and table["sticky"] == "sticky"
        assert f["left"] - 0.5 <= table["left"] and table["right"] <= f["right"] + 0.5
        # the legend: every version, under the plot (not over its lines), inside the column
        assert len(fig["legend"]) == versions
        for item in fig["legend"]:
            assert item["top"] >= svg["bottom"] - 0.5, (fig["svgId"], item)
            assert f["left"] - 0.5 <= item["left"] and item["right"] <= f["right"] + 0.5, (fig["svgId"], item)


def test_three_versions_fit_a_1280_window(tmp_path: Path, every_pair: str) -> None:
    found = layout(tmp_path, every_pair, 1280)
    check_fits(found, 3, len(METRICS))
    for fig in found["figures"]:  # three short names: one line, and the table needs no scrolling
        assert len({round(item["top"]) for item in fig["legend"]}) == 1
        assert fig["table"]["scrollWidth"] <= fig["table"]["clientWidth"]


@pytest.mark.parametrize("width", [1280, 720])
def test_six_versions_and_a_long_name_fit(tmp_path: Path, wide_page: str, width: int) -> None:
    found = layout(tmp_path, wide_page, width)
    check_fits(found, 6, 5)
    for fig in found["figures"]:  # the legend wraps onto a second line rather than running off
        assert len({round(item["top"]) for item in fig["legend"]}) >= 2, fig["legend"]


def test_the_legend_is_outside_the_plot_in_the_curves_colours(every_pair: str) -> None:
    for i in range(len(METRICS)):
        svg = re.search(rf'<svg id="curve-{i}".*?</svg>', every_pair, re.S).group(0)
        assert 'class="legend"' not in svg  # nothing drawn over the lines
        lines = re.findall(r'<path class="series" data-series="([^"]+)" d="[^"]*" fill="none" stroke="(#\w+)"', svg)
        legend = re.search(rf'<ul class="legend" id="legend-{i}">(.*?)</ul>', every_pair, re.S).group(1)
        items = re.findall(r'<li data-series="([^"]+)"><span class="swatch" style="background:(#\w+)">', legend)
        assert items == lines and [name for name, _ in items] == VERSIONS


def test_the_page_stays_self_contained(every_pair: str, wide_page: str) -> None:
    for page in (every_pair, wide_page):
        assert "<script" not in page.lower() and "<link" not in page.lower()
        assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg"}
