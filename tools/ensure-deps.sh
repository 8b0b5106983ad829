#!/usr/bin/env bash
# Installs the Debian packages softdpu needs when they are missing.
# Usage: tools/ensure-deps.sh [bench|ci]
#   bench: also the benchmarks' peers (DPDK, ucx_perftest, Open MPI) and valgrind
#   (bench/icount.sh)
#   ci: also what every check of the suite and of tools/ci-extra.sh needs
#   (clang and libibverbs-dev for verbs_abi and flexio_toolchain, libFuzzer,
#   gdb, valgrind, Open MPI for tools/check-mpi.sh); .ci/run installs it before the first suite runs.
set -euo pipefail

need=(meson ninja-build pkg-config gcc python3 libucx-dev libssl-dev ibverbs-utils perftest python3-pyverbs python3-scapy librdmacm-dev rdmacm-utils libfabric1 libfabric-bin)
[ "${1:-}" = bench ] && need+=(dpdk-dev libdpdk-dev ucx-utils valgrind openmpi-bin libopenmpi-dev)
[ "${1:-}" = ci ] && need+=(dpdk-dev libdpdk-dev ucx-utils clang libclang-rt-14-dev libibverbs-dev gdb valgrind openmpi-bin libopenmpi-dev)

missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "softdpu: installing missing packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
