"""In-memory sources as Polars frames: pytrec_eval-style dicts, pandas, pyarrow and Arrow streams."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import polars as pl

from ..errors import RankPolarsError


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
    return pl.DataFrame([pl.Series("query", queries, pl.String), pl.Series("item", items, pl.String),
                         values.cast(pl.Float64 if what == "run" or values.dtype == pl.Null else values.dtype)])


def from_foreign(source: Any) -> pl.LazyFrame | None:
    """pandas, pyarrow or any Arrow stream as a LazyFrame; None for anything else."""
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(source, pd.DataFrame):
        named = any(name is not None for name in source.index.names)
        return pl.from_pandas(source, include_index=named).lazy()
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
