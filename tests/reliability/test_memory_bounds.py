"""Memory stays bounded by what a command holds on purpose, whatever the input makes of itself: a bundle member or
manifest that inflates to gigabytes is refused with a clear message after reading at most its declared size, and an
ingest of many large inputs holds one of them at a time. Peak memory is measured in a child process
(`peak_rss_mb`), never timed.

The zip bombs are made at test time and stay small on disk: a deflate stream of N MiB of zeros is one 1 MiB block
compressed once and repeated (after a full flush each block compresses alike), so 2 GiB cost ~2 MB and no time."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from kneepoint.ingest import build
from kneepoint.ingest.sources import MiB
from tests.helpers import SAMPLE
from tests.reliability.conftest import KNEEPOINT, peak_rss_mb
from tests.reliability.inputs import junk_lines

# What a command may take beyond the input it holds: the interpreter, DuckDB, Arrow and the parsers (the CLI's
# peak on a 126 KB file is ~190 MB), plus working room. The target: under 2x the largest input + 300 MB.
MARGIN_MB = 300


def deflated_zeros(mib: int) -> bytes:
    """A raw deflate stream that inflates to `mib` MiB of zeros (~1 KB per MiB)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(MiB)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * mib + c.flush()


def raw_zip(entries: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip written by hand: (name, deflated bytes, crc32, declared uncompressed size) per entry, so that a header
    may declare what the stream does not hold."""
    out = bytearray()
    central = bytearray()
    for name, data, crc, size in entries:
        encoded = name.encode()
        offset = len(out)
        fields = (20, 0, zlib.DEFLATED, 0, 0x21, crc, len(data), size, len(encoded))
        out += b"PK\x03\x04" + struct.pack("<HHHHHIIIHH", *fields, 0) + encoded + data
        central += b"PK\x01\x02" + struct.pack("<HHHHHHIIIHHHHHII", 20, *fields, 0, 0, 0, 0, 0, offset) + encoded
    end = struct.pack("<HHHHIIH", 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out + central + b"PK\x05\x06" + end)


def _stored(name: str, data: bytes) -> tuple[str, bytes, int, int]:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return name, c.compress(data) + c.flush(), zlib.crc32(data), len(data)


def _manifest(member: str) -> bytes:
    table = Path(member).stem
    return json.dumps(
        {
            "format": "kneepoint-bundle",
            "bundle_version": 1,
            "tables": {member: {"table": table, "layer": "raw", "rows": 1, "sha256": "0" * 64}},
        }
    ).encode()


def _import(tmp_path: Path, bundle: bytes) -> tuple[str, float, Path]:
    """`kneepoint import` of `bundle`: its messages, peak memory (MB), and the warehouse it was to go into."""
    path = tmp_path / "bundle.zip"
    path.write_bytes(bundle)
    db = tmp_path / "vendor.duckdb"
    proc, rss_mb = peak_rss_mb([*KNEEPOINT, "--db", str(db), "import", str(path)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr, rss_mb, db


BOMB_MIB = 2048
MEMBER = "raw/raw_io_records.parquet"


def test_a_bundle_member_declaring_2_gib_is_refused_before_it_is_inflated(tmp_path):
    bomb = deflated_zeros(BOMB_MIB)
    crc = 0  # never read: refused on its declared size
    bundle = raw_zip([_stored("manifest.json", _manifest(MEMBER)), (MEMBER, bomb, crc, BOMB_MIB * MiB)])
    assert len(bundle) < 4 * MiB
    said, rss_mb, db = _import(tmp_path, bundle)
    assert (
        f"bundle.zip: the raw tables expand to {BOMB_MIB} MB, past the limit of 1024 MB (KNEEPOINT_MAX_ZIP_MB)" in said
    )
    assert rss_mb < 2 * len(bundle) / MiB + MARGIN_MB, rss_mb
    assert not db.exists()


def test_a_bundle_member_lying_about_its_size_inflates_no_further_than_it_declares(tmp_path):
    """Its headers declare 1 MiB (a ratio within the limit) while the stream inflates to 2 GiB: read up to the
    declared size, then refused as damaged (its checksum cannot match), memory bounded."""
    bomb = deflated_zeros(BOMB_MIB)
    bundle = raw_zip([_stored("manifest.json", _manifest(MEMBER)), (MEMBER, bomb, 0, MiB)])
    said, rss_mb, db = _import(tmp_path, bundle)
    assert f"bundle.zip: {MEMBER} is damaged" in said
    assert rss_mb < 2 * len(bundle) / MiB + MARGIN_MB, rss_mb
    assert not db.exists()


def test_a_1_gb_manifest_is_refused_before_it_is_read(tmp_path):
    manifest = deflated_zeros(1024)
    for declared, message in (
        (1024 * MiB, "manifest.json is 1024 MB, past the limit of 64 MB"),
        (MiB, "manifest.json is damaged"),
    ):
        bundle = raw_zip([("manifest.json", manifest, 0, declared)])
        said, rss_mb, db = _import(tmp_path, bundle)
        assert f"bundle.zip: {message}" in said, declared
        assert rss_mb < 2 * len(bundle) / MiB + MARGIN_MB, (declared, rss_mb)
        assert not db.exists()


# Inputs that the old loader held 16 at a time (`list(islice(items, 16))` in ingest/load.py), and the app's preview
# all at once: 16 entries of 16 MB (notes, no results: nothing is stored, so the peak is the inputs' alone) in a
# zip of ~3 MB (deflate finds each 30 KB block again: ~90:1, within the ratio limit).
ENTRIES = 16
ENTRY_MB = 16


def _notes_zip(path: Path) -> Path:
    block = junk_lines(2000)[:30_000]
    body = (block * (ENTRY_MB * MiB // len(block) + 1))[: ENTRY_MB * MiB]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(ENTRIES):
            zf.writestr(f"notes-{i:02d}.txt", f"notes {i}\n".encode() + body[: -len(str(i)) - 7])
    return path


def _bound_mb(upload: Path) -> float:
    """The issue's target: 2x the largest input (here an entry) + 300 MB, plus the upload itself where it is
    held whole (the app's: Streamlit hands it over as bytes)."""
    return 2 * ENTRY_MB + MARGIN_MB + upload.stat().st_size / MiB


def test_an_ingest_of_many_large_inputs_holds_one_at_a_time(tmp_path):
    upload = _notes_zip(tmp_path / "notes.zip")
    command = [*KNEEPOINT, "--db", str(tmp_path / "w.duckdb"), "ingest", str(upload), "--disk", "d", "--no-build"]
    proc, rss_mb = peak_rss_mb(command)
    assert proc.returncode == 2 and "0 file(s) added, 0 record(s); 0 already stored" in proc.stdout, proc.stdout
    assert proc.stdout.count("no recognizable result") == ENTRIES
    assert rss_mb < _bound_mb(upload) - upload.stat().st_size / MiB, rss_mb


def test_the_apps_preview_of_a_large_zip_holds_one_entry_at_a_time(tmp_path):
    upload = _notes_zip(tmp_path / "notes.zip")
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from kneepoint.app.web.uploads import preview_upload\n"
        "previews = preview_upload('notes.zip', Path(sys.argv[1]).read_bytes())\n"
        "print(sum(p.error is not None and 'no recognizable result' in p.error for p in previews))\n"
    )
    proc, rss_mb = peak_rss_mb([sys.executable, "-c", probe, str(upload)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ENTRIES)
    assert rss_mb < _bound_mb(upload), rss_mb


# Stored bytes: DuckDB held every byte a command stored until its checkpoint, and each checkpoint after a store
# rewrote (in memory) every byte stored so far: with 480 MB stored, a one-file ingest peaked at 1.2 GB.
# Large fio JSON files made of a sample and whitespace: quick to parse, and small on disk once stored.
LARGE_MB = 40


def _large_fio_files(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    sample = json.loads((SAMPLE / "fio" / "randread-4k-jobs1.json").read_text())
    paths = []
    for i in range(count):
        sample["jobs"][0]["jobname"] = f"large-{i}"
        text = json.dumps(sample)
        path = folder / f"large-{i}.json"
        path.write_text("{" + " " * (LARGE_MB * MiB - len(text)) + text[1:])
        paths.append(path)
    return paths


def test_memory_does_not_grow_with_the_bytes_stored(tmp_path):
    db = str(tmp_path / "w.duckdb")
    few = _large_fio_files(tmp_path / "few", 2)
    many = _large_fio_files(tmp_path / "many", 8)
    proc, few_mb = peak_rss_mb([*KNEEPOINT, "--db", db, "ingest", *map(str, few), "--disk", "few", "--no-build"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # four times the files in one command: the peak is the same give or take a file
    proc, many_mb = peak_rss_mb([*KNEEPOINT, "--db", db, "ingest", *map(str, many), "--disk", "many", "--no-build"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert many_mb < few_mb + 2 * LARGE_MB, (few_mb, many_mb)
    # a small file after 400 MB stored costs what it costs in a new warehouse
    small = SAMPLE / "fio" / "randread-4k-jobs2.json"
    proc, small_mb = peak_rss_mb([*KNEEPOINT, "--db", db, "ingest", str(small), "--disk", "small", "--no-build"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert small_mb < MARGIN_MB, small_mb


# One large file as a user has one: a fio JSON whose whitespace is random spaces, tabs and line ends, so that its
# bytes compress as a text log does (to ~30%), not to nothing. DuckDB holds several times what a transaction
# writes until it commits: the file's bytes as they were cost 5x their size; compressed, their frame is what it
# holds. Reading and decoding hold the bytes and the text once each.
ONE_LARGE_MB = 100


def _large_text_like_fio_file(path: Path) -> Path:
    text = json.dumps(json.loads((SAMPLE / "fio" / "randread-4k-jobs1.json").read_text()))
    size = ONE_LARGE_MB * MiB - len(text)
    whitespace = bytes(b" \t\r\n"[i % 4] for i in range(256))
    path.write_bytes(b"{" + os.urandom(size).translate(whitespace) + text[1:].encode())
    return path


def test_one_large_file_costs_under_twice_its_size_plus_the_margin(tmp_path):
    path = _large_text_like_fio_file(tmp_path / "large.json")
    db = tmp_path / "w.duckdb"
    proc, rss_mb = peak_rss_mb([*KNEEPOINT, "--db", str(db), "ingest", str(path), "--disk", "d", "--no-build"])
    assert proc.returncode == 0 and "1 file(s) added" in proc.stdout, proc.stdout + proc.stderr
    assert rss_mb < 2 * ONE_LARGE_MB + MARGIN_MB, rss_mb


# A record-dense file: a SQLIO log of runs repeated, ~1,370 runs a MB, each with a 25-bucket histogram. Its bytes are
# few beside what a parse made of them: as Python records and rows, each run cost ~4 KB more than its 730 bytes, and
# this 20 MB log of 27,384 runs peaked at 454 MB without its build, 491 MB with it. Now its records become Arrow a
# slice at a time, its bytes are compressed before it is parsed, and its change build is bounded at 128 MB. A new
# warehouse's first build runs dbt itself in the process (~75 MB of modules and parsed project; later change builds
# send dbt's recorded SQL), on one DuckDB thread (build.run_bounds): ~325 MB.
DENSE_MB = 20


def _dense_sqlio_log(path: Path) -> int:
    """Write the log; the runs it holds."""
    sample = (SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_bytes()
    start = sample.index(b"C:\\SQLIO>sqlio")
    runs = sample[start:].rstrip(b"\r\n") + b"\r\n\r\n"
    copies = DENSE_MB * MiB // len(runs)
    path.write_bytes(sample[:start] + runs * copies)
    return runs.count(b"IOs/sec:") * copies


def _built_warehouse(db: Path) -> Path:
    """A warehouse past its first builds (dbt's, in the process): its change builds send dbt's recorded SQL. It holds
    runs and a counter log, so what is stored next is appended to tables that hold rows."""
    firsts = ("sqlio/synthetic-p10-sweep.txt", "fio/randread-4k-jobs2.json", "perfmon/synthetic-sql01-e-drive-day.csv")
    for first in (SAMPLE / name for name in firsts):
        proc = subprocess.run(
            [*KNEEPOINT, "--db", str(db), "ingest", str(first), "--disk", "first"], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return db


def test_a_record_dense_file_costs_under_twice_its_size_plus_the_margin(tmp_path):
    path = tmp_path / "dense.txt"
    runs = _dense_sqlio_log(path)
    db = _built_warehouse(tmp_path / "w.duckdb")
    proc, rss_mb = peak_rss_mb([*KNEEPOINT, "--db", str(db), "ingest", str(path), "--disk", "d"])
    assert proc.returncode == 0 and f"{runs} run(s), {runs} record(s)" in proc.stdout, proc.stdout + proc.stderr
    assert "models up to date (1 change built" in proc.stdout, proc.stdout
    assert rss_mb < 2 * path.stat().st_size / MiB + MARGIN_MB, rss_mb


def test_a_record_dense_file_into_a_new_warehouse_costs_under_twice_its_size_plus_the_margin(tmp_path):
    """The first build of a warehouse goes through dbt in the process, over every row."""
    path = tmp_path / "dense.txt"
    runs = _dense_sqlio_log(path)
    db = tmp_path / "new.duckdb"
    proc, rss_mb = peak_rss_mb([*KNEEPOINT, "--db", str(db), "ingest", str(path), "--disk", "d"])
    assert proc.returncode == 0 and f"{runs} run(s), {runs} record(s)" in proc.stdout, proc.stdout + proc.stderr
    assert "models up to date (every model rebuilt" in proc.stdout, proc.stdout
    assert rss_mb < 2 * path.stat().st_size / MiB + MARGIN_MB, rss_mb


# A week of Perfmon counters at 15 s for 8 disks (~35 MB, 322,560 intervals), as production is watched. Its change
# build placed every interval on the disk's curve within 256 MB of DuckDB's memory: 418 MB for the whole ingest. Into
# a new warehouse, whose first build runs dbt in the process, it took 487 MB; within 128 MB on one thread, 374 MB. Into
# a warehouse that holds a counter log, the fold after its store peaked at 365-372 MB with DuckDB's cache kept.
WEEK_SAMPLES, WEEK_DISKS = 7 * 24 * 240, 8


def _week_of_counters(path: Path, host: str = "SQL01") -> int:
    """Write the week's counter log; the intervals it holds."""
    from datetime import datetime

    from kneepoint.ingest.synth import perfmon_csv
    from kneepoint.ingest.synth.sqlio import P10

    devices = [f"PhysicalDisk({i} {chr(ord('E') + i)}:)" for i in range(WEEK_DISKS)]
    start = datetime(2026, 11, 23)
    records = perfmon_csv.observe(P10, host=host, devices=devices, samples=WEEK_SAMPLES, start=start)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(perfmon_csv.write(records))
    return len(records)


@pytest.mark.parametrize("warehouse", ["built", "new"])
def test_a_week_of_counters_costs_under_twice_its_size_plus_the_margin(tmp_path, warehouse):
    path = tmp_path / "week.csv"
    intervals = _week_of_counters(path)
    db = _built_warehouse(tmp_path / "w.duckdb") if warehouse == "built" else tmp_path / "new.duckdb"
    proc, rss_mb = peak_rss_mb([*KNEEPOINT, "--db", str(db), "ingest", str(path), "--disk", "d"])
    assert proc.returncode == 0 and f"{intervals} record(s)" in proc.stdout, proc.stdout + proc.stderr
    built = "1 change built" if warehouse == "built" else "every model rebuilt"
    assert f"models up to date ({built}" in proc.stdout, proc.stdout
    assert rss_mb < 2 * path.stat().st_size / MiB + MARGIN_MB, rss_mb


def test_a_first_ingest_of_many_large_files_costs_under_twice_the_largest_plus_the_margin(tmp_path):
    """Two hosts' weeks of counters (645,120 intervals) into a new warehouse: each file's rows are let go of before
    the next is parsed (the first's 91 MB of Arrow rows were held through the second's parse: 447 MB before any
    build), and the first build is bounded as the ingest's although the warehouse it makes is past
    WHOLE_RUN_FROM_RECORDS (with a large warehouse's bounds, 25,400 files of every format peaked at ~1 GB)."""
    folder = tmp_path / "weeks"
    intervals = sum(_week_of_counters(folder / f"{host}.csv", host) for host in ("SQL01", "SQL02"))
    assert intervals >= build.WHOLE_RUN_FROM_RECORDS
    largest_mb = max(p.stat().st_size for p in folder.iterdir()) / MiB
    db = tmp_path / "new.duckdb"
    proc, rss_mb = peak_rss_mb([*KNEEPOINT, "--db", str(db), "ingest", str(folder), "--disk", "d"])
    assert proc.returncode == 0 and f"2 file(s) added, {intervals} record(s)" in proc.stdout, proc.stdout + proc.stderr
    assert "models up to date (every model rebuilt" in proc.stdout, proc.stdout
    assert rss_mb < 2 * largest_mb + MARGIN_MB, rss_mb
