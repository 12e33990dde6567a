"""The DuckDB macro files (``sql/*.sql``): where they are, and loading them on a connection.

The wheel ships the repository's top-level ``sql/`` folder as ``rank_polars/sql``; in an
editable checkout the repository's ``sql/`` is used.

>>> import duckdb
>>> from rank_polars import sql_macros
>>> con = duckdb.connect()
>>> sql_macros.load(con)
>>> con.sql("SELECT round(ndcg([3, 2, 0, 1], 3), 4) AS ndcg").fetchall()
[(0.895,)]
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

ALL = "all.sql"


def path() -> Path:
    """The folder holding ``all.sql`` and one ``.sql`` file per macro."""
    installed = Path(str(resources.files("rank_polars"))) / "sql"
    if (installed / ALL).is_file():
        return installed
    checkout = Path(__file__).resolve().parents[2] / "sql"
    if (checkout / ALL).is_file():
        return checkout
    raise FileNotFoundError(f"rank_polars SQL macros not found (looked in {installed} and {checkout})")


def load(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) every macro on ``con``: runs ``all.sql``, the other files concatenated."""
    con.execute((path() / ALL).read_text())


__all__ = ["load", "path"]
