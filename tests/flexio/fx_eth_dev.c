/*
 * Device code of test_flexio_eth: a packet processor (fxe_handler, woken by
 * its RQ's CQ: every frame has its MACs swapped and goes back out of its
 * SQ), an injector (fxe_inject: frames to the handler's MAC out of a second
 * SQ) and a collector (fxe_collect: drains a second RQ and checks every
 * frame: swapped MACs, length, sequence number, payload bytes).
 */
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_queue_access.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fx_eth_common.h"

#define FXE_MASK(log) ((1u << (log)) - 1)
#define FXE_CQE_REQ 0x0
#define FXE_CQE_RESP_SEND 0x2

static struct flexio_dev_cqe64 *fxe_cqe(struct fxe_wq *q)
{
	struct flexio_dev_cqe64 *c = (struct flexio_dev_cqe64 *)(uintptr_t)q->cq_ring + (q->cq_ci & FXE_MASK(FXE_LOG_CQ));

	return flexio_dev_cqe_get_owner(c) == ((q->cq_ci >> FXE_LOG_CQ) & 1u) ? c : NULL;
}

static void fxe_cq_done(struct fxe_wq *q)
{
	q->cq_ci++;
	flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)q->cq_dbr, q->cq_ci);
}

static void fxe_put_mac(uint8_t *p, uint64_t mac)
{
	for (int i = 0; i < 6; i++)
		p[i] = (uint8_t)(mac >> (8 * (5 - i)));
}

/* A frame of len bytes, sent from buffer slot of q; no inline header: the data segment carries it all. */
static void fxe_send(struct fxe_ctx *c, struct fxe_wq *q, uint64_t frame, uint32_t len)
{
	union flexio_dev_sqe_seg *w =
		(union flexio_dev_sqe_seg *)(uintptr_t)(q->ring + (q->pi & FXE_MASK(FXE_LOG_Q)) * 64u);

	flexio_dev_swqe_seg_ctrl_set(&w[0], q->pi, q->num, MLX5_CTRL_SEG_CE_CQE_ALWAYS, FLEXIO_CTRL_SEG_SEND_EN);
	flexio_dev_swqe_seg_eth_set(&w[1], 0, 0, 0, NULL);
	flexio_dev_swqe_seg_mem_ptr_data_set(&w[2], len, c->lkey, frame);
	q->pi++;
}

/* The send completions of q, each checked. */
static void fxe_drain_sends(struct fxe_ctx *c, struct fxe_wq *q)
{
	struct flexio_dev_cqe64 *cqe;

	while ((cqe = fxe_cqe(q)) != NULL) {
		if (flexio_dev_cqe_get_opcode(cqe) != FXE_CQE_REQ)
			c->bad++;
		fxe_cq_done(q);
	}
}

/* The receive WQE at q's head posted again over its own buffer. */
static void fxe_repost(struct fxe_ctx *c, struct fxe_wq *q)
{
	uint32_t slot = q->pi & FXE_MASK(FXE_LOG_Q);
	struct flexio_dev_wqe_rcv_data_seg *r = (struct flexio_dev_wqe_rcv_data_seg *)(uintptr_t)q->ring + slot;

	r->byte_count = cpu_to_be32(FXE_BUF);
	r->lkey = cpu_to_be32(c->lkey);
	r->addr = cpu_to_be64(q->bufs + (uint64_t)slot * FXE_BUF);
	q->pi++;
	flexio_dev_dbr_rq_inc_pi((uint32_t *)(uintptr_t)q->dbr);
}

static int fxe_outbox(struct fxe_ctx *c, struct flexio_dev_thread_ctx **dt)
{
	return flexio_dev_get_thread_ctx(dt) == 0 &&
			       flexio_dev_outbox_config(*dt, (uint16_t)c->outbox_id) == FLEXIO_DEV_STATUS_SUCCESS
		       ? 0
		       : -1;
}

