#!/usr/bin/env bash
# MPI_Allreduce of 512 KiB (np 2) with Debian's Open MPI over pml ucx: over
# softdpu's transports (UCX_TLS=rc_verbs,ud_verbs:aux — UCX's "rc_v", RC for
# all traffic, UD for wire-up only —, rc_verbs,ud_verbs, ud_verbs, ud_mlx5)
# against UCX's own shared memory (UCX_TLS=posix,cma), in alternating
# rounds (default 5: a loaded machine's figures swing several-fold), and
# per transport the median of shared memory's time / its time (1.0: as fast
# as shared memory) with the range, and the best time of each against the
# best of shared memory (the runs a busy machine did not interrupt).
# bench/mpi_allreduce.c is built with mpicc; it checks its result once.
# UCX_RNDV_SCHEME, when set, goes to every run.
# Usage: [ROUNDS=N] bench/mpi.sh <build-dir (release)> [bytes] [iterations]
set -uo pipefail
build=${1:?usage: bench/mpi.sh <build-dir> [bytes] [iterations]}
bytes=${2:-524288}
iters=${3:-200}
cd "$(dirname "$0")/.." || exit 1
for p in mpirun mpicc; do
	command -v "$p" >/dev/null || { echo "bench/mpi.sh: $p not installed (openmpi-bin, libopenmpi-dev)" >&2; exit 1; }
done
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY SOFTDPU_MACHINE SOFTDPU_MACHINES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc -std=c11 -O2 -Wall -Werror bench/mpi_allreduce.c -o "$tmp/allreduce" || exit 1

# us <UCX_TLS> [mpirun arguments...]: µs per call, or nothing
us() {
	local tls=$1
	shift
	timeout -s KILL 300 mpirun -np 2 --bind-to none --mca pml ucx --mca btl_base_warn_component_unused 0 \
		-x LD_LIBRARY_PATH="$build/src" -x SOFTDPU_LOG_LEVEL -x UCX_TLS="$tls" ${UCX_RNDV_SCHEME:+-x UCX_RNDV_SCHEME} "$@" \
		"$tmp/allreduce" "$bytes" "$iters" 2>"$tmp/err" | awk '$1 == "allreduce" && NF == 4 { print $4 }'
}

rounds=${ROUNDS:-5}
tls_list=(rc_verbs,ud_verbs:aux rc_verbs,ud_verbs ud_verbs ud_mlx5)
: >"$tmp/all"
for r in $(seq "$rounds"); do
	shm=$(us posix,cma,self --mca pml_ucx_tls any --mca pml_ucx_devices any)
	[ -n "$shm" ] || { echo "bench/mpi.sh: the shared-memory run failed" >&2; cat "$tmp/err" >&2; exit 1; }
	printf 'round %s: posix,cma %.1f us' "$r" "$shm"
	for tls in "${tls_list[@]}"; do
		t=$(us "$tls,self")
		[ -n "$t" ] || { printf ', %s failed' "$tls"; continue; }
		printf ', %s %.1f' "$tls" "$t"
		echo "$tls $shm $t" >>"$tmp/all"
	done
	echo
done
printf '%-24s %10s %10s %18s %10s %10s %9s\n' "UCX_TLS ($bytes B, np 2)" "median us" "shm med" "shm/this (range)" \
	"best us" "shm best" "best/best"
for tls in "${tls_list[@]}"; do
	awk -v tls="$tls" '$1 == tls { n++; r[n] = $2 / $3; t[n] = $3; s[n] = $2 }
		END { if (n == 0) { printf "%-24s failed\n", tls; exit }
		      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
		          if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
		          if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
		          if (s[j] < s[i]) { x = s[i]; s[i] = s[j]; s[j] = x } }
		      m = int((n + 1) / 2)
		      printf "%-24s %10.1f %10.1f %6.2f (%.2f-%.2f) %10.1f %10.1f %9.2f\n", tls, t[m], s[m], r[m], r[1], r[n],
		             t[1], s[1], s[1] / t[1] }' "$tmp/all"
done
