"""iostat -x: columns by name in every layout, the first report since boot, -t intervals, units, JSON, damage."""

from __future__ import annotations

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import iostat
from kneepoint.ingest.synth import iostat as writer

HEADER = "Linux 5.15.0-91-generic (db01) \t11/27/2026 \t_x86_64_\t(8 CPU)"
V12 = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await "
    "wareq-sz  aqu-sz  %util"
)


def v12(device: str, r: float, rkb: float, r_await: float, w: float, wkb: float, w_await: float, aqu: float,
        util: float) -> str:  # fmt: skip
    return f"{device:<12} {r:8.2f} {rkb:9.2f} 0.00 0.00 {r_await:7.2f} 8.00 {w:7.2f} {wkb:9.2f} 0.00 0.00 " \
        f"{w_await:7.2f} 16.00 {aqu:7.2f} {util:6.2f}"  # fmt: skip


def test_columns_are_mapped_by_name_and_kb_is_1024_bytes():
    text = "\n".join([HEADER, "", V12, v12("nvme0n1", 100, 800, 0.5, 50, 400, 1.5, 0.12, 7.5)])
    (rec,) = iostat.parse(text)
    assert (rec.device, rec.host, rec.device_kind, rec.tool) == ("nvme0n1", "db01", "block_device", "iostat")
    assert (rec.reads_per_s, rec.writes_per_s) == (100.0, 50.0)
    assert (rec.read_bytes_per_s, rec.write_bytes_per_s) == (800 * 1024.0, 400 * 1024.0)
    assert (rec.read_latency_ms, rec.write_latency_ms, rec.queue_length, rec.utilization_pct) == (0.5, 1.5, 0.12, 7.5)
    # the first report of a run is the average since boot
    assert rec.since_boot and rec.interval_s is None and rec.interval_start is None


def test_the_same_figures_read_alike_in_a_reordered_and_a_pretty_layout():
    old = "Device: rrqm/s wrqm/s r/s w/s rMB/s wMB/s avgrq-sz avgqu-sz await r_await w_await svctm %util\n" \
        "sdb 0.00 1.00 10.00 20.00 1.00 2.00 8.0 0.40 3.00 2.00 3.50 0.1 55.00\n"  # fmt: skip
    pretty = "r/s w/s rMB/s wMB/s r_await w_await aqu-sz %util Device\n10.00 20.00 1.00 2.00 2.00 3.50 0.40 55.00 sdb\n"
    a, b = iostat.parse(old)[0], iostat.parse(pretty)[0]
    for rec in (a, b):
        assert rec.device == "sdb"
        assert (rec.read_bytes_per_s, rec.write_bytes_per_s) == (1048576.0, 2097152.0)
        assert (rec.read_latency_ms, rec.write_latency_ms, rec.queue_length) == (2.0, 3.5, 0.4)


def test_sectors_and_human_units():
    sectors = "Device: r/s w/s rsec/s wsec/s await %util\nsda 2.00 4.00 16.00 64.00 1.00 3.00\n"
    (rec,) = iostat.parse(sectors)
    assert (rec.read_bytes_per_s, rec.write_bytes_per_s) == (16 * 512.0, 64 * 512.0)
    human = (
        "r/s rkB/s r_await w/s wkB/s w_await aqu-sz %util Device\n21.5 898.8k 0.18 272.1 2.4M 1.69 0.47 0.9% nvme0n1\n"
    )
    (rec,) = iostat.parse(human)
    assert rec.read_bytes_per_s == pytest.approx(898.8 * 1024)
    assert rec.write_bytes_per_s == pytest.approx(2.4 * 1024**2)
    assert rec.utilization_pct == 0.9


def test_await_alone_is_taken_for_each_direction_that_did_io():
    text = "Device: r/s w/s rkB/s wkB/s avgqu-sz await svctm %util\nsda 0.00 10.00 0.00 80.00 0.10 4.00 1.0 5.0\n"
    (rec,) = iostat.parse(text)
    assert (rec.read_latency_ms, rec.write_latency_ms) == (None, 4.0)


def test_t_timestamps_give_each_report_the_interval_since_the_previous_one():
    lines = ["$ iostat -xt 5 3", HEADER, ""]
    for k, stamp in enumerate(["11/27/2026 02:15:01 PM", "11/27/2026 02:15:06 PM", "11/27/2026 02:15:16 PM"]):
        lines += [stamp, V12, v12("sda", 10 + k, 80, 1, 5, 40, 2, 0.1, 3), ""]
    recs = iostat.parse("\n".join(lines))
    assert [r.since_boot for r in recs] == [True, False, False]
    assert [r.interval_start for r in recs] == [None, "2026-11-27T14:15:01", "2026-11-27T14:15:06"]
    assert [r.interval_s for r in recs] == [None, 5.0, 10.0]  # the timestamps win over the command's 5
    assert [r.interval_index for r in recs] == [0, 1, 2]


