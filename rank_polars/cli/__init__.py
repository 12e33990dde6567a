"""The ``rank-polars`` command line.

::

    rank-polars demo                                   # the whole job on the bundled support-chatbot log
    rank-polars evaluate log/ -m ndcg@10 -m mrr --by model
    rank-polars compare log/ -m ndcg@10 --by model --baseline bot-v1 --report report.html
    rank-polars validate run.trec --qrels judgments.qrels
    rank-polars sql -m ndcg@10 --table logs --by model --dialect spark

Errors in the data or the arguments print one line, ``error: ...``, to stderr and exit
non-zero (``--debug`` shows the traceback too).  The package: ``app`` (the group and its
error handling), ``options`` (option bundles), ``loading`` (reading inputs), ``formatters``
(output formats), ``output`` (where text goes, safe file writes), ``progress`` (the display),
``errors`` (exit codes, wording) and ``commands/`` (one module per command).
"""

from rank_polars.cli.app import main

__all__ = ["main"]
