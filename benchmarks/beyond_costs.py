"""The beyond-accuracy performance goals: ``ils@10`` and ``novelty@10`` against ``ndcg@10`` on the same
log, in the Polars and DuckDB engines, and against Microsoft ``recommenders``' pandas functions.

    python benchmarks/beyond_costs.py --lists 200000            # 20M shown rows: generate if missing, time, print
    python benchmarks/beyond_costs.py --lists 20000 --only polars-ils@10
    python benchmarks/beyond_costs.py --lists 200000 --reference-lists 20000   # recommenders on 20k lists

The data (deterministic, seed ``--seed``), under ``benchmarks/data/beyond-<lists>``:

* ``log.parquet``: ``--lists`` users, each shown 100 distinct items at positions 1..100
  (``user, item, position, relevance``; relevance 1 with probability 5%); items drawn from a
  catalogue of ``--items`` (1M) with popularity falling as (rank + 10)^-0.8;
* ``history.parquet``: 25 past interactions per user (``user, item``; repeats dropped), drawn
  from the same popularity (so some shown items were never in the history: novelty runs with
  ``unseen="zero"``, recommenders' convention); a user is never shown an item of their history;
* ``catalog.parquet``: every item; ``features.parquet``: every item's 64-dimensional float32
  vector (``item, vec``), normal draws.

Each measurement is a fresh Python process reading the Parquet files; reported: the
``evaluate`` call's wall clock (and CPU time, ``time.process_time``, in the comparison with
recommenders: its function against our ``evaluate`` call on the same in-memory rows) and the
whole process's CPU time (user + system, all threads:
the fairer number on a shared machine), and peak RSS (``os.wait4``).  recommenders runs on the
top 10 rows of every list (``novelty``), of the first ``--reference-lists`` lists (the
co-occurrence ``diversity``: it pairs every two items of each user's history) and of the first
``--feature-lists`` (its feature-vector diversity, a row-by-row Python cross join), with the
history of those users, and ours on exactly the same rows, so the ratios compare like with like;
the values are checked to agree (1e-9) before any time is reported.  Beside ``novelty`` run two
floors without any check: the plan an expert would write in Polars (``hand``) and NumPy on these
integer ids (``hand_numpy``: a count array, no hashing), the least any novelty can cost here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measured import measured

SHOWN, HISTORY_PER_USER, DIM = 100, 25, 64
MEASURES = ("ndcg@10", "ils@10", "novelty@10", "catalog_coverage@10")


def popularity_cdf(n_items: int) -> np.ndarray:
    weights = 1.0 / (np.arange(n_items, dtype=np.float64) + 10.0) ** 0.8
    return np.cumsum(weights) / weights.sum()


def generate(out: Path, lists: int, items: int, seed: int) -> None:
    """Write the four tables (see the module docstring), chunk by chunk of users."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 21])
    cdf = popularity_cdf(items)
    # items are shuffled ids, so popularity does not follow the id order
    ids = rng.permutation(items).astype(np.int64)
    logs, histories = [], []
    chunk = 20_000
    for u0 in range(0, lists, chunk):
        n = min(chunk, lists - u0)
        past = ids[np.searchsorted(cdf, rng.random(n * HISTORY_PER_USER), side="right").clip(max=items - 1)]
        past = pl.DataFrame({"user": np.repeat(np.arange(u0, u0 + n, dtype=np.int64), HISTORY_PER_USER), "item": past})
        past = past.unique(maintain_order=True)  # recommenders assumes no repeated history row
        histories.append(past)
        # 130 draws per user, the first 100 distinct ones the user has not had kept (recommenders
        # refuses a shown item already in the user's history)
        draws = ids[np.searchsorted(cdf, rng.random(n * 130), side="right").clip(max=items - 1)]
        frame = pl.DataFrame({"user": np.repeat(np.arange(u0, u0 + n, dtype=np.int64), 130), "item": draws})
        frame = frame.unique(["user", "item"], keep="first", maintain_order=True)
        frame = frame.join(past, on=["user", "item"], how="anti", maintain_order="left")
        frame = frame.with_columns(pl.int_range(1, pl.len() + 1).over("user").alias("position"))
        frame = frame.filter(pl.col("position") <= SHOWN)
        frame = frame.with_columns(pl.Series("relevance", (rng.random(frame.height) < 0.05).astype(np.int8)))
        logs.append(frame)
    pl.concat(logs).write_parquet(out / "log.parquet", row_group_size=1 << 20)
    pl.concat(histories).write_parquet(out / "history.parquet")
    pl.DataFrame({"item": np.arange(items, dtype=np.int64)}).write_parquet(out / "catalog.parquet")
    vec = rng.standard_normal((items, DIM), dtype=np.float32)
    features = pl.DataFrame({"item": np.arange(items, dtype=np.int64),
                             "vec": pl.Series(vec).cast(pl.Array(pl.Float32, DIM))})
    features.write_parquet(out / "features.parquet")
    log = pl.scan_parquet(out / "log.parquet").select(pl.len(), pl.col("user").n_unique()).collect()
    meta = {"lists": int(log.item(0, 1)), "rows": int(log.item(0, 0)), "items": items, "dim": DIM, "seed": seed,
            "history_rows": sum(h.height for h in histories)}
    (out / "meta.json").write_text(json.dumps(meta))


