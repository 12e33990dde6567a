"""Where results go: stdout, or a file written safely.

A file is written to a temporary file beside it and then moved into place, so a kill
mid-write leaves the old file whole.  Without ``--force`` the file is created exclusively:
one that appeared while the command ran is never overwritten.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import click
import polars as pl

from rank_polars.errors import plural
from rank_polars.cli.errors import CLIError
from rank_polars.cli.formatters import BINARY, BY_EXTENSION, FOR_PEOPLE, FORMATTERS, Content


def output_format(fmt: str | None, output: str | None) -> str:
    """``--format``, or the format ``-o``'s extension names (``table`` when neither says).

    >>> output_format(None, "means.parquet"), output_format("csv", "means.CSV"), output_format(None, None)
    ('parquet', 'csv', 'table')
    """
    named = BY_EXTENSION.get(Path(output).suffix.lower()) if output else None
    if fmt is None:
        return named or "table"
    if named is not None and named != fmt and fmt in FORMATTERS:
        raise CLIError(f"-o {output!r} names a {named} file but --format is {fmt}: rename the file, or drop "
                       f"--format to write {named}")
    return fmt


def check_output(output: str | None, fmt: str | None, force: bool) -> str:
    """The output format (see :func:`output_format`); fails before any work when the output cannot be written."""
    fmt = output_format(fmt, output)
    if fmt in BINARY and not output:
        raise CLIError(f"--format {fmt} writes a binary file: give it with -o FILE")
    check_file(output, force, "output file")
    return fmt


def check_file(path: str | None, force: bool, what: str) -> None:
    if not path:
        return
    if Path(path).exists() and not force:
        raise CLIError(f"{what} {path!r} exists; pass --force to overwrite it")
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        why = "is not a folder" if parent.exists() else "does not exist"
        raise CLIError(f"cannot write {path!r}: {str(Path(path).parent)!r} {why}")


def write_file(path: str | Path, content: Content, *, force: bool) -> None:
    """Write ``content`` to ``path`` through a temporary file beside it.

    ``force``: replace an existing file atomically.  Otherwise create it exclusively (a hard
    link of the finished temporary file), failing if it exists by then.
    """
    target = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.resolve().parent)
    except OSError as e:  # its message would name the temporary file: name the one asked for
        raise _naming(e, path) from e
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would survive the rename: the mode open() gives
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if force:
            os.replace(tmp, target)
        else:
            _create_exclusively(tmp, target, data)
    except FileExistsError:
        raise CLIError(f"output file {str(path)!r} was created while the command ran; pass --force to overwrite it") from None
    except OSError as e:  # a full disk, a quota: the file asked for, not the temporary one
        raise _naming(e, path) from e
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _naming(e: OSError, path: str | Path) -> OSError:
    """``e`` naming ``path`` (not the temporary file beside it) when it has an error code to keep."""
    return OSError(e.errno, e.strerror, str(path)) if e.strerror else e


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it: put it back at once
    os.umask(mask)
    return mask


def _create_exclusively(tmp: str, target: Path, data: bytes) -> None:
    try:
        os.link(tmp, target)  # atomic, and fails if target exists
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links
        with open(target, "xb") as f:
            f.write(data)


def emit(df: pl.DataFrame, fmt: str, output: str | None, *, force: bool = False,
         display: pl.DataFrame | None = None, footer: str = "") -> None:
    """Write ``df`` as ``fmt``; the formats meant for people show ``display`` when given."""
    shown = display if display is not None and fmt in FOR_PEOPLE else df
    content = FORMATTERS[fmt](shown)
    if footer and fmt == "table":
        content = str(content) + footer
    if output:
        write_file(output, content, force=force)
        click.echo(f"wrote {plural(df.height, 'row')} to {output}", err=True)
    else:
        assert isinstance(content, str)
        click.echo(content, nl=False)


__all__ = ["check_file", "check_output", "emit", "output_format", "write_file"]
