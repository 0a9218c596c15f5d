"""Hostile and broken input: each refused (or read) with a clear message naming the file and line, in the app's
upload path and in the CLI, and nothing else affected: the good files beside it are stored, the warehouse is
otherwise unchanged, nothing is written outside it, no hang and no memory blow-up.

CI uses the sizes the issue names (10,000 lines of junk, a 10 MB line, a 500 MB file, 300 damaged zips);
KNEEPOINT_LONG=1 multiplies them (100,000 lines, a 50 MB line, a 2 GB file, 3,000 damaged zips)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

import pytest

from kneepoint.app.web import uploads
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import parse_bytes
from kneepoint.ingest.sources import InputFile, Limits, MiB, iter_paths, iter_upload
from kneepoint.ingest.warehouse import connect, list_files, row_counts
from tests.browsing import ARTIFACTS
from tests.helpers import SAMPLE, corpus_file, hang_guard
from tests.reliability.conftest import KNEEPOINT, LONG, cli, peak_rss_mb, size
from tests.reliability.inputs import (
    damaged_zips,
    junk_lines,
    png_bytes,
    variant,
    zip_bytes,
    zip_lying_about_size,
    zip_marked_encrypted,
    zip_with_symlink,
)

SQLIO = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"
FIO = SAMPLE / "fio" / "randread-4k-jobs1.json"
CDM = SAMPLE / "crystaldiskmark" / "synthetic-nvme-cdm8.txt"
CDM_UTF16 = SAMPLE / "crystaldiskmark" / "synthetic-nvme-cdm7-utf16le.txt"
DISKSPD = SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt"
# A parse still running after this is a hang (generous: a loaded 2-core machine; tests/fuzzing.py uses 5 s).
PARSE_LIMIT_S = 20

UNKNOWN = "no recognizable result: not the output of any known tool"
JUNK_LINES = size(10_000, 100_000)
LONG_LINE_MB = size(10, 50)
BIG_FILE_MB = size(500, 2048)


def hostile_files(escape_dir: Path) -> dict[str, tuple[bytes, str]]:
    """File name -> (bytes, what the message for it says). `escape_dir` is where path-traversing zip entries
    would land if anything wrote them."""
    sqlio, fio, cdm = SQLIO.read_bytes(), FIO.read_bytes(), CDM.read_bytes()
    big_zeros = b"\0" * (50 * MiB)
    return {
        "empty.txt": (b"", "empty file: no result to read"),
        "blank-lines.txt": (b"\r\n  \n\t\n", "empty file: no result to read"),
        "screenshot.png": (png_bytes(), "binary file: not the text or JSON output of a benchmark tool"),
        "program": (Path("/bin/true").read_bytes(), "binary file: not the text or JSON output of a benchmark tool"),
        "empty.zip": (zip_bytes({}), "empty zip: no files inside"),
        "bomb.zip": (zip_bytes({"zeros.txt": big_zeros}), "past the limit of 200:1 (zip bomb?)"),
        "truncated.json": (fio[: len(fio) // 2], "fio JSON document cut short or malformed"),
        "two-tools.txt": (cdm + b"\n" + sqlio, "this file mixes the output of two tools: crystaldiskmark"),
        "unknown.csv": (b"when,iops\n" + b"".join(b"2024-01-%02d,%d\n" % (d, d * 1000) for d in range(1, 29)), UNKNOWN),
        f"junk-{JUNK_LINES}-lines.txt": (junk_lines(JUNK_LINES), UNKNOWN),
        f"one-{LONG_LINE_MB}MB-line.txt": (b"x" * (LONG_LINE_MB * MiB), UNKNOWN),
        "utf8-invalid.txt": (b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc" * 2000, UNKNOWN),
        "utf16-invalid.txt": (b"\xff\xfe" + "\ud800\udc00\ud800".encode("utf-16-le", "surrogatepass") * 500, UNKNOWN),
        "symlink-inside.zip": (zip_with_symlink("results.txt", "/etc/passwd"), "symbolic link inside zip: refused"),
        "nested.zip": (zip_bytes({"inner.zip": zip_bytes({"a.txt": sqlio})}), "zip inside a zip: unpack it first"),
        "encrypted.zip": (zip_marked_encrypted({"a.txt": sqlio}), "encrypted (kneepoint reads no passwords)"),
        # Entries named to climb out of any folder they were written to: read as results, written nowhere.
        "traversal.zip": (zip_bytes({TRAVERSAL_ENTRY.format(escape=escape_dir): variant(sqlio, 1)}), ""),
        "absolute.zip": (zip_bytes({ABSOLUTE_ENTRY.format(escape=escape_dir): variant(sqlio, 2)}), ""),
        "windows.zip": (zip_bytes({WINDOWS_ENTRY.format(escape=escape_dir): variant(sqlio, 3)}), ""),
    }


# Zip entry names pointing out of any folder they could be extracted to (distinct bytes: each one is stored).
TRAVERSAL_ENTRY = "../../../../../../../..{escape}/climbed.txt"
ABSOLUTE_ENTRY = "{escape}/absolute.txt"
WINDOWS_ENTRY = "..\\..\\..\\..\\..{escape}\\backslashed.txt"


def stored_names(escape_dir: Path) -> set[str]:
    """What the climbing entries are stored as: labels `zip!entry`, never paths."""
    return {
        "traversal.zip!" + TRAVERSAL_ENTRY.format(escape=escape_dir),
        "absolute.zip!" + ABSOLUTE_ENTRY.format(escape=escape_dir),
        "windows.zip!" + WINDOWS_ENTRY.format(escape=escape_dir),
    }


def readable_files() -> dict[str, bytes]:
    """Damaged but readable: read whole, like the undamaged file."""
    diskspd = DISKSPD.read_bytes()
    half = diskspd.index(b"\n", len(diskspd) // 2) + 1
    utf16 = CDM_UTF16.read_bytes()
    lone_surrogate = utf16.replace("\n".encode("utf-16-le"), "\n\ud800".encode("utf-16-le", "surrogatepass"), 1)
    return {
        # A 10 MB line and 10,000 lines of junk inside a DiskSpd file: skipped, every run still read.
        "diskspd-with-a-long-line.txt": diskspd[:half] + b"y" * (LONG_LINE_MB * MiB) + b"\n" + diskspd[half:],
        "diskspd-with-junk.txt": diskspd + b"\n" + junk_lines(JUNK_LINES, seed=1),
        # UTF-16 cut at an odd byte and with an unpaired surrogate.
        "cdm-utf16-broken.txt": lone_surrogate[:-1],
    }


def _bounded(fn, *args):
    """fn(*args), failing on a hang (PARSE_LIMIT_S)."""
    with hang_guard(PARSE_LIMIT_S, f"{fn.__name__}{args[:1]}"):
        return fn(*args)


# --- the app's path: preview (what the upload page shows), then store ----------------------------------------


def test_app_preview_names_what_is_wrong_with_each_file(tmp_path):
    escape = tmp_path / "escape"
    for name, (data, message) in hostile_files(escape).items():
        previews = _bounded(uploads.preview_upload, name, data)
        assert previews, name
        if not message:  # traversal names: the entries are results, read under their names as labels
            assert all(p.ok and p.name.startswith(f"{name}!") for p in previews), name
            continue
        errors = [p.error for p in previews if p.error]
        assert errors and all(e.startswith(f"{name}") for e in errors), (name, errors)
        assert any(message in e for e in errors), (name, errors)
        # compiler style: NAME:LINE: reason
        assert any(e.split(": ", 1)[0].rsplit(":", 1)[1].isdigit() for e in errors), (name, errors)
    for name, data in readable_files().items():
        (preview,) = uploads.preview_upload(name, data)
        assert preview.ok, (name, preview.error)


def test_app_store_keeps_the_good_files_and_nothing_else_changes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative path built from an upload's name would land here
    db = tmp_path / "w.duckdb"
    first = uploads.preview_upload(FIO.name, FIO.read_bytes())
    uploads.store_previews(db, first, disk="before", host=None, tags=[], notes=None)
    con = connect(db, read_only=True)
    before = row_counts(con)  # the first file's rows: it is the only one
    con.close()
    listing = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))

    escape = tmp_path / "escape"
    previews = [p for name, (data, _) in hostile_files(escape).items() for p in uploads.preview_upload(name, data)]
    previews += uploads.preview_upload(SQLIO.name, SQLIO.read_bytes())
    outcome = uploads.store_previews(db, previews, disk="hostile batch", host=None, tags=[], notes=None)
    assert outcome.build is not None and outcome.build.success, outcome.build
    assert {o.name for o in outcome.added} == {SQLIO.name} | stored_names(escape)
    assert not outcome.errors  # the unreadable files never reach the store: their previews showed the reason
    con = connect(db, read_only=True)
    try:
        files = {f["name"]: f for f in list_files(con)}
        assert set(files) == {FIO.name, SQLIO.name} | stored_names(escape)
        assert files[FIO.name]["disk"] == "before"
        assert row_counts(con, files[FIO.name]["file_id"]) == before
    finally:
        con.close()
    # Nothing written anywhere: not where the entries point, not beside the warehouse (the WAL is folded in).
    assert not escape.exists()
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == listing


# --- the command line ----------------------------------------------------------------------------------------


@pytest.fixture
def hostile_folder(tmp_path) -> tuple[Path, Path, dict[str, tuple[bytes, str]]]:
    escape = tmp_path / "escape"
    folder = tmp_path / "hostile"
    folder.mkdir()
    files = hostile_files(escape)
    for name, (data, _) in files.items():
        (folder / name).write_bytes(data)
    (folder / "good-sqlio.txt").write_bytes(SQLIO.read_bytes())
    return folder, escape, files


def test_cli_ingest_reports_each_bad_file_and_stores_the_good_one(tmp_path, hostile_folder):
    folder, escape, files = hostile_folder
    db = tmp_path / "w.duckdb"
    first = cli("--db", str(db), "ingest", str(FIO), "--disk", "before", "--no-build")
    assert first.returncode == 0, first.stderr
    con = connect(db, read_only=True)
    before = row_counts(con)
    con.close()

    # The build is left out here: test_app_store_keeps_the_good_files... builds on the same kind of batch.
    proc = cli("--db", str(db), "ingest", str(folder), "--disk", "hostile batch", "--no-build")
    assert proc.returncode == 2, proc.stdout + proc.stderr  # some inputs were bad; no traceback
    assert "Traceback" not in proc.stderr
    errors = [line.removeprefix("error    ") for line in proc.stdout.splitlines() if line.startswith("error")]
    for name, (_, message) in files.items():
        if message:
            mine = [e for e in errors if e.startswith(str(folder / name))]
            assert any(message in e for e in mine), (name, mine)
            # compiler style: FILE[!ENTRY]:LINE: reason
            assert all(re.match(rf"{re.escape(str(folder / name))}(![^:]*)?:\d+: ", e) for e in mine), mine
    assert f"added    {folder / 'good-sqlio.txt'}: sqlio" in proc.stdout

    con = connect(db, read_only=True)
    try:
        names = {f["name"] for f in list_files(con)}
        fio_id = next(f["file_id"] for f in list_files(con) if f["name"] == FIO.name)
        assert row_counts(con, fio_id) == before
        # The good file, and the climbing entries read as results under their names, kept as labels.
        assert names == {FIO.name, "good-sqlio.txt"} | stored_names(escape)
    finally:
        con.close()
    assert not escape.exists()  # nothing written where the entries' names point


def test_cli_parse_names_file_and_line_for_each_bad_file(hostile_folder):
    folder, _, files = hostile_folder
    bad = [name for name, (_, message) in files.items() if message]
    proc = cli("parse", *(str(folder / n) for n in bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    for name in bad:
        mine = [line for line in lines if line.startswith(f"{folder / name}")]
        assert any(files[name][1] in line for line in mine), (name, mine)


def test_damaged_files_that_hold_results_are_read_whole():
    for name, data in readable_files().items():
        parsed = _bounded(parse_bytes, data, name)
        clean = {
            "diskspd-with-a-long-line.txt": DISKSPD,
            "diskspd-with-junk.txt": DISKSPD,
            "cdm-utf16-broken.txt": CDM_UTF16,
        }[name]
        assert len(parsed.records) == len(parse_bytes(clean.read_bytes()).records), name


def test_utf8_with_one_bad_byte_is_still_read_as_utf8():
    """A file cut in the middle of a character (or with one stray byte) is still UTF-8: read as a code page,
    the Spanish `Tiempo de ejecución` lines would turn to mojibake and 6 of 17 statements' times be lost."""
    path = corpus_file("sqlstats", "jorriss-sampleoutput-es.txt")
    data = path.read_bytes()
    whole = parse_bytes(data, path.name)
    assert len(whole.records) == 17  # 6 `Tiempo de ejecución` blocks among them (lines 9, 21, ...)
    cut_in_a_character = data + "ó".encode()[:1]
    stray_byte = data.replace(b"\n", b"\n\xff", 1)
    for damaged in (cut_in_a_character, stray_byte):
        parsed = parse_bytes(damaged, path.name)
        assert parsed.encoding == "utf-8"
        assert [r.to_normalized() for r in parsed.records] == [r.to_normalized() for r in whole.records]