def history(data: Path, lists: int | None) -> pl.LazyFrame:
    """The history; for a comparison with recommenders, only the users of its lists (its
    co-occurrence pairs every two items of a user's history: 125M pairs for all 200k users)."""
    frame = pl.scan_parquet(data / "history.parquet")
    return frame if lists is None else frame.filter(pl.col("user") < lists)


def top10(data: Path, lists: int) -> pl.LazyFrame:
    """The top 10 rows of the first ``lists`` lists: the rows recommenders is given, and so ours
    and the floors' in a comparison with it."""
    return pl.scan_parquet(data / "log.parquet").filter((pl.col("user") < lists) & (pl.col("position") <= 10))


def shown_features(data: Path, lists: int) -> pl.DataFrame:
    """The vectors of the items the first ``lists`` lists show in their top 10: what recommenders
    is given (its similarity is a cross join of this table), and so what ours is given too."""
    shown = top10(data, lists)
    return pl.scan_parquet(data / "features.parquet").join(shown.select("item").unique(), on="item", how="semi").collect()


def spec(name: str, data: Path, lists: int | None = None) -> object:
    import rank_polars as rp

    past: object = str(data / "history.parquet") if lists is None else history(data, lists).collect()
    if name == "ils@10":
        return rp.ils(k=10, features=str(data / "features.parquet"))
    if name == "novelty@10":
        return rp.novelty(k=10, history=past, unseen="zero")
    if name == "diversity_cooc@10":
        return rp.diversity(k=10, history=past, sim="cooccurrence")
    if name == "diversity@10":
        return rp.diversity(k=10, features=str(data / "features.parquet") if lists is None else shown_features(data, lists))
    if name == "serendipity@10":
        # the history's items need vectors too: the whole features table
        return rp.serendipity(k=10, history=past, features=str(data / "features.parquet"))
    if name == "catalog_coverage@10":
        return rp.catalog_coverage(k=10, catalog=str(data / "catalog.parquet"))
    return name


def one(engine: str, measure: str, data: Path, lists: int | None) -> dict[str, object]:
    """Inside the child: one evaluate call (on the first ``lists`` lists when given)."""
    import rank_polars as rp

    log: object = str(data / "log.parquet")
    if lists is not None:  # the reference's rows: the top 10 of the first lists
        log = top10(data, lists).collect()
    metric = spec(measure, data, lists)
    t0, c0 = time.perf_counter(), time.process_time()
    out = rp.evaluate(log, [metric], query="user", engine=engine)
    return {"wall": time.perf_counter() - t0, "call_cpu": time.process_time() - c0, "value": float(out.row(0)[-1])}


