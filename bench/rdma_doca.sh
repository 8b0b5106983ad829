#!/usr/bin/env bash
# DOCA RDMA jobs against perftest on the same engine: bench_rdma_doca (two
# processes, one polled work queue, `depth` jobs in flight) beside
# ib_write_bw / ib_read_bw / ib_send_bw between two processes on softdpu's
# libibverbs. The ratio is of message rates (the same sizes, so of
# bandwidth too); target >= 0.9x (the job layer costs little). perftest asks
# for one completion per 100 messages by default; every DOCA job has its own,
# so perftest runs again with -Q 1 (a completion per message) and the last
# column is the ratio to that: what the job layer costs over verbs doing the
# same work. Each case runs `rounds` times, the three programs taking turns
# (so a spell of load on the machine hits all three), and every rate is the
# median of its rounds: one run on a 2-vCPU VM moves by a third and more.
# The ratios are the medians of each round's own ratio (a round's runs are
# a second apart, so they share the machine's state of the moment);
# best_ratio is the ratio of the best rounds: what each does undisturbed.
#
# Usage: bench/rdma_doca.sh <build-dir> [--quick] [--rounds N] [--ops "write read send"] [--sizes "64 4096 65536"]
#   --quick   64 B only, few iterations, one round: checks the harness runs.
#   --rounds  runs of each program per case (default 5)
#   --ops, --sizes  the cases to run (default all three of each)
set -uo pipefail

build=${1:-build}
shift || true
quick=0
rounds=5
ops="write read send"
sizes="64 4096 65536"
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1; rounds=1; sizes=64; shift ;;
	--rounds) rounds=${2:?--rounds N}; shift 2 ;;
	--ops) ops=${2:?--ops LIST}; shift 2 ;;
	--sizes) sizes=${2:?--sizes LIST}; shift 2 ;;
	*) echo "usage: bench/rdma_doca.sh <build-dir> [--quick] [--rounds N] [--ops LIST] [--sizes LIST]" >&2; exit 2 ;;
	esac
done
lib=$build/src
doca=$build/bench/bench_rdma_doca
for x in "$lib/libibverbs.so.1" "$doca"; do
	[ -e "$x" ] || { echo "bench/rdma_doca.sh: $x not built (run ninja -C $build)" >&2; exit 1; }
done
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
depth=128
port=$((20000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
SERVER_ENV=(env LD_LIBRARY_PATH="$lib")
CLIENT_ENV=(env LD_LIBRARY_PATH="$lib")

iters_for() {
	local n=$(((1 << 30) / $1))
	[ $quick = 1 ] && { echo 20000; return; }
	[ $n -lt 50000 ] && n=50000
	[ $n -gt 2000000 ] && n=2000000
	echo $n
}

# The median of the numbers given (an empty one when a run failed), and the largest.
median() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# The median of the rounds' ratios, as ratio prints one.
ratio_med() { local m; m=$(median "$@"); if [ -n "$m" ]; then printf '%.2fx' "$m"; else printf -- '-'; fi; }
best() { printf '%s\n' "$@" | grep -v '^$' | sort -g | tail -n 1; }

echo "DOCA RDMA jobs and perftest, two processes, build $build, $depth in flight (perftest's -t $depth)," \
	"median of $rounds rounds"
printf '%-6s %8s %12s %14s %12s %14s %7s %10s %12s %8s\n' op size doca_Mjobs/s doca_MB/s ib_Mmsg/s ib_MB/s ratio \
	best_ratio ib_Q1_Mmsg/s ratio_Q1
fail=0
for op in $ops; do
	for s in $sizes; do
		n=$(iters_for "$s")
		drs=() irs=() iqs=() rr=() rq=()
		for _ in $(seq "$rounds"); do
			d=$(env LD_LIBRARY_PATH="$lib" "$doca" --op "$op" --size "$s" --iters "$n" --depth "$depth") || fail=1
			ib=$(pair_env "ib_${op}_bw" -d mlx5_0 -F -x 3 -s "$s" -n "$n" -t "$depth") || fail=1
			q1=$(pair_env "ib_${op}_bw" -d mlx5_0 -F -x 3 -s "$s" -n "$n" -t "$depth" -Q 1) || fail=1
			drs+=("$(echo "$d" | awk '{ print $6 }')")
			irs+=("$(echo "$ib" | pt_field "$s" 5)")
			iqs+=("$(echo "$q1" | pt_field "$s" 5)")
			rr+=("$(ratio "${drs[-1]}" "${irs[-1]}" | tr -d x)")
			rq+=("$(ratio "${drs[-1]}" "${iqs[-1]}" | tr -d x)")
		done
		dr=$(median "${drs[@]}")
		ir=$(median "${irs[@]}")
		iq=$(median "${iqs[@]}")
		# MB/s from the message rates, perftest's as ours (its own MB/s are MiB/s).
		db=$(awk -v r="$dr" -v s="$s" 'BEGIN { if (r != "") printf "%.1f", r * s }')
		irb=$(awk -v r="$ir" -v s="$s" 'BEGIN { if (r != "") printf "%.1f", r * s }')
		printf '%-6s %8s %12s %14s %12s %14s %7s %10s %12s %8s\n' "$op" "$s" "$dr" "$db" "$ir" "$irb" \
			"$(ratio_med "${rr[@]/-/}")" "$(ratio "$(best "${drs[@]}")" "$(best "${irs[@]}")")" "$iq" \
			"$(ratio_med "${rq[@]/-/}")"
	done
done
exit $fail
