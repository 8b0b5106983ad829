#!/usr/bin/env bash
# Prepares a build directory for the benchmarks: configures it when it does not
# exist, and reconfigures it when libdpdk is installed now but the directory was
# configured without it (meson only looks for dependencies when it configures,
# so a DPDK installed later would leave the peer unbuilt and "unavailable").
# Usage: tools/bench-setup.sh <build-dir>
set -euo pipefail

build=${1:-build}

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build"
	exit 0
fi
pkg-config --exists libdpdk 2>/dev/null || exit 0
ninja -C "$build" -t targets all 2>/dev/null | grep -q '^bench/bench_dma_dpdk:' && exit 0

echo "softdpu: libdpdk is installed but $build was configured without it; reconfiguring"
meson setup --reconfigure "$build"
if ! ninja -C "$build" -t targets all 2>/dev/null | grep -q '^bench/bench_dma_dpdk:'; then
	echo "softdpu: meson still does not find libdpdk for $build (see $build/meson-logs/meson-log.txt);" \
		"the DPDK column will read \"unavailable\"" >&2
fi
