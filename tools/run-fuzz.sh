#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz with clang's libFuzzer (+ ASan/UBSan)
# and runs each for a short time. Usage: tools/run-fuzz.sh [seconds-per-target]
# Prints "N passed, N failed" (one per target).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

secs=${1:-20}
out=${FUZZ_DIR:-build-fuzz}
mkdir -p "$out"
cc=(clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-D_GNU_SOURCE -DDOCA_ALLOW_EXPERIMENTAL_API -Iinclude -Isrc/base -Isrc/hw -Isrc/fabric -Isrc/doca/core)
# The descriptor codec alone, with what it asks of lower layers (the machine identity, settings, log).
desc=(src/fabric/fab_desc.c src/hw/hw_machine.c src/base/base_config.c src/base/base_log.c)
lib=(src/base/*.c src/hw/*.c src/fabric/fab_desc.c src/fabric/fab_table.c src/fabric/fab_cma.c src/fabric/fab_mem.c src/fabric/fab_share.c src/fabric/fab_freeze.c src/fabric/fab_mr.c
	src/doca/core/*.c src/doca/dma/*.c src/doca/log/*.c)

pass=0
fail=0
run() {
	local name=$1
	shift
	mkdir -p "$out/corpus-$name"
	if ! "${cc[@]}" "$@" -o "$out/$name" -lcrypto -lpthread 2>"$out/$name.build.log"; then
		echo "FAIL $name (build)"
		tail -n 20 "$out/$name.build.log"
		fail=$((fail + 1))
		return
	fi
	cp -f "$out"/seeds/* "$out/corpus-$name/" 2>/dev/null
	if "$out/$name" -max_total_time="$secs" -rss_limit_mb=2048 "$out/corpus-$name" >"$out/$name.log" 2>&1; then
		echo "ok   $name ($(grep -o 'Done [0-9]* runs' "$out/$name.log" | tail -n 1))"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		tail -n 30 "$out/$name.log"
		fail=$((fail + 1))
	fi
}

mkdir -p "$out/seeds"
# The seeds are the only valid descriptors the fuzzers start from: without them a run proves little.
if ! clang -std=c11 -D_GNU_SOURCE -Isrc/base -Isrc/hw -Isrc/fabric tests/fuzz/gen_seeds.c "${desc[@]}" -lpthread \
	-o "$out/gen_seeds" 2>"$out/gen_seeds.log" || ! "$out/gen_seeds" "$out/seeds" >>"$out/gen_seeds.log" 2>&1 ||
	[ -z "$(ls -A "$out/seeds")" ]; then
	echo "FAIL gen_seeds (the seed corpus could not be built)"
	tail -n 20 "$out/gen_seeds.log"
	fail=$((fail + 1))
fi

export SOFTDPU_LOG_LEVEL=critical SOFTDPU_SDK_LOG_LEVEL=critical
run fuzz_mmap_desc tests/fuzz/fuzz_mmap_desc.c "${desc[@]}"
run fuzz_mmap_desc_sealed tests/fuzz/fuzz_mmap_desc_sealed.c "${desc[@]}"
run fuzz_mmap_import tests/fuzz/fuzz_mmap_import.c "${lib[@]}"
run fuzz_sync_event_blob tests/fuzz/fuzz_sync_event_blob.c src/doca/sync_event/se_blob.c "${desc[@]}" -Isrc/doca/sync_event
run fuzz_ucx_wire tests/fuzz/fuzz_ucx_wire.c -DSOFTDPU_HAVE_UCX "${lib[@]}" src/fabric/fab_ucx.c src/fabric/fab_ucx_load.c src/fabric/fab_shm.c
run fuzz_xm_request tests/fuzz/fuzz_xm_request.c -DSOFTDPU_HAVE_UCX "${lib[@]}" src/fabric/fab_ucx.c src/fabric/fab_ucx_load.c \
	src/fabric/fab_shm.c src/fabric/fab_xm_serve.c src/fabric/fab_xm_rdv.c src/fabric/fab_xm_reap.c
run fuzz_cc_handshake tests/fuzz/fuzz_cc_handshake.c src/fabric/fab_cc.c src/hw/hw_machine.c src/base/*.c src/doca/log/*.c src/doca/core/error.c
for extra in tests/fuzz/fuzz_*.sh; do
	[ -f "$extra" ] || continue
	# shellcheck source=/dev/null
	. "$extra"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
