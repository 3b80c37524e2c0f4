"""The distribution's name on the package index (the command stays `loci`)."""

DIST = "loci-scopes"


def install_hint(extra: str) -> str:
    """The one command that installs an optional extra: ``pip install 'loci-scopes[graph]'``."""
    return f"pip install '{DIST}[{extra}]'"


def installed_version() -> str | None:
    """The installed distribution's version; None when running from a source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST)
    except PackageNotFoundError:
        return None