# --- links, devices and a 500 MB file: refused before anything is read -----------------------------------


def test_symlinks_are_refused_not_followed(tmp_path):
    folder = tmp_path / "in"
    (folder / "real").mkdir(parents=True)
    (folder / "real" / "sqlio.txt").write_bytes(SQLIO.read_bytes())
    (folder / "to-a-result.txt").symlink_to(SQLIO)
    (folder / "to-passwd.txt").symlink_to("/etc/passwd")
    (folder / "to-a-folder").symlink_to(SAMPLE / "fio", target_is_directory=True)
    (folder / "dangling.txt").symlink_to(tmp_path / "nowhere")
    link_argument = tmp_path / "argument-link.txt"
    link_argument.symlink_to(SQLIO)

    items = list(iter_paths([folder, link_argument]))
    refused = {Path(i.name).name: i.reason for i in items if not isinstance(i, InputFile)}
    read = [Path(i.name).name for i in items if isinstance(i, InputFile)]
    assert read == ["sqlio.txt"]  # nothing under the linked folder either
    assert set(refused) == {"to-a-result.txt", "to-passwd.txt", "to-a-folder", "dangling.txt", "argument-link.txt"}
    assert all(r == "symbolic link: refused (give the file it points to)" for r in refused.values())


@pytest.mark.timeout(60)  # reading either would never end: the test fails on the hang
def test_a_fifo_or_device_is_never_read(tmp_path):
    """Reading a FIFO would block for ever, /dev/zero would never end."""
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    items = list(iter_paths([fifo, Path("/dev/zero"), tmp_path]))  # the folder holds only the FIFO: skipped
    assert [(Path(i.name).name, i.reason) for i in items] == [
        ("pipe.txt", "not a regular file"),
        ("zero", "not a regular file"),
    ]


