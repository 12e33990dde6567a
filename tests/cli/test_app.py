"""The group: one-line errors, --debug, help, version, the installed entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


# errors, help, the real entry point


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["evaluate", "{d}/nope.parquet", "-m", "ndcg@10"], "no such file"),
        (["evaluate", "{d}/nope/*.parquet", "-m", "ndcg@10"], "no file matches"),
        (["evaluate", "{parquet}", "-m", "ndcgg@10", "--by", "model"], "did you mean 'ndcg'"),
        (["evaluate", "{parquet}", "-m", "ndcg@ten", "--by", "model"], "cutoff"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "modle"], "did you mean 'model'"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--query", "qid"], "no column 'qid'"),
        (["evaluate", "{parquet}", "-m", "ndcg@10"], "did you mean --by model"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--format", "xml"], "'xml' is not one of"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "model", "--format", "parquet"], "-o FILE"),
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "model", "--missing", "maybe"], "--missing"),
        (["evaluate", "{parquet}"], "Missing option '-m'"),
        (["evaluate", "{d}/log.unknown", "-m", "ndcg@10"], "cannot tell the format"),
        (["evaluate", "{trec}", "-m", "ndcg@10"], "--qrels"),
        (["evaluate", "{d}/broken.run", "--qrels", "{qrels}", "-m", "map"], "line 2"),
        (["compare", "{parquet}", "-m", "ndcg@10", "--test", "magic"], "'magic' is not one of"),
        (["nonsense"], "No such command"),
    ],
)
def test_bad_inputs_are_one_line(args: list[str], needle: str, files: dict[str, Path]) -> None:
    d = files["parquet"].parent
    (d / "log.unknown").write_text("x")
    (d / "broken.run").write_text("q1 Q0 d1 1 2.0 t\nthis line is broken\n")
    fmt = {"d": d, **{k: v for k, v in files.items()}}
    line = one_line_error(invoke(*[a.format(**fmt) for a in args], code=None))
    assert needle in line


def test_debug_shows_the_traceback(files: dict[str, Path]) -> None:
    result = invoke("--debug", "evaluate", files["parquet"], "-m", "ndcgg@10", "--by", "model", code=None)
    assert result.exit_code == 1 and "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: unknown metric")


@pytest.mark.parametrize("command", [[], ["evaluate"], ["compare"], ["sql"], ["validate"], ["demo"]])
def test_help(command: list[str]) -> None:
    out = invoke(*command, "--help").stdout
    assert out.startswith("Usage: rank-polars") and "--help" in out


def test_version() -> None:
    assert invoke("--version").stdout.strip() == f"rank-polars {rp.__version__}"


def entry_point() -> str:
    exe = Path(sys.executable).parent / "rank-polars"
    if not exe.exists():
        pytest.fail(f"the rank-polars entry point is not installed beside {sys.executable}: pip install -e .")
    return str(exe)


def test_entry_point_subprocess(files: dict[str, Path], log: pl.DataFrame) -> None:
    done = subprocess.run(
        [entry_point(), "evaluate", str(files["folder"]), *M_ARGS, "--by", "model", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got = pl.DataFrame(json.loads(done.stdout))
    assert_frame_equal(got, expected(log), check_dtypes=False)

    bad = subprocess.run([entry_point(), "evaluate", "missing.parquet", "-m", "ndcg@10"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.strip() == "error: run: no such file 'missing.parquet'"


def test_every_option_has_help_and_order_lists_only_its_choices() -> None:
    from rank_polars.cli import main

    missing = [f"{name} {param.opts[0]}" for name, command in main.commands.items() if name != "trec-eval"
               for param in command.params if isinstance(param, click.Option) and not param.help]
    assert missing == []
    sql_help = invoke("sql", "--help").stdout
    assert "--order [position|score]" in sql_help and "auto" not in sql_help.split("--order")[1].split("--query")[0]
    assert "auto: position when the column exists" in invoke("evaluate", "--help").stdout
