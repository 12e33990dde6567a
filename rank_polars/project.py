"""A project's column mapping, from a file found from the working directory upward.

A team writes its log's column names once, beside its code, as ruff or dbt read theirs:
``rank-polars.toml``, or the ``[tool.rank-polars]`` table of ``pyproject.toml``::

    [columns]            # the log's roles (rp.Schema's names)
    query = "search_id"
    item = "sku"
    position = "slot"
    relevance = "label"

    [judgments]          # the judgments' own names, where they differ from the log's
    relevance = "grade"

In ``pyproject.toml`` the tables are ``[tool.rank-polars.columns]`` and
``[tool.rank-polars.judgments]``.  The nearest folder with either file wins (in one folder,
``rank-polars.toml`` before ``pyproject.toml``; a ``pyproject.toml`` without the table is passed
over).  The command line reads it (a flag beats the file); in Python,
``rp.evaluate(..., schema=project_schema())`` does the same.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "rank-polars.toml").write_text('[columns]\\nquery = "search_id"\\n[judgments]\\nrelevance = "grade"\\n')
>>> (folder / "sub").mkdir()
>>> found = find_project_file(folder / "sub")
>>> found.name, read_schema(found)
('rank-polars.toml', Schema(query='search_id', judgments=Schema(relevance='grade')))
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rank_polars.errors import RankPolarsError
from rank_polars.schema import Schema

FILE = "rank-polars.toml"
PYPROJECT = "pyproject.toml"
TABLES = ("columns", "judgments")


def _toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise RankPolarsError(f"{path}: not valid TOML ({e})") from e


def _section(path: Path) -> dict[str, Any] | None:
    """The mapping's tables of ``path``: the whole file for ``rank-polars.toml``, the
    ``[tool.rank-polars]`` table of a ``pyproject.toml`` (None when it has none)."""
    data = _toml(path)
    if path.name == PYPROJECT:
        data = data.get("tool", {}).get("rank-polars")
        if data is None:
            return None
    unknown = [key for key in data if key not in TABLES]
    if unknown:
        raise RankPolarsError(f"{path}: unknown table {unknown[0]!r}; the tables are {', '.join(TABLES)}")
    return data


def find_project_file(start: str | Path | None = None) -> Path | None:
    """The nearest ``rank-polars.toml``, or ``pyproject.toml`` with a ``[tool.rank-polars]`` table,
    in ``start`` (default: the working directory) or a folder above it; None if there is none."""
    here = Path.cwd() if start is None else Path(start)
    for folder in [here.resolve(), *here.resolve().parents]:
        own = folder / FILE
        if own.is_file():
            return own
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _section(pyproject) is not None:
            return pyproject
    return None


def read_schema(path: str | Path) -> Schema:
    """The :class:`rank_polars.Schema` a project file writes (its ``[columns]`` and ``[judgments]``)."""
    path = Path(path)
    data = _section(path) or {}
    for table in TABLES:
        if not isinstance(data.get(table, {}), dict):
            raise RankPolarsError(f"{path}: [{table}] must be a table of role = \"column\" lines")
    return Schema.from_tables(data.get("columns"), data.get("judgments"), where=f"{path}: ")


def project_schema(start: str | Path | None = None) -> Schema:
    """The schema of the nearest project file (:func:`find_project_file`), or the default one."""
    path = find_project_file(start)
    return Schema() if path is None else read_schema(path)


__all__ = ["FILE", "find_project_file", "project_schema", "read_schema"]
