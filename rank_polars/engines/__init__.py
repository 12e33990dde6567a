"""The engines that compute a plan: Polars (:class:`polars_engine.PolarsEngine`), DuckDB and
Spark (the generated SQL, :mod:`sql_engine` / :mod:`sql_runner`), one interface
(:class:`base.Engine`) through which measure families plug in too."""
