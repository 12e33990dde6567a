"""``rank-polars gdeval``: gdeval 1.3's command line (the TREC Web track's nDCG@k and ERR@k).

gdeval's measures are existing specs with parameters: its nDCG@k is ``ndcg(gain=exp)@k``
(gain 2^g - 1, discount 1/log2(i+1), the ideal from every judgment above 0) and its ERR@k is
``err(max=4)@k`` (R = (2^g - 1) / 16, not normalised); its order, score descending then docno
descending, is ``evaluate``'s order by score.  This module reproduces gdeval's reading of its
files, its messages and exit status, ``-k``, ``-c`` and the risk-sensitive rows
(``-baseline``, ``-riskAlpha``), and prints with ``%.5f``.  Only topics with a judgment above 0
are scored.

Numbers are read as Perl reads them: a field's numeric prefix (``"2abc"`` is 2, ``"Q0"`` in the
``iter`` column is 0), Inf and NaN in Perl's spellings; Perl's "isn't numeric" warnings are not
printed.

Departures: a docno judged twice for a topic (gdeval counts both in the ideal and keeps the
last) or shown twice in a run (gdeval scores both rows) is refused; a NaN score ranks above every
number (Perl's comparison calls it equal to every score, so where Perl's merge sort leaves it
depends on the line order), as in ``rank-polars trec-eval``; an infinite or NaN ``-k`` or
``-riskAlpha`` is refused with the usage; ``.gz`` / ``.bz2`` files are not decompressed; with
``-c -baseline``, the warnings Perl prints for topics missing from the baseline are not printed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import IO, Sequence

import polars as pl

PROGRAM = "gdeval"
VERSION = "version 1.3 (Mon Apr 29 20:50:24 EDT 2013)"
MAX_JUDGMENT = 4
USAGE = """usage: {0} [options] qrels run

  options:

    -c
        Average over the complete set of topics in the relevance judgments
        instead of the topics in the intersection of relevance judgments 
        and results.

    -k value
        Non-negative integer depth of ranking to evaluate in range [1,inf].
        Default value is k={1}.

    -baseline BASELINE_RUN_FILE
        Baseline run to use for risk-sensitive evaluation

    -riskAlpha value
        Non-negative Risk sensitivity value to use when doing risk-sensitive
        evaluation.  A baseline must still be specified.  By default 0.
        The final weight to downside changes in performance is (1+value).
"""
# gdeval builds its usage text before reading -k: it always says k=20
# Perl's die: the exit status is errno when set (ENOENT after a failed open; ENOTTY once a
# file has been opened, as Perl probes it), else 255.  Perl's read sets errno to 0 when it meets
# the end of the file: a format error on a last line without its newline exits 255.
_ENOENT, _ENOTTY, _NONE = 2, 25, 255
# Perl 5.36's numeric value of a string (grok_number, grok_infnan): its longest numeric prefix,
# or Inf / NaN in Perl's spellings; 0 where there is none (Perl warns and goes on).
_PERL_NUMBER = re.compile(r"\s*([+-]?)(?:(1\.#(?:inf|ind|qnan|snan)|inf|[qs]?nan)|((?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?))",
                          re.IGNORECASE)


class Die(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


@dataclass
class Options:
    k: int = 20
    complete: bool = False
    baseline: str | None = None
    risk_alpha: str = "0"


def perl_number(text: str) -> float:
    """Perl's numeric value of ``text``: ``"2abc"`` is 2, ``"Q0"`` 0, ``"-Inf"`` and ``"1.#INF"``
    minus and plus infinity, ``"nanq"`` NaN."""
    m = _PERL_NUMBER.match(text)
    if m is None:
        return 0.0
    sign, special, decimal = m.groups()
    if special is None:
        return float(sign + decimal)
    if special.lower().lstrip("1.#").startswith("inf"):
        return -math.inf if sign == "-" else math.inf
    return math.nan


def parse_args(argv: Sequence[str], out: IO[str]) -> Options | None:
    o = Options()
    args = list(argv)
    if args and args[0] in ("-v", "-version"):
        out.write(f"{PROGRAM}: {VERSION}\n")
        return None
    usage = Die(USAGE.format(PROGRAM, 20), _NONE)
    while len(args) != 2:
        last = len(args) - 1  # Perl's $#ARGV
        if last >= 0 and args[0] == "-help":
            out.write(USAGE.format(PROGRAM, 20) + "\n")
            return None
        if last >= 2 and args[0] == "-c":
            o.complete = True
            args.pop(0)
        elif last >= 3 and args[0] in ("-k", "-baseline", "-riskAlpha"):
            value = args[1]
            if args[0] == "-k":
                number = perl_number(value)  # Perl: int("x") is 0 (with a warning), below 1
                if not math.isfinite(number) or int(number) < 1:
                    raise usage
                o.k = int(number)
            elif args[0] == "-baseline":
                o.baseline = value
            else:
                number = perl_number(value)
                if not math.isfinite(number) or number < 0.0:
                    raise usage
                o.risk_alpha = value
            del args[:2]
        else:
            raise Die(USAGE.format(PROGRAM, 20), _NONE)
    o.files = args  # type: ignore[attr-defined]
    return o


def _read(path: str) -> tuple[list[str], bool]:
    """The lines of ``path``, and whether the last one lacks its newline."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
    except OSError as e:
        raise Die(f"Invalid ffile: {path} - {e.strerror} at {PROGRAM} line 47.\n", e.errno or _ENOENT) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.replace("\r", "") for line in lines], not text.endswith("\n")


