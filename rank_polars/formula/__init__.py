"""The formula tree, and every compiler of it.

Each metric is written once, as a tree of :mod:`.tree`'s nodes (the specs in
:mod:`rank_polars.measures` build it).  The compilers read that one tree:

* :mod:`.tree` — the nodes, and their compilation to Polars expressions and to SQL text;
* :mod:`.listform` — one Polars expression over a ranked list of grades (the list form);
* :mod:`.exprs` — every metric as a function returning ``pl.Expr`` (built on the list form);
* :mod:`.exprs_diversity` — ndeval's measures over a ranked list of subtopic lists;
* :mod:`.namespace` — the ``ranking`` expression namespace, delegating to :mod:`.exprs`;
* :mod:`.macros` — the DuckDB macro files of ``sql/``, generated from the tree;
* :mod:`.sql_macros` — where those files are, and loading them on a connection.

The engines (:mod:`rank_polars.engines`) compile the same tree over a whole log, through the plan.
"""
