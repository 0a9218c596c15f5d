"""fio normal text output: every corpus file run by run (fio 2.2.10, 3.16, 3.19), the real sweep in
sample_data/fio-text, real captures of clones without group_reporting and of a synchronous engine at
iodepth 8 (fio 3.33 on the kneepoint VM), pastes without header, junk, encodings and the writer round trip."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import fio_json, fio_text
from kneepoint.ingest.synth import fio_json as json_writer
from kneepoint.ingest.synth import fio_text as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE, corpus_dir, corpus_file, corpus_names

MIB = 1024 * 1024
SWEEP = SAMPLE / "fio-text" / "randwrite-4k-sweep.txt"

# Real output, fio 3.33 on the kneepoint VM: --rw=randrw --bs=4k --numjobs=2 --iodepth=4 --runtime=2,
# libaio, direct, no group_reporting (so one block per clone).
CLONES = """\
randrw-clones: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=4
...
fio-3.33
Starting 2 processes
randrw-clones: Laying out IO file (1 file / 256MiB)

randrw-clones: (groupid=0, jobs=1): err= 0: pid=17899: Sat Nov 21 00:57:22 2026
  read: IOPS=26.9k, BW=105MiB/s (110MB/s)(210MiB/2001msec)
    slat (nsec): min=880, max=2402.4k, avg=2436.68, stdev=18330.09
    clat (nsec): min=230, max=17008k, avg=62033.40, stdev=210333.88
     lat (usec): min=12, max=17009, avg=64.47, stdev=211.11
    clat percentiles (usec):
     |  1.00th=[   25],  5.00th=[   33], 10.00th=[   37], 20.00th=[   41],
     | 30.00th=[   44], 40.00th=[   47], 50.00th=[   50], 60.00th=[   52],
     | 70.00th=[   55], 80.00th=[   58], 90.00th=[   63], 95.00th=[   71],
     | 99.00th=[  314], 99.50th=[  775], 99.90th=[ 2245], 99.95th=[ 3785],
     | 99.99th=[ 6980]
   bw (  KiB/s): min=104360, max=114576, per=49.97%, avg=107893.33, stdev=5790.54, samples=3
   iops        : min=26090, max=28644, avg=26973.33, stdev=1447.64, samples=3
  write: IOPS=26.7k, BW=104MiB/s (110MB/s)(209MiB/2001msec); 0 zone resets
    slat (nsec): min=1070, max=1811.2k, avg=2636.55, stdev=12822.84
    clat (nsec): min=240, max=6990.8k, avg=81654.68, stdev=225957.34
     lat (usec): min=12, max=6992, avg=84.29, stdev=226.47
    clat percentiles (usec):
     |  1.00th=[   27],  5.00th=[   39], 10.00th=[   44], 20.00th=[   48],
     | 30.00th=[   51], 40.00th=[   53], 50.00th=[   55], 60.00th=[   57],
     | 70.00th=[   60], 80.00th=[   63], 90.00th=[   71], 95.00th=[   86],
     | 99.00th=[  979], 99.50th=[ 1631], 99.90th=[ 3359], 99.95th=[ 4113],
     | 99.99th=[ 5342]
   bw (  KiB/s): min=102536, max=115384, per=49.66%, avg=107410.67, stdev=6961.97, samples=3
   iops        : min=25634, max=28846, avg=26852.67, stdev=1740.49, samples=3
  lat (nsec)   : 250=0.01%
  lat (usec)   : 2=0.01%, 4=0.01%, 10=0.33%, 20=0.17%, 50=40.48%
  lat (usec)   : 100=55.93%, 250=1.30%, 500=0.61%, 750=0.28%, 1000=0.19%
  lat (msec)   : 2=0.45%, 4=0.19%, 10=0.05%, 20=0.01%
  cpu          : usr=3.40%, sys=14.35%, ctx=47134, majf=0, minf=15
  IO depths    : 1=0.1%, 2=0.1%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=53807,53506,0,0 short=0,0,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=4
