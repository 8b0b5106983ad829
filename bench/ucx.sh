#!/usr/bin/env bash
# Debian's ucx_perftest between two processes over softdpu against UCX's own
# shared-memory transports (UCX_TLS=posix,cma), one run:
#  - ucp_put_bw from 64 KiB to 4 MiB over rc_verbs (and rc_mlx5 when UCX can
#    open it), the ratio to shared memory beside each;
#  - ucp_put_lat 8 B (typical one-way latency) over rc_verbs, shared memory
#    and rc_mlx5, side by side.
# A transport's UCX_TLS names the UD transport of its family too: UCX wires a
# point-to-point transport up over it. Needs the /dev/infiniband nodes UCX
# looks for (softdpu-devnodes, README "UCX over softdpu").
#
# Usage: bench/ucx.sh <release-build-dir> [--quick]
set -uo pipefail

build=${1:?usage: bench/ucx.sh <release-build-dir> [--quick]}
quick=${2:-}
command -v ucx_perftest >/dev/null || { echo "bench/ucx.sh: ucx_perftest not installed (ucx-utils)" >&2; exit 1; }
[ -c /dev/infiniband/uverbs0 ] ||
	{ echo "bench/ucx.sh: no /dev/infiniband/uverbs0 (run softdpu-devnodes as root)" >&2; exit 1; }
export SOFTDPU_LOG_LEVEL=${SOFTDPU_LOG_LEVEL:-error} LD_LIBRARY_PATH=$build/src UCX_NET_DEVICES=mlx5_0:1,memory
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((22000 + $$ % 20000))
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

bytes=$((1 << 30)) # moved per bandwidth point
lat_n=20000
[ "$quick" = --quick ] && { bytes=$((4 << 20)); lat_n=200; }

# The transports that run: UCX opens rc_mlx5 on this device.
tls_rows=("shm posix,cma" "rc_verbs rc_verbs,ud_verbs")
info=$( (timeout 60 ucx_info -d -t rc_mlx5 2>&1) 2>/dev/null)
if echo "$info" | grep -q 'Transport: rc_mlx5' && ! echo "$info" | grep -q 'failed to open interface\|Assertion'; then
	tls_rows+=("rc_mlx5 rc_mlx5,ud_mlx5")
else
	echo "rc_mlx5: UCX does not open it on this build (left out)"
fi

run() { # <UCX_TLS> <ucx_perftest arguments...>: the Final: line's fields
	SERVER_ENV=(env UCX_TLS="$1") CLIENT_ENV=(env UCX_TLS="$1")
	shift
	pair_env ucx_perftest "$@" | awk '$1 == "Final:" { print; exit }'
}

echo "ucp_put_bw, MB/s (overall), $((bytes >> 20)) MiB per point"
printf '%-8s' size
for row in "${tls_rows[@]}"; do printf ' %12s' "${row%% *}"; done
for row in "${tls_rows[@]:1}"; do printf ' %12s' "${row%% *}/shm"; done
echo
for size in 65536 262144 1048576 4194304; do
	vals=()
	for row in "${tls_rows[@]}"; do
		vals+=("$(run "${row#* }" -t ucp_put_bw -s "$size" -n $((bytes / size)) -w 16 | awk '{ print $7 }')")
	done
	printf '%-8s' "$((size >> 10))K"
	for v in "${vals[@]}"; do printf ' %12s' "${v:--}"; done
	for v in "${vals[@]:1}"; do printf ' %12s' "$(ratio "$v" "${vals[0]}")"; done
	echo
done

echo
echo "ucp_put_lat 8 B, one-way us (typical), $lat_n iterations"
for row in "${tls_rows[@]}"; do
	printf '%-8s %10s\n' "${row%% *}" "$(run "${row#* }" -t ucp_put_lat -s 8 -n "$lat_n" -w 100 | awk '{ print $3 }')"
done
