"""``import rank_polars`` stays light: what only to_sql or the sample data need is loaded on use."""

from __future__ import annotations

import subprocess
import sys


def test_import_does_not_load_sqlglot_and_lazy_names_resolve():
    code = (
        "import sys, rank_polars as rp\n"
        "assert 'sqlglot' not in sys.modules, 'sqlglot imported by import rank_polars'\n"
        "import rank_polars.sqlgen\n"  # importing the submodule first must not shadow anything
        "assert callable(rp.to_sql) and callable(rp.compare) and callable(rp.diagnose)\n"
        "from rank_polars import datasets, sql_macros, to_sql\n"
        "assert to_sql is rp.to_sql and datasets.sample_log().height > 0\n"
        "try:\n    rp.no_such_name\nexcept AttributeError as e:\n    assert 'no_such_name' in str(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
