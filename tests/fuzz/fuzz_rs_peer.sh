# Sourced by tools/run-fuzz.sh: rsockets' reading of what the peer sends
# (src/rdmacm/rs_proto.c), where the RDMA CM headers are installed.
if [ -e /usr/include/rdma/rsocket.h ]; then
	run fuzz_rs_peer tests/fuzz/fuzz_rs_peer.c src/rdmacm/rs_proto.c src/base/*.c -Isrc/rdmacm '-DBASE_LOG_TAG="rdmacm"'
fi
