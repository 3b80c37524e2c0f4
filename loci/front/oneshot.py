"""`loci route` and `loci ask` as one-shot commands, without loading typer.

A one-shot question pays for every import, so the entry point (``loci.front.cli``)
parses a plain ``route``/``ask`` command line here with argparse and only falls back
to the typer app for anything else (``--help``, a bad value, another command): the
typer commands call the same ``route_command``/``ask_command`` and so print the same.
"""
from __future__ import annotations

import os
import sys


def failure(exc: BaseException) -> tuple[str, int] | None:
    """An expected error as (one line, exit code); None for a bug, which keeps its traceback."""
    from loci.kernel.errors import LociError

    if isinstance(exc, LociError):
        return str(exc), exc.exit_code
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; set LOCI_HOME to a writable directory", 1
    return None


def report_failure(message: str, as_json: bool, err: Callable[[str], None], write=None) -> None:
    """An expected error: its one line on stderr or, with ``--json``, one object on stdout (or
    through ``write``)."""
    if as_json:
        from loci.front.render import dump_json
        from loci.kernel.errors import error_object

        dump_json(error_object(message), write)
    else:
        err(message)


def printed(op: str, payload: dict | None, *, explain: bool = False, as_json: bool,
            failed: tuple[str, int] | None = None) -> dict:
    """What the command prints for an answer payload (``loci.query.engine.answer``), or for an
    expected failure (one line, exit code): ``{"out": stdout, "err": stderr, "code": exit code}``.
    The warm engine sends this to its client, which only writes it out (``emit``): the same text
    the in-process path prints through ``_echo``/``_err``, made by the same ``show``."""
    from loci.front.render import show

    out: list[str] = []
    err: list[str] = []
    if failed is not None:
        report_failure(failed[0], as_json, lambda text: err.append(_err_line(text)), out.append)
        return {"out": "".join(out), "err": "".join(err), "code": failed[1]}
    show(op, payload, explain=explain, as_json=as_json, echo=lambda text: out.append(text + "\n"),
         err=lambda text: err.append(_err_line(text)), write=out.append)
    return {"out": "".join(out), "err": "".join(err), "code": 0}


def emit(reply: dict) -> int:
    """Write a ``printed`` reply (stderr first, as the in-process path prints its notes first)."""
    if reply["err"]:
        sys.stderr.write(reply["err"])
    sys.stdout.write(reply["out"])
    return int(reply["code"])


def _cwd_arg(cwd, no_cwd: bool) -> str | None:
    """The directory the question is asked from, absolute (an engine has a working directory of
    its own): ``--cwd`` taken from here, else here; None with ``--no-cwd`` or when here is gone
    (``run`` says so once). A ``--cwd`` that names no directory is a usage error."""
    from loci.kernel.asked_from import asked_from, here

    if no_cwd:
        return None
    return here() if cwd is None else asked_from(cwd, "--cwd")


def question_args(op: str, question: str, *, cwd, no_cwd: bool, group: str | None, fast: bool,
                  scope: str | None = None, k: int | None = None, explain: bool = False) -> dict:
    """What the query side needs of a question (``loci.query.engine.answer``), in-process or sent."""
    args = {"question": question, "cwd": _cwd_arg(cwd, no_cwd), "group": group, "fast": fast}
    if op == "ask":
        args.update(scope=scope, k=K_DEFAULT if k is None else k)
    elif explain:
        args["explain"] = True
    return args


def answer_in_process(op: str, args: dict, as_json: bool) -> dict:
    """The answer payload from a fresh session in this process."""
    from loci.query.ask import open_session
    from loci.query.engine import answer

    return answer(open_session(), op, args, as_json)


def route_command(question: str, *, explain: bool, group: str | None, cwd, no_cwd: bool,
                  fast: bool, as_json: bool, echo: Callable[[str], None], err: Callable[[str], None]) -> None:
    from loci.front.render import show

    args = question_args("route", question, cwd=cwd, no_cwd=no_cwd, group=group, fast=fast, explain=explain)
    show("route", answer_in_process("route", args, as_json), explain=explain, as_json=as_json, echo=echo, err=err)


