#!/usr/bin/env bash
# Regenerates the fio text (normal output) sweep in this folder: 4 KiB random writes, queue depth 1..64
# (powers of two) x numjobs 1 and 4, direct I/O, libaio, `--output-format=normal`.
# One fio invocation per numjobs, each with one stonewalled job per queue depth reported as a group
# (group_reporting); both invocations are appended to one file, as batch scripts do.
# Usage: ./run_text_sweep.sh [TEST_FILE_DIR]   (needs fio >= 3 and a file system that allows O_DIRECT)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/var/tmp}
testfile="$dir/kneepoint-text-sweep.dat"
out="$here/randwrite-4k-sweep.txt"
runtime=${RUNTIME:-3}
ramp=${RAMP:-1}
trap 'rm -f "$testfile"' EXIT

: >"$out"
for jobs in 1 4; do
  args=()
  for qd in 1 2 4 8 16 32 64; do
    args+=(--name="randwrite-4k-qd${qd}" --stonewall --iodepth="$qd")
  done
  fio --filename="$testfile" --size=1G --direct=1 --ioengine=libaio --rw=randwrite --bs=4k \
      --numjobs="$jobs" --group_reporting --time_based --runtime="$runtime" --ramp_time="$ramp" \
      --randrepeat=0 --norandommap --output-format=normal "${args[@]}" >>"$out" 2>&1
done
