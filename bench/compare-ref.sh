#!/usr/bin/env bash
# Measures 64 B DMA jobs of this tree against another commit in the same run.
#
# Usage: bench/compare-ref.sh [--ref REF] [--rounds N] [--depths "1 32"] [--build DIR] [--time S]
#   --ref     git commit to compare with (default 0a38656: the last commit before
#             DOCA DMA and SHA ran on the engine queue)
#   --rounds  interleaved rounds per depth (default 7)
#   --build   this tree's release build directory (default build-rel; set up
#             and built here when missing)
#
# The reference is checked out into a temporary git worktree beside this tree
# and built in release mode there, once (kept for later runs in
# <tree>/../.softdpu-ref-<commit>). Then, per depth, the two bench_dma binaries
# run alternately (ref, this, ref, this, ...) with --doca-only --size 64, so
# both see the machine in the same state; per round the ratio this/ref is
# printed, and at the end the median of each and the median of the ratios.
set -euo pipefail

ref=0a38656
rounds=7
depths="1 32"
build=build-rel
wtime=""
while [ $# -gt 0 ]; do
	case "$1" in
	--ref) ref=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--depths) depths=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--time) wtime="--time $2"; shift 2 ;;
	*) echo "usage: $0 [--ref REF] [--rounds N] [--depths \"1 32\"] [--build DIR] [--time S]" >&2; exit 2 ;;
	esac
done

top=$(git rev-parse --show-toplevel)
cd "$top"
sha=$(git rev-parse --short=12 "$ref^{commit}")
refdir=$(cd "$top/.." && pwd)/.softdpu-ref-$sha

if [ ! -d "$refdir" ]; then
	git worktree add --detach "$refdir" "$sha" >/dev/null
fi
if [ ! -x "$refdir/build-rel/bench/bench_dma" ]; then
	[ -d "$refdir/build-rel" ] || meson setup "$refdir/build-rel" "$refdir" -Dbuildtype=release >/dev/null
	ninja -C "$refdir/build-rel" bench/bench_dma >/dev/null
fi
if [ ! -d "$build" ]; then
	meson setup "$build" -Dbuildtype=release >/dev/null
fi
ninja -C "$build" bench/bench_dma >/dev/null

pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
	pin=(taskset -c 0)
fi
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}

# jobs/s of one run, in millions
rate() {
	"${pin[@]}" "$1" --size 64 --depth "$2" --doca-only $wtime |
		awk '$1 == "64" && $2 == "B" { v = $4; u = $5; if (u == "k") v /= 1000; if (u == "") v /= 1e6; print v }'
}

median() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo "64 B DMA jobs, this tree ($(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo ', modified')) against $sha, $rounds interleaved rounds"
for d in $depths; do
	r_ref=() r_cur=() r_ratio=()
	printf '%-6s %-6s %12s %12s %8s\n' depth round "ref M/s" "this M/s" ratio
	for i in $(seq 1 "$rounds"); do
		a=$(rate "$refdir/build-rel/bench/bench_dma" "$d")
		b=$(rate "$build/bench/bench_dma" "$d")
		x=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
		r_ref+=("$a") r_cur+=("$b") r_ratio+=("$x")
		printf '%-6s %-6s %12.2f %12.2f %8s\n' "$d" "$i" "$a" "$b" "$x"
	done
	ma=$(printf '%s\n' "${r_ref[@]}" | median)
	mb=$(printf '%s\n' "${r_cur[@]}" | median)
	mx=$(printf '%s\n' "${r_ratio[@]}" | median)
	lo=$(printf '%s\n' "${r_ratio[@]}" | sort -g | head -1)
	hi=$(printf '%s\n' "${r_ratio[@]}" | sort -g | tail -1)
	printf 'depth %s: median ref %.2f M/s, this %.2f M/s; ratio median %s (range %s-%s), ratio of medians %.3f\n\n' \
		"$d" "$ma" "$mb" "$mx" "$lo" "$hi" "$(awk -v a="$ma" -v b="$mb" 'BEGIN { print b / a }')"
done
