#!/usr/bin/env bash
# The README's demo: the single-process DMA demo, then the host and the DPU as
# two processes — a DMA copy through exported memory and a sync event
# ping-pong, both set up over the comm channel — a DOCA graph, a verbs
# program writing through a DC queue pair, Debian's rping over the RDMA CM,
# and a FlexIO program.
set -uo pipefail
build=${1:-build}
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
rc=0

"$build/samples/softdpu_demo" || rc=1

pair() {
	local name=$1
	shift
	echo
	echo "== $name: DPU process and host process =="
	SOFTDPU_SIDE=dpu timeout 60 "$build/samples/${name}_dpu" &
	local dpu=$!
	sleep 0.3
	SOFTDPU_SIDE=host timeout 60 "$build/samples/${name}_host" "$@" || rc=1
	wait "$dpu" || rc=1
}
pair dma_copy $((8 << 20))
pair sync_event 10000

echo
echo "== graph: a SHA job and a DMA copy in parallel, then a checking node =="
"$build/samples/graph_sample" || rc=1

echo
echo "== verbs: an RDMA WRITE from a DC initiator to a DC target (libibverbs, libmlx5) =="
"$build/samples/dc_sample" || rc=1

# Debian's own rping (rdmacm-utils), unchanged, on softdpu's librdmacm and libibverbs.
if [ -x /usr/bin/rping ] && [ -e "$build/src/librdmacm.so.1" ]; then
	echo
	echo "== RDMA CM: Debian's rping between two processes, each ping's data read and written back over RC =="
	port=$((20000 + $$ % 10000))
	LD_LIBRARY_PATH="$build/src" timeout 60 rping -s -a 127.0.0.1 -p "$port" -C 5 >/dev/null 2>&1 &
	srv=$!
	sleep 0.5
	LD_LIBRARY_PATH="$build/src" timeout 60 rping -c -a 127.0.0.1 -p "$port" -C 5 -v -S 40 2>/dev/null || rc=1
	wait "$srv" || rc=1
fi

echo
echo "== FlexIO: device code on emulated DPA harts — an RPC printing from the DPA, 1000 command-queue tasks on 8 threads =="
"$build/samples/flexio_rpc" || rc=1

echo
echo "== FlexIO: an event handler woken by its CQ answers a host QP from a device QP =="
"$build/samples/flexio_evh" || rc=1

echo
[ $rc -eq 0 ] && echo "demo: all OK" || echo "demo: FAILED"
exit $rc
