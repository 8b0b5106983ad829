#!/usr/bin/env bash
# Runs Debian's own librdmacm clients (rdma-core v44's rdmacm-utils with
# rstream and riostream over rsockets, perftest with -R) unchanged against softdpu's librdmacm.so.1 and libibverbs.so.1,
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
for p in rping ucmatose rdma_server rdma_client cmtime udaddy mckey rstream riostream ib_write_bw ib_send_bw; do
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
		report 1 "$label ($((SECONDS - t0)) s)" "$(grep -E -- "$expect" "$tmp/c" | tail -1 | tr -s ' ' | cut -c1-100)"
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

# -V: the client compares what came back with what it sent, every ping.
run "rping -v -V -C 1000" '^ping data: rdma-ping-999: ' \
	rping -s -a 127.0.0.1 -p {port} -v -V -C 1000 -- rping -c -a 127.0.0.1 -p {port} -v -V -C 1000
# From 2 KiB the two buffers rping registers share pages (malloc'd side by side).
for size in 4096 65535; do
	run "rping -V -S $size -C 200" "^ping data: rdma-ping-199: " \
		rping -s -a 127.0.0.1 -p {port} -v -V -S $size -C 200 -- rping -c -a 127.0.0.1 -p {port} -v -V -S $size -C 200
done
run "ucmatose -c 4 -C 20" '^return status 0' \
	ucmatose -p {port} -c 4 -C 20 -- ucmatose -s 127.0.0.1 -p {port} -c 4 -C 20
run "ucmatose -m (migrate)" '^return status 0' \
	ucmatose -p {port} -c 2 -C 10 -m -- ucmatose -s 127.0.0.1 -p {port} -c 2 -C 10 -m
run "rdma_server / rdma_client" '^rdma_client: end 0' \
	rdma_server -p {port} -- rdma_client -s 127.0.0.1 -p {port}
# rsockets: rstream's own tests (latency and bandwidth, 64 B to 1 MiB, non-blocking
# calls), then custom sizes with -T v (the receiver checks every byte): blocking,
# async (rpoll), and messages larger than a small ring (-B).
run "rstream (lat, bw)" '^1m_bw +1m ' rstream -p {port} -- rstream -s 127.0.0.1 -p {port}
run "rstream -S 64 -C 1000 -T v" '^custom +64 +1k ' \
	rstream -p {port} -S 64 -C 1000 -T v -- rstream -s 127.0.0.1 -p {port} -S 64 -C 1000 -T v
run "rstream -S 1000000 -C 20 -T b -T v" '^custom +976k +20 ' \
	rstream -p {port} -S 1000000 -C 20 -T b -T v -- rstream -s 127.0.0.1 -p {port} -S 1000000 -C 20 -T b -T v
run "rstream -S 65536 -C 200 -T a -T v" '^custom +64k +200 ' \
	rstream -p {port} -S 65536 -C 200 -T a -T v -- rstream -s 127.0.0.1 -p {port} -S 65536 -C 200 -T a -T v
run "rstream -S 100000 -B 16384 -T v" '^custom +97k +50 ' \
	rstream -p {port} -S 100000 -C 50 -B 16384 -T v -- rstream -s 127.0.0.1 -p {port} -S 100000 -C 50 -B 16384 -T v
# riostream: riowrite into the peer's riomap'ed buffer, which the receiver
# watches in memory without a call. Its own tests map buffers of growing
# sizes over a heap where earlier ones were registered and freed.
run "riostream (lat, bw)" '^1m_bw +1m ' riostream -p {port} -- riostream -s 127.0.0.1 -p {port}
run "riostream -S 4096 -C 100 -T v" '^custom +4k +100 ' \
	riostream -p {port} -S 4096 -C 100 -T v -- riostream -s 127.0.0.1 -p {port} -S 4096 -C 100 -T v
run "riostream -S 1000000 -C 20 -T b -T v" '^custom +976k +20 ' \
	riostream -p {port} -S 1000000 -C 20 -T b -T v -- riostream -s 127.0.0.1 -p {port} -S 1000000 -C 20 -T b -T v
run "riostream -S 65536 -C 100 -T a -T v" '^custom +64k +100 ' \
	riostream -p {port} -S 65536 -C 100 -T a -T v -- riostream -s 127.0.0.1 -p {port} -S 65536 -C 100 -T a -T v
bw='^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+'
run "ib_write_bw -R" "$bw" ib_write_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
	ib_write_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.1
run "ib_send_bw -R" "$bw" ib_send_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
	ib_send_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.1
run "ib_read_bw -R" "$bw" ib_read_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} -- \
	ib_read_bw -R -d mlx5_0 -F -s 65536 -n 200 -p {port} 127.0.0.1
run "ib_send_lat -R" '^ *64 +[0-9]+ +[0-9.]+' ib_send_lat -R -d mlx5_0 -F -s 64 -n 200 -p {port} -- \
	ib_send_lat -R -d mlx5_0 -F -s 64 -n 200 -p {port} 127.0.0.1
