"""Input files as users hand them over: paths, folders and .zip archives, with size limits.

Nothing here writes to disk: zip entries are read into memory (bounded), and their names are only
labels, so an entry named `../../etc/passwd` can never become a path.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MiB = 1024 * 1024

# What zipfile raises for a damaged or unusual archive: a bad CRC or header (BadZipFile), a broken deflate, bzip2
# or lzma stream, a stream cut short, an unsupported compression method, an encrypted entry (RuntimeError), a
# malformed extra field (struct.error, ValueError).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OSError,
    struct.error,
)


@dataclass(frozen=True, slots=True)
class Limits:
    max_file_bytes: int = int(os.environ.get("KNEEPOINT_MAX_FILE_MB", "200")) * MiB
    max_zip_total_bytes: int = int(os.environ.get("KNEEPOINT_MAX_ZIP_MB", "1024")) * MiB
    max_zip_entries: int = 20_000
    max_zip_ratio: float = 200.0  # uncompressed / compressed per entry: beyond this, a zip bomb


@dataclass(frozen=True, slots=True)
class InputFile:
    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True, slots=True)
class InputError:
    name: str
    reason: str


def iter_paths(paths: list[str | os.PathLike[str]], limits: Limits = Limits()) -> Iterator[InputFile | InputError]:
    """Files, folders (recursively, sorted) and zips; symlinks are refused, not followed."""
    for p in paths:
        path = Path(p)
        if path.is_symlink():
            yield InputError(str(path), "symbolic link: refused (give the file it points to)")
        elif path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_symlink():
                    yield InputError(str(child), "symbolic link: refused (give the file it points to)")
                elif child.is_file() and not child.name.startswith("."):
                    yield from _read_path(child, limits)
        elif path.exists():
            yield from _read_path(path, limits)
        else:
            yield InputError(str(path), "no such file")


def _read_path(path: Path, limits: Limits) -> Iterator[InputFile | InputError]:
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            yield InputError(str(path), "not a regular file")
            return
        if st.st_size > limits.max_file_bytes:
            yield InputError(str(path), _too_big(st.st_size, limits))
            return
        with open(path, "rb") as fh:
            is_zip = fh.read(2) == b"PK" and zipfile.is_zipfile(fh)
            if not is_zip:
                fh.seek(0)
                # Never more than the limit, even when the file grows after stat().
                data = fh.read(limits.max_file_bytes + 1)
    except OSError as exc:  # unreadable (permissions), gone since the folder was listed, an I/O error
        yield InputError(str(path), f"cannot read: {exc.strerror or exc}")
        return
    if is_zip:
        # Read from the file entry by entry: the archive itself is never held in memory.
        yield from iter_zip(str(path), path, limits)
    elif len(data) > limits.max_file_bytes:
        yield InputError(str(path), _too_big(len(data), limits))
    else:
        # Handed on without a reference kept in this frame, which waits here while the file is parsed and stored:
        # the caller lets go of the bytes once they are parsed (a 100 MB SQLIO log's were held through its store).
        found = [InputFile(str(path), data)]
        del data
        yield found.pop()


def iter_upload(name: str, data: bytes, limits: Limits = Limits()) -> Iterator[InputFile | InputError]:
    """One file from a browser upload (maybe a zip)."""
    if len(data) > limits.max_file_bytes:
        yield InputError(name, _too_big(len(data), limits))
    elif data[:2] == b"PK" and zipfile.is_zipfile(io.BytesIO(data)):
        yield from iter_zip(name, data, limits)
    else:
        yield InputFile(name, data)


def iter_zip(name: str, data: bytes | Path, limits: Limits) -> Iterator[InputFile | InputError]:
    """The zip's entries (from its bytes, or read from its file), one at a time in memory within the limits; a
    damaged entry is one error, the others are read."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    except _ZIP_ERRORS as exc:
        yield InputError(name, f"not a readable zip: {exc}")
        return
    with zf:
        yield from _zip_entries(name, zf, limits)


def _zip_entries(name: str, zf: zipfile.ZipFile, limits: Limits) -> Iterator[InputFile | InputError]:
    entries = [i for i in zf.infolist() if not i.is_dir()]
    if not entries:
        yield InputError(name, "empty zip: no files inside")
        return
    if len(entries) > limits.max_zip_entries:
        yield InputError(name, f"zip holds {len(entries)} files, more than the limit of {limits.max_zip_entries}")
        return
    declared = sum(i.file_size for i in entries)
    if declared > limits.max_zip_total_bytes:
        yield InputError(
            name, f"zip expands to {declared / MiB:.0f} MB, past the limit of {limits.max_zip_total_bytes / MiB:.0f} MB"
        )
        return
    total = 0
    for info in entries:
        label = f"{name}!{info.filename}"
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            yield InputError(label, "symbolic link inside zip: refused")
            continue
        if info.file_size > limits.max_file_bytes:
            yield InputError(label, _too_big(info.file_size, limits))
            continue
        if info.compress_size and info.file_size / info.compress_size > limits.max_zip_ratio:
            yield InputError(
                label,
                f"compression ratio {info.file_size / info.compress_size:.0f}:1 "
                f"past the limit of {limits.max_zip_ratio:.0f}:1 (zip bomb?)",
            )
            continue
        # Read at most the declared size + 1 byte: a lying header cannot make us inflate more.
        try:
            with zf.open(info) as fh:
                content = fh.read(min(info.file_size, limits.max_file_bytes) + 1)
        except _ZIP_ERRORS as exc:
            yield InputError(label, f"damaged zip entry, not read: {_zip_error(exc)}")
            continue
        total += len(content)
        if len(content) > info.file_size or total > limits.max_zip_total_bytes:
            yield InputError(label, "entry expands past its declared size or the zip's limit: refused")
            return
        if content[:2] == b"PK":
            yield InputError(label, "zip inside a zip: unpack it first")
            continue
        found = [InputFile(label, content)]
        del content  # handed on without a reference kept here, as _read_path does
        yield found.pop()


def _zip_error(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, RuntimeError) and "encrypted" in text:
        return "encrypted (kneepoint reads no passwords)"
    return text


def _too_big(size: int, limits: Limits) -> str:
    return (
        f"file is {size / MiB:.0f} MB, past the limit of {limits.max_file_bytes / MiB:.0f} MB (KNEEPOINT_MAX_FILE_MB)"
    )
