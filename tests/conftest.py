"""Shared fixtures: where the conformance data lives (read in place, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"


@pytest.fixture(scope="session")
def conformance() -> Path:
    if not CONFORMANCE.exists():
        pytest.fail(f"conformance data not found at {CONFORMANCE} (it lives in ../shared beside the repository)")
    return CONFORMANCE
