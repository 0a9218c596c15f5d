"""Anonymized and scoped copies of a warehouse: what a report or bundle for a vendor is made from.

A share is never rendered from the user's warehouse with strings swapped afterwards: the raw layer of the
chosen disks is copied into a private warehouse, anonymized there field by field, and the dbt models are
rebuilt from it. Disk keys, series ids, file names and hover texts in the marts are then pseudonyms by
construction, and the report, the bundle's Parquet marts and the chart images all agree.

What anonymization replaces, with stable pseudonyms (the same original always gets the same pseudonym within
one share, numbered in ingest order):

- disk labels ("Disk A"), host labels and computer names ("Host 1", also the host an observed counter log or
  iostat report names, and inside its device names), tags ("Tag 1"), file names ("File 1.txt"),
  targets ("Target 1" unless they are paths or drive letters), labels the user marks ("Label 1");
- inside every other text value (run metadata such as command lines, fio options, DiskSpd system information,
  CrystalDiskMark Test/OS lines; tool versions; SQL Server table names; observed device names such as a database
  file's path): file paths ("Path 1"), URLs,
  e-mail addresses, IPv4/IPv6 addresses ("IP 1"), drive letters ("Drive 1"), user names found in home-folder
  paths ("User 1"), and every string replaced elsewhere (a host name in a command line);
- free text is withheld whole: notes (dropped), comments and descriptions in run metadata ("Comment 1"),
  parser warnings (they may quote the file); the original file bytes are not copied at all.

Numbers, units, block sizes, loads, timestamps and sha256 digests are kept: they are the measurement.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from kneepoint.ingest import formats
from kneepoint.ingest.warehouse import (
    RAW_TABLES,
    Location,
    changing,
    connect,
    exists,
    insert_rows,
    locate,
    record_changes,
)

# Private-use code points: placeholders for replaced spans while the other patterns run over the text, so a
# pseudonym ("Path 1") is never matched again by a later pattern or literal.
_OPEN, _CLOSE, _DIGIT0 = "\ue000", "\ue001", 0xE010

# Windows forbids : * ? " < > | in file names; a directory segment may hold spaces (it ends at a backslash).
_WIN_SEGMENT = r'[^\\/:*?"<>|\r\n]+'
_WIN_LAST = r'[^\\/:*?"<>|\s]*'
# One alternation, so replacements are numbered in the order they appear and, at one position, the earlier
# alternative wins (a quoted path over the IP address inside it). Group names: kind_variant.
_PATTERN = re.compile(
    "|".join(
        f"(?P<{name}>{pattern})"
        for name, pattern in [
            ("path_quoted", r"""(?P<q>["'])(?:[A-Za-z]:[\\/]|\\\\|/)[^"'\r\n]*(?P=q)"""),
            ("url_any", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+"),
            ("email_any", r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b"),
            ("path_unc", rf"\\\\{_WIN_LAST.replace('*', '+')}(?:\\{_WIN_SEGMENT})*\\?{_WIN_LAST}"),
            ("path_windows", rf"(?<![A-Za-z0-9])[A-Za-z]:[\\/](?:{_WIN_SEGMENT}[\\/])*{_WIN_LAST}"),
            # POSIX: not after a word character, so MB/s, I/O and 2025/03/14 stay.
            ("path_posix", r"(?<![\w.:/\\~-])(?:~[\w.-]*)?/(?:[\w.@+~-]+/)*[\w.@+~-]+/?"),
            ("ip_v6", r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:])"),
            # IPv6 with '::' (a time such as 09:00:00 has none)
            (
                "ip_v6short",
                r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){0,6}(?:[0-9A-Fa-f]{1,4})?::(?:[0-9A-Fa-f]{1,4}(?::|(?![\w:])))*",
            ),
            ("ip_v4", r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])"),
        ]
    )
)
_DRIVE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]:(?=[\\/\s\]),;]|$)")
# The folder after Users/home, spaces included: "C:\\Users\\bob smith\\..." names the user "bob smith".
_USER_IN_PATH = re.compile(
    r"(?:[\\/](?:Users|home|Documents and Settings)[\\/])([^\\/\r\n\"'<>|:*?]+?)(?=[\\/]|$)", re.IGNORECASE
)
# A Perfmon counter path's computer: \\HOST\PhysicalDisk(0 C:)
_COUNTER_HOST = re.compile(r"^\\\\(?P<host>[^\\/\s]+)\\(?P<rest>.*)$", re.DOTALL)
_UNC_SERVER = re.compile(r"\\\\([^\\/\s\"'.]+)\\")

