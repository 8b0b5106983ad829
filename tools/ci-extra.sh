#!/usr/bin/env bash
# Checks beyond the unit tests: install into a vendor-shaped prefix, build a
# program against it with `pkg-config doca` exactly as a DOCA user would, run
# it; check the exported symbols; smoke-run the benchmarks.
# Usage: tools/ci-extra.sh [function ...]
#   With arguments, only the checks whose function is named run, in this
#   file's order (e.g. `tools/ci-extra.sh install_tree exports_only_vendor_api`:
#   most checks need install_tree's tree).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

pass=0
fail=0
only=" $* "
known=" "
check() {
	local name=$1
	shift
	known="$known$1 "
	[ "$only" = "  " ] || [[ "$only" == *" $1 "* ]] || return 0
	# A subshell: what one check exports (pkg-config paths of the installed tree) stays out of the next.
	if ("$@") >/tmp/softdpu-ci-$$.log 2>&1; then
		echo "ok   $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		tail -n 30 /tmp/softdpu-ci-$$.log
		fail=$((fail + 1))
	fi
}

work=$(mktemp -d)
trap 'rm -rf "$work" /tmp/softdpu-ci-$$.log' EXIT
prefix=/opt/mellanox/doca
multiarch=$(gcc -print-multiarch)

install_tree() {
	meson setup "$work/build" --prefix=$prefix >/dev/null &&
		ninja -C "$work/build" >/dev/null &&
		DESTDIR="$work/root" meson install --no-rebuild -C "$work/build" >/dev/null
}
layout() {
	local r=$work/root$prefix
	test -f "$r/include/doca_dma.h" && test -f "$r/include/doca_ctx.h" &&
		test -f "$r/lib/$multiarch/pkgconfig/doca.pc" && test -e "$r/lib/$multiarch/libdoca_common.so" &&
		test -e "$r/lib/$multiarch/libdoca_rdma.so" &&
		test -f "$r/applications/VERSION" &&
		PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$r/lib/$multiarch/pkgconfig \
			pkg-config --exists doca-common doca-dma doca-argp doca-sha doca-comm-channel doca-rdma
}
external_build() {
	local r=$work/root$prefix
	export PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$r/lib/$multiarch/pkgconfig
	# shellcheck disable=SC2046
	gcc -std=c11 -Wall -Wextra -Werror samples/softdpu_demo.c -o "$work/demo" $(pkg-config --cflags --libs doca)
}
external_run() {
	LD_LIBRARY_PATH=$work/root$prefix/lib/$multiarch SOFTDPU_LOG_LEVEL=error "$work/demo" | grep -q "demo: OK"
}
transitive_includes_build() {
	local r=$work/root$prefix src=tests/compile/transitive_includes.c last s
	export PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$r/lib/$multiarch/pkgconfig
	# A program that includes only DOCA headers and leans on the standard headers they bring, as
	# the vendor samples do: whole, then each section alone (so no header covers for another).
	# shellcheck disable=SC2046
	gcc -std=c11 -Wall -Werror $(pkg-config --cflags doca) "$src" -o "$work/transitive" $(pkg-config --libs doca) ||
		return 1
	last=$(grep -o 'TI_SECTION == [0-9]*' "$src" | awk '{print $3}' | sort -n | tail -n 1)
	for s in $(seq 1 "$last"); do
		# shellcheck disable=SC2046
		gcc -std=c11 -Wall -Werror -DTI_SECTION="$s" $(pkg-config --cflags doca) -c "$src" -o "$work/transitive.o" ||
			{ echo "section $s of $src"; return 1; }
	done
}
# "address type name" of a shared library's definitions; fails when the library is missing, nm
# fails or it defines nothing (so that an empty list never passes for a clean one).
defined_syms() {
	local out
	out=$(nm -D --defined-only "$1") || { echo "nm failed on $1"; return 1; }
	[ -n "$out" ] || { echo "$1 defines no symbol"; return 1; }
	echo "$out"
}
exports_only_vendor_api() {
	local bad lib syms
	# (grep -v exits 1 when nothing is left: the clean case; `|| true` only after the lists were read.)
	syms=$(defined_syms "$work/root$prefix/lib/$multiarch/libdoca_common.so") || { echo "$syms"; return 1; }
	bad=$(echo "$syms" | awk '{print $3}' | grep -v -E '^(doca_|priv_doca_)' || true)
	[ -z "$bad" ] || { echo "non-vendor exports: $bad"; return 1; }
	# The verbs libraries export rdma-core's names only (src/verbs/*.syms).
	for lib in libibverbs libmlx5; do
		# (type A: the version nodes themselves)
		syms=$(defined_syms "$work/root$prefix/lib/$multiarch/$lib.so.1") || { echo "$syms"; return 1; }
		bad=$(echo "$syms" | awk '$2 != "A" {print $3}' |
			sed 's/@.*//' | sort -u | grep -v -x -F -f <(sed 's/@.*//' "src/verbs/$lib.syms") || true)
		[ -z "$bad" ] || { echo "$lib: exports not in rdma-core's: $bad"; return 1; }
	done
	syms=$(defined_syms "$work/root$prefix/lib/$multiarch/libflexio.so") || { echo "$syms"; return 1; }
	bad=$(echo "$syms" | awk '{print $3}' | grep -v -E '^flexio_' || true)
	[ -z "$bad" ] || { echo "libflexio.so: non-vendor exports: $bad"; return 1; }
	# The private device library: the layer prefixes only, all under its private node.
	lib=$work/root$prefix/lib/$multiarch/libsoftdpu.so.0
	syms=$(versioned_exports "$lib") || { echo "$syms"; return 1; }
	bad=$(echo "$syms" | grep -v -E '^(base|hw|fab)_[A-Za-z0-9_]*@@SOFTDPU_PRIVATE_0$' |
		grep -v -x 'SOFTDPU_PRIVATE_0@@SOFTDPU_PRIVATE_0' || true)
	[ -z "$bad" ] || { echo "libsoftdpu.so.0 exports outside its layer prefixes: $bad"; return 1; }
}
# name@@NODE (default) / name@NODE (old version), one a line, of a shared library's definitions;
# fails when objdump fails or finds no definition.
versioned_exports() {
	local dump out
	dump=$(objdump -T "$1") || { echo "objdump failed on $1"; return 1; }
	out=$(echo "$dump" | grep -E '^[0-9a-f]{16}' | grep -v -e '\*UND\*' -e '\*ABS\*' |
		awk '{n=$NF; v=$(NF-1); if (v ~ /^\(/) {gsub(/[()]/,"",v); print n "@" v} else print n "@@" v}' | sort)
	[ -n "$out" ] || { echo "$1 defines no symbol"; return 1; }
	echo "$out"
}
# Every export of rdma-core v44 with its version node and default-ness, nothing else: against the
# checked-in lists always, against Debian's own libraries when installed.
verbs_exports_match() {
	local lib ours deb=/usr/lib/$multiarch
	for lib in libibverbs libmlx5; do
		ours=$(versioned_exports "$work/root$prefix/lib/$multiarch/$lib.so.1") || return 1
		diff <(awk '{print $1}' "src/verbs/$lib.syms" | sort) <(echo "$ours") ||
			{ echo "$lib differs from src/verbs/$lib.syms"; return 1; }
		if [ -f "$deb/$lib.so.1" ]; then
			diff <(versioned_exports "$deb/$lib.so.1") <(echo "$ours") ||
				{ echo "$lib differs from $deb/$lib.so.1"; return 1; }
		fi
		readelf -d "$work/root$prefix/lib/$multiarch/$lib.so.1" | grep -q "Library soname: \[$lib.so.1\]" ||
			{ echo "$lib: SONAME is not $lib.so.1"; return 1; }
	done
	tools/gen-verbs.py --check
}
# A verbs program builds with pkg-config libibverbs libmlx5, as against rdma-core.
verbs_external_build() {
	local r=$work/root$prefix
	export PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$r/lib/$multiarch/pkgconfig
	printf '#include <infiniband/mlx5dv.h>\nint main(void){int n; struct ibv_device **l = ibv_get_device_list(&n);\nint ok = l && n > 0 && mlx5dv_is_supported(l[0]); ibv_free_device_list(l); return !ok;}\n' >"$work/vb.c"
	# shellcheck disable=SC2046
	gcc -std=c11 -Wall -Werror "$work/vb.c" -o "$work/vb" $(pkg-config --cflags --libs libibverbs libmlx5) &&
		LD_LIBRARY_PATH=$r/lib/$multiarch "$work/vb"
}
# A FlexIO project as a vendor's: its own meson.build calls the installed build_flexio_device.sh
# by its path and asks pkg-config for libflexio, libibverbs, libmlx5 and doca; then it runs.
flexio_vendor_build() {
	local r=$work/root$prefix
	export PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$r/lib/$multiarch/pkgconfig
	test -x "$r/tools/build_flexio_device.sh" && test -f "$r/include/libflexio/flexio.h" &&
		test -f "$r/include/libflexio-dev/flexio_dev.h" && test -f "$r/lib/$multiarch/pkgconfig/libflexio.pc" ||
		{ echo "the FlexIO SDK is not installed in the vendor layout"; return 1; }
	for s in flexio_rpc flexio_cmdq flexio_window flexio_multithread flexio_evh flexio_pp; do
		meson setup "$work/$s" "samples/$s" -Ddoca_prefix="$r" >/dev/null && ninja -C "$work/$s" >/dev/null &&
			LD_LIBRARY_PATH=$r/lib/$multiarch SOFTDPU_LOG_LEVEL=error "$work/$s/$s" | grep -q "$s: OK" ||
			{ echo "the vendor-style build of samples/$s failed"; return 1; }
	done
}
# Device code is host code: gdb stops at a line of a device source, on its hart, with the RPC's arguments.
flexio_gdb_breakpoint() {
	local out
	out=$(timeout -s KILL 120 gdb -batch -nx -ex "set breakpoint pending on" -ex "break flexio_rpc_dev.c:17" \
		-ex run -ex "info args" -ex kill "$work/build/samples/flexio_rpc" </dev/null 2>&1)
	echo "$out" | grep -q "hit Breakpoint 1.*flexio_rpc_sum" && echo "$out" | grep -qx "n = 64" &&
		echo "$out" | grep -qx "scale = 3" || { echo "$out" | tail -n 20; return 1; }
}
# Debian's ibv_devinfo -v and ibv_devices, unchanged, on the installed libraries. Only exit 0 passes:
# 77 (ibverbs-utils missing) is a skip CI does not accept, and a signal is a failure.
verbs_devinfo() {
	local rc
	sh tools/check-devinfo.sh "$work/root$prefix/lib/$multiarch"
	rc=$?
	[ "$rc" -eq 0 ] || { echo "tools/check-devinfo.sh exited with status $rc"; return 1; }
}
# UCX is opened on first use of a path to another machine (fab_ucx_load.c), never linked:
# a program that stays on one machine must not get UCX's signal handlers and memory hooks.
no_ucx_linked() {
	local name lib deps needed
	for name in libdoca_common.so libsoftdpu.so.0 libibverbs.so.1; do
		lib=$work/root$prefix/lib/$multiarch/$name
		deps=$(ldd "$lib") || return 1
		needed=$(readelf -d "$lib" | grep NEEDED) || return 1
		if echo "$deps" | grep -q 'libuc[pstm]' || echo "$needed" | grep -q 'libuc[pstm]'; then
			echo "$name links UCX:"
			echo "$deps"
			echo "$needed"
			return 1
		fi
	done
}
arch_default_respected() {
	printf '#include <doca_build_config.h>\n#ifndef DOCA_ARCH_DPU\n#error lost\n#endif\n#ifdef DOCA_ARCH_HOST\n#error default\n#endif\nint main(void){return 0;}\n' >"$work/arch.c"
	gcc -DDOCA_ARCH_DPU -I"$work/root$prefix/include" "$work/arch.c" -o "$work/arch"
}
every_export_tested() {
	local missing="" used
	# What the test binaries import (macros such as the 1.x names resolve to other symbols), plus the sources.
	used=$(for t in "$work"/build/tests/test_*; do [ -x "$t" ] && [ -f "$t" ] && nm -D --undefined-only "$t"; done |
		awk '{print $2}' | sort -u)
	for f in $(nm -D --defined-only "$work/root$prefix/lib/$multiarch/libdoca_common.so" \
		"$work/root$prefix/lib/$multiarch/libflexio.so" | awk '$2 == "T" {print $3}'); do
		echo "$used" | grep -qx "$f" || grep -qw "$f" tests/*.c tests/*.h || missing="$missing $f"
	done
	[ -z "$missing" ] || { echo "exported but never called by a test:$missing"; return 1; }
}
# The documented procedure builds the whole tree in release mode (-O3 adds warnings of its own).
bench_smoke() {
	[ -x bench/run.sh ] || return 0
	meson setup "$work/bench" -Dbuildtype=release && ninja -C "$work/bench" && bench/run.sh "$work/bench" --quick
}

check "meson install with prefix $prefix" install_tree
check "vendor layout (include/, lib/$multiarch/pkgconfig/doca.pc and the per-library names, applications/VERSION)" layout
check "external program builds with pkg-config doca" external_build
check "external program runs" external_run
check "a program relying on the DOCA headers' standard includes builds with pkg-config doca" transitive_includes_build
check "shared libraries export only the vendor API (DOCA, FlexIO; rdma-core's names for the verbs libraries)" exports_only_vendor_api
check "libibverbs.so.1/libmlx5.so.1: every rdma-core v44 export, name@version and default-ness, nothing more" verbs_exports_match
check "a verbs program builds with pkg-config libibverbs libmlx5 and runs" verbs_external_build
check "Debian's ibv_devinfo -v and ibv_devices run unchanged on the installed libraries" verbs_devinfo
check "the FlexIO samples as vendor-style projects (meson, the installed build_flexio_device.sh, pkg-config libflexio) build and run" flexio_vendor_build
check "gdb stops at a breakpoint in FlexIO device code, with its arguments" flexio_gdb_breakpoint
check "libdoca_common.so, libsoftdpu.so.0, libibverbs.so.1 link no UCX library (ldd, readelf NEEDED)" no_ucx_linked
check "doca_build_config.h keeps -DDOCA_ARCH_DPU" arch_default_respected
check "every exported function (libdoca_common, libflexio) is called by a test" every_export_tested
check "benchmarks build in release mode and run (quick)" bench_smoke
# The DOCA RDMA comparisons with perftest run (their figures are not checked: a harness check).
rdma_doca_smoke() {
	[ -f "$work/bench/build.ninja" ] || meson setup "$work/bench" -Dbuildtype=release >/dev/null || return 1
	ninja -C "$work/bench" >/dev/null && bench/rdma_doca.sh "$work/bench" --quick &&
		bench/rdma_doca_icount.sh "$work/bench" --iters 2000
}
check "bench/rdma_doca.sh and bench/rdma_doca_icount.sh run against perftest (quick)" rdma_doca_smoke
# DOCA DPA as the vendor lays it out: headers, libdoca_dpa.so exporting doca_dpa_* only (each called
# by a test), the device library, doca-dpa.pc and tools/dpacc; and the dpa_kernel_launch sample as a
# vendor-style project (the installed dpacc with the vendor's options, pkg-config doca-dpa), run.
dpa_layout_exports() {
	local r=$work/root$prefix l=$work/root$prefix/lib/$multiarch syms bad missing="" used
	test -f "$r/include/doca_dpa.h" && test -f "$r/include/doca_dpa_dev.h" &&
		test -f "$r/include/doca_dpa_dev_sync_event.h" && test -x "$r/tools/dpacc" &&
		test -e "$l/libdoca_dpa.so" && test -f "$l/libdoca_dpa_dev.a" &&
		PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$l/pkgconfig pkg-config --exists doca-dpa ||
		{ echo "DOCA DPA is not installed in the vendor layout"; return 1; }
	syms=$(defined_syms "$l/libdoca_dpa.so") || { echo "$syms"; return 1; }
	bad=$(echo "$syms" | awk '{print $3}' | grep -v -E '^(doca_dpa_|doca_devinfo_get_is_dpa_supported$)' || true)
	[ -z "$bad" ] || { echo "libdoca_dpa.so: non-vendor exports: $bad"; return 1; }
	used=$(nm -D --undefined-only "$work/build/tests/test_dpa" | awk '{print $2}' | sort -u)
	for f in $(echo "$syms" | awk '$2 == "T" {print $3}'); do
		echo "$used" | grep -qx "$f" || missing="$missing $f"
	done
	[ -z "$missing" ] || { echo "libdoca_dpa.so exports never called by test_dpa:$missing"; return 1; }
}
dpa_vendor_build() {
	local r=$work/root$prefix s=dpa_kernel_launch
	export PKG_CONFIG_SYSROOT_DIR=$work/root PKG_CONFIG_PATH=$r/lib/$multiarch/pkgconfig
	test -e "$work/root/opt/mellanox/flexio/lib/libflexio.so" ||
		{ echo "-L/opt/mellanox/flexio/lib -lflexio does not resolve"; return 1; }
	meson setup "$work/$s" "samples/$s" -Ddoca_prefix="$r" -Dflexio_prefix="$work/root/opt/mellanox/flexio" \
		>/dev/null && ninja -C "$work/$s" >/dev/null &&
		LD_LIBRARY_PATH=$r/lib/$multiarch SOFTDPU_LOG_LEVEL=error "$work/$s/$s" | grep -q "$s: OK" ||
		{ echo "the vendor-style build of samples/$s failed"; return 1; }
}
check "DOCA DPA in the vendor layout (headers, libdoca_dpa exporting doca_dpa_* only, each tested, libdoca_dpa_dev.a, doca-dpa.pc, tools/dpacc)" dpa_layout_exports
check "the DOCA DPA sample as a vendor-style project (the installed dpacc, pkg-config doca-dpa, -L/opt/mellanox/flexio/lib -lflexio) builds and runs" dpa_vendor_build
# Instructions per operation of the small-message paths (callgrind) against bench/icount.ref:
# deterministic (identical counts over repeated runs), a few seconds on bench_smoke's release
# tree; run alone, it configures one and builds only the libraries and the driver.
icount() {
	[ -f "$work/bench/build.ninja" ] || meson setup "$work/bench" -Dbuildtype=release >/dev/null || return 1
	bench/icount.sh "$work/bench"
}
check "instructions per operation of the small-message paths within 10 % of bench/icount.ref (callgrind)" icount
# The tests whose code runs on more than one thread (the watch engine, CQ arming, sync
# events across processes, the comm channel, graphs, the queue engine and its thread,
# FlexIO harts and command-queue workers, destroys and deregistrations fencing other threads' work,
# a CQ resize fencing producers, paced queues run by the engine thread, tag matching FINs it retries,
# raw doorbells run in a fault handler beside the engine thread),
# under ThreadSanitizer.
# The UCX tests stay out: UCX's memory hooks do not run under TSan.
tsan() {
	local t
	meson setup "$work/tsan" -Db_sanitize=thread -Db_lundef=false >/dev/null || return 1
	for t in test_workq_entries test_event test_sync_event test_comm_channel test_graph test_hw_cq test_hw_qp test_hw_xq test_verbs_fence test_flexio \
		test_flexio_queue test_flexio_window test_flexio_isolation test_verbs_mr_move test_hw_eth test_flexio_eth test_verbs_mw \
		test_verbs_xrc test_verbs_mcast test_rdmacm test_rsocket test_rdmacm_timers test_rdmacm_hostile test_verbs_dvmisc \
		test_verbs_pace test_verbs_tm test_verbs_tm_xp test_hw_eng_raw test_verbs_rawtrap test_verbs_rawstream test_dpa; do
		ninja -C "$work/tsan" "tests/$t" >/dev/null || return 1
		# die_after_fork=0: test_workq_entries forks while the watch engine runs, on purpose.
		TSAN_OPTIONS="halt_on_error=1 die_after_fork=0" "$work/tsan/tests/$t" || return 1
	done
}
check "threaded tests under ThreadSanitizer" tsan
fuzz() {
	FUZZ_DIR="$work/fuzz" tools/run-fuzz.sh "${FUZZ_SECONDS:-15}"
}
check "fuzz harnesses of every descriptor parser (libFuzzer)" fuzz

for f in $only; do
	[[ "$known" == *" $f "* ]] || { echo "FAIL $f: no such check"; fail=$((fail + 1)); }
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
