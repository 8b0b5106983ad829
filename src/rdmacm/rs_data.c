/*
 * rs_data — the data path of a connected rsocket: writes into the peer's
 * ring, completions, credits, and copying out of the own ring (rs_int.h
 * describes the protocol). All under the socket's lock.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "base_log.h"
#include "rs_int.h"

static void rs_on_recv(struct rs *rs, const struct ibv_wc *wc)
{
	struct ibv_recv_wr wr = { .wr_id = RS_WR_RECV, .num_sge = 0 }, *bad;

	if (wc->status != IBV_WC_SUCCESS)
		return; /* flushed: the connection is going */
	if (ibv_post_recv(rs->id->qp, &wr, &bad) == 0)
		rs->rreposted++;
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		rs_proto_imm(rs, be32toh(wc->imm_data));
}

static void rs_on_send(struct rs *rs, const struct ibv_wc *wc)
{
	uint32_t len = (uint32_t)wc->wr_id;

	rs->sq_free++;
	rs->shead = (rs->shead + len) % rs->sbuf_size;
	rs->sused -= len;
	if (wc->status != IBV_WC_SUCCESS && rs->err == 0)
		rs->err = ECONNRESET;
}

/*
 * A non-blocking call that could not move: the device's engine threads run
 * on the same CPUs as the program, and one that spins on EAGAIN would hold
 * off the very work (its writes, the peer's credits) it waits for.
 */
void rs_would_block(void)
{
	sched_yield();
}

/* Takes every completion there is; returns how many. */
int rs_poll_cq(struct rs *rs)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	if (rs->cq == NULL)
		return 0;
	while ((n = ibv_poll_cq(rs->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].wr_id & RS_WR_RECV)
				rs_on_recv(rs, &wc[i]);
			else
				rs_on_send(rs, &wc[i]);
		}
		total += n;
	}
	if (rs->err == EPROTO && !rs->disconnected) {
		/* The peer broke the protocol: nothing more from it is taken. */
		(void)rdma_disconnect(rs->id);
		rs->disconnected = true;
	}
	if (total > 0)
		pthread_cond_broadcast(&rs->progress);
	return total;
}

/* A message without data (credit, FIN): needs one credit and one send slot. */
int rs_post_ctrl(struct rs *rs, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm_data = htobe32(imm),
		.num_sge = 0,
		.wr.rdma = { .remote_addr = rs->peer_addr, .rkey = rs->peer_rkey },
	}, *bad;

	if (rs->credits < 1 || rs->sq_free < 1) {
		errno = EAGAIN;
		return -1;
	}
	if (ibv_post_send(rs->id->qp, &wr, &bad) != 0)
		return -1;
	rs->credits--;
	rs->sq_free--;
	return 0;
}

/*
 * Returns the receives reposted and the ring bytes read, once either is half
 * of what the peer can have (or when forced and there is any): one credit
 * message then returns at least half, so credits never chase each other.
 */
void rs_give_credits(struct rs *rs, bool force)
{
	uint32_t n, bytes;

	if (rs->state != RS_CONNECTED || rs->disconnected || rs->err != 0)
		return;
	if (!force && rs->rreposted < rs->rq_size / 2 && rs->rfreed < rs->rbuf_size / 2)
		return;
	if (rs->rreposted == 0 && rs->rfreed == 0)
		return;
	n = rs->rreposted > 0xff ? 0xff : rs->rreposted;
	bytes = rs->rfreed > RS_IMM_BYTES_MAX ? RS_IMM_BYTES_MAX : rs->rfreed;
	if (rs_post_ctrl(rs, (RS_IMM_CREDIT << 30) | (n << 22) | bytes) == 0) {
		rs->rreposted -= n;
		rs->rfreed -= bytes;
	}
}

uint32_t rs_sbuf_contig(const struct rs *rs)
{
	uint32_t tail = (rs->shead + rs->sused) % rs->sbuf_size;
	uint32_t free_ = rs->sbuf_size - rs->sused;

	return free_ < rs->sbuf_size - tail ? free_ : rs->sbuf_size - tail;
}

