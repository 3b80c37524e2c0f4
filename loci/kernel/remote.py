"""Where bundles are kept, as a filesystem: a directory (a path or ``file://``) or
``s3://bucket/prefix``, both through ``pyarrow.fs``.

The build side's pull and push (``loci_pipeline.share.store``) and the query side's fetch of a
pulled scope's stores (``loci.kernel.territory``) open a store through this module, so both
read the same settings: S3 takes its endpoint from ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (e.g. a MinIO or moto server), its region from ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, and its credentials from the AWS SDK's usual chain.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from loci.kernel.errors import LociError, UsageError

CONNECT_TIMEOUT = 5.0
REQUEST_TIMEOUT = 30.0
BLOCK = 1 << 20              # bytes read at a time while copying a file


class RemoteError(LociError, RuntimeError):
    """A store cannot be opened or read; the message is one line naming it and the fix."""


class AddressError(UsageError, RemoteError):
    """An address that names no store at all (empty, another scheme, no bucket): bad input, exit 2."""


ADDRESSES = "give a folder, file://PATH or s3://bucket/prefix"


@dataclass(frozen=True)
class Remote:
    url: str       # as the home records it (a file:// URI for a folder)
    fs: object     # a pyarrow FileSystem
    base: str      # the store's root inside ``fs``
    label: str     # a short name (the folder's or the bucket's)


def short(exc: BaseException) -> str:
    """The error's first line, whole (the S3 client names the host at its end)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _s3(url: str, parsed) -> Remote:
    from pyarrow import fs as pafs

    bucket, prefix = parsed.netloc, parsed.path.strip("/")
    # a delayed open sends a file smaller than one part as a single PUT, not a three-request
    # multipart upload; a failure then surfaces when the stream closes, still inside a write
    kw: dict = {"connect_timeout": CONNECT_TIMEOUT, "request_timeout": REQUEST_TIMEOUT,
                "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=2),
                "allow_delayed_open": True}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        kw["endpoint_override"] = endpoint
        if endpoint.startswith("http://"):
            kw["scheme"] = "http"
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        kw["region"] = region
    try:
        fs = pafs.S3FileSystem(**kw)
    except (OSError, ValueError, TypeError) as exc:
        raise RemoteError(f"cannot open {url} ({short(exc)}); check the AWS_* settings") from None
    return Remote(url, fs, posixpath.join(bucket, prefix) if prefix else bucket, bucket)


def local_path(source: str) -> Path | None:
    """The folder a local address names (a path or ``file://...``, resolved), None for
    ``s3://``; an address that names no store (empty, another scheme, ``file://`` with a host
    or no path) is an AddressError, checked before anything is read or written."""
    if not source.strip():
        raise AddressError(f"no store given; {ADDRESSES}")
    parsed = urlparse(source)
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise AddressError(f"{source!r} names no bucket; write s3://bucket/prefix")
        return None
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise AddressError(f"{source!r} names the host {parsed.netloc!r}; write file:///absolute/path "
                               f"(three slashes) or the path itself")
        if not parsed.path:
            raise AddressError(f"{source!r} names no folder; {ADDRESSES}")
        path = Path(unquote(parsed.path))
    elif parsed.scheme and len(parsed.scheme) > 1:   # one letter is a Windows drive
        raise AddressError(f"{source!r}: unsupported address; {ADDRESSES}")
    else:
        path = Path(source)
    try:
        return path.expanduser().resolve()
    except (ValueError, RuntimeError, OSError) as exc:   # a NUL byte, ~nosuchuser, a loop of links
        raise AddressError(f"{source!r} is not a usable path ({short(exc)}); {ADDRESSES}") from None


def not_a_folder(path: Path) -> Path | None:
    """The first of ``path`` and its parents that exists and is no folder (a folder cannot be
    made there), or None."""
    for p in (path, *path.parents):
        if p.exists() or p.is_symlink():
            return None if p.is_dir() else p
    return None


def make_folder(path: Path) -> None:
    """Create the folder ``path`` (and its parents): a RemoteError of one line naming a file in
    the way or the system's reason, never a traceback."""
    blocked = not_a_folder(path)
    if blocked is not None:
        raise RemoteError(f"{blocked} is a file, not a folder; give a folder (new, or one that holds "
                          f"bundles), file://PATH or s3://bucket/prefix")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RemoteError(f"cannot create the folder {path} ({exc.strerror or short(exc)}); "
                          f"{ADDRESSES} that can be written") from None


def open_remote(source: str, *, create: bool = False) -> Remote:
    """The store at ``source``: a path, ``file://...`` or ``s3://bucket/prefix``; with
    ``create``, a local folder that does not exist yet is made."""
    from pyarrow import fs as pafs

    path = local_path(source)
    if path is None:
        return _s3(source.rstrip("/"), urlparse(source))
    if create:
        make_folder(path)
    if not path.is_dir():   # a local path is the asker's to mend: a typo, as a misspelt scope is
        raise AddressError(f"{source} is not a folder; {ADDRESSES} that holds bundles")
    return Remote(path.as_uri(), pafs.LocalFileSystem(), str(path), path.name or "local")


def copy_counted(fs, path: str, size: int, dest: Path, transfer=None) -> tuple[int, str]:
    """Copy the file ``path`` of ``fs`` to ``dest`` a block at a time, never more than
    ``size`` + 1 bytes; returns (bytes copied, their sha256) for the caller to compare with
    what it expects. FileNotFoundError and OSError pass through. With ``transfer``
    (``loci.kernel.transfers.Transfer``) each block counts as its bytes moved, and the copy
    stops (``transfers.Overdue``) at the first block boundary past its deadline."""
    digest, copied = hashlib.sha256(), 0
    if transfer is not None:
        transfer.check()
    with fs.open_input_stream(path) as fh, open(dest, "wb") as out:
        while copied <= size:
            if transfer is not None:
                transfer.check()
            block = fh.read(min(BLOCK, size + 1 - copied))
            if not block:
                break
            digest.update(block)
            out.write(block)
            copied += len(block)
            if transfer is not None:
                transfer.moved(len(block))
    return copied, digest.hexdigest()
