/*
 * rs_iomap — I/O mapping: riomap registers a buffer for the peer's writes
 * and tells the peer (a control message, ordered with the stream), riowrite
 * writes into a mapping the peer announced (a plain RDMA WRITE: the peer's
 * CPU takes no part, and no receive credit is used), riounmap withdraws the
 * registration (the peer is not told: a later write there fails the
 * connection, as the mapping is the application's contract). A riowrite's
 * last byte lands after all the others.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base_log.h"
#include "rs_int.h"

static void rs_iomap_list_free(struct rs_iomap **l)
{
	struct rs_iomap *m;

	while ((m = *l) != NULL) {
		*l = m->next;
		if (m->mr != NULL)
			ibv_dereg_mr(m->mr);
		free(m);
	}
}

void rs_iomap_free(struct rs *rs)
{
	rs_iomap_list_free(&rs->iomaps);
	rs_iomap_list_free(&rs->peer_iomaps);
}

static int rs_iomap_announce(struct rs *rs, const struct rs_iomap *m, bool block)
{
	struct rs_ctrl c = {
		.op = RS_CTRL_IOMAP,
		.rkey = htobe32(m->rkey),
		.offset = htobe64(m->offset),
		.addr = htobe64(m->addr),
		.len = htobe64(m->len),
	};
	uint32_t slot;

	for (;;) {
		rs_poll_cq(rs);
		if (rs->err != 0 || rs->disconnected || rs->shut_wr) {
			errno = rs->shut_wr ? EPIPE : ECONNRESET;
			return -1;
		}
		if (rs->credits >= 2 && rs->sq_free >= 2) {
			slot = rs->ctrl_seq % rs->peer_rq;
			if (rs_post_write(rs, (const uint8_t *)&c, sizeof(c),
					  rs->peer_addr + rs->peer_size + (uint64_t)slot * RS_CTRL_SLOT, rs->peer_rkey,
					  RS_IMM_CTRL, slot, true) == sizeof(c)) {
				rs->ctrl_seq++;
				return 0;
			}
		}
		if (!block) {
			errno = EAGAIN;
			return -1;
		}
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			return -1;
	}
}

static int rs_wait_connected(struct rs *rs)
{
	rs_process(rs);
	while (rs->state == RS_ACCEPTING || rs->state == RS_CONNECTING)
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			return -1;
	if (rs->state != RS_CONNECTED) {
		errno = ENOTCONN;
		return -1;
	}
	return 0;
}

CM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rs *rs;
	struct rs_iomap *m;
	off_t ret = -1;

	(void)flags;
	if (buf == NULL || len == 0 || prot != PROT_WRITE || offset < -1) {
		errno = EINVAL; /* only PROT_WRITE: the peer writes, it does not read */
		return -1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	if (rs_wait_connected(rs) != 0)
		goto out;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		goto out;
	}
	m->mr = ibv_reg_mr(rs->id->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (m->mr == NULL) {
		free(m);
		goto out;
	}
	m->offset = offset == -1 ? (uint64_t)(uintptr_t)buf : (uint64_t)offset;
	m->len = len;
	m->addr = (uint64_t)(uintptr_t)buf;
	m->rkey = m->mr->rkey;
	if (rs_iomap_announce(rs, m, true) != 0) {
		ibv_dereg_mr(m->mr);
		free(m);
		goto out;
	}
	m->next = rs->iomaps;
	rs->iomaps = m;
	ret = (off_t)m->offset;
out:
	rs_unlock(rs);
	return ret;
}

CM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	struct rs *rs = rs_lock(socket);
	struct rs_iomap **pp, *m;
	int ret = -1;

	if (rs == NULL)
		return -1;
	for (pp = &rs->iomaps; (m = *pp) != NULL; pp = &m->next) {
		if (m->addr == (uint64_t)(uintptr_t)buf && m->len == len) {
			*pp = m->next;
			ibv_dereg_mr(m->mr);
			free(m);
			ret = 0;
			break;
		}
	}
	if (ret != 0)
		errno = EINVAL;
	rs_unlock(rs);
	return ret;
}

/* The peer's newest mapping holding offset. */
static const struct rs_iomap *rs_peer_map(const struct rs *rs, uint64_t offset)
{
	for (const struct rs_iomap *m = rs->peer_iomaps; m != NULL; m = m->next)
		if (offset >= m->offset && offset - m->offset < m->len)
			return m;
	return NULL;
}

static size_t rs_iowrite_locked(struct rs *rs, const uint8_t *buf, size_t count, uint64_t offset, bool block)
{
	size_t done = 0;

	while (done < count) {
		const struct rs_iomap *m;

		rs_poll_cq(rs);
		if (rs->err != 0 || rs->disconnected || rs->shut_wr) {
			errno = rs->shut_wr ? EPIPE : ECONNRESET;
			break;
		}
		m = rs_peer_map(rs, offset + done);
		if (m != NULL && m->len - (offset + done - m->offset) < count - done) {
			errno = EINVAL; /* past the end of the peer's mapping */
			break;
		}
		if (m != NULL && rs->sq_free >= 2 && rs_sbuf_contig(rs) > 0) {
			size_t n = count - done > RS_MAX_XFER ? RS_MAX_XFER : count - done;

			/*
			 * The last byte goes in a write of its own, after the rest: a
			 * peer watching it in memory (riostream) then sees the whole
			 * buffer, as an adapter placing a message's bytes in order
			 * gives, whatever order a copy of one write takes.
			 */
			if (done + n == count && n > 1)
				n--;
			n = rs_post_write(rs, buf + done, (uint32_t)n, m->addr + (offset + done - m->offset), m->rkey, -1,
					  0, false);
			done += n;
			if (n > 0)
				continue;
		}
		/* No room yet, or the mapping not announced yet (it comes in order with the stream). */
		if (!block) {
			errno = EAGAIN;
			break;
		}
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			break;
	}
	return done;
}

CM_EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs *rs;
	size_t done = 0;

	if ((buf == NULL && count > 0) || offset < 0) {
		errno = EINVAL;
		return (size_t)-1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return (size_t)-1;
	if (rs_wait_connected(rs) == 0)
		done = rs_iowrite_locked(rs, buf, count, (uint64_t)offset, !rs->nonblock && !(flags & MSG_DONTWAIT));
	rs_unlock(rs);
	return done > 0 || count == 0 ? done : (size_t)-1;
}