def test_a_500_mb_file_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "huge-result.txt"
    with open(big, "wb") as fh:
        fh.truncate(BIG_FILE_MB * MiB)  # sparse: no disk used, but 500 MB (2 GB long) to anyone who reads it
    small = tmp_path / "sqlio.txt"
    small.write_bytes(SQLIO.read_bytes())
    assert os.stat(big).st_blocks * 512 < MiB

    # Each command's peak memory reading a 126 KB result, and refusing the big file.
    db = str(tmp_path / "w.duckdb")
    commands = {"parse": ["parse"], "ingest": ["--db", db, "ingest", "--disk", "d", "--no-build"]}
    figures: dict[str, int] = {"file_mb": BIG_FILE_MB}
    for command, args in commands.items():
        baseline, baseline_mb = peak_rss_mb([*KNEEPOINT, *args, str(small)])
        assert baseline.returncode == 0, baseline.stdout + baseline.stderr
        proc, rss_mb = peak_rss_mb([*KNEEPOINT, *args, str(big)])
        assert proc.returncode == 2, proc.stdout + proc.stderr
        message = f"{big}:1: file is {BIG_FILE_MB} MB, past the limit of 200 MB (KNEEPOINT_MAX_FILE_MB)"
        assert message in proc.stdout + proc.stderr
        # Nothing of the file was read: the peak is that of reading the small file, give or take.
        assert rss_mb < baseline_mb + 100, (command, rss_mb, baseline_mb)
        figures[f"{command}_peak_rss_mb_126_kb_file"] = round(baseline_mb)
        figures[f"{command}_peak_rss_mb_refusing"] = round(rss_mb)
    if LONG:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "reliability-big-file.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures))


