/*
 * flexio_pp device code: a packet processor. Its event handler, woken by
 * its RQ's CQ, takes every frame that arrived, swaps the destination and
 * source MACs and sends the frame back out of its SQ, then re-arms the CQ
 * and reschedules. Two RPCs stand for the far end of the wire: one sends
 * numbered frames to the processor's MAC, the other takes what comes back
 * and checks it.
 */
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_queue_access.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../flexio_pp_common.h"

#define PP_MASK(log) ((1u << (log)) - 1)

static struct flexio_dev_cqe64 *pp_cqe(struct pp_wq *q)
{
	struct flexio_dev_cqe64 *c = (struct flexio_dev_cqe64 *)(uintptr_t)q->cq_ring + (q->cq_ci & PP_MASK(PP_LOG_CQ));

	return flexio_dev_cqe_get_owner(c) == ((q->cq_ci >> PP_LOG_CQ) & 1u) ? c : NULL;
}

static void pp_cqe_done(struct pp_wq *q)
{
	q->cq_ci++;
	flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)q->cq_dbr, q->cq_ci);
}

static uint8_t *pp_buf(struct pp_wq *q, uint32_t index)
{
	return (uint8_t *)(uintptr_t)(q->bufs + (uint64_t)(index & PP_MASK(PP_LOG_Q)) * PP_BUF);
}

/* A frame in q's next buffer, sent whole by one data segment (no inline header). */
static void pp_send(struct pp_ctx *c, struct pp_wq *q, uint32_t len)
{
	union flexio_dev_sqe_seg *w = (union flexio_dev_sqe_seg *)(uintptr_t)(q->ring + (q->pi & PP_MASK(PP_LOG_Q)) * 64u);

	flexio_dev_swqe_seg_ctrl_set(&w[0], q->pi, q->num, MLX5_CTRL_SEG_CE_CQE_ALWAYS, FLEXIO_CTRL_SEG_SEND_EN);
	flexio_dev_swqe_seg_eth_set(&w[1], 0, 0, 0, NULL);
	flexio_dev_swqe_seg_mem_ptr_data_set(&w[2], len, c->lkey, (uint64_t)(uintptr_t)pp_buf(q, q->pi));
	q->pi++;
}

static void pp_take_send_completions(struct pp_ctx *c, struct pp_wq *q)
{
	struct flexio_dev_cqe64 *cqe;

	while ((cqe = pp_cqe(q)) != NULL) {
		if (flexio_dev_cqe_get_opcode(cqe) != 0x0)
			c->bad++;
		pp_cqe_done(q);
	}
}

static void pp_repost(struct pp_ctx *c, struct pp_wq *q)
{
	struct flexio_dev_wqe_rcv_data_seg *r =
		(struct flexio_dev_wqe_rcv_data_seg *)(uintptr_t)q->ring + (q->pi & PP_MASK(PP_LOG_Q));

	r->byte_count = cpu_to_be32(PP_BUF);
	r->lkey = cpu_to_be32(c->lkey);
	r->addr = cpu_to_be64((uint64_t)(uintptr_t)pp_buf(q, q->pi));
	q->pi++;
	flexio_dev_dbr_rq_inc_pi((uint32_t *)(uintptr_t)q->dbr);
}

static struct flexio_dev_thread_ctx *pp_thread(struct pp_ctx *c)
{
	struct flexio_dev_thread_ctx *dtctx = NULL;

	flexio_dev_get_thread_ctx(&dtctx);
	flexio_dev_outbox_config(dtctx, (uint16_t)c->outbox_id);
	return dtctx;
}

