#!/bin/sh
# softdpu-devnodes (tools/softdpu_devnodes.c) into a temporary root: the nodes'
# names, types, numbers and modes exactly, open() giving ENXIO, a second run
# changing nothing, entries that are not softdpu's left alone, --remove.
# Exit 77 (skipped) where this process may not make device nodes.
# Usage: tools/check-devnodes.sh <softdpu-devnodes executable>
tool=${1:?usage: check-devnodes.sh <softdpu-devnodes>}
name=devnodes
export LC_ALL=C
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! mknod "$tmp/probe" c 0 192 2>/dev/null; then
	echo "$name: may not make device nodes here (not root?), skipped"
	echo "$name: 0 passed, 0 failed"
	exit 77
fi
rm -f "$tmp/probe"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
expect() {	# expect <what> <expected> <actual>
	if [ "$2" = "$3" ]; then ok; else bad "$1: expected '$2', got '$3'"; fi
}
listing() {	# name, type, major:minor (decimal), mode, inode of each entry
	for f in "$1"/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		echo "$(basename "$f") $(stat -c '%F %Hr:%Lr %a %i' "$f")"
	done
}
types() { listing "$1" | cut -d' ' -f1-6; }
enxio() {	# opening the node for reading and writing gives ENXIO
	python3 -c 'import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_RDWR))
    sys.exit(1)
except OSError as e:
    sys.exit(0 if e.errno == errno.ENXIO else 1)' "$1"
}
ib=$tmp/root/dev/infiniband
mkdir "$tmp/root"

# 1. The built-in topology: 5 host and 4 DPU devices, so uverbs0..4.
"$tool" --root "$tmp/root"; expect "create exit" 0 $?
want="rdma_cm character special file 0:1 666
uverbs0 character special file 0:192 666
uverbs1 character special file 0:193 666
uverbs2 character special file 0:194 666
uverbs3 character special file 0:195 666
uverbs4 character special file 0:196 666"
expect "nodes" "$want" "$(types "$ib")"
expect "directory" "directory 755" "$(stat -c '%F %a' "$ib")"
for f in "$ib"/*; do
	if enxio "$f"; then ok; else bad "open $(basename "$f"): not ENXIO"; fi
done

# 2. A second run (under a narrow umask) changes nothing, not even inodes.
before=$(listing "$ib")
(umask 077; "$tool" --root "$tmp/root"); expect "second run exit" 0 $?
expect "second run" "$before" "$(listing "$ib")"
chmod 600 "$ib/uverbs1"
(umask 077; "$tool" --root "$tmp/root"); expect "mode repair exit" 0 $?
expect "mode repaired" "$before" "$(listing "$ib")"

# 3. What is not softdpu's is left: a file, another device's node, a link;
#    a stale node of ours past the device count goes.
rm "$ib/uverbs2" "$ib/rdma_cm"
echo keep >"$ib/uverbs2"
mknod -m 600 "$ib/rdma_cm" c 1 3
ln -s /dev/null "$ib/uverbs3.link"
rm "$ib/uverbs3"; ln -s uverbs0 "$ib/uverbs3"
mknod -m 666 "$ib/uverbs9" c 0 201
mknod -m 666 "$ib/uverbs10" c 0 1	# our major, not this name's minor: not ours
"$tool" --root "$tmp/root" 2>"$tmp/err"; expect "foreign exit" 0 $?
expect "file kept" "keep" "$(cat "$ib/uverbs2")"
expect "other node kept" "character special file 1:3 600" "$(stat -c '%F %Hr:%Lr %a' "$ib/rdma_cm")"
expect "link kept" "symbolic link" "$(stat -c '%F' "$ib/uverbs3")"
expect "stale node removed" "no" "$([ -e "$ib/uverbs9" ] && echo yes || echo no)"
expect "odd node kept" "character special file 0:1" "$(stat -c '%F %Hr:%Lr' "$ib/uverbs10")"
expect "reported" 3 "$(grep -c 'not softdpu' "$tmp/err")"

# 4. --remove takes ours and keeps the rest (and so the directory).
"$tool" --root "$tmp/root" --remove; expect "remove exit" 0 $?
expect "after remove" "rdma_cm uverbs10 uverbs2 uverbs3 uverbs3.link" "$(ls "$ib" | tr '\n' ' ' | sed 's/ $//')"
rm -f "$ib"/*
"$tool" --root "$tmp/root"; expect "recreate exit" 0 $?
"$tool" --root "$tmp/root" --remove; expect "remove all exit" 0 $?
expect "directory removed" "no" "$([ -e "$ib" ] && echo yes || echo no)"
expect "dev kept" "yes" "$([ -d "$tmp/root/dev" ] && echo yes || echo no)"
"$tool" --root "$tmp/root" --remove; expect "remove again exit" 0 $?

# 5. A topology file decides the devices: 2 on the host side, 3 on the DPU side.
cat >"$tmp/topo" <<'TOPO'
function name=pf0 side=host type=pf pci=0000:0b:00.0 vuid=T0 ibdev=mlx5_0 iface=h0 mac=02:53:44:0b:00:00 ipv4=192.168.100.1
function name=pf1 side=host type=pf pci=0000:0b:00.1 vuid=T1 ibdev=mlx5_1 iface=h1 mac=02:53:44:0b:00:01 ipv4=192.168.101.1
function name=p0 side=dpu type=pf pci=0000:03:00.0 vuid=T2 ibdev=mlx5_0 iface=p0 mac=02:53:44:03:00:00 ipv4=192.168.100.254
function name=p1 side=dpu type=pf pci=0000:03:00.1 vuid=T3 ibdev=mlx5_1 iface=p1 mac=02:53:44:03:00:01 ipv4=192.168.101.254
function name=p0s0 side=dpu type=sf parent=p0 vuid=T4 ibdev=mlx5_2 iface=sf0 mac=02:53:44:03:80:00 ipv4=192.168.100.253
TOPO
SOFTDPU_TOPOLOGY=$tmp/topo "$tool" --root "$tmp/root"; expect "topology exit" 0 $?
expect "topology nodes" "rdma_cm uverbs0 uverbs1 uverbs2" "$(ls "$ib" | tr '\n' ' ' | sed 's/ $//')"

# 6. Usage errors.
"$tool" --bogus 2>/dev/null; expect "bad option exit" 2 $?
"$tool" --root 2>/dev/null; expect "missing root exit" 2 $?
"$tool" --root "$tmp/none"; r=$?; expect "missing root dir exit" 1 $r

echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
