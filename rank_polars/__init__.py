"""rank_polars: ranking metrics as Polars expressions and SQL, with trec_eval's numbers.

The public API, grouped by what a user does:

* **evaluate** a log: :func:`evaluate`, with the column mapping of a :class:`Schema`; in a ``group_by``
  of your own, :func:`with_judgments` and the ``ranking`` namespace;
* **compare** versions: :func:`compare`, :func:`anova`, :func:`queries_needed`;
* **check** a log before trusting it: :func:`diagnose`;
* **judges**: :func:`agreement`, :func:`agreement_per_query`, :func:`grade_confusion`,
  :func:`leaderboard_agreement`, :func:`pool` (:mod:`rank_polars.judges`);
* **monitor** a ranker day by day: :func:`track` (incremental, per partition), :func:`gate` (a release gate);
* **clicks**: :func:`position_bias`, :func:`counterfactual`, :func:`counterfactual_sql`;
* **metric specs**, for a call's metric list and the ``ranking`` namespace: :func:`parse`,
  :class:`Measure` and one constructor per family (``rp.ndcg(k=10)``, ``rp.novelty(k=10, history=...)``);
* **inputs**: the TREC and ndeval file readers, :mod:`datasets` (the sample logs);
* **SQL**: :func:`to_sql`, :mod:`sql_macros` (the DuckDB macros of ``sql/``);
* **errors and warnings**.

Importing the package registers the ``ranking`` expression namespace (:mod:`.formula.namespace`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# evaluate
from rank_polars.schema import Schema
from rank_polars.evaluate import evaluate
from rank_polars.attach import with_judgments

# compare
from rank_polars.stats.compare import compare
from rank_polars.stats.anova import anova
from rank_polars.stats.planning import queries_needed

# check
from rank_polars.diagnose import diagnose

# judges
from rank_polars.judges.agreement import agreement, agreement_per_query, grade_confusion
from rank_polars.judges.leaderboard import leaderboard_agreement
from rank_polars.judges.pool import pool

# monitor
from rank_polars.monitor.track import track
from rank_polars.monitor.gate import gate

# clicks
from rank_polars.clicks.position_bias import position_bias
from rank_polars.clicks.counterfactual import counterfactual, counterfactual_sql

# metric specs and the ``ranking`` namespace (registered on import)
from rank_polars.formula import exprs, namespace  # noqa: F401
from rank_polars.measures import Measure, parse
from rank_polars.measures.ap import AP as ap
from rank_polars.measures.dcg import CG as cg, DCG as dcg, IDCG as idcg, NDCG as ndcg
from rank_polars.measures.others import ERR as err, RBP as rbp, Bpref as bpref, Judged as judged
from rank_polars.measures.rr import RR as rr
from rank_polars.measures.set_based import F1 as f1, Precision as precision, Recall as recall
from rank_polars.measures.set_based import RPrecision as rprec, Success as success
from rank_polars.measures.beyond import (
    aclt, aplt, arp, catalog_coverage, distributional_coverage, diversity, efd, entropy, epc, exposure_gini, gini, ils,
    novelty, pop_reo, pop_rsp, serendipity,
)

# inputs
from rank_polars.io import read_trec_qrels, read_trec_run
from rank_polars.io.subtopics import read_subtopic_qrels

# errors and warnings
from rank_polars.errors import (
    CoverageWarning, DataError, LowSupportWarning, MetricNameError, RankPolarsError, SmallSampleWarning,
)

if TYPE_CHECKING:
    from rank_polars import datasets
    from rank_polars.formula import sql_macros
    from rank_polars.sqlgen import to_sql

# Loaded on first use, so that ``import rank_polars`` stays light: sqlglot (to_sql) and the
# sample data are not needed to evaluate a log.
_LAZY = {
    "to_sql": ("rank_polars.sqlgen", "to_sql"),
    "datasets": ("rank_polars.datasets", None),
    "sql_macros": ("rank_polars.formula.sql_macros", None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'rank_polars' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    # evaluate
    "Schema", "evaluate", "with_judgments",
    # compare
    "anova", "compare", "queries_needed",
    # check
    "diagnose",
    # judges
    "agreement", "agreement_per_query", "grade_confusion", "leaderboard_agreement", "pool",
    # monitor
    "gate", "track",
    # clicks
    "counterfactual", "counterfactual_sql", "position_bias",
    # metric specs
    "Measure", "parse", "exprs",
    "ap", "bpref", "cg", "dcg", "err", "f1", "idcg", "judged", "ndcg", "precision", "rbp", "recall", "rprec", "rr",
    "success",
    "aclt", "aplt", "arp", "catalog_coverage", "distributional_coverage", "diversity", "efd", "entropy", "epc",
    "exposure_gini", "gini", "ils", "novelty", "pop_reo", "pop_rsp", "serendipity",
    # inputs
    "datasets", "read_subtopic_qrels", "read_trec_qrels", "read_trec_run",
    # SQL
    "sql_macros", "to_sql",
    # errors and warnings
    "CoverageWarning", "DataError", "LowSupportWarning", "MetricNameError", "RankPolarsError", "SmallSampleWarning",
]