randrw-clones: (groupid=0, jobs=1): err= 0: pid=17900: Sat Nov 21 00:57:22 2026
  read: IOPS=27.1k, BW=106MiB/s (111MB/s)(212MiB/2001msec)
    slat (nsec): min=890, max=1242.5k, avg=2313.24, stdev=8787.97
    clat (nsec): min=200, max=17009k, avg=61452.22, stdev=197983.35
     lat (usec): min=12, max=17010, avg=63.77, stdev=198.16
    clat percentiles (usec):
     |  1.00th=[   24],  5.00th=[   31], 10.00th=[   36], 20.00th=[   41],
     | 30.00th=[   44], 40.00th=[   47], 50.00th=[   49], 60.00th=[   52],
     | 70.00th=[   55], 80.00th=[   58], 90.00th=[   63], 95.00th=[   71],
     | 99.00th=[  269], 99.50th=[  685], 99.90th=[ 2769], 99.95th=[ 4424],
     | 99.99th=[ 6521]
   bw (  KiB/s): min=101776, max=114544, per=50.88%, avg=109874.67, stdev=7041.00, samples=3
   iops        : min=25444, max=28636, avg=27468.67, stdev=1760.25, samples=3
  write: IOPS=27.3k, BW=107MiB/s (112MB/s)(214MiB/2001msec); 0 zone resets
    slat (nsec): min=1010, max=938790, avg=2558.76, stdev=8216.08
    clat (nsec): min=200, max=17010k, avg=80139.05, stdev=232542.59
     lat (usec): min=12, max=17013, avg=82.70, stdev=232.74
    clat percentiles (usec):
     |  1.00th=[   27],  5.00th=[   36], 10.00th=[   43], 20.00th=[   48],
     | 30.00th=[   50], 40.00th=[   53], 50.00th=[   55], 60.00th=[   57],
     | 70.00th=[   60], 80.00th=[   63], 90.00th=[   71], 95.00th=[   85],
     | 99.00th=[  996], 99.50th=[ 1565], 99.90th=[ 2966], 99.95th=[ 3752],
     | 99.99th=[ 5276]
   bw (  KiB/s): min=105112, max=114640, per=51.48%, avg=111333.33, stdev=5391.40, samples=3
   iops        : min=26278, max=28660, avg=27833.33, stdev=1347.85, samples=3
  lat (nsec)   : 250=0.01%, 500=0.01%, 750=0.01%
  lat (usec)   : 2=0.01%, 4=0.01%, 10=0.31%, 20=0.19%, 50=41.52%
  lat (usec)   : 100=55.00%, 250=1.31%, 500=0.52%, 750=0.29%, 1000=0.18%
  lat (msec)   : 2=0.42%, 4=0.19%, 10=0.05%, 20=0.01%
  cpu          : usr=1.55%, sys=16.25%, ctx=48896, majf=0, minf=15
  IO depths    : 1=0.1%, 2=0.1%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=54215,54684,0,0 short=0,0,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=4

Run status group 0 (all jobs):
   READ: bw=211MiB/s (221MB/s), 105MiB/s-106MiB/s (110MB/s-111MB/s), io=422MiB (442MB), run=2001-2001msec
  WRITE: bw=211MiB/s (221MB/s), 104MiB/s-107MiB/s (110MB/s-112MB/s), io=423MiB (443MB), run=2001-2001msec

Disk stats (read/write):
  vda: ios=102922/103605, merge=0/150, ticks=4460/4110, in_queue=8621, util=66.63%
"""

# Real output, fio 3.33 on the same VM: --ioengine=psync --iodepth=8 --rw=randread --bs=4k --runtime=1.
PSYNC = """\
psync-qd8: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=8
fio-3.33
Starting 1 process
psync-qd8: Laying out IO file (1 file / 64MiB)
note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1

psync-qd8: (groupid=0, jobs=1): err= 0: pid=18032: Sat Nov 21 00:57:27 2026
  read: IOPS=43.6k, BW=170MiB/s (179MB/s)(171MiB/1001msec)
    clat (usec): min=12, max=16887, avg=22.71, stdev=104.24
     lat (usec): min=12, max=16887, avg=22.72, stdev=104.24
    clat percentiles (usec):
     |  1.00th=[   16],  5.00th=[   16], 10.00th=[   16], 20.00th=[   17],
     | 30.00th=[   17], 40.00th=[   17], 50.00th=[   18], 60.00th=[   18],
     | 70.00th=[   18], 80.00th=[   19], 90.00th=[   20], 95.00th=[   22],
     | 99.00th=[   95], 99.50th=[  338], 99.90th=[ 1172], 99.95th=[ 1352],
     | 99.99th=[ 2278]
   bw (  KiB/s): min=174128, max=174128, per=99.75%, avg=174128.00, stdev= 0.00, samples=1
   iops        : min=43532, max=43532, avg=43532.00, stdev= 0.00, samples=1
  lat (usec)   : 20=92.88%, 50=5.85%, 100=0.29%, 250=0.38%, 500=0.28%
  lat (usec)   : 750=0.14%, 1000=0.06%
  lat (msec)   : 2=0.12%, 4=0.01%, 20=0.01%
  cpu          : usr=1.20%, sys=22.60%, ctx=43671, majf=0, minf=12
  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=43686,0,0,0 short=0,0,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=8

