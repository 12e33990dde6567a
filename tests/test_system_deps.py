"""tests/system_deps.py: references installed once, whichever workers ask at the same time.

Two xdist workers once both found obp missing and ran pip together; the one importing while the
other's pip rewrote the files failed (hypothesis then reported a flaky test).  Installs now take
a lock and look again once they hold it.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from . import system_deps


def test_workers_asking_at_once_install_a_reference_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    module = f"rank_polars_fake_reference_{uuid.uuid4().hex}"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(system_deps, "INSTALLED", [])
    said: list[str] = []
    monkeypatch.setattr(system_deps, "say", said.append)
    installs: list[list[str]] = []

    def fake_pip(args: list[str], **kwargs: Any) -> None:
        installs.append(args)
        time.sleep(0.3)  # the other caller asks while this "install" is under way
        (tmp_path / f"{module}.py").write_text("VALUE = 1\n")

    monkeypatch.setattr(system_deps.subprocess, "run", fake_pip)
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            system_deps.ensure_reference(module, f"{module}==1.0", "a test", "--ignore-requires-python")
        except BaseException as error:  # noqa: BLE001 - reported below, in the test's thread
            errors.append(error)

    callers = [threading.Thread(target=ask) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert errors == []
    assert len(installs) == 1, installs
    assert installs[0][-3:] == ["--no-deps", "--ignore-requires-python", f"{module}==1.0"]
    assert system_deps.INSTALLED == [(f"{module}==1.0", "a test")]
    assert said == [f"tests/system_deps.py: pip install --no-deps --ignore-requires-python {module}==1.0 (a test)"]
    system_deps.ensure_reference(module, f"{module}==1.0", "a test")  # present now: nothing to do
    assert len(installs) == 1
