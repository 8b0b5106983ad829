# Sourced by tools/run-fuzz.sh: the RDMA CM's reading of a peer's messages
# (src/rdmacm/cm_check.c, cm_proto.c), where the RDMA CM headers are installed.
if [ -e /usr/include/rdma/rdma_cma.h ]; then
	run fuzz_cm_msg tests/fuzz/fuzz_cm_msg.c src/rdmacm/cm_check.c src/rdmacm/cm_proto.c src/rdmacm/cm_addr.c \
		src/base/*.c -Isrc/rdmacm '-DBASE_LOG_TAG="rdmacm"'
fi
