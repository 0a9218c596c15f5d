"""PostgreSQL, the team's shared warehouse: `--db postgresql://user@host:5432/dbname` (or $KNEEPOINT_DB).

The rest of kneepoint talks to a warehouse through the part of DuckDB's Python API it uses: `execute(sql, params)`
with `?` placeholders, `fetchall`, `fetchone`, `description`, `sql(sql, params).to_arrow_table()` and `close`.
`Connection` offers the same over psycopg2, so a statement whose SQL both engines speak is written once
(ingest/warehouse.py, app/queries.py); Arrow tables go in with COPY. Its errors are kneepoint's
(ingest/errors.py), never psycopg2's.

The password comes from the URL, $PGPASSWORD or ~/.pgpass (libpq's own rules) and is never shown: a Target prints
as `postgresql://user@host:5432/dbname`, and `mask` takes a password out of any text that quotes a URL.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from kneepoint.ingest.errors import (
    ConstraintViolation,
    DatabaseError,
    MissingTable,
    ReadOnlyWarehouse,
    WarehouseFailure,
)

SCHEMES = ("postgresql://", "postgres://")
# The schema kneepoint's tables and models live in (the profile's `schema`, the connection's search_path).
SCHEMA = "public"

# A URL's password (`user:secret@`) or a `password=` parameter, wherever a message quotes one.
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@", re.IGNORECASE)
_PARAM_PASSWORD = re.compile(r"(password\s*=\s*)('[^']*'|[^\s&]+)", re.IGNORECASE)


def is_url(db: object) -> bool:
    return isinstance(db, Target) or (isinstance(db, str) and db.lower().startswith(SCHEMES))


def mask(text: str) -> str:
    """`text` with any password it quotes replaced by ***."""
    return _PARAM_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


class Target:
    """A PostgreSQL warehouse named by its URL. Printing it never shows the password."""

    __slots__ = ("_url", "_params")

    def __init__(self, url: str) -> None:
        from psycopg2 import ProgrammingError
        from psycopg2.extensions import parse_dsn

        if not is_url(url):
            raise ValueError(f"not a PostgreSQL URL: {mask(url)!r} (postgresql://user@host:port/dbname)")
        try:
            self._params: dict[str, str] = parse_dsn(url)
        except ProgrammingError as exc:
            raise ValueError(f"not a valid PostgreSQL URL: {mask(url)!r}: {mask(str(exc).strip())}") from None
        if not self._params.get("dbname"):
            raise ValueError(f"name the database in the URL: {mask(url)!r} (postgresql://user@host:port/dbname)")
        self._url = url

    @property
    def host(self) -> str:
        return self._params.get("host", "localhost")

    @property
    def port(self) -> int:
        return int(self._params.get("port", "5432"))

    @property
    def user(self) -> str:
        import getpass

        return self._params.get("user") or getpass.getuser()

    @property
    def dbname(self) -> str:
        return self._params["dbname"]

    @property
    def password(self) -> str:
        """The URL's password, else $PGPASSWORD, else '' (libpq then reads ~/.pgpass)."""
        return self._params.get("password") or os.environ.get("PGPASSWORD", "")

    def connect_kwargs(self) -> dict[str, str]:
        return dict(self._params)

    def url_without_password(self) -> str:
        """The URL with every parameter but the password (for a process that reads the password elsewhere)."""
        from urllib.parse import urlencode

        rest = {k: v for k, v in self._params.items() if k not in ("user", "password", "host", "port", "dbname")}
        return str(self) + (f"?{urlencode(rest)}" if rest else "")

    def __str__(self) -> str:
        user = f"{quote(self.user, safe='')}@" if self._params.get("user") else ""
        return f"postgresql://{user}{self.host}:{self.port}/{self.dbname}"

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def key(self) -> str:
        """What names this warehouse for caches (dbt's target folder): its address, never its password."""
        return str(self)


def _new_session(target: Target) -> Any:
    """A new psycopg2 connection: autocommit, as DuckDB (`BEGIN` ... `COMMIT` make a transaction), NUMERIC as float."""
    import psycopg2
    import psycopg2.extensions

    try:
        con = psycopg2.connect(**target.connect_kwargs(), application_name="kneepoint", connect_timeout=10)
    except psycopg2.Error as exc:
        raise WarehouseFailure(f"cannot reach the warehouse {target}: {mask(_message(exc))}") from None
    con.autocommit = True
    numeric_as_float = psycopg2.extensions.new_type(
        psycopg2.extensions.DECIMAL.values, "KP_NUMERIC", lambda v, _cur: None if v is None else float(v)
    )
    psycopg2.extensions.register_type(numeric_as_float, con)
    return con


