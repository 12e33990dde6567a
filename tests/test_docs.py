"""The documentation site, the README's first screen and the "Coming from ..." snippets.

* The site builds with ``properdocs build --strict`` (every warning fails: broken links and anchors
  in the Markdown, griffe's docstring warnings, a metric whose generated example fails) and every
  ``href``/``src`` of the built HTML resolves to a file and, with a ``#fragment``, to an id in it.
  The build prints ProperDocs' three progress lines and nothing else: no upstream banner.
* The home page and a metric page are opened in headless Chromium: the rendered DOM has their
  headings and values, and a screenshot of each is not blank.
* Every ``python`` block of docs/coming-from.md runs; the variables a peer's block and the
  rank_polars block of one section both define must be equal (1e-9), and every
  ``print(f"{x:.4f}")  # value`` must print that value. The references are the peers themselves
  (trec_eval's expected output file, pytrec_eval, ir_measures, ranx, scikit-learn).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image

from rank_polars.measures import MEASURES
from tests.test_report import run_chromium

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TREC_TEST = ROOT / "tests" / "data" / "conformance" / "trec_eval" / "test"


# -- the build ----------------------------------------------------------------------------------
# what a clean build prints: ProperDocs' progress lines, nothing from upstream (no banner, no notice)
BUILD_LINES = ("Cleaning site directory", "Building documentation to directory", "Documentation built in")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # no NO_MKDOCS_2_WARNING / DISABLE_MKDOCS_2_WARNING: under ProperDocs no upstream notice is printed
    env = {k: v for k, v in os.environ.items() if k not in ("NO_MKDOCS_2_WARNING", "DISABLE_MKDOCS_2_WARNING")}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "properdocs", "build", "--strict", "-f", str(ROOT / "properdocs.yml"), "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300,
    )
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    printed = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    unexpected = [line for line in printed if not line.startswith("INFO    -  ") or not line[11:].startswith(BUILD_LINES)]
    assert not unexpected, "\n".join(unexpected[:40])
    assert elapsed < 90, f"the docs build took {elapsed:.0f} s"
    return out


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and not (tag == "link" and a.get("rel") in ("canonical",)):
                self.links.append(a[key])


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_every_internal_link_and_anchor_resolves(site: Path):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    parsed = {page: _parse(page) for page in pages}
    broken = []
    checked = 0
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue  # external: not fetched (no network in tests)
            base = site if parts.path.startswith("/") else page.parent  # 404.html links from the site root
            target = (base / unquote(parts.path).lstrip("/")).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {link}")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)} -> {link} (no such anchor)")
            checked += 1
    assert checked > 500
    assert not broken, "\n".join(broken[:30])


def test_every_registered_measure_has_a_page_with_its_formula_and_parameters(site: Path):
    index = (site / "metrics" / "index.html").read_text(encoding="utf-8")
    for cls in MEASURES:
        page = site / "metrics" / f"{cls.NAME}.html"
        assert page.is_file(), cls.NAME
        text = page.read_text(encoding="utf-8")
        formula = (cls.__doc__ or "").strip().splitlines()[0].replace("``", "")
        words = [w for w in re.findall(r"[A-Za-z]{3,}", formula)][:4]
        assert all(w in text for w in words), (cls.NAME, words)
        for param in cls.PARAMS:
            assert f"<code>{param}</code>" in text, (cls.NAME, param)
        assert f'href="{cls.NAME}.html"' in index, cls.NAME


# -- in a browser -------------------------------------------------------------------------------
def _rendered_text(dom: str) -> str:
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", text)


def _ink_share(png: Path) -> float:
    """Share of pixels that differ clearly from the page's background (its most common colour)."""
    image = Image.open(png).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24)
    assert colours is not None
    background = max(colours)[1]
    ink = sum(n for n, c in colours if sum(abs(a - b) for a, b in zip(c, background)) > 60)
    return ink / (image.width * image.height)


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("index.html", ["rank_polars", "Thirty seconds", "bot-v1", "bot-v2", "ndcg@10", "0.679566", "0.734268",
                        "Where to go next", "Coming from"]),
        ("metrics/ndcg.html", ["ndcg", "Parameters", "gain", "discount", "ideal", "ideal_cut", "Example",
                               "Over one ranked list", "SQL"]),
    ],
)
def test_pages_render_in_chromium(site: Path, tmp_path: Path, page: str, expected: list[str]):
    target = site / page
    text = _rendered_text(run_chromium(tmp_path, target, "--dump-dom").stdout)
    missing = [e for e in expected if e not in text]
    assert not missing, (missing, text[:2000])
    shot = tmp_path / "shot.png"
    run_chromium(tmp_path, target, f"--screenshot={shot}", "--window-size=1280,1600")
    assert shot.is_file()
    width, height = Image.open(shot).size
    assert (width, height) == (1280, 1600)
    ink = _ink_share(shot)
    assert 0.02 < ink < 0.6, f"{page}: {ink:.1%} of the screenshot is not background"
    keep = os.environ.get("RANK_POLARS_DOCS_SHOTS")
    if keep:  # to look at them: RANK_POLARS_DOCS_SHOTS=/some/dir python -m pytest tests/test_docs.py
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / (page.replace("/", "_") + ".png"))


