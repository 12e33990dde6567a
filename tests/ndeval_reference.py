"""ndeval 4.5 and gdeval 1.3, the TREC Web track's tools, from their vendored sources
(``tests/vendor/ndeval``, ``tests/vendor/gdeval``): ndeval built with the system compiler once
per source version (as ``tests/treceval/binary.py`` builds trec_eval), gdeval run by perl.
``gcc`` / ``perl`` come from ``tests/system_deps.py`` (installed from Debian's packages when
running as root, else a failure naming the command to run)."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Callable

from tests.system_deps import ensure

VENDOR = Path(__file__).resolve().parent / "vendor"


def ndeval() -> Path:
    """Path of the ``ndeval`` binary, built as its Makefile says (``gcc -o ndeval ndeval.c -lm``)."""
    source = VENDOR / "ndeval" / "ndeval.c"
    target = Path(tempfile.gettempdir()) / f"rank_polars_ndeval_{hashlib.sha256(source.read_bytes()).hexdigest()[:16]}"
    binary = target / "ndeval"
    if binary.is_file():
        return binary
    try:
        gcc = ensure("gcc")
    except RuntimeError as e:
        raise RuntimeError(f"{e}; the command: apt-get install -y gcc") from None
    work = Path(tempfile.mkdtemp(prefix="ndeval_build_"))
    shutil.copy(source, work / "ndeval.c")
    done = subprocess.run([gcc, "-o", "ndeval", "ndeval.c", "-lm"], cwd=work, capture_output=True, text=True)
    if done.returncode != 0 or not (work / "ndeval").is_file():
        raise RuntimeError(f"building ndeval failed (gcc in {work}):\n{done.stdout}{done.stderr}")
    try:
        os.rename(work, target)
    except OSError:  # another worker got there first: its binary is the same
        shutil.rmtree(work, ignore_errors=True)
    return binary


def gdeval() -> list[str]:
    """``[perl, path of the vendored gdeval.pl]``."""
    try:
        perl = ensure("perl")
    except (RuntimeError, KeyError) as e:
        raise RuntimeError(f"{e}; the command: apt-get install -y perl") from None
    return [perl, str(VENDOR / "gdeval" / "gdeval.pl")]


def run(command: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of a reference tool."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def in_process(main: Callable[[list[str], IO[str], IO[str]], int], args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of a drop-in command's ``main`` run in ``cwd`` (the
    reference tools read the same relative file names)."""
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(args, out, err)
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()
