"""Sample data: the support-chatbot log, a support chatbot that recommends videos to students.

Every student question (``query`` ids such as ``"q0001"``, with its text in ``question``)
is answered by each bot version (``model``: ``"bot-v1"``, ``"bot-v2"``, ...) with a ranked
list of videos (``item`` ids such as ``"vid_0042"``, ``position`` 1..k and the bot's
``score``).  Each question belongs to a course (``segment``) and was asked on a ``date``.
Videos carry a graded ``relevance``: teachers' marks such as 0.99 or 0.94 (floats in
[0, 1], 0 = not relevant) with ``grades="marks"``, or integer grades 0-3 with
``grades="0-3"`` (0 not relevant, 1 partly, 2 relevant, 3 highly relevant; the same
judgments binned: a mark below 0.5 is 1, below 0.85 is 2, else 3).

How the data is made (vectorised with NumPy, deterministic given ``seed``):

* each question has a pool of ``3 * results_per_question`` candidate videos; about one
  question in ten has no relevant video at all, the others a few relevant ones (mostly
  fewer than ``results_per_question``) among look-alike distractors;
* a bot scores every candidate by its true usefulness plus noise, and shows the top k;
  each later version scores with less noise (``bot-v2`` is better on average, not on every
  question);
* the questions, pools and judgments do not depend on ``versions``: adding a version
  leaves the other versions' rankings unchanged, and :func:`chatbot_qrels` gives the full
  judgments, including relevant videos that no version showed.

:func:`sample_log` reads a small log shipped with the package (the same as
``chatbot_log()`` with its defaults: 200 questions x 10 videos x 2 versions).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import RankPolarsError

Grades = Literal["marks", "0-3"]

_COURSES: dict[str, list[str]] = {
    "algebra": ["linear equations", "quadratic equations", "matrices", "logarithms", "polynomials", "inequalities"],
    "biology": ["cell division", "photosynthesis", "DNA replication", "natural selection", "enzymes", "the immune system"],
    "chemistry": ["chemical bonds", "the periodic table", "redox reactions", "stoichiometry", "acids and bases", "moles"],
    "physics": ["Newton's laws", "momentum", "electric circuits", "waves", "thermodynamics", "projectile motion"],
    "programming": ["recursion", "for loops", "Python lists", "hash maps", "big-O notation", "unit tests"],
    "statistics": ["p-values", "standard deviation", "linear regression", "the central limit theorem", "confidence intervals", "Bayes' rule"],
}
_TEMPLATES: list[tuple[str, str]] = [
    ("What is ", "?"),
    ("Can you explain ", " again?"),
    ("I don't understand ", ", is there a video?"),
    ("How do I get started with ", "?"),
    ("Is there a simple example of ", "?"),
    ("Why does my homework on ", " not work?"),
    ("Where is the lecture about ", "?"),
    ("What's the difference between the exercises on ", "?"),
]
_START = _dt.date(2024, 9, 2)  # first day of term
_DAYS = 120
_P_NO_GOOD = 0.1  # share of questions with no relevant video at all
_NOISE = 0.30  # bot-v1's scoring noise; each later version has 0.8 times the previous one's


def _check(n_questions: int, results_per_question: int, grades: str) -> None:
    for name, value in (("n_questions", n_questions), ("results_per_question", results_per_question)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise RankPolarsError(f"{name} must be a positive integer, got {value!r}")
    if grades not in ("marks", "0-3"):
        raise RankPolarsError(f"grades must be 'marks' or '0-3', got {grades!r}")


def _next_prime(n: int) -> int:
    n = max(n, 2)
    while any(n % d == 0 for d in range(2, int(n**0.5) + 1)):
        n += 1
    return n


class _World:
    """Questions, candidate pools and true judgments (independent of the bot versions)."""

    def __init__(self, n_questions: int, results_per_question: int, seed: int) -> None:
        rng = np.random.default_rng([seed, 0])
        n, k = int(n_questions), int(results_per_question)
        self.n, self.k = n, k
        self.pool = pool = 3 * k
        courses = list(_COURSES)
        self.course = rng.integers(0, len(courses), n)
        self.topic = rng.integers(0, len(_COURSES[courses[0]]), n)
        self.template = rng.integers(0, len(_TEMPLATES), n)
        self.day = np.sort(rng.integers(0, _DAYS, n))
        # relevant videos: none for ~10% of questions, else 1 + Binomial(k, 0.25) (at most the pool)
        n_rel = np.minimum(1 + rng.binomial(k, 0.25, n), pool)
        n_rel[rng.random(n) < _P_NO_GOOD] = 0
        slot = np.arange(pool)
        relevant = slot[None, :] < n_rel[:, None]
        mark = np.clip(np.round(rng.beta(4.0, 1.6, (n, pool)), 2), 0.05, 1.0)
        self.mark = np.where(relevant, mark, 0.0)
        # what a bot can see: the true usefulness, or how much a distractor looks like a fit
        self.appeal = np.where(relevant, mark, rng.uniform(0.0, 0.55, (n, pool)))
        self.difficulty = rng.lognormal(0.0, 0.3, n)
        # video ids: pool slot j of question q is (base + j * step) mod a prime catalog size
        self.catalog = catalog = _next_prime(max(1009, 4 * pool))
        base = rng.integers(0, catalog, n)
        step = rng.integers(1, catalog, n)
        # (shuffled through a fixed permutation of the catalog so ids look unrelated)
        perm = rng.permutation(catalog)
        self.video = perm[(base[:, None] + slot[None, :] * step[:, None]) % catalog]

    def questions(self) -> pl.DataFrame:
        """One row per question: segment, date, query, question text."""
        width = max(4, len(str(self.n)))
        courses = list(_COURSES)
        n_topics = len(_COURSES[courses[0]])
        topics = pl.Series([t for c in courses for t in _COURSES[c]])
        return pl.DataFrame(
            {
                "number": np.arange(1, self.n + 1),
                "course": self.course,
                "topic": self.course * n_topics + self.topic,
                "template": self.template,
                "day": self.day,
            }
        ).select(
            pl.lit(pl.Series(courses)).gather(pl.col("course")).alias("segment"),
            (pl.lit(_START) + pl.duration(days=pl.col("day"))).cast(pl.Date).alias("date"),
            (pl.lit("q") + pl.col("number").cast(pl.String).str.zfill(width)).alias("query"),
            pl.concat_str(
                pl.lit(pl.Series([p for p, _ in _TEMPLATES])).gather(pl.col("template")),
                pl.lit(topics).gather(pl.col("topic")),
                pl.lit(pl.Series([s for _, s in _TEMPLATES])).gather(pl.col("template")),
            ).alias("question"),
        )

    def video_ids(self, codes: np.ndarray) -> pl.Series:
        width = max(4, len(str(self.catalog - 1)))
        names = "vid_" + pl.Series("item", np.arange(self.catalog)).cast(pl.String).str.zfill(width)
        return names.gather(codes.ravel()).alias("item")

    def labels(self, marks: np.ndarray, grades: str) -> pl.Series:
        marks = marks.ravel()
        if grades == "marks":
            return pl.Series("relevance", marks)
        return pl.Series("relevance", np.where(marks <= 0, 0, 1 + (marks >= 0.5) + (marks >= 0.85)).astype(np.int64))


def chatbot_log(
    n_questions: int = 200,
    results_per_question: int = 10,
    versions: Sequence[str] = ("bot-v1", "bot-v2"),
    grades: Grades = "marks",
    seed: int = 0,
) -> pl.DataFrame:
    """A labelled log: one row per (bot version, question, shown video).

    Parameters
    ----------
    n_questions
        How many student questions (``"q0001"``, ...); any size (millions of rows are
        made in seconds).
    results_per_question
        How many videos each version shows per question (positions 1..k).
    versions
        The bot versions (``model`` column); each later one scores with less noise.
    grades
        ``"marks"`` (floats in [0, 1], 0 = not relevant) or ``"0-3"`` (integers).
    seed
        The same seed gives the same log.

    Returns
    -------
    pl.DataFrame
        ``model, segment, date, query, question, item, position, score, relevance``,
        sorted by model, query and position.

    Examples
    --------
    >>> from rank_polars import datasets
    >>> log = datasets.chatbot_log(n_questions=3, results_per_question=2, seed=1)
    >>> log.select("model", "query", "item", "position", "relevance").head(4)
    shape: (4, 5)
    ┌────────┬───────┬──────────┬──────────┬───────────┐
    │ model  ┆ query ┆ item     ┆ position ┆ relevance │
    │ ---    ┆ ---   ┆ ---      ┆ ---      ┆ ---       │
    │ str    ┆ str   ┆ str      ┆ i64      ┆ f64       │
    ╞════════╪═══════╪══════════╪══════════╪═══════════╡
    │ bot-v1 ┆ q0001 ┆ vid_0400 ┆ 1        ┆ 0.0       │
    │ bot-v1 ┆ q0001 ┆ vid_0970 ┆ 2        ┆ 0.0       │
    │ bot-v1 ┆ q0002 ┆ vid_0252 ┆ 1        ┆ 0.97      │
    │ bot-v1 ┆ q0002 ┆ vid_0253 ┆ 2        ┆ 0.0       │
    └────────┴───────┴──────────┴──────────┴───────────┘
    """
    _check(n_questions, results_per_question, grades)
    versions = [versions] if isinstance(versions, str) else list(versions)
    if not versions or len(set(versions)) != len(versions) or not all(isinstance(v, str) for v in versions):
        raise RankPolarsError(f"versions must be distinct strings (at least one), got {versions!r}")
    world = _World(n_questions, results_per_question, seed)
    n, k = world.n, world.k
    rows = np.arange(n)[:, None]
    models, items, scores, labels = [], [], [], []
    for v in range(len(versions)):
        rng = np.random.default_rng([seed, 1, v])
        sd = _NOISE * 0.8**v
        raw = world.appeal + sd * world.difficulty[:, None] * rng.standard_normal((n, world.pool))
        top = np.argsort(-raw, axis=1, kind="stable")[:, :k]
        # the bot's displayed score: a logistic squash of its raw score (decreasing with position)
        scores.append(1.0 / (1.0 + np.exp(-4.0 * (raw[rows, top] - 0.5))).ravel())
        items.append(world.video[rows, top].ravel())
        labels.append(world.mark[rows, top].ravel())
    n_versions = len(versions)
    per_question = world.questions().gather(np.tile(np.repeat(np.arange(n), k), n_versions))
    return pl.DataFrame(
        [
            pl.Series("model", versions).gather(np.repeat(np.arange(n_versions), n * k)),
            *per_question.get_columns(),
            world.video_ids(np.concatenate(items)),
            pl.Series("position", np.tile(np.arange(1, k + 1, dtype=np.int64), n * n_versions)),
            pl.Series("score", np.concatenate(scores)),
            world.labels(np.concatenate(labels), grades),
        ]
    )


def chatbot_qrels(
    n_questions: int = 200,
    results_per_question: int = 10,
    grades: Grades = "marks",
    seed: int = 0,
) -> pl.DataFrame:
    """The full judgments behind :func:`chatbot_log` with the same arguments.

    Every candidate video of every question is judged (relevant or not), so the qrels
    include relevant videos that no bot version showed: recall and nDCG's ideal ranking
    then count them, as in a real pooled evaluation.

    Returns
    -------
    pl.DataFrame
        ``query, item, relevance`` (``3 * results_per_question`` rows per question).

    Examples
    --------
    >>> from rank_polars import datasets
    >>> qrels = datasets.chatbot_qrels(n_questions=5, results_per_question=2, seed=1)
    >>> qrels.shape, qrels.columns
    ((30, 3), ['query', 'item', 'relevance'])
    """
    _check(n_questions, results_per_question, grades)
    world = _World(n_questions, results_per_question, seed)
    queries = world.questions()["query"]
    return pl.DataFrame(
        {
            "query": queries.gather(np.repeat(np.arange(world.n), world.pool)),
            "item": world.video_ids(world.video),
            "relevance": world.labels(world.mark, grades),
        }
    ).sort("query", "item")


def split_judgments(
    log: pl.DataFrame,
    *,
    query: str = "query",
    item: str = "item",
    relevance: str = "relevance",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split a labelled log into ``(run without labels, qrels)``.

    The qrels are the labels of the videos the log shows (one row per query and video,
    whichever version showed it); for judgments that also hold relevant videos no version
    showed, use :func:`chatbot_qrels`.  A video labelled differently in two rows of one
    query is an error.

    Examples
    --------
    >>> from rank_polars import datasets
    >>> run, qrels = datasets.split_judgments(datasets.chatbot_log(n_questions=4))
    >>> "relevance" in run.columns, qrels.columns
    (False, ['query', 'item', 'relevance'])
    """
    for col in (query, item, relevance):
        if col not in log.columns:
            raise RankPolarsError(f"split_judgments: the log has no column {col!r}")
    qrels = log.select(query, item, relevance).unique().sort(query, item)
    clash = qrels.group_by(query, item).len().filter(pl.col("len") > 1)
    if clash.height:
        first = clash.sort(query, item).row(0)
        raise RankPolarsError(
            f"split_judgments: {clash.height} (query, item) pairs have different labels, "
            f"e.g. query {first[0]!r}, item {first[1]!r}"
        )
    return log.drop(relevance), qrels


