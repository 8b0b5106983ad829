/*
 * Fuzz target: what an rsocket reads from its peer (src/rdmacm/rs_proto.c):
 * a hello of any bytes (mostly made valid, so the rest runs), then immediates of any value with any control-area
 * contents. Whatever comes, the socket's counters stay within its ring and
 * the peer's, or the connection is marked failed (EPROTO), and the peer's
 * mappings kept stay bounded.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "rs_int.h"

#define FZ_RING 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ring[FZ_RING + RS_MAX_QSIZE * RS_CTRL_SLOT];
	struct rs_hello h;
	struct rs rs;
	size_t at;
	int maps = 0;

	if (size < 1 + sizeof(struct rs_hello))
		return 0;
	memset(&rs, 0, sizeof(rs));
	rs.fd = -1;
	rs.rbuf = ring;
	rs.rbuf_size = FZ_RING;
	rs.rq_size = 2 + data[0] % (RS_MAX_QSIZE - 1);
	memcpy(&h, data + 1, sizeof(h));
	if (!(data[0] & 0x80)) {
		/* Mostly a hello that passes, so the immediates get their turn. */
		h.version = RS_VERSION;
		h.rq_size = htobe32(2 + be32toh(h.rq_size) % (RS_MAX_QSIZE - 1));
		h.size = htobe32(RS_MIN_BUF + be32toh(h.size) % (RS_MAX_BUF - RS_MIN_BUF + 1));
	}
	if (rs_hello_take(&rs, &h, (uint8_t)sizeof(h)) != 0)
		return 0;
	at = 1 + sizeof(struct rs_hello);
	/* The control area as the peer wrote it: the rest of the input, repeated. */
	for (size_t i = 0; i < sizeof(ring) - FZ_RING; i++)
		ring[FZ_RING + i] = size > at ? data[at + i % (size - at)] : 0;
	for (; at + 4 <= size && rs.err == 0; at += 4) {
		uint32_t imm;

		memcpy(&imm, data + at, 4);
		rs_proto_imm(&rs, imm);
		if (rs.err != 0)
			break;
		if (rs.rbytes > rs.rbuf_size || rs.peer_avail > rs.peer_size || rs.credits > rs.peer_rq)
			abort();
		/* The reader takes what came, as a program reading the socket would. */
		if (data[at] & 1) {
			rs.rbytes = 0;
			rs.rfreed = 0;
		}
	}
	for (struct rs_iomap *m = rs.peer_iomaps; m != NULL;) {
		struct rs_iomap *next = m->next;

		if (m->len == 0 || m->offset + m->len < m->offset || ++maps > RS_MAX_IOMAPS)
			abort();
		free(m);
		m = next;
	}
	return 0;
}
