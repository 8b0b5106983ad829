#!/usr/bin/env bash
# DOCA RDMA jobs against perftest on the same engine: bench_rdma_doca (two
# processes, one polled work queue, `depth` jobs in flight) beside
# ib_write_bw / ib_read_bw / ib_send_bw between two processes on softdpu's
# libibverbs. The ratio is of message rates (the same sizes, so of
# bandwidth too); target >= 0.9x (the job layer costs little). perftest asks
# for one completion per 100 messages by default; every DOCA job has its own,
# so perftest runs again with -Q 1 (a completion per message) and the last
# column is the ratio to that: what the job layer costs over verbs doing the
# same work.
#
# Usage: bench/rdma_doca.sh <build-dir> [--quick]
#   --quick  64 B only, few iterations: checks the harness runs.
set -uo pipefail

build=${1:-build}
quick=0
[ "${2:-}" = "--quick" ] && quick=1
lib=$build/src
doca=$build/bench/bench_rdma_doca
for x in "$lib/libibverbs.so.1" "$doca"; do
	[ -e "$x" ] || { echo "bench/rdma_doca.sh: $x not built (run ninja -C $build)" >&2; exit 1; }
done
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
sizes="64 4096 65536"
depth=128
[ $quick = 1 ] && sizes=64
port=$((20000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
SERVER_ENV=(env LD_LIBRARY_PATH="$lib")
CLIENT_ENV=(env LD_LIBRARY_PATH="$lib")

iters_for() {
	local n=$(((1 << 29) / $1))
	[ $quick = 1 ] && { echo 20000; return; }
	[ $n -lt 20000 ] && n=20000
	[ $n -gt 1000000 ] && n=1000000
	echo $n
}

echo "DOCA RDMA jobs and perftest, two processes, build $build, $depth in flight (perftest's -t $depth)"
printf '%-6s %8s %12s %14s %12s %14s %7s %12s %8s\n' op size doca_Mjobs/s doca_MB/s ib_Mmsg/s ib_MB/s ratio \
	ib_Q1_Mmsg/s ratio_Q1
fail=0
for op in write read send; do
	for s in $sizes; do
		n=$(iters_for "$s")
		d=$(env LD_LIBRARY_PATH="$lib" "$doca" --op "$op" --size "$s" --iters "$n" --depth "$depth") || fail=1
		ib=$(pair_env "ib_${op}_bw" -d mlx5_0 -F -x 3 -s "$s" -n "$n" -t "$depth") || fail=1
		q1=$(pair_env "ib_${op}_bw" -d mlx5_0 -F -x 3 -s "$s" -n "$n" -t "$depth" -Q 1) || fail=1
		iq=$(echo "$q1" | pt_field "$s" 5)
		dr=$(echo "$d" | awk '{ print $6 }')
		db=$(echo "$d" | awk '{ print $5 }')
		ir=$(echo "$ib" | pt_field "$s" 5)
		# perftest's MB/s are MiB/s; the bandwidth from its message rate, in MB/s as ours.
		irb=$(awk -v r="$ir" -v s="$s" 'BEGIN { if (r != "") printf "%.1f", r * s }')
		printf '%-6s %8s %12s %14s %12s %14s %7s %12s %8s\n' "$op" "$s" "$dr" "$db" "$ir" "$irb" "$(ratio "$dr" "$ir")" \
			"$iq" "$(ratio "$dr" "$iq")"
	done
done
exit $fail
