#!/usr/bin/env bash
# Prepares a build directory for the benchmarks, which are measured on a
# release build:
# - configures it -Dbuildtype=release when it does not exist;
# - when it is configured with another build type, reconfigures it to release,
#   or with --refuse stops with a message instead (make bench passes --refuse
#   for a directory named on its command line, BUILD=<dir>: that may be the
#   directory of make test, whose assertions a release build turns off);
# - reconfigures it when libdpdk is installed now but the directory was
#   configured without it (meson only looks for dependencies when it
#   configures, so a DPDK installed later would leave the peer unbuilt and
#   "unavailable").
# Usage: tools/bench-setup.sh [--refuse] <build-dir>
set -euo pipefail

refuse=0
[ "${1:-}" = --refuse ] && { refuse=1; shift; }
build=${1:-build-bench}

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dbuildtype=release
	exit 0
fi

buildtype=$(meson introspect --buildoptions "$build" |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"))')
if [ "$buildtype" != release ]; then
	if [ "$refuse" -eq 1 ]; then
		echo "softdpu: $build is a $buildtype build; the benchmarks are measured on a release build." >&2
		echo "softdpu: run \`make bench\` (its own release directory, build-bench), or make $build release" \
			"first (meson configure $build -Dbuildtype=release) and run \`make bench BUILD=$build\` again" >&2
		exit 1
	fi
	echo "softdpu: $build was configured as $buildtype; reconfiguring it as release"
	meson setup --reconfigure "$build" -Dbuildtype=release
fi

pkg-config --exists libdpdk 2>/dev/null || exit 0
ninja -C "$build" -t targets all 2>/dev/null | grep -q '^bench/bench_dma_dpdk:' && exit 0

echo "softdpu: libdpdk is installed but $build was configured without it; reconfiguring"
meson setup --reconfigure "$build"
if ! ninja -C "$build" -t targets all 2>/dev/null | grep -q '^bench/bench_dma_dpdk:'; then
	echo "softdpu: meson still does not find libdpdk for $build (see $build/meson-logs/meson-log.txt);" \
		"the DPDK column will read \"unavailable\"" >&2
fi
