"""rp.agreement, rp.agreement_per_query and rp.grade_confusion against scikit-learn's
cohen_kappa_score / confusion_matrix, the krippendorff package and statsmodels' fleiss_kappa, on
generated judgments: ties, missing judgments, a judge using one grade, queries judged by one judge.
The bootstrap interval against the same resamples of the queries drawn by hand and scored by the
references."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

import rank_polars as rp
from rank_polars.stats.resampling import _uniform_indices, percentile_ci

TOL = 1e-9
LEVELS = ("nominal", "ordinal", "interval")


@st.composite
def judgments(draw: Any, judges: int | None = None) -> pl.DataFrame:
    """Up to 4 judges, 1-5 queries of 1-6 items; each judgment present with some chance; grades
    from a small scale (ties everywhere); sometimes a judge with one grade, a query one judge alone judged."""
    n_judges = judges or draw(st.integers(2, 4))
    names = [f"j{i}" for i in range(n_judges)]
    scale = draw(st.sampled_from([[0, 1], [0, 1, 2, 3], [0, 2, 5], [-1, 0, 1, 2]]))
    constant = draw(st.sampled_from([None, *names]))  # a judge who gives one grade only
    rows = []
    for q in range(draw(st.integers(1, 5))):
        solo = draw(st.sampled_from([None, *names]))  # a query only this judge judged
        for i in range(draw(st.integers(1, 6))):
            for j in names:
                if (solo is None or solo == j) and draw(st.booleans() | st.just(True)):
                    grade = scale[0] if j == constant else draw(st.sampled_from(scale))
                    rows.append((f"q{q}", f"d{i}", j, float(grade)))
    return pl.DataFrame(rows, schema={"query": pl.String, "item": pl.String, "judge": pl.String,
                                      "relevance": pl.Float64}, orient="row")


def _wide(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.pivot(on="judge", index=["query", "item"], values="relevance").sort("query", "item")


def _reference_pair(frame: pl.DataFrame, a: str, b: str) -> dict[str, float]:
    wide = _wide(frame)
    both = wide.drop_nulls([a, b]) if {a, b} <= set(wide.columns) else wide.clear()
    out: dict[str, float] = {}
    x, y = both[a].to_numpy() if a in both.columns else np.zeros(0), both[b].to_numpy() if b in both.columns else np.zeros(0)
    for weights, name in ((None, "cohen_kappa"), ("linear", "cohen_kappa_linear"), ("quadratic", "cohen_kappa_quadratic")):
        with np.errstate(all="ignore"), _quiet():
            out[name] = float(cohen_kappa_score(x, y, weights=weights)) if x.size else math.nan
    for level in LEVELS:
        out[f"krippendorff_alpha_{level}"] = _alpha(np.vstack([x, y]), level)
    out["fleiss_kappa"] = _fleiss(np.vstack([x, y]).T)
    return out


class _quiet:
    def __enter__(self) -> None:
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc: object) -> None:
        self._w.__exit__(*exc)


def _alpha(data: np.ndarray, level: str) -> float:
    """krippendorff.alpha, NaN where it refuses (one value in the domain, no unit with two values)."""
    if data.size == 0:
        return math.nan
    try:
        with _quiet():
            value = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    except ValueError:
        return math.nan
    return value


def _fleiss(ratings: np.ndarray) -> float:
    if ratings.shape[0] == 0:
        return math.nan
    table, _ = aggregate_raters(ratings)
    with _quiet(), np.errstate(all="ignore"):
        return float(fleiss_kappa(table))


def _close(got: float | None, want: float) -> None:
    if got is None or (isinstance(got, float) and math.isnan(got)):
        assert not np.isfinite(want), f"null, reference {want}"
    else:
        assert np.isfinite(want), f"{got}, reference undefined ({want})"
        assert got == pytest.approx(want, abs=TOL, rel=TOL)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments())
def test_every_statistic_matches_its_reference(frame: pl.DataFrame) -> None:
    names = sorted(frame["judge"].unique().to_list())
    if len(names) < 2:
        with pytest.raises(rp.RankPolarsError, match="two judges"):
            rp.agreement(frame, n_resamples=10)
        return
    got = rp.agreement(frame, n_resamples=10)
    values = {(r["judges"], r["statistic"]): r for r in got.iter_rows(named=True)}
    wide = _wide(frame)
    for a, b in combinations(names, 2):
        both = wide.drop_nulls([a, b])
        for statistic, want in _reference_pair(frame, a, b).items():
            row = values[f"{a}|{b}", statistic]
            _close(row["value"], want)
            assert row["items"] == both.height
            if row["value"] is None:
                assert row["ci_low"] is None and row["ci_high"] is None
    data = wide.select(names).to_numpy().T
    for level in LEVELS:
        _close(values["all", f"krippendorff_alpha_{level}"]["value"], _alpha(data, level))
    full = wide.drop_nulls(names)
    _close(values["all", "fleiss_kappa"]["value"], _fleiss(full.select(names).to_numpy()))
    assert values["all", "fleiss_kappa"]["items"] == full.height


def test_kappa_of_two_judges_who_gave_one_and_the_same_grade_is_null() -> None:
    """Expected agreement 1: kappa is 0/0 (scikit-learn says nan); rp.agreement says null, and so
    does alpha (one value in the domain, which the krippendorff package refuses)."""
    frame = pl.DataFrame({"query": ["q1"] * 4, "item": ["a", "b"] * 2, "judge": ["x", "x", "y", "y"],
                          "relevance": [1.0] * 4})
    got = rp.agreement(frame, n_resamples=10)
    assert got.filter(pl.col("judges") == "x|y")["value"].null_count() == 7
    with _quiet():
        assert math.isnan(cohen_kappa_score([1, 1], [1, 1]))


def test_one_judge_with_a_single_grade_gives_kappa_zero_as_scikit_learn() -> None:
    frame = pl.DataFrame({"query": ["q1"] * 6, "item": ["a", "b", "c"] * 2, "judge": ["x"] * 3 + ["y"] * 3,
                          "relevance": [1.0, 1.0, 1.0, 0.0, 1.0, 2.0]})
    got = rp.agreement(frame, n_resamples=10).filter((pl.col("judges") == "x|y") & (pl.col("statistic") == "cohen_kappa"))
    assert got["value"].item() == pytest.approx(cohen_kappa_score([1, 1, 1], [0, 1, 2]), abs=TOL)
    assert got["value"].item() == 0.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments(judges=2), st.integers(0, 2**32 - 1))
def test_the_interval_is_the_percentile_of_the_references_over_the_same_resampled_queries(frame: pl.DataFrame,
                                                                                       seed: int) -> None:
    names = sorted(frame["judge"].unique().to_list())
    if len(names) < 2:
        return
    a, b = names
    n_resamples, ci = 40, 0.9
    got = rp.agreement(frame, n_resamples=n_resamples, seed=seed, ci=ci)
    wide = _wide(frame).drop_nulls([a, b])
    queries = sorted(wide["query"].unique().to_list())  # the queries with an item two judges judged
    if not queries:
        return
    rng = np.random.default_rng(seed)
    drawn = _uniform_indices(rng, len(queries), np.empty(n_resamples * len(queries), np.uint64)).reshape(n_resamples, -1)
    for weights, name in ((None, "cohen_kappa"), ("quadratic", "cohen_kappa_quadratic")):
        row = got.filter((pl.col("judges") == f"{a}|{b}") & (pl.col("statistic") == name)).row(0, named=True)
        if row["value"] is None:
            continue
        draws = []
        for picks in drawn:  # the reference, one resample at a time
            sample = pl.concat([wide.filter(pl.col("query") == queries[i]) for i in picks])
            with _quiet():
                draws.append(cohen_kappa_score(sample[a].to_numpy(), sample[b].to_numpy(), weights=weights,
                                               labels=np.unique(wide.select(a, b).to_numpy())))
        draws = np.array(draws, dtype=float)
        low, high = percentile_ci(draws[np.isfinite(draws)], ci)
        assert row["ci_low"] == pytest.approx(low, abs=TOL) and row["ci_high"] == pytest.approx(high, abs=TOL)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments())
def test_per_query_agreement_and_the_confusion_matrix_match_scikit_learn(frame: pl.DataFrame) -> None:
    names = sorted(frame["judge"].unique().to_list())
    per = rp.agreement_per_query(frame)
    confusion = rp.grade_confusion(frame)
    wide = _wide(frame)
    expected_rows = 0
    for a, b in combinations(names, 2):
        both = wide.drop_nulls([a, b])
        grades = np.unique(both.select(a, b).to_numpy()) if both.height else np.zeros(0)
        if both.height:
            want = confusion_matrix(both[a].to_numpy(), both[b].to_numpy(), labels=grades)
            mine = confusion.filter(pl.col("judges") == f"{a}|{b}")
            got = np.zeros_like(want)
            for row in mine.iter_rows(named=True):
                got[np.searchsorted(grades, row["grade_a"]), np.searchsorted(grades, row["grade_b"])] = row["items"]
            assert (got == want).all()
        for (query,), part in both.group_by(["query"]):
            expected_rows += 2
            rows = per.filter((pl.col("judges") == f"{a}|{b}") & (pl.col("query") == query))
            value = dict(zip(rows["statistic"], rows["value"]))
            assert rows["items"].to_list() == [part.height] * 2
            assert value["agreement"] == pytest.approx(float((part[a] == part[b]).mean()), abs=TOL)
            with _quiet():
                _close(value["cohen_kappa"], float(cohen_kappa_score(part[a].to_numpy(), part[b].to_numpy())))
    assert per.height == expected_rows


@pytest.mark.parametrize("fault, message", [
    (pl.DataFrame({"query": ["q"] * 3, "item": ["a"] * 3, "judge": ["x", "x", "y"], "relevance": [1, 2, 1]}),
     "judged twice by one judge"),
    (pl.DataFrame({"query": ["q"] * 2, "item": ["a"] * 2, "judge": ["x", None], "relevance": [1, 2]}), "'judge'"),
    (pl.DataFrame({"query": ["q"] * 2, "item": ["a"] * 2, "judge": ["x", "y"], "relevance": [1, None]}),
     "'relevance'"),
    (pl.DataFrame({"query": ["q"], "item": ["a"], "judge": ["x"], "relevance": [1]}), "two judges"),
    (pl.DataFrame({"query": ["q"] * 2, "item": ["a"] * 2, "judge": ["gpt|4", "y"], "relevance": [1, 0]}),
     r"'gpt\|4' has a '\|' in its name"),
])
def test_bad_judgments_are_refused_with_the_column_and_the_queries(fault: pl.DataFrame, message: str) -> None:
    with pytest.raises(rp.RankPolarsError, match=message):
        rp.agreement(fault, n_resamples=10)


@pytest.mark.parametrize("fault, message", [
    (pl.DataFrame({"query": ["q", "q", "r"], "item": ["a"] * 3, "judge": ["x", "y", "x"],
                   "relevance": [1.0, float("nan"), 0.0]}), r"'relevance' has 1 NaN grades or infinite ones .* query 'q'"),
    (pl.DataFrame({"query": ["q", "q", "r", "r"], "item": ["a"] * 4, "judge": ["x", "y"] * 2,
                   "relevance": [1.0, 0.0, float("inf"), -float("inf")]}), r"has 2 NaN grades or infinite ones .* query 'r'"),
])
def test_a_grade_that_is_no_number_is_refused_not_counted_as_a_category(fault: pl.DataFrame, message: str) -> None:
    """NaN and ±inf would otherwise be one more grade of the scale, above the others (the same
    values as a grade 4 would give), as evaluate's judgments check refuses them."""
    for statistic in (rp.agreement, rp.agreement_per_query, rp.grade_confusion):
        with pytest.raises(rp.DataError, match=message):
            statistic(fault, **({"n_resamples": 10} if statistic is rp.agreement else {}))