def _session_key(target: Target, read_only: bool) -> tuple:
    """Which idle sessions a connect may take: the same server, database, role and password, the same mode."""
    return (tuple(sorted(target.connect_kwargs().items())), target.password, read_only)


class _IdleSessions:
    """Sessions this process has closed, kept open for its next connect to the same warehouse.

    A new session costs a fork, a SCRAM handshake and a cold catalog cache on the server, ~10 ms of CPU on the two
    sides, and one command opens several in turn (its build's lock session, each build phase, the fits, the
    record of what was built): 16 uploaders on one server spent a tenth of the machine's CPU on them. A session
    given back is reset with DISCARD ALL, which ends what its user left behind: settings, session advisory locks
    (a build's lock is let go at close, as before), temporary tables, prepared statements."""

    KEEP = 4  # per warehouse and mode: a command holds at most three at once (lock session, a phase, a read)

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._idle: dict[tuple, list[Any]] = {}
        self._closing_at_exit = False
        self._pid = os.getpid()

    def take(self, key: tuple) -> Any | None:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: its parent's sessions are not its own to use
                self._idle, self._pid = {}, os.getpid()
            sessions = self._idle.get(key)
            return sessions.pop() if sessions else None

    def give_back(self, key: tuple, con: Any) -> None:
        import psycopg2.extensions

        try:
            if con.info.transaction_status != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                con.cursor().execute("ROLLBACK")  # a `BEGIN` of the caller's, left open by an error
            con.cursor().execute("DISCARD ALL")
        except psycopg2.Error:
            con.close()
            return
        with self._lock:
            sessions = self._idle.setdefault(key, [])
            if len(sessions) < self.KEEP:
                sessions.append(con)
                con = None
            if not self._closing_at_exit:
                import atexit

                atexit.register(self.close_all)
                self._closing_at_exit = True
        if con is not None:
            con.close()

    def close_all(self) -> None:
        with self._lock:
            sessions = [con for kept in self._idle.values() for con in kept]
            self._idle.clear()
        for con in sessions:
            con.close()


_IDLE_SESSIONS = _IdleSessions()


class Connection:
    """A psycopg2 connection that speaks kneepoint's subset of DuckDB's connection API (see the module).

    Autocommit, as DuckDB: a statement commits alone, and `BEGIN` ... `COMMIT` (ingest/warehouse.py `transaction`)
    makes a transaction. Numbers of type NUMERIC come back as float, as DuckDB's DOUBLE does. Closing it gives its
    session back to this process's idle ones (_IdleSessions)."""

    def __init__(self, target: Target, read_only: bool = False) -> None:
        self.target = target
        self._key = _session_key(target, read_only)
        self._con = _IDLE_SESSIONS.take(self._key)
        if self._con is not None:
            try:
                self._cur = self._con.cursor()
                self._start_session(read_only)
                return
            except DatabaseError:  # the server ended it meanwhile (a restart, an idle timeout): a new one
                self._con.close()
        self._con = _new_session(target)
        self._cur = self._con.cursor()
        self._start_session(read_only)

    def _start_session(self, read_only: bool) -> None:
        # JIT compilation cost ~1 s per statement of kneepoint's and paid off in none.
        self.execute(f"SET search_path TO {SCHEMA}; SET TIME ZONE 'UTC'; SET jit = off")
        if read_only:
            self.execute("SET default_transaction_read_only = on")

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Connection:
        import psycopg2

        if self._cur is None:  # its session may be another Connection's by now
            raise WarehouseFailure(f"the connection to {self.target} is closed")
        try:
            if params:
                self._cur.execute(placeholders(sql), list(params))
            else:
                self._cur.execute(sql)
        except psycopg2.Error as exc:
            raise _translate(exc) from None
        return self

    def fetchall(self) -> list[tuple]:
        return self._cur.fetchall()

    def fetchone(self) -> tuple | None:
        return self._cur.fetchone()

    @property
    def description(self) -> Any:
        return self._cur.description

    def sql(self, sql: str, params: Sequence[Any] | None = None) -> _Result:
        self.execute(sql, params)
        return _Result(self)

    def to_arrow_table(self) -> pa.Table:
        """The last statement's rows as Arrow, typed from PostgreSQL's column types."""
        names = [d.name for d in self._cur.description]
        types = [_ARROW_TYPES.get(d.type_code) for d in self._cur.description]
        rows = self._cur.fetchall()
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
        arrays = [pa.array(v, t) if t is not None else pa.array(v) for v, t in zip(columns, types, strict=True)]
        return pa.table(arrays, names=names) if names else pa.table({})

    def insert_arrow(self, table: str, rows: pa.Table) -> None:
        """Rows into `table` by column name, in one COPY (within the caller's transaction, if any)."""
        import psycopg2

        if rows.num_rows == 0:
            return
        columns = ", ".join(rows.column_names)
        try:
            self._cur.copy_expert(f"COPY {table} ({columns}) FROM STDIN WITH (FORMAT csv)", _csv(rows))
        except psycopg2.Error as exc:
            raise _translate(exc) from None

    def close(self) -> None:
        """Ends the session as far as the server's state goes (its settings, locks and open transaction); the
        connection itself is kept for this process's next one to the same warehouse."""
        con, self._con, self._cur = self._con, None, None
        if con is not None and not con.closed:
            _IDLE_SESSIONS.give_back(self._key, con)

    @property
    def closed(self) -> bool:
        return self._con is None or bool(self._con.closed)


