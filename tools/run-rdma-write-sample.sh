#!/usr/bin/env bash
# Runs the DOCA RDMA write sample pair (samples/rdma_write) as two programs
# exchanging their descriptor files in one directory, and checks that the
# responder prints the string the requester wrote into its memory.
# Usage: tools/run-rdma-write-sample.sh <rdma_write_requester> <rdma_write_responder>
set -u
req=${1:?usage: run-rdma-write-sample.sh <requester> <responder>}
resp=${2:?usage: run-rdma-write-sample.sh <requester> <responder>}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
msg="written by DOCA RDMA $$"
"$resp" "$dir" >"$dir/responder.out" &
rpid=$!
"$req" "$dir" "$msg"
qrc=$?
wait "$rpid"
rrc=$?
if [ "$qrc" -eq 0 ] && [ "$rrc" -eq 0 ] && grep -qF "Requester wrote: \"$msg\"" "$dir/responder.out"; then
	echo "rdma_write_sample: 1 passed, 0 failed"
	exit 0
fi
echo "FAIL rdma_write_sample: requester exit $qrc, responder exit $rrc, responder said: $(cat "$dir/responder.out")"
echo "rdma_write_sample: 0 passed, 1 failed"
exit 1
