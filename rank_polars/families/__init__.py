"""The compute functions of measure families, one module per family (``polars_values`` and
``sql_values``): see :mod:`rank_polars.engines.base` and CONTRIBUTING.md, "Adding a measure
family".  The specs live in :mod:`rank_polars.measures`."""