class _Result:
    """What `Connection.sql` returns: DuckDB's relation, as far as kneepoint reads one."""

    def __init__(self, con: Connection) -> None:
        self._con = con

    def to_arrow_table(self) -> pa.Table:
        return self._con.to_arrow_table()

    def fetchall(self) -> list[tuple]:
        return self._con.fetchall()


def placeholders(sql: str) -> str:
    """DuckDB's `?` parameters as psycopg2's `%s` (and a literal `%` as `%%`), outside quotes and comments."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in ("'", '"'):  # a string or a quoted name runs to its closing quote ('' inside is one quote)
            end = sql.find(c, i + 1)
            while end != -1 and end + 1 < n and sql[end + 1] == c:
                end = sql.find(c, end + 2)
            end = n if end == -1 else end + 1
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end == -1 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif c == "?":
            out.append("%s")
            i += 1
        elif c == "%":
            out.append("%%")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# PostgreSQL type oid -> Arrow type of a result column (others are inferred from the values).
_ARROW_TYPES: dict[int, pa.DataType] = {
    16: pa.bool_(),
    17: pa.binary(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    25: pa.string(),
    700: pa.float32(),
    701: pa.float64(),
    1009: pa.list_(pa.string()),
    1015: pa.list_(pa.string()),
    1043: pa.string(),
    1082: pa.date32(),
    1114: pa.timestamp("us"),
    1184: pa.timestamp("us", tz="UTC"),
    1700: pa.float64(),
}


def _csv(rows: pa.Table) -> io.BytesIO:
    """The rows as CSV that COPY reads: a NULL is an empty field, an empty string is "" (Arrow's writer quotes
    every string); lists as PostgreSQL array literals, bytes as bytea hex."""
    import pyarrow.csv as pa_csv

    columns = []
    for column in rows.columns:
        if pa.types.is_list(column.type):
            column = _array_literals(column.combine_chunks())
        elif pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            column = pa.array([None if b is None else "\\x" + b.hex() for b in column.to_pylist()], pa.string())
        columns.append(column)
    out = io.BytesIO()
    pa_csv.write_csv(pa.table(columns, names=rows.column_names), out, pa_csv.WriteOptions(include_header=False))
    out.seek(0)
    return out


def _array_literals(lists: pa.ListArray) -> pa.Array:
    """Each list of strings as a PostgreSQL array literal: {"a","b \\"c\\""}, NULL elements as NULL."""
    import pyarrow.compute as pc

    values = lists.values
    escaped = pc.replace_substring(pc.replace_substring(values, "\\", "\\\\"), '"', '\\"')
    quoted = pc.if_else(pc.is_null(values), "NULL", pc.binary_join_element_wise('"', escaped, '"', ""))
    joined = pc.binary_join(pa.ListArray.from_arrays(lists.offsets, quoted, mask=lists.is_null()), ",")
    return pc.binary_join_element_wise("{", joined, "}", "")


def _message(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _translate(exc: Exception) -> DatabaseError:
    import psycopg2
    from psycopg2 import errors

    text = mask(_message(exc))
    if isinstance(exc, psycopg2.IntegrityError):
        return ConstraintViolation(text)
    if isinstance(exc, errors.UndefinedTable | errors.UndefinedFunction | errors.UndefinedObject):
        return MissingTable(text)
    if isinstance(exc, errors.InsufficientPrivilege | errors.ReadOnlySqlTransaction):
        return ReadOnlyWarehouse(text)
    if isinstance(exc, psycopg2.OperationalError | psycopg2.InterfaceError):
        return WarehouseFailure(text)
    return DatabaseError(text)
