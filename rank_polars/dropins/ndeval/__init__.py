"""``rank-polars ndeval``: ndeval's command line and output, computed by rank_polars.

:mod:`.command` reads ndeval's files and prints its table (:mod:`.help_text` is its usage text).
The measures are :mod:`rank_polars.measures.diversity`, computed by
:mod:`rank_polars.families.diversity`; the subtopic judgments are read by
:mod:`rank_polars.io.subtopics`; the risk-sensitive rows are :mod:`rank_polars.dropins.risk`.
"""
