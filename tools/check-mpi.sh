#!/usr/bin/env bash
# Debian's Open MPI 4.1 (openmpi-bin, libopenmpi-dev) with `pml ucx` over
# softdpu's libibverbs.so.1 and libmlx5.so.1: tests/mpi/mpi_check.c, built
# with mpicc as a user builds it, checks collectives, point-to-point (eager
# and both rendezvous zero-copy schemes), derived datatypes and one-sided
# windows byte for byte. Run with mpirun -np 2 and -np 4 on each transport
# UCX takes on softdpu (rc_verbs with ud_verbs, ud_verbs, ud_mlx5, and
# rc_mlx5 and dc_mlx5 once UCX offers them: `ucx_info -d -t <tl>`), each
# with UCX_RNDV_SCHEME=put_zcopy and get_zcopy; then with the two ranks as
# two machines of one host (SOFTDPU_MACHINE 127.0.0.2 and 127.0.0.3, the
# fabric between them on UCX's TCP transport: SOFTDPU_UCX_TLS=tcp).
# UCX_TLS names softdpu's transports only (and self): UCX fails a run whose
# ranks cannot reach each other over them, so a pass is a pass over softdpu.
# Needs the device nodes (softdpu-devnodes), nothing else of root's.
# Exit 77 (skipped) without Open MPI, UCX's tools or the device nodes.
# Usage: tools/check-mpi.sh <directory holding libibverbs.so.1>
set -u
lib=${1:?usage: check-mpi.sh <lib-dir>}
name=mpi_clients
cd "$(dirname "$0")/.." || exit 1
skip() {
	echo "$name: $1, skipped"
	echo "$name: 0 passed, 0 failed"
	exit 77
}
for p in mpirun mpicc ucx_info; do
	command -v "$p" >/dev/null || skip "$p not installed (openmpi-bin, libopenmpi-dev, ucx-utils)"
done
[ -c /dev/infiniband/uverbs0 ] || skip "no /dev/infiniband/uverbs0 (made by softdpu-devnodes; UCX needs it)"
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY SOFTDPU_MACHINE SOFTDPU_MACHINES
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
# Open MPI refuses root unless told; these change nothing for other users.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A sanitized build: the (uninstrumented) ranks must load the ASan runtime first.
asan=$(ldd "$lib/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
pre=()
if [ -n "$asan" ]; then
	pre=(-x LD_PRELOAD="$asan" -x ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
mpicc -std=c11 -O2 -Wall -Wextra -Werror tests/mpi/mpi_check.c -o "$tmp/mpi_check" ||
	{ echo "FAIL mpicc tests/mpi/mpi_check.c"; echo "$name: 0 passed, 1 failed"; exit 1; }

# run <label> <np> <max bytes> <UCX_TLS> <scheme> [mpirun arguments before the program...]
run() {
	local label=$1 np=$2 max=$3 tls=$4 scheme=$5 t0=$SECONDS rc
	shift 5
	timeout -s KILL 240 mpirun -np "$np" --oversubscribe --bind-to none --mca pml ucx \
		--mca btl_base_warn_component_unused 0 -x LD_LIBRARY_PATH="$lib" -x SOFTDPU_LOG_LEVEL \
		-x UCX_TLS="$tls,self" -x UCX_RNDV_SCHEME="$scheme" -x UCX_WARN_UNUSED_ENV_VARS=n "${pre[@]}" \
		"$@" "$tmp/mpi_check" "$max" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q "^mpi_check: OK ($np ranks" "$tmp/out"; then
		pass=$((pass + 1))
		echo "ok   $label ($((SECONDS - t0)) s)"
	else
		fail=$((fail + 1))
		echo "FAIL $label (exit $rc)"
		grep -v '^\s*$' "$tmp/out" | head -n 30
	fi
}

# A transport UCX lists and opens cleanly (ucx_info exits 0, no error): the mlx5 ones as they come.
offered() {
	local out

	out=$(LD_LIBRARY_PATH="$lib" timeout -s KILL 60 ucx_info -d -t "$1" 2>&1) || return 1
	echo "$out" | grep -q "Transport: $1\$" && ! echo "$out" | grep -q "UCX  ERROR"
}

tls_list=("rc_verbs,ud_verbs" "ud_verbs" "ud_mlx5")
for t in rc_mlx5 dc_mlx5; do
	if offered "$t"; then
		tls_list+=("$t,ud_mlx5")
	else
		echo "--   $t: not offered by UCX on softdpu yet (ucx_info -d -t $t), not run"
	fi
done
for tls in "${tls_list[@]}"; do
	for scheme in put_zcopy get_zcopy; do
		run "np 2 UCX_TLS=$tls rndv $scheme" 2 $((4 << 20)) "$tls" "$scheme"
		run "np 4 UCX_TLS=$tls rndv $scheme" 4 $((1 << 20)) "$tls" "$scheme"
	done
done

# Two machines of one host: each rank names its own, and softdpu's fabric
# between them keeps to TCP (SOFTDPU_UCX_TLS), whatever UCX_TLS
# the program's own UCX has. Up to 64 KiB (rendezvous included): larger
# messages both ways at once stall calls between the machines (README,
# "Open MPI over softdpu"); a longer fabric timeout rides out a busy host.
for tls in "rc_verbs,ud_verbs" "ud_verbs"; do
	run "2 machines UCX_TLS=$tls" 2 $((64 << 10)) "$tls" get_zcopy \
		-x SOFTDPU_UCX_TLS=tcp -x SOFTDPU_MACHINES=127.0.0.2,127.0.0.3 \
		-x SOFTDPU_FABRIC_TIMEOUT_MS=20000 \
		sh -c 'SOFTDPU_MACHINE=127.0.0.$((2 + OMPI_COMM_WORLD_RANK)) exec "$0" "$@"'
done

echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
