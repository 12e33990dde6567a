"""rank_polars: ranking metrics as Polars expressions and SQL, with trec_eval's numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import exprs, namespace  # noqa: F401  (namespace registers ``.ranking`` on import)
from .errors import CoverageWarning, DataError, MetricNameError, RankPolarsError, SmallSampleWarning
from .measures import Measure, parse
from .measures.ap import AP as ap
from .measures.dcg import CG as cg, DCG as dcg, IDCG as idcg, NDCG as ndcg
from .measures.others import ERR as err, RBP as rbp, Bpref as bpref, Judged as judged
from .measures.rr import RR as rr
from .measures.beyond import (  # beyond accuracy: rp.novelty(k=10, history=train)
    aclt, aplt, arp, catalog_coverage, distributional_coverage, diversity, efd, entropy, epc, exposure_gini, gini, ils,
    novelty, pop_reo, pop_rsp, serendipity,
)
from .measures.set_based import F1 as f1, Precision as precision, Recall as recall
from .measures.set_based import RPrecision as rprec, Success as success
from .evaluate import evaluate
from .compare import compare
from .anova import anova
from .planning import queries_needed
from .diagnose import diagnose
from .io import read_trec_qrels, read_trec_run
from .ndeval import read_subtopic_qrels

if TYPE_CHECKING:
    from . import datasets, sql_macros
    from .sqlgen import to_sql

# Loaded on first use, so that ``import rank_polars`` stays light: sqlglot (to_sql) and the
# sample data are not needed to evaluate a log.  (Only names that are not also the names of
# their own submodules: importing ``rank_polars.compare`` would replace a lazy ``compare``.)
_LAZY = {"to_sql": ("sqlgen", "to_sql"), "datasets": ("datasets", None), "sql_macros": ("sql_macros", None)}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'rank_polars' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(f".{module_name}", __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value

__version__ = "0.1.0"

__all__ = [
    "CoverageWarning", "DataError", "Measure", "MetricNameError", "RankPolarsError", "SmallSampleWarning",
    "anova", "ap", "bpref", "cg", "compare", "dcg", "diagnose", "err", "evaluate", "exprs", "f1", "idcg", "judged", "ndcg",
    "datasets", "parse", "precision", "queries_needed", "rbp", "read_trec_qrels", "read_trec_run", "recall", "rprec", "rr", "sql_macros", "success", "to_sql",
]
__all__ += ["read_subtopic_qrels"]  # ndeval's subtopic judgments (rank_polars.measures.diversity)
__all__ += [  # beyond accuracy (rank_polars.measures.beyond)
    "aclt", "aplt", "arp", "catalog_coverage", "distributional_coverage", "diversity", "efd", "entropy", "epc",
    "exposure_gini", "gini", "ils", "novelty", "pop_reo", "pop_rsp", "serendipity",
]
from .position_bias import position_bias  # noqa: E402  (issue 20)
__all__ += ["position_bias"]  # examination per position from a click log (rank_polars.position_bias)
from .counterfactual import LowSupportWarning, counterfactual, counterfactual_sql  # noqa: E402  (issue 20)
__all__ += ["LowSupportWarning", "counterfactual", "counterfactual_sql"]  # off-policy estimates (rank_polars.counterfactual)