# Run metadata keys (last dotted segment, lower case) whose value is free text, a computer name or a user name.
FREE_TEXT_KEYS = frozenset({"comment", "comments", "description", "note", "notes", "title"})
# The keys the format modules declare (formats.host_keys() / user_keys()), with generic names as a fallback: a
# format that forgets to declare one must still never leak a host or user name into a shared report.
GENERIC_HOST_KEYS = frozenset(
    {"computer_name", "computername", "hostname", "host", "machine", "machine_name", "server"}
)
GENERIC_USER_KEYS = frozenset({"user", "username", "user_name", "owner", "login"})


def host_keys() -> frozenset[str]:
    return frozenset(k.lower() for k in formats.host_keys()) | GENERIC_HOST_KEYS


def user_keys() -> frozenset[str]:
    return frozenset(k.lower() for k in formats.user_keys()) | GENERIC_USER_KEYS


# Literals shorter than this are only replaced where they are the whole value: "db" inside other words is not.
MIN_LITERAL = 3

PREFIXES = {
    "disk": "Disk",
    "host": "Host",
    "instance": "Instance",
    "workload": "Workload",
    "tag": "Tag",
    "file": "File",
    "target": "Target",
    "label": "Label",
    "path": "Path",
    "url": "URL",
    "email": "Email",
    "ip": "IP",
    "drive": "Drive",
    "user": "User",
    "comment": "Comment",
}


