"""The parts of the drop-in ``rank-polars ndeval`` and ``rank-polars gdeval`` commands: reading
their files (:mod:`.files`), computing ndeval's table (:mod:`.command`) and gdeval's
(:mod:`.gdeval`).  The measures themselves are :mod:`rank_polars.measures.diversity`."""

from .files import read_subtopic_qrels

__all__ = ["read_subtopic_qrels"]
