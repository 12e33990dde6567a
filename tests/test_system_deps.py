"""tests/system_deps.py: references installed once, whichever workers ask at the same time.

Two xdist workers once both found obp missing and ran pip together; the one importing while the
other's pip rewrote the files failed (hypothesis then reported a flaky test).  Installs then took
a lock and looked again once they held it; but a caller that looked before taking the lock could
still find a package pip had half written (a CI run: No module named 'obp.utils').  Every
caller now looks only while holding the lock.
"""

from __future__ import annotations

import contextlib
import importlib
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


def test_a_caller_arriving_mid_install_waits_for_the_whole_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """pip writes a package file by file: once ``__init__.py`` is there the package is found, and
    a caller that looked without the lock imported half of it (CI: No module named 'obp.utils')."""
    package = f"rank_polars_fake_package_{uuid.uuid4().hex}"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(system_deps, "INSTALLED", [])
    monkeypatch.setattr(system_deps, "say", lambda line: None)
    half_written = threading.Event()

    def fake_pip(args: list[str], **kwargs: Any) -> None:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        half_written.set()
        time.sleep(0.5)  # the second caller asks now
        (tmp_path / package / "utils.py").write_text("VALUE = 1\n")

    monkeypatch.setattr(system_deps.subprocess, "run", fake_pip)
    imported: list[Any] = []
    errors: list[BaseException] = []

    def ask(then_import: bool) -> None:
        try:
            system_deps.ensure_reference(package, f"{package}==1.0", "a test")
            if then_import:
                imported.append(importlib.import_module(f"{package}.utils").VALUE)
        except BaseException as error:  # noqa: BLE001 - reported below, in the test's thread
            errors.append(error)

    first = threading.Thread(target=ask, args=(False,))
    first.start()
    assert half_written.wait(10)
    second = threading.Thread(target=ask, args=(True,))
    second.start()
    first.join()
    second.join()
    assert errors == [] and imported == [1]


def test_an_opted_out_missing_command_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(system_deps.OPT_OUT, "chromium, gcc")
    monkeypatch.setattr(system_deps.shutil, "which", lambda name: None)  # nothing installed
    monkeypatch.setattr(system_deps, "_one_installer", contextlib.nullcontext)
    installs: list[object] = []
    monkeypatch.setattr(system_deps.subprocess, "run", lambda *a, **k: installs.append(a))
    with pytest.raises(pytest.skip.Exception, match="RANK_POLARS_TESTS_NO_INSTALL='chromium, gcc'.*skipped"):
        system_deps.ensure("chromium")
    assert not installs  # not even apt-get update
    assert system_deps.opted_out() == {"chromium", "gcc"}
    monkeypatch.setenv(system_deps.OPT_OUT, "all")
    assert system_deps.opted_out() == set(system_deps.PACKAGES)


def test_apt_installs_without_recommends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(system_deps.OPT_OUT, raising=False)
    calls: list[list[str]] = []

    class Done:
        returncode, stdout, stderr = 0, "Inst chromium (1 Debian)\n", ""

    def run(args: list[str], **_: object) -> Done:
        calls.append(list(args))
        return Done()

    found = iter([None, "/usr/bin/chromium"])
    monkeypatch.setattr(system_deps.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else next(found))
    monkeypatch.setattr(system_deps.os, "geteuid", lambda: 0)
    monkeypatch.setattr(system_deps, "_one_installer", contextlib.nullcontext)
    monkeypatch.setattr(system_deps, "say", lambda line: None)
    monkeypatch.setattr(system_deps, "INSTALLED", [])  # not this session's real installs
    monkeypatch.setattr(system_deps.subprocess, "run", run)
    assert system_deps.ensure("chromium") == "/usr/bin/chromium"
    installs = [c for c in calls if c[:2] == ["apt-get", "install"]]
    assert installs and all("--no-install-recommends" in c for c in installs), installs
