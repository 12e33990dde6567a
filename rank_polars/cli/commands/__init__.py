"""One module per command; each defines ``command``, a click command.

To add a command: write ``commands/<name>.py`` defining ``command`` (``@click.command(name=...)``)
and add ``"<name>"`` to ``COMMANDS`` below (the order is the order of ``rank-polars --help``).
"""

COMMANDS = ["evaluate", "compare", "track", "gate", "agreement", "pool", "validate", "sql", "demo", "trec_eval", "ndeval",
            "gdeval"]
