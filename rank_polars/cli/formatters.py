"""Output formats: a name -> writer table.  A writer turns a DataFrame into the file's
content (text, or bytes for Parquet); where the content goes is :mod:`.output`'s job.

>>> import polars as pl
>>> df = pl.DataFrame({"model": ["a|b", "c"], "ndcg@10": [0.123456, 1.0]})
>>> print(FORMATTERS["markdown"](df), end="")
| model | ndcg@10 |
|-------|--------:|
| a\\|b  |  0.1235 |
| c     |  1.0000 |
>>> print(FORMATTERS["csv"](df), end="")
model,ndcg@10
a|b,0.123456
c,1.0
"""

from __future__ import annotations

import html
import io
import json
import math
import sys
from typing import Any, Callable, Union

import polars as pl

from rank_polars.presentation import cell

Content = Union[str, bytes]
Writer = Callable[[pl.DataFrame], Content]

# formats meant for people: they show the display table of a comparison, not its raw columns
FOR_PEOPLE = ("table", "markdown", "latex", "html")


def _polars_text(df: pl.DataFrame, formatting: str) -> str:
    with pl.Config(
        tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
        float_precision=4, tbl_width_chars=10_000, fmt_str_lengths=1_000_000,  # ids whole, never cut with …
        tbl_formatting=formatting,
        tbl_hide_dtype_separator=True,
    ):
        return str(df) + "\n"


def to_table(df: pl.DataFrame) -> str:
    """A boxed text table (UTF-8 lines where stdout takes them, ASCII otherwise)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    return _polars_text(df, "UTF8_FULL_CONDENSED" if encoding == "utf8" else "ASCII_FULL_CONDENSED")


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(df: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; ``|`` in a cell is escaped, numbers align right."""
    right = [dt.is_numeric() for dt in df.dtypes]
    head = [_md_escape(c) for c in df.columns]
    body = [[_md_escape(cell(v)) for v in row] for row in df.iter_rows()]
    widths = [max(3, len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if r else "-" * (w + 2) for w, r in zip(widths, right)) + "|"
    return "\n".join([line(head), rule, *(line(r) for r in body)]) + "\n"


def _latex_escape(text: str) -> str:
    """Special characters as commands; ``|<>`` too (LaTeX's default OT1 fonts print them as an em
    dash, ¡ and ¿); line breaks as spaces (a blank line would end the paragraph inside the table)."""
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
             "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}"}
    return "".join(" " if ch in "\r\n" else table.get(ch, ch) for ch in text)


def to_latex(df: pl.DataFrame) -> str:
    """A booktabs ``tabular``; special characters escaped."""
    align = "".join("r" if dt.is_numeric() else "l" for dt in df.dtypes)
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule"]
    lines.append(" & ".join(_latex_escape(c) for c in df.columns) + r" \\")
    lines.append("\\midrule")
    for row in df.iter_rows():
        lines.append(" & ".join(_latex_escape(cell(v)) for v in row) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def to_json(df: pl.DataFrame) -> str:
    """A list of row objects; NaN and infinities become ``null``."""
    rows = [{k: _json_safe(v) for k, v in row.items()} for row in df.iter_rows(named=True)]
    return json.dumps(rows, indent=2, allow_nan=False) + "\n"


def to_jsonl(df: pl.DataFrame) -> str:
    """One JSON object a line (JSON Lines); NaN and infinities become ``null``."""
    rows = ({k: _json_safe(v) for k, v in row.items()} for row in df.iter_rows(named=True))
    return "".join(json.dumps(row, allow_nan=False) + "\n" for row in rows)


def to_csv(df: pl.DataFrame) -> str:
    return df.write_csv()


def to_tsv(df: pl.DataFrame) -> str:
    return df.write_csv(separator="\t")


def to_html(df: pl.DataFrame) -> str:
    """A standalone HTML ``<table>``: cells escaped, numbers shown as in the text table, right-aligned."""
    right = [dt.is_numeric() for dt in df.dtypes]

    def row(cells: list[str], tag: str) -> str:
        styles = [' style="text-align:right"' if r else "" for r in right]
        return "<tr>" + "".join(f"<{tag}{s}>{html.escape(c)}</{tag}>" for c, s in zip(cells, styles)) + "</tr>"

    body = "\n".join(row([cell(v) for v in values], "td") for values in df.iter_rows())
    return f"<table>\n<thead>\n{row(df.columns, 'th')}\n</thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"


def to_parquet(df: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    df.write_parquet(buffer)
    return buffer.getvalue()


FORMATTERS: dict[str, Writer] = {
    "table": to_table, "csv": to_csv, "tsv": to_tsv, "json": to_json, "jsonl": to_jsonl, "parquet": to_parquet,
    "markdown": to_markdown, "latex": to_latex, "html": to_html,
}
BINARY = ("parquet",)
# the format an output file's name says (-o out.parquet); a name not listed says nothing
BY_EXTENSION = {
    ".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".json": "json",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".md": "markdown", ".markdown": "markdown", ".tex": "latex",
    ".html": "html", ".htm": "html", ".txt": "table",
}

__all__ = ["BINARY", "BY_EXTENSION", "FORMATTERS", "FOR_PEOPLE", "to_csv", "to_html", "to_json", "to_jsonl", "to_latex",
           "to_markdown", "to_parquet", "to_table", "to_tsv"]
