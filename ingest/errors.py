"""The errors kneepoint raises: bad input (ParseError), a busy DuckDB file, and the database errors of the
PostgreSQL warehouse in engine-neutral words."""

from __future__ import annotations

# How DuckDB names the error of a statement that needed more than its memory_limit (duckdb.OutOfMemoryException),
# as it reaches kneepoint through dbt's messages too.
OUT_OF_MEMORY = "Out of Memory Error"


class ParseError(ValueError):
    """Input that holds no recognizable result, or a result that cannot be read.

    `line` is 1-based in the decoded text; `path` is filled in by whoever knows the file name, so the
    message reads like a compiler's: ``FILE:LINE: reason``.
    """

    def __init__(self, reason: str, line: int = 1, path: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = max(1, int(line))
        self.path = path

    def with_path(self, path: str) -> ParseError:
        self.path = path
        return self

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path else f"line {self.line}"
        return f"{where}: {self.reason}"


class WarehouseBusy(RuntimeError):
    """Another process holds the DuckDB file open for writing."""


class DatabaseError(RuntimeError):
    """A statement the warehouse refused, in words of its own: what the PostgreSQL connection raises
    (ingest/postgres.py), beside DuckDB's own exceptions for the embedded file."""


class ConstraintViolation(DatabaseError):
    """A UNIQUE, PRIMARY KEY or NOT NULL constraint refused a row (the same file stored twice at once)."""


class MissingTable(DatabaseError):
    """A table or function that is not (yet) in the warehouse."""


class WarehouseFailure(DatabaseError):
    """The warehouse itself failed (connection lost, disk full): nothing more can be stored until it is fixed."""


class ReadOnlyWarehouse(DatabaseError):
    """The account kneepoint connects with may read the warehouse but not change it."""
