"""trec_eval's command line: ``getopt_long`` with the same short and long options.

GNU ``getopt`` rules as trec_eval 10 is built with them: options and the two file names may be
interleaved, ``-l2`` and ``-l 2`` (and ``-mP.5`` / ``-m P.5``) are the same, flags combine
(``-qc``), ``--`` ends the options, long options may be abbreviated to a unique prefix and take
their value after ``=`` or as the next argument.  Errors are :class:`TrecEvalExit` with
trec_eval's exit status and message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# trec_eval's getopt string "hvqm:cl:nD:JN:M:R:T:oZ:": option letter -> takes a value
SHORT = {"h": False, "v": False, "q": False, "m": True, "c": False, "l": True, "n": False, "D": True,
         "J": False, "N": True, "M": True, "R": True, "T": True, "o": False, "Z": True}
LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m",
        "complete_rel_info_wanted": "c", "level_for_rel": "l", "nosummary": "n", "Debug_level": "D",
        "Judged_docs_only": "J", "Number_docs_in_coll": "N", "Max_retrieved_per_topic": "M",
        "Rel_info_format": "R", "Results_format": "T", "Output_old_results_format": "o", "Zscore": "Z"}
LONG_TAKES_VALUE = {"o": True}  # trec_eval declares --Output_old_results_format with a value

MAXLONG = 2**63 - 1
PROG = "trec_eval"
USAGE = (
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_qrels' prints all qrels measures, '-m official' is default)\n"
)


class TrecEvalExit(Exception):
    """Stop with trec_eval's exit ``status`` after writing ``message`` to stderr."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Options:
    """What trec_eval's command line asked for (``measures``: the ``-m`` arguments, in order)."""

    qrels: str = ""
    results: str = ""
    query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int = 1
    max_docs: int = MAXLONG
    num_docs_in_coll: int = 0
    measures: list[str] = field(default_factory=list)
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    help: bool = False
    version: bool = False


def atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (0 if none), e.g. ``'23.4'`` -> 23.

    >>> atol("23.4"), atol(" -2x"), atol("x")
    (23, -2, 0)
    """
    s = text.lstrip(" \t\n\v\f\r")
    sign, i = 1, 0
    if s[:1] in ("+", "-"):
        sign, i = (-1 if s[0] == "-" else 1), 1
    j = i
    while j < len(s) and s[j].isdigit() and s[j].isascii():
        j += 1
    return sign * int(s[i:j]) if j > i else 0


def _usage_error(message: str = "") -> TrecEvalExit:
    return TrecEvalExit(1, message + USAGE)


def _long_option(name: str) -> str:
    if name in LONG:
        return name
    matches = [n for n in LONG if n.startswith(name)]
    if len(set(LONG[m] for m in matches)) == 1:
        return matches[0]
    if not matches:
        raise _usage_error(f"{PROG}: unrecognized option '--{name}'\n")
    raise _usage_error(f"{PROG}: option '--{name}' is ambiguous\n")


def parse_args(argv: list[str], mark_measure=None) -> Options:  # type: ignore[no-untyped-def]
    """trec_eval's options and its two file names.

    ``mark_measure(text)`` is called for each ``-m`` as trec_eval does while reading the options
    (an unknown measure stops there, before later options are looked at).

    >>> o = parse_args(["-q", "-mP.5,10", "-l2", "-c", "qrels", "run"])
    >>> o.query, o.measures, o.level, o.complete, o.qrels, o.results
    (True, ['P.5,10'], 2, True, 'qrels', 'run')
    """
    opts = Options()
    files: list[str] = []
    values: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            files.extend(argv[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            letter = LONG[_long_option(name)]
            takes = SHORT[letter] or LONG_TAKES_VALUE.get(letter, False)
            if takes and not eq:
                if i >= len(argv):
                    raise _usage_error(f"{PROG}: option '--{_long_option(name)}' requires an argument\n")
                value, i = argv[i], i + 1
            elif not takes and eq:
                raise _usage_error(f"{PROG}: option '--{_long_option(name)}' doesn't allow an argument\n")
            values.append((letter, value if takes else None))
        elif arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                letter = arg[j]
                j += 1
                if letter not in SHORT:
                    raise _usage_error(f"{PROG}: invalid option -- '{letter}'\n")
                if not SHORT[letter]:
                    values.append((letter, None))
                    continue
                if j < len(arg):
                    value = arg[j:]
                elif i < len(argv):
                    value, i = argv[i], i + 1
                else:
                    raise _usage_error(f"{PROG}: option requires an argument -- '{letter}'\n")
                values.append((letter, value))
                break
        else:
            files.append(arg)
        # trec_eval acts on each option as getopt returns it
        for letter, value in values:
            _apply(opts, letter, value, mark_measure)
        values.clear()
    if opts.help or opts.version:
        return opts
    if len(files) != 2:
        raise _usage_error()
    opts.qrels, opts.results = files
    return opts


def _apply(opts: Options, letter: str, value: str | None, mark_measure) -> None:  # type: ignore[no-untyped-def]
    if letter == "h":
        opts.help = True
    elif letter == "v":
        opts.version = True
        raise TrecEvalExit(0, f"{PROG} version 10.0 (rank-polars trec-eval)\n")
    elif letter == "q":
        opts.query = True
    elif letter == "m":
        assert value is not None
        if mark_measure is not None:
            mark_measure(value)
        opts.measures.append(value)
    elif letter == "c":
        opts.complete = True
    elif letter == "l":
        opts.level = atol(value or "")
    elif letter == "n":
        opts.summary = False
    elif letter == "J":
        opts.judged_only = True
    elif letter == "N":
        opts.num_docs_in_coll = atol(value or "")
    elif letter == "M":
        opts.max_docs = atol(value or "")
    elif letter == "R":
        opts.rel_format = value or ""
    elif letter == "T":
        opts.results_format = value or ""
    elif letter == "Z":
        opts.zscores = value
    # -D (debug level) and -o (obsolete) change nothing in the output