/* Whether a data write could go now (one credit stays back for credits and FIN). */
bool rs_can_send(const struct rs *rs)
{
	return rs->credits >= 2 && rs->sq_free >= 2 && rs->peer_avail > 0 && rs_sbuf_contig(rs) > 0;
}

/*
 * Posts one RDMA WRITE of up to len bytes (all of them, or nothing, when
 * whole) from buf to raddr: inline from buf when small, else through the
 * send buffer. With an immediate (imm_type >= 0) it takes a receive credit
 * and carries the type with the bytes written (data) or imm_bits. Returns
 * the bytes taken.
 */
uint32_t rs_post_write(struct rs *rs, const uint8_t *buf, uint32_t len, uint64_t raddr, uint32_t rkey, int imm_type,
		       uint32_t imm_bits, bool whole)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge, .num_sge = 1 }, *bad;
	uint32_t n = len;

	if (n <= rs->inline_size) {
		wr.send_flags = IBV_SEND_INLINE;
		sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = n };
	} else {
		uint32_t tail = (rs->shead + rs->sused) % rs->sbuf_size, c = rs_sbuf_contig(rs);

		if (c == 0 || (whole && c < n))
			return 0;
		if (n > c)
			n = c;
		memcpy(rs->sbuf + tail, buf, n);
		sge = (struct ibv_sge){ .addr = (uintptr_t)(rs->sbuf + tail), .length = n, .lkey = rs->smr->lkey };
		wr.wr_id = n;
	}
	if (imm_type >= 0) {
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32(((uint32_t)imm_type << 30) | (imm_type == RS_IMM_DATA ? n : imm_bits));
	}
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(rs->id->qp, &wr, &bad) != 0) {
		rs->err = rs->err ? rs->err : ECONNRESET;
		return 0;
	}
	rs->sused += (uint32_t)wr.wr_id;
	rs->sq_free--;
	if (imm_type >= 0)
		rs->credits--;
	return n;
}

/* One data write at the tail of the peer's ring; returns the bytes taken. */
static uint32_t rs_post_data(struct rs *rs, const uint8_t *buf, size_t len)
{
	uint32_t n = rs->peer_avail, room = rs->peer_size - rs->peer_tail;

	if (room < n)
		n = room;
	if (len < n)
		n = (uint32_t)len;
	if (n > RS_MAX_XFER)
		n = RS_MAX_XFER;
	n = rs_post_write(rs, buf, n, rs->peer_addr + rs->peer_tail, rs->peer_rkey, RS_IMM_DATA, 0, false);
	rs->peer_avail -= n;
	rs->peer_tail = (rs->peer_tail + n) % rs->peer_size;
	return n;
}

/* The error a send reports now, or 0 while it can go on. */
static int rs_send_err(const struct rs *rs)
{
	if (rs->shut_wr)
		return EPIPE;
	if (rs->err != 0 || rs->disconnected)
		return rs->err != 0 && rs->err != EPROTO ? rs->err : ECONNRESET;
	if (rs->state != RS_CONNECTED)
		return ENOTCONN;
	return 0;
}

ssize_t rs_send_locked(struct rs *rs, const struct iovec *iov, int iovcnt, int flags)
{
	bool block = !rs->nonblock && !(flags & MSG_DONTWAIT);
	size_t done = 0, off = 0;
	int i = 0, err;

	if (rs->state == RS_ACCEPTING || rs->state == RS_CONNECTING)
		(void)rs_process(rs);
	while (i < iovcnt) {
		if (off == iov[i].iov_len) {
			i++, off = 0;
			continue;
		}
		rs_poll_cq(rs);
		err = rs_send_err(rs);
		if (err != 0 && !(err == ENOTCONN && (rs->state == RS_CONNECTING || rs->state == RS_ACCEPTING))) {
			if (done > 0)
				break;
			errno = err;
			return -1;
		}
		if (err == 0 && rs_can_send(rs)) {
			uint32_t n = rs_post_data(rs, (const uint8_t *)iov[i].iov_base + off, iov[i].iov_len - off);

			done += n, off += n;
			if (n > 0)
				continue;
		}
		if (!block) {
			if (done > 0)
				break;
			rs_would_block();
			errno = EAGAIN;
			return -1;
		}
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			return done > 0 ? (ssize_t)done : -1;
	}
	rs_give_credits(rs, false);
	return (ssize_t)done;
}

