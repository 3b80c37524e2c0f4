"""Where bundles are kept: a directory (a path or ``file://``) or ``s3://bucket/prefix``.

Both go through ``pyarrow.fs``. S3 takes its endpoint from ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (e.g. a MinIO or moto server), its region from ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, and its credentials from the AWS SDK's usual chain (the
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` variables, then ``AWS_PROFILE`` and
``~/.aws``). Every failure to reach or read the store is a ``BundleError`` of one line.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from pipeline.share.bundle import MANIFEST, BundleError

BLOCK = 1 << 20              # bytes read at a time while hashing a stored file
CONNECT_TIMEOUT = 5.0
REQUEST_TIMEOUT = 30.0


@dataclass(frozen=True)
class Entry:
    """One bundle's manifest as the store lists it: the folder, and what changes when it is rewritten."""

    folder: str
    size: int
    mtime_ns: int


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


class Store:
    """A directory of bundle folders: ``<base>/<folder>/manifest.json`` plus the files it lists."""

    def __init__(self, url: str, fs, base: str, label: str):
        self.url, self.fs, self.base, self.label = url, fs, base.rstrip("/"), label

    def _path(self, *parts: str) -> str:
        return posixpath.join(self.base, *parts)

    def _fail(self, what: str, exc: BaseException) -> BundleError:
        return BundleError(f"cannot {what} {self.url} ({_short(exc)}); check the address, the network "
                           f"and the credentials (AWS_* variables or AWS_PROFILE for s3://)")

    def _files(self, allow_missing: bool = False) -> list[tuple[str, str, object]]:
        """Every file two levels down as (folder, name, info), from one recursive listing
        (a request per thousand objects on S3, never one per object)."""
        from pyarrow import fs as pafs

        try:
            infos = self.fs.get_file_info(pafs.FileSelector(self.base, recursive=True,
                                                            allow_not_found=allow_missing))
        except FileNotFoundError:
            raise BundleError(f"{self.url} does not exist; give a folder or s3://bucket/prefix "
                              f"that holds bundles") from None
        except OSError as exc:
            raise self._fail("list", exc) from None
        out = []
        for info in infos:
            rel = info.path[len(self.base):].strip("/") if info.path.startswith(self.base) else ""
            parts = rel.split("/")
            if len(parts) == 2 and info.type == pafs.FileType.File:
                out.append((parts[0], parts[1], info))
        return out

    def list(self) -> list[Entry]:
        """Every bundle folder holding a manifest, sorted by folder name."""
        out = [Entry(folder, int(info.size or 0), int(info.mtime_ns or 0))
               for folder, name, info in self._files() if name == MANIFEST]
        return sorted(out, key=lambda e: e.folder)

    def sizes(self) -> dict[str, int]:
        """Each file's size as ``{"folder/name": bytes}``, from the same single listing (none yet: empty)."""
        return {f"{folder}/{name}": int(info.size or 0) for folder, name, info in self._files(allow_missing=True)}

    def sha256(self, folder: str, name: str) -> str | None:
        """The sha256 of a stored file, read a block at a time; None if it is missing."""
        digest = hashlib.sha256()
        try:
            with self.fs.open_input_stream(self._path(folder, name)) as fh:
                for block in iter(lambda: fh.read(BLOCK), b""):
                    digest.update(block)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._fail("read", exc) from None
        return digest.hexdigest()

    def read(self, folder: str, name: str, limit: int | None = None) -> bytes:
        """A file's bytes (at most ``limit`` + 1 of them, so an overlong file shows as one)."""
        try:
            with self.fs.open_input_stream(self._path(folder, name)) as fh:
                return fh.read() if limit is None else fh.read(limit + 1)
        except FileNotFoundError:
            raise BundleError(f"{self.url}/{folder}/{name} is missing; nothing was pulled, "
                              f"re-export the bundle") from None
        except OSError as exc:
            raise self._fail("read", exc) from None

    def write(self, folder: str, name: str, data: bytes) -> None:
        try:
            if self.fs.type_name == "local":
                self.fs.create_dir(self._path(folder), recursive=True)
                from loci.kernel.atomic import write_bytes

                write_bytes(Path(self._path(folder, name)), data)
                return
            with self.fs.open_output_stream(self._path(folder, name)) as fh:
                fh.write(data)
        except OSError as exc:
            raise self._fail("write to", exc) from None


def _s3(url: str, parsed) -> Store:
    try:
        from pyarrow import fs as pafs
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        raise BundleError("s3:// needs pyarrow with S3 support: pip install -U pyarrow") from None
    bucket, prefix = parsed.netloc, parsed.path.strip("/")
    if not bucket:
        raise BundleError(f"{url} names no bucket; write s3://bucket/prefix")
    # a delayed open sends a file smaller than one part as a single PUT, not a three-request
    # multipart upload; a failure then surfaces when the stream closes, still inside Store.write
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
        raise BundleError(f"cannot open {url} ({_short(exc)}); check the AWS_* settings") from None
    return Store(url, fs, posixpath.join(bucket, prefix) if prefix else bucket, bucket)


def open_store(source: str, *, create: bool = False) -> Store:
    """The store at ``source``: a path, ``file://...`` or ``s3://bucket/prefix``."""
    from pyarrow import fs as pafs

    parsed = urlparse(source)
    if parsed.scheme == "s3":
        return _s3(source.rstrip("/"), parsed)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
    elif parsed.scheme and len(parsed.scheme) > 1:
        raise BundleError(f"{source}: unsupported address; give a folder, file://PATH or s3://bucket/prefix")
    else:
        path = Path(source).expanduser()
    path = path.resolve()
    if create:
        path.mkdir(parents=True, exist_ok=True)
    if not path.is_dir():
        raise BundleError(f"{source} is not a folder; give a folder, file://PATH or s3://bucket/prefix "
                          f"that holds bundles")
    return Store(path.as_uri(), pafs.LocalFileSystem(), str(path), path.name or "local")