def test_the_ndcg_page_shows_values_computed_at_build_time(site: Path):
    """The example's numbers are rank_polars' output at build time; here checked by hand.

    q1 = [a:2, b:0, c:1, d:unjudged], judgments of q1 also hold x:1 (not shown): DCG@3 = 2 + 1/2,
    IDCG@3 = 2 + 1/log2(3) + 1/2, so nDCG@3 = 2.5 / 3.1309 = 0.798485.
    q2 = [e:unjudged, f:0, g:3]: DCG@3 = 3/2, IDCG@3 = 3, nDCG@3 = 0.5.
    """
    text = _rendered_text((site / "metrics" / "ndcg.html").read_text(encoding="utf-8"))
    q1 = 2.5 / (2 + 1 / math.log2(3) + 0.5)
    assert f"{q1:.6f}" in text or f"{q1:.5f}" in text
    assert f"{(q1 + 0.5) / 2:.6f}" in text or f"{(q1 + 0.5) / 2:.5f}" in text


def test_the_comparing_page_shows_a_test_too_weak_for_its_data(site: Path):
    """Run at build time: 5 paired queries cannot make Wilcoxon significant (smallest p = 2/2^5 =
    0.0625 >= 0.05), so p is null, the note says why and a SmallSampleWarning names the row."""
    text = _rendered_text((site / "comparing.html").read_text(encoding="utf-8"))
    assert "n too small" in text and "null" in text
    assert "SmallSampleWarning: compare: the wilcoxon test was not run on 1 of 1 rows" in text
    assert f"the smallest p it could give is {2 / 2**5:.4g}" in text and "alpha 0.05" in text
    assert "Traceback" not in text


# -- "Coming from ..." --------------------------------------------------------------------------
def _sections(markdown: str) -> dict[str, list[str]]:
    """``## heading`` -> the ``python`` blocks under it (indented blocks inside tabs included)."""
    sections: dict[str, list[str]] = {}
    for part in re.split(r"^## ", markdown, flags=re.M)[1:]:
        title = part.splitlines()[0].strip()
        blocks = re.findall(r"^( *)```python\n(.*?)^\1```", part, flags=re.S | re.M)
        sections[title] = [re.sub(rf"^{indent}", "", body, flags=re.M) for indent, body in blocks]
    return sections


