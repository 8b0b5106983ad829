#!/usr/bin/env bash
# Packet pacing: the rate a paced QP achieves against the configured one
# (bench/bench_pace.c), for an RC QP under a schedule leaf (max_avg_bw in
# Mbit/s, 4 KiB SENDs) and a raw packet QP with a rate limit (kbit/s,
# 1500-byte frames), a few rates each, the send queue kept full; rate 0
# (no limit) first, the ceiling the others are under.
#
# Usage: bench/pace.sh <build-dir> [--seconds S]
set -euo pipefail

build=${1:?usage: bench/pace.sh <build-dir> [--seconds S]}
shift
secs=2
if [ $# -eq 2 ] && [ "$1" = --seconds ]; then
	secs=$2
fi
drv=$build/bench/bench_pace
[ -x "$drv" ] || { echo "bench/pace.sh: $drv not built (ninja -C $build)" >&2; exit 1; }
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
for mbps in 0 10 100 1000 10000; do
	LD_LIBRARY_PATH=$build/src "$drv" sched "$mbps" --seconds "$secs"
done
for kbps in 0 10000 100000 1000000; do
	LD_LIBRARY_PATH=$build/src "$drv" rate "$kbps" --seconds "$secs"
done
