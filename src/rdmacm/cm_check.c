/*
 * cm_check — what a peer's bytes must be before the state machine reads
 * them. Any process of the user can reach a listener's socket and send
 * anything; the IB CM's messages have fixed sizes and private data fields,
 * and the RDMA CM's header carries one IP version for both addresses, so
 * what no IB CM could have sent is dropped here. Pure: the fuzz target
 * (tests/fuzz/fuzz_cm_msg.c) calls it as the CM thread does.
 */
#include <netinet/in.h>

#include "cm_int.h"

/* The private data a message of type carries at most (rdma_connect(3), rdma_accept(3), rdma_reject(3)). */
static int cm_check_pdata_max(uint8_t type)
{
	switch (type) {
	case CM_MSG_REQ:
		return CM_REQ_PDATA;
	case CM_MSG_REP:
		return CM_REP_PDATA;
	case CM_MSG_REJ:
		return CM_REJ_PDATA;
	case CM_MSG_RTU:
	case CM_MSG_DREQ:
	case CM_MSG_DREP:
		return CM_DREQ_PDATA;
	case CM_MSG_SIDR_REQ:
		return CM_SIDR_REQ_PDATA;
	case CM_MSG_SIDR_REP:
		return CM_SIDR_REP_PDATA;
	default:
		return -1; /* unknown: dropped */
	}
}

bool cm_msg_check(const struct cm_msg *m, size_t n)
{
	return n == sizeof(*m) && (int)m->pdata_len <= cm_check_pdata_max(m->type);
}

bool cm_msg_req_addrs(const struct cm_msg *m)
{
	return m->src.ss_family == m->dst.ss_family && (m->src.ss_family == AF_INET || m->src.ss_family == AF_INET6);
}
