#!/usr/bin/env bash
# Runs rdma-core v44's own test suite (Debian's python3-pyverbs ships it in
# /usr/share/doc/rdma-core/tests, partly gzipped) unchanged against softdpu's
# libibverbs.so.1 and libmlx5.so.1: the suite is copied to a temporary
# directory, unpacked and run whole with the system python. Prints the
# unittest counts and "pyverbs_suite: N passed, N failed, N skipped" (failed
# counts failures and errors) and exits non-zero on any failure or error, or
# when pyverbs did not load the libraries of <lib-dir>.
# Exit 77 (skipped) when python3-pyverbs is not installed.
# Usage: tools/check-pyverbs.sh <directory holding libibverbs.so.1>
set -u
lib=${1:?usage: check-pyverbs.sh <lib-dir>}
name=pyverbs_suite
src=/usr/share/doc/rdma-core/tests
py=/usr/bin/python3
# Whether pyverbs is there, with the system's libraries: a sanitized build's cannot load before the ASan runtime.
if [ ! -f "$src/run_tests.py" ] || ! env -u LD_LIBRARY_PATH -u LD_PRELOAD "$py" -c 'import pyverbs.device' 2>/dev/null; then
	echo "$name: python3-pyverbs not installed, skipped"
	echo "$name: 0 passed, 0 failed"
	exit 77
fi
lib=$(cd "$lib" && pwd -P) || exit 1
# A side and topology of the caller's environment would change the devices; use the defaults.
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
# A sanitized build: the (uninstrumented) interpreter must load the ASan
# runtime first; python's own allocations at exit are not the library's leaks.
asan=$(ldd "$lib/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
export LD_LIBRARY_PATH=$lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# pyverbs' modules link libibverbs.so.1 and libmlx5.so.1 by soname: they must be ours.
maps=$("$py" -c 'import pyverbs.device, pyverbs.providers.mlx5.mlx5dv; print(open("/proc/self/maps").read())' 2>&1)
for so in libibverbs.so.1 libmlx5.so.1; do
	if ! grep -q " $lib/$so" <<<"$maps"; then
		echo "FAIL pyverbs did not load $lib/$so"
		echo "$name: 0 passed, 1 failed"
		exit 1
	fi
done

cp -r "$src" "$tmp/tests" && gunzip -f "$tmp/tests"/*.gz || { echo "$name: cannot prepare the suite"; exit 1; }
out=$tmp/out
(cd "$tmp/tests" && timeout 300 "$py" run_tests.py -v >"$out" 2>&1)
rc=$?
ran=$(sed -n 's/^Ran \([0-9]*\) tests\? in.*/\1/p' "$out")
field() { grep -E '^(OK|FAILED)' "$out" | tail -n 1 | grep -o "$1=[0-9]*" | cut -d= -f2; }
failures=$(field failures)
errors=$(field errors)
skipped=$(field skipped)
failures=${failures:-0} errors=${errors:-0} skipped=${skipped:-0}
if [ -z "$ran" ]; then
	tail -n 40 "$out"
	echo "FAIL the suite did not finish (exit status $rc)"
	echo "$name: 0 passed, 1 failed"
	exit 1
fi
# unittest's report of what failed: from its first separator to the count.
[ "$rc" -eq 0 ] || sed -n '/^======/,/^Ran /p' "$out" | head -n 200
echo "$name: ran $ran: $failures failures, $errors errors, $skipped skipped"
fail=$((failures + errors))
echo "$name: $((ran - fail - skipped)) passed, $fail failed, $skipped skipped"
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
