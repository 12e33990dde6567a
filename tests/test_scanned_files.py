"""A LazyFrame that is only ``pl.scan_parquet(files)`` is read as those files.

The DuckDB engine then reads the files itself, as from paths, instead of having Polars stream
the LazyFrame into a copy first; every other LazyFrame keeps its own reading.  The numbers must
not depend on the route: each case compares the LazyFrame with the frame it holds.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
import rank_polars.engines.duckdb_engine as duckdb_engine
import rank_polars.io as rio

METRICS = ["ndcg@3", "ap", "rr", "p@2"]


def _log(folder: Path) -> tuple[Path, pl.DataFrame]:
    # query and item ids that look like numbers in the log and are text in the judgments:
    # the one id rule casts them, which the files route must do as the frame route does
    run = pl.DataFrame({
        "model": ["a"] * 6 + ["b"] * 6,
        "query": [1, 1, 1, 2, 2, 2] * 2,
        "item": [10, 11, 12, 20, 21, 22, 12, 11, 10, 22, 20, 21],
        "position": [1, 2, 3] * 4,
    })
    qrels = pl.DataFrame({"query": ["1", "1", "2", "2"], "item": ["10", "12", "21", "22"],
                          "relevance": [2, 1, 1, 3]})
    run.write_parquet(folder / "run.parquet")
    return folder / "run.parquet", qrels


def test_a_plain_scan_is_its_files_and_nothing_else_is(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    files = rio.scanned_files(pl.scan_parquet(path))
    assert files is not None and files.files == (str(path),)
    assert rio.scanned_files(pl.scan_parquet(path).filter(pl.col("model") == "a")) is None
    assert rio.scanned_files(pl.scan_parquet(path).select("query", "item", "position")) is None
    assert rio.scanned_files(pl.scan_parquet(path, low_memory=True)) is None
    assert rio.scanned_files(pl.scan_parquet(path).collect().lazy()) is None
    assert rio.scanned_files(pl.scan_csv(tmp_path / "absent.csv")) is None


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_plain_scan_gives_what_its_frame_gives(engine: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path, qrels = _log(tmp_path)
    expected = rp.evaluate(pl.read_parquet(path), METRICS, qrels=qrels, by="model", engine=engine)

    def no_copy(*args: object, **kwargs: object) -> str:
        raise AssertionError("a plain scan was streamed into a copy instead of read as its files")

    monkeypatch.setattr(duckdb_engine, "stream_to_parquet", no_copy)
    got = rp.evaluate(pl.scan_parquet(path), METRICS, qrels=qrels, by="model", engine=engine)
    assert_frame_equal(got, expected)


def test_a_filtered_scan_keeps_its_own_reading(tmp_path: Path) -> None:
    path, qrels = _log(tmp_path)
    lazy = pl.scan_parquet(path).filter(pl.col("model") == "b")
    expected = rp.evaluate(lazy.collect(), METRICS, qrels=qrels, by="model", engine="duckdb")
    assert_frame_equal(rp.evaluate(lazy, METRICS, qrels=qrels, by="model", engine="duckdb"), expected)
    assert expected["model"].to_list() == ["b"]


def test_a_partitioned_folder_keeps_polars_types(tmp_path: Path) -> None:
    """Polars types a partition folder's values (``day=3`` is an integer): such a scan is not
    read as files, whose partition values both engines read as text."""
    path, qrels = _log(tmp_path)
    frame = pl.read_parquet(path).with_columns(day=pl.lit(3))
    frame.write_parquet(tmp_path / "hive", partition_by="day")
    lazy = pl.scan_parquet(tmp_path / "hive")
    assert rio.scanned_files(lazy) is None
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(lazy, METRICS, qrels=qrels, by=["model", "day"], engine=engine)
        assert_frame_equal(got, rp.evaluate(lazy.collect(), METRICS, qrels=qrels, by=["model", "day"], engine=engine))
        assert got.schema["day"].is_integer()
