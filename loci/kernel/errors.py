"""Errors the CLI turns into one line and an exit code (kept import-light on purpose)."""


class UsageError(ValueError):
    """Bad arguments: unknown scope or group, empty question. Exit code 2."""


class StoreError(RuntimeError):
    """An artifact is missing or unreadable; the message names the file and the fix."""
