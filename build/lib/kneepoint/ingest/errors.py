"""The one error type parsers and the loader raise for bad input."""

from __future__ import annotations


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
