"""How the stored files' original bytes are kept: compressed (both engines), and on DuckDB in parts under one view.

Compressed: a file's bytes go into raw_file_contents as one zstd frame (compression = 'zstd'); files stored
before are kept as they were (compression NULL), and `original` reads both. Benchmark outputs are text and
shrink 3 to 20 times, and DuckDB holds several times what a transaction writes until it commits: a 190 MB file
cost 1.1 GB to store as it was. Bundles carry the original bytes (app/sharing/bundle.py), so any kneepoint
reads them, and every imported file's bytes are checked against its sha256 after decompressing.

In parts (DuckDB):

DuckDB (2.0) rewrites the whole row group of a table at the first checkpoint after anything is appended to it,
and holds it in memory meanwhile. With every file's bytes in one table (one row group holds up to 122,880 files),
each later store rewrote every stored byte: after 480 MB of logs a one-file ingest peaked at 1.2 GB, and each
checkpoint took longer as the warehouse grew. So the bytes go into tables of about `CONTENT_PART_BYTES` each
(`raw_file_contents_part_00001`, ...); a store appends to the last part only, or starts a new one when the last
would pass the size, and a checkpoint rewrites that part alone. `raw_file_contents` is a view over all parts:
every reader (a file's bytes, bundles, reparsing) reads it as it read the single table. A part that a delete
empties is dropped, so its blocks are freed. Each part's bytes appended are counted in kneepoint_content_parts
as they go in: measuring the last part instead would read up to CONTENT_PART_BYTES of blobs on every store.

Everything here runs inside the caller's transaction: a file's bytes commit with its other rows or not at all.
PostgreSQL keeps the one table raw_file_contents (it does not rewrite stored rows); it uses the compression
functions here, not the parts.

    parts (kneepoint_content_parts)           view raw_file_contents
    part  bytes_appended                      = SELECT file_id, content, compression FROM raw_file_contents_part_00001
    1     66,912,311   (sealed: full)           UNION ALL SELECT ... FROM raw_file_contents_part_00002
    2     1,204,117    (appended to)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from kneepoint.ingest.schema import CONTENT_PART_BYTES, CONTENT_PARTS, content_part

VIEW = "raw_file_contents"
CODEC = "zstd"
# Level 1 compresses 200 to 800 MB/s on this 2-core machine (random whitespace to logs); higher levels cost time
# and gain little on logs.
LEVEL = 1


def compress(data: bytes | pa.Buffer) -> pa.Buffer:
    """One file's bytes as a zstd frame (a buffer: a large file is not copied once more into Python bytes)."""
    return pa.Codec(CODEC, compression_level=LEVEL).compress(data)


@dataclass(frozen=True, slots=True)
class Frame:
    """A file's bytes compressed as they are stored, made before the file is parsed so that its bytes can go while
    it is (a 100 MB log held its bytes beside its text and records). `size_bytes`: the bytes' length."""

    buffer: pa.Buffer
    size_bytes: int

    @classmethod
    def of(cls, data: bytes) -> Frame:
        return cls(compress(data), len(data))


def stored_frame(content: bytes | Frame) -> pa.Buffer:
    """What raw_file_contents keeps of a file given as bytes or as its Frame."""
    return content.buffer if isinstance(content, Frame) else compress(content)


def size_of(content: bytes | Frame) -> int:
    """The length of the file's bytes as the tool wrote them."""
    return content.size_bytes if isinstance(content, Frame) else len(content)


def original(content: bytes, compression: str | None, size_bytes: int) -> bytes:
    """A stored file's bytes as the tool wrote them. `size_bytes` is raw_files.size_bytes: a zstd frame is
    decompressed into exactly that many bytes (a frame that does not fill them raises)."""
    if compression is None:
        return bytes(content)
    if compression != CODEC:
        raise ValueError(f"stored bytes compressed with {compression!r}, which this kneepoint cannot read")
    return pa.Codec(CODEC).decompress(content, decompressed_size=size_bytes, asbytes=True)


# A value from this size on goes into its own Arrow chunk, viewed in place: pa.array copies every value, and a
# large file was then held twice until stored (a 190 MB file: +240 MB). Smaller ones are copied into one chunk:
# DuckDB's Arrow scan pays per chunk.
ZERO_COPY_BYTES = 1024 * 1024


def binary_column(values: Sequence[bytes | pa.Buffer]) -> pa.ChunkedArray:
    """Files' bytes (or their frames) as one binary column, the large ones viewed in place."""
    chunks: list[pa.Array] = []
    small: list[bytes] = []
    for value in values:
        if len(value) < ZERO_COPY_BYTES:
            small.append(value.to_pybytes() if isinstance(value, pa.Buffer) else value)
            continue
        if small:
            chunks.append(pa.array(small, pa.binary()))
            small = []
        offsets = pa.array([0, len(value)], pa.int32()).buffers()[1]
        buffer = value if isinstance(value, pa.Buffer) else pa.py_buffer(value)
        chunks.append(pa.Array.from_buffers(pa.binary(), 1, [None, offsets, buffer]))
    if small or not chunks:
        chunks.append(pa.array(small, pa.binary()))
    return pa.chunked_array(chunks, pa.binary())


