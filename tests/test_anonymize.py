"""Anonymization: pseudonyms in text values, and a warehouse with secrets planted in every field whose anonymized
report and bundle carry none of them (zip members decompressed, Parquet values read back)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from kneepoint.app.cli.main import main
from kneepoint.app.sharing.anonymize import Anonymizer, shared_warehouse
from tests.helpers import SAMPLE

# Every planted string holds one of these (compared without case).
SECRETS = (
    "kpsecret",
    "kpbobsmith",
    "kpfileserver",
    "kp-xss",
    "10.20.30.40",
    "fe80::1ff:fe23:4567:890a",
)
DISK_1 = "KPSECRETDISK <script>alert('kp-xss-disk')</script>"
HOST_1 = "kpsecretpc7"
DISK_2 = "\"><img src=x onerror=alert('kp-xss-disk2')> kpsecretdisk2"
HOST_2 = "kpsecrethost2.kpsecret.example"
REDACTED = "kpsecretproject"
DRIVE_LETTER = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]:(?=[\\/\s\]]|$)")


def _planted_files() -> dict[str, list[tuple[str, bytes]]]:
    """Sample files with secrets written into the places real files carry them."""
    diskspd = (SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt").read_text(encoding="utf-8")
    diskspd = diskspd.replace("SYNTHETIC-SQL01", HOST_1.upper()).replace(
        "D:\\diskspd\\testfile.dat", "C:\\Users\\kpbobsmith\\kpsecretdir\\testfile.dat"
    )
    sqlio = (SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_text(encoding="utf-8")
    sqlio = sqlio.replace("E:\\testfile.dat", "\\\\kpfileserver9\\kpshare\\kpsecretdir\\test.dat")
    sqlstats = (SAMPLE / "sqlstats" / "synthetic-p10-workload.txt").read_text(encoding="utf-8")
    sqlstats = sqlstats.replace("OrderLinesArchive", f"{REDACTED}_OrderLinesArchive")
    cdm = (SAMPLE / "crystaldiskmark" / "synthetic-nvme-cdm8.txt").read_text(encoding="utf-8")
    cdm = re.sub(
        r"Comment: .*",
        "Comment: kpsecretcomment <script>alert('kp-xss-comment')</script> from 10.20.30.40 and "
        "fe80::1ff:fe23:4567:890a, mail kpbobsmith@kpsecret.example",
        cdm,
    )
    cdm = re.sub(r"(OS: .*)", rf"\1 on {HOST_1.upper()}", cdm)
    fio = (SAMPLE / "fio" / "randread-4k-jobs1.json").read_text(encoding="utf-8")
    fio = fio.replace("/work/kneepoint-sweep.dat", "/home/kpbobsmith/kpsecretdir/sweep.dat").replace(
        '"randread-4k-qd', f'"{REDACTED}-randread-4k-qd'
    )
    return {
        "windows": [
            ("kpsecretfile-diskspd <img src=x onerror=alert('kp-xss-file')>.txt", diskspd.encode()),
            ("kpsecretfile-sqlio.txt", sqlio.encode()),
            ("kpsecretfile-sqlstats.txt", sqlstats.encode()),
        ],
        "desktop": [
            ("kpsecretfile-cdm8.txt", cdm.encode()),
            ("kpsecretfile-fio \"><svg onload=alert('kp-xss-file2')>.json", fio.encode()),
        ],
    }


def build_planted(db: Path) -> Path:
    """A warehouse whose labels, tags, notes, file names and file contents carry the SECRETS (and `<script>`)."""
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_upload

    files = _planted_files()
    sets = {
        "windows": {
            "disk": DISK_1,
            "host": HOST_1,
            "tags": ["kpsecrettag <b>kp-xss-tag</b>"],
            "notes": "kpsecretnote <script>alert('kp-xss-notes')</script> on 10.20.30.40",
        },
        "desktop": {"disk": DISK_2, "host": HOST_2, "tags": ["kpsecrettag2"], "notes": None},
    }
    for key, labels in sets.items():
        items = [item for name, data in files[key] for item in iter_upload(name, data)]
        report = ingest_inputs(db, items, build=False, **labels)
        assert not report.errors, [o.reason for o in report.errors]
        assert len(report.added) == len(files[key])
    build_models(db).raise_for_failure()
    return db


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    return build_planted(tmp_path_factory.mktemp("planted") / "planted.duckdb")


@pytest.fixture(scope="module")
def anonymized_outputs(planted: Path, tmp_path_factory) -> dict[str, bytes]:
    """`kneepoint report` and `kneepoint export` with --anonymize --redact, as a user runs them."""
    out = tmp_path_factory.mktemp("anon-out")
    common = ["--db", str(planted), "--anonymize", "--redact", REDACTED]
    assert main(["report", *common, "--out", str(out / "report.html")]) == 0
    assert main(["export", *common, "--out", str(out / "bundle.zip")]) == 0
    return {"report": (out / "report.html").read_bytes(), "bundle": (out / "bundle.zip").read_bytes()}


def _leaks(data: bytes) -> list[str]:
    lower = data.lower()
    return [s for s in SECRETS if s.encode() in lower]


# -- text values --------------------------------------------------------------------------------------------


def test_paths_addresses_and_drive_letters_become_pseudonyms():
    a = Anonymizer()
    # DiskSpd's "Command Line:" (sample_data/diskspd/synthetic-ss-stripe-sweep.txt line 6) with a user's folder.
    line = "diskspd.exe -c8G -d60 -b8K -o1 -L C:\\Users\\bob smith\\bench\\testfile.dat"
    assert a.scrub(line) == "diskspd.exe -c8G -d60 -b8K -o1 -L Path 1"
    assert a.scrub("\\\\fs01\\share\\t.dat") == "Path 2"
    assert a.scrub("--filename=/home/alice/t.dat") == "--filename=Path 3"
    # CrystalDiskMark's Test line keeps everything but the drive letter.
    assert a.scrub("1 GiB (x5) [D: 38% (354/931GiB)]") == "1 GiB (x5) [Drive 1 38% (354/931GiB)]"
    assert a.scrub("from 10.1.2.3 and 2001:db8::7, fe80::1ff:fe23:4567:890a") == "from IP 1 and IP 2, IP 3"
    assert a.scrub("mail ops@example.com or see https://intranet/x") == "mail Email 1 or see URL 1"
    # The same original gets the same pseudonym again.
    assert a.scrub("again C:\\Users\\bob smith\\bench\\testfile.dat") == "again Path 1"


def test_measurement_text_is_kept():
    a = Anonymizer()
    kept = [
        "MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]",
        "software cache disabled; using random I/O (alignment: 8192)",
        "mean/min/max: lat_ns; percentiles: clat_ns",
        "2026/01/05 09:00:00 UTC",
        "Windows 11 Professional [10.0 Build 22631] (x64)",
        "(R) 4096B-4096B, (W) 4096B-4096B",
        "fio-3.36",
    ]
    assert [a.scrub(t) for t in kept] == kept


def test_known_names_are_replaced_wherever_they_appear():
    a = Anonymizer(marked=["Project Falcon"])
    assert a.literal("host", "SQL01") == "Host 1"
    a.learn("C:\\Users\\jdoe\\bench.dat")
    assert a.scrub("run by jdoe on sql01 for project falcon") == "run by User 1 on Host 1 for Label 1"
    # Whole words only: 'sql01x' is another name.
    assert a.scrub("sql01x") == "sql01x"
    assert a.metadata_value("system.computer_name", "SQL01") == "Host 1"
    assert a.metadata_value("Comment", "tested after the firmware update") == "Comment 1"


# -- a planted warehouse ------------------------------------------------------------------------------------


def test_planted_strings_are_in_the_source(planted: Path):
    """The test is only worth something if the secrets really are in the warehouse it anonymizes."""
    con = duckdb.connect(str(planted), read_only=True)
    try:
        meta = " ".join(v for (v,) in con.execute("SELECT value FROM raw_run_metadata").fetchall() if v)
        targets = {t for (t,) in con.execute("SELECT DISTINCT target FROM raw_io_records").fetchall()}
        names = [n for (n,) in con.execute("SELECT name FROM raw_files").fetchall()]
        tables = {t for (t,) in con.execute("SELECT DISTINCT table_name FROM raw_query_io").fetchall()}
    finally:
        con.close()
    assert "KPSECRETPC7" in meta  # DiskSpd "computer name:" and the CrystalDiskMark OS line
    assert "C:\\Users\\kpbobsmith\\kpsecretdir\\testfile.dat" in meta  # DiskSpd command line
    assert "\\\\kpfileserver9\\kpshare\\kpsecretdir\\test.dat" in meta  # SQLIO command line
    assert "/home/kpbobsmith/kpsecretdir/sweep.dat" in meta  # fio filename option
    assert "10.20.30.40" in meta and "fe80::1ff:fe23:4567:890a" in meta  # CrystalDiskMark Comment
    assert f"{REDACTED}-randread-4k-qd1" in meta  # fio job name
    assert "C:\\Users\\kpbobsmith\\kpsecretdir\\testfile.dat" in targets and "D:" in targets
    assert any("kp-xss-file" in n for n in names)
    assert f"{REDACTED}_OrderLinesArchive" in tables


def test_anonymized_report_carries_no_secret(anonymized_outputs):
    html = anonymized_outputs["report"]
    assert _leaks(html) == []
    assert b'id="anonymized"' in html
    assert b"Disk A @ Host 1" in html and b"Disk B @ Host 2" in html
    # Outside the style sheet and plotly.js (the first plain <script>), no drive letter is left: "D:" became
    # "Drive 1" (figure JSON included).
    text = re.sub(r"<style>.*?</style>", "", html.decode("utf-8"), flags=re.S)
    start = text.index("<script>")
    outside = text[:start] + text[text.index("</script>", start) :]
    assert DRIVE_LETTER.findall(re.sub(r"<[^>]+>", " ", outside)) == []
    assert "Drive 1" in outside


def test_anonymized_bundle_carries_no_secret(anonymized_outputs):
    zf = zipfile.ZipFile(io.BytesIO(anonymized_outputs["bundle"]))
    members = zf.namelist()
    assert "raw/raw_file_contents.parquet" not in members  # the original bytes are not shared
    manifest = json.loads(zf.read("manifest.json"))
    assert manifest["anonymized"] is True and manifest["original_bytes_included"] is False
    for member in members:
        data = zf.read(member)  # decompressed
        assert _leaks(data) == [], member
        if member.endswith(".parquet"):
            table = pq.read_table(io.BytesIO(data))
            values = json.dumps(table.to_pylist(), default=str, ensure_ascii=False)
            assert _leaks(values.encode()) == [], member
            texts = [v for row in table.to_pylist() for v in row.values() if isinstance(v, str)]
            assert [t for t in texts if DRIVE_LETTER.search(t)] == [], member


def test_anonymized_bundle_keeps_the_measurements(planted: Path, anonymized_outputs):
    """Pseudonyms replace names, not figures: every run's IOPS and load are the source's."""
    zf = zipfile.ZipFile(io.BytesIO(anonymized_outputs["bundle"]))
    shared = pq.read_table(io.BytesIO(zf.read("marts/fct_io_results.parquet")))
    con = duckdb.connect(str(planted), read_only=True)
    try:
        source = Counter(con.execute("SELECT iops, outstanding_io, record_index FROM fct_io_results").fetchall())
    finally:
        con.close()
    columns = [shared[c].to_pylist() for c in ("iops", "outstanding_io", "record_index")]
    assert Counter(zip(*columns, strict=True)) == source
    disks = set(pq.read_table(io.BytesIO(zf.read("marts/dim_disks.parquet")))["disk_key"].to_pylist())
    assert disks == {"Disk A @ Host 1", "Disk B @ Host 2"}


def test_pseudonyms_are_stable_within_a_share(planted: Path):
    """The computer name DiskSpd printed and the host label are one host: the same pseudonym everywhere."""
    with shared_warehouse(planted, anonymize=True, marked=[REDACTED]) as share:
        con = duckdb.connect(str(share.db), read_only=True)
        try:
            names = dict(
                con.execute(
                    "SELECT key, any_value(value) FROM raw_run_metadata WHERE key IN "
                    "('system.computer_name', 'command_line') GROUP BY key"
                ).fetchall()
            )
            hosts = {h for (h,) in con.execute("SELECT DISTINCT host FROM raw_files").fetchall()}
            contents = con.execute("SELECT count(*) FROM raw_file_contents").fetchone()[0]
        finally:
            con.close()
    assert share.disk_keys == ["Disk A @ Host 1", "Disk B @ Host 2"]
    assert hosts == {"Host 1", "Host 2"}
    assert names["system.computer_name"] == "Host 1"
    # DiskSpd's command line (first run): the target path is one pseudonym, the options stay.
    assert re.fullmatch(r"diskspd\.exe -c8G -d60 -W5 -b8K -t1 -o1 -r -w0 -Sh -L Path \d+", names["command_line"])
    assert contents == 0


def test_host_and_user_keys_come_from_the_registry_and_generic_names():
    from kneepoint.app.sharing.anonymize import GENERIC_HOST_KEYS, GENERIC_USER_KEYS, Anonymizer, host_keys, user_keys
    from kneepoint.ingest import formats

    assert formats.host_keys() <= host_keys() and host_keys() >= GENERIC_HOST_KEYS
    assert formats.user_keys() <= user_keys() and user_keys() >= GENERIC_USER_KEYS
    a = Anonymizer()
    # a key no format declares is still replaced, by its generic name
    assert a.metadata_value("system.machine", "kpbox9") == "Host 1"
    assert a.metadata_value("run.login", "kpbob") == "User 1"
    assert a.metadata_value("system.computer_name", "KPBOX10") == "Host 2"
