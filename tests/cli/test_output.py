"""Files are written through a temporary file: a kill or a failure mid-write leaves the old
file whole; without --force a file that appears while the command runs is not overwritten."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

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
