#!/usr/bin/env bash
# Runs a sample program as a user would and counts it as one check: it
# passes when the program exits 0 (each sample checks its own results).
# Usage: tools/run-sample.sh <name> <program> [args...]
set -u
name=${1:?usage: run-sample.sh <name> <program> [args...]}
shift
if "$@"; then
	echo "$name: 1 passed, 0 failed"
else
	rc=$?
	echo "FAIL $name: exit $rc"
	echo "$name: 0 passed, 1 failed"
	exit 1
fi