def _letters(n: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA: spreadsheet column names."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def _key_tail(key: str) -> str:
    return key.rsplit(".", 1)[-1].strip().lower()


@dataclass
class Anonymizer:
    """Stable pseudonyms for one share. `marked`: extra strings the user wants replaced (a project name)."""

    marked: Sequence[str] = ()
    pseudonyms: dict[str, dict[str, str]] = field(default_factory=dict)
    _literals: dict[str, str] = field(default_factory=dict)  # lower-cased original -> pseudonym
    _literal_re: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        for text in self.marked:
            if text and text.strip():
                self.literal("label", text.strip())

    # -- pseudonyms -------------------------------------------------------------------------------------------

    def name(self, kind: str, original: str) -> str:
        """The pseudonym of `original` (compared without case) in its kind: 'Disk A', 'Host 1'."""
        known = self._literals.get(original.lower())
        if known is not None:
            return known
        table = self.pseudonyms.setdefault(kind, {})
        key = original.lower()
        if key not in table:
            n = len(table)
            table[key] = f"{PREFIXES[kind]} {_letters(n) if kind == 'disk' else n + 1}"
        return table[key]

    def literal(self, kind: str, original: str | None) -> str | None:
        """Register a known sensitive string: replaced by its pseudonym wherever it appears in any text."""
        if original is None or not original.strip():
            return original
        value = original.strip()
        pseudonym = self.name(kind, value)
        if value.lower() not in self._literals:
            self._literals[value.lower()] = pseudonym
            self._literal_re = None
        return pseudonym

    def server(self, original: str | None) -> str | None:
        """An observed row's host: the computer's pseudonym, and a SQL Server named instance's apart
        (`SQLPROD01\\INST1` -> `Host 1\\Instance 1`), so that the computer stays one host in the models."""
        if original is None or "\\" not in original:
            return self.literal("host", original)
        computer, instance = original.split("\\", 1)
        return f"{self.literal('host', computer)}\\{self.literal('instance', instance)}"

    def file_name(self, name: str) -> str:
        """'File 3.json': a pseudonym keeping a plain extension, so a vendor still sees what kind of file it was."""
        last = re.split(r"[!/\\]", name)[-1]
        stem, dot, ext = last.rpartition(".")
        pseudonym = self.name("file", name)
        for original in {name, last, stem if dot else last}:
            if len(original) >= MIN_LITERAL and original.lower() not in self._literals:
                self._literals[original.lower()] = pseudonym
                self._literal_re = None
        return f"{pseudonym}.{ext.lower()}" if dot and re.fullmatch(r"[A-Za-z0-9]{1,5}", ext) else pseudonym

    # -- text -------------------------------------------------------------------------------------------------

    def learn(self, text: str | None) -> None:
        """Collect user names (home folders) and file servers (UNC paths) from a value before any is scrubbed."""
        if not text:
            return
        for m in _USER_IN_PATH.finditer(text):
            self.literal("user", m.group(1))
        for m in _UNC_SERVER.finditer(text):
            self.literal("host", m.group(1))

    def _literal_pattern(self) -> re.Pattern[str] | None:
        if self._literal_re is None:
            words = sorted((w for w in self._literals if len(w) >= MIN_LITERAL), key=len, reverse=True)
            if not words:
                return None
            self._literal_re = re.compile(
                r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(w) for w in words) + r")(?![A-Za-z0-9])", re.IGNORECASE
            )
        return self._literal_re

    def scrub(self, text: str | None) -> str | None:
        """Replace paths, URLs, e-mail and IP addresses, drive letters and every known sensitive string."""
        if text is None or text == "":
            return text
        held: list[str] = []

        def hold(replacement: str) -> str:
            held.append(replacement)
            return _OPEN + "".join(chr(_DIGIT0 + int(d)) for d in str(len(held) - 1)) + _CLOSE

        whole = self._literals.get(text.strip().lower())
        if whole is not None:
            return whole
        text = _PATTERN.sub(lambda m: hold(self.name(m.lastgroup.split("_")[0], m.group(0))), text)
        literal_re = self._literal_pattern()
        if literal_re is not None:
            text = literal_re.sub(lambda m: hold(self._literals[m.group(0).lower()]), text)
        text = _DRIVE.sub(lambda m: hold(self.name("drive", m.group(0).upper())), text)
        return re.sub(
            f"{_OPEN}([^{_CLOSE}]*){_CLOSE}",
            lambda m: held[int("".join(str(ord(c) - _DIGIT0) for c in m.group(1)))],
            text,
        )

    def device_name(self, device: str | None) -> str | None:
        """An observed device's name: a counter path's computer (`\\\\SQL01\\PhysicalDisk(0 C:)`) becomes its host
        pseudonym, the rest is scrubbed as any text (drive letters, a database file's path)."""
        if device is None:
            return None
        m = _COUNTER_HOST.match(device)
        if m is None:
            return self.scrub(device)
        return "\\\\" + (self.literal("host", m["host"]) or "") + "\\" + (self.scrub(m["rest"]) or "")

    def metadata_value(self, key: str, value: str | None) -> str | None:
        if value is None:
            return None
        tail = _key_tail(key)
        if tail in FREE_TEXT_KEYS:
            return self.name("comment", value) if value.strip() else value
        if tail in host_keys():
            return self.literal("host", value)
        if tail in user_keys():
            return self.literal("user", value)
        return self.scrub(value)

    # -- the raw layer ----------------------------------------------------------------------------------------

    def raw_tables(self, tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
        """The raw layer with every text field anonymized; the original bytes (raw_file_contents) left out.

        Known strings are registered first (labels, computer names, user names in paths, targets), in ingest
        order, so pseudonyms are numbered the same way each time and a host name is replaced in a command line
        even when it is met there before its own field."""
        files = tables["raw_files"].sort_by([("ingested_at", "ascending"), ("name", "ascending")]).to_pylist()
        meta = tables["raw_run_metadata"].to_pylist()
        io = tables["raw_io_records"].to_pylist()
        for f in files:
            self.literal("disk", f["disk"])
            self.literal("host", f["host"])
        for f in files:
            for tag in f["tags"] or []:
                self.literal("tag", tag)
        for m in meta:
            tail = _key_tail(m["key"])
            if tail in host_keys():
                self.literal("host", m["value"])
            elif tail in user_keys():
                self.literal("user", m["value"])
        observed = {name: tables[name].to_pylist() for name in ("raw_intervals", "raw_waits") if name in tables}
        for rows in observed.values():
            for r in rows:
                self.server(r["host"])
        for text in _texts(files, meta, io, tables):
            self.learn(text)
        targets = {}
        for r in io:
            t = r["target"]
            if t is not None and t not in targets:
                scrubbed = self.scrub(t)
                # A target that is neither a path nor a drive letter (a device name) gets its own pseudonym.
                targets[t] = self.literal("target", t) if scrubbed == t and t.strip() else scrubbed
        file_names = {f["file_id"]: self.file_name(f["name"]) for f in files}

        out: dict[str, pa.Table] = {}
        for f in files:
            f["name"] = file_names[f["file_id"]]
            f["disk"] = self.literal("disk", f["disk"])
            f["host"] = self.literal("host", f["host"])
            f["tags"] = [self.literal("tag", t) for t in f["tags"] or []]
            f["notes"] = None
            f["warnings"] = ["warning withheld (anonymized share)"] * len(f["warnings"] or [])
            f["tool_version"] = self.scrub(f["tool_version"])
            if f.get("parse_options"):  # a column mapping names header cells, which may name a host
                f["parse_options"] = self.scrub(f["parse_options"])
        out["raw_files"] = pa.Table.from_pylist(files, schema=tables["raw_files"].schema)
        for r in io:
            r["target"] = targets.get(r["target"]) if r["target"] is not None else None
            r["tool_version"] = self.scrub(r["tool_version"])
        out["raw_io_records"] = pa.Table.from_pylist(io, schema=tables["raw_io_records"].schema)
        for m in meta:
            m["value"] = self.metadata_value(m["key"], m["value"])
            m["key"] = self.scrub(m["key"])
        out["raw_run_metadata"] = pa.Table.from_pylist(meta, schema=tables["raw_run_metadata"].schema)
        for name in ("raw_query_io", "raw_query_time"):
            rows = tables[name].to_pylist()
            for r in rows:
                for col in ("table_name", "tool_version"):
                    if col in r:
                        r[col] = self.scrub(r[col])
            out[name] = pa.Table.from_pylist(rows, schema=tables[name].schema)
        # The host a counter log names is a computer name, also inside a device name (device_name).
        for name, rows in observed.items():
            for r in rows:
                r["host"] = self.server(r["host"])
                r["tool_version"] = self.scrub(r["tool_version"])
                if "device" in r:
                    r["device"] = self.device_name(r["device"])
            out[name] = pa.Table.from_pylist(rows, schema=tables[name].schema)
        out["raw_latency_histograms"] = tables["raw_latency_histograms"]
        # A load series' workload label is the user's own text (a table's heading or workload cell, a business's
        # name for its job): a pseudonym of its own.
        if "raw_load_steps" in tables:
            steps = tables["raw_load_steps"].to_pylist()
            for r in steps:
                r["workload"] = self.literal("workload", r["workload"])
                r["tool_version"] = self.scrub(r["tool_version"])
            out["raw_load_steps"] = pa.Table.from_pylist(steps, schema=tables["raw_load_steps"].schema)
        return out


def _texts(files: list[dict], meta: list[dict], io: list[dict], tables: dict[str, pa.Table]) -> Iterator[str]:
    for f in files:
        yield from (f["name"], f["notes"], f["tool_version"], *(f["warnings"] or []))
    for m in meta:
        yield m["value"]
    for r in io:
        yield r["target"]
    for r in tables["raw_query_io"].select(["table_name"]).to_pylist():
        yield r["table_name"]
    if "raw_intervals" in tables:
        for r in tables["raw_intervals"].select(["device"]).to_pylist():
            yield r["device"]
    if "raw_load_steps" in tables:
        for r in tables["raw_load_steps"].select(["workload"]).to_pylist():
            yield r["workload"]


# -- scoped copies ------------------------------------------------------------------------------------------


def disk_keys_of(db: Location) -> list[dict]:
    """Every stored file's disk key (the marts' `disk` or `disk @ host`), from the raw layer."""
    from kneepoint.app.queries import disk_key

    con = connect(db)
    try:
        rows = con.execute("SELECT file_id, disk, host FROM raw_files ORDER BY ingested_at, name").fetchall()
    finally:
        con.close()
    return [{"file_id": f, "disk": d, "host": h, "disk_key": disk_key(d, h)} for f, d, h in rows]


def resolve_disks(db: Location, wanted: Iterable[str] | None) -> list[str]:
    """The disk keys `wanted` names: each a disk key (`label @ host`) or a bare label (every host of it).

    None or empty: every disk. Raises KeyError naming the stored disks when one matches nothing."""
    files = disk_keys_of(db)
    keys = list(dict.fromkeys(f["disk_key"] for f in files))
    wanted = [w.strip() for w in (wanted or []) if w and w.strip()]
    if not wanted:
        return keys
    chosen: list[str] = []
    for w in wanted:
        matches = [k for k in keys if k == w] or list(
            dict.fromkeys(f["disk_key"] for f in files if f["disk"].strip() == w)
        )
        if not matches:
            raise KeyError(f"no disk {w!r}; stored disks: " + ("; ".join(keys) if keys else "none"))
        chosen += [m for m in matches if m not in chosen]
    return chosen


def read_raw(db: Location, file_ids: Sequence[str], contents: bool = True) -> dict[str, pa.Table]:
    """The raw layer's rows of these files, one Arrow table per raw table."""
    con = connect(db)
    try:
        return {
            t: con.sql(
                f"SELECT * FROM {t} WHERE file_id IN (SELECT unnest(?::VARCHAR[]))", params=[list(file_ids)]
            ).to_arrow_table()
            for t in RAW_TABLES
            if contents or t != "raw_file_contents"
        }
    finally:
        con.close()


def write_raw(db: Location, tables: dict[str, pa.Table]) -> None:
    """Insert raw tables into a new warehouse, all in one transaction, each file stored as a change of its own."""
    con = connect(db)
    try:
        with changing(con):
            for name in reversed(RAW_TABLES):  # parents first
                if name not in tables:
                    continue
                table = tables[name]
                if name == "raw_files":
                    if "stored_seq" in table.column_names:
                        table = table.drop_columns(["stored_seq"])
                    seqs = record_changes(con, table.column("file_id").to_pylist(), "stored")
                    table = table.append_column("stored_seq", pa.array(seqs, pa.int64()))
                insert_rows(con, name, table)
    finally:
        con.close()


@dataclass
class Share:
    """The warehouse a report or bundle is made from: the user's own, or a private scoped/anonymized copy."""

    db: Location
    disk_keys: list[str]
    anonymized: bool
    anonymizer: Anonymizer | None = None


@contextmanager
def shared_warehouse(
    db: Location,
    disks: Iterable[str] | None = None,
    anonymize: bool = False,
    marked: Sequence[str] = (),
) -> Iterator[Share]:
    """Yield the warehouse to share from. All disks, not anonymized: the user's warehouse itself (read only by
    convention). Otherwise a temporary copy of the chosen disks' raw layer (anonymized on request) with the
    models rebuilt, removed on exit."""
    from kneepoint.ingest.build import build_models

    db = locate(db)
    if not exists(db):
        raise FileNotFoundError(f"no warehouse at {db}: ingest a file first (kneepoint ingest FILE --disk LABEL)")
    chosen = resolve_disks(db, disks)
    everything = set(chosen) == {f["disk_key"] for f in disk_keys_of(db)}
    if everything and not anonymize:
        yield Share(db, chosen, anonymized=False)
        return
    tmp = Path(tempfile.mkdtemp(prefix="kneepoint-share-"))
    try:
        file_ids = [f["file_id"] for f in disk_keys_of(db) if f["disk_key"] in chosen]
        tables = read_raw(db, file_ids, contents=not anonymize)
        anonymizer = Anonymizer(marked) if anonymize else None
        if anonymizer is not None:
            tables = anonymizer.raw_tables(tables)
        copy = tmp / "share.duckdb"
        write_raw(copy, tables)
        build_models(copy).raise_for_failure()
        keys = chosen
        if anonymizer is not None:
            from kneepoint.app.queries import disk_key

            originals = {f["disk_key"]: (f["disk"], f["host"]) for f in disk_keys_of(db)}
            keys = [
                disk_key(anonymizer.literal("disk", d) or "", anonymizer.literal("host", h))
                for d, h in (originals[k] for k in chosen)
            ]
            # Listed as Disk A, Disk B, …: the user's order of the originals would hint at which is which.
            keys.sort(key=lambda k: (len(k.split(" @ ")[0]), k))
        yield Share(copy, keys, anonymized=anonymize, anonymizer=anonymizer)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
