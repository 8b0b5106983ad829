#!/usr/bin/env bash
# UCX's rc_mlx5 transport (Debian's UCX, unchanged) against softdpu's
# libraries: ucx_info lists it on mlx5_0:1; ucx_perftest's uct tests over it
# run between two processes; and libucx-dev's ucp_hello_world, built here,
# moves its test string between two processes over the rc_mlx5 lane (eager,
# and rendezvous by RDMA read and by RDMA write), the string compared byte for
# byte. rc_mlx5 builds its receive queue as a DevX RMP and its QPs as DevX QPs
# on it (docs/STATUS.md). ucp needs a second transport for its wireup
# messages: ud_mlx5, whose receive CQ UCX arms itself (the CQ doorbell of
# cq_uar) and waits on from its async thread. ucp_hello_world also runs over
# ud_mlx5 alone.
# Exit 77 (skipped) without UCX's tools and examples, a compiler, or the
# device nodes UCX requires (softdpu-devnodes).
# Usage: tools/check-ucx-rc-mlx5.sh <directory holding libibverbs.so.1>
set -u
lib=${1:?usage: check-ucx-rc-mlx5.sh <lib-dir>}
name=ucx_rc_mlx5
ex=/usr/share/doc/libucx-dev/examples
if ! command -v ucx_info >/dev/null || ! command -v ucx_perftest >/dev/null || [ ! -f "$ex/ucp_hello_world.c" ] ||
	! command -v cc >/dev/null || [ ! -c /dev/infiniband/uverbs0 ]; then
	echo "$name: UCX tools, libucx-dev examples, a compiler or /dev/infiniband nodes missing, skipped"
	echo "$name: 0 passed, 0 failed"
	exit 77
fi
lib=$(cd "$lib" && pwd -P) || exit 1
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY UCX_TLS UCX_NET_DEVICES UCX_RNDV_SCHEME
export LD_LIBRARY_PATH=$lib SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
# A sanitized build: the (uninstrumented) programs must load the ASan runtime first.
asan=$(ldd "$lib/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	# UCX's own allocations live to exit: its leaks, not the library's.
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

ucx_info -d -t rc_mlx5 >"$tmp/info" 2>&1
if grep -q 'Transport: rc_mlx5' "$tmp/info" && grep -q 'Device: mlx5_0:1' "$tmp/info"; then ok; else
	bad "ucx_info -d -t rc_mlx5 does not list rc_mlx5 on mlx5_0:1"; fi

# ucx_perftest <test args>: both sides exit 0 and the client prints its final line.
perftest() {
	local p
	p=$(port)
	timeout 120 ucx_perftest -p "$p" >"$tmp/srv" 2>&1 &
	pids+=($!)
	sleep 1
	if timeout 100 ucx_perftest -p "$p" -d mlx5_0:1 -x rc_mlx5 "$@" -n 100 -w 5 127.0.0.1 >"$tmp/cli" 2>&1 &&
		wait "${pids[-1]}" && grep -q '^Final:' "$tmp/cli"; then ok; else
		bad "ucx_perftest -x rc_mlx5 $*"; tail -n 5 "$tmp/cli" "$tmp/srv"; fi
}
perftest -t am_lat
perftest -t put_lat
perftest -t put_bw -D zcopy -s 65536
perftest -t get -D zcopy -s 65536
perftest -t am_bw -D bcopy -s 4096

if cc -O1 -o "$tmp/hello" "$ex/ucp_hello_world.c" -I"$ex" -lucp -luct -lucs 2>"$tmp/cc"; then ok; else
	bad "cannot build ucp_hello_world"; cat "$tmp/cc"; fi
# hello <rndv scheme> <size> [<UCX_TLS> <lane>]: the client prints the server's string whole, over that lane
# (rc_mlx5 with ud_mlx5 for wireup by default).
hello() {
	local tls=${3:-rc_mlx5,ud_mlx5} lane=${4:-rc_mlx5}
	local p
	p=$(port)
	export UCX_TLS=$tls UCX_NET_DEVICES=mlx5_0:1 UCX_RNDV_SCHEME=$1
	timeout 60 "$tmp/hello" -p "$p" -s "$2" >"$tmp/srv" 2>&1 &
	pids+=($!)
	sleep 1
	UCX_LOG_LEVEL=info timeout 50 "$tmp/hello" -n 127.0.0.1 -p "$p" -s "$2" >"$tmp/cli" 2>&1
	local rc=$?
	wait "${pids[-1]}"
	unset UCX_TLS UCX_NET_DEVICES UCX_RNDV_SCHEME
	if [ $rc -eq 0 ] && grep -q "tag($lane/mlx5_0:1)" "$tmp/cli" &&
		python3 -c 'import sys
n = int(sys.argv[2])
want = "".join(chr(65 + i % 26) for i in range(n - 1))
sys.exit(0 if want in open(sys.argv[1]).read() else 1)' "$tmp/cli" "$2"; then ok; else
		bad "ucp_hello_world over $tls, $1, $2 bytes"; grep -i 'error' "$tmp/cli" "$tmp/srv" | head -n 5; fi
}
hello get_zcopy 16
hello get_zcopy 300000
hello put_zcopy 300000
hello get_zcopy 4000000
hello get_zcopy 16 ud_mlx5 ud_mlx5
hello get_zcopy 300000 ud_mlx5 ud_mlx5

echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