Run status group 0 (all jobs):
   READ: bw=170MiB/s (179MB/s), 170MiB/s-170MiB/s (179MB/s-179MB/s), io=171MiB (179MB), run=1001-1001msec

Disk stats (read/write):
  vda: ios=37504/350, merge=0/119, ticks=620/33, in_queue=688, util=67.92%
"""


def parse(path):
    return formats.parse_bytes(path.read_bytes(), str(path))


def norm(rec):
    return rec.to_normalized()


def close(got, want, rel=1e-9):
    return got == pytest.approx(want, rel=rel)


# -------------------------------------------------------------------------------------- the corpus


def test_fio2_old_format_rw_job():
    parsed = parse(corpus_file("fio", "ceph-2.2.10-normal-text-rw-old-format.txt"))
    assert parsed.format == "fio_text" and parsed.tool_version == "2.2.10"  # l.2
    read, write = parsed.records
    # l.1: rw=rw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32; l.5: (groupid=0, jobs=1)
    for rec in (read, write):
        assert (rec.pattern, rec.operation, rec.block_size_bytes, rec.threads, rec.queue_depth) == (
            "sequential",
            "mixed",
            4096,
            1,
            32,
        )
        assert (rec.run_index, rec.source_line, rec.duration_s, rec.target) == (0, 5, 60.086, None)
        # issued: total=r=8177/w=8200 (l.35): 8177 / 16377 = 49.9 % reads; fio prints no rwmixread
        assert rec.read_pct == 50.0 and rec.inferred == ["read_pct"]
    assert (read.direction, write.direction) == ("read", "write")
    # l.6: read : io=32708KB, bw=557417B/s, iops=136, runt= 60086msec -> IOPS 8177 / 60.086 s
    assert close(read.iops, 8177 / 60.086) and round(read.iops) == 136
    assert norm(read)["throughput_bytes_per_s"] == 557417
    # l.9 lat (msec): min=1, max=452, avg=114.21; l.10-15 clat percentiles (usec): 50th 113152, 95th 201728,
    # 99th 358400, 99.90th 423936
    n = norm(read)
    assert (n["latency_min_ms"], n["latency_max_ms"], n["latency_avg_ms"]) == (1.0, 452.0, 114.21)
    assert [n[f"latency_{k}_ms"] for k in ("p50", "p95", "p99", "p999")] == pytest.approx(
        [113.152, 201.728, 358.4, 423.936]
    )
    # l.17: write: io=32800KB, bw=558985B/s, iops=136; l.20 lat (msec): min=3, max=453, avg=120.56;
    # l.21-26 clat percentiles (msec): 118, 212, 371, 433
    n = norm(write)
    assert close(n["iops"], 8200 / 60.086) and n["throughput_bytes_per_s"] == 558985
    assert (n["latency_min_ms"], n["latency_max_ms"], n["latency_avg_ms"]) == (3.0, 453.0, 120.56)
    assert [n[f"latency_{k}_ms"] for k in ("p50", "p95", "p99", "p999")] == [118.0, 212.0, 371.0, 433.0]
    # the latency distribution covers both directions: kept on neither
    assert read.histogram == [] and write.histogram == []


@pytest.mark.parametrize(
    ("name", "version", "line", "threads", "issued", "runtime_ms", "bw_mib", "lat", "pcts"),
    [
        # l.3 fio-3.19; l.14 (groupid=0, jobs=8); l.15 BW=233MiB/s (2328MiB/10001msec); l.35 total=595942;
        # l.18 lat (usec): min=4, max=11809, avg=133.92; l.21-23 50th 125, 95th 163, 99th 194, 99.90th 2057
        ("m1mac-3.19-normal-text-randread-8jobs-macos.txt", "3.19", 14, 8, 595942, 10001, 233,
         (4, 11809, 133.92), (125, 163, 194, 2057)),
        # l.3 fio-3.16; l.70 (groupid=0, jobs=64); l.71 BW=121MiB/s (1207MiB/10005msec); l.91 total=308929;
        # l.74 lat (usec): min=8, max=208685, avg=2068.06; l.77-79 50th 223, 95th 4359, 99th 4817, 99.90th 53216
        ("m1mac-repo-3.16-normal-text-randread-64jobs-linux.txt", "3.16", 70, 64, 308929, 10005, 121,
         (8, 208685, 2068.06), (223, 4359, 4817, 53216)),
    ],
)  # fmt: skip
def test_fio3_group_reporting_jobs(name, version, line, threads, issued, runtime_ms, bw_mib, lat, pcts):
    parsed = parse(corpus_file("fio", name))
    assert parsed.format == "fio_text" and parsed.tool_version == version
    (rec,) = parsed.records
    # l.1: rw=randread, bs=(R) 4096B-4096B, ..., ioengine=posixaio, iodepth=1, then `...` (numjobs > 1)
    assert (rec.pattern, rec.operation, rec.direction, rec.block_size_bytes) == ("random", "read", "read", 4096)
    assert (rec.threads, rec.queue_depth, rec.source_line, rec.inferred) == (threads, 1, line, [])
    assert rec.metadata["numjobs_gt_1"] == "true" and rec.metadata["ioengine"] == "posixaio"
    assert close(rec.iops, issued * 1000 / runtime_ms)
    assert (rec.throughput, rec.throughput_unit) == (bw_mib, "MiB/s")
    assert norm(rec)["throughput_bytes_per_s"] == bw_mib * MIB
    assert rec.latency_unit == "us" and (rec.latency_min, rec.latency_max, rec.latency_avg) == lat
    assert (rec.latency_p50, rec.latency_p95, rec.latency_p99, rec.latency_p999) == pcts
    assert rec.duration_s == runtime_ms / 1000
    # `lat (nsec/usec/msec)   :` distribution: a share histogram in µs, percent of all I/Os
    assert rec.histogram_kind == "share" and sum(s for _, s in rec.histogram) == pytest.approx(100, abs=0.2)


def test_nsec_clat_beside_usec_lat():
    # m1mac 3.19 l.17-18: clat (nsec): ... max=11807k; lat (usec): max=11809 -> the record uses lat's unit
    (rec,) = parse(corpus_file("fio", "m1mac-3.19-normal-text-randread-8jobs-macos.txt")).records
    assert rec.metadata["latency_basis"] == "mean/min/max: lat; percentiles: clat"
    # l.26-29: lat (nsec) 500=0.01%, 750, 1000; lat (usec) 2 ... 1000; lat (msec) 2=0.19%, 4, 10, 20=0.03%
    assert rec.histogram[0] == (0.5, 0.01) and rec.histogram[-1] == (20000.0, 0.03)


@pytest.mark.parametrize("path", corpus_names("fio", "*.txt"))
def test_detected_from_content(path):
    data = corpus_file("fio", path).read_bytes()
    assert formats.parse_bytes(data, "no-extension").format == "fio_text"
    assert fio_json.detect(data.decode()) < 0.3


def test_detect_does_not_claim_other_tools_or_fio_json():
    for folder in ("sqlio", "diskspd", "crystaldiskmark", "sqlstats"):
        for path in sorted((corpus_dir() / folder).iterdir()):
            text, _ = decode(path.read_bytes())
            assert fio_text.detect(text) < 0.3, path.name
    for path in sorted((corpus_dir() / "fio").glob("*.json")) + sorted((SAMPLE / "fio").glob("*.json")):
        assert fio_text.detect(path.read_text()) < 0.3, path.name
        assert formats.parse_bytes(path.read_bytes(), path.name).format == "fio_json"


def test_normal_and_json_in_one_file_is_read_as_json():
    # --output-format=normal,json writes the same jobs twice (fio 3.33 puts the JSON first): the JSON wins
    disk = DiskModel("d", service_time_ms=0.2)
    recs = sweep(disk, "fio", queue_depths=(1, 4), latency_unit="us", tool_version="3.33")
    text_out, json_out = writer.write(recs), json_writer.write(recs)
    for both in (json_out + text_out, text_out + json_out):
        parsed = formats.parse_bytes(both.encode(), "both.out")
        assert parsed.format == "fio_json" and len(parsed.records) == 2
        with pytest.raises(ParseError, match="normal,json"):
            fio_text.parse(both)
    # text of other jobs next to a JSON document is a run of its own: fio_text still reads it
    other = SWEEP.read_text() + corpus_file("fio", "fioplot-3.34-macos-signal-line-before-json.json").read_text()
    assert len(fio_text.parse(other)) == 14


# ---------------------------------------------------------------------------------- the real sweep

# From sample_data/fio-text/randwrite-4k-sweep.txt: per block (l.12, 35, ..., 347) the issued writes
# (`issued rwts: total=0,N`), the runtime (`(873MiB/3001msec)`), BW in MiB/s and `lat (usec)` avg.
SWEEP_POINTS = [
    # line, threads, qd, issued, runtime_ms, bw MiB/s, lat avg µs
    (12, 1, 1, 223549, 3001, 291, 13.26),
    (35, 1, 2, 271283, 3001, 353, 21.97),
    (57, 1, 4, 576810, 3004, 750, 20.69),
    (80, 1, 8, 377616, 3001, 492, 63.44),
    (102, 1, 16, 676468, 3001, 881, 70.83),
    (125, 1, 32, 882222, 3001, 1148, 108.69),
    (147, 1, 64, 800747, 3001, 1042, 239.69),
    (210, 4, 1, 349064, 3001, 454, 34.19),
    (233, 4, 2, 444385, 3001, 578, 53.84),
    (256, 4, 4, 618496, 3001, 805, 77.51),
    (279, 4, 8, 903080, 3001, 1176, 106.17),
    (302, 4, 16, 719725, 3001, 937, 266.64),
    (324, 4, 32, 849560, 3001, 1106, 452.01),
    (347, 4, 64, 869369, 3001, 1132, 883.4),
]


def test_real_sweep_point_by_point():
    parsed = parse(SWEEP)
    assert parsed.format == "fio_text" and parsed.tool_version == "3.33"
    recs = parsed.records
    assert len(recs) == len(SWEEP_POINTS)
    for i, (rec, (line, threads, qd, issued, runtime_ms, bw, lat_avg)) in enumerate(
        zip(recs, SWEEP_POINTS, strict=True)
    ):
        assert (rec.run_index, rec.source_line, rec.threads, rec.queue_depth) == (i, line, threads, qd)
        assert (rec.pattern, rec.operation, rec.direction, rec.read_pct) == ("random", "write", "write", 0.0)
        assert rec.block_size_bytes == 4096 and rec.inferred == [] and rec.target == "vda"
        assert close(rec.iops, issued * 1000 / runtime_ms)
        assert (rec.throughput, rec.throughput_unit) == (bw, "MiB/s")
        assert rec.latency_unit == "us" and rec.latency_avg == pytest.approx(lat_avg)
        assert rec.histogram_kind == "share" and sum(s for _, s in rec.histogram) == pytest.approx(100, abs=0.2)
    # l.16 lat (usec): min=9, max=1740; l.19-21 50th [9], 99th [13], 99.90th [31]
    first = recs[0]
    assert (first.latency_min, first.latency_max, first.latency_p50, first.latency_p99, first.latency_p999) == (
        9,
        1740,
        9,
        13,
        31,
    )


def test_real_sweep_two_invocations_appended():
    recs = parse(SWEEP).records
    # the second fio run (l.193 on) reuses the job names and group ids: its blocks are not clones of the first
    assert [r.metadata["jobname"] for r in recs[:7]] == [r.metadata["jobname"] for r in recs[7:]]
    assert all("combined_clones" not in r.metadata for r in recs)
    assert {r.metadata["processes"] for r in recs[:7]} == {"7"} and {r.metadata["processes"] for r in recs[7:]} == {
        "28"
    }  # l.9, l.208


# ----------------------------------------------------------------------- clones and capped depth


def test_clones_without_group_reporting_are_combined():
    read, write = fio_text.parse(CLONES)
    for rec in (read, write):
        assert (rec.threads, rec.queue_depth, rec.block_size_bytes, rec.source_line) == (2, 4, 4096, 7)
        assert (rec.pattern, rec.operation) == ("random", "mixed")
        assert rec.metadata["combined_clones"] == "2"
        assert (rec.latency_p50, rec.latency_p99) == (None, None)  # text has no bins to merge
        assert rec.histogram == []  # mixed job
    # issued rwts: total=53807,53506 and 54215,54684 in 2001 ms; BW 105+106 and 104+107 MiB/s
    assert close(read.iops, (53807 + 54215) / 2.001) and close(write.iops, (53506 + 54684) / 2.001)
    assert (read.throughput, write.throughput, read.throughput_unit) == (211, 211, "MiB/s")
    # mean latency weighted by I/O count: lat (usec) avg=64.47 and 63.77 (read), 84.29 and 82.70 (write)
    assert read.latency_avg == pytest.approx((64.47 * 53807 + 63.77 * 54215) / (53807 + 54215))
    assert write.latency_avg == pytest.approx((84.29 * 53506 + 82.70 * 54684) / (53506 + 54684))
    assert (read.latency_min, read.latency_max) == (12, 17010)  # min over clones, max over clones
    # reads: 108022 of 216212 I/Os = 50 %
    assert read.read_pct == 50.0 and "read_pct" in read.inferred


def test_synchronous_engine_caps_queue_depth():
    (rec,) = fio_text.parse(PSYNC)
    assert rec.queue_depth == 1 and "queue_depth" in rec.inferred
    assert rec.metadata["queue_depth_asked"] == "8"  # header iodepth=8, `latency : ... depth=8`
    assert rec.metadata["queue_depth_capped"] == "synchronous engine psync"
    # read: IOPS=43.6k (43686 I/Os in 1001 ms), lat (usec): avg=22.72; no slat line with psync
    assert close(rec.iops, 43686 / 1.001) and rec.latency_avg == 22.72


def test_capped_note_without_engine():
    # pasted from the note on: no header, so no engine; the note still caps the asked depth (8)
    text = PSYNC[PSYNC.index("note:") :]
    (rec,) = fio_text.parse(text)
    assert rec.queue_depth == 1 and rec.metadata["queue_depth_capped"] == "fio note: capped at 1"


def test_io_depths_show_the_cap_when_nothing_else_does():
    text = PSYNC[PSYNC.index("\npsync-qd8: (groupid") :]  # no header, no note
    (rec,) = fio_text.parse(text)
    # IO depths : 1=100.0% under `depth=8`
    assert rec.queue_depth == 1 and rec.metadata["queue_depth_capped"] == "IO depths: 1=100%"


# ----------------------------------------------------------------------------------- pasted output


def test_pasted_without_header():
    text = corpus_file("fio", "m1mac-3.19-normal-text-randread-8jobs-macos.txt").read_text()
    block = text[text.index("random-read-4KB-8Thread: (groupid") :]
    (rec,) = fio_text.parse("$ cat out.txt\n" + block)
    assert (rec.threads, rec.queue_depth, rec.source_line) == (8, 1, 2)
    # no header: pattern from the job name, operation from what it did, bs = 2328 MiB / 595942 I/Os
    assert (rec.pattern, rec.operation, rec.block_size_bytes) == ("random", "read", 4096)
    assert set(rec.inferred) == {"pattern", "operation", "block_size_bytes"}
    assert rec.metadata["queue_depth_from"] == "latency depth line"
    assert close(rec.iops, 595942 / 10.001)


def test_pasted_from_the_direction_line():
    text = corpus_file("fio", "m1mac-repo-3.16-normal-text-randread-64jobs-linux.txt").read_text()
    (rec,) = fio_text.parse(text[text.index("  read: IOPS=") :])
    assert rec.source_line == 1 and rec.threads == 1 and "threads" in rec.inferred
    assert (rec.pattern, rec.operation, rec.block_size_bytes, rec.queue_depth) == ("sequential", "read", 4096, 1)
    assert close(rec.iops, 308929 / 10.005)


def test_block_glued_to_a_progress_line():
    # a terminal capture without the carriage return: `Jobs: ...[eta 00m:00s]name: (groupid=...`
    text = SWEEP.read_text().replace(
        "\nrandwrite-4k-qd1: (groupid=0, jobs=1)",
        "\nJobs: 1 (f=1): [w(1)][100.0%][w=291MiB/s][w=74.5k IOPS][eta 00m:00s]randwrite-4k-qd1: (groupid=0, jobs=1)",
        1,
    )
    recs = fio_text.parse(text)
    assert recs[0].metadata["jobname"] == "randwrite-4k-qd1" and recs[0].queue_depth == 1
    assert "inferred" not in recs[0].metadata and recs[0].inferred == []


def test_junk_between_runs_and_crlf():
    a = corpus_file("fio", "m1mac-3.19-normal-text-randread-8jobs-macos.txt").read_text()
    b = corpus_file("fio", "ceph-2.2.10-normal-text-rw-old-format.txt").read_text()
    text = "user@vm:~$ fio job.fio | tee out.txt\n" + a + "\nuser@vm:~$ # now the ceph run\n" + b + "user@vm:~$ \n"
    data = text.replace("\n", "\r\n").encode("utf-16")
    recs = formats.parse_bytes(data, "runs.txt").records
    assert [(r.run_index, r.tool_version, r.direction) for r in recs] == [
        (0, "3.19", "read"),
        (1, "2.2.10", "read"),
        (1, "2.2.10", "write"),
    ]
    assert recs[0].source_line == 15 and recs[1].source_line == 1 + a.count("\n") + 2 + 5


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16-le", "cp1252"])
def test_encodings(encoding):
    data = SWEEP.read_text().encode(encoding)
    if encoding == "utf-16-le":
        data = b"\xff\xfe" + data
    assert [norm(r) for r in formats.parse_bytes(data, "x.txt").records] == [norm(r) for r in parse(SWEEP).records]


def test_unified_mixed_direction_is_total():
    text = SWEEP.read_text().replace("  write: IOPS=74.5k", "  mixed: IOPS=74.5k", 1)
    rec = fio_text.parse(text)[0]
    assert rec.direction == "total" and close(rec.iops, 223549 / 3.001)


def test_bw_figures_that_disagree_follow_io_over_runtime():
    # fio 3.0's num2str dropped a carry and printed e.g. `BW=11.0MiB/s (12.6MB/s)` for 12.0 MiB/s.
    # Same here on the first sweep block: 873 MiB / 3.001 s = 291 MiB/s, so the 281 is the wrong one.
    text = SWEEP.read_text().replace("BW=291MiB/s (305MB/s)", "BW=281MiB/s (305MB/s)", 1)
    rec = fio_text.parse(text)[0]
    assert (rec.throughput, rec.throughput_unit) == (305, "MB/s")
    assert "disagrees" in rec.metadata["bw_note"]


def test_nothing_recognizable_is_a_parse_error_with_line():
    with pytest.raises(ParseError) as err:
        fio_text.parse("\n\nfio-3.33\nStarting 1 process\nfio: pid=0, err=2/file:filesetup.c:1, error=No such file\n")
    assert err.value.line == 3
    with pytest.raises(ParseError):
        formats.parse_bytes(
            b"randread: (g=0): rw=randread, bs=(R) 4096B-4096B, ioengine=libaio, iodepth=1\n", "x", "fio_text"
        )


# ----------------------------------------------------------------------------------- writer round trip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    service_ms=st.floats(0.02, 10.0),
    threads=st.sampled_from([1, 2, 4]),
    operation=st.sampled_from(["read", "write", "mixed"]),
    pattern=st.sampled_from(["random", "sequential"]),
    bs=st.sampled_from([512, 4096, 65536, 1 << 20]),
    group_reporting=st.booleans(),
)
def test_round_trip(service_ms, threads, operation, pattern, bs, group_reporting):
    disk = DiskModel("d", service_time_ms=service_ms, max_bytes_per_s=2e9)
    recs = sweep(disk, "fio", operation=operation, pattern=pattern, block_size_bytes=bs, threads=(threads,),
                 queue_depths=(1, 16), latency_unit="us", tool_version="3.33", duration_s=30)  # fmt: skip
    text = writer.write(recs, group_reporting=group_reporting)
    back = fio_text.parse(text)
    assert len(back) == len(recs)
    # the scale fio picked for each direction's percentiles: they are rounded up to whole units of it
    scales = [{"nsec": 1e-6, "usec": 1e-3, "msec": 1.0}[u] for u in re.findall(r"clat percentiles \((\w+)\)", text)]
    for i, (a, b) in enumerate(zip(recs, back, strict=True)):
        na, nb = norm(a), norm(b)
        for key in ("run_index", "pattern", "operation", "direction", "block_size_bytes", "threads", "queue_depth"):
            assert na[key] == nb[key], key
        if operation == "mixed":  # text has no rwmixread: the measured share of reads, a whole percent
            reads = [r.iops for r in recs if r.run_index == a.run_index and r.direction == "read"][0]
            total = sum(r.iops for r in recs if r.run_index == a.run_index)
            assert nb["read_pct"] == pytest.approx(100 * reads / total, abs=0.5)
        assert nb["iops"] == pytest.approx(na["iops"], abs=threads / 30 + 1e-9)  # whole I/Os in 30 s
        # BW printed with 4 significant figures
        assert nb["throughput_bytes_per_s"] == pytest.approx(na["throughput_bytes_per_s"], rel=0.006)
        # latency avg printed with 2 decimals, min/max as integers of the unit fio picks
        assert nb["latency_avg_ms"] == pytest.approx(na["latency_avg_ms"], rel=0.001, abs=1e-5)
        assert nb["latency_max_ms"] == pytest.approx(na["latency_max_ms"], rel=0.01, abs=0.001)
        for key in ("p50", "p95", "p99", "p999"):
            if group_reporting or threads == 1:
                # fio rounds up (the writer first rounds to whole ns)
                assert -1e-6 <= nb[f"latency_{key}_ms"] - na[f"latency_{key}_ms"] <= scales[i] + 1e-6
            else:
                assert nb[f"latency_{key}_ms"] is None


def test_writer_matches_real_layout():
    """The writer's text has the real file's shape: same line kinds in the same order."""
    recs = parse(SWEEP).records[:1]
    text = writer.write(recs, disk="vda")
    real = SWEEP.read_text().split("\n")
    mine = text.split("\n")
    assert mine[0] == real[0]  # the header line, byte for byte
    assert mine[1] == real[7] == "fio-3.33"
    assert (mine[2], real[8]) == ("Starting 1 process", "Starting 7 processes")
    assert mine[4].startswith("randwrite-4k-qd1: (groupid=0, jobs=1): err= 0: pid=")
    assert mine[5].startswith("  write: IOPS=74.5k, BW=291MiB/s (305MB/s)(873MiB/3001msec); 0 zone resets")

    def kinds(lines: list[str]) -> list[str]:
        """What each line of a block is, leaving out the lines whose number varies (percentile rows and
        latency distribution rows)."""
        out = []
        for line in lines:
            text = line.strip()
            if text.startswith("|") or (text.startswith("lat (") and "min=" not in text):
                continue
            out.append(text.split(":")[0].split("(")[0].strip())
        return out

    block_end = real.index("     latency   : target=0, window=0, percentile=100.00%, depth=1")
    assert kinds(mine[4 : mine.index(real[block_end]) + 1]) == kinds(real[11 : block_end + 1])


def test_writer_json_and_text_agree():
    disk = DiskModel("d", service_time_ms=0.3)
    recs = sweep(disk, "fio", operation="mixed", threads=(2,), queue_depths=(4,), latency_unit="us")
    from_text = fio_text.parse(writer.write(recs))
    from_json = fio_json.parse(json_writer.write(recs))
    for t, j in zip(from_text, from_json, strict=True):
        assert t.iops == pytest.approx(j.iops)
        assert norm(t)["throughput_bytes_per_s"] == pytest.approx(norm(j)["throughput_bytes_per_s"], rel=0.006)


def test_writer_prints_the_capped_note_for_sync_engines():
    disk = DiskModel("d", service_time_ms=0.3)
    recs = sweep(disk, "fio", queue_depths=(8,), latency_unit="us")
    text = writer.write(recs, ioengine="psync")
    assert "queue depth will be capped at 1" in text
    (rec,) = fio_text.parse(text)
    assert rec.queue_depth == 1 and rec.metadata["queue_depth_asked"] == "8"


def test_a_job_block_pasted_among_the_group_summaries_is_read():
    sweep_text = (SAMPLE / "fio-text" / "randwrite-4k-sweep.txt").read_text()
    first = sweep_text.index("randwrite-4k-qd1: (groupid=0")
    block = sweep_text[first : sweep_text.index("\n", sweep_text.index("latency   :", first)) + 1]
    at = sweep_text.index("\n", sweep_text.index("Run status group 0")) + 1
    assert len(fio_text.parse(sweep_text[:at] + block + sweep_text[at:])) == len(fio_text.parse(sweep_text)) + 1


def test_fio_2_0_x_text_both_directions_with_their_own_latency_units():
    from pathlib import Path

    from kneepoint.ingest import formats as registry

    path = Path(__file__).resolve().parents[1] / "fixtures" / "fio_text" / "fio-2.0.8-randrw-both-directions.txt"
    parsed = registry.parse_bytes(path.read_bytes(), path.name)
    read, write = parsed.records
    assert (read.tool_version, read.operation, read.direction, write.direction) == ("2.0.8", "mixed", "read", "write")
    assert (read.throughput, read.throughput_unit, write.throughput, write.throughput_unit) == (
        13109.0,
        "KiB/s",
        583462.0,
        "B/s",
    )
    assert (read.latency_unit, read.latency_avg, read.latency_max) == ("ms", 7.40, 220.0)  # `lat (msec)`
    assert (write.latency_unit, write.latency_avg, write.latency_min) == ("us", 55420.19, 420.0)  # `lat (usec)`
    assert read.queue_depth == 32 and read.read_pct == 96.0