def test_y_on_the_command_line_means_no_since_boot_report():
    lines = ["# S_TIME_FORMAT=ISO iostat -xty 10", HEADER, ""]
    for stamp in ["2026-11-27T14:15:10+0100", "2026-11-27T14:15:20+0100"]:
        lines += [stamp, V12, v12("sda", 10, 80, 1, 5, 40, 2, 0.1, 3), ""]
    first, second = iostat.parse("\n".join(lines))
    assert not first.since_boot and not second.since_boot
    assert (first.interval_start, first.interval_s) == ("2026-11-27T14:15:00+01:00", 10.0)
    assert (second.interval_start, second.interval_s) == ("2026-11-27T14:15:10+01:00", 10.0)


def test_without_t_the_interval_comes_from_the_command_line_or_stays_unknown():
    body = [HEADER, "", V12, v12("sda", 1, 8, 1, 1, 8, 1, 0, 1), "", V12, v12("sda", 2, 16, 1, 1, 8, 1, 0, 1)]
    with_command = iostat.parse("\n".join(["user@h:~$ iostat -x -d 2 2 | tee out", *body]))
    assert [(r.since_boot, r.interval_s, r.interval_start) for r in with_command] == [(True, None, None),
                                                                                      (False, 2.0, None)]  # fmt: skip
    assert [r.interval_s for r in iostat.parse("\n".join(body))] == [None, None]


@pytest.mark.parametrize(
    ("stamp", "iso"),
    [
        ("11/27/26 14:15:01", "2026-11-27T14:15:01"),  # C locale
        ("27/11/2026 14:15:01", "2026-11-27T14:15:01"),  # en_GB: a first field above 12 says day first
        ("27.11.2026 14:15:01", "2026-11-27T14:15:01"),  # de_DE
        ("2026年11月27日 14時15分01秒", "2026-11-27T14:15:01"),  # ja_JP
        ("2026-11-27T14:15:01+0100", "2026-11-27T14:15:01+01:00"),  # S_TIME_FORMAT=ISO
    ],
)
def test_timestamps_in_locales(stamp: str, iso: str):
    later = stamp.replace("14", "15", 1) if "T" not in stamp else stamp.replace("T14", "T15")
    lines = ["iostat -xt 5", HEADER, ""]
    for t in (stamp, later):
        lines += [t, V12, v12("sda", 1, 8, 1, 1, 8, 1, 0, 1), ""]
    first, second = iostat.parse("\n".join(lines))
    assert first.since_boot and (second.interval_start, second.interval_s) == (iso, 3600.0)


def test_decimal_commas_colours_and_mail_quotes():
    text = "> > Device r/s w/s rkB/s wkB/s r_await w_await aqu-sz %util\n" \
        "> > \x1b[1;32msda\x1b[0m 12,50 3,00 100,00 24,00 0,40 1,20 0,01 2,50\n"  # fmt: skip
    (rec,) = iostat.parse(text)
    assert (rec.device, rec.reads_per_s, rec.read_bytes_per_s, rec.utilization_pct) == ("sda", 12.5, 102400.0, 2.5)


def test_sysstat_10_human_name_alone_on_its_line():
    text = "Device: rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await svctm %util\n" \
        "VolGroup00-LogVol00\n    0.00 0.00 1.00 2.00 4.00 8.00 8.00 0.01 1.50 0.50 0.20\n"  # fmt: skip
    (rec,) = iostat.parse(text)
    assert (rec.device, rec.source_line, rec.reads_per_s) == ("VolGroup00-LogVol00", 3, 1.0)


def test_damaged_lines_cost_only_themselves():
    text = "\n".join([HEADER, "", V12, v12("sda", 1, 8, 1, 1, 8, 1, 0, 1),
                      "sdb 1.00 8.00 0.00 0.00 1.00 8.00 1.00 8.00",  # lost columns
                      v12("sdc", 1, 8, 1, 1, 8, 1, 0, 1)[:40] + "…",
                      v12("sdd", 1, 8, 1, 1, 8, 1, 0, 1).replace("8.00", "8.x0", 1),
                      v12("sde", 1, 8, 1, 1, 8, 1, 0, 1)])  # fmt: skip
    recs = iostat.parse(text)
    assert [r.device for r in recs] == ["sda", "sde"]
    assert [w.split(":")[0] for w in recs.warnings] == ["line 5", "line 6", "line 7"]
    assert "damaged device line (8 figures, the header has 14)" in recs.warnings[0]
    assert "cut short" in recs.warnings[1]


def test_cpu_figures_and_prose_end_a_block_without_warnings():
    text = "\n".join([V12, v12("sda", 1, 8, 1, 1, 8, 1, 0, 1), "avg-cpu:  %user   %nice", "  1.0 2.0 3.0 4.0",
                      "The columns that matter:", "| r/s | reads |"])  # fmt: skip
    recs = iostat.parse(text)
    assert len(recs) == 1 and recs.warnings == []


