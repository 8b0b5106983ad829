#!/usr/bin/env bash
# RDMA between two processes of this machine, in one run: Debian's perftest
# (ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat) on softdpu's libibverbs, side by side
# with UCX's ucx_perftest (ucp_put_bw, ucp_get, ucp_put_lat over its shared-
# memory transports), memcpy of one core and a shared cache-line round trip.
# perftest's own figures are the headline; every row is a ratio to its peer.
# The ports are RoCE: perftest is given GID 3 (-x 3, the RoCE v2 entry of
# mlx5_0's IPv4 address), without which it cannot address a RoCE port.
#
# Usage: bench/rdma.sh <build-dir> [--quick]
#   --quick  a few sizes and few iterations: checks the harness runs, numbers
#            are not meaningful.
# Targets (docs/PERFORMANCE.md): write/read bandwidth >= 0.9x UCX at >= 1 MiB;
# >= 10 M 64 B writes/s; ib_write_lat <= 2x the cache-line round trip;
# ib_send_bw >= 0.8x ib_write_bw at 64 B and 64 KiB.
set -uo pipefail

build=${1:-build}
quick=0
[ "${2:-}" = "--quick" ] && quick=1
lib=$build/src
ref=$build/bench/bench_rdma_ref
for x in "$lib/libibverbs.so.1" "$ref"; do
	[ -e "$x" ] || { echo "bench/rdma.sh: $x not built (run ninja -C $build)" >&2; exit 1; }
done
for p in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat ucx_perftest; do
	command -v "$p" >/dev/null || { echo "bench/rdma.sh: $p not installed (perftest, ucx-utils)" >&2; exit 1; }
done
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY

if [ $quick = 1 ]; then
	sizes="64 1048576"
	bw_iters=200
	lat_iters=200
else
	sizes="64 512 4096 65536 262144 1048576 4194304"
	bw_iters=5000
	lat_iters=100000
fi
port=$((20000 + $$ % 20000))
# Iterations per size: about 1 GiB moved, at least bw_iters and at most 2 M
# messages, so small messages run long enough for a rate (not the start-up).
iters_for() {
	local n=$(((1 << 30) / $1))
	[ $quick = 1 ] && { echo "$bw_iters"; return; }
	[ $n -lt $bw_iters ] && n=$bw_iters
	[ $n -gt 2000000 ] && n=2000000
	echo $n
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# Runs a server and its client on a fresh port; the client's output goes to
# stdout. $1: "ib" (softdpu's libibverbs) or "ucx"; the rest: the command
# without the peer name and port.
ucx_tls=${RDMA_UCX_TLS:-posix,self}
pair() {
	local kind=$1
	shift
	# UCX over its shared-memory transport only, as the targets name it (RDMA_UCX_TLS overrides).
	SERVER_ENV=(env UCX_TLS="$ucx_tls") CLIENT_ENV=(env UCX_TLS="$ucx_tls")
	[ "$kind" = ib ] && SERVER_ENV=(env LD_LIBRARY_PATH="$lib") && CLIENT_ENV=(env LD_LIBRARY_PATH="$lib")
	pair_env "$@"
}

echo "softdpu RDMA benchmarks — two processes of this machine, build $build; UCX_TLS=$ucx_tls for ucx_perftest"
echo "perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null), UCX $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1)"
echo

"$ref" memcpy 64 4194304 >"$tmp/memcpy"
memcpy_of() { awk -v s="$1" '$1 == "memcpy_MBps" && $2 == s { print $3 }' "$tmp/memcpy"; }

fail=0
for op in write read; do
	case $op in
	write) pt=ib_write_bw ucx=ucp_put_bw ;;
	read) pt=ib_read_bw ucx=ucp_get ;;
	esac
	echo "== RDMA $op bandwidth (MB/s): $pt vs ucx_perftest $ucx vs memcpy =="
	printf '%-9s %12s %10s %12s %8s %12s %8s\n' size "$pt" "Mmsg/s" "$ucx" ratio memcpy ratio
	for s in $sizes; do
		n=$(iters_for "$s")
		ib=$(pair ib "$pt" -d mlx5_0 -F -x 3 -s "$s" -n "$n") || fail=1
		ibbw=$(echo "$ib" | pt_field "$s" 4)
		ibmr=$(echo "$ib" | pt_field "$s" 5)
		u=$(pair ucx ucx_perftest -t "$ucx" -s "$s" -n "$n") || fail=1
		ubw=$(echo "$u" | ucx_field 7)
		mc=$(memcpy_of "$s")
		printf '%-9s %12s %10s %12s %8s %12s %8s\n' "$s" "$ibbw" "$ibmr" "$ubw" "$(ratio "$ibbw" "$ubw")" \
			"$mc" "$(ratio "$ibbw" "$mc")"
	done
	echo
done

# SEND needs the responder's receives: the receiver polls and reposts one
# per message, so unlike a WRITE both processes must run. Three runs of each
# pair, one after the other, to show the spread a shared machine gives.
echo "== SEND against WRITE (MB/s): ib_send_bw vs ib_write_bw, three runs each =="
printf '%-9s %4s %12s %12s %8s\n' size run ib_send_bw ib_write_bw ratio
for s in 64 65536; do
	n=$([ "$s" = 64 ] && echo 1000000 || echo 20000)
	[ $quick = 1 ] && n=$bw_iters
	for r in 1 2 3; do
		sb=$(pair ib ib_send_bw -d mlx5_0 -F -x 3 -s "$s" -n "$n" | pt_field "$s" 4) || fail=1
		wb=$(pair ib ib_write_bw -d mlx5_0 -F -x 3 -s "$s" -n "$n" | pt_field "$s" 4) || fail=1
		printf '%-9s %4s %12s %12s %8s\n' "$s" "$r" "$sb" "$wb" "$(ratio "$sb" "$wb")"
	done
done
echo

echo "== 64 B RDMA write latency (us): ib_write_lat vs ucx_perftest ucp_put_lat vs a cache-line round trip =="
lat=$(pair ib ib_write_lat -d mlx5_0 -F -x 3 -s 64 -n "$lat_iters") || fail=1
ibt=$(echo "$lat" | pt_field 64 5)
u=$(pair ucx ucx_perftest -t ucp_put_lat -s 64 -n "$lat_iters") || fail=1
ut=$(echo "$u" | ucx_field 3)
"$ref" cacheline $([ $quick = 1 ] && echo 500) >"$tmp/cl"
rtt=$(awk '$1 == "cacheline_rtt_ns" { printf "%.3f", $2 / 1000 }' "$tmp/cl")
printf '%-28s %10s\n' "ib_write_lat t_typical" "$ibt" "ucp_put_lat median" "$ut" "cache-line round trip" "$rtt"
printf '%-28s %10s\n' "ib_write_lat / round trip" "$(ratio "$ibt" "$rtt")" "ib_write_lat / ucp_put_lat" "$(ratio "$ibt" "$ut")"
# Reported beside it (no peer of the same shape in ucx_perftest).
for t in ib_read_lat ib_send_lat; do
	l=$(pair ib "$t" -d mlx5_0 -F -x 3 -s 64 -n "$lat_iters" | pt_field 64 5) || fail=1
	printf '%-28s %10s\n' "$t t_typical" "$l"
done
exit $fail
