/*
 * rs_proto — what the peer sends an rsocket, read and checked before use
 * (the peer wrote it): the hello of its REQ or REP, the immediates of its
 * writes, and its control messages. No verbs here: the fuzz target
 * tests/fuzz/fuzz_rs_peer.c runs these on any bytes.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "rs_int.h"

/* The peer's hello: its ring and receive queue. */
int rs_hello_take(struct rs *rs, const void *pdata, uint8_t len)
{
	struct rs_hello h;
	uint32_t rq, size;

	if (pdata == NULL || len < sizeof(h))
		goto bad;
	memcpy(&h, pdata, sizeof(h));
	rq = be32toh(h.rq_size);
	size = be32toh(h.size);
	if (h.version != RS_VERSION || rq < 2 || rq > RS_MAX_QSIZE || size < RS_MIN_BUF || size > RS_MAX_BUF)
		goto bad;
	rs->credits = rs->peer_rq = rq;
	rs->peer_addr = be64toh(h.addr);
	rs->peer_rkey = be32toh(h.rkey);
	rs->peer_size = rs->peer_avail = size;
	rs->peer_tail = 0;
	return 0;
bad:
	BASE_WARN("rsocket %d: the peer's connection data is no rsocket's (version, queue or ring size)", rs->fd);
	errno = EPROTO;
	return -1;
}

/* Keeps the newest RS_MAX_IOMAPS mappings of the peer. */
static void rs_peer_maps_trim(struct rs *rs)
{
	struct rs_iomap **pp = &rs->peer_iomaps, *m;
	int n = 0;

	while (*pp != NULL && ++n < RS_MAX_IOMAPS)
		pp = &(*pp)->next;
	if (*pp == NULL)
		return;
	m = (*pp)->next;
	(*pp)->next = NULL;
	while (m != NULL) {
		struct rs_iomap *next = m->next;

		free(m);
		m = next;
	}
}

/* A control message in the given slot of the area after the ring. */
static void rs_proto_ctrl(struct rs *rs, uint32_t slot)
{
	struct rs_ctrl c;
	struct rs_iomap *m;
	uint64_t off, len;

	if (slot >= rs->rq_size)
		goto bad;
	memcpy(&c, rs->rbuf + rs->rbuf_size + (size_t)slot * RS_CTRL_SLOT, sizeof(c));
	off = be64toh(c.offset);
	len = be64toh(c.len);
	if (c.op != RS_CTRL_IOMAP || len == 0 || off + len < off)
		goto bad;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return; /* the mapping stays unknown here: writes to it wait */
	m->offset = off;
	m->len = len;
	m->addr = be64toh(c.addr);
	m->rkey = be32toh(c.rkey);
	/* Newest first, so a remapped offset finds the new one. */
	m->next = rs->peer_iomaps;
	rs->peer_iomaps = m;
	rs_peer_maps_trim(rs);
	return;
bad:
	BASE_WARN("rsocket %d: the peer's control message is malformed", rs->fd);
	rs->err = EPROTO;
}

/* The immediate of a write the peer made into the ring (or its control area). */
void rs_proto_imm(struct rs *rs, uint32_t imm)
{
	uint32_t n;

	switch (RS_IMM_TYPE(imm)) {
	case RS_IMM_DATA:
		/* Within the credits the peer had, the bytes fit in what is unread. */
		n = imm & 0x3fffffffu;
		if (n > rs->rbuf_size - rs->rbytes) {
			BASE_WARN("rsocket %d: the peer wrote past its credits", rs->fd);
			rs->err = EPROTO;
			return;
		}
		rs->rbytes += n;
		break;
	case RS_IMM_CREDIT:
		rs->credits += (imm >> 22) & 0xffu;
		rs->peer_avail += imm & RS_IMM_BYTES_MAX;
		if (rs->peer_avail > rs->peer_size || rs->credits > rs->peer_rq) {
			BASE_WARN("rsocket %d: the peer returned more credits than it had", rs->fd);
			rs->err = EPROTO;
		}
		break;
	case RS_IMM_FIN:
		rs->fin_rcvd = true;
		break;
	default:
		rs_proto_ctrl(rs, imm & 0xffu);
		break;
	}
}
