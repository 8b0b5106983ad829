#!/usr/bin/env bash
# Instruction-count regression check of the small-message hot paths: runs each
# path of bench/bench_icount (bench/bench_icount.c) under valgrind's callgrind,
# counting only its fixed-count loop (--toggle-collect=icount_region), and
# prints per operation the instructions of the whole loop and those spent in
# softdpu's libraries (libsoftdpu, libdoca*, libibverbs, libmlx5 of the build
# directory). Fails when a path's library count exceeds the one recorded in
# the reference file by more than the tolerance. Instruction counts do not
# depend on the machine's load.
#
# Usage: bench/icount.sh <build-dir> [--record] [--ref FILE] [--tolerance PCT] [--ops N] [--keep DIR]
#   <build-dir>  a release build (meson setup <dir> -Dbuildtype=release); any
#                other build type, or release with -Ddebug=true, is refused: its
#                counts are not comparable
#   --record     measure and rewrite the reference file instead of checking
#   --ref        the reference file (default bench/icount.ref)
#   --tolerance  allowed growth in percent (default 10)
#   --ops        operations per path (default 20000, a multiple of 800)
#   --keep       keep each path's callgrind output as DIR/callgrind.<path>
#                (callgrind_annotate --inclusive=no DIR/callgrind.<path> lists
#                its functions)
# Exit status: 0 all paths within the tolerance (or recorded), 1 a path grew
# or a run failed, 2 usage.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=""
record=0
ref=$here/icount.ref
tolerance=10
ops=20000
keep=""
paths=(dma_64_d32 write_post_send write_wr write_list32 write_lat write_lat_inl send_recv)
# What one operation is, per path, for the table.
declare -A unit=([dma_64_d32]=job [write_post_send]=message [write_wr]=message [write_list32]=message
	[write_lat]="round trip" [write_lat_inl]="round trip" [send_recv]=receive)

usage() {
	awk '/^# Usage:/ { on = 1 } on && !/^#/ { exit } on { sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--record) record=1; shift ;;
	--ref) [ $# -ge 2 ] || usage; ref=$2; shift 2 ;;
	--tolerance) [ $# -ge 2 ] || usage; tolerance=$2; shift 2 ;;
	--ops) [ $# -ge 2 ] || usage; ops=$2; shift 2 ;;
	--keep) [ $# -ge 2 ] || usage; keep=$2; shift 2 ;;
	-*) usage ;;
	*) [ -z "$build" ] || usage; build=$1; shift ;;
	esac
done
[ -n "$build" ] || usage
[ -f "$build/build.ninja" ] || { echo "icount: $build is not a configured build directory" >&2; exit 2; }
# Physical: callgrind names objects by the path the kernel mapped them from.
build=$(cd "$build" && pwd -P)
[ -z "$keep" ] || mkdir -p "$keep"
for t in valgrind callgrind_annotate; do
	command -v "$t" >/dev/null || { echo "icount: $t not found (Debian package valgrind)" >&2; exit 1; }
done

read -r buildtype debug < <(meson introspect --buildoptions "$build" |
	python3 -c 'import json,sys; o={x["name"]: x["value"] for x in json.load(sys.stdin)}; print(o["buildtype"], str(o["debug"]).lower())')
if [ "$buildtype" = release ] && [ "$debug" = true ]; then
	# callgrind then names inlined code by its header, without the object: the sum below would leave it out.
	echo "icount: $build is a release build with debug information (-Ddebug=true); its counts are not comparable." >&2
	echo "icount: use a release directory without it (meson setup <dir> -Dbuildtype=release)" >&2
	exit 1
fi
if [ "$buildtype" != release ]; then
	echo "icount: $build is configured with buildtype $buildtype; the counts are for a release build." >&2
	echo "icount: use a release directory (meson setup <dir> -Dbuildtype=release, or tools/bench-setup.sh <dir>)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Builds the driver and, as its dependencies, the libraries it measures.
ninja -C "$build" bench/bench_icount >"$tmp/ninja.log" 2>&1 || { cat "$tmp/ninja.log" >&2; exit 1; }
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
export LD_LIBRARY_PATH=$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY

