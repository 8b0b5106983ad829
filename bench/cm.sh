#!/usr/bin/env bash
# The RDMA connection manager against plain TCP on loopback, in one run
# (docs/PERFORMANCE.md, "The RDMA connection manager"):
#   - connection setup: Debian's cmtime (N connections at once through
#     softdpu's librdmacm: address, route, QP, connect) against N TCP
#     connections opened at once (bench_cm_ref connect);
#   - rping's exchange: rping -C N -S size (a SEND, an RDMA READ, an RDMA
#     WRITE and a SEND an iteration, event-driven through completion
#     channels) against the same four messages over TCP (bench_cm_ref pingpong);
#   - perftest with and without the CM: ib_write_bw -R against ib_write_bw -x 3.
# Ratios are softdpu's time over TCP's (lower is better) and -R over plain.
# Usage: bench/cm.sh <build-dir> [--quick]
set -uo pipefail

build=${1:-build}
quick=0
[ "${2:-}" = "--quick" ] && quick=1
lib=$build/src
ref=$build/bench/bench_cm_ref
for x in "$lib/librdmacm.so.1" "$lib/libibverbs.so.1" "$ref"; do
	[ -e "$x" ] || { echo "bench/cm.sh: $x not built (run ninja -C $build)" >&2; exit 1; }
done
for p in cmtime rping ib_write_bw; do
	command -v "$p" >/dev/null || { echo "bench/cm.sh: $p not installed (rdmacm-utils, perftest)" >&2; exit 1; }
done
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY SOFTDPU_MACHINE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((24000 + $$ % 8000))
conns=200 iters=2000 bw_iters=20000
[ $quick = 1 ] && conns=20 iters=50 bw_iters=200
fail=0

# A listener of softdpu's librdmacm is an abstract unix socket named after its port (src/rdmacm).
cm_wait() {
	for _ in $(seq 400); do
		grep -Eq "@softdpu-rdmacm[^ ]*-ps[0-9a-f]+-$1(@[^ ]*)?\$" /proc/net/unix && return 0
		sleep 0.05
	done
	return 1
}
ms_now() { echo $(($(date +%s%N) / 1000000)); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2fx", a / b }'; }

echo "softdpu RDMA CM benchmarks — two processes of this machine, build $build"
echo

echo "== connection setup, $conns at once (us per connection; ratio: softdpu over TCP) =="
port=$((port + 1))
LD_LIBRARY_PATH=$lib timeout 120 cmtime -p "$port" -c "$conns" >"$tmp/s" 2>&1 &
spid=$!
cm_wait "$port" || echo "cmtime server did not listen" >&2
LD_LIBRARY_PATH=$lib timeout 120 cmtime -s 127.0.0.1 -p "$port" -c "$conns" >"$tmp/c" 2>&1 || fail=1
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
cm=$(awk '$1 == "connect" { print $NF }' "$tmp/c")
setup=$(awk '$2 == ":" || $3 == ":" { v = $NF } /^(resolve addr|resolve route|create qp|connect)/ { s += $NF } END { print s }' "$tmp/c")
tcp=$("$ref" connect "$conns" | awk '{ print $NF }') || fail=1
printf "%-34s %10s\n" "cmtime connect (us/conn)" "${cm:--}"
printf "%-34s %10s\n" "cmtime resolve+qp+connect (us/conn)" "${setup:--}"
printf "%-34s %10s\n" "TCP connect+accept (us/conn)" "${tcp:--}"
printf "%-34s %10s\n" "ratio (connect)" "$(ratio "$cm" "$tcp")"
echo

echo "== rping's exchange, $iters iterations (us per iteration; ratio: rping over TCP) =="
printf "%8s %12s %12s %8s\n" size rping tcp ratio
# The time per iteration includes the connection's setup and teardown,
# spread over the iterations. From 2 KiB rping's two buffers share pages.
for s in 64 1024 4096 65535; do
	port=$((port + 1))
	LD_LIBRARY_PATH=$lib timeout 120 rping -s -a 127.0.0.1 -p "$port" -C "$iters" -S "$s" >/dev/null 2>&1 &
	spid=$!
	cm_wait "$port" || echo "rping server did not listen" >&2
	t0=$(ms_now)
	LD_LIBRARY_PATH=$lib timeout 120 rping -c -a 127.0.0.1 -p "$port" -C "$iters" -S "$s" >/dev/null 2>&1 || fail=1
	t1=$(ms_now)
	wait "$spid" || fail=1
	rp=$(awk -v t="$((t1 - t0))" -v n="$iters" 'BEGIN { printf "%.1f", t * 1000 / n }')
	tp=$("$ref" pingpong "$iters" "$s" | awk '{ print $NF }') || fail=1
	printf "%8s %12s %12s %8s\n" "$s" "$rp" "$tp" "$(ratio "$rp" "$tp")"
done
echo

echo "== ib_write_bw with the CM (-R) and without (-x 3), MB/s =="
printf "%8s %12s %12s %8s\n" size "-R" "-x 3" ratio
for s in 64 65536; do
	n=$bw_iters
	[ "$s" -gt 4096 ] && n=$((bw_iters / 10 > 200 ? bw_iters / 10 : 200))
	port=$((port + 1))
	LD_LIBRARY_PATH=$lib timeout 120 ib_write_bw -R -d mlx5_0 -F -s "$s" -n "$n" -p "$port" >/dev/null 2>&1 &
	spid=$!
	cm_wait "$port" || echo "ib_write_bw -R server did not listen" >&2
	r=$(LD_LIBRARY_PATH=$lib timeout 120 ib_write_bw -R -d mlx5_0 -F -s "$s" -n "$n" -p "$port" 127.0.0.1 2>&1 |
		awk -v s="$s" '$1 == s && NF >= 5 { print $4; exit }') || fail=1
	wait "$spid" || fail=1
	port=$((port + 1))
	LD_LIBRARY_PATH=$lib timeout 120 ib_write_bw -x 3 -d mlx5_0 -F -s "$s" -n "$n" -p "$port" >/dev/null 2>&1 &
	spid=$!
	sleep 0.5
	p=$(LD_LIBRARY_PATH=$lib timeout 120 ib_write_bw -x 3 -d mlx5_0 -F -s "$s" -n "$n" -p "$port" 127.0.0.1 2>&1 |
		awk -v s="$s" '$1 == s && NF >= 5 { print $4; exit }') || fail=1
	wait "$spid" || fail=1
	printf "%8s %12s %12s %8s\n" "$s" "${r:--}" "${p:--}" "$(ratio "$r" "$p")"
	[ -n "$r" ] && [ -n "$p" ] || fail=1
done
exit $fail