def packed(rows: pa.Table) -> pa.Table:
    """Rows of raw_file_contents (file_id, content and maybe compression) with every file's bytes compressed:
    those already compressed are kept as they are, the others (a bundle's original bytes) compressed here."""
    given = rows.column("compression").to_pylist() if "compression" in rows.column_names else [None] * rows.num_rows
    if all(c is not None for c in given):
        return rows.select(["file_id", "content", "compression"])
    contents = rows.column("content")
    values = [
        contents[i].as_buffer() if c is not None else compress(contents[i].as_buffer()) for i, c in enumerate(given)
    ]
    return pa.table(
        {
            "file_id": rows.column("file_id"),
            "content": binary_column(values),
            "compression": pa.array([c or CODEC for c in given], pa.string()),
        }
    )


def insert(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    """Append the files' bytes (columns file_id, content, compression) to the last part, or to a new one when they
    would take it past CONTENT_PART_BYTES (a part that holds nothing yet takes any size)."""
    size = pc.sum(pc.binary_length(rows.column("content"))).as_py() or 0
    part, appended = con.execute(
        f"SELECT part, bytes_appended FROM {CONTENT_PARTS.name} ORDER BY part DESC LIMIT 1"
    ).fetchall()[0]
    if appended and appended + size > CONTENT_PART_BYTES:
        part += 1
        con.execute(content_part(part).ddl())
        con.execute(f"INSERT INTO {CONTENT_PARTS.name} VALUES (?, 0)", [part])
        _define_view(con)
    _kp_rows = rows  # noqa: F841 - read by DuckDB's replacement scan
    con.execute(f"INSERT INTO {content_part(part).name} BY NAME SELECT * FROM _kp_rows")
    con.execute(f"UPDATE {CONTENT_PARTS.name} SET bytes_appended = bytes_appended + ? WHERE part = ?", [size, part])


def delete(con: duckdb.DuckDBPyConnection, file_id: str) -> None:
    """Remove the file's bytes from whichever part holds them; drop a part left empty (but the last, which the
    next store appends to)."""
    parts = _parts(con)
    for part in parts:
        table = content_part(part).name
        ((deleted,),) = con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id]).fetchall()
        if not deleted:
            continue
        if part != parts[-1] and con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] == 0:
            con.execute(f"DELETE FROM {CONTENT_PARTS.name} WHERE part = ?", [part])
            _define_view(con)
            con.execute(f"DROP TABLE {table}")


def complete(con: duckdb.DuckDBPyConnection) -> None:
    """Give a new warehouse its first part and the view; an older warehouse's single raw_file_contents table
    becomes part 1, full (nothing more is appended to it: the bytes stay where they are)."""
    kind = con.execute(
        "SELECT table_type FROM information_schema.tables WHERE table_name = ? "
        "AND table_schema = current_schema() AND table_catalog = current_database()",
        [VIEW],
    ).fetchall()
    if kind == [("VIEW",)]:
        _add_compression(con)
        return
    con.execute(CONTENT_PARTS.ddl())
    if kind == [("BASE TABLE",)]:
        con.execute(f"ALTER TABLE {VIEW} RENAME TO {content_part(1).name}")
        con.execute(f"ALTER TABLE {content_part(1).name} ADD COLUMN IF NOT EXISTS compression VARCHAR")
        con.execute(f"INSERT INTO {CONTENT_PARTS.name} VALUES (1, ?)", [CONTENT_PART_BYTES])
    else:
        con.execute(content_part(1).ddl())
        con.execute(f"INSERT INTO {CONTENT_PARTS.name} VALUES (1, 0)")
    _define_view(con)


def _add_compression(con: duckdb.DuckDBPyConnection) -> None:
    """Parts made before the bytes were compressed get the column compression (NULL: their bytes as they are)."""
    for part in _parts(con):
        con.execute(f"ALTER TABLE {content_part(part).name} ADD COLUMN IF NOT EXISTS compression VARCHAR")
    _define_view(con)


def _parts(con: duckdb.DuckDBPyConnection) -> list[int]:
    return [r[0] for r in con.execute(f"SELECT part FROM {CONTENT_PARTS.name} ORDER BY part").fetchall()]


def _define_view(con: duckdb.DuckDBPyConnection) -> None:
    parts = " UNION ALL ".join(f"SELECT file_id, content, compression FROM {content_part(p).name}" for p in _parts(con))
    con.execute(f"CREATE OR REPLACE VIEW {VIEW} AS {parts}")
