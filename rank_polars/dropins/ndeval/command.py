"""``rank-polars ndeval``: ndeval 4.5's command line and CSV, byte for byte.

The numbers come from :func:`rank_polars.families.diversity.run_values` (the library's
measures, added with ndeval's own arithmetic: its products, discounts and normalisations, so that
a value on a rounding edge prints ndeval's digit); this module reproduces ndeval's reading of its files (its messages, exit status
and line numbers), its run order (by rank; ``-traditional``: score then docno, both
descending), ``-M``, ``-c``, its risk-sensitive rows (``-baseline``, ``-riskAlpha``) and its
printing, including its quirks:

* a topic of the qrels without a relevant subtopic scores 0, and ``-nan`` for nNRBP (0/0);
  so does every topic when ``(1 - alpha) * beta = 1``, where NRBP's factor is 0;
* topics of the run without judgments are printed with zeros but not counted in the mean;
  with ``-c`` the mean divides by every topic of the qrels;
* a topic id may carry a task prefix in the run (``wt09-12``), not in the qrels;
* a number is read as C's ``sscanf`` reads it (its valid prefix; nothing valid leaves the
  default), ids and ranks as ndeval's ``naturalNumber`` (digits only, at most ~10^6).

Departures: a (topic, subtopic, docno) judged twice is kept once with its larger judgment
(ndeval counts both in MAP-IA's R_s and keeps whichever its unstable sort puts last); a run
score that ``%lf`` cannot read ranks as 0 with ``-traditional`` (ndeval reads uninitialised
memory), and a NaN score above every number (ndeval's comparison calls it equal to every score,
so where glibc's merge sort leaves it depends on the line order), as in ``rank-polars trec-eval``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import IO, Sequence

import polars as pl

from rank_polars.families.diversity import run_values
from rank_polars.measures.diversity import ERRIA, MAPIA, NERRIA, NNRBP, NRBP, PIA, AlphaDCG, AlphaNDCG, StRecall
from rank_polars.plan import ITEM, Q, RANK

PROGRAM = "ndeval"
VERSION = "version 4.5 (Mon 29 Apr 2013 20:51:02 EDT)"
USAGE = "Usage: %s [options] qrels run   (-help for full usage information)\n"
LARGE_ENOUGH = 100000
HEADER = ("runid,topic,ERR-IA@5,ERR-IA@10,ERR-IA@20,nERR-IA@5,nERR-IA@10,nERR-IA@20,alpha-DCG@5,alpha-DCG@10,"
          "alpha-DCG@20,alpha-nDCG@5,alpha-nDCG@10,alpha-nDCG@20,NRBP,nNRBP,MAP-IA,P-IA@5,P-IA@10,P-IA@20,"
          "strec@5,strec@10,strec@20\n")
_CUTS = (5, 10, 20)
# glibc's %lf: decimal, hexadecimal ("0x1.8p1"), inf / infinity, nan; a prefix it starts and
# cannot finish ("0x", "infin") is no conversion at all
_FLOAT = re.compile(r"\s*([+-]?)(?:(0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?\d+)?)"
                    r"|((?!0x)(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|infinity|inf(?!i)|nan))", re.IGNORECASE)
_INT = re.compile(r"\s*([+-]?\d+)")


class Exit(Exception):
    """ndeval's ``error()``: a message on stderr after ``ndeval: ``, exit status 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class Options:
    alpha: float = 0.5
    beta: float = 0.5
    traditional: bool = False
    depth: int = 0
    complete: bool = False
    baseline: str | None = None
    risk_alpha: float = 0.0
    risk_alpha_text: str = "0"
    files: list[str] = field(default_factory=list)


def scan_float(text: str, default: float) -> float:
    """C's ``sscanf(text, "%lf", &x)``: the longest valid prefix, else ``x`` unchanged."""
    m = _FLOAT.match(text)
    if m is None:
        return default
    sign, hexadecimal, decimal = m.groups()
    return float.fromhex(sign + hexadecimal) if hexadecimal else float(sign + decimal)


