"""Fixtures of the command-line tests: one log, written in every input format."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rank_polars.datasets import chatbot_log


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return chatbot_log(n_questions=30, grades="0-3").select("model", "query", "item", "position", "score", "relevance")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, log: pl.DataFrame) -> dict[str, Path]:
    """The same log in every input format."""
    d = tmp_path_factory.mktemp("inputs")
    out = {"parquet": d / "log.parquet", "csv": d / "log.csv", "tsv": d / "log.tsv", "folder": d / "hive"}
    log.write_parquet(out["parquet"])
    log.write_csv(out["csv"])
    log.write_csv(out["tsv"], separator="\t")
    (d / "parts").mkdir()
    for (model,), part in log.partition_by("model", as_dict=True).items():
        part.write_parquet(d / "parts" / f"{model}.parquet")
        (out["folder"] / f"model={model}").mkdir(parents=True)
        part.drop("model").write_parquet(out["folder"] / f"model={model}" / "0.parquet")
    out["glob"] = d / "parts" / "*.parquet"
    # TREC: bot-v1's ranking as a run (rank column deliberately wrong: ignored), its judgments as qrels
    v1 = log.filter(pl.col("model") == "bot-v1")
    lines = [f"{r['query']} Q0 {r['item']} 999 {r['score']} bot-v1" for r in v1.iter_rows(named=True)]
    out["trec"] = d / "bot-v1.run"
    out["trec"].write_text("\n".join(lines) + "\n")
    judged = log.select("query", "item", "relevance").unique().sort("query", "item")
    out["qrels"] = d / "judgments.qrels"
    out["qrels"].write_text("".join(f"{q}\t0\t{i}\t{r}\n" for q, i, r in judged.iter_rows()))
    return out
