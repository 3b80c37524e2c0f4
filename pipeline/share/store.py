"""Where bundles are kept: a directory (a path or ``file://``) or ``s3://bucket/prefix``.

Both go through ``pyarrow.fs``, opened by ``loci.kernel.remote`` (shared with the query side's
fetch of a mapped scope's stores): S3 takes its endpoint from ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (e.g. a MinIO or moto server), its region from ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, and its credentials from the AWS SDK's usual chain (the
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` variables, then ``AWS_PROFILE`` and
``~/.aws``). Every failure to reach or read the store is a ``BundleError`` of one line.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from loci.kernel.remote import BLOCK
from loci.kernel.remote import short as _short
from loci_pipeline.share.bundle import MANIFEST, BundleError


@dataclass(frozen=True)
class Entry:
    """One bundle's manifest as the store lists it: the folder, and what changes when it is rewritten."""

    folder: str
    size: int
    mtime_ns: int




class Store:
    """A directory of bundle folders: ``<base>/<folder>/manifest.json`` plus the files it lists."""

    def __init__(self, url: str, fs, base: str, label: str):
        self.url, self.fs, self.base, self.label = url, fs, base.rstrip("/"), label
        self._listed: dict[str, tuple[int, int]] | None = None   # "folder/name" -> (size, mtime_ns), listed last
        self.refused: dict[str, str] = {}             # bundle folders the listing refused, and why

    def _path(self, *parts: str) -> str:
        return posixpath.join(self.base, *parts)

    def _fail(self, what: str, exc: BaseException) -> BundleError:
        return BundleError(f"cannot {what} {self.url} ({_short(exc)}); check the address, the network "
                           f"and the credentials (AWS_* variables or AWS_PROFILE for s3://)")

    def _infos(self, allow_missing: bool = False) -> list:
        """Every file and folder below the base, from one recursive listing (a request per
        thousand objects on S3, never one per object)."""
        from pyarrow import fs as pafs

        try:
            return self.fs.get_file_info(pafs.FileSelector(self.base, recursive=True,
                                                           allow_not_found=allow_missing))
        except FileNotFoundError:
            raise BundleError(f"{self.url} does not exist; give a folder or s3://bucket/prefix "
                              f"that holds bundles") from None
        except OSError as exc:
            raise self._fail("list", exc) from None

    def _files(self, infos: list) -> dict[str, tuple[int, int]]:
        """Each file below the base as ``{"folder/name": (bytes, mtime_ns)}``: one pass over the listing
        (twelve thousand entries for a thousand bundles; each attribute of an entry is a call)."""
        from pyarrow import fs as pafs

        base, cut, file = self.base, len(self.base), pafs.FileType.File
        out = {}
        for info in infos:
            path = info.path
            if info.type == file and path.startswith(base):
                out[path[cut:].strip("/")] = (int(info.size or 0), int(info.mtime_ns or 0))
        return out

    def list(self) -> list[Entry]:
        """Every bundle folder holding a manifest, sorted by folder name; the listing's sizes
        are kept for ``size`` (no request per file)."""
        files = self._files(self._infos())
        out = []
        for rel, (size, mtime_ns) in files.items():
            folder, _, name = rel.partition("/")
            if name == MANIFEST:
                try:
                    self._refuse_link(folder)
                except BundleError as exc:   # one bundle's: the others are listed
                    self.refused[folder] = str(exc)
                    continue
                out.append(Entry(folder, size, mtime_ns))
        self._listed = files
        return sorted(out, key=lambda e: e.folder)

    def listed(self) -> dict[str, int]:
        """Each file the last ``list`` saw, as ``{"folder/name": bytes}`` (relative to the base)."""
        return {rel: size for rel, (size, _) in (self._listed or {}).items()}

    def address(self, rel: str = "") -> str | None:
        """The base (or ``rel`` below it, ``..`` for its parent) as a user gives it to
        `loci pull`: a path for a local store, ``s3://bucket/prefix`` otherwise; None above a
        bucket."""
        path = posixpath.normpath(posixpath.join(self.base, rel)) if rel else self.base
        if self.fs.type_name == "local":
            return path
        return f"s3://{path}" if path.strip("/.") and not path.startswith("..") else None

    def sizes(self) -> dict[str, int]:
        """Each file's size as ``{"folder/name": bytes}``, from one listing (no store yet: empty)."""
        return {rel: size for rel, (size, _) in self._files(self._infos(allow_missing=True)).items()}

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

    def _refuse_link(self, folder: str, name: str | None = None) -> None:
        """In a local store, a bundle folder or file that is a symbolic link (or no regular file)
        is refused: it could point anywhere on this machine."""
        if self.fs.type_name != "local":
            return
        for path in (self._path(folder),) + ((self._path(folder, name),) if name else ()):
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                raise BundleError(f"{self.url}/{folder}/{name} is missing; nothing was pulled, "
                                  f"re-export the bundle") from None
            except OSError as exc:
                raise self._fail("read", exc) from None
            if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) if path == self._path(folder) else stat.S_ISREG(mode)):
                raise BundleError(f"{path} is a symbolic link or not a plain "
                                  f"{'folder' if path == self._path(folder) else 'file'}; refused, nothing was pulled")

    def size(self, folder: str, name: str) -> int:
        """A file's size as the store lists it, before anything is read (links refused): from
        the listing ``list`` made, else one request."""
        from pyarrow import fs as pafs

        self._refuse_link(folder, name)
        if self._listed is not None and f"{folder}/{name}" in self._listed:
            return self._listed[f"{folder}/{name}"][0]
        try:
            info = self.fs.get_file_info(self._path(folder, name))
        except OSError as exc:
            raise self._fail("read", exc) from None
        if info.type == pafs.FileType.NotFound:
            raise BundleError(f"{self.url}/{folder}/{name} is missing; nothing was pulled, "
                              f"re-export the bundle")
        return int(info.size or 0)

    def read(self, folder: str, name: str, limit: int | None = None) -> bytes:
        """A file's bytes (at most ``limit`` + 1 of them, so an overlong file shows as one)."""
        self._refuse_link(folder, name)
        try:
            with self.fs.open_input_stream(self._path(folder, name)) as fh:
                return fh.read() if limit is None else fh.read(limit + 1)
        except FileNotFoundError:
            raise BundleError(f"{self.url}/{folder}/{name} is missing; nothing was pulled, "
                              f"re-export the bundle") from None
        except OSError as exc:
            raise self._fail("read", exc) from None

    def copy(self, folder: str, name: str, size: int, dest: Path) -> tuple[int, str]:
        """Copy a file to ``dest`` a block at a time, never more than ``size`` + 1 bytes;
        returns (bytes copied, their sha256). The caller compares both with the manifest."""
        from loci.kernel.remote import copy_counted

        self._refuse_link(folder, name)
        try:
            return copy_counted(self.fs, self._path(folder, name), size, dest)
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


def open_store(source: str, *, create: bool = False) -> Store:
    """The store at ``source``: a path, ``file://...`` or ``s3://bucket/prefix``. An address
    that names no store raises ``loci.kernel.remote.AddressError`` (a usage error), any other
    failure to open it a BundleError."""
    from loci.kernel.remote import AddressError, RemoteError, open_remote

    try:
        remote = open_remote(source, create=create)
    except AddressError:   # bad input (exit 2), not a store that failed
        raise
    except RemoteError as exc:
        raise BundleError(str(exc)) from None
    return Store(remote.url, remote.fs, remote.base, remote.label)
