/*
 * flexio_evh device code: an event handler woken by its receive CQ. Each
 * activation takes every message that arrived, answers a number v with v*v
 * from its send queue, posts the receive again, rings the SQ doorbell,
 * consumes the send completions, re-arms the CQ and reschedules.
 */
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_queue_access.h>
#include <stddef.h>
#include <stdint.h>

#include "../flexio_evh_common.h"

#define EVH_MASK(log) ((1u << (log)) - 1)

static struct flexio_dev_cqe64 *evh_cqe(uint64_t ring, uint32_t ci)
{
	struct flexio_dev_cqe64 *c = (struct flexio_dev_cqe64 *)(uintptr_t)ring + (ci & EVH_MASK(EVH_LOG_CQ));

	return flexio_dev_cqe_get_owner(c) == ((ci >> EVH_LOG_CQ) & 1u) ? c : NULL;
}

static void evh_answer(struct evh_ctx *c, uint64_t v)
{
	uint32_t slot = c->sq_pi & EVH_MASK(EVH_LOG_Q);
	union flexio_dev_sqe_seg *wqe = (union flexio_dev_sqe_seg *)(uintptr_t)(c->sq_ring + slot * 64u);
	uint64_t *tx = (uint64_t *)(uintptr_t)(c->tx_buf + slot * EVH_MSG);

	*tx = v * v;
	flexio_dev_swqe_seg_ctrl_set(&wqe[0], c->sq_pi, c->qpn, MLX5_CTRL_SEG_CE_CQE_ALWAYS, FLEXIO_CTRL_SEG_SEND_RC);
	flexio_dev_swqe_seg_mem_ptr_data_set(&wqe[1], sizeof(*tx), c->lkey, (uint64_t)(uintptr_t)tx);
	c->sq_pi++;
}

static void evh_repost(struct evh_ctx *c)
{
	uint32_t slot = c->rq_pi & EVH_MASK(EVH_LOG_Q);
	struct flexio_dev_wqe_rcv_data_seg *r = (struct flexio_dev_wqe_rcv_data_seg *)(uintptr_t)c->rq_ring + slot;

	r->byte_count = cpu_to_be32(EVH_MSG);
	r->lkey = cpu_to_be32(c->lkey);
	r->addr = cpu_to_be64(c->rx_buf + slot * EVH_MSG);
	c->rq_pi++;
	flexio_dev_dbr_rq_inc_pi((uint32_t *)(uintptr_t)c->qp_dbr);
}

static uint32_t evh_take_messages(struct evh_ctx *c)
{
	struct flexio_dev_cqe64 *cqe;
	uint32_t n = 0;

	while ((cqe = evh_cqe(c->rq_cq_ring, c->rq_cq_ci)) != NULL) {
		uint32_t slot = flexio_dev_cqe_get_wqe_counter(cqe) & EVH_MASK(EVH_LOG_Q);

		if (flexio_dev_cqe_get_opcode(cqe) != 0x2 || flexio_dev_cqe_get_byte_cnt(cqe) != sizeof(uint64_t))
			c->errors++; /* not a SEND of one number */
		evh_answer(c, *(uint64_t *)(uintptr_t)(c->rx_buf + slot * EVH_MSG));
		evh_repost(c);
		c->rq_cq_ci++;
		c->msgs++;
		n++;
	}
	flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)c->rq_cq_dbr, c->rq_cq_ci);
	return n;
}

static void evh_take_send_completions(struct evh_ctx *c)
{
	struct flexio_dev_cqe64 *cqe;

	while ((cqe = evh_cqe(c->sq_cq_ring, c->sq_cq_ci)) != NULL) {
		if (flexio_dev_cqe_get_opcode(cqe) != 0x0)
			c->errors++; /* a send that failed */
		c->sq_cq_ci++;
	}
	flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)c->sq_cq_dbr, c->sq_cq_ci);
}

__dpa_global__ void flexio_evh_handler(uint64_t arg)
{
	struct evh_ctx *c = (struct evh_ctx *)(uintptr_t)arg;
	struct flexio_dev_thread_ctx *dtctx;

	flexio_dev_get_thread_ctx(&dtctx);
	flexio_dev_outbox_config(dtctx, (uint16_t)c->outbox_id);
	c->activations++;
	if (evh_take_messages(c) != 0) {
		flexio_dev_dbr_sq_set_pi((uint32_t *)(uintptr_t)c->qp_dbr + 1, c->sq_pi);
		if (flexio_dev_qp_sq_ring_db(dtctx, (uint16_t)c->sq_pi, c->qpn) != FLEXIO_DEV_STATUS_SUCCESS)
			c->errors++;
	}
	evh_take_send_completions(c);
	flexio_dev_cq_arm(dtctx, c->rq_cq_ci, c->rq_cqn);
	flexio_dev_reschedule();
}

/* The handler's counters, for the host: messages, activations and errors. */
__dpa_rpc__ uint64_t flexio_evh_stats(flexio_uintptr_t ctx, uint32_t which)
{
	struct evh_ctx *c = (struct evh_ctx *)(uintptr_t)ctx;

	return which == 0 ? c->msgs : which == 1 ? c->activations : c->errors;
}
