"""`loci route` and `loci ask` as one-shot commands, without loading typer.

A one-shot question pays for every import, so the entry point (``loci.front.cli``)
parses a plain ``route``/``ask`` command line here with argparse and only falls back
to the typer app for anything else (``--help``, a bad value, another command): the
typer commands call the same ``route_command``/``ask_command`` and so print the same.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


def failure(exc: BaseException) -> tuple[str, int] | None:
    """An expected error as (one line, exit code); None for a bug, which keeps its traceback."""
    from loci.kernel.errors import LociError

    if isinstance(exc, LociError):
        return str(exc), exc.exit_code
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; set LOCI_HOME to a writable directory", 1
    return None


def report_failure(message: str, as_json: bool, err: Callable[[str], None]) -> None:
    """An expected error: its one line on stderr or, with ``--json``, one object on stdout."""
    if as_json:
        from loci.front.render import dump_json
        from loci.kernel.errors import error_object

        dump_json(error_object(message))
    else:
        err(message)


def _cwd_arg(cwd: Path | None, no_cwd: bool) -> Path | None:
    if no_cwd:
        return None
    return cwd if cwd is not None else Path.cwd()


def _notes(session, err: Callable[[str], None]) -> None:
    for note in session.notes:
        err(note)


def route_command(question: str, *, explain: bool, group: str | None, cwd: Path | None, no_cwd: bool,
                  fast: bool, as_json: bool, echo: Callable[[str], None], err: Callable[[str], None]) -> None:
    from loci.front.render import dump_json, route_lines
    from loci.query.ask import open_session, route_question

    session = open_session()
    result = route_question(session, question, cwd=_cwd_arg(cwd, no_cwd), group=group, fast=fast)
    _notes(session, err)
    if as_json:
        dump_json(result.to_json(explain=explain))
    else:
        echo("\n".join(route_lines(result, explain)))


def ask_command(question: str, *, scope: str | None, group: str | None, k: int, fast: bool,
                cwd: Path | None, no_cwd: bool, as_json: bool, echo: Callable[[str], None],
                err: Callable[[str], None]) -> None:
    from loci.front.render import ask_lines, dump_json
    from loci.query.ask import ask, open_session

    session = open_session()
    result = ask(session, question, cwd=_cwd_arg(cwd, no_cwd), scope=scope, group=group, k=k, fast=fast)
    _notes(session, err)
    if as_json:
        dump_json(result.to_json())
    else:
        echo("\n".join(ask_lines(result)))


K_RANGE = (1, 50)   # `ask --k`: results per scope
K_DEFAULT = 5


# each command's options: the keyword the command takes, and how a value is read (None: a flag)
_COMMON = {"--group": ("group", str), "--cwd": ("cwd", Path), "--no-cwd": ("no_cwd", None),
           "--fast": ("fast", None), "--json": ("as_json", None)}
OPTIONS: dict[str, dict[str, tuple[str, Callable | None]]] = {
    "route": {**_COMMON, "--explain": ("explain", None)},
    "ask": {**_COMMON, "--scope": ("scope", str), "--k": ("k", int)},
}
DEFAULTS = {"k": K_DEFAULT}   # an option's value when not given, where it is not False (a flag) or None


def _parse_options(command: str, args: list[str]) -> dict | None:
    """The keyword arguments of a plain command line (one question, known options in any order,
    ``--opt value`` or ``--opt=value``, ``--`` before a question that starts with a dash), or
    None for anything else. A hand parser: argparse alone cost a one-shot route ~12 ms."""
    spec = OPTIONS[command]
    out: dict = {key: DEFAULTS.get(key, False if read is None else None) for key, read in spec.values()}
    question: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            question += args[i:]
            break
        if not arg.startswith("-") or arg == "-":
            question.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name not in spec:
            return None
        key, read = spec[name]
        if read is None:
            if eq:
                return None
            out[key] = True
            continue
        if not eq:
            if i >= len(args):
                return None
            value = args[i]
            i += 1
        try:
            out[key] = read(value)
        except ValueError:
            return None
    if len(question) != 1:
        return None
    out["question"] = question[0]
    return out


COMMANDS = {"route": route_command, "ask": ask_command}


def parse(argv: list[str]) -> tuple[Callable, dict] | None:
    """(command, its keyword arguments) for a plain route/ask command line, else None."""
    if not argv or argv[0] not in COMMANDS or any(a in ("--help", "--version") for a in argv[1:]):
        return None
    kwargs = _parse_options(argv[0], argv[1:])
    if kwargs is None:
        return None
    if "k" in kwargs and not K_RANGE[0] <= kwargs["k"] <= K_RANGE[1]:
        return None
    return COMMANDS[argv[0]], kwargs


def _echo(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"loci: {text}\n")


def _return_big_buffers() -> None:
    """Have glibc give every buffer of 128 KiB or more back to the system when it is freed.

    Its default threshold rises to the size of the largest buffer freed so far, so a question
    that reads the encoder's weights one matrix at a time (2.4 MB each) kept 6 to 9 MB of freed
    heap for the rest of the process, on top of which the vectors were read."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 128 * 1024)   # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


def run(argv: list[str]) -> int | None:
    """Answer a plain route/ask command line and return its exit code; None when typer must."""
    parsed = parse(argv)
    if parsed is None:
        return None
    _return_big_buffers()
    command, kwargs = parsed
    try:
        command(echo=_echo, err=_err, **kwargs)
    except Exception as exc:
        known = failure(exc)
        if known is None:
            raise
        report_failure(known[0], kwargs.get("as_json", False), _err)
        return known[1]
    return 0
