"""``rank-polars trec-eval``: trec_eval 10's command line and output, computed by rank_polars.

:func:`run` takes trec_eval's arguments (``[-q] [-c] [-n] [-l N] [-M N] [-J] [-m MEASURE[.PARAMS]]...
[-R FORMAT] [-Z FILE] QRELS RUN``) and writes what trec_eval 10 writes, byte for byte, with its
exit status.  The parts: :mod:`.options` (its ``getopt``), :mod:`.measures` (its measure table ->
our specs), :mod:`.files` (its input formats), :mod:`.evaluation` (ranking, checks,
``rp.evaluate``), :mod:`.prefs` (``-R prefs`` / ``qrels_prefs``: preference pairs),
:mod:`.judgment_groups` (``-R qrels_jg``), :mod:`.checks` (where trec_eval stops),
:mod:`.zscores` (``-Z``), :mod:`.output`.
"""

from rank_polars.dropins.trec_eval.command import run
from rank_polars.dropins.trec_eval.measures import TABLE, Selection
from rank_polars.dropins.trec_eval.options import Options, TrecEvalExit, parse_args

__all__ = ["TABLE", "Options", "Selection", "TrecEvalExit", "parse_args", "run"]