def _run(code: str, workdir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    namespace: dict = {"__name__": "__coming_from__"}
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        exec(compile(code, "<docs/coming-from.md>", "exec"), namespace)  # noqa: S102
    finally:
        os.chdir(cwd)
    return namespace, capsys.readouterr().out


def _same(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return set(map(str, a)) == set(map(str, b)) and all(
            _same(a[k], b[next(j for j in b if str(j) == str(k))]) for k in a
        )
    return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9)


def _comparable(value: object) -> bool:
    if isinstance(value, dict):
        return bool(value) and all(_comparable(v) for v in value.values())
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return not isinstance(value, (bool, str))


COMING_FROM = (DOCS / "coming-from.md").read_text(encoding="utf-8")
SECTIONS = _sections(COMING_FROM)
RUN_SECTIONS = ["trec_eval", "pytrec_eval", "ir_measures", "ranx", "scikit-learn"]


def test_coming_from_covers_the_tools_and_runs_all_but_torchmetrics():
    assert list(SECTIONS) == [*RUN_SECTIONS, "torchmetrics"]
    assert SECTIONS["torchmetrics"] == []  # shown as a `py` block, with the page saying it is not run
    assert "Not run by the test suite" in COMING_FROM.split("## torchmetrics")[1]
    assert all(len(SECTIONS[s]) >= (1 if s == "trec_eval" else 2) for s in RUN_SECTIONS)


@pytest.mark.parametrize("section", RUN_SECTIONS)
def test_coming_from_snippets_give_the_same_numbers(section: str, tmp_path: Path, capsys, monkeypatch):
    if section == "ranx":
        # ranx compiles its functions with numba on first use: 70 CPU s on a fresh machine, whose
        # numba cache is empty.  LLVM's optimisation level does not change what the compiled code
        # computes (no fast-math: IEEE order kept; the same sort, so the same order of ties), and
        # at 0 the compile takes 20 s less.  numba reads it when first imported: nothing else in
        # the suite imports numba, and a worker that had would only be slower, not wrong.
        # (Interpreted, NUMBA_DISABLE_JIT, ranx is not ranx: NumPy's argsort orders ties
        # differently from numba's, and its MAP on these files changes in the 6th digit.)
        monkeypatch.setenv("NUMBA_OPT", "0")
    shutil.copy(TREC_TEST / "qrels.test", tmp_path / "qrels.txt")
    shutil.copy(TREC_TEST / "results.test", tmp_path / "run.txt")
    results = []
    for code in SECTIONS[section]:
        namespace, out = _run(code, tmp_path, capsys)
        printed = re.findall(r'^\s*print\(f"\{(\w+):\.4f\}"\)\s*#\s*([-\d.]+)', code, flags=re.M)
        assert printed, f"{section}: a block prints no checked value"
        assert out.split() == [value for _, value in printed], (section, out)
        for name, value in printed:
            assert f"{namespace[name]:.4f}" == value, (section, name)
        results.append({k: v for k, v in namespace.items() if not k.startswith("_") and _comparable(v)})
    if section == "trec_eval":
        # the reference is trec_eval's own output for these files (its test collection, out.test.a = -m all_trec)
        expected = {line.split()[0]: line.split()[2] for line in (TREC_TEST / "out.test.a").read_text().splitlines()}
        shown = re.findall(r"^\s+(\w+)\s+all\s+([\d.]+)$", COMING_FROM.split("## pytrec_eval")[0], flags=re.M)
        assert len(shown) == 4 and all(expected[m] == v for m, v in shown), shown
        names = {"map": "map_", "recip_rank": "rr", "P_5": "p5", "ndcg_cut_10": "ndcg10"}
        assert all(f"{results[0][names[m]]:.4f}" == v for m, v in shown)
        return
    peer, ours = results[0], results[1:]
    for other in ours:
        shared = sorted(set(peer) & set(other))
        assert shared, f"{section}: the blocks share no variable to compare"
        differ = [k for k in shared if not _same(peer[k], other[k])]
        assert not differ, {k: (peer[k], other[k]) for k in differ}


# -- the README -----------------------------------------------------------------------------------
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_pitch_and_the_two_commands():
    assert len(README.encode()) <= 10_500
    first_block = re.search(r"```(\w*)\n(.*?)```", README, flags=re.S)
    assert first_block is not None and first_block.group(1) == "bash"
    assert first_block.group(2).splitlines() == [
        "pip install . && rank-polars demo",
        'pip install uv && python -m uv pip install ".[test]" && python -m pytest',
    ]
    before = README[: first_block.start()]
    assert "trec_eval's numbers" in before and len(before.splitlines()) <= 8
    assert "`rank-polars trec-eval qrels.txt run.txt`" in "\n".join(README.splitlines()[:25])


def test_readme_lists_every_registered_metric_and_links_to_files_that_exist():
    metrics = README.split("## Metrics")[1].split("\n## ")[0]
    listed = set(re.findall(r"`([a-z0-9_]+)`", metrics))
    assert {cls.NAME for cls in MEASURES} <= listed, {cls.NAME for cls in MEASURES} - listed
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert len(links) > 10
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_trec_eval_line_run_on_trec_evals_test_files_prints_out_test():
    """The README's one-line trec_eval replacement names generic files; the docs page shows it on
    trec_eval's own test files.  That exact command, run through the installed console script,
    prints trec_eval's expected output file byte for byte, and the lines the page shows are its
    first lines."""
    readme_line = re.search(r"`(rank-polars trec-eval [^`]+)`", README).group(1).split()
    page = (DOCS / "trec-eval.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n\$ (rank-polars trec-eval [^\n]+)\n(.*?)\n(?:\.\.\.|\$)", page, flags=re.S)
    assert block is not None, "docs/trec-eval.md has no console block starting with a rank-polars trec-eval line"
    argv = block.group(1).split()
    assert argv[:2] == readme_line[:2] == ["rank-polars", "trec-eval"] and len(argv) == len(readme_line)
    assert argv[2:] == ["qrels.test", "results.test"]
    script = Path(sys.executable).parent / "rank-polars"
    done = subprocess.run([str(script), *argv[1:]], cwd=TREC_TEST, capture_output=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, b"")
    expected = (TREC_TEST / "out.test").read_bytes()
    assert done.stdout == expected
    shown = block.group(2).splitlines()
    assert len(shown) >= 3 and expected.decode().splitlines()[: len(shown)] == shown


def test_readme_python_example_runs_and_prints_the_table_shown(tmp_path: Path, monkeypatch):
    import polars as pl

    import rank_polars as rp

    run, qrels = rp.datasets.split_judgments(rp.datasets.sample_log())
    (tmp_path / "logs").mkdir()
    run.write_parquet(tmp_path / "logs" / "part-0.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    monkeypatch.chdir(tmp_path)
    code = re.search(r"```python\n(.*?)```", README, flags=re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "<README.md>", "exec"), namespace)  # noqa: S102
    # the values a notebook would show for the two evaluate lines
    calls = [line for line in code.splitlines() if line.startswith("rp.evaluate(")]
    first = eval(calls[0], namespace)  # noqa: S307
    shown = re.search(r"```text\n(.*?)```", README, flags=re.S).group(1).strip()
    assert str(first) == shown
    with_qrels = eval(calls[1], namespace)  # noqa: S307
    assert isinstance(with_qrels, pl.DataFrame) and with_qrels.height == 2
