#!/usr/bin/env bash
# What a DOCA RDMA job costs the CPU against what a perftest message costs,
# counted rather than timed: bench_rdma_doca (the responder on a thread,
# --local) and ib_write_bw / ib_read_bw's client, each under valgrind's
# callgrind with its cache simulation, 128 in flight, perftest at its default
# (a CQE per 100 messages). Counted: the library calls of each loop, with
# everything they call (the engine's run of the WQE too): DOCA's `doca_*`
# (submit, retrieve, and the READ loop's doca_buf_reset_data_len) against
# libibverbs' (`vb_*`: the ibv_wr_* calls perftest posts with, and
# ibv_poll_cq), not the two harnesses' own loops. Each program runs twice,
# with N and 2N messages, and the figures are the difference divided by N:
# one message in the loop, without the setup. Counts do not depend on the
# machine's load, where the rates of bench/rdma_doca.sh do (on a 2-vCPU VM
# a run moves by a third and more).
#
# Prints per case: instructions a message (DOCA, perftest) and their ratio
# perftest / DOCA (above 1: the job costs fewer), then L1 data misses a
# message (reads + writes, in valgrind's model of a 32 KiB L1).
#
# Usage: bench/rdma_doca_icount.sh <build-dir> [--iters N] [--whole]
#   <build-dir>  a release build (meson setup <dir> -Dbuildtype=release)
#   --iters      N (default 100000)
#   --whole      count the whole program, each harness's own loop too (its
#                responder thread, idle in the loop, included for DOCA)
set -uo pipefail

build=${1:-}
[ -n "$build" ] || { echo "usage: bench/rdma_doca_icount.sh <build-dir> [--iters N]" >&2; exit 2; }
shift
iters=100000
whole=0
while [ $# -gt 0 ]; do
	case "$1" in
	--iters) iters=${2:?--iters N}; shift 2 ;;
	--whole) whole=1; shift ;;
	*) echo "usage: bench/rdma_doca_icount.sh <build-dir> [--iters N] [--whole]" >&2; exit 2 ;;
	esac
done
build=$(cd "$build" && pwd -P)
lib=$build/src
doca=$build/bench/bench_rdma_doca
for t in valgrind ib_write_bw; do
	command -v "$t" >/dev/null || { echo "rdma_doca_icount: $t not found" >&2; exit 1; }
done
[ -x "$doca" ] || { echo "rdma_doca_icount: $doca not built" >&2; exit 1; }
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
port=$((20000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
SERVER_ENV=(env LD_LIBRARY_PATH="$lib")
cg=(valgrind --tool=callgrind --cache-sim=yes)
doca_only=(--toggle-collect='doca_*')
ib_only=(--toggle-collect='vb_*')
[ $whole = 1 ] && doca_only=() ib_only=()

# "Ir D1mr D1mw" of the callgrind output with the most instructions among $tmp/cg.* (the client, not `timeout`).
totals() {
	local f best="" bi=0 ir
	for f in "$tmp"/cg.*; do
		ir=$(awk '/^events:/ { for (i = 2; i <= NF; i++) e[$i] = i } /^(summary|totals):/ { print $(e["Ir"]) ; exit }' "$f")
		[ -n "$ir" ] && [ "$ir" -gt "$bi" ] && { bi=$ir; best=$f; }
	done
	[ -n "$best" ] || return 1
	awk '/^events:/ { for (i = 2; i <= NF; i++) e[$i] = i }
		/^(summary|totals):/ { print $(e["Ir"]), $(e["D1mr"]), $(e["D1mw"]); exit }' "$best"
	rm -f "$tmp"/cg.*
}

run_doca() { # op size n
	env LD_LIBRARY_PATH="$lib" "${cg[@]}" "${doca_only[@]}" --callgrind-out-file="$tmp/cg.%p" "$doca" \
		--op "$1" --size "$2" \
		--iters "$3" --depth 128 --local >/dev/null 2>"$tmp/vg" || { tail -n 3 "$tmp/vg" >&2; return 1; }
	totals
}

run_ib() { # op size n
	CLIENT_ENV=(env LD_LIBRARY_PATH="$lib" "${cg[@]}" "${ib_only[@]}" --trace-children=yes
		--callgrind-out-file="$tmp/cg.%p")
	pair_env "ib_${1}_bw" -d mlx5_0 -F -x 3 -s "$2" -n "$3" -t 128 >/dev/null || return 1
	totals
}

# Per message from two runs: (2N totals - N totals) / N, for each of the three counts.
per() { awk -v n="$iters" -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ");
	printf "%.0f %.2f\n", (y[1] - x[1]) / n, ((y[2] + y[3]) - (x[2] + x[3])) / n }'; }

echo "Per message in the loop, callgrind (N = $iters and 2N), build $build, 128 in flight," \
	"$([ $whole = 1 ] && echo "whole programs" || echo "library calls only")"
printf '%-6s %6s %12s %12s %7s %12s %12s\n' op size doca_instr ib_instr ratio doca_L1miss ib_L1miss
fail=0
for op in write read; do
	for s in 64 4096; do
		d1=$(run_doca "$op" "$s" "$iters") && d2=$(run_doca "$op" "$s" $((2 * iters))) || { fail=1; continue; }
		i1=$(run_ib "$op" "$s" "$iters") && i2=$(run_ib "$op" "$s" $((2 * iters))) || { fail=1; continue; }
		read -r di dm <<<"$(per "$d1" "$d2")"
		read -r ii im <<<"$(per "$i1" "$i2")"
		printf '%-6s %6s %12s %12s %7s %12s %12s\n' "$op" "$s" "$di" "$ii" "$(ratio "$ii" "$di")" "$dm" "$im"
	done
done
exit $fail
