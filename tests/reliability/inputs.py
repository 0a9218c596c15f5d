"""Inputs for the reliability tests: batches of distinct real-format files, hostile files and archives.

Everything is made in the test's tmp folder from sample_data/ (every format kneepoint reads), so the tests
need nothing else and never write into the checkout.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib
from pathlib import Path

from kneepoint.ingest.formats import parse_bytes
from kneepoint.ingest.records import (
    IntervalRecord,
    IoRecord,
    LoadRecord,
    ParsedFile,
    QueryIoRecord,
    QueryTimeRecord,
    WaitRecord,
)
from kneepoint.ingest.sources import InputFile
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE

# One file per format and layout (sample_data/README.md): fio JSON and text, SQLIO, DiskSpd text and XML,
# CrystalDiskMark 7 (UTF-16) and 8, KDiskMark, SQL Server statistics, a HammerDB log.
SAMPLE_FILES = sorted(
    p
    for p in SAMPLE.rglob("*")
    if p.is_file() and p.suffix in (".json", ".txt", ".xml") and p.name not in ("labels.json", "README.md")
)


def variant(data: bytes, k: int) -> bytes:
    """The same results in different bytes: `k` + 1 trailing spaces after a line break (in the file's own
    encoding, so UTF-16 stays UTF-16). Every parser skips trailing blank lines."""
    _, encoding = decode(data)
    codec = {"utf-8-sig": "utf-8"}.get(encoding, encoding)
    return data + ("\n" + " " * (k + 1)).encode(codec)


def write_batch(folder: Path, n: int) -> list[Path]:
    """`n` distinct files cycling through every sample format; names keep the format's suffix."""
    folder.mkdir(parents=True, exist_ok=True)
    sources = [(p, p.read_bytes()) for p in SAMPLE_FILES]
    paths = []
    for i in range(n):
        src, data = sources[i % len(sources)]
        path = folder / f"f{i:04d}-{src.name}"
        path.write_bytes(variant(data, i // len(sources)))
        paths.append(path)
    return paths


def expected_rows(parsed: ParsedFile) -> dict[str, int]:
    """What one file puts in each raw row table, counted from its parse (not from the code that stores it)."""
    io_records = [r for r in parsed.records if isinstance(r, IoRecord)]
    return {
        "raw_io_records": len(io_records),
        "raw_query_io": sum(isinstance(r, QueryIoRecord) for r in parsed.records),
        "raw_query_time": sum(isinstance(r, QueryTimeRecord) for r in parsed.records),
        "raw_intervals": sum(isinstance(r, IntervalRecord) for r in parsed.records),
        "raw_waits": sum(isinstance(r, WaitRecord) for r in parsed.records),
        "raw_load_steps": sum(isinstance(r, LoadRecord) for r in parsed.records),
        "raw_run_metadata": len({(r.run_index, k) for r in io_records for k in r.metadata}),
        "raw_latency_histograms": sum(len(r.histogram) for r in io_records),
    }


def expected_by_file_id(paths: list[Path]) -> dict[str, dict[str, int]]:
    out = {}
    for path in paths:
        data = path.read_bytes()
        out[InputFile(path.name, data).sha256[:16]] = expected_rows(parse_bytes(data, str(path)))
    return out


# --- hostile files -------------------------------------------------------------------------------------------


def png_bytes() -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def zip_bytes(entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in entries.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compress_type=compression)
    return buf.getvalue()


def zip_with_symlink(link_name: str, target: str) -> bytes:
    """A zip entry stored as a Unix symbolic link (as `zip --symlinks` makes it): the content is the target."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo(link_name, date_time=(2024, 1, 1, 0, 0, 0))
        info.create_system = 3
        info.external_attr = (0o120777 << 16) | 0x20
        zf.writestr(info, target)
    return buf.getvalue()


def zip_lying_about_size(data: bytes, declared: int) -> bytes:
    """One deflated entry whose headers declare `declared` bytes while the stream inflates to all of `data`."""
    raw = bytearray(zip_bytes({"results.txt": data}))
    struct.pack_into("<I", raw, 22, declared)  # local header: uncompressed size
    central = raw.rfind(b"PK\x01\x02")
    struct.pack_into("<I", raw, central + 24, declared)  # central directory: uncompressed size
    return bytes(raw)


def damaged_zips(good: bytes, n: int, seed: int) -> list[bytes]:
    """`n` copies of a good zip with a few bytes flipped or the tail cut: damaged archives as downloads
    and disks make them."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        d = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            d[rng.randrange(len(d))] = rng.randrange(256)
        if rng.random() < 0.2:
            d = d[: rng.randrange(len(d))]
        out.append(bytes(d))
    return out


_JUNK_TEXT = (
    "the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet consectetur adipiscing elit sed do "
    "eiusmod tempor incididunt labore dolore magna aliqua ticket deploy restart cache kernel module backup"
)
_JUNK_WORDS = _JUNK_TEXT.split(" ")


def junk_lines(n: int, seed: int = 0) -> bytes:
    """`n` lines a terminal or a notes file holds: prompts, commands, log lines, prose, hex dumps, blanks."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        kind = rng.randrange(6)
        if kind == 0:
            lines.append(f"user@host{rng.randrange(9)}:~/work$ ls -la /var/log/{rng.choice(_JUNK_WORDS)}")
        elif kind == 1:
            lines.append(
                f"2024-03-{rng.randrange(1, 29):02d} 12:{rng.randrange(60):02d} INFO {rng.choice(_JUNK_WORDS)} ok"
            )
        elif kind == 2:
            lines.append(" ".join(rng.choice(_JUNK_WORDS) for _ in range(rng.randint(3, 14))).capitalize() + ".")
        elif kind == 3:
            lines.append(" ".join(f"{rng.randrange(256):02x}" for _ in range(16)))
        elif kind == 4:
            lines.append("")
        else:
            lines.append(f"# note {i}: {rng.choice(_JUNK_WORDS)} = {rng.random():.3f}")
    return "\n".join(lines).encode()


def zip_marked_encrypted(entries: dict[str, bytes]) -> bytes:
    """A zip whose entries carry the 'encrypted' flag (bit 0 of the general purpose flags), as a password-protected
    archive from Windows or 7-Zip does; kneepoint reads no passwords."""
    raw = bytearray(zip_bytes(entries))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.find(signature)
        while at != -1:
            raw[at + flags_at] |= 0x01
            at = raw.find(signature, at + 4)
    return bytes(raw)


# --- injection ------------------------------------------------------------------------------------------------

# Each one would do something if anything on its way executed it: end a SQL string and drop a table, run script
# in the page, open a javascript: link, or be read as Markdown, a Streamlit directive or a Jinja expression. The
# JS sets `window.__kp_xss`, which the browser test watches.
SQL_PAYLOAD = "x'); DROP TABLE raw_files; --"
SQL_PAYLOAD_2 = "\" OR 1=1; DELETE FROM raw_io_records WHERE 'a'='a"
HTML_PAYLOAD = '<img src=x onerror="window.__kp_xss=1">'
SCRIPT_PAYLOAD = "<script>window.__kp_xss=2</script>"
JS_LINK_PAYLOAD = "[open](javascript:window.__kp_xss=3)"
MARKUP_PAYLOAD = "**bold** :red[red] $x^2$ {{ 7*7 }} &lt;"


def hostile_labels(tag: str) -> dict[str, object]:
    """A disk, host, tags and notes made of the payloads; `tag` keeps two sets apart."""
    return {
        "disk": f"{HTML_PAYLOAD} {SQL_PAYLOAD} {tag}",
        "host": f"{SCRIPT_PAYLOAD}{SQL_PAYLOAD_2}",
        "tags": [SQL_PAYLOAD, HTML_PAYLOAD, MARKUP_PAYLOAD],
        "notes": f"{SCRIPT_PAYLOAD}\n{JS_LINK_PAYLOAD}\n{MARKUP_PAYLOAD}\n{SQL_PAYLOAD}",
    }


def hostile_file_names() -> list[str]:
    """File names a user could have (no `/` or NUL: a POSIX name cannot hold them)."""
    return [
        "x'); DROP TABLE raw_files; --.txt",
        '<img src=x onerror="window.__kp_xss=4">.txt',
        "<svg onload=window.__kp_xss=5>.json",
        "[open](javascript:window.__kp_xss=6) **b** $x$.txt",
    ]


# What goes under the hostile names: real results of four formats.
NAMED_SOURCES = [
    SAMPLE / "sqlio" / "synthetic-p10-sweep.txt",
    SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt",
    SAMPLE / "fio" / "randread-4k-jobs1.json",
    SAMPLE / "crystaldiskmark" / "synthetic-nvme-cdm8.txt",
]


def named_results(names: list[str], k: int) -> dict[str, bytes]:
    """A real result under each hostile name (fio JSON for a .json name, text formats otherwise), distinct bytes
    per name and per `k`."""
    text_sources = [s for s in NAMED_SOURCES if s.suffix == ".txt"]
    out = {}
    for i, name in enumerate(names):
        src = NAMED_SOURCES[2] if name.endswith(".json") else text_sources[i % len(text_sources)]
        out[name] = variant(src.read_bytes(), 300 + 10 * k + i)
    return out
