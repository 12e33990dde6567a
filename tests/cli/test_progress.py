"""Progress: never in pipes or logs unless --progress; a live display on a terminal."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rank_polars.cli.progress import LineProgress, choose
from rank_polars.progress import NoProgress, RichProgress
from tests.cli.helpers import M_ARGS, invoke


def entry_point() -> str:
    exe = Path(sys.executable).parent / "rank-polars"
    assert exe.exists(), f"the rank-polars entry point is not installed beside {sys.executable}: pip install -e ."
    return str(exe)


def test_the_display_is_chosen_by_the_flag_and_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(choose(None), NoProgress)  # pytest's stderr is not a terminal
    assert isinstance(choose(True).inner, LineProgress) and isinstance(choose(False), NoProgress)

    class TTY(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", TTY())
    assert isinstance(choose(None).inner, RichProgress) and isinstance(choose(False), NoProgress)


def test_a_pipe_gets_no_progress_unless_asked(files: dict[str, Path]) -> None:
    args = [entry_point(), "compare", str(files["folder"]), "-m", "ndcg@10", "--test", "bootstrap", "--n-resamples", "500", "--format", "csv"]
    quiet = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    loud = subprocess.run([*args, "--progress"], capture_output=True, text=True, timeout=120)
    assert loud.returncode == 0 and loud.stdout == quiet.stdout
    lines = loud.stderr.splitlines()
    assert "comparing hive (2 files) ..." in lines and any(ln.startswith("comparing hive (2 files): done (") for ln in lines)
    assert any(ln.startswith("checking the run") for ln in lines) and any(ln.startswith("metric pass (1 metrics") for ln in lines)
    assert "\x1b[" not in loud.stderr  # plain lines in logs, no terminal codes


def test_no_progress_in_process_and_lines_with_the_flag(files: dict[str, Path]) -> None:
    assert invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model").stderr == ""
    err = invoke("evaluate", files["parquet"], *M_ARGS, "--by", "model", "--progress").stderr
    assert "evaluating log.parquet ..." in err and "metric pass (3 metrics, 60 queries): done" in err


def test_a_terminal_sees_the_live_display(files: dict[str, Path]) -> None:
    """stderr on a pseudo-terminal: rich draws the display (terminal codes, the phase names)."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [entry_point(), "compare", str(files["folder"]), "-m", "ndcg@10", "--test", "bootstrap", "--n-resamples", "20000",
         "--format", "csv"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=secondary, env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"},
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal closed: the command is done
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out, _ = proc.communicate(timeout=60)
    os.close(primary)
    assert proc.returncode == 0
    text = seen.decode("utf-8", "replace")
    assert "\x1b[" in text and "comparing hive" in text, text[:500]
    assert b"comparing" not in out  # the display is on stderr only


def test_progress_counts_each_sides_files_and_accounts_for_all_the_time(tmp_path: Path, log) -> None:
    """One run file and one qrels file are not "(2 files)"; "1 query range" in the singular; the
    last line's parts add up to the whole command, measured from outside the process."""
    import rank_polars as rp

    run, qrels = rp.datasets.split_judgments(log.filter(log["model"] == "bot-v1"))
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "judged.parquet")
    began = time.time()
    done = subprocess.run([entry_point(), "evaluate", str(tmp_path / "run.parquet"), "--qrels", str(tmp_path / "judged.parquet"),
                           "-m", "ndcg@10", "--progress", "-o", str(tmp_path / "out.csv")], capture_output=True, text=True,
                          timeout=120)
    wall = time.time() - began
    lines = done.stderr.splitlines()
    assert done.returncode == 0, done.stderr
    assert "evaluating run.parquet with judgments judged.parquet ..." in lines
    assert "files)" not in done.stderr and "(1 query range)" in done.stderr and "1 query ranges" not in done.stderr
    assert "wrote 1 row to" in done.stderr
    summary = lines[-1]
    assert summary.startswith("done in ") and "s starting (Python, importing polars and the engines)" in summary
    assert "s evaluating run.parquet with judgments judged.parquet" in summary and "writing the output" in summary
    total = float(summary.split("done in ")[1].split(" s")[0])
    parts = [float(p.strip().split(" s ")[0]) for p in summary.split(": ", 1)[1].split(";")]
    assert abs(sum(parts) - total) <= 0.05 * len(parts) + 1e-9  # the parts are the whole (each rounded to 0.1 s)
    assert total <= wall + 0.05 and total >= 0.5 * wall  # the whole process, not only the phases


def test_a_failed_command_ends_with_its_error_not_a_summary(files: dict[str, Path]) -> None:
    err = invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--progress", code=1).stderr  # two versions, no --by
    assert err.splitlines()[-1].startswith("error: ") and "done in " not in err