# "<whole> <libs>" instructions per operation of one path.
measure() {
	local path=$1 out pid
	out=$(valgrind --tool=callgrind --toggle-collect=icount_region --callgrind-out-file="$tmp/cg.%p" \
		"$build/bench/bench_icount" "$path" --ops "$ops" 2>"$tmp/valgrind.log") || {
		echo "icount: $path failed under valgrind:" >&2
		tail -n 20 "$tmp/valgrind.log" >&2
		return 1
	}
	pid=$(echo "$out" | sed -n "s/^bench_icount: $path ops $ops pid \([0-9]*\)$/\1/p")
	if [ -z "$pid" ] || [ ! -f "$tmp/cg.$pid" ]; then
		echo "icount: $path printed no result: $out" >&2
		return 1
	fi
	[ -z "$keep" ] || cp "$tmp/cg.$pid" "$keep/callgrind.$path"
	# Self cost per function with its object; the libraries are the build's own (src/).
	callgrind_annotate --inclusive=no --threshold=100 "$tmp/cg.$pid" >"$tmp/annotate.txt"
	awk -v ops="$ops" -v src="$build/src/" -v path="$path" '
			/PROGRAM TOTALS/ { gsub(",", "", $1); whole = $1 }
			/^ *[0-9,]+ \(/ && match($0, /\[[^]]*\]$/) {
				obj = substr($0, RSTART + 1, RLENGTH - 2)
				n = $1; gsub(",", "", n)
				base = obj; sub(/.*\//, "", base)
				if (index(obj, src) == 1 && base ~ /^lib(softdpu|doca|ibverbs|mlx5)/)
					libs += n
			}
			END {
				if (whole == "" || libs == 0) {
					printf "icount: %s: no instruction counted in the libraries under %s\n", path, src > "/dev/stderr"
					exit 1
				}
				printf "%.1f %.1f\n", whole / ops, libs / ops
			}' "$tmp/annotate.txt"
}

declare -A recorded=()
if [ "$record" -eq 0 ]; then
	[ -f "$ref" ] || { echo "icount: no reference file $ref (record one: bench/icount.sh $build --record)" >&2; exit 1; }
	while read -r name count _; do
		case "$name" in '' | \#*) continue ;; esac
		recorded[$name]=$count
	done <"$ref"
fi

echo "instructions per operation (callgrind, $ops operations a path after a warm-up; build $build, $buildtype)"
if [ "$record" -eq 1 ]; then
	printf '%-16s %-11s %10s %10s\n' path per "whole loop" libraries
else
	printf '%-16s %-11s %10s %10s %10s %8s\n' path per "whole loop" libraries recorded change
fi
status=0
lines=()
for p in "${paths[@]}"; do
	read -r whole libs < <(measure "$p") || { status=1; continue; }
	if [ "$record" -eq 1 ]; then
		printf '%-16s %-11s %10s %10s\n' "$p" "${unit[$p]}" "$whole" "$libs"
		lines+=("$(printf '%-16s %10s   # whole loop %s' "$p" "$libs" "$whole")")
		continue
	fi
	if [ -z "${recorded[$p]:-}" ]; then
		printf '%-16s %-11s %10s %10s %10s\n' "$p" "${unit[$p]}" "$whole" "$libs" "none"
		echo "icount: FAIL $p: no count recorded in $ref (bench/icount.sh <build-dir> --record)" >&2
		status=1
		continue
	fi
	change=$(awk -v m="$libs" -v r="${recorded[$p]}" 'BEGIN { printf "%+.1f%%", 100 * (m - r) / r }')
	printf '%-16s %-11s %10s %10s %10s %8s\n' "$p" "${unit[$p]}" "$whole" "$libs" "${recorded[$p]}" "$change"
	if awk -v m="$libs" -v r="${recorded[$p]}" -v t="$tolerance" 'BEGIN { exit !(m > r * (1 + t / 100)) }'; then
		echo "icount: FAIL $p: $libs instructions per ${unit[$p]} in the libraries, recorded ${recorded[$p]}" \
			"($change, more than +$tolerance %)" >&2
		status=1
	elif awk -v m="$libs" -v r="${recorded[$p]}" -v t="$tolerance" 'BEGIN { exit !(m < r * (1 - t / 100)) }'; then
		echo "icount: note: $p dropped by more than $tolerance %; record the new count (bench/icount.sh <build-dir> --record)"
	fi
done

if [ "$record" -eq 1 ]; then
	[ "$status" -eq 0 ] || { echo "icount: a path failed; $ref left as it was" >&2; exit 1; }
	# The libraries' sources are what the counts belong to: name the last commit that changed them.
	rev=$(git -C "$here/.." log -1 --format=%h --abbrev=12 -- src include 2>/dev/null || true)
	[ -n "$rev" ] || rev=unknown
	git -C "$here/.." diff --quiet HEAD -- src include 2>/dev/null || rev="$rev with local changes"
	{
		echo "# Instructions per operation spent in softdpu's libraries (libsoftdpu, libdoca*,"
		echo "# libibverbs, libmlx5), callgrind, release build, $ops operations a path."
		echo "# Checked by bench/icount.sh <build-dir> (fails above +$tolerance %); rewritten by"
		echo "# bench/icount.sh <build-dir> --record. src/ and include/ of $rev."
		printf '%s\n' "${lines[@]}"
	} >"$ref"
	echo "recorded in $ref"
	exit 0
fi
[ "$status" -eq 0 ] && echo "icount: all paths within +$tolerance % of $ref"
exit "$status"
