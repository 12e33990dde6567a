"""The parts of the drop-in ``rank-polars ndeval`` and ``rank-polars gdeval`` commands: reading
their files (:mod:`.files`), computing ndeval's table (:mod:`.command`) and gdeval's
(:mod:`.gdeval`), and their risk-sensitive evaluation for any measure (:func:`.risk.risk`).  The measures themselves are :mod:`rank_polars.measures.diversity`."""

from .files import read_subtopic_qrels
from .risk import risk

__all__ = ["read_subtopic_qrels", "risk"]