def scan_int(text: str, default: int) -> int:
    m = _INT.match(text)
    return int(m[1]) if m else default


def natural_number(s: str) -> int:
    """ndeval's ``naturalNumber``: digits only, -1 otherwise or when too large."""
    if not s:
        return -1
    value = 0
    for ch in s:
        if not "0" <= ch <= "9":
            return -1
        if value > LARGE_ENOUGH:
            return -1
        value = 10 * value + ord(ch) - 48
    return value


def parse_topic(s: str) -> int:
    """``wt09-12`` -> 12: a run's topic may carry a task prefix ending with ``-``."""
    if s and "0" <= s[0] <= "9":
        return natural_number(s)
    cut = s.find("-")
    return natural_number(s[cut + 1:]) if cut >= 0 else -1


def parse_args(argv: Sequence[str], out: IO[str]) -> Options | None:
    """ndeval's option loop (it consumes options while more than two arguments remain);
    None when ``-version`` / ``-help`` printed and the program ends with status 0."""
    from rank_polars.dropins.ndeval import help_text

    o = Options()
    args = [PROGRAM, *argv]
    usage = Exit(USAGE % PROGRAM)
    while len(args) != 3:
        n, a1 = len(args), args[1] if len(args) >= 2 else ""
        if n >= 2 and a1 == "-version":
            out.write(f"{PROGRAM}: {VERSION}\n")
            return None
        if n >= 2 and a1 == "-help":
            out.write(help_text.HELP)
            return None
        if n >= 5 and a1 in ("-alpha", "-beta", "-M", "-baseline", "-riskAlpha"):
            value = args[2]
            if a1 == "-alpha":
                o.alpha = scan_float(value, o.alpha)
                if o.alpha < 0.0 or o.alpha > 1.0 or math.isnan(o.alpha):
                    raise usage
            elif a1 == "-beta":
                o.beta = scan_float(value, o.beta)
                if o.beta < 0.0 or o.beta > 1.0 or math.isnan(o.beta):
                    raise usage
            elif a1 == "-M":
                o.depth = scan_int(value, o.depth)
                if o.depth <= 0:
                    raise usage
            elif a1 == "-baseline":
                o.baseline = value
            else:
                o.risk_alpha = scan_float(value, o.risk_alpha)
                o.risk_alpha_text = value
                if o.risk_alpha < 0.0:
                    raise usage
            del args[1:3]
        elif n >= 4 and a1 == "-traditional":
            o.traditional = True
            del args[1]
        elif n >= 4 and a1.startswith("-"):
            for ch in a1[1:]:
                if ch == "c":
                    o.complete = True
                elif ch != "a":  # -a: "report all measures", read and unused
                    raise usage
            del args[1]
        else:
            raise usage
    o.files = args[1:]
    return o