def reference(measure: str, data: Path, lists: int) -> dict[str, object]:
    """Inside the child: recommenders' function on the top 10 rows of the first ``lists`` lists."""
    sys.path.insert(0, str(HERE.parent))
    from tests.test_beyond_reference import recommenders_eval

    pe = recommenders_eval()
    reco = top10(data, lists).select("user", "item").collect().to_pandas()
    train = history(data, lists).collect().to_pandas()
    kw = {"col_user": "user", "col_item": "item"}
    t0, c0 = time.perf_counter(), time.process_time()
    if measure == "novelty@10":
        # recommenders' novelty: items never in the history are left out of its item table and
        # count 0 in its sum over the rows (our unseen="zero")
        value = pe.novelty(train, reco, **kw)
    elif measure == "diversity_cooc@10":
        value = pe.diversity(train, reco, **kw)
    else:
        features = shown_features(data, lists).with_columns(pl.col("vec").cast(pl.List(pl.Float64))).rename({"vec": "features"})
        value = pe.diversity(train, reco, item_feature_df=features.to_pandas(), item_sim_measure="item_feature_vector", **kw)
    return {"wall": time.perf_counter() - t0, "call_cpu": time.process_time() - c0, "value": float(value)}


def hand(measure: str, data: Path, lists: int) -> dict[str, object]:
    """Inside the child: the plan an expert would write by hand in Polars for recommenders'
    ``novelty`` on the same in-memory rows, without any check (no repeated rows, nulls or
    unknown items looked for): each item's history rows (recommenders' ``size()``; before commit
    36edb80 its distinct users, a slower plan than the definition needs), their self-information,
    joined to the shown rows and averaged.  The floor of any Polars novelty on these rows."""
    assert measure == "novelty@10", measure
    reco = top10(data, lists).select("user", "item").collect()
    train = history(data, lists).collect()
    t0, c0 = time.perf_counter(), time.process_time()
    info = (train.lazy().group_by("item").agg(pl.len().alias("users"))
            .select("item", (-(pl.col("users") / train.height).log(2)).alias("info")))
    value = (reco.lazy().join(info, on="item", how="left")
             .select(pl.col("info").fill_null(0.0).sum() / reco.height).collect().item())
    return {"wall": time.perf_counter() - t0, "call_cpu": time.process_time() - c0, "value": float(value)}


def hand_numpy(measure: str, data: Path, lists: int) -> dict[str, object]:
    """Inside the child: the cheapest plan this data allows for recommenders' ``novelty``, below
    any general engine's: the item ids are integers from 0 to 1M, so each item's history rows
    are one ``np.bincount`` (no hashing, no group-by) and a shown row's count one gather; no
    check of any kind.  Not a plan ``evaluate`` may use (ids are any text or integers, nulls
    and repeats must be refused): it bounds what any novelty can gain on these rows."""
    assert measure == "novelty@10", measure
    reco = top10(data, lists).select("item").collect()
    train = history(data, lists).select("item").collect()
    t0, c0 = time.perf_counter(), time.process_time()
    past, shown = train.get_column("item").to_numpy(), reco.get_column("item").to_numpy()
    counts = np.bincount(past, minlength=int(shown.max()) + 1)[shown]
    # an item never in the history adds 0 (recommenders' sum over its item table; unseen="zero")
    info = -np.log2(counts[counts > 0] / len(past))
    value = info.sum() / len(shown)
    return {"wall": time.perf_counter() - t0, "call_cpu": time.process_time() - c0, "value": float(value)}


