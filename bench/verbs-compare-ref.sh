#!/usr/bin/env bash
# 64 B RDMA WRITE message rate of this tree's libibverbs against another
# commit's, in the same run: Debian's ib_write_bw between two processes,
# one build then the other, alternately, so both see the machine in the same
# state. Per round the ratio this/ref; at the end the medians. perftest is
# given GID 0 (-x 0): a RoCE port needs one, and index 0 is valid on the
# InfiniBand ports of older commits too.
#
# Usage: bench/verbs-compare-ref.sh --ref REF [--rounds N] [--iters N] [--build DIR]
#   --ref     the commit to compare with (built in release mode in a worktree
#             beside this tree, <tree>/../.softdpu-ref-<commit>, kept)
#   --build   this tree's release build (default build-rel; made when missing)
set -euo pipefail

ref=""
rounds=7
iters=2000000
build=build-rel
while [ $# -gt 0 ]; do
	case "$1" in
	--ref) ref=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	*) echo "usage: $0 --ref REF [--rounds N] [--iters N] [--build DIR]" >&2; exit 2 ;;
	esac
done
[ -n "$ref" ] || { echo "$0: --ref is required" >&2; exit 2; }
command -v ib_write_bw >/dev/null || { echo "$0: ib_write_bw not installed (perftest)" >&2; exit 1; }

top=$(git rev-parse --show-toplevel)
cd "$top"
sha=$(git rev-parse --short=12 "$ref^{commit}")
refdir=$(cd "$top/.." && pwd)/.softdpu-ref-$sha
[ -d "$refdir" ] || git worktree add --detach "$refdir" "$sha" >/dev/null
[ -d "$refdir/build-rel" ] || meson setup "$refdir/build-rel" "$refdir" -Dbuildtype=release >/dev/null
ninja -C "$refdir/build-rel" >/dev/null
[ -d "$build" ] || meson setup "$build" -Dbuildtype=release >/dev/null
ninja -C "$build" >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + $$ % 20000))
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY

# Millions of 64 B writes a second with the libraries of build $1.
mrate() {
	SERVER_ENV=(env LD_LIBRARY_PATH="$1/src") CLIENT_ENV=(env LD_LIBRARY_PATH="$1/src")
	pair_env ib_write_bw -d mlx5_0 -F -x 0 -s 64 -n "$iters" | pt_field 64 5
}

median() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo "64 B ib_write_bw, this tree ($(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo ', modified')) against $sha, $rounds interleaved rounds"
printf '%-6s %12s %12s %8s\n' round "ref Mmsg/s" "this Mmsg/s" ratio
r_ref=() r_cur=() r_ratio=()
for i in $(seq 1 "$rounds"); do
	a=$(mrate "$refdir/build-rel")
	b=$(mrate "$build")
	x=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
	r_ref+=("$a") r_cur+=("$b") r_ratio+=("$x")
	printf '%-6s %12s %12s %8s\n' "$i" "$a" "$b" "$x"
done
printf 'median ref %s Mmsg/s, this %s Mmsg/s; ratio median %s\n' "$(printf '%s\n' "${r_ref[@]}" | median)" \
	"$(printf '%s\n' "${r_cur[@]}" | median)" "$(printf '%s\n' "${r_ratio[@]}" | median)"