def test_what_is_not_an_extended_report_is_refused_with_the_reason():
    with pytest.raises(ParseError, match="without -x") as exc:
        iostat.parse("x\n" + HEADER + "\n\nDevice tps kB_read/s kB_wrtn/s kB_read kB_wrtn\nsda 1.0 2.0 3.0 4 5\n")
    assert exc.value.line == 4
    with pytest.raises(ParseError, match="no readable device line") as exc:
        iostat.parse(HEADER + "\n\n" + V12 + "\nsda 1.0 2.0\n")
    assert exc.value.line == 3
    with pytest.raises(ParseError, match="no iostat -x device report") as exc:
        iostat.parse("\n\nhello\n")
    assert exc.value.line == 3


def test_json_documents_one_run_each_and_the_timestamp_of_each_statistics_entry():
    recs = writer.observed(("sda",), reports=3, interval_s=10)
    text = writer.write(recs, output="json", layout="sysstat12")
    got = iostat.parse(text)
    assert [r.since_boot for r in got] == [True, False, False]
    assert [r.interval_s for r in got] == [None, 10.0, 10.0]
    assert got[1].interval_start == "2026-11-27T14:15:01"
    assert got[0].host == "db01" and got[0].tool_version == "12.5.2"
    lines = text.split("\n")
    assert all('"disk_device": "sda"' in lines[r.source_line - 1] for r in got)
    # two documents, each a run of its own (`iostat -o JSON` once per time point): each is since boot
    doc = text[text.index('{"sysstat"') :]
    both = iostat.parse("TIMEPOINT 1\n" + doc + "TIMEPOINT 2\n" + doc)
    assert [r.since_boot for r in both] == [True, False, False, True, False, False]


def test_a_whole_json_document_is_read_without_detection_and_a_cut_one_warns():
    text = writer.write(writer.observed(("sda",), reports=2), output="json", version=False)
    doc = text[text.index("{") :]
    assert iostat.parse_document(doc) == iostat.parse(doc)
    assert iostat.parse_document("$ x\n" + doc) is None
    assert formats.parse_bytes(doc.encode(), "iostat.json").format == "iostat"
    cut = doc[: len(doc) // 2]
    assert iostat.parse_document(cut) is None
    with pytest.raises(ParseError, match="no iostat -x device report"):
        iostat.parse(cut)


@pytest.mark.parametrize("layout", list(writer.LAYOUTS))
@pytest.mark.parametrize("options", [{}, {"timestamps": False}, {"iso": True, "megabytes": True}, {"output": "json"}])
def test_the_writer_round_trips(layout: str, options: dict):
    recs = writer.observed(("nvme0n1", "sda", "dm-0"), reports=5, interval_s=5, seed=2)
    parsed = formats.parse_bytes(writer.write(recs, layout=layout, **options).encode(), "iostat.txt")
    assert parsed.format == "iostat" and parsed.warnings == []
    got = parsed.records
    assert [(r.device, r.interval_index, r.since_boot) for r in got] == [
        (r.device, r.interval_index, r.since_boot) for r in recs
    ]
    one_await = layout == "sysstat9" and options.get("output") != "json"
    for a, b in zip(got, recs, strict=True):
        assert (a.reads_per_s, a.writes_per_s, a.queue_length, a.utilization_pct) == (
            b.reads_per_s, b.writes_per_s, b.queue_length, b.utilization_pct)  # fmt: skip
        tolerance = 0.006 * 1048576 if options.get("megabytes") else 0.0
        assert a.read_bytes_per_s == pytest.approx(b.read_bytes_per_s, abs=tolerance)
        assert a.write_bytes_per_s == pytest.approx(b.write_bytes_per_s, abs=tolerance)
        if not one_await:
            assert (a.read_latency_ms, a.write_latency_ms) == (b.read_latency_ms, b.write_latency_ms)
        assert a.interval_s == (None if b.since_boot else 5.0)


def test_detection_claims_iostat_text_and_nothing_of_a_fio_disk_stats_block():
    text = writer.write(writer.observed(("sda",), reports=2))
    assert iostat.detect(text) >= 0.9
    fio = "Disk stats (read/write):\n  nvme0n1: ios=748682/0, merge=0/0, ticks=56545/0, util=92.00%\n"
    assert iostat.detect(fio) == 0.0


def test_a_timestamp_with_an_offset_after_one_without_gives_no_interval():
    lines = ["iostat -xt 5", HEADER, "", "11/27/2026 02:15:01 PM", V12, v12("sda", 1, 8, 1, 1, 8, 1, 0, 1), "",
             "2026-11-27T14:15:06+0100", V12, v12("sda", 1, 8, 1, 1, 8, 1, 0, 1)]  # fmt: skip
    second = iostat.parse("\n".join(lines))[1]
    assert (second.interval_start, second.interval_s) == (None, None)
