"""The vendored conformance data is complete, and equal to the original where that exists."""

from __future__ import annotations

import hashlib

import pytest

from tests.conftest import CONFORMANCE, SHARED_CONFORMANCE

# the files the tests read; a fresh clone must have every one of them
REQUIRED = [
    "README.md",
    "PROVENANCE.md",
    "peer_cases.json",
    "trec_eval/LICENSE.md",
    "trec_eval/qrels.parquet",
    "trec_eval/run_long.parquet",
    "trec_eval/expected_per_query.parquet",
    "trec_eval/expected_per_query_variants.parquet",
    "trec_eval/test/qrels.test",
    "trec_eval/test/results.test",
    "trec_eval/test/out.test",
]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", REQUIRED)
def test_vendored_file_present(name):
    assert (CONFORMANCE / name).is_file(), f"missing vendored file {name}"


def test_vendored_copy_is_byte_identical_to_shared():
    if not SHARED_CONFORMANCE.is_dir():
        pytest.skip("no ../shared/conformance beside the repository (a user's clone): nothing to compare")
    originals = sorted(p.relative_to(SHARED_CONFORMANCE) for p in SHARED_CONFORMANCE.rglob("*") if p.is_file())
    assert originals, "empty ../shared/conformance"
    for rel in originals:
        copy = CONFORMANCE / rel
        assert copy.is_file(), f"{rel} is in ../shared/conformance but not vendored"
        assert _digest(copy) == _digest(SHARED_CONFORMANCE / rel), f"{rel} differs from ../shared/conformance"
