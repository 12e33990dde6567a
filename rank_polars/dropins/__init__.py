"""Drop-in replacements for the reference tools of IR evaluation, computed by rank_polars.

Each takes its tool's arguments and prints its tool's output byte for byte:

* :mod:`.trec_eval` — ``rank-polars trec-eval`` (trec_eval 10);
* :mod:`.ndeval` — ``rank-polars ndeval`` (the TREC Web track's diversity evaluation);
* :mod:`.gdeval` — ``rank-polars gdeval`` (gdeval.pl's nDCG@k and ERR@k);
* :mod:`.risk` — the risk-sensitive rows ndeval and gdeval share (``-riskAlpha``).

They sit on top of the library (they call :func:`rank_polars.evaluate` and the families) and
below the command line, which only parses arguments and hands them over.
"""