def ask_command(question: str, *, scope: str | None, group: str | None, k: int, fast: bool,
                cwd, no_cwd: bool, as_json: bool, echo: Callable[[str], None],
                err: Callable[[str], None]) -> None:
    from loci.front.render import show

    args = question_args("ask", question, cwd=cwd, no_cwd=no_cwd, group=group, fast=fast, scope=scope, k=k)
    show("ask", answer_in_process("ask", args, as_json), explain=False, as_json=as_json, echo=echo, err=err)


K_RANGE = (1, 50)   # `ask --k`: results per scope
K_DEFAULT = 5


# each command's options: the keyword the command takes, and how a value is read (None: a flag)
_COMMON = {"--group": ("group", str), "--cwd": ("cwd", str), "--no-cwd": ("no_cwd", None),
           "--fast": ("fast", None), "--json": ("as_json", None), "--no-server": ("no_server", None)}
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


def _err_line(text: str) -> str:
    return f"loci: {text}\n"


def _err(text: str) -> None:
    sys.stderr.write(_err_line(text))


def _return_big_buffers() -> None:
    """Have glibc give buffers of 1 MiB or more back to the system when they are freed, and the
    heap's free top beyond 8 MiB.

    Its default thresholds rise to the size of the largest buffer freed so far, so a question
    that reads the encoder's weights one matrix at a time (2.4 MB each) kept 6 to 9 MB of freed
    heap for the rest of the process, on top of which the vectors were read. Lower thresholds
    (128 KiB each) cost more than they saved: every activation of the forward pass (a question's
    intermediate layer is ~180 KB) was mapped, faulted in and unmapped again, and a question's
    encoding took 2-2.5x as long (docs/decisions/footprint.md). The engine's process leaves both
    thresholds dynamic and trims its heap after each reply instead."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 20)   # M_MMAP_THRESHOLD
        libc.mallopt(-1, 8 << 20)   # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


def run(argv: list[str]) -> int | None:
    """Answer a plain route/ask command line and return its exit code; None when typer must.

    Through the home's warm engine when one answers (``loci.front.engine_client``: nothing
    heavy is imported on that path); else in this process, after which an engine is started
    for the next question."""
    parsed = parse(argv)
    if parsed is None:
        return None
    command, kwargs = parsed
    no_server = kwargs.pop("no_server")
    from loci.kernel.asked_from import here

    if kwargs["cwd"] is None and not kwargs["no_cwd"] and here() is None:
        _err("the current directory no longer exists: asked as with --no-cwd")
    starting = None
    from loci.front import engine_client

    if engine_client.enabled(no_server):
        from loci.kernel.home import home_dir

        home = home_dir()
        code, starting = _through_engine(engine_client, home, argv[0], kwargs)
        if code is not None:
            return code
    _return_big_buffers()
    try:
        command(echo=_echo, err=_err, **kwargs)
    except Exception as exc:
        known = failure(exc)
        if known is None:
            raise
        report_failure(known[0], kwargs.get("as_json", False), _err)
        return known[1]
    finally:
        if starting is not None and starting.start:
            sys.stdout.flush()
            engine_client.start(home, replacing=starting.replacing)
    return 0


def _through_engine(engine_client, home: str, op: str, kwargs: dict):
    """(exit code, None) when the engine answered; (None, why not) when this process must.
    The engine sends what to print (``printed``): nothing here imports json or the renderer."""
    from loci.kernel.errors import LociError

    keys = ("question", "cwd", "no_cwd", "group", "fast") + (("scope", "k") if op == "ask" else ("explain",))
    try:
        args = question_args(op, **{key: kwargs[key] for key in keys})
        reply = engine_client.ask(home, op, args, kwargs["as_json"])
    except engine_client.NoServer as why:
        return None, why
    except (OSError, LociError):   # a gone directory, a bad --cwd: the in-process answer says so, in one line
        return None, None
    return emit(reply), None
