"""The system parts some tests use for real: Java (for PySpark) and Chromium (for the report).

They are not pip packages, so the test session installs them from Debian's packages when
they are missing (CI and a fresh machine run as root); ``.ci/run`` does the same up front.
A machine where that is impossible fails those tests with this message: never a silent skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess

PACKAGES = {"java": "default-jre-headless", "chromium": "chromium"}


def ensure(command: str) -> str:
    """Path of ``command``, installing its Debian package first if needed."""
    found = shutil.which(command)
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise RuntimeError(
            f"{command!r} is needed by this test: install the Debian package {PACKAGES[command]!r} "
            "(CI's .ci/run does it as root)"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", PACKAGES[command]], check=True, env=env)
    found = shutil.which(command)
    if not found:
        raise RuntimeError(f"installing {PACKAGES[command]!r} did not provide {command!r}")
    return found
