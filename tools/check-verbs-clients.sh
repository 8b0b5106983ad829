#!/usr/bin/env bash
# Runs Debian's own RDMA clients (rdma-core v44's ibv_rc_pingpong and
# ibv_ud_pingpong, perftest)
# unchanged against softdpu's libibverbs.so.1, each as a server process and a
# client process of this machine talking through the emulated device; then a
# few as two machines (SOFTDPU_MACHINE 127.0.0.3 and 127.0.0.2, addressed by
# GID, over UCX's TCP transport on loopback) when UCX is installed.
# ibv_rc_pingpong -c compares every received buffer with what was sent.
# Exit 77 (skipped) when ibverbs-utils or perftest is not installed.
# Usage: tools/check-verbs-clients.sh <directory holding libibverbs.so.1>
set -u
lib=${1:?usage: check-verbs-clients.sh <lib-dir>}
name=verbs_clients
for p in ibv_rc_pingpong ibv_ud_pingpong ib_write_bw ib_write_lat ib_read_bw ib_send_lat; do
	if [ ! -x "/usr/bin/$p" ]; then
		echo "$name: /usr/bin/$p not installed (ibverbs-utils, perftest), skipped"
		echo "$name: 0 passed, 0 failed"
		exit 77
	fi
done
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
# A sanitized build: the (uninstrumented) programs must load the ASan runtime first.
asan=$(ldd "$lib/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	# perftest never frees its own buffers or the device list it asks for: leaks
	# of the client, not of the library (whose own tests run with leak checks).
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
export LD_LIBRARY_PATH=$lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Below the kernel's ephemeral range (32768 up), where no client socket of an
# earlier test can hold the port.
port=$((20000 + $$ % 12000))
pass=0
fail=0

wait_listen() {
	local hex
	hex=$(printf '%04X' "$1")
	for _ in $(seq 400); do
		grep -q ":$hex 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# run <label> <expect-regex> <command...>: server and client on a fresh port;
# both must exit 0 and the client's output must match the regex.
run() {
	local label=$1 expect=$2 t0=$SECONDS
	shift 2
	port=$((port + 1))
	"${SRV[@]}" timeout 60 "$@" -p "$port" >"$tmp/s" 2>&1 &
	local spid=$! rc src
	if ! wait_listen "$port"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		echo "FAIL $label: the server did not listen"
		cat "$tmp/s"
		fail=$((fail + 1))
		return
	fi
	"${CLI[@]}" timeout 60 "$@" -p "$port" localhost >"$tmp/c" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -Eq -- "$expect" "$tmp/c"; then
		pass=$((pass + 1))
		echo "ok   $label ($((SECONDS - t0)) s): $(grep -E -- "$expect" "$tmp/c" | head -1 | tr -s ' ')"
	else
		echo "FAIL $label: client exit $rc, server exit $src after $((SECONDS - t0)) s (124: timed out)"
		echo "--- client"; cat "$tmp/c"; echo "--- server"; cat "$tmp/s"
		fail=$((fail + 1))
	fi
}

SRV=() CLI=()
pp='[0-9]+ bytes in [0-9.]+ seconds'
# The ports are RoCE: ibv_rc_pingpong must be given a GID index (-g; without one it
# sends no GRH, which a RoCE port refuses), perftest one too (-x): GID 3 is the
# RoCE v2 entry of the function's IPv4 address, GID 0 the link-local RoCE v1 one.
run "ibv_rc_pingpong -g 0" "$pp" ibv_rc_pingpong -d mlx5_0 -n 200 -c -g 0
run "ibv_rc_pingpong -g 3 -e" "$pp" ibv_rc_pingpong -d mlx5_0 -n 200 -c -g 3 -e
run "ibv_rc_pingpong -g 0 -t" "$pp" ibv_rc_pingpong -d mlx5_0 -n 200 -c -g 0 -t
run "ibv_rc_pingpong -g 0 -N" "$pp" ibv_rc_pingpong -d mlx5_0 -n 200 -c -g 0 -N
run "ibv_rc_pingpong -g 0 -s 64 -r 16 -m 4096" "$pp" ibv_rc_pingpong -d mlx5_0 -n 500 -c -g 0 -s 64 -r 16 -m 4096
# UD: the message is the port's active MTU (1024; ibv_ud_pingpong lowers its 2048 to it).
run "ibv_ud_pingpong -g 0" "$pp" ibv_ud_pingpong -d mlx5_0 -n 200 -g 0
# perftest: the result row starts with the message size.
run "ib_write_bw -x 3" '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_write_bw -d mlx5_0 -F -x 3 -s 65536 -n 200
run "ib_write_bw -x 3 -a" '^ *8388608 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_write_bw -d mlx5_0 -F -x 3 -a -n 20
run "ib_read_bw -x 3" '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_read_bw -d mlx5_0 -F -x 3 -s 65536 -n 200
run "ib_write_lat -x 0" '^ *64 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_write_lat -d mlx5_0 -F -x 0 -s 64 -n 500
run "ib_send_lat -x 3" '^ *64 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_send_lat -d mlx5_0 -F -x 3 -s 64 -n 500
run "ib_send_lat -x 3 -a" '^ *8388608 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_send_lat -d mlx5_0 -F -x 3 -a -n 20
# Two machines: every request crosses UCX (skipped without libucp).
if ldconfig -p 2>/dev/null | grep -q 'libucp.so.0'; then
	SRV=(env SOFTDPU_MACHINE=127.0.0.3 UCX_TLS=tcp UCX_NET_DEVICES=lo)
	CLI=(env SOFTDPU_MACHINE=127.0.0.2 UCX_TLS=tcp UCX_NET_DEVICES=lo)
	# GID 3: ::ffff:<the machine's address>, RoCE v2 (docs/TOPOLOGY.md).
	run "ibv_rc_pingpong -g 0, two machines" "$pp" ibv_rc_pingpong -d mlx5_0 -n 100 -c -g 0
	run "ibv_rc_pingpong -g 3, two machines" "$pp" ibv_rc_pingpong -d mlx5_0 -n 100 -c -g 3
	run "ibv_ud_pingpong -g 0, two machines" "$pp" ibv_ud_pingpong -d mlx5_0 -n 100 -g 0
	run "ibv_ud_pingpong -g 3, two machines" "$pp" ibv_ud_pingpong -d mlx5_0 -n 100 -g 3
	run "ib_write_bw -x 3, two machines" '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_write_bw -d mlx5_0 -F -x 3 -s 65536 -n 200
	run "ib_read_bw -x 3, two machines" '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_read_bw -d mlx5_0 -F -x 3 -s 65536 -n 200
	run "ib_send_lat -x 0, two machines" '^ *64 +[0-9]+ +[0-9.]+ +[0-9.]+' ib_send_lat -d mlx5_0 -F -x 0 -s 64 -n 200
	SRV=() CLI=()
fi
echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
