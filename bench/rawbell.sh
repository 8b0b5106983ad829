#!/usr/bin/env bash
# Raw doorbells served (bench/rawbell.c): the median one-way latency of a
# raw-doorbell ping-pong between two processes beside a futex wake's in the
# same run, a stream of 64 B WRITEs through raw doorbells against
# ibv_post_send, and the idle CPU of a process holding a raw-doorbell QP;
# then a DevX CQ's completion event (bench/devx_evch.c), with the UAR's CQ
# doorbell trapped and with traps off (the records read every 50 us).
#
# Usage: bench/rawbell.sh <build-dir> [--quick]
set -euo pipefail

build=${1:?usage: bench/rawbell.sh <build-dir> [--quick]}
n=20000 m=200000 s=5
if [ "${2:-}" = --quick ]; then
	n=2000 m=20000 s=2
fi
drv=$build/bench/rawbell
[ -x "$drv" ] || { echo "bench/rawbell.sh: $drv not built (ninja -C $build)" >&2; exit 1; }
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
LD_LIBRARY_PATH=$build/src "$drv" pingpong "$n"
LD_LIBRARY_PATH=$build/src "$drv" stream "$m"
LD_LIBRARY_PATH=$build/src "$drv" idle "$s"
echo "DevX completion event, the UAR's CQ doorbell trapped:"
LD_LIBRARY_PATH=$build/src "$build/bench/devx_evch"
echo "DevX completion event, traps off (SOFTDPU_RAW_TRAP=0):"
SOFTDPU_RAW_TRAP=0 LD_LIBRARY_PATH=$build/src "$build/bench/devx_evch"
