"""The system parts some tests use for real: Java (PySpark), Chromium (the report and the docs
pages), gcc and make (trec_eval 10 built from its vendored source).

They are not pip packages, so the test session installs them from Debian's packages when they
are missing (CI and a fresh machine run as root); ``.ci/run`` does the same up front with
``python3 tests/system_deps.py java chromium gcc make``.  Nothing is installed silently: before
``apt-get`` runs, one line per Debian package it will install (the one asked for and each of its
dependencies) goes to the terminal, with the reason, even under pytest's output capture and in an
xdist worker; the test session lists them again in its summary (``tests/conftest.py``).  A machine
where installing is impossible fails those tests with this message: never a silent skip.  Only what
each package depends on is installed (``--no-install-recommends``); a user who does not want
system packages installed sets ``RANK_POLARS_TESTS_NO_INSTALL=chromium`` (a comma list, or
``all``), and the tests needing a missing one are skipped, each with the reason.

The Python references whose pins are stale (obp, recommenders) are installed the same way, by
:func:`ensure_reference`: with pip, without their dependency trees, one line each, and under the
same lock, since two workers may want one at once (a worker importing files that another's pip is
still writing fails).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGES = {"java": "default-jre-headless", "chromium": "chromium", "gcc": "gcc", "make": "make", "perl": "perl"}
# why the tests need each command (a command without an entry says which test asked for it)
REASONS = {
    "java": "PySpark's JVM (the Spark engine tests)",
    "chromium": "headless Chromium renders the HTML report and the docs pages",
    "gcc": "builds trec_eval 10 from tests/vendor/trec_eval and ndeval 4.5 from tests/vendor/ndeval",
    "make": "builds trec_eval 10 from tests/vendor/trec_eval",
    "perl": "runs gdeval 1.3 from tests/vendor/gdeval (rank-polars gdeval's reference)",
}
# what a package needs to run, not what Debian recommends beside it: Chromium's recommends brought
# about 130 packages (systemd, samba libraries, a printing stack) that headless rendering never uses
APT_FLAGS = ("--no-install-recommends",)
# a user who does not want the suite to install system packages names them here ("chromium,java",
# or "all"): the tests that need a missing one are then skipped, with this reason
OPT_OUT = "RANK_POLARS_TESTS_NO_INSTALL"


def opted_out() -> set[str]:
    """The commands :data:`OPT_OUT` says not to install (every one for ``all``)."""
    names = {n.strip() for n in os.environ.get(OPT_OUT, "").split(",") if n.strip()}
    return set(PACKAGES) if "all" in names else names


def _skip(reason: str) -> None:
    """Skip the asking test (under pytest), else stop with the reason (.ci/run, a script)."""
    if "pytest" in sys.modules:
        import pytest

        pytest.skip(reason)
    raise RuntimeError(reason)


# what this process installed: (package, why), for the session's summary
INSTALLED: list[tuple[str, str]] = []
# pytest's capture manager, set by tests/conftest.py: pytest captures file descriptor 2 itself,
# so even ``sys.__stderr__`` is swallowed unless the capture is suspended for the line
CAPTURE: Any = None


def say(line: str) -> None:
    """Write a line to the terminal, past pytest's output capture (in an xdist worker too)."""
    with CAPTURE.global_and_fixture_disabled() if CAPTURE is not None else contextlib.nullcontext():
        sys.stderr.write(f"{line}\n")
        sys.stderr.flush()


def _planned(package: str, env: dict[str, str]) -> list[str]:
    """The Debian packages ``apt-get install package`` would install, from a dry run."""
    done = subprocess.run(["apt-get", "install", "-s", "-y", *APT_FLAGS, package], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"apt-get cannot install {package!r}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return re.findall(r"^Inst (\S+)", done.stdout, flags=re.M)


@contextlib.contextmanager
def _one_installer() -> Iterator[None]:
    """One install at a time across xdist workers; the others wait, then find it installed."""
    with open(Path(tempfile.gettempdir()) / "rank_polars_system_deps.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure(command: str) -> str:
    """Path of ``command``, installing its Debian package first if needed (one line per package)."""
    package = PACKAGES[command]
    why = REASONS.get(command) or f"asked for by {os.environ.get('PYTEST_CURRENT_TEST', 'a test')}"
    with _one_installer():  # looked for under the lock, as in ensure_reference: no half an install
        found = shutil.which(command)
        if found:
            return found
        if command in opted_out():
            _skip(f"{command!r} is not installed and {OPT_OUT}={os.environ[OPT_OUT]!r} says not to install it: "
                  f"the tests that need it ({REASONS.get(command, 'this test')}) are skipped")
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise RuntimeError(
                f"{command!r} is needed by this test: install the Debian package {package!r} "
                "(CI's .ci/run does it as root)"
            )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        planned = _planned(package, env)
        say(f"tests/system_deps.py: apt-get install {package} for {command!r} ({why}); Debian packages: {len(planned)}")
        for name in planned:
            line = why if name == package else f"a dependency of {package} ({why})"
            say(f"  installing {name}: {line}")
            INSTALLED.append((name, line))
        subprocess.run(["apt-get", "install", "-y", "-qq", *APT_FLAGS, package], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    found = shutil.which(command)
    if not found:
        raise RuntimeError(f"installing {package!r} did not provide {command!r}")
    return found


def ensure_reference(module: str, requirement: str, why: str, *pip_flags: str) -> None:
    """Make ``module`` importable, installing ``requirement`` with ``pip --no-deps`` if needed.

    The lock is taken before looking, not only before installing: a package is found as soon as
    pip has written its ``__init__.py``, while its other files are still to come, so a caller
    that looked without the lock could import half an install (CI once failed on ``obp.utils``).
    """
    with _one_installer():
        importlib.invalidate_caches()  # another worker may have installed it while this one waited
        if importlib.util.find_spec(module) is not None:
            return
        flags = ("--no-deps", *pip_flags)
        say(f"tests/system_deps.py: pip install {' '.join(flags)} {requirement} ({why})")
        INSTALLED.append((requirement, why))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *flags, requirement], check=True)
        importlib.invalidate_caches()
    if importlib.util.find_spec(module) is None:
        raise RuntimeError(f"installing {requirement!r} did not provide the module {module!r}")


if __name__ == "__main__":  # .ci/run: python3 tests/system_deps.py java chromium gcc make
    for name in sys.argv[1:]:
        print(f"{name}: {ensure(name)}")