def child(args: list[str], timeout: float | None = None) -> dict[str, object] | None:
    """Run this script as a fresh process; its result with CPU seconds and peak RSS (wait4)."""
    return measured(__file__, args, timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists", type=int, default=200_000)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--reference-lists", type=int, default=20_000,
                        help="lists given to recommenders' co-occurrence diversity (top 10 each; novelty gets them all)")
    parser.add_argument("--feature-lists", type=int, default=200, help="lists given to recommenders' feature diversity")
    parser.add_argument("--reference-timeout", type=float, default=600.0)
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--only", help="ENGINE-MEASURE, e.g. polars-ils@10")
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "MEASURE", "LISTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = HERE / "data" / f"beyond-{args.lists}"
    if args.child:
        engine, measure, lists = args.child
        subset = None if lists == "all" else int(lists)
        if engine == "recommenders":
            result = reference(measure, data, int(lists))
        else:
            floors = {"hand": hand, "hand_numpy": hand_numpy}
            result = floors[engine](measure, data, int(lists)) if engine in floors else one(engine, measure, data, subset)
        result["self_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    if not (data / "meta.json").is_file():
        t0 = time.perf_counter()
        generate(data, args.lists, args.items, args.seed)
        print(f"generated {data} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    meta = json.loads((data / "meta.json").read_text())
    print(f"{meta['rows']:,} shown rows, {meta['lists']:,} lists, {meta['items']:,} items, "
          f"{meta['dim']}-d features, {meta['history_rows']:,} history rows; load {os.getloadavg()[0]:.1f}")
    if args.only:
        engine, measure = args.only.split("-", 1)
        print(json.dumps(child(["--lists", str(args.lists), "--child", engine, measure, "all"])))
        return
    rows = []
    for engine in filter(None, args.engines.split(",")):
        base = None
        for measure in MEASURES:
            r = child(["--lists", str(args.lists), "--child", engine, measure, "all"])
            assert r is not None
            base = base or r
            rows.append(f"| {engine} | {measure} | {r['wall']:.2f} | {r['cpu']:.1f} | "
                        f"{r['wall'] / base['wall']:.2f}× / {r['cpu'] / base['cpu']:.2f}× | {r['rss_mib']:,.0f} |")
            print(rows[-1], flush=True)
    print("\n| engine | measure | evaluate wall s | process CPU s | vs ndcg@10 (wall / CPU) | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\n| measure | rows (top 10 of lists) | recommenders wall / CPU s | ours (Polars) wall / CPU s "
          "| ratio wall / CPU | values agree |")
    print("|---|---|---|---|---|---|")
    for measure, lists in (("novelty@10", args.lists), ("diversity_cooc@10", args.reference_lists),
                           ("diversity@10", args.feature_lists)):
        theirs = child(["--lists", str(args.lists), "--child", "recommenders", measure, str(lists)],
                       timeout=args.reference_timeout)
        ours = child(["--lists", str(args.lists), "--child", "polars", measure, str(lists)])
        assert ours is not None
        if theirs is None:
            print(f"| {measure} | {lists * 10:,} | > {args.reference_timeout:.0f} (stopped) | "
                  f"{ours['wall']:.2f} / {ours['call_cpu']:.2f} | — | — |")
            continue
        agree = abs(float(theirs["value"]) - float(ours["value"])) <= 1e-9 * max(1.0, abs(float(ours["value"])))
        assert agree, (measure, theirs["value"], ours["value"])
        print(f"| {measure} | {lists * 10:,} | {theirs['wall']:.2f} / {theirs['call_cpu']:.2f} | "
              f"{ours['wall']:.2f} / {ours['call_cpu']:.2f} | {theirs['wall'] / ours['wall']:.1f}× / "
              f"{theirs['call_cpu'] / ours['call_cpu']:.1f}× | yes |", flush=True)
        if measure != "novelty@10":
            continue
        # the floors: a hand-written Polars plan, and NumPy on these integer ids; no checks
        for who, what in (("hand", "hand-written Polars plan"), ("hand_numpy", "NumPy bincount on the integer ids")):
            floor = child(["--lists", str(args.lists), "--child", who, measure, str(lists)])
            assert floor is not None and abs(float(floor["value"]) - float(ours["value"])) <= 1e-9 * abs(float(ours["value"]))
            print(f"| {measure}, {what} (no checks) | {lists * 10:,} | {theirs['wall']:.2f} / "
                  f"{theirs['call_cpu']:.2f} | {floor['wall']:.2f} / {floor['call_cpu']:.2f} | "
                  f"{theirs['wall'] / floor['wall']:.1f}× / {theirs['call_cpu'] / floor['call_cpu']:.1f}× | yes |", flush=True)


if __name__ == "__main__":
    main()
