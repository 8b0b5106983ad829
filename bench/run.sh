#!/usr/bin/env bash
# Runs the DMA-path benchmarks of a build directory and prints every table.
# `make bench` runs it on a release directory of its own (tools/bench-setup.sh).
# Usage: bench/run.sh <build-dir> [--quick]
#   --quick  short smoke run (checks that the benchmarks build and run; the
#            numbers are not meaningful)
set -euo pipefail

build=${1:-build}
quick=""
[ "${2:-}" = "--quick" ] && quick="--quick"
[ "${1:-}" = "--quick" ] && { quick="--quick"; build=${2:-build}; }

for b in bench_dma bench_buf bench_event bench_xproc bench_sync bench_wake; do
	if [ ! -x "$build/bench/$b" ]; then
		echo "bench/run.sh: $build/bench/$b not built (run ninja -C $build)" >&2
		exit 1
	fi
done

buildtype=$(sed -n "s/^buildtype *= *//p" "$build/meson-private/cmd_line.txt" 2>/dev/null || true)
if [ -z "$buildtype" ] && command -v meson >/dev/null; then
	buildtype=$(meson introspect --buildoptions "$build" 2>/dev/null |
		python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"))' \
		2>/dev/null || echo unknown)
fi
echo "softdpu benchmarks — build directory $build, buildtype ${buildtype:-unknown}"
[ "${buildtype:-}" = release ] ||
	echo "note: numbers are meant for a release build (make bench builds one, build-bench; or meson setup <dir> -Dbuildtype=release)"

pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
	pin=(taskset -c 0)
	echo "pinned to CPU 0 with taskset"
fi
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}

echo
"${pin[@]}" "$build/bench/bench_dma" $quick
if [ -z "$quick" ]; then
	echo
	echo "== 64 B jobs with the DPDK peer confined to one core too (its copy thread shares CPU 0) =="
	for d in 1 32 256; do
		"${pin[@]}" "$build/bench/bench_dma" --size 64 --depth "$d" --peer-one-core | grep -E '^(size|64 B)'
	done
fi
echo
"${pin[@]}" "$build/bench/bench_buf" $quick
echo
"${pin[@]}" "$build/bench/bench_event" $quick
# Cross-process benchmarks place their two processes on two CPUs themselves.
echo
"$build/bench/bench_xproc" $quick
echo
"$build/bench/bench_sync" $quick
echo
"$build/bench/bench_wake" $quick
echo
echo "== regression only: the UCX path over TCP on loopback =="
# UCX is a dependency of the build (tools/ensure-deps.sh): a failure here is a failure, not an absence.
if ! UCX_TLS=tcp UCX_NET_DEVICES=lo "$build/bench/bench_xproc" --fabric ucx --no-peer $quick; then
	echo "bench/run.sh: the UCX path failed" >&2
	exit 1
fi
# UMR: an RDMA WRITE scattered by an interleaved mkey against a strided memcpy loop.
echo
if [ -x "$build/bench/bench_umr" ]; then
	"${pin[@]}" "$build/bench/bench_umr" $quick
else
	echo "bench/run.sh: $build/bench/bench_umr not built" >&2
fi
echo
"${pin[@]}" "$build/bench/bench_dc" $quick
# FlexIO: RPC round trip against futex and cache-line round trips; command-queue throughput.
echo
"$build/bench/bench_flexio" $quick
# FlexIO: event-handler activation latency (polling, sleeping) against a futex wake and a cache line; rate.
echo
"$build/bench/bench_flexio_evh" $quick
# DOCA DPA: kernel launch latency and the Sync Event round trip host <-> DPA against futex and cache-line round trips.
echo
"$build/bench/bench_dpa" $quick
# RDMA between two processes: Debian's perftest on softdpu's libibverbs beside
# ucx_perftest, memcpy and a shared cache-line round trip.
echo
bash "$(dirname "$0")/rdma.sh" "$build" $quick
# RDMA between two machines (SOFTDPU_MACHINE) over UCX's TCP transport, beside ucx_perftest on it.
echo
bash "$(dirname "$0")/xmachine.sh" "$build" $quick
# The RDMA connection manager against plain TCP: setup rate, rping's exchange, perftest with and without -R.
if [ -e "$build/src/librdmacm.so.1" ]; then
	echo
	bash "$(dirname "$0")/cm.sh" "$build" $quick
fi