__dpa_global__ void fxe_handler(uint64_t arg)
{
	struct fxe_ctx *c = (struct fxe_ctx *)(uintptr_t)arg;
	struct flexio_dev_thread_ctx *dt;
	struct flexio_dev_cqe64 *cqe;
	uint32_t sent = 0;

	__atomic_fetch_add(&c->activations, 1, __ATOMIC_RELAXED);
	if (fxe_outbox(c, &dt) != 0) {
		c->bad++;
		flexio_dev_reschedule();
	}
	while ((cqe = fxe_cqe(&c->h_rq)) != NULL) {
		uint32_t slot = flexio_dev_cqe_get_wqe_counter(cqe) & FXE_MASK(FXE_LOG_Q);
		uint8_t *rx = (uint8_t *)(uintptr_t)(c->h_rq.bufs + (uint64_t)slot * FXE_BUF);
		uint64_t tx = c->h_sq.bufs + (uint64_t)(c->h_sq.pi & FXE_MASK(FXE_LOG_Q)) * FXE_BUF;
		uint32_t len = flexio_dev_cqe_get_byte_cnt(cqe);
		uint8_t mac[6];

		if (flexio_dev_cqe_get_opcode(cqe) != FXE_CQE_RESP_SEND || len > FXE_BUF) {
			c->bad++;
		} else {
			/* The packet processor's work: destination and source swapped. */
			memcpy(mac, rx, 6);
			memcpy(rx, rx + 6, 6);
			memcpy(rx + 6, mac, 6);
			memcpy((void *)(uintptr_t)tx, rx, len);
			fxe_send(c, &c->h_sq, tx, len);
			sent++;
			c->forwarded++;
		}
		fxe_repost(c, &c->h_rq);
		fxe_cq_done(&c->h_rq);
	}
	if (sent != 0 && flexio_dev_qp_sq_ring_db(dt, (uint16_t)c->h_sq.pi, c->h_sq.num) != FLEXIO_DEV_STATUS_SUCCESS)
		c->bad++;
	fxe_drain_sends(c, &c->h_sq);
	flexio_dev_cq_arm(dt, c->h_rq.cq_ci, c->h_rq.cqn);
	flexio_dev_reschedule();
}

/* Frame seq: 64 + seq % 1400 bytes, to the handler, its payload a pattern of seq. */
static uint32_t fxe_build(uint8_t *f, uint64_t seq)
{
	uint32_t len = 64 + (uint32_t)(seq % 1400);

	fxe_put_mac(f, FXE_MAC_DPA);
	fxe_put_mac(f + 6, FXE_MAC_HOST);
	f[12] = 0x88;
	f[13] = 0xb5; /* local experimental ethertype */
	memcpy(f + 14, &seq, sizeof(seq));
	for (uint32_t i = 22; i < len; i++)
		f[i] = (uint8_t)(seq * 7 + i);
	return len;
}

/* n frames (at most the SQ's depth) from the injector SQ. */
__dpa_rpc__ uint64_t fxe_inject(flexio_uintptr_t ctx, uint32_t n)
{
	struct fxe_ctx *c = (struct fxe_ctx *)(uintptr_t)ctx;
	struct flexio_dev_thread_ctx *dt;

	if (fxe_outbox(c, &dt) != 0 || n > (1u << FXE_LOG_Q))
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t buf = c->i_sq.bufs + (uint64_t)(c->i_sq.pi & FXE_MASK(FXE_LOG_Q)) * FXE_BUF;

		fxe_send(c, &c->i_sq, buf, fxe_build((uint8_t *)(uintptr_t)buf, c->injected++));
	}
	if (flexio_dev_qp_sq_ring_db(dt, (uint16_t)c->i_sq.pi, c->i_sq.num) != FLEXIO_DEV_STATUS_SUCCESS)
		return 2;
	fxe_drain_sends(c, &c->i_sq);
	return 0;
}

/* Whether a collected frame is frame seq, its MACs swapped. */
static int fxe_check(const uint8_t *f, uint32_t len, uint64_t seq)
{
	uint8_t want[FXE_BUF];

	if (fxe_build(want, seq) != len)
		return 0;
	fxe_put_mac(want, FXE_MAC_HOST);
	fxe_put_mac(want + 6, FXE_MAC_DPA);
	return memcmp(f, want, len) == 0;
}

/* Drains the collector RQ: the number of frames collected so far. */
__dpa_rpc__ uint64_t fxe_collect(flexio_uintptr_t ctx)
{
	struct fxe_ctx *c = (struct fxe_ctx *)(uintptr_t)ctx;
	struct flexio_dev_cqe64 *cqe;

	while ((cqe = fxe_cqe(&c->c_rq)) != NULL) {
		uint32_t slot = flexio_dev_cqe_get_wqe_counter(cqe) & FXE_MASK(FXE_LOG_Q);
		const uint8_t *f = (const uint8_t *)(uintptr_t)(c->c_rq.bufs + (uint64_t)slot * FXE_BUF);

		if (flexio_dev_cqe_get_opcode(cqe) != FXE_CQE_RESP_SEND ||
		    !fxe_check(f, flexio_dev_cqe_get_byte_cnt(cqe), c->next_seq))
			c->bad++;
		c->next_seq++;
		c->collected++;
		fxe_repost(c, &c->c_rq);
		fxe_cq_done(&c->c_rq);
	}
	return c->collected;
}