def sample_path() -> Path:
    """Path of the support-chatbot log shipped with the package (Parquet, ~4,000 rows)."""
    return Path(str(resources.files("rank_polars").joinpath("data", "chatbot_sample.parquet")))


def sample_log() -> pl.DataFrame:
    """The support-chatbot log shipped with the package: ``chatbot_log()`` with its defaults
    (200 questions x 10 videos x ``bot-v1``/``bot-v2``, marks), read from :func:`sample_path`.

    Examples
    --------
    >>> import rank_polars as rp
    >>> from rank_polars import datasets
    >>> log = datasets.sample_log()
    >>> log.shape
    (4000, 9)
    >>> rp.evaluate(log, "ndcg@10", by="model")["ndcg@10"].round(3).to_list()
    [0.68, 0.734]
    """
    return pl.read_parquet(sample_path())


def _write_sample(path: Path | None = None) -> Path:
    """Regenerate the shipped sample (maintainers only)."""
    path = path or sample_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    chatbot_log().write_parquet(path, compression="zstd", compression_level=19, statistics=False)
    return path


_FORMATS = ("lecture", "worked example", "exercise")


def chatbot_videos(n_questions: int = 200, results_per_question: int = 10, seed: int = 0) -> pl.DataFrame:
    """The video catalogue behind :func:`chatbot_log`: one row per video with its
    ``categories`` (its course and its format), for the beyond-accuracy measures
    (``catalog=`` and ``features=``: category overlap).

    Examples
    --------
    >>> from rank_polars import datasets
    >>> videos = datasets.chatbot_videos()
    >>> videos.height, videos.row(0)
    (1009, ('vid_0000', ['algebra', 'lecture']))
    """
    _check(n_questions, results_per_question, "marks")
    world = _World(n_questions, results_per_question, seed)
    code = np.arange(world.catalog)
    courses = list(_COURSES)
    return pl.DataFrame({"item": world.video_ids(code), "course": code % len(courses), "format": (code // 7) % 3}).select(
        "item",
        pl.concat_list(pl.lit(pl.Series(courses)).gather(pl.col("course")),
                       pl.lit(pl.Series(_FORMATS)).gather(pl.col("format"))).alias("categories"),
    )


def chatbot_history(n_questions: int = 200, results_per_question: int = 10, seed: int = 0) -> pl.DataFrame:
    """A short history behind :func:`chatbot_log`: videos students opened earlier for each
    question (``query``, ``item``; a few per question, popular videos far more often), for the
    popularity, novelty and co-occurrence measures (``history=``).

    Examples
    --------
    >>> from rank_polars import datasets
    >>> history = datasets.chatbot_history()
    >>> history.columns, history.height > 500
    (['query', 'item'], True)
    """
    _check(n_questions, results_per_question, "marks")
    world = _World(n_questions, results_per_question, seed)
    rng = np.random.default_rng([seed, 1])
    # popularity: a Zipf-like share over a fixed shuffle of the catalogue, and the question's
    # own candidates (students open what the course points them to)
    weights = 1.0 / (np.arange(world.catalog) + 5.0)
    popular = rng.permutation(world.catalog)
    n_views = 1 + rng.poisson(3.0, world.n)
    rows_q, rows_v = [], []
    for q in range(world.n):
        picks = np.concatenate([popular[rng.choice(world.catalog, n_views[q], p=weights / weights.sum())],
                                world.video[q, rng.integers(0, world.pool, 2)]])
        rows_q.extend([q] * len(picks))
        rows_v.extend(picks.tolist())
    queries = world.questions()["query"]
    return pl.DataFrame({"query": queries.gather(rows_q), "item": world.video_ids(np.array(rows_v))}).unique(maintain_order=True)


_INTENTS = ("the idea", "a worked example", "practice problems", "a common mistake")


def chatbot_subtopics(n_questions: int = 200, results_per_question: int = 10, seed: int = 0) -> pl.DataFrame:
    """Subtopic judgments behind :func:`chatbot_log`: a student's question has intents (the idea,
    a worked example, practice problems, a common mistake), and a useful video serves one or two
    of them, for the diversity measures (``alpha_ndcg``, ``err_ia``, ... and ``rank-polars
    ndeval``).

    Each question has 2 to 4 intents; every candidate video is judged for each (1 if it serves
    it, else 0): an intent that no video serves counts in no measure (ndeval's |S|).

    Returns
    -------
    pl.DataFrame
        ``query, subtopic, item, relevance``; ``subtopic`` numbers the intent (1 = the idea, ...).

    Examples
    --------
    >>> from rank_polars import datasets
    >>> subtopics = datasets.chatbot_subtopics(n_questions=5, results_per_question=2, seed=1)
    >>> subtopics.columns, subtopics["subtopic"].max() <= 4
    (['query', 'subtopic', 'item', 'relevance'], True)
    """
    _check(n_questions, results_per_question, "marks")
    world = _World(n_questions, results_per_question, seed)
    rng = np.random.default_rng([seed, 2])
    n_intents = rng.integers(2, len(_INTENTS) + 1, world.n)
    # a relevant video serves its main intent (the first ones are the most asked for) and,
    # one time in three, a second
    main = np.minimum(rng.geometric(0.5, (world.n, world.pool)) - 1, n_intents[:, None] - 1)
    second = rng.integers(0, len(_INTENTS), (world.n, world.pool)) % n_intents[:, None]
    both = rng.random((world.n, world.pool)) < 1 / 3
    intent = np.arange(len(_INTENTS))[None, None, :]
    serves = (world.mark[:, :, None] > 0) & ((intent == main[:, :, None]) | (both[:, :, None] & (intent == second[:, :, None])))
    asked = intent < n_intents[:, None, None]
    q, j, s = np.nonzero(np.broadcast_to(asked, serves.shape))
    queries = world.questions()["query"]
    return pl.DataFrame({
        "query": queries.gather(q),
        "subtopic": (s + 1).astype(np.int64),
        "item": world.video_ids(world.video[q, j]),
        "relevance": serves[q, j, s].astype(np.int64),
    }).sort("query", "subtopic", "item")


# -- the sample click log -------------------------------------------------------------------
#: The chance that a shown video of each grade (0-3) is clicked when its position is examined:
#: the attractiveness of the position-based click model.
ATTRACTIVENESS: dict[int, float] = {0: 0.05, 1: 0.2, 2: 0.5, 3: 0.85}


@dataclass(frozen=True)
class ClickSample:
    """A simulated click log and the truth it was drawn from (:func:`load_clicks`).

    ``log``: one row per shown video, ``model, session, query, item, position, click,
    randomized, relevance``; ``examination``: ``position, examination`` (the probability
    that a user looks at each position, 1 at position 1); ``arms``: per ``model`` the true
    ``ctr`` (expected clicks / rows shown, over the queries' distribution: the value every
    CTR@depth estimate targets) and ``clicks`` (expected clicks per ranking).
    """

    log: pl.DataFrame
    examination: pl.DataFrame
    arms: pl.DataFrame


def load_clicks(n_queries: int = 200, sessions: int = 10000, depth: int = 10, eta: float = 1.0,
                randomized_share: float = 0.3, seed: int = 0, candidates: int | None = None) -> ClickSample:
    """A seeded click log of an A/B test of two chatbot versions, with the truth it comes from.

    Generated on load (NumPy, deterministic given the arguments; well under a second): nothing is
    shipped.
    Each of ``n_queries`` questions has ``candidates`` candidate videos (2 x ``depth`` by
    default) with a true grade 0-3 (``relevance``).  ``bot-v1`` and ``bot-v2`` rank them by
    grade plus noise (bot-v2 with less noise) and show the top ``depth``.  Each of ``sessions`` sessions picks a question
    uniformly at random and an arm with equal chance; a ``randomized_share`` more sessions
    (``randomized=True``, ``model="bot-v1"``) show bot-v1's list in a uniformly random order
    (RandTop-k over the whole list), for intervention harvesting.  Clicks follow the
    position-based model: a video at position p is clicked with probability
    ``examination(p) * ATTRACTIVENESS[grade]``, ``examination(p) = 1 / p**eta``.  A session is a
    ranking (evaluate with ``query="session"``); ``query`` is the question, shown in many
    sessions (as :func:`rank_polars.position_bias` reads it).  Leave the randomized sessions
    out of the A/B comparison: ``log.filter(~pl.col("randomized"))``.

    ``candidates=depth``: the two versions rank the same ``depth`` videos of a question, in
    their own orders, so every video bot-v2 shows is shown in every bot-v1 session, at some
    position.  That is what position-based IPS needs to estimate bot-v2 from bot-v1's log
    (:func:`rank_polars.counterfactual` reweights the clicks on what was shown; a video the
    logging ranker never shows has no click to reweight).  With the default 2 x ``depth``
    candidates each version shows its own top ``depth`` and bot-v1's log never shows about a
    third of what bot-v2 shows: the estimate is then a lower bound, with a ``CoverageWarning``.
    The default stays as it is (the A/B test of two rankers that show different videos).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> from rank_polars.datasets import load_clicks
    >>> sample = load_clicks()
    >>> sample.log.shape, sample.log.columns
    ((130000, 8), ['model', 'session', 'query', 'item', 'position', 'click', 'randomized', 'relevance'])
    >>> sample.arms
    shape: (2, 3)
    ┌────────┬──────────┬──────────┐
    │ model  ┆ ctr      ┆ clicks   │
    │ ---    ┆ ---      ┆ ---      │
    │ str    ┆ f64      ┆ f64      │
    ╞════════╪══════════╪══════════╡
    │ bot-v1 ┆ 0.113512 ┆ 1.135122 │
    │ bot-v2 ┆ 0.14517  ┆ 1.451698 │
    └────────┴──────────┴──────────┘
    >>> ab = sample.log.filter(~pl.col("randomized"))
    >>> rp.evaluate(ab, ["ctr(agg=ratio)@10"], by="model", query="session")["ctr(agg=ratio)@10"].round(3).to_list()
    [0.114, 0.148]

    bot-v2's CTR estimated from bot-v1's sessions alone, against its true CTR:

    >>> same = load_clicks(candidates=10)
    >>> v1 = same.log.filter((pl.col("model") == "bot-v1") & ~pl.col("randomized"))
    >>> v2 = same.log.filter(pl.col("model") == "bot-v2").select("query", "item", "position").unique()
    >>> est = rp.counterfactual(v1, v2, ["ctr@10"], examination=same.examination, session="session", ci=0.9, seed=0)
    >>> truth = same.arms.filter(model="bot-v2")["ctr"]
    >>> est.select("metric", "estimate", "ci_low", "ci_high", true=truth).with_columns(pl.col(pl.Float64).round(4))
    shape: (1, 5)
    ┌────────┬──────────┬────────┬─────────┬────────┐
    │ metric ┆ estimate ┆ ci_low ┆ ci_high ┆ true   │
    │ ---    ┆ ---      ┆ ---    ┆ ---     ┆ ---    │
    │ str    ┆ f64      ┆ f64    ┆ f64     ┆ f64    │
    ╞════════╪══════════╪════════╪═════════╪════════╡
    │ ctr@10 ┆ 0.1115   ┆ 0.1078 ┆ 0.1151  ┆ 0.1099 │
    └────────┴──────────┴────────┴─────────┴────────┘
    """
    pool = 2 * depth if candidates is None else candidates
    for name, value in (("n_queries", n_queries), ("sessions", sessions), ("depth", depth), ("candidates", pool)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise RankPolarsError(f"{name} must be a positive integer, got {value!r}")
    if pool < depth:
        raise RankPolarsError(f"candidates must be at least depth ({depth}): each ranking shows depth videos, "
                              f"got {candidates!r}")
    if not 0 <= randomized_share <= 1 or not eta >= 0:
        raise RankPolarsError(f"randomized_share must be in [0, 1] and eta >= 0, got {randomized_share!r}, {eta!r}")
    rng = np.random.default_rng(seed)
    grades = rng.choice(4, size=(n_queries, pool), p=[0.5, 0.25, 0.15, 0.1])
    attract = np.array([ATTRACTIVENESS[g] for g in range(4)])[grades]
    # each version ranks by grade plus noise, bot-v2 with less: its top `depth` per question
    shown = np.stack([np.argsort(-(grades + rng.normal(0, noise, grades.shape)), axis=1, kind="stable")[:, :depth]
                      for noise in (2.0, 1.0)])
    exam = 1.0 / np.arange(1, depth + 1) ** eta
    truth = (np.take_along_axis(attract[None], shown, axis=2) * exam).sum(axis=2).mean(axis=1)  # per arm
    n_random = int(round(sessions * randomized_share))
    query = rng.integers(0, n_queries, sessions + n_random)
    arm = np.concatenate([rng.integers(0, 2, sessions), np.zeros(n_random, dtype=np.int64)])
    lists = shown[arm, query]  # (session, depth): candidate index shown at each position
    randomized = np.arange(sessions + n_random) >= sessions
    lists[randomized] = rng.permuted(lists[randomized], axis=1)
    shown_grade = np.take_along_axis(grades[query], lists, axis=1)
    clicks = rng.random(lists.shape) < exam * attract[query[:, None], lists]
    n = sessions + n_random
    log = pl.DataFrame({
        "model": np.repeat(arm, depth) + 1,
        "session": np.repeat(np.arange(1, n + 1), depth),
        "query": np.repeat(query + 1, depth),
        "item": (np.repeat(query, depth) * pool + lists.ravel() + 1),
        "position": np.tile(np.arange(1, depth + 1), n),
        "click": clicks.ravel().astype(np.int64),
        "randomized": np.repeat(randomized, depth),
        "relevance": shown_grade.ravel().astype(np.int64),
    }).with_columns(pl.format("bot-v{}", "model").alias("model"), pl.format("s{}", pl.col("session").cast(pl.String).str.zfill(len(str(n)))).alias("session"),
                    pl.format("q{}", pl.col("query").cast(pl.String).str.zfill(4)).alias("query"),
                    pl.format("vid_{}", pl.col("item").cast(pl.String).str.zfill(5)).alias("item"))
    examination = pl.DataFrame({"position": np.arange(1, depth + 1), "examination": exam})
    arms = pl.DataFrame({"model": ["bot-v1", "bot-v2"], "ctr": truth / depth, "clicks": truth})
    return ClickSample(log, examination, arms)


# -- a daily log for monitoring ------------------------------------------------------------
def monitoring_log(days: int = 30, versions: Sequence[str] = ("v1", "v2", "v3"), queries_per_day: int = 300,
                   results: int = 10, start: str = "2026-11-01",
                   regression: tuple[str, str, str, int] | None = ("v3", "country", "fr", 21),
                   seed: int = 0) -> pl.DataFrame:
    """A labelled daily log of several versions ranking the same queries, with segments and an injected regression.

    One row per (version, query, shown item): ``date, model, query, item, position, relevance, country,
    query_type``.  Each day has ``queries_per_day`` new queries (ids ``d01-q0001``, ...), each in a
    ``country`` (us 40%, fr 25%, de 20%, jp 15%) and of a ``query_type`` (head 60%, tail 40%; tail
    queries have fewer relevant items), with ``results`` items graded 0-3.  Every version shows the
    same items in its own order: grade plus Gaussian noise, each later version with less noise
    (standard deviation 1.2, 1.1, 1.0, ...).  ``regression=(version, segment, value, day)``: from
    that day (1 = the first) the version ranks that segment's queries with noise 4 (nearly at random);
    ``None``: no regression.  Vectorised NumPy, deterministic given the arguments; nothing is shipped.

    Examples
    --------
    >>> from rank_polars.datasets import monitoring_log
    >>> log = monitoring_log(days=2, queries_per_day=5, results=3)
    >>> log.shape, log.columns
    ((90, 8), ['date', 'model', 'query', 'item', 'position', 'relevance', 'country', 'query_type'])
    """
    if days < 1 or queries_per_day < 1 or results < 1 or not versions:
        raise RankPolarsError("monitoring_log: days, queries_per_day and results must be >= 1, with a version")
    rng = np.random.default_rng(seed)
    n = days * queries_per_day
    day = np.repeat(np.arange(days), queries_per_day)
    country = rng.choice(np.array(["us", "fr", "de", "jp"]), size=n, p=[0.4, 0.25, 0.2, 0.15])
    kind = rng.choice(np.array(["head", "tail"]), size=n, p=[0.6, 0.4])
    p_head, p_tail = [0.45, 0.25, 0.2, 0.1], [0.7, 0.15, 0.1, 0.05]
    grades = np.where((kind == "tail")[:, None], rng.choice(4, size=(n, results), p=p_tail),
                      rng.choice(4, size=(n, results), p=p_head))
    segments = {"country": country, "query_type": kind}
    noise = np.empty((len(versions), n))
    for v in range(len(versions)):
        noise[v] = 1.2 - 0.1 * v
    if regression is not None:
        version, column, value, first = regression
        if version not in versions or column not in segments:
            raise RankPolarsError(f"monitoring_log: regression={regression!r} names no version or segment "
                                  "(country, query_type)")
        hit = (segments[column] == value) & (day >= first - 1)
        noise[list(versions).index(version), hit] = 4.0
    scores = grades[None] + noise[:, :, None] * rng.standard_normal((len(versions), n, results))
    position = np.argsort(np.argsort(-scores, axis=2, kind="stable"), axis=2, kind="stable") + 1
    dates = np.datetime64(start) + day
    v_idx, q_idx, i_idx = (a.ravel() for a in np.indices((len(versions), n, results)))
    query_ids = np.char.add(np.char.add(np.char.add("d", np.char.zfill((day + 1).astype(str), 2)), "-q"),
                            np.char.zfill((np.arange(n) % queries_per_day + 1).astype(str), 4))
    return pl.DataFrame({
        "date": dates[q_idx], "model": np.asarray(versions)[v_idx], "query": query_ids[q_idx],
        "item": np.char.add("i", i_idx.astype(str)), "position": position.ravel().astype(np.int64),
        "relevance": grades[q_idx, i_idx].astype(np.int64), "country": country[q_idx], "query_type": kind[q_idx],
    }).with_columns(pl.col("date").cast(pl.Date))



_LLM_BIAS = 0.5  # the share of videos only bot-v2 showed that the LLM judge grades one grade higher
_LLM_NOISE = 0.15  # the share of its other grades one grade off, up or down


def chatbot_judges(n_questions: int = 200, results_per_question: int = 10, seed: int = 0,
                   people_depth: int = 5) -> pl.DataFrame:
    """Two judges of the videos :func:`chatbot_log` shows (``bot-v1``, ``bot-v2``), grades 0-3.

    * ``people``: the teachers' grades (:func:`chatbot_qrels` with ``grades="0-3"``) of the videos
      some version showed in its top ``people_depth``: a depth-5 pool; deeper videos are unjudged.
    * ``llm``: every shown video, with a known bias: half the videos only ``bot-v2`` showed (think
      of it as the LLM-based ranker) get one grade more than the teachers gave (at most 3), and
      15% of its other grades are one grade off, up or down (within 0-3).

    Returns
    -------
    pl.DataFrame
        ``query, item, relevance, judge``, sorted by judge, query and item.

    Examples
    --------
    >>> from rank_polars import datasets
    >>> judges = datasets.chatbot_judges(n_questions=20)
    >>> judges.group_by("judge").len().sort("judge").rows()
    [('llm', 303), ('people', 164)]
    """
    if not isinstance(people_depth, int) or people_depth < 1:
        raise RankPolarsError(f"people_depth must be a positive integer, got {people_depth!r}")
    log = chatbot_log(n_questions, results_per_question, grades="0-3", seed=seed)
    truth = chatbot_qrels(n_questions, results_per_question, grades="0-3", seed=seed)
    shown = (log.group_by("query", "item")
             .agg(pl.col("position").min().alias("best"), (pl.col("model") == "bot-v1").any().alias("v1"),
                  (pl.col("model") == "bot-v2").any().alias("v2"))
             .join(truth, on=["query", "item"]).sort("query", "item"))
    rng = np.random.default_rng([seed, 7])
    favoured, noisy, up = (rng.random(shown.height) for _ in range(3))
    only_v2 = (shown["v2"] & ~shown["v1"]).to_numpy()
    shift = np.where(only_v2 & (favoured < _LLM_BIAS), 1, np.where(~only_v2 & (noisy < _LLM_NOISE), np.where(up < 0.5, 1, -1), 0))
    llm = shown.select("query", "item", (pl.col("relevance") + pl.Series(shift)).clip(0, 3).alias("relevance"),
                       pl.lit("llm").alias("judge"))
    people = shown.filter(pl.col("best") <= people_depth).select("query", "item", "relevance", pl.lit("people").alias("judge"))
    return pl.concat([llm, people]).sort("judge", "query", "item")


def judges_path() -> Path:
    """Path of the two judges' judgments shipped with the package (:func:`chatbot_judges`' defaults)."""
    return Path(str(resources.files("rank_polars").joinpath("data", "chatbot_judges.parquet")))


def sample_judgments() -> pl.DataFrame:
    """The judgments of two judges, ``people`` and ``llm``, of the shipped sample log
    (:func:`sample_log`): :func:`chatbot_judges` with its defaults, read from :func:`judges_path`.

    Examples
    --------
    >>> from rank_polars import datasets
    >>> datasets.sample_judgments().group_by("judge").len().sort("judge").rows()
    [('llm', 3013), ('people', 1647)]
    """
    return pl.read_parquet(judges_path())


def _write_judgments(path: Path | None = None) -> Path:
    """Regenerate the shipped judgments (maintainers only)."""
    path = path or judges_path()
    chatbot_judges().write_parquet(path, compression="zstd", compression_level=19, statistics=False)
    return path

__all__ = ["ATTRACTIVENESS", "ClickSample", "chatbot_history", "chatbot_log", "chatbot_qrels", "chatbot_subtopics", "chatbot_videos", "sample_log",
           "load_clicks", "monitoring_log", "sample_path", "split_judgments",
           "chatbot_judges", "judges_path", "sample_judgments"]
