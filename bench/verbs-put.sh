#!/usr/bin/env bash
# 64 B RDMA WRITE message rate of softdpu's verbs between two processes,
# driven the way ucx_perftest drives UCP (lists of 32 WRs, the last one
# signalled), side by side with ucx_perftest ucp_put_bw 64 B over UCX's
# shared-memory transport (UCX_TLS=posix,self) between two processes, in
# alternating rounds of one run. The verbs side is bench_icount's
# write_list32 loop timed (--seconds); its one-WR-per-call loops (write_wr,
# write_post_send: perftest's way) are printed beside it.
#
# Usage: bench/verbs-put.sh <release-build-dir> [--rounds N] [--seconds S]
set -uo pipefail

build=${1:?usage: bench/verbs-put.sh <release-build-dir> [--rounds N] [--seconds S]}
shift
rounds=3
secs=2
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	*) echo "usage: bench/verbs-put.sh <release-build-dir> [--rounds N] [--seconds S]" >&2; exit 2 ;;
	esac
done
drv=$build/bench/bench_icount
[ -x "$drv" ] || { echo "bench/verbs-put.sh: $drv not built (ninja -C $build)" >&2; exit 1; }
command -v ucx_perftest >/dev/null || { echo "bench/verbs-put.sh: ucx_perftest not installed (ucx-utils)" >&2; exit 1; }
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((21000 + $$ % 20000))
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

verbs_rate() { LD_LIBRARY_PATH=$build/src "$drv" "$1" --seconds "$secs" --ops 80000 | awk '$3 == "rate" { print $4 }'; }
ucx_rate() {
	SERVER_ENV=(env UCX_TLS=posix,self) CLIENT_ENV=(env UCX_TLS=posix,self)
	pair_env ucx_perftest -t ucp_put_bw -s 64 -n "$1" | ucx_field 9
}

printf '%-6s %14s %14s %8s %14s %14s\n' round ucp_put_bw list32 ratio wr_1 post_send_1
: >"$tmp/ratios"
for r in $(seq "$rounds"); do
	u=$(ucx_rate $((secs * 50000000))) || exit 1
	l=$(verbs_rate write_list32) || exit 1
	w=$(verbs_rate write_wr) || exit 1
	p=$(verbs_rate write_post_send) || exit 1
	q=$(awk -v a="$l" -v b="$u" 'BEGIN { printf "%.3f", a / b }')
	echo "$q" >>"$tmp/ratios"
	printf '%-6s %14.0f %14.0f %8s %14.0f %14.0f\n' "$r" "$u" "$l" "$q" "$w" "$p"
done
sort -n "$tmp/ratios" | awk '{ a[NR] = $1 } END { printf "list32 / ucp_put_bw: median %.3f (range %.3f-%.3f)\n", a[int((NR + 1) / 2)], a[1], a[NR] }'
