"""The references of tests/test_counterfactual*.py.

* Open Bandit Pipeline (``obp`` 0.5.7, ``obp/ope/estimators_slate.py``: SlateStandardIPS,
  SlateIndependentIPS, SlateRewardInteractionIPS and their SelfNormalized* forms), run as it
  is.  obp pins Python < 3.11 and stale numpy / torch versions, so it is installed here with
  ``--no-deps --ignore-requires-python`` when missing.  ``obp/__init__.py`` imports its whole
  package (policies, simulators: torch), and ``obp/utils.py`` imports torch at the top for one
  type annotation and one ``isinstance`` in a function the slate estimators never call; so
  ``obp.utils`` and ``obp.ope.estimators_slate`` are loaded from their files under empty parent
  packages, with a stand-in ``torch`` module present only while ``obp.utils`` executes.  Every
  line of the estimators and of their input checks runs unchanged.
* Position-based IPS for additive metrics: the formula of Joachims, Swaminathan & Schnabel,
  "Unbiased Learning-to-Rank with Biased Feedback" (WSDM 2017), eq. 5 (Δ_IPS: each click
  weighted by λ(rank) / Q(o | x, ȳ, r), the examination propensity of its logged position),
  and the additive-metric weights of Agarwal et al., "Counterfactual Learning-to-Rank for
  Additive Metrics and Deep Models" (2019), §3 (DCG: 1 / log2(1 + rank); precision@k: 1/k
  inside the cutoff; RBP: (1 - p) p^(rank - 1), Moffat & Zobel 2008), written as plain loops.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import sys
import types
from typing import Any

import numpy as np

from . import system_deps

OBP_VERSION = "0.5.7"


@functools.lru_cache(maxsize=1)
def obp_slate() -> types.ModuleType:
    """``obp.ope.estimators_slate``, loaded as described in the module docstring."""
    if "obp.ope.estimators_slate" in sys.modules:
        return sys.modules["obp.ope.estimators_slate"]
    system_deps.ensure_reference("obp", f"obp=={OBP_VERSION}", "the slate estimators' reference; it pins Python < 3.11",
                                 "--ignore-requires-python")
    spec = importlib.util.find_spec("obp")
    assert spec is not None and spec.submodule_search_locations
    base = list(spec.submodule_search_locations)[0]
    for name, path in (("obp", base), ("obp.ope", base + "/ope")):
        package = types.ModuleType(name)
        package.__path__ = [path]
        sys.modules.setdefault(name, package)
    stand_in = "torch" not in sys.modules and importlib.util.find_spec("torch") is None
    if stand_in:
        torch = types.ModuleType("torch")
        torch.Tensor = torch.tensor = type("Tensor", (), {})  # type: ignore[attr-defined]
        sys.modules["torch"] = torch
    try:
        importlib.import_module("obp.utils")
        module = importlib.import_module("obp.ope.estimators_slate")
    except BaseException:
        for name in ("obp.ope.estimators_slate", "obp.utils", "obp.ope", "obp"):  # a retry starts afresh
            sys.modules.pop(name, None)
        raise
    finally:
        if stand_in:
            del sys.modules["torch"]
    return module


#: our estimator name -> (OBP class, OBP's keyword for the logging / evaluation propensities)
OBP_CLASSES = {
    "standard_ips": ("SlateStandardIPS", "pscore", "evaluation_policy_pscore"),
    "independent_ips": ("SlateIndependentIPS", "pscore_item_position", "evaluation_policy_pscore_item_position"),
    "rips": ("SlateRewardInteractionIPS", "pscore_cascade", "evaluation_policy_pscore_cascade"),
    "sn_standard_ips": ("SelfNormalizedSlateStandardIPS", "pscore", "evaluation_policy_pscore"),
    "sn_independent_ips": ("SelfNormalizedSlateIndependentIPS", "pscore_item_position",
                           "evaluation_policy_pscore_item_position"),
    "sn_rips": ("SelfNormalizedSlateRewardInteractionIPS", "pscore_cascade", "evaluation_policy_pscore_cascade"),
}


def obp_value(estimator: str, slate_id: np.ndarray, position0: np.ndarray, reward: np.ndarray,
              behaviour: np.ndarray, evaluation: np.ndarray, len_list: int) -> float:
    """OBP's ``estimate_policy_value``; where a self-normalised form divides 0 by 0 at a
    position that no weight reaches (NaN for the whole estimate in OBP), OBP's own per-row
    rewards (``_estimate_round_rewards``) are summed without those rows, our documented 0."""
    name, b_kw, e_kw = OBP_CLASSES[estimator]
    est = getattr(obp_slate(), name)(len_list=len_list)
    kwargs = {"slate_id": slate_id, "reward": reward, "position": position0, b_kw: behaviour, e_kw: evaluation}
    value = est.estimate_policy_value(**kwargs)
    if math.isnan(value) and estimator.startswith("sn"):
        with np.errstate(invalid="ignore", divide="ignore"):
            rows = est._estimate_round_rewards(reward=reward, position=position0, behavior_policy_pscore=behaviour,
                                               evaluation_policy_pscore=evaluation)
        value = float(np.nansum(rows) / np.unique(slate_id).shape[0])
    return float(value)


def ips_reference(log: list[dict[str, Any]], candidate: dict[Any, dict[Any, int]], theta: dict[int, float],
                  metric: tuple[str, int | None, float], clip: float | None, keys: tuple[str, ...]) -> float:
    """Δ_IPS of one group, averaged over its logged rankings (plain loops over rows)."""
    kind, k, persistence = metric
    rankings = {tuple(row[c] for c in keys) for row in log}
    total = 0.0
    for row in log:
        if row["click"] == 0:
            continue
        ranks = candidate.get(row["query"], {})
        r = ranks.get(row["item"])
        if r is None or (k is not None and r > k):
            continue
        # ctr@k divides by the candidate's rows ranked at most k (evaluate's ctr@k)
        n = len(ranks) if kind != "ctr" or not k else sum(1 for rank in ranks.values() if rank <= k)
        lam = {"cg": 1.0, "dcg": 1.0 / math.log2(r + 1), "p": 1.0 / (k if k else n),
               "rbp": (1 - persistence) * persistence ** (r - 1), "clicks": theta.get(r, math.nan),
               "ctr": theta.get(r, math.nan) / n}[kind]
        w = 1.0 / theta[row["position"]]
        if clip is not None:
            w = min(w, clip)
        total += lam * row["click"] * w
    return total / len(rankings)
