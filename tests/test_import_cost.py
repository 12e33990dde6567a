"""``import rank_polars`` and ``evaluate`` stay light: SciPy (compare's tests), sqlglot
(to_sql) and the sample data load only when used.  Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


def python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_evaluate_does_not_import_scipy():
    out = python(
        "import sys, polars as pl, rank_polars as rp\n"
        "log = pl.DataFrame({'query': ['q1', 'q1'], 'item': ['a', 'b'], 'position': [1, 2], 'relevance': [1, 0]})\n"
        "print(rp.evaluate(log, ['ndcg@3', 'map']).select('ndcg@3', 'map').row(0))\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'scipy'], 'scipy imported'\n"
        "from rank_polars import compare, stats\n"
        "assert 'scipy' not in sys.modules, 'scipy imported by importing compare/stats'\n"
    )
    assert out == "(1.0, 1.0)"


def test_import_does_not_load_sqlglot_and_lazy_names_resolve():
    python(
        "import sys, rank_polars as rp\n"
        "assert 'sqlglot' not in sys.modules, 'sqlglot imported by import rank_polars'\n"
        "import rank_polars.sqlgen\n"  # importing the submodule first must not shadow anything
        "assert callable(rp.to_sql) and callable(rp.compare) and callable(rp.diagnose)\n"
        "from rank_polars import datasets, sql_macros, to_sql\n"
        "assert to_sql is rp.to_sql and datasets.sample_log().height > 0\n"
        "try:\n    rp.no_such_name\nexcept AttributeError as e:\n    assert 'no_such_name' in str(e)\n"
    )
