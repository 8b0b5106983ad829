#!/usr/bin/env bash
# Runs Debian's libfabric (libfabric1, libfabric-bin) unchanged over softdpu's
# libibverbs.so.1, libmlx5.so.1 and librdmacm.so.1: fi_info must list the
# verbs provider on softdpu's device, and fi_pingpong must pass between a
# server and a client process of this machine through 127.0.0.1 with its data
# checks on (-c: every message's bytes compared), over the verbs provider's
# MSG endpoints (RC QPs connected by the RDMA CM) and over ofi_rxm's RDM
# endpoints on top of them.
# Exit 77 (skipped) when libfabric-bin is not installed.
# Usage: tools/check-libfabric.sh <directory holding librdmacm.so.1>
set -u
lib=${1:?usage: check-libfabric.sh <lib-dir>}
name=libfabric_clients
for p in fi_info fi_pingpong; do
	if [ ! -x "/usr/bin/$p" ]; then
		echo "$name: /usr/bin/$p not installed (libfabric-bin), skipped"
		echo "$name: 0 passed, 0 failed"
		exit 77
	fi
done
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY SOFTDPU_MACHINE FI_PROVIDER FI_LOG_LEVEL
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
export LD_LIBRARY_PATH="$lib"
# A sanitized build: the (uninstrumented) programs must load the ASan runtime first.
asan=$(ldd "$lib/librdmacm.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	# libfabric keeps some of its allocations to the end: its leaks, not the
	# library's (whose own tests run with leak checks).
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fi_pingpong's control connection is TCP: a port below the kernel's ephemeral range.
port=$((20000 + ($$ * 7) % 12000))
pass=0
fail=0

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

# Whether a TCP socket listens on port $1 (the server's control socket).
wait_tcp_listen() {
	local hex
	hex=$(printf '%04X' "$1")
	for _ in $(seq 400); do
		grep -q ":$hex 00000000:0000 0A" /proc/net/tcp && return 0
		sleep 0.05
	done
	return 1
}

# The verbs provider sees softdpu's device: a MSG (RC) domain on mlx5_0.
timeout 60 fi_info -p verbs >"$tmp/c" 2>&1
rc=$?
: >"$tmp/s"
if [ $rc -eq 0 ] && grep -Eq '^ *domain: mlx5_0$' "$tmp/c" && grep -q 'FI_EP_MSG' "$tmp/c"; then
	report 1 "fi_info -p verbs" "$(grep -c '^provider: ' "$tmp/c") entries, mlx5_0 with FI_EP_MSG"
else
	echo "fi_info exit $rc"
	report 0 "fi_info -p verbs"
fi

# pingpong <label> <fi_pingpong options...>: every size from 64 B to 1 MiB, data checked.
pingpong() {
	local label=$1 spid rc src
	shift
	port=$((port + 1))
	timeout 120 fi_pingpong "$@" -c -I 20 -B "$port" >"$tmp/s" 2>&1 &
	spid=$!
	wait_tcp_listen "$port" || echo "$label: the server did not listen"
	timeout 120 fi_pingpong "$@" -c -I 20 -P "$port" 127.0.0.1 >"$tmp/c" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -Eq '^1m +20 +=20 ' "$tmp/c" && grep -Eq '^1m +20 +=20 ' "$tmp/s"; then
		report 1 "fi_pingpong $*" "$(grep -Ec '^[0-9]+[km]? +20 +=20 ' "$tmp/c") sizes, 64 B to 1 MiB"
	else
		echo "client exit $rc, server exit $src (124: timed out)"
		report 0 "fi_pingpong $*"
	fi
}

pingpong msg -p verbs -e msg
pingpong rdm -p "verbs;ofi_rxm" -e rdm

echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
