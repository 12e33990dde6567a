"""trec_eval 10, built from the vendored source (``tests/vendor/trec_eval``) with the system compiler.

The build goes to a temp folder named after a hash of the sources, so a test session (and each
pytest-xdist worker) builds it once: the first build takes ~8 s, later sessions reuse it.  The
build happens in a private folder that is renamed into place, so two workers building at once
both end with a complete binary.  ``gcc`` and ``make`` come from ``tests/system_deps.py`` (installed
from Debian's packages when running as root, otherwise a failure that names the command to run).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.system_deps import ensure

SOURCE = Path(__file__).resolve().parents[1] / "vendor" / "trec_eval"


def _digest() -> str:
    h = hashlib.sha256()
    for path in sorted(SOURCE.iterdir()):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def build() -> Path:
    """Path of the ``trec_eval`` binary, built from the vendored source if not built already."""
    target = Path(tempfile.gettempdir()) / f"rank_polars_trec_eval_{_digest()}"
    binary = target / "trec_eval"
    if binary.is_file():
        return binary
    try:
        ensure("gcc")
        ensure("make")
    except RuntimeError as e:
        raise RuntimeError(f"{e}; the command: apt-get install -y gcc make") from None
    work = Path(tempfile.mkdtemp(prefix="trec_eval_build_"))
    shutil.copytree(SOURCE, work / "src")
    done = subprocess.run(["make", "-s", "trec_eval"], cwd=work / "src", capture_output=True, text=True)
    if done.returncode != 0 or not (work / "src" / "trec_eval").is_file():
        raise RuntimeError(f"building trec_eval failed (make in {work / 'src'}):\n{done.stdout}{done.stderr}")
    try:
        os.rename(work / "src", target)
    except OSError:  # another worker got there first: its binary is the same
        pass
    shutil.rmtree(work, ignore_errors=True)
    return binary
