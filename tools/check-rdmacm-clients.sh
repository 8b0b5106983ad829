#!/usr/bin/env bash
# Runs Debian's own librdmacm clients (rdma-core v44's rdmacm-utils, perftest
# with -R) unchanged against softdpu's librdmacm.so.1 and libibverbs.so.1,
# each as a server process and a client process of this machine connecting
# through 127.0.0.1, then a few as two machines (SOFTDPU_MACHINE, over UCX's
# TCP transport on loopback) when UCX is installed; and compares the library's exports, with their version
# nodes, to those of Debian's librdmacm.so.1.
# rping -v prints each ping's data, which the server reads from the client's
# buffer and writes back: the check counts the client's lines.
# Exit 77 (skipped) when rdmacm-utils or perftest is not installed.
# Usage: tools/check-rdmacm-clients.sh <directory holding librdmacm.so.1>
set -u
lib=${1:?usage: check-rdmacm-clients.sh <lib-dir>}
name=rdmacm_clients
for p in rping ucmatose rdma_server rdma_client cmtime udaddy ib_write_bw ib_send_bw; do
	if [ ! -x "/usr/bin/$p" ]; then
		echo "$name: /usr/bin/$p not installed (rdmacm-utils, perftest), skipped"
		echo "$name: 0 passed, 0 failed"
		exit 77
	fi
