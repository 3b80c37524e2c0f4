"""The project's one error hierarchy: every expected failure is a LociError.

Its message is one line naming the file or value and the fix; ``exit_code`` is
what the CLI exits with. The CLI turns them into that line and code in one
place (loci.front.cli_common.handled), the MCP server into a tool error in one
place (loci.front.mcp_server.Service.call). Kept import-light on purpose.
"""


class LociError(Exception):
    """An expected failure with a one-line message that says what to do."""

    exit_code = 1


class UsageError(LociError, ValueError):
    """Bad arguments: unknown scope or group, empty question. Exit code 2."""

    exit_code = 2


class StoreError(LociError, RuntimeError):
    """An artifact is missing or unreadable; the message names the file and the fix."""


class EncoderUnavailable(LociError, RuntimeError):
    """An encoder cannot be loaded; the message is one line that names the fix."""


class BuildError(LociError, RuntimeError):
    """A build step cannot run or failed as a whole (nothing registered, no model, a failed fit)."""


def error_object(message: str) -> dict:
    """An error as ``--json`` prints it: ``{"error": what went wrong, "hint": the fix}``.

    A message is "what; fix" or "what: run `loci ...`"; one without a fix has ``"hint": null``."""
    depth = 0
    for i, ch in enumerate(message):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and message.startswith("; ", i):
            return {"error": message[:i], "hint": message[i + 2:]}
    what, sep, fix = message.partition(": run ")
    if sep:
        return {"error": what, "hint": "run " + fix}
    return {"error": message, "hint": None}


KNOWN_LISTED = 30   # more names than this are counted, not printed (a home of 1,000 scopes)


def unknown_name(kind: str, name: str, known, *, listing: str = "", none: str = "none") -> str:
    """The line an unknown ``kind`` (scope, group) is reported with: the closest known spellings
    first, then the known names when few, else how many there are and the command that lists them."""
    import difflib

    names = sorted(set(known))
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    if not names:
        hint += f"known {kind}s: {none}"
    elif len(names) <= KNOWN_LISTED or not listing:
        hint += f"known {kind}s: {', '.join(names)}"
    else:
        hint += f"{len(names):,} {kind}s are known: `{listing}` lists them"
    return f"unknown {kind} {name!r}; {hint}"
