"""Shared fixtures: where the conformance data lives.

The data is vendored in ``tests/data/conformance/`` (a byte-identical copy of the workplace's
``shared/conformance/``, see ``PROVENANCE.md`` there), so a fresh clone passes on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).resolve().parent / "data" / "conformance"
# the original, beside the repository in the workplace; absent from a user's clone
SHARED_CONFORMANCE = Path(__file__).resolve().parents[2] / "shared" / "conformance"


@pytest.fixture(scope="session")
def conformance() -> Path:
    if not (CONFORMANCE / "README.md").is_file():
        pytest.fail(f"vendored conformance data missing at {CONFORMANCE}")
    return CONFORMANCE
