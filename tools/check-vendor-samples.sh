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
trap "" PIPE # a sample that stopped reading its prompts must not end this script

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

# rdma_pair <A dir> <B dir> <A's expected> <B's expected> <twice> [args...]: the passive side A
# (responder or receiver) and B, each in a directory of its own as on two machines. Once both wrote
# their descriptors, each gets a copy of the other's (and B of A's exported memory, for the
# responders) and is told to "press enter"; with twice=1 A is told again after B ended (the
# responders wait for the requester to finish). The samples delete their files at the end.
rdma_pair() {
	local a=$1 b=$2 want_a=$3 want_b=$4 twice=$5 ba bb d i ok
	shift 5
	ba=$(build "doca_rdma/$a") && bb=$(build "doca_rdma/$b") ||
		{ failed=$((failed + 1)); echo "FAIL $a/$b: build (logs in $work)"; return; }
	d=$(mktemp -d -p "$work") && mkdir "$d/A" "$d/B" && mkfifo "$d/a.in" "$d/b.in"
	timeout 120 "$ba/doca_$a" -d mlx5_0 -ld "$d/A/local" -re "$d/A/remote" -m "$d/A/mmap" "$@" \
		<"$d/a.in" >"$d/a.out" 2>&1 &
	local pa=$!
	timeout 120 "$bb/doca_$b" -d mlx5_0 -ld "$d/B/local" -re "$d/B/remote" -m "$d/B/mmap" "$@" \
		<"$d/b.in" >"$d/b.out" 2>&1 &
	local pb=$!
	exec 7>"$d/a.in" 8>"$d/b.in"
	for i in $(seq 300); do
		grep -q "press enter" "$d/a.out" && grep -q "press enter" "$d/b.out" && break
		sleep 0.1
	done
	cp "$d/A/local" "$d/B/remote" && cp "$d/B/local" "$d/A/remote" &&
		{ [ "$twice" = 0 ] || cp "$d/A/mmap" "$d/B/mmap"; }
	echo >&7
	echo >&8
	wait "$pb"
	# A sample that already finished has closed its input: the broken pipe is no failure.
	[ "$twice" = 1 ] && { echo >&7; } 2>/dev/null
	exec 7>&- 8>&-
	wait "$pa"
	ok=1
	grep -qF -- "$want_a" "$d/a.out" && grep -q "Sample finished successfully" "$d/a.out" || ok=0
	grep -qF -- "$want_b" "$d/b.out" && grep -q "Sample finished successfully" "$d/b.out" || ok=0
	if [ $ok = 1 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $a/$b"
		tail -n 5 "$d/a.out" "$d/b.out"
	fi
}

txt="Hi DOCA RDMA!"
rdma_pair rdma_receive rdma_send "Got from sender: \"$txt\"" "Retrieved results successfully" 0
rdma_pair rdma_receive_immediate rdma_send_immediate "Got from sender: \"$txt\" with immediate: " \
	"Retrieved results successfully" 0
rdma_pair rdma_read_responder rdma_read_requester "Sample finished" "Read from responder: \"$txt\"" 1
rdma_pair rdma_write_responder rdma_write_requester "has written: \"$txt\"" "Written to responder \"$txt\"" 1
rdma_pair rdma_write_immediate_responder rdma_write_immediate_requester \
	"Requester has written: \"$txt\" with immediate data: " "Written to responder \"$txt\" with immediate data: " 1

sha=$(printf 1234567890abcdef | sha256sum | cut -d' ' -f1)
one_process doca_sha/sha_create doca_sha_create "SHA256 output of 1234567890abcdef is: $sha"
one_process doca_common/graph doca_graph "All instances completed successfully"
one_process flexio/flexio_rpc host/flexio_rpc "RPC call result: "
one_process flexio/flexio_window host/flexio_window "Host buffer: FlexIO Window Sample - DPA"
one_process flexio/flexio_multithread host/flexio_multithread "^25 50 75 100 125 $"
# DOCA DPA
one_process doca_dpa/dpa_kernel_launch doca_dpa_kernel_launch "^Hello from kernel$"
one_process doca_dpa/dpa_wait_kernel_launch doca_dpa_wait_kernel_launch "^Hello from kernel$"
one_process doca_dpa/dpa_diamond_tree doca_dpa_diamond_tree "Kernel D completion event has been signaled"
one_process doca_dpa/dpa_binary_tree doca_dpa_binary_tree "Completion event kernel G has been signaled"
one_process doca_dpa/dpa_endpoint_copy doca_dpa_endpoint_copy "After copying: local buffer = 10, remote buffer = 10"

echo "vendor samples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