def _format_error(path: str, n: int, lines: list[str], unterminated: bool) -> Die:
    status = _NONE if unterminated and n == len(lines) else _ENOTTY
    return Die(f'{PROGRAM}: format error on line {n} of "{path}"\n', status)


def _topic(field: str) -> str:
    return re.sub(r"^.*-", "", field, count=1, flags=re.S)


def read_qrels(path: str) -> pl.DataFrame:
    """``query`` (the topic as written), ``item``, ``relevance``: the judgments above 0."""
    rows = []
    lines, unterminated = _read(path)
    for n, line in enumerate(lines, 1):
        f = line.split()
        topic = _topic(f[0]) if f else ""
        zero = perl_number(f[1]) if len(f) > 1 else 0.0
        ok = (len(f) >= 4 and re.fullmatch(r"[0-9]+", topic) is not None and zero == 0
              and re.fullmatch(r"-?[0-9]+", f[3]) is not None and int(f[3]) <= MAX_JUDGMENT)
        if not ok:
            raise _format_error(path, n, lines, unterminated)
        if int(f[3]) > 0:
            rows.append((topic, f[2], int(f[3])))
    return pl.DataFrame(rows, schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")


def read_run(path: str) -> tuple[pl.DataFrame, str]:
    """``query``, ``item``, ``position`` and the runid (of the last line, as gdeval keeps it)."""
    rows, runid = [], "?????"
    lines, unterminated = _read(path)
    for n, line in enumerate(lines, 1):
        f = line.split()
        f += [""] * (6 - len(f))
        topic, runid = _topic(f[0]), f[5]
        ok = (re.fullmatch(r"[0-9]+", topic) is not None and f[1] == "Q0" and re.fullmatch(r"[0-9]+", f[3]) is not None
              and runid not in ("", "0"))
        if not ok:
            raise _format_error(path, n, lines, unterminated)
        rows.append((topic, f[2], perl_number(f[4])))
    frame = pl.DataFrame(rows, schema={"query": pl.String, "item": pl.String, "score": pl.Float64}, orient="row")
    # gdeval's order, score descending then docno descending (Perl's `lt` on bytes: the code
    # points of the latin-1 text), as positions: a NaN score, which Perl's comparison calls
    # equal to every score, ranks above every number, as in `rank-polars trec-eval`
    frame = frame.sort("query", "score", "item", descending=[False, True, True])
    return frame.select("query", "item", pl.int_range(1, pl.len() + 1).over("query").alias("position")), runid


def topic_values(qrels: pl.DataFrame, run: pl.DataFrame, k: int) -> dict[str, tuple[float, float]]:
    """nDCG@k and ERR@k of each topic of the run that has a judgment above 0."""
    from rank_polars.evaluate import evaluate

    judged = set(qrels["query"].to_list())
    shown = run.filter(pl.col("query").is_in(list(judged)))
    if not shown.height:
        return {}
    # the judgments of the run's topics only: the others are not gdeval's to score here
    table = evaluate(shown, [f"ndcg(gain=exp)@{k}"], per_query=True,
                     qrels=qrels.filter(pl.col("query").is_in(shown["query"].unique().to_list())))
    errs = dict(gdeval_err(qrels, shown, k).iter_rows())
    return {q: (n, errs.get(q, 0.0)) for q, n in table.iter_rows()}


def gdeval_err(qrels: pl.DataFrame, shown: pl.DataFrame, k: int) -> pl.DataFrame:
    """``query, err``: gdeval's ERR@k in its own arithmetic, so that a value on a rounding edge
    prints gdeval's fifth digit (``err(max=4)@k`` of ``evaluate`` is the same measure, its
    continuation as exp of a sum of logs: 1 ulp off, and 0.046875 printed 0.04687 where gdeval
    prints 0.04688).  Per topic in rank order: ``r = (2^g - 1) / 2^4``, the term ``r * decay / i``
    added one by one from 0, ``decay`` multiplied by ``1 - r`` one rank after another from 1
    (a running product and a running sum: vectorised, the same operations in the same order)."""
    judged = qrels.filter(pl.col("relevance") > 0).select("query", "item", pl.col("relevance").cast(pl.Float64))
    rows = (shown.filter(pl.col("position") <= k).join(judged, on=["query", "item"], how="left")
            .with_columns(pl.col("relevance").fill_null(0.0)).sort("query", "position"))
    r = (pl.lit(2.0).pow(pl.col("relevance")) - 1.0) / 2.0 ** MAX_JUDGMENT
    decay = (1.0 - r).cum_prod().shift(1, fill_value=1.0).over("query")
    terms = rows.with_columns((r * decay / pl.col("position").cast(pl.Float64)).alias("term"))
    return terms.group_by("query", maintain_order=True).agg(pl.col("term").cum_sum().last().alias("err"))


def _risk(r: float, b: float, a: float) -> float:
    return (1 + a) * (r - b) if r < b else r - b


def _sorted_topics(topics: set[str] | list[str]) -> list[str]:
    return sorted(topics, key=lambda t: (int(t), t))


def main(argv: Sequence[str], out: IO[str], err: IO[str]) -> int:
    """Run gdeval with ``argv`` (without the program name); its exit status."""
    try:
        o = parse_args(argv, out)
        if o is None:
            return 0
        qrels_path, run_path = o.files  # type: ignore[attr-defined]
        qrels = read_qrels(qrels_path)
        seen = set(qrels["query"].to_list())
        base: dict[str, tuple[float, float]] = {}
        basename = None
        if o.baseline is not None:
            brun, basename = read_run(o.baseline)
            base = topic_values(qrels, brun, o.k)
        run, runid = read_run(run_path)
        values = topic_values(qrels, run, o.k)
        risky = o.baseline is not None
        alpha = perl_number(o.risk_alpha)
        name = f"{runid} (rel to. {basename}; rs=1+a; a={o.risk_alpha})" if risky else runid
        out.write(f"runid,topic,ndcg@{o.k},err@{o.k}\n")
        totals, count = [0.0, 0.0], 0

        def row(topic: str, v: tuple[float, float], b: tuple[float, float]) -> None:
            nonlocal count
            shown = tuple(_risk(x, y, alpha) for x, y in zip(v, b)) if risky else v
            totals[0] += shown[0]
            totals[1] += shown[1]
            count += 1
            out.write(f"{name},{topic},{shown[0]:.5f},{shown[1]:.5f}\n")

        in_run = set(run["query"].unique().to_list())
        for topic in _sorted_topics(in_run & seen):
            row(topic, values.get(topic, (0.0, 0.0)), base.get(topic, (0.0, 0.0)))
        n = count
        if o.complete:
            n = len(seen)
            if risky:  # the judged topics the run lacks: 0 against the baseline
                b = (0.0, 0.0)
                for topic in _sorted_topics(seen - in_run):
                    b = base.get(topic, b)  # gdeval's variable outlives the loop: a missing one keeps the last
                    row(topic, (0.0, 0.0), b)
        means = [t / n if n > 0 else t for t in totals]
        out.write(f"{name},amean,{means[0]:.5f},{means[1]:.5f}\n")
        return 0
    except Die as e:
        out.flush()
        err.write(e.message)
        return e.status


__all__ = ["main", "read_qrels", "read_run", "topic_values"]
