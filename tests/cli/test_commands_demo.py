"""rank-polars demo."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


def test_demo(tmp_path: Path) -> None:
    out = invoke("demo", "--out", tmp_path / "demo").stdout
    assert (tmp_path / "demo" / "log" / "model=bot-v1").is_dir()
    assert "engine=polars and engine=duckdb agree" in out
    assert "verdict: bot-v2 is better than bot-v1 on ndcg@10 by +" in out
    line = one_line_error(invoke("demo", "--out", tmp_path / "demo", code=None))
    assert "not empty" in line


# ----------------------------------------------------------------------------------------


def test_the_sample_has_one_name_everywhere() -> None:
    """The sample is the "support-chatbot log" in the README, the docs and the command line."""
    import rank_polars as rp

    root = Path(__file__).resolve().parents[2]
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))]}
    texts["rank-polars demo --help"] = invoke("demo", "--help").stdout
    texts["rank_polars.datasets"] = rp.datasets.__doc__ or ""
    other = {name for name, text in texts.items() if "course chatbot" in text or "sample chatbot log" in text}
    assert other == set()
    for name in ("README.md", "docs/cli.md", "docs/getting-started.md", "rank-polars demo --help", "rank_polars.datasets"):
        assert "support-chatbot log" in " ".join(texts[name].split()), name