def _lines(path: str, what: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        # ndeval's message for a run file lacks its newline ("...\"%s\"n"): reproduced
        raise Exit(f'cannot open {what} file "{path}"' + ("\n" if what == "qrel" else "n")) from None
    text = data.decode("latin-1")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") and len(line) > 1 else line for line in lines]


def _split(line: str, m: int) -> list[str]:
    # C's isspace: space, \t, \n, \v, \f, \r; at most m fields, the rest ignored
    return re.split(r"[ \t\n\v\f\r]+", line.strip(" \t\n\v\f\r"))[:m] if line.strip(" \t\n\v\f\r") else []


def read_qrels(path: str) -> pl.DataFrame:
    """``Q`` (topic), subtopic, ``ITEM``, relevance (0/1), as ndeval reads them."""
    lines = _lines(path, "qrel")
    if not lines:
        raise Exit(f'qrel file "{path}" is empty\n')
    rows = []
    for line in lines:
        a = _split(line, 4)
        if len(a) != 4 or natural_number(a[0]) < 0 or natural_number(a[1]) < 0 or natural_number(a[3]) < 0:
            raise Exit(f'syntax error in qrel file "{path}" at line {len(rows) + 1}\n')
        rows.append((natural_number(a[0]), natural_number(a[1]), a[2], min(natural_number(a[3]), 1)))
    frame = pl.DataFrame(rows, schema={Q: pl.Int64, "subtopic": pl.Int64, ITEM: pl.String, "rel": pl.Int64},
                         orient="row")
    return frame.group_by(Q, "subtopic", ITEM).agg(pl.col("rel").max())


def read_run(path: str, o: Options) -> tuple[pl.DataFrame, str]:
    """``Q``, ``ITEM``, ``RANK`` (1, 2, ... per topic in ndeval's order, after ``-M``) and the runid."""
    lines = _lines(path, "run")
    if not lines:
        raise Exit(f'run file "{path}" is empty\n')
    rows = []
    for line in lines:
        a = _split(line, 6)
        if len(a) != 6 or parse_topic(a[0]) < 0 or natural_number(a[3]) < 0:
            raise Exit(f'syntax error in run file "{path}" at line {len(rows) + 1}\n')
        rows.append((parse_topic(a[0]), a[2], natural_number(a[3]), scan_float(a[4], 0.0), a[5]))
    runid = rows[0][4]
    frame = pl.DataFrame([r[:4] for r in rows], schema={Q: pl.Int64, ITEM: pl.String, "rank": pl.Int64,
                                                        "score": pl.Float64}, orient="row")
    if o.traditional:
        # score descending, then docno descending (strcmp: bytes)
        frame = frame.with_columns(pl.col(ITEM).cast(pl.Binary).alias("__bytes")).sort(
            Q, "score", "__bytes", descending=[False, True, True]).drop("__bytes")
        frame = frame.with_columns(pl.int_range(1, pl.len() + 1).over(Q).cast(pl.Int64).alias("rank"))
    dup = frame.group_by(Q, "rank").len().filter(pl.col("len") > 1).sort(Q, "rank")
    if dup.height:
        raise Exit(f'duplicate rank ({dup["rank"][0]}) for topic {dup[Q][0]} in run file "{path}"\n')
    frame = frame.sort(Q, "rank").with_columns(pl.int_range(1, pl.len() + 1).over(Q).cast(pl.Int64).alias(RANK))
    if o.depth > 0:
        frame = frame.filter(pl.col(RANK) <= o.depth)
    dup = (frame.with_columns(pl.col(ITEM).cast(pl.Binary).alias("__bytes"))
           .group_by(Q, "__bytes").agg(pl.len(), pl.col(ITEM).first()).filter(pl.col("len") > 1).sort(Q, "__bytes"))
    if dup.height:
        raise Exit(f'duplicate docno ({dup[ITEM][0]}) for topic {dup[Q][0]} in run file "{path}"\n')
    return frame.select(Q, ITEM, RANK), runid


def _specs(o: Options) -> list[tuple[str, object]]:
    a, b = {"alpha": o.alpha}, {"alpha": o.alpha, "beta": o.beta}
    specs: list[tuple[str, object]] = []
    for cls in (ERRIA, NERRIA, AlphaDCG, AlphaNDCG):
        specs += [(f"{cls.NAME}@{k}", cls(k, **a)) for k in _CUTS]
    specs += [("nrbp", NRBP(**b)), ("nnrbp", NNRBP(**b)), ("map_ia", MAPIA(**a))]
    for cls in (PIA, StRecall):
        specs += [(f"{cls.NAME}@{k}", cls(k, **a)) for k in _CUTS]
    return specs


def topic_values(qrels: pl.DataFrame, run: pl.DataFrame, o: Options) -> dict[int, list[float]]:
    """The 21 values of each topic of the run (zeros for topics without judgments)."""
    specs = _specs(o)
    labels = [label for label, _ in specs]
    subtopics = qrels.rename({"rel": "relevance"})
    ranks = int(run.get_column(RANK).max() or 0) + 1  # ndeval's arithmetic (see run_values)
    table = run_values(run.lazy(), subtopics.lazy(), [Q], specs, "relevance", ranks=ranks).collect()
    got = {row[0]: list(row[1:]) for row in table.select(Q, *labels).iter_rows()}
    judged = set(qrels[Q].unique().to_list())
    relevant = set(qrels.filter(pl.col("rel") > 0)[Q].unique().to_list())
    nan = -math.nan if math.copysign(1.0, -math.nan) < 0 else math.nan  # C's 0.0/0.0 on x86: -nan
    nrbp_zero = (1.0 - (1.0 - o.alpha) * o.beta) == 0.0
    out = {}
    for topic in sorted(set(run[Q].unique().to_list())):
        values = got.get(topic, [0.0] * len(labels))
        if topic in judged and (topic not in relevant or nrbp_zero):
            values = list(values)
            values[labels.index("nnrbp")] = nan  # ndeval's 0/0
        out[topic] = values
    return out


def _risk(r: float, b: float, a: float) -> float:
    return r - b if r >= b else (a + 1) * (r - b)


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    return f"{v:.6f}"


def _divide(total: float, n: int) -> float:
    if n:
        return total / n
    if math.isnan(total):
        return total
    return -math.nan if total == 0 else math.copysign(math.inf, total)


def output(run: dict[int, list[float]], actual: int, runid: str, o: Options,
           base: dict[int, list[float]] | None, brunid: str | None, out: IO[str]) -> None:
    """ndeval's ``outputMeasures``: a row per topic (merged with the baseline's), then amean."""
    out.write(HEADER)
    r_topics, b_topics = sorted(run), sorted(base or {})
    zero_baseline = not b_topics
    name = runid if zero_baseline else f"{runid} (rel to. {brunid}; rs=1+a; a={o.risk_alpha_text})"
    zeros = [0.0] * 21
    totals = [0.0] * 21
    i = j = count = 0
    while i < len(r_topics) or (j < len(b_topics) and o.complete):
        zero_run, zero_base = i >= len(r_topics), zero_baseline or j >= len(b_topics)
        ni, nj = i, j
        if not zero_run and not zero_base:
            if r_topics[i] == b_topics[j]:
                topic, ni, nj = r_topics[i], i + 1, j + 1
            elif r_topics[i] > b_topics[j]:
                zero_run, topic, nj = True, b_topics[j], j + 1
                if not o.complete:
                    i, j = ni, nj
                    continue
            else:
                topic, zero_base, ni = r_topics[i], True, i + 1
        elif zero_run:
            topic, nj = b_topics[j], j + 1
        else:
            topic, ni = r_topics[i], i + 1
        rv = zeros if zero_run else run[r_topics[i]]
        bv = zeros if zero_base else base[b_topics[j]]  # type: ignore[index]
        values = [_risk(r, b, o.risk_alpha) for r, b in zip(rv, bv)]
        out.write(f"{name},{topic}," + ",".join(_fmt(v) for v in values) + "\n")
        totals = [t + v for t, v in zip(totals, values)]
        i, j = ni, nj
        count += 1
    if not zero_baseline and count > actual:
        actual = count
    out.write(f"{name},amean," + ",".join(_fmt(_divide(t, actual)) for t in totals) + "\n")


def main(argv: Sequence[str], out: IO[str], err: IO[str]) -> int:
    """Run ndeval with ``argv`` (without the program name); its exit status."""
    try:
        o = parse_args(argv, out)
        if o is None:
            return 0
        qrels = read_qrels(o.files[0])
        run, runid = read_run(o.files[1], o)
        values = topic_values(qrels, run, o)
        judged = set(qrels[Q].unique().to_list())
        actual = sum(1 for t in values if t in judged)
        base = brunid = None
        if o.baseline is not None:
            brun, brunid = read_run(o.baseline, o)
            base = topic_values(qrels, brun, o)
        if o.complete:
            actual = len(judged)
        output(values, actual, runid, o, base, brunid, out)
        return 0
    except Exit as e:
        out.flush()
        err.write(f"{PROGRAM}: {e.message}")
        return 1


__all__ = ["main", "read_qrels", "read_run", "topic_values"]
