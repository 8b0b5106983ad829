# Helpers the two-process RDMA benchmarks share (bench/rdma.sh, bench/xmachine.sh). Sourced.

# Waits until something listens on TCP port $1 (perftest and ucx_perftest
# exchange their connection data over TCP before the test).
wait_listen() {
	local hex
	hex=$(printf '%04X' "$1")
	for _ in $(seq 200); do
		grep -q ":$hex 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# perftest's result line: the first line starting with the size ($1); field $2.
pt_field() { awk -v s="$1" -v f="$2" '$1 == s && NF >= 5 { print $f; exit }'; }
# A field of ucx_perftest's Final: line.
ucx_field() { awk -v f="$1" '$1 == "Final:" { print $f; exit }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2fx", a / b }'; }

# Runs a server and its client on port $port + 1 (port is advanced), each
# prefixed with the words of SERVER_ENV / CLIENT_ENV (e.g. env VAR=value);
# the client's output goes to stdout. The arguments: the command without the
# peer name and port. Needs $tmp.
pair_env() {
	port=$((port + 1))
	"${SERVER_ENV[@]}" timeout 300 "$@" -p "$port" >"$tmp/server" 2>&1 &
	local spid=$!
	if ! wait_listen "$port"; then
		echo "server did not start: $*" >&2
		cat "$tmp/server" >&2
		kill "$spid" 2>/dev/null
		return 1
	fi
	"${CLIENT_ENV[@]}" timeout 300 "$@" -p "$port" localhost >"$tmp/client" 2>&1
	local rc=$?
	wait "$spid"
	local src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		echo "failed ($rc/$src): $*" >&2
		tail -n 5 "$tmp/client" "$tmp/server" >&2
		return 1
	fi
	cat "$tmp/client"
}
