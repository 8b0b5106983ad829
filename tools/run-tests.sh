#!/usr/bin/env bash
# Builds softdpu in BUILD_DIR (optionally with sanitizers) and runs the test
# suite; prints the totals of test cases as "N passed, N failed". A build that
# fails, a meson test that runs no test or fewer tests than it lists, counts
# as a failure (tools/count-tests.py).
# Usage: tools/run-tests.sh <build-dir> [sanitize]
set -uo pipefail

dir=${1:-build}
san=${2:-}
opts=()
[ "$san" = sanitize ] && opts+=(-Db_sanitize=address,undefined -Db_lundef=false)

if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "${opts[@]}" >/dev/null || { echo "meson setup failed"; echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$dir" >"$dir/ninja.log" 2>&1; then
	tail -n 40 "$dir/ninja.log"
	echo "0 passed, 1 failed"
	exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export SOFTDPU_SDK_LOG_LEVEL=${SOFTDPU_SDK_LOG_LEVEL:-critical}
# The log of an earlier run must not be counted for this one.
rm -f "$dir/meson-logs/testlog.json"
expected=$(meson test -C "$dir" --no-rebuild --list 2>/dev/null | grep -c .)
if [ "${expected:-0}" -eq 0 ]; then
	echo "meson test --list names no test"
	echo "0 passed, 1 failed"
	exit 1
fi
meson test -C "$dir" --print-errorlogs --num-processes 2 >"$dir/meson-test.log" 2>&1
status=$?
if [ ! -s "$dir/meson-logs/testlog.json" ]; then
	tail -n 40 "$dir/meson-test.log"
	echo "meson test ran nothing (exit status $status)"
	echo "0 passed, 1 failed"
	exit 1
fi
python3 "$(dirname "$0")/count-tests.py" --expect "$expected" "$dir/meson-logs/testlog.json" || status=1
exit $status
