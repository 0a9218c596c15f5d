"""CrystalDiskMark / KDiskMark as users paste them: the version number apart from edition and architecture, several
drives in one file (with or without headers, prose between), KDiskMark's target, and damaged lines that cost
nothing but themselves (cut short, wrapped, numbers with thousands separators)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.records import IoRecord

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crystaldiskmark"
HEADER = "CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo"
SEQ = "  SEQ    1MiB (Q=  8, T= 1):"


def read(text: str) -> formats.ParsedFile:
    return formats.parse_bytes(text.encode("utf-8"), "pasted.txt")


def records(text: str) -> list[IoRecord]:
    return read(text).records  # type: ignore[return-value]


@pytest.mark.parametrize(
    "header, version, edition, architecture",
    [
        ("CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo", "8.0.4", None, "x64"),
        ("CrystalDiskMark 8.0.4 Shizuku Edition x64 (C) 2007-2021 hiyohiyo", "8.0.4", "Shizuku Edition", "x64"),
        ("CrystalDiskMark 8.0.0 x64 (UWP) (C) 2007-2020 hiyohiyo", "8.0.0", "UWP", "x64"),
        ("CrystalDiskMark 6.0.2 x86 (C) 2007-2018 hiyohiyo", "6.0.2", None, "x86"),
        ("CrystalDiskMark 9.0.1 ARM64 (C) 2007-2025 hiyohiyo", "9.0.1", None, "ARM64"),
    ],
)
def test_version_is_the_number_edition_and_architecture_are_metadata(header, version, edition, architecture):
    (rec,) = records(f"{header}\n[Read]\n{SEQ}  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>\n")
    assert rec.tool_version == version
    assert rec.metadata.get("edition") == edition and rec.metadata.get("architecture") == architecture


def test_two_drives_with_prose_between_each_with_its_target():
    parsed = formats.parse_bytes((FIXTURES / "pasted-two-drives-prose-wrapped.txt").read_bytes(), "two.txt")
    recs = parsed.records
    assert [len([r for r in recs if r.target == t]) for t in ("C:", "E:")] == [8, 8]
    assert {r.run_index for r in recs} == set(range(16))
    first, second = recs[0], recs[8]
    assert (first.tool_version, first.metadata["edition"]) == ("8.0.4", "Shizuku Edition")
    assert second.tool_version == "8.x-9.x" and "tool_version" in second.inferred  # pasted without its header
    # Grouped numbers read right, the wrapped line joined, the cut line keeps its MB/s and says so.
    assert (first.throughput, first.iops) == (3512.331, 3349.6)
    assert recs[4].throughput == 3011.482
    assert (recs[2].source_line, recs[2].iops, recs[2].latency_avg) == (13, 152372.6, 209.71)
    assert (recs[3].throughput, recs[3].latency_avg, "iops" in recs[3].inferred) == (58.207, None, True)
    assert parsed.warnings == ["line 15: cut short test line: '[  14210.7 IO…' not read"]


def test_drives_one_after_the_other_with_headers_and_footers():
    one = f"{HEADER}\n[Read]\n{SEQ}  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>\n\n"
    one += "   Test: 1 GiB (x5) [C: 4% (79/1862GiB)]\n"
    two = one.replace("[C:", "[D:").replace("7427.749", "550.100")
    recs = records(one + "\nsome words in between\n\n" + two)
    assert [(r.target, r.throughput) for r in recs] == [("C:", 7427.749), ("D:", 550.1)]


def test_kdiskmark_target_line_and_mount_point():
    kdm = (
        "                     KDiskMark (3.1.4): https://github.com/JonMagon/KDiskMark\n"
        "[Read]\nSequential   1 MiB (Q=  8, T= 1):   542.516 MB/s [    529.8 IOPS] < 15065.29 us>\n\n"
        "Profile: Default\n   Test: 1 GiB (x5) [Measure: 5 sec / Interval: 5 sec]\n"
    )
    (rec,) = records(kdm + " Device: /dev/nvme0n1 (Samsung SSD 980 PRO 1TB)\n")
    assert (rec.tool, rec.target) == ("kdiskmark", "/dev/nvme0n1 (Samsung SSD 980 PRO 1TB)")
    (rec,) = records(kdm.replace("(x5) [", "(x5) [/home: 45% (210/465GiB)] ["))
    assert rec.target == "/home"


@pytest.mark.parametrize(
    "figures, throughput, iops",
    [
        ("1,026.872 MB/s [ 1,026,872.5 IOPS] <   987.81 us>", 1026.872, 1026872.5),
        ("1.026,872 MB/s [ 1.026.872,5 IOPS] <   987.81 us>", 1026.872, 1026872.5),
        ("1 026.872 MB/s [ 1 026 872.5 IOPS] <   987.81 us>", 1026.872, 1026872.5),
        ("1\u00a0026.872 MB/s [ 1\u00a0026\u00a0872.5 IOPS] <   987.81 us>", 1026.872, 1026872.5),
        ("1\u202f026.872 MB/s [ 1\u202f026\u202f872.5 IOPS] <   987.81 us>", 1026.872, 1026872.5),
    ],
)
def test_thousands_separators(figures, throughput, iops):
    parsed = read(f"{HEADER}\n[Read]\n{SEQ}  {figures}\n")
    (rec,) = parsed.records
    assert (rec.throughput, rec.iops, rec.latency_avg) == (throughput, iops, 987.81)
    assert parsed.warnings == []


def test_label_wrapped_before_its_parameters_is_joined():
    wrapped = "  SEQ    1MiB\n(Q=  8, T= 1):  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>"
    (rec,) = records(f"{HEADER}\n[Read]\n{wrapped}\n")
    assert (rec.queue_depth, rec.iops, rec.source_line) == (8, 7083.7, 3)


def test_damaged_line_is_a_warning_and_the_rest_is_kept():
    text = (
        f"{HEADER}\n[Read]\n{SEQ}  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>\n"
        "  RND    4KiB (Q= 32, T=16):  40..\n"
        "  RND    4KiB (Q=  1, T= 1):    58.207 MB/s [  14210.7 IOPS] <    70.21 us>\n"
    )
    parsed = read(text)
    assert [r.source_line for r in parsed.records] == [3, 5]
    assert parsed.warnings == ["line 4: cut short test line, no MB/s figure to read: skipped"]


def test_a_file_of_damaged_lines_only_is_refused_at_its_first_line():
    with pytest.raises(ParseError) as err:
        read(f"{HEADER}\n[Read]\n  SEQ    1MiB (Q=  8, T= 1):  74…\n")
    assert err.value.line == 1 and "without any test result" in err.value.reason


def test_old_layout_damaged_line_is_a_warning():
    text = (
        "CrystalDiskMark 3.0.1 x64 (C) 2007-2010 hiyohiyo\n"
        "           Sequential Read :   213.427 MB/s\n"
        "          Sequential Write :   20…\n"
        "  Random Read 4KB (QD=32) :  1,026.5 MB/s [ 262,784.0 IOPS]\n"
    )
    parsed = read(text)
    assert [(r.source_line, r.throughput) for r in parsed.records] == [(2, 213.427), (4, 1026.5)]
    assert parsed.records[1].iops == 262784.0
    assert parsed.warnings == ["line 3: cut short test line, no MB/s figure to read: skipped"]
