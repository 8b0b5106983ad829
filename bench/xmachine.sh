#!/usr/bin/env bash
# RDMA between two machines, in one run: Debian's perftest (ib_write_bw,
# ib_read_bw with -x 0: addressed by GID, as between subnets) on softdpu's
# libibverbs, one process standing for machine 127.0.0.2 and one for
# 127.0.0.3 (SOFTDPU_MACHINE), so every request crosses UCX's TCP transport
# on loopback; side by side with ucx_perftest over the same transport
# (UCX_TLS=tcp): ucp_put_bw / ucp_get, the RMA peers of WRITE and READ, and
# ucp_am_bw, UCX's active messages the path is made of.
#
# Each figure is the best of XM_REPS runs (3; 1 with --quick), the three
# programs taking turns, so that a burst of other work on a shared machine
# does not decide a ratio.
#
# Usage: bench/xmachine.sh <build-dir> [--quick | --sizes "S1 S2 ..."]
# Targets (docs/PERFORMANCE.md): bandwidth >= 0.8x ucx_perftest's RMA peer;
# from 1 MiB on, >= 0.9x ucp_am_bw.
set -uo pipefail

build=${1:-build}
quick=0
only=
[ "${2:-}" = "--quick" ] && quick=1
[ "${2:-}" = "--sizes" ] && only=${3:?--sizes needs a list of sizes in bytes}
reps=${XM_REPS:-3}
[ $quick = 1 ] && reps=1
lib=$build/src
[ -e "$lib/libibverbs.so.1" ] || { echo "bench/xmachine.sh: $lib/libibverbs.so.1 not built" >&2; exit 1; }
for p in ib_write_bw ib_read_bw ucx_perftest; do
	command -v "$p" >/dev/null || { echo "bench/xmachine.sh: $p not installed (perftest, ucx-utils)" >&2; exit 1; }
done
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error} UCX_TLS=tcp UCX_NET_DEVICES=lo
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY SOFTDPU_MACHINE

if [ $quick = 1 ]; then
	sizes="65536"
	iters=50
else
	sizes=${only:-"4096 65536 1048576 4194304"}
	iters=0
fi
iters_for() { # about 2 GiB moved, 200..20000 messages
	local n=$(((2 << 30) / $1))
	[ "$iters" != 0 ] && { echo "$iters"; return; }
	[ $n -lt 200 ] && n=200
	[ $n -gt 20000 ] && n=20000
	echo $n
}
port=$((20000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# The larger of two figures (either may be empty: a failed run).
best() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 >= b + 0) print a; else print b }'; }

# $1: "ib" (server on machine 127.0.0.3, client on 127.0.0.2) or "ucx"; the rest: the command.
pair() {
	local kind=$1
	shift
	SERVER_ENV=() CLIENT_ENV=()
	if [ "$kind" = ib ]; then
		SERVER_ENV=(env LD_LIBRARY_PATH="$lib" SOFTDPU_MACHINE=127.0.0.3)
		CLIENT_ENV=(env LD_LIBRARY_PATH="$lib" SOFTDPU_MACHINE=127.0.0.2)
	fi
	pair_env "$@"
}

echo "softdpu RDMA between machines (127.0.0.2 -> 127.0.0.3, UCX TCP on loopback), build $build"
echo "perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null), UCX $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1)"
echo
fail=0
for op in write read; do
	case $op in
	write) pt=ib_write_bw rma=ucp_put_bw ;;
	read) pt=ib_read_bw rma=ucp_get ;;
	esac
	echo "== RDMA $op bandwidth (MB/s): $pt -x 0 vs ucx_perftest $rma and ucp_am_bw over TCP =="
	printf '%-9s %12s %12s %8s %12s %8s\n' size "$pt" "$rma" ratio ucp_am_bw ratio
	for s in $sizes; do
		n=$(iters_for "$s")
		ibbw= ubw= abw=
		for _ in $(seq "$reps"); do
			ib=$(pair ib "$pt" -d mlx5_0 -F -x 0 -s "$s" -n "$n") || fail=1
			ibbw=$(best "$ibbw" "$(echo "$ib" | pt_field "$s" 4)")
			u=$(pair ucx ucx_perftest -t "$rma" -s "$s" -n "$n") || fail=1
			ubw=$(best "$ubw" "$(echo "$u" | ucx_field 7)")
			a=$(pair ucx ucx_perftest -t ucp_am_bw -s "$s" -n "$n") || fail=1
			abw=$(best "$abw" "$(echo "$a" | ucx_field 7)")
		done
		printf '%-9s %12s %12s %8s %12s %8s\n' "$s" "$ibbw" "$ubw" "$(ratio "$ibbw" "$ubw")" "$abw" \
			"$(ratio "$ibbw" "$abw")"
	done
	echo
done
exit $fail
