"""The exceptions and warnings rank_polars raises.

Every error names the column, the problem and a few offending queries, so that a user can
find the bad rows without reading a traceback.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Iterable


class RankPolarsError(ValueError):
    """Bad input: a wrong argument, metric name or data that cannot be evaluated."""


class MetricNameError(RankPolarsError):
    """An unknown metric name, parameter or parameter value."""


class DataError(RankPolarsError):
    """The data itself is invalid (duplicates, nulls, bad positions, ...)."""


class CoverageWarning(UserWarning):
    """Some queries were not evaluated or were scored 0 because one side lacks them."""


class SmallSampleWarning(UserWarning):
    """A test was not run: no p-value it could give on so few queries (or resamples) is below alpha."""


class LowSupportWarning(UserWarning):
    """Few logged clicks support a counterfactual estimate (the usual failure of IPS): it rests on
    them, and its interval is wide or unreliable (``rp.counterfactual``)."""


def examples(values: Iterable[object], limit: int = 5, *, quote: bool = True) -> str:
    """``'a', 'b', 'c' (and 12 more)`` for error messages."""
    vals = list(values)
    shown = ", ".join(repr(v) if quote else str(v) for v in vals[:limit])
    return shown + (f" (and {len(vals) - limit} more)" if len(vals) > limit else "")


def plural(n: int, noun: str) -> str:
    """``1 row``, ``2,000 rows``: a count with thousands separators and its noun agreeing."""
    return f"{int(n):,} {noun}{'' if n == 1 else 's'}"


def tally(rows: int, rankings: int, stat: str, checks: str) -> str:
    """What a check's count says, the same words in ``evaluate`` and ``validate``.

    A ``*_dup`` statistic counts the repeats (rows beyond the first of each position or
    item); ``checks="full"`` counts only rows that can change a value (and those sharing an
    item or position with them), ``"strict"`` (and ``rank-polars validate``) every row, so
    the two can differ on the same data.

    >>> tally(1, 1, "item_dup", "strict")
    '1 repeated row in 1 ranking, counting every row'
    >>> tally(813, 184, "item_dup", "full")
    "813 repeated rows in 184 rankings, counting the rows that can change a value; checks='strict' counts every row"
    """
    what = plural(rows, "repeated row" if stat.endswith("_dup") else "row")
    scope = ("counting every row" if checks == "strict" else
             "counting the rows that can change a value; checks='strict' counts every row")
    return f"{what} in {plural(rankings, 'ranking')}, {scope}"


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning] = CoverageWarning) -> None:
    """``warnings.warn`` pointing at the caller's line: the first frame outside rank_polars
    (however deep in the package the warning is raised)."""
    frame, level = sys._getframe(1), 2
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