def test_judges_named_in_a_dict_and_other_columns_through_the_schema(tmp_path: Any) -> None:
    """{judge: judgments} (a TREC qrels file each) reads as one table with a judge column."""
    people = tmp_path / "people.qrels"
    people.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    llm = pl.DataFrame({"qid": ["q1", "q1", "q2"], "doc": ["a", "b", "c"], "grade": [1, 1, 2]})
    schema = rp.Schema(query="qid", item="doc", relevance="grade")
    got = rp.agreement({"people": str(people), "llm": llm}, n_resamples=10, schema=schema)
    kappa = got.filter((pl.col("judges") == "llm|people") & (pl.col("statistic") == "cohen_kappa"))["value"].item()
    assert kappa == pytest.approx(cohen_kappa_score([1, 1, 2], [1, 0, 2]), abs=TOL)


def test_many_judges_and_grades_past_the_packed_word_read_the_same() -> None:
    """22 judges of an 8-grade scale (4 bits each: more than a 63-bit word holds) take the
    per-judge path; alpha and Fleiss' kappa over all of them against the references."""
    rng = np.random.default_rng(5)
    names = [f"j{i:02d}" for i in range(22)]
    rows = [(f"q{q}", f"d{i}", j, float(min(7, max(0, base + rng.integers(-1, 2)))))
            for q in range(6) for i in range(5) for base in [int(rng.integers(0, 8))] for j in names if rng.random() < 0.9]
    frame = pl.DataFrame(rows, schema=["query", "item", "judge", "relevance"], orient="row")
    got = rp.agreement(frame, n_resamples=10).filter(pl.col("judges") == "all")
    values = dict(zip(got["statistic"], got["value"]))
    wide = _wide(frame)
    for level in LEVELS:
        _close(values[f"krippendorff_alpha_{level}"], _alpha(wide.select(names).to_numpy().T, level))
    _close(values["fleiss_kappa"], _fleiss(wide.drop_nulls(names).select(names).to_numpy()))
