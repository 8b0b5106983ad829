#!/usr/bin/env bash
# The vendor's own DOCA 2.2 samples, unchanged, on softdpu: each is built with its own meson file
# against the DOCA installed at /opt/mellanox/doca (the path those files name) and run; its output
# is checked. The samples are not part of softdpu: point this at a copy of the SDK's samples tree
# (/opt/mellanox/doca/samples of a DOCA 2.2 installation, with applications/common beside it).
# Usage: tools/check-vendor-samples.sh <samples dir> [work dir]
# Install softdpu there first: meson setup b --prefix=/opt/mellanox/doca && meson install -C b
set -u
samples=${1:?usage: check-vendor-samples.sh <samples dir> [work dir]}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
doca=/opt/mellanox/doca
lib=$doca/lib/$(gcc -print-multiarch)
export PKG_CONFIG_PATH=$lib/pkgconfig LD_LIBRARY_PATH=$lib
passed=0 failed=0

[ -f "$doca/applications/VERSION" ] && [ -f "$lib/pkgconfig/doca.pc" ] ||
	{ echo "softdpu is not installed at $doca"; exit 2; }

# build <dir>: the sample's own meson project into $work/<dir with _>; prints the build dir.
build() {
	local b=$work/${1//\//_}
	rm -rf "$b"
	meson setup "$b" "$samples/$1" >"$b.log" 2>&1 && ninja -C "$b" >>"$b.log" 2>&1 && echo "$b"
}

# check <name> <expected output (grep -E)> <command...>: one case.
check() {
	local name=$1 want=$2 out
	shift 2
	out=$(timeout 120 "$@" 2>&1)
	if echo "$out" | grep -qE "$want" && echo "$out" | grep -q "Sample finished successfully"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		echo "$out" | tail -n 8
	fi
}

# one_process <dir> <program> <expected> [args...]
one_process() {
	local dir=$1 prog=$2 want=$3 b
	shift 3
	if b=$(build "$dir"); then
		check "$dir" "$want" "$b/$prog" "$@"
	else
		failed=$((failed + 1))
		echo "FAIL $dir: build (log $work/${dir//\//_}.log)"
	fi
}

sha=$(printf 1234567890abcdef | sha256sum | cut -d' ' -f1)
one_process doca_sha/sha_create doca_sha_create "SHA256 output of 1234567890abcdef is: $sha"
one_process doca_common/graph doca_graph "All instances completed successfully"
one_process flexio/flexio_rpc host/flexio_rpc "RPC call result: "
one_process flexio/flexio_window host/flexio_window "Host buffer: FlexIO Window Sample - DPA"
one_process flexio/flexio_multithread host/flexio_multithread "^25 50 75 100 125 $"

echo "vendor samples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
