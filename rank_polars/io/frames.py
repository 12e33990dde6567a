"""In-memory sources as Polars frames: pytrec_eval-style dicts, pandas, pyarrow and Arrow streams."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import polars as pl

from rank_polars.errors import RankPolarsError, examples


def from_dict(source: Mapping[Any, Any], what: str) -> pl.DataFrame:
    """``{qid: {docid: value}}`` as ``query, item, score`` (run) or ``query, item, relevance``."""
    value = "score" if what == "run" else "relevance"
    bad = next((q for q, docs in source.items() if not isinstance(docs, Mapping)), None)
    if bad is not None:
        raise RankPolarsError(
            f"{what}: a dict must map each query to a dict {{item: {value}}} (pytrec_eval style); query {bad!r} "
            f"maps to a {type(source[bad]).__name__}. For columns, pass pl.DataFrame(your_dict)"
        )
    queries = [str(q) for q, docs in source.items() for _ in range(len(docs))]
    items = [str(d) for docs in source.values() for d in docs]
    values = pl.Series(value, [v for docs in source.values() for v in docs.values()], strict=False)
    if not (values.dtype.is_numeric() or values.dtype == pl.Boolean or values.dtype == pl.Null):
        first = values.filter(values.cast(pl.Float64, strict=False).is_null()).head(1).to_list()
        raise RankPolarsError(f"{what}: dict values must be numbers (the {value}), got {first[0]!r}" if first else
                              f"{what}: dict values must be numbers (the {value}), got {values.dtype}")
    frame = pl.DataFrame([pl.Series("query", queries, pl.String), pl.Series("item", items, pl.String),
                          values.cast(pl.Float64 if what == "run" or values.dtype == pl.Null else values.dtype)])
    if len({str(q) for q in source}) < len(source) or frame.select(pl.struct("query", "item").is_duplicated().any()).item():
        raise _same_as_text(source, what)
    return frame


def _same_as_text(source: Mapping[Any, Any], what: str) -> RankPolarsError:
    """Two keys that are one id once read as text (``1`` and ``"1"``): which ones (the error path only)."""
    def clash(keys: Any) -> tuple[Any, Any] | None:
        seen: dict[str, Any] = {}
        for key in keys:
            if str(key) in seen:
                return seen[str(key)], key
            seen[str(key)] = key
        return None

    pair = clash(source)
    where = "queries"
    if pair is None:
        query, pair = next((q, c) for q, docs in source.items() if (c := clash(docs)) is not None)
        where = f"items of query {query!r}"
    return RankPolarsError(f"{what}: the dict's {where} {pair[0]!r} and {pair[1]!r} are one id once read as text "
                           f"({str(pair[0])!r}); ids are text: give each one key")


def _mixed_column(source: Any) -> tuple[str, list[Any]] | None:
    """The first pandas object column whose values are of several Python types, and one value of each."""
    for name in source.columns:
        column = source[name]
        if column.dtype != object:
            continue
        seen: dict[type, Any] = {}
        for value in column.dropna():
            seen.setdefault(type(value), value)
        if len(seen) > 1:
            return str(name), list(seen.values())
    return None


def _from_pandas(source: Any, what: str) -> pl.LazyFrame:
    named = any(name is not None for name in source.index.names)
    names = [str(n) for n in (list(source.index.names) if named else []) + list(source.columns) if n is not None]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RankPolarsError(f"{what}: the pandas DataFrame has more than one column (or index level) named "
                              f"{examples(twice)}; rename them, since a column is found by its name")
    try:
        return pl.from_pandas(source, include_index=named).lazy()
    except Exception as e:  # pyarrow's ArrowInvalid/ArrowTypeError, OverflowError, ...: said with the column
        mixed = _mixed_column(source)
        if mixed is not None:
            name, values = mixed
            kinds = " and ".join(f"{type(v).__name__} {v!r}" for v in values[:3])
            raise RankPolarsError(
                f"{what}: pandas column {name!r} mixes {kinds}, which have no one type; convert it, e.g. "
                f"df[{name!r}] = df[{name!r}].astype(str)"
            ) from None
        raise RankPolarsError(f"{what}: cannot read {_failing_column(source)}the pandas DataFrame: "
                              f"{_first_line(e)}") from None


def _failing_column(source: Any) -> str:
    """``"column 'x' (object) of "`` for the first column that does not convert alone (only on the error path)."""
    for name in source.columns:
        try:
            pl.from_pandas(source[[name]])
        except Exception:  # noqa: BLE001 - any failure names this column
            return f"column {str(name)!r} ({source[name].dtype}) of "
    return ""


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def from_foreign(source: Any, what: str = "run") -> pl.LazyFrame | None:
    """pandas, pyarrow or any Arrow stream as a LazyFrame; None for anything else.

    A conversion the engines cannot make (a pandas object column mixing ``1`` and ``"1"``,
    two columns of one name, an Arrow type Polars does not read) raises
    :class:`RankPolarsError` naming the column.
    """
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(source, pd.DataFrame):
        return _from_pandas(source, what)
    try:
        return _from_arrow(source)
    except RankPolarsError:
        raise
    except Exception as e:  # pyarrow's and Polars' own errors: said with the input
        raise RankPolarsError(f"{what}: cannot read the {type(source).__name__}: {_first_line(e)}") from None


def _from_arrow(source: Any) -> pl.LazyFrame | None:
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        ds = sys.modules.get("pyarrow.dataset")
        if ds is not None and isinstance(source, ds.Dataset):
            return pl.scan_pyarrow_dataset(source)
        if isinstance(source, pa.RecordBatchReader):  # read once, here
            source = source.read_all()
        if isinstance(source, (pa.Table, pa.RecordBatch)):
            return pl.DataFrame(pl.from_arrow(source)).lazy()
    if hasattr(source, "__arrow_c_stream__"):
        return pl.DataFrame(source).lazy()
    return None
