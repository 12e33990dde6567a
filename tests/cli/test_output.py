"""Files are written through a temporary file: a kill or a failure mid-write leaves the old
file whole; without --force a file that appears while the command runs is not overwritten."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

from rank_polars.cli import formatters, output
from rank_polars.cli.errors import CLIError
from tests.cli.helpers import M_ARGS, invoke, one_line_error


def test_a_failure_mid_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")

    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        output.write_file(target, "new\n", force=True)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file left


def test_sigkill_during_a_forced_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text('{"old": true}\n')
    script = textwrap.dedent(f"""
        import os, time
        from rank_polars.cli import output
        os.fsync = lambda fd: time.sleep(60)  # the content is half on its way: stop here
        output.write_file({str(target)!r}, "x" * 10_000_000, force=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]:
            assert time.monotonic() < deadline and proc.poll() is None, "the writer never started"
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert target.read_text() == '{"old": true}\n'


def test_without_force_a_file_created_meanwhile_is_not_overwritten(
    tmp_path: Path, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "means.csv"
    csv = formatters.FORMATTERS["csv"]

    def meanwhile(df: object) -> str:  # another process creates the file while we compute
        target.write_text("theirs\n")
        return csv(df)  # type: ignore[arg-type]

    monkeypatch.setitem(formatters.FORMATTERS, "csv", meanwhile)
    line = one_line_error(invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "csv", "-o", target, code=1))
    assert "created while the command ran" in line and "--force" in line
    assert target.read_text() == "theirs\n"
    with pytest.raises(CLIError):
        output.write_file(target, "mine\n", force=False)
    output.write_file(target, "mine\n", force=True)
    assert target.read_text() == "mine\n" and len(list(tmp_path.iterdir())) == 1


# --- output that is what its name says -----------------------------------------------------------

def _html_rows(text: str) -> list[list[str]]:
    """The cells of an HTML table, read with the standard library's parser."""
    from html.parser import HTMLParser

    rows: list[list[str]] = []

    class Cells(HTMLParser):
        def handle_starttag(self, tag: str, attrs: object) -> None:
            if tag == "tr":
                rows.append([])
            elif tag in ("td", "th"):
                rows[-1].append("")

        def handle_data(self, data: str) -> None:
            if rows and rows[-1] and data.strip():
                rows[-1][-1] += data

    Cells().feed(text)
    return rows


READERS = {
    ".parquet": lambda p: pl.read_parquet(p),
    ".csv": lambda p: pl.read_csv(p),
    ".tsv": lambda p: pl.read_csv(p, separator="\t"),
    ".json": lambda p: pl.DataFrame(json.loads(p.read_text())),
    ".jsonl": lambda p: pl.read_ndjson(p),
}


@pytest.mark.parametrize("suffix", [*READERS, ".md", ".html"])
def test_the_output_format_follows_the_file_extension(tmp_path: Path, files: dict[str, Path], suffix: str) -> None:
    import rank_polars as rp

    want = rp.evaluate(files["parquet"], ["ndcg@10", "mrr"], by="model")
    target = tmp_path / f"means{suffix}"
    result = invoke("evaluate", files["parquet"], "-m", "ndcg@10", "-m", "mrr", "--by", "model", "-o", target)
    assert f"wrote 2 rows to {target}" in result.stderr
    if suffix in READERS:
        got = READERS[suffix](target)
        assert got.columns == want.columns
        for metric in ("ndcg@10", "mrr"):
            assert got[metric].to_list() == pytest.approx(want[metric].to_list(), abs=1e-12)
    elif suffix == ".md":
        assert target.read_text().splitlines()[0].split("|")[1:4] == [" model  ", " queries ", " ndcg@10 "]
    else:
        rows = _html_rows(target.read_text())
        assert rows[0] == want.columns and [r[0] for r in rows[1:]] == want["model"].to_list()
        assert [float(r[2]) for r in rows[1:]] == pytest.approx(want["ndcg@10"].to_list(), abs=5e-5)
    # an existing file, replaced with --force, gets the format of its name too
    if suffix == ".csv":
        invoke("evaluate", files["parquet"], "-m", "ndcg@10", "-m", "mrr", "--by", "model", "-o", target, "--force")
        assert READERS[suffix](target).columns == want.columns


def test_an_extension_contradicting_format_is_refused(tmp_path: Path, files: dict[str, Path]) -> None:
    target = tmp_path / "means.parquet"
    line = one_line_error(invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "csv", "-o", target, code=1))
    assert "names a parquet file but --format is csv" in line
    assert not target.exists()
    # an extension that names no format leaves --format to decide; none at all is the text table
    invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--format", "csv", "-o", tmp_path / "means.out")
    assert (tmp_path / "means.out").read_text().startswith("model,queries,")
    assert output.output_format(None, "x.data") == "table" and output.output_format("latex", "x.tex") == "latex"


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_get_the_mode_the_umask_gives(tmp_path: Path, files: dict[str, Path], mask: int) -> None:
    old = os.umask(mask)
    try:
        invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "-o", tmp_path / "means.csv")
        invoke("compare", files["parquet"], "-m", "ndcg@10", "--by", "model", "--baseline", "bot-v1",
               "--report", tmp_path / "report.html", "-o", tmp_path / "cmp.json")
        invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "-o", tmp_path / "means.csv", "--force")
        expected_mode = 0o666 & ~mask  # what open() gives a new file
        for name in ("means.csv", "report.html", "cmp.json"):
            assert (tmp_path / name).stat().st_mode & 0o777 == expected_mode, name
    finally:
        os.umask(old)