done
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY SOFTDPU_MACHINE
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
# A sanitized build: the (uninstrumented) programs must load the ASan runtime first.
asan=$(ldd "$lib/librdmacm.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	# The clients never free some of what they allocate (perftest's buffers):
	# their leaks, not the library's (whose own tests run with leak checks).
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Below the kernel's ephemeral range, as the other client checks.
port=$((20000 + $$ % 12000))
pass=0
fail=0

# A listener of softdpu's librdmacm is an abstract unix socket named after its
# port, and the IP it is bound to if any (src/rdmacm/cm_wire.c): wait until
# one listens on the port.
wait_listen() {
	for _ in $(seq 400); do
		grep -Eq " 00010000 0005 .*@softdpu-rdmacm[^ ]*-ps[0-9a-f]+-$1(@[^ ]*)?\$" /proc/net/unix && return 0
		sleep 0.05
	done
	return 1
}

report() { # <ok> <label> <detail>
	if [ "$1" -eq 1 ]; then
		pass=$((pass + 1))
		echo "ok   $2${3:+: $3}"
	else
		fail=$((fail + 1))
		echo "FAIL $2"
		echo "--- client"; cat "$tmp/c"; echo "--- server"; cat "$tmp/s"
	fi
}

# run <label> <expect-regex> <server command...> -- <client command...>:
# {port} in either command is the test's port. Both must exit 0 and the
# client's output match the regex.
run() {
	local label=$1 expect=$2 t0=$SECONDS srv=() cli=() a spid rc src
	shift 2
	port=$((port + 1))
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("${1//\{port\}/$port}"); shift; done
	shift
	for a in "$@"; do cli+=("${a//\{port\}/$port}"); done
	env "${SRV[@]}" LD_LIBRARY_PATH="$lib" timeout 60 "${srv[@]}" >"$tmp/s" 2>&1 &
	spid=$!
	wait_listen "$port" || echo "$label: the server did not listen"
	env "${CLI[@]}" LD_LIBRARY_PATH="$lib" timeout 60 "${cli[@]}" >"$tmp/c" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -Eq -- "$expect" "$tmp/c"; then
		report 1 "$label ($((SECONDS - t0)) s)" "$(grep -E -- "$expect" "$tmp/c" | tail -1 | tr -s ' ')"
	else
		echo "client exit $rc, server exit $src (124: timed out)"
		report 0 "$label"
	fi
}

SRV=() CLI=()
# Exports: the same names under the same version nodes as Debian's library.
exports() {
	objdump -T "$1" | awk '$0 !~ /\*UND\*/ && NF >= 7 {print $(NF-1), $NF}' | sort
}
: >"$tmp/c"; : >"$tmp/s"
if [ -e /usr/lib/x86_64-linux-gnu/librdmacm.so.1 ] || [ -e /lib/x86_64-linux-gnu/librdmacm.so.1 ]; then
	deb=$(ls /usr/lib/*/librdmacm.so.1 /lib/*/librdmacm.so.1 2>/dev/null | head -1)
	if diff <(exports "$deb") <(exports "$lib/librdmacm.so.1") >"$tmp/c"; then
		report 1 "exports" "$(exports "$lib/librdmacm.so.1" | wc -l) symbols and version nodes as $deb"
	else
		report 0 "exports"
	fi
fi

if readelf -d "$lib/librdmacm.so.1" | grep -q 'Library soname: \[librdmacm.so.1\]'; then
	report 1 "SONAME librdmacm.so.1"
else
	report 0 "SONAME librdmacm.so.1"
fi

run "rping -v -C 100" '^ping data: rdma-ping-99: ' \
	rping -s -a 127.0.0.1 -p {port} -v -C 100 -- rping -c -a 127.0.0.1 -p {port} -v -C 100
run "ucmatose -c 4 -C 20" '^return status 0' \
	ucmatose -p {port} -c 4 -C 20 -- ucmatose -s 127.0.0.1 -p {port} -c 4 -C 20
run "ucmatose -m (migrate)" '^return status 0' \
	ucmatose -p {port} -c 2 -C 10 -m -- ucmatose -s 127.0.0.1 -p {port} -c 2 -C 10 -m
run "rdma_server / rdma_client" '^rdma_client: end 0' \
	rdma_server -p {port} -- rdma_client -s 127.0.0.1 -p {port}
bw='^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+'
run "ib_write_bw -R" "$bw" ib_write_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
	ib_write_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.1
run "ib_send_bw -R" "$bw" ib_send_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
	ib_send_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.1
run "ib_read_bw -R" "$bw" ib_read_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
	ib_read_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.1
run "ib_send_lat -R" '^ *64 +[0-9]+ +[0-9.]+' ib_send_lat -R -d mlx5_0 -F -s 64 -n 200 -p {port} -- \
	ib_send_lat -R -d mlx5_0 -F -s 64 -n 200 -p {port} 127.0.0.1

# cmtime's server serves until it is stopped: the client's table is the result.
port=$((port + 1))
LD_LIBRARY_PATH=$lib timeout 60 cmtime -p "$port" -c 50 >"$tmp/s" 2>&1 &
spid=$!
wait_listen "$port" || echo "cmtime: the server did not listen"
LD_LIBRARY_PATH=$lib timeout 60 cmtime -s 127.0.0.1 -p "$port" -c 50 >"$tmp/c" 2>&1
rc=$?
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
if [ $rc -eq 0 ] && grep -Eq '^connect +: ' "$tmp/c" && grep -Eq '^disconnect +: ' "$tmp/c"; then
	report 1 "cmtime -c 50" "$(grep -E '^connect +: ' "$tmp/c" | tr -s ' ')"
else
	echo "cmtime client exit $rc"
	report 0 "cmtime -c 50"
fi

# UD (RDMA_PS_UDP, udaddy's fixed port 7174): the service lookup alone. With
# messages, udaddy's server answers through ibv_create_ah_from_wc, which the
# verbs library does not have.
LD_LIBRARY_PATH=$lib timeout 60 udaddy -C 0 >"$tmp/s" 2>&1 &
spid=$!
wait_listen 7174 || echo "udaddy: the server did not listen"
LD_LIBRARY_PATH=$lib timeout 60 udaddy -s 127.0.0.1 -C 0 >"$tmp/c" 2>&1
rc=$?
wait "$spid"
src=$?
if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -q '^return status 0' "$tmp/c" && grep -q '^return status 0' "$tmp/s"; then
	report 1 "udaddy -C 0" "return status 0"
else
	echo "udaddy client exit $rc, server exit $src"
	report 0 "udaddy -C 0"
fi

# A port nobody listens on: rping reports the IB CM's reject (invalid service ID).
port=$((port + 1))
LD_LIBRARY_PATH=$lib timeout 60 rping -c -a 127.0.0.1 -p "$port" -C 1 >"$tmp/c" 2>&1
: >"$tmp/s"
if grep -q 'cma event RDMA_CM_EVENT_REJECTED, error 8' "$tmp/c"; then
	report 1 "rping to a port nobody listens on" "REJECTED, error 8"
else
	report 0 "rping to a port nobody listens on"
fi

# Two machines (SOFTDPU_MACHINE 127.0.0.3 and 127.0.0.2) when UCX is installed:
# the CM reaches the other machine's port by its address, and the QPs' work
# crosses UCX's TCP transport on loopback.
if ldconfig -p 2>/dev/null | grep -q 'libucp.so.0'; then
	SRV=(SOFTDPU_MACHINE=127.0.0.3 UCX_TLS=tcp UCX_NET_DEVICES=lo)
	CLI=(SOFTDPU_MACHINE=127.0.0.2 UCX_TLS=tcp UCX_NET_DEVICES=lo)
	run "rping -v -C 20, two machines" '^ping data: rdma-ping-19: ' \
		rping -s -a 127.0.0.3 -p {port} -v -C 20 -- rping -c -a 127.0.0.3 -p {port} -v -C 20
	# Not in a sanitized build: there the verbs' UCX path is slow enough for
	# UCX's endpoint timeout to end a run now and then (the CM is done by then).
	if [ -z "$asan" ]; then
		run "ib_write_bw -R, two machines" "$bw" ib_write_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
			ib_write_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.3
	fi
	SRV=() CLI=()
fi

echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