run "ib_read_lat -R" '^ *64 +[0-9]+ +[0-9.]+' ib_read_lat -R -d mlx5_0 -F -s 64 -n 200 -p {port} -- \
	ib_read_lat -R -d mlx5_0 -F -s 64 -n 200 -p {port} 127.0.0.1

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

# UD (RDMA_PS_UDP, udaddy's fixed port 7174): the service lookup, then
# messages the server answers through ibv_create_ah_from_wc. The server binds
# ud_bind when set, the client sends to ud_dst (127.0.0.1); SRV and CLI as run's.
udaddy_run() { # <label> <args...>
	local label=$1
	shift
	env "${SRV[@]}" LD_LIBRARY_PATH="$lib" timeout 60 udaddy ${ud_bind:+-b "$ud_bind"} "$@" >"$tmp/s" 2>&1 &
	spid=$!
	wait_listen 7174 || echo "udaddy: the server did not listen"
	env "${CLI[@]}" LD_LIBRARY_PATH="$lib" timeout 60 udaddy -s "${ud_dst:-127.0.0.1}" "$@" >"$tmp/c" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -q '^return status 0' "$tmp/c" && grep -q '^return status 0' "$tmp/s" &&
		{ [ "$2" = 0 ] || grep -q '^data transfers complete' "$tmp/s"; }; then
		report 1 "$label" "return status 0"
	else
		echo "udaddy client exit $rc, server exit $src"
		report 0 "$label"
	fi
}
udaddy_run "udaddy -C 0" -C 0
udaddy_run "udaddy" -C 10
udaddy_run "udaddy -C 10 -c 4" -C 10 -c 4

# Multicast (mckey): a receiver joins a group of its own (so that runs at the
# same time do not share it), then a sender joins and sends to it; the
# receiver counts every message. Neither listens: the receiver's join line
# (line-buffered, stdbuf) tells that it is in the group. mc_group overrides
# the group option (-m <address>, or -M <GID>), mc_srv_bind / mc_cli_bind
# give each a -b address.
mckey_run() { # <label> <args...>
	local label=$1 group i
	shift
	group=${mc_group:-"-m 239.77.$((($$ >> 8) % 256)).$(($$ % 256))"}
	env "${SRV[@]}" LD_LIBRARY_PATH="$lib" timeout 60 stdbuf -oL mckey $group ${mc_srv_bind:+-b "$mc_srv_bind"} \
		"$@" >"$tmp/s" 2>&1 &
	spid=$!
	for i in $(seq 400); do
		grep -q '^mckey: joined' "$tmp/s" && break
		sleep 0.05
	done
	env "${CLI[@]}" LD_LIBRARY_PATH="$lib" timeout 60 mckey $group -s ${mc_cli_bind:+-b "$mc_cli_bind"} "$@" \
		>"$tmp/c" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -q '^data transfers complete' "$tmp/s" &&
		grep -q '^return status 0' "$tmp/s" && grep -q '^return status 0' "$tmp/c"; then
		report 1 "$label" "$(grep '^mckey: joined' "$tmp/s" | head -1)"
	else
		echo "mckey sender exit $rc, receiver exit $src"
		report 0 "$label"
	fi
}
SRV=() CLI=()
mckey_run "mckey -C 10" -C 10
mckey_run "mckey -c 2 -C 10 -l" -c 2 -C 10 -l

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
	run "rstream -S 200000 -C 10 -T v, two machines" '^custom +195k +10 ' \
		rstream -b 127.0.0.3 -p {port} -S 200000 -C 10 -T v -- rstream -s 127.0.0.3 -p {port} -S 200000 -C 10 -T v
	run "riostream -S 65536 -C 20 -T v, two machines" '^custom +64k +20 ' \
		riostream -b 127.0.0.3 -p {port} -S 65536 -C 20 -T v -- riostream -s 127.0.0.3 -p {port} -S 65536 -C 20 -T v
	ud_bind=127.0.0.3 ud_dst=127.0.0.3 udaddy_run "udaddy -C 10, two machines" -C 10
	# Multicast: the sender's machine sends a group's datagrams to the
	# network's other machines (SOFTDPU_MACHINES), whose members get them.
	SRV+=(SOFTDPU_MACHINES=127.0.0.2,127.0.0.3)
	CLI+=(SOFTDPU_MACHINES=127.0.0.2,127.0.0.3)
	mckey_run "mckey -m, two machines" -C 10
	# On InfiniBand ports (each machine's topology link=ib), the group by its GID (AF_IB).
	for m in 2 3; do
		echo "function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0" \
			"mac=02:53:44:0b:00:0$m ipv4=127.0.0.$m link=ib" >"$tmp/topo$m"
	done
	SRV+=(SOFTDPU_TOPOLOGY="$tmp/topo3")
	CLI+=(SOFTDPU_TOPOLOGY="$tmp/topo2")
	mc_group="-M ff0e::5344:$(printf %x $(($$ % 65536)))" mc_srv_bind=127.0.0.3 mc_cli_bind=127.0.0.2 \
		mckey_run "mckey -M, two machines on InfiniBand" -C 10
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
