"""``rp.Schema``: the one mapping from the data model's roles to a table's column names.

A log names its columns its own way (``search_id``, ``sku``, ``slot``, ``grade``); the roles
they play are the data model's (``docs/data-model.md``): ``query``, ``item``, ``position``,
``score``, ``relevance``, ``click``.  A :class:`Schema` says it once, and every entry point takes it
as ``schema=`` (``evaluate``, ``to_sql``, ``compare``, ``diagnose``, ``position_bias``,
``counterfactual``); the command line reads the same mapping from a project file
(:mod:`rank_polars.project`).

The judgments are a table of their own with a ``query``, ``item`` and ``relevance``; their names
default to the log's, and ``judgments=Schema(relevance="grade")`` names only what differs.

>>> import rank_polars as rp
>>> schema = rp.Schema(query="search_id", relevance="label", judgments=rp.Schema(relevance="grade"))
>>> schema
Schema(query='search_id', relevance='label', judgments=Schema(relevance='grade'))
>>> schema.column("query"), schema.column("item"), schema.judged("query"), schema.judged("relevance")
('search_id', 'item', 'search_id', 'grade')
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields
from typing import Any, Mapping

from rank_polars.errors import RankPolarsError

#: The roles of a log's columns and their default names (the data model's).
DEFAULTS: dict[str, str] = {
    "query": "query", "item": "item", "position": "position", "score": "score", "relevance": "relevance",
    "click": "click", "time": "date",
    "judge": "judge",
}
#: The roles a judgments table has.
JUDGMENT_ROLES = ("query", "item", "relevance", "judge")


@dataclass(frozen=True)
class Schema:
    """Column names by role; a role left ``None`` has its default name (the role's own name).

    Parameters
    ----------
    query, item
        The query (or user, session) id and the item id columns.
    position, score
        The rank shown (1 = first) or the ranker's score (higher first).
    relevance
        The relevance label of a shown row (a log that carries its labels).
    click
        The click column the click metrics read (``ctr@10``, ``click_rr``, ...).
    time
        The partition a row was logged in (default ``date``): :func:`rank_polars.track` evaluates
        each value once (a hive partition ``date=2026-11-27/``, a file, or a value of the column).
    judge
        The judgments' column saying who judged (a person, an LLM, clicks): several label sets in
        one table, chosen with ``evaluate(..., judge="llm-a")`` (:mod:`rank_polars.judges`).
    judgments
        The judgments' own names (a ``Schema`` with ``query``, ``item``, ``relevance`` and ``judge`` only);
        a role it leaves ``None`` has the log's name.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"search_id": ["s1", "s1", "s2"], "sku": ["a", "b", "a"], "slot": [1, 2, 1],
    ...                     "label": [0, 2, 1]})
    >>> judgments = pl.DataFrame({"search_id": ["s1", "s1", "s2"], "sku": ["a", "b", "a"], "grade": [0, 2, 1]})
    >>> schema = rp.Schema(query="search_id", item="sku", position="slot", relevance="label",
    ...                    judgments=rp.Schema(relevance="grade"))
    >>> rp.evaluate(log, ["ndcg@10", "mrr"], qrels=judgments, labels="run", schema=schema)
    shape: (1, 3)
    ┌─────────┬──────────┬──────┐
    │ queries ┆ ndcg@10  ┆ mrr  │
    │ ---     ┆ ---      ┆ ---  │
    │ u32     ┆ f64      ┆ f64  │
    ╞═════════╪══════════╪══════╡
    │ 2       ┆ 0.815465 ┆ 0.75 │
    └─────────┴──────────┴──────┘
    """

    query: str | None = None
    item: str | None = None
    position: str | None = None
    score: str | None = None
    relevance: str | None = None
    click: str | None = None
    time: str | None = None
    judge: str | None = None
    judgments: Schema | None = None

    def __post_init__(self) -> None:
        for role in DEFAULTS:
            name = getattr(self, role)
            if name is not None and (not isinstance(name, str) or not name or "\x00" in name):
                # the words of the validation layer's check of every column name (validate.check_names)
                raise RankPolarsError(f"{role}: a column name must be a non-empty string without NUL characters, "
                                      f"got {name!r}")
        j = self.judgments
        if j is None:
            return
        if not isinstance(j, Schema):
            raise RankPolarsError(f"Schema: judgments= must be a Schema, got {type(j).__name__}")
        extra = [role for role in (*DEFAULTS, "judgments") if role not in JUDGMENT_ROLES and getattr(j, role) is not None]
        if extra:
            raise RankPolarsError(f"Schema: the judgments have only {', '.join(JUDGMENT_ROLES)} columns; "
                                  f"judgments=Schema({extra[0]}=...) names none of them")

    def __repr__(self) -> str:
        given = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if getattr(self, f.name) is not None]
        return f"Schema({', '.join(given)})"

    def column(self, role: str) -> str:
        """The log's column for ``role`` (its default name when not set)."""
        name = getattr(self, role)
        return DEFAULTS[role] if name is None else name

    def judged(self, role: str) -> str:
        """The judgments' column for ``role`` (``query``, ``item`` or ``relevance``): theirs, else the log's."""
        own = None if self.judgments is None else getattr(self.judgments, role)
        return self.column(role) if own is None else own

    @property
    def judgments_differ(self) -> bool:
        """Whether the judgments name a role otherwise than the log."""
        return any(self.judged(role) != self.column(role) for role in JUDGMENT_ROLES)

    def with_names(self, **names: str | None) -> Schema:
        """This schema with the flat keywords of an entry point (``query="search_id"``, ...) set.

        A keyword left ``None`` takes the schema's name; a keyword and the schema naming a role
        differently is an error, not a silent choice.
        """
        out = dict(names)
        for role, name in names.items():
            mine = getattr(self, role)
            if name is not None and mine is not None and name != mine:
                raise RankPolarsError(f"{role}={name!r} and schema={self!r} name the {role} column differently: "
                                      f"give it once")
            out[role] = mine if name is None else name
        return Schema(**{**{r: getattr(self, r) for r in DEFAULTS}, **out}, judgments=self.judgments)

    @classmethod
    def from_tables(cls, columns: Mapping[str, Any] | None, judgments: Mapping[str, Any] | None = None,
                    where: str = "") -> Schema:
        """The schema of a project file's ``[columns]`` and ``[judgments]`` tables (``where`` names the
        file in errors); an unknown role is an error with the closest known one."""
        def names(table: Mapping[str, Any] | None, roles: tuple[str, ...], section: str) -> dict[str, str]:
            table = dict(table or {})
            for key, value in table.items():
                if key not in roles:
                    close = difflib.get_close_matches(key, roles, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise RankPolarsError(f"{where}[{section}]: unknown role {key!r}{hint}; the roles are "
                                          f"{', '.join(roles)}")
                if not isinstance(value, str) or not value:
                    raise RankPolarsError(f"{where}[{section}]: {key} must be a column name (a string), got {value!r}")
            return table

        log = names(columns, tuple(DEFAULTS), "columns")
        judged = names(judgments, JUDGMENT_ROLES, "judgments")
        return cls(**log, judgments=cls(**judged) if judged else None)


def as_schema(schema: Schema | None, **names: str | None) -> Schema:
    """The schema of an entry point's call: ``schema=`` (default: every role its own name) with the
    flat keywords given beside it (see :meth:`Schema.with_names`)."""
    if schema is not None and not isinstance(schema, Schema):
        raise RankPolarsError(f"schema= must be a rank_polars.Schema, got {type(schema).__name__}")
    return (schema or Schema()).with_names(**names)


__all__ = ["DEFAULTS", "JUDGMENT_ROLES", "Schema", "as_schema"]
