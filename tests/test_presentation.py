"""Honest wording: a difference that is not significant is never a win or a loss."""

from __future__ import annotations

import pytest

from rank_polars.presentation import count, count_of, verdict

ROW = {"metric": "ndcg@10", "version": "bot-v2", "baseline": "bot-v1"}


@pytest.mark.parametrize("diff", [0.0005, -0.0005, 0.0])
def test_not_significant_is_no_difference(diff: float) -> None:
    text = verdict({**ROW, "diff": diff, "p_value": 0.8498, "p_adjusted": 0.8498, "significant": False}, "holm")
    assert text == f"no significant difference between bot-v2 and bot-v1 on ndcg@10 ({diff:+.4f}, p=0.8498)"
    for word in ("beats", "behind", "better", "worse", "wins", "loses"):
        assert word not in text


@pytest.mark.parametrize(("diff", "word"), [(0.0547, "better"), (-0.0547, "worse")])
def test_significant_says_which_way_and_after_what(diff: float, word: str) -> None:
    row = {**ROW, "diff": diff, "p_value": 0.0017, "p_adjusted": 0.0051, "significant": True}
    assert verdict(row, "holm") == f"bot-v2 is {word} than bot-v1 on ndcg@10 by {diff:+.4f} (p=0.0051, significant after holm)"
    assert verdict({**row, "p_adjusted": None}) == f"bot-v2 is {word} than bot-v1 on ndcg@10 by {diff:+.4f} (p=0.0017, significant)"


def test_no_p_value_is_no_difference() -> None:
    text = verdict({**ROW, "diff": 0.3, "p_value": float("nan"), "p_adjusted": None, "significant": False})
    assert text == "no significant difference between bot-v2 and bot-v1 on ndcg@10 (+0.3000, p=n/a)"


def test_counts_have_thousands_separators() -> None:
    assert count_of(23750, 100000) == "23,750 of 100,000" and count(10_000_000) == "10,000,000"
