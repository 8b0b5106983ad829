#!/bin/sh
# Runs Debian's own ibv_devinfo -v and ibv_devices (rdma-core v44, ibverbs-utils)
# against softdpu's libibverbs.so.1: they must run unchanged and show the
# emulated BlueField-2 functions. Exit 77 (skipped) without ibverbs-utils.
# Usage: tools/check-devinfo.sh <directory holding libibverbs.so.1>
lib=${1:?usage: check-devinfo.sh <lib-dir>}
name=verbs_devinfo
if [ ! -x /usr/bin/ibv_devinfo ] || [ ! -x /usr/bin/ibv_devices ]; then
	echo "$name: ibverbs-utils not installed, skipped"
	echo "$name: 0 passed, 0 failed"
	exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pass=0
fail=0
check() {
	if grep -q -- "$1" "$out"; then
		pass=$((pass + 1))
	else
		echo "FAIL $2: no '$1' in the output"
		fail=$((fail + 1))
	fi
}
# A side and topology of the caller's environment would change the devices; use the defaults.
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
# A sanitized build: the (uninstrumented) programs must load the ASan runtime first.
asan=$(ldd "$lib/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
[ -n "$asan" ] && export LD_PRELOAD="$asan"
if LD_LIBRARY_PATH=$lib /usr/bin/ibv_devinfo -v >"$out" 2>&1; then pass=$((pass + 1)); else
	echo "FAIL ibv_devinfo -v exited $?"
	fail=$((fail + 1))
fi
check 'hca_id:	mlx5_0' "ibv_devinfo"
check 'vendor_id:			0x02c9' "ibv_devinfo"
check 'vendor_part_id:			41686' "ibv_devinfo"
check 'fw_ver:				24.35.1012' "ibv_devinfo"
check 'PORT_ACTIVE (4)' "ibv_devinfo"
# A RoCE port as a BlueField-2 shows it: the MTU of a 1500-byte netdev, no LID, the mlx5 GID table.
check 'active_mtu:		1024 (3)' "ibv_devinfo"
check 'link_layer:		Ethernet' "ibv_devinfo"
check 'port_lid:		0$' "ibv_devinfo"
check 'sm_lid:			0$' "ibv_devinfo"
check 'port_cap_flags:		0x04010000' "ibv_devinfo"
check 'gid_tbl_len:		256' "ibv_devinfo"
check 'active_speed:		25.0 Gbps (32)' "ibv_devinfo"
check 'GID\[  0\]:		fe80:0000:0000:0000:0053:44ff:fe0b:0000, RoCE v1' "ibv_devinfo"
check 'GID\[  1\]:		fe80::53:44ff:fe0b:0, RoCE v2' "ibv_devinfo"
check 'GID\[  2\]:		0000:0000:0000:0000:0000:ffff:c0a8:6401, RoCE v1' "ibv_devinfo"
check 'GID\[  3\]:		::ffff:192.168.100.1, RoCE v2' "ibv_devinfo"
check 'GID\[  5\]:		fd00:100::1, RoCE v2' "ibv_devinfo"
# Loaded ours, not the system's (which would find no device here and fail).
if LD_LIBRARY_PATH=$lib LD_DEBUG=libs /usr/bin/ibv_devinfo -l 2>&1 | grep -q "calling init: $lib/libibverbs.so.1"; then
	pass=$((pass + 1))
else
	echo "FAIL ibv_devinfo did not load $lib/libibverbs.so.1"
	fail=$((fail + 1))
fi
if LD_LIBRARY_PATH=$lib /usr/bin/ibv_devices >"$out" 2>&1; then pass=$((pass + 1)); else
	echo "FAIL ibv_devices exited $?"
	fail=$((fail + 1))
fi
check 'mlx5_0[[:space:]]*005344fffe0b0000' "ibv_devices"
check 'mlx5_4[[:space:]]*005344fffe0b0004' "ibv_devices"
[ "$fail" -eq 0 ] || cat "$out"
echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