def test_zip_total_size_limit(tmp_path):
    """Entries each under the ratio limit, together past the zip's total: refused before any is inflated."""
    entries = {f"part{i}.txt": junk_lines(40_000, seed=i) for i in range(3)}  # ~1.4 MB each, compresses ~3:1
    data = zip_bytes(entries)
    limits = Limits(max_zip_total_bytes=2 * MiB)
    (refused,) = list(iter_upload("parts.zip", data, limits))
    assert not isinstance(refused, InputFile)
    assert refused.reason.startswith("zip expands to 4 MB, past the limit of 2 MB")

    (tmp_path / "parts.zip").write_bytes(data)
    proc = cli("parse", str(tmp_path / "parts.zip"), env={"KNEEPOINT_MAX_ZIP_MB": "2"})
    assert proc.returncode == 2 and "zip expands to 4 MB, past the limit of 2 MB" in proc.stderr


# --- damaged archives ---------------------------------------------------------------------------------------


def test_a_damaged_zip_is_one_error_and_the_rest_is_read():
    """Bytes flipped or the tail cut, as downloads and disks damage archives: never an exception, each damaged
    entry one error naming zip!entry, and an entry that still reads is read."""
    good = zip_bytes({"sqlio.txt": SQLIO.read_bytes(), "fio.json": FIO.read_bytes()})
    read = refused = 0
    for i, damaged in enumerate(damaged_zips(good, size(300, 3000), seed=7)):
        name = f"damaged-{i}.zip"
        for item in iter_upload(name, damaged):
            assert item.name.startswith(name), item.name
            if isinstance(item, InputFile):
                read += 1
            else:
                assert item.reason, i
                refused += 1
    assert read and refused  # both kinds occur in this sample of damage


