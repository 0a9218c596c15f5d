"""Where a DuckDB warehouse keeps the stored files' original bytes: in parts, read through one view.

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
PostgreSQL keeps the one table raw_file_contents (it does not rewrite stored rows); the warehouse does not call
this module for it.

    parts (kneepoint_content_parts)           view raw_file_contents
    part  bytes_appended                      = SELECT file_id, content FROM raw_file_contents_part_00001
    1     66,912,311   (sealed: full)           UNION ALL SELECT file_id, content FROM raw_file_contents_part_00002
    2     1,204,117    (appended to)
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from kneepoint.ingest.schema import CONTENT_PART_BYTES, CONTENT_PARTS, content_part

VIEW = "raw_file_contents"


def insert(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    """Append the files' bytes (columns file_id, content) to the last part, or to a new one when they would take
    it past CONTENT_PART_BYTES (a part that holds nothing yet takes any size)."""
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
        return
    con.execute(CONTENT_PARTS.ddl())
    if kind == [("BASE TABLE",)]:
        con.execute(f"ALTER TABLE {VIEW} RENAME TO {content_part(1).name}")
        con.execute(f"INSERT INTO {CONTENT_PARTS.name} VALUES (1, ?)", [CONTENT_PART_BYTES])
    else:
        con.execute(content_part(1).ddl())
        con.execute(f"INSERT INTO {CONTENT_PARTS.name} VALUES (1, 0)")
    _define_view(con)


def _parts(con: duckdb.DuckDBPyConnection) -> list[int]:
    return [r[0] for r in con.execute(f"SELECT part FROM {CONTENT_PARTS.name} ORDER BY part").fetchall()]


def _define_view(con: duckdb.DuckDBPyConnection) -> None:
    parts = " UNION ALL ".join(f"SELECT file_id, content FROM {content_part(p).name}" for p in _parts(con))
    con.execute(f"CREATE OR REPLACE VIEW {VIEW} AS {parts}")
