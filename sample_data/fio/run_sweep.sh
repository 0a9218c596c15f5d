#!/usr/bin/env bash
# Regenerates the fio sweep in this folder: 4 KiB random reads and 128 KiB sequential reads,
# queue depth 1..128 (powers of two) x numjobs 1, 2, 4, direct I/O, libaio, json+ output.
# One output file per workload and numjobs; inside it one stonewalled job per queue depth,
# reported as a group (group_reporting), so each job is one measured point.
# Usage: ./run_sweep.sh [TEST_FILE_DIR]   (needs fio >= 3 and a file system that allows O_DIRECT)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/var/tmp}
testfile="$dir/kneepoint-sweep.dat"
runtime=${RUNTIME:-4}
ramp=${RAMP:-1}

run() { # name rw bs numjobs
  local name=$1 rw=$2 bs=$3 jobs=$4 args=()
  for qd in 1 2 4 8 16 32 64 128; do
    args+=(--name="${name}-qd${qd}" --stonewall --iodepth="$qd")
  done
  fio --filename="$testfile" --size=2G --direct=1 --ioengine=libaio --rw="$rw" --bs="$bs" \
      --numjobs="$jobs" --group_reporting --time_based --runtime="$runtime" --ramp_time="$ramp" \
      --randrepeat=0 --norandommap \
      --output-format=json+ --output="$here/${name}-jobs${jobs}.json" "${args[@]}"
}

for jobs in 1 2 4; do
  run randread-4k randread 4k "$jobs"
  run seqread-128k read 128k "$jobs"
done
rm -f "$testfile"