static void rs_copy_out(struct rs *rs, uint8_t *dst, size_t n, bool peek)
{
	uint32_t first = rs->rbuf_size - rs->rhead;

	if (first > n)
		first = (uint32_t)n;
	memcpy(dst, rs->rbuf + rs->rhead, first);
	memcpy(dst + first, rs->rbuf, n - first);
	if (peek)
		return;
	rs->rhead = (uint32_t)((rs->rhead + n) % rs->rbuf_size);
	rs->rbytes -= (uint32_t)n;
	rs->rfreed += (uint32_t)n;
}

/* 1 when a read gives EOF now, -1 with errno when it fails, 0 when it may wait. */
static int rs_recv_end(const struct rs *rs)
{
	if (rs->shut_rd || rs->fin_rcvd)
		return 1;
	if (rs->err != 0 || rs->disconnected) {
		errno = rs->err != 0 && rs->err != EPROTO ? rs->err : ECONNRESET;
		return -1;
	}
	if (rs->state != RS_CONNECTED && rs->state != RS_ACCEPTING && rs->state != RS_CONNECTING) {
		errno = ENOTCONN;
		return -1;
	}
	return 0;
}

ssize_t rs_recv_locked(struct rs *rs, const struct iovec *iov, int iovcnt, int flags)
{
	bool block = !rs->nonblock && !(flags & MSG_DONTWAIT), peek = flags & MSG_PEEK;
	size_t done = 0, total = 0, off = 0, pk = 0;
	int i = 0, end;

	for (int k = 0; k < iovcnt; k++)
		total += iov[k].iov_len;
	if (rs->state == RS_ACCEPTING || rs->state == RS_CONNECTING)
		(void)rs_process(rs);
	while (i < iovcnt && done < total) {
		if (off == iov[i].iov_len) {
			i++, off = 0;
			continue;
		}
		rs_poll_cq(rs);
		if (rs->rbytes > pk) {
			size_t n = iov[i].iov_len - off;

			if (n > rs->rbytes - pk)
				n = rs->rbytes - pk;
			if (peek) {
				/* Peeking copies from where the unread bytes start, past what was peeked. */
				uint32_t save = rs->rhead;

				rs->rhead = (uint32_t)((rs->rhead + pk) % rs->rbuf_size);
				rs_copy_out(rs, (uint8_t *)iov[i].iov_base + off, n, true);
				rs->rhead = save;
				pk += n;
			} else {
				rs_copy_out(rs, (uint8_t *)iov[i].iov_base + off, n, false);
				/* A long read hands room back as it goes, so the writer need not stall. */
				rs_give_credits(rs, false);
			}
			done += n, off += n;
			continue;
		}
		if (done > 0 && !(flags & MSG_WAITALL))
			break;
		end = rs_recv_end(rs);
		if (end != 0) {
			if (done > 0 || end > 0)
				break;
			return -1;
		}
		if (!block) {
			if (done > 0)
				break;
			rs_would_block();
			errno = EAGAIN;
			return -1;
		}
		if (rs_wait(rs, POLLIN) != 0 && errno != EINTR)
			return done > 0 ? (ssize_t)done : -1;
	}
	rs_give_credits(rs, false);
	return (ssize_t)done;
}

/*
 * Waits until every posted write has completed (delivered into the peer's
 * ring, or failed because the connection went): what was sent before a
 * shutdown or close reaches the peer.
 */
int rs_drain(struct rs *rs)
{
	while (rs->cq != NULL && rs->sq_free < rs->sq_size) {
		if (rs_poll_cq(rs) > 0)
			continue;
		if (rs_wait(rs, 0) != 0 && errno != EINTR)
			return -1;
	}
	return 0;
}