__dpa_global__ void flexio_pp_handler(uint64_t arg)
{
	struct pp_ctx *c = (struct pp_ctx *)(uintptr_t)arg;
	struct flexio_dev_thread_ctx *dtctx = pp_thread(c);
	struct flexio_dev_cqe64 *cqe;
	uint32_t sent = 0;

	c->activations++;
	while ((cqe = pp_cqe(&c->rq)) != NULL) {
		uint8_t *rx = pp_buf(&c->rq, flexio_dev_cqe_get_wqe_counter(cqe));
		uint8_t *tx = pp_buf(&c->sq, c->sq.pi);
		uint32_t len = flexio_dev_cqe_get_byte_cnt(cqe);

		if (flexio_dev_cqe_get_opcode(cqe) == 0x2 && len >= 14 && len <= PP_BUF) {
			memcpy(tx, rx + 6, 6); /* the source becomes the destination */
			memcpy(tx + 6, rx, 6);
			memcpy(tx + 12, rx + 12, len - 12);
			pp_send(c, &c->sq, len);
			sent++;
			c->forwarded++;
		} else {
			c->bad++;
		}
		pp_repost(c, &c->rq);
		pp_cqe_done(&c->rq);
	}
	if (sent != 0)
		flexio_dev_qp_sq_ring_db(dtctx, (uint16_t)c->sq.pi, c->sq.num);
	pp_take_send_completions(c, &c->sq);
	flexio_dev_cq_arm(dtctx, c->rq.cq_ci, c->rq.cqn);
	flexio_dev_reschedule();
}

static void pp_put_mac(uint8_t *p, uint64_t mac)
{
	for (int i = 0; i < 6; i++)
		p[i] = (uint8_t)(mac >> (8 * (5 - i)));
}

/* Frame n: 60 + n % 1000 bytes, IPv4/UDP-shaped, its payload a pattern of n. */
static uint32_t pp_frame(uint8_t *f, uint64_t n, uint64_t dst, uint64_t src)
{
	uint32_t len = 60 + (uint32_t)(n % 1000);

	pp_put_mac(f, dst);
	pp_put_mac(f + 6, src);
	f[12] = 0x08;
	f[13] = 0x00;
	for (uint32_t i = 14; i < len; i++)
		f[i] = (uint8_t)(n + i);
	memcpy(f + 14, &n, sizeof(n));
	return len;
}

/* The far end sends n frames (at most a ring) to the processor. */
__dpa_rpc__ uint64_t flexio_pp_send(flexio_uintptr_t ctx, uint32_t n)
{
	struct pp_ctx *c = (struct pp_ctx *)(uintptr_t)ctx;
	struct flexio_dev_thread_ctx *dtctx = pp_thread(c);

	if (n > (1u << PP_LOG_Q))
		return 1;
	for (uint32_t i = 0; i < n; i++)
		pp_send(c, &c->peer_sq, pp_frame(pp_buf(&c->peer_sq, c->peer_sq.pi), c->sent++, PP_MAC_DPA, PP_MAC_PEER));
	if (flexio_dev_qp_sq_ring_db(dtctx, (uint16_t)c->peer_sq.pi, c->peer_sq.num) != FLEXIO_DEV_STATUS_SUCCESS)
		return 2;
	pp_take_send_completions(c, &c->peer_sq);
	return 0;
}

/* The far end takes what came back; each frame must be the one it sent, its MACs swapped. */
__dpa_rpc__ uint64_t flexio_pp_receive(flexio_uintptr_t ctx)
{
	struct pp_ctx *c = (struct pp_ctx *)(uintptr_t)ctx;
	struct flexio_dev_cqe64 *cqe;
	uint8_t want[PP_BUF];

	while ((cqe = pp_cqe(&c->peer_rq)) != NULL) {
		const uint8_t *f = pp_buf(&c->peer_rq, flexio_dev_cqe_get_wqe_counter(cqe));
		uint32_t len = pp_frame(want, c->received, PP_MAC_PEER, PP_MAC_DPA);

		if (flexio_dev_cqe_get_opcode(cqe) != 0x2 || flexio_dev_cqe_get_byte_cnt(cqe) != len ||
		    memcmp(f, want, len) != 0)
			c->bad++;
		c->received++;
		pp_repost(c, &c->peer_rq);
		pp_cqe_done(&c->peer_rq);
	}
	return c->received;
}

/* The counters, for the host: 0 sent, 1 received, 2 forwarded, 3 activations, 4 bad. */
__dpa_rpc__ uint64_t flexio_pp_stat(flexio_uintptr_t ctx, uint32_t which)
{
	const struct pp_ctx *c = (const struct pp_ctx *)(uintptr_t)ctx;
	const uint64_t v[5] = { c->sent, c->received, c->forwarded, c->activations, c->bad };

	return which < 5 ? v[which] : ~0ull;
}