def test_a_zip_that_lies_about_its_size_is_refused():
    """The headers say 1,000 bytes, the stream inflates to 126 KB: never more than declared + 1 is read, and
    the entry is refused by its checksum."""
    data = zip_lying_about_size(SQLIO.read_bytes(), 1000)
    (item,) = list(iter_upload("liar.zip", data))
    assert not isinstance(item, InputFile)
    assert item.name == "liar.zip!results.txt"
    assert item.reason == "damaged zip entry, not read: Bad CRC-32 for file 'results.txt'"


def test_cli_ingest_goes_on_past_a_damaged_zip(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a-damaged.zip").write_bytes(zip_lying_about_size(SQLIO.read_bytes(), 1000))
    (folder / "b-good.txt").write_bytes(SQLIO.read_bytes())
    proc = cli("--db", str(tmp_path / "w.duckdb"), "ingest", str(folder), "--disk", "d", "--no-build")
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 2
    assert f"error    {folder / 'a-damaged.zip'}!results.txt:1: damaged zip entry, not read: Bad CRC-32" in proc.stdout
    assert f"added    {folder / 'b-good.txt'}" in proc.stdout


def test_only_parse_errors_come_out_of_parsing_the_hostile_files(tmp_path):
    """Every hostile file through every parser, detection skipped (`--format`): ParseError or records."""
    from kneepoint.ingest.formats import names

    inputs = {name: data for name, (data, _) in hostile_files(tmp_path / "escape").items() if not name.endswith(".zip")}
    inputs |= readable_files()
    for name, data in inputs.items():
        for fmt in names():
            with hang_guard(PARSE_LIMIT_S, f"{name} as {fmt}"), contextlib.suppress(ParseError):
                parse_bytes(data, name, fmt)
