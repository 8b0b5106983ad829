/*
 * Device code of test_flexio_queue: an event handler that answers every
 * message its QP receives, as a FlexIO packet processor does — it drains
 * the receive CQ, builds a SEND WQE per message, posts the receive again,
 * rings the SQ doorbell through its outbox, drains the send CQ, re-arms the
 * receive CQ and reschedules. Other modes finish, crash or never return.
 */
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_queue_access.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_queue_common.h"

#define FXQ_CQE_REQ 0x0
#define FXQ_CQE_RESP_SEND 0x2

/* The CQE at ci, when the device has written it (owner bit of this pass). */
static struct flexio_dev_cqe64 *fxq_cqe(uint64_t ring, uint32_t ci, uint32_t log)
{
	struct flexio_dev_cqe64 *c = (struct flexio_dev_cqe64 *)(uintptr_t)ring + (ci & ((1u << log) - 1));

	if (flexio_dev_cqe_get_owner(c) != ((ci >> log) & 1u))
		return NULL;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return c;
}

/* The answer to one received message: a SEND of 3v + 1 from the next tx slot. */
static void fxq_answer(struct fxq_ctx *c, uint64_t v)
{
	uint32_t slot = c->sq_pi & ((1u << c->log_sq) - 1);
	union flexio_dev_sqe_seg *wqe = (union flexio_dev_sqe_seg *)(uintptr_t)(c->sq_ring + slot * 64u);
	uint64_t *tx = (uint64_t *)(uintptr_t)(c->tx_buf + slot * FXQ_MSG);

	*tx = 3 * v + 1;
	flexio_dev_swqe_seg_ctrl_set(&wqe[0], c->sq_pi, c->qpn, MLX5_CTRL_SEG_CE_CQE_ALWAYS, FLEXIO_CTRL_SEG_SEND_RC);
	flexio_dev_swqe_seg_mem_ptr_data_set(&wqe[1], sizeof(*tx), c->lkey, (uint64_t)(uintptr_t)tx);
	c->sq_pi++;
}

/* The receive WQE at the RQ's head, posted again over its own slot. */
static void fxq_repost(struct fxq_ctx *c)
{
	uint32_t slot = c->rq_pi & ((1u << c->log_rq) - 1);
	struct flexio_dev_wqe_rcv_data_seg *r = (struct flexio_dev_wqe_rcv_data_seg *)(uintptr_t)c->rq_ring + slot;

	r->byte_count = cpu_to_be32(FXQ_MSG);
	r->lkey = cpu_to_be32(c->lkey);
	r->addr = cpu_to_be64(c->rx_buf + slot * FXQ_MSG);
	c->rq_pi++;
	flexio_dev_dbr_rq_inc_pi((uint32_t *)(uintptr_t)c->qp_dbr);
}

static uint32_t fxq_drain_rq(struct fxq_ctx *c)
{
	struct flexio_dev_cqe64 *cqe;
	uint32_t n = 0;

	while ((cqe = fxq_cqe(c->rq_cq_ring, c->rq_cq_ci, c->log_cq)) != NULL) {
		uint32_t slot = flexio_dev_cqe_get_wqe_counter(cqe) & ((1u << c->log_rq) - 1);
		struct flexio_dev_wqe_rcv_data_seg *rwqe = (struct flexio_dev_wqe_rcv_data_seg *)(uintptr_t)c->rq_ring + slot;

		if (flexio_dev_cqe_get_opcode(cqe) != FXQ_CQE_RESP_SEND || flexio_dev_cqe_get_byte_cnt(cqe) != 8 ||
		    flexio_dev_cqe_get_qpn(cqe) != c->qpn)
			c->errors++;
		if (c->mode != FXQ_SINK) {
			fxq_answer(c, *(uint64_t *)flexio_dev_rwqe_get_addr(rwqe));
			n++;
		}
		fxq_repost(c);
		c->rq_cq_ci++;
		__atomic_store_n(&c->msgs, c->msgs + 1, __ATOMIC_RELEASE);
	}
	flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)c->rq_cq_dbr, c->rq_cq_ci);
	return n;
}

static void fxq_drain_sq(struct fxq_ctx *c)
{
	struct flexio_dev_cqe64 *cqe;

	while ((cqe = fxq_cqe(c->sq_cq_ring, c->sq_cq_ci, c->log_cq)) != NULL) {
		if (flexio_dev_cqe_get_opcode(cqe) != FXQ_CQE_REQ)
			c->errors++;
		c->sq_cq_ci++;
	}
	flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)c->sq_cq_dbr, c->sq_cq_ci);
}

static void fxq_mode(struct fxq_ctx *c, struct flexio_dev_thread_ctx *dt)
{
	if (c->mode == FXQ_FINISH) {
		/* Armed where the CQE that woke it waits: the CQ fires again at once, for a thread that is done. */
		if (flexio_dev_cq_arm(dt, c->rq_cq_ci, c->rq_cqn) != FLEXIO_DEV_STATUS_SUCCESS)
			c->arm_failures++;
		flexio_dev_finish();
	}
	if (c->mode == FXQ_CRASH)
		*(volatile uint32_t *)(uintptr_t)8 = 1;
	while (c->mode == FXQ_SPIN)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (c->mode == FXQ_RING) {
		while (flexio_dev_qp_sq_ring_db(dt, (uint16_t)c->sq_pi, c->qpn) == FLEXIO_DEV_STATUS_SUCCESS)
			__atomic_store_n(&c->msgs, c->msgs + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&c->errors, 1, __ATOMIC_RELEASE);
		flexio_dev_finish();
	}
}

__dpa_global__ void fxq_handler(uint64_t arg)
{
	struct fxq_ctx *c = (struct fxq_ctx *)(uintptr_t)arg;
	struct flexio_dev_thread_ctx *dt;

#if defined(__x86_64__)
	c->t_entry = __builtin_ia32_rdtsc(); /* published by the release below */
#endif
	__atomic_fetch_add(&c->activations, 1, __ATOMIC_RELEASE); /* the host watches it */
	c->last_arg = arg;
	if (flexio_dev_get_thread_ctx(&dt) != 0 || flexio_dev_outbox_config(dt, c->outbox_id) != FLEXIO_DEV_STATUS_SUCCESS) {
		c->errors++;
		flexio_dev_reschedule();
	}
	fxq_mode(c, dt);
	if (fxq_drain_rq(c) != 0) {
		flexio_dev_dbr_sq_set_pi((uint32_t *)(uintptr_t)c->qp_dbr + 1, c->sq_pi);
		if (flexio_dev_qp_sq_ring_db(dt, c->sq_pi, c->qpn) != FLEXIO_DEV_STATUS_SUCCESS)
			c->errors++;
	}
	fxq_drain_sq(c);
	if (flexio_dev_cq_arm(dt, c->rq_cq_ci, c->rq_cqn) != FLEXIO_DEV_STATUS_SUCCESS)
		c->arm_failures++;
	__atomic_store_n(&c->done, c->done + 1, __ATOMIC_RELEASE);
	flexio_dev_reschedule();
}

/* The doorbells' refusals: an unknown queue, no outbox; codes 0 (success) or 1 (failed) per call. */
__dpa_rpc__ uint64_t fxq_bad_doorbells(uint32_t outbox_id, uint32_t qpn, uint32_t cqn)
{
	struct flexio_dev_thread_ctx *dt;
	uint64_t r = 0;

	if (flexio_dev_get_thread_ctx(&dt) != 0)
		return ~0ull;
	r |= (uint64_t)(flexio_dev_qp_sq_ring_db(dt, 0, qpn) != FLEXIO_DEV_STATUS_SUCCESS) << 0; /* no outbox yet */
	r |= (uint64_t)(flexio_dev_cq_arm(dt, 0, cqn) != FLEXIO_DEV_STATUS_SUCCESS) << 1;
	r |= (uint64_t)(flexio_dev_outbox_config(dt, (uint16_t)outbox_id) != FLEXIO_DEV_STATUS_SUCCESS) << 2;
	r |= (uint64_t)(flexio_dev_cq_arm(dt, 0, 0xabcdef) != FLEXIO_DEV_STATUS_SUCCESS) << 3;
	r |= (uint64_t)(flexio_dev_qp_sq_ring_db(dt, 0, 0xabcdef) != FLEXIO_DEV_STATUS_SUCCESS) << 4;
	r |= (uint64_t)(flexio_dev_cq_arm(dt, 0, cqn) != FLEXIO_DEV_STATUS_SUCCESS) << 5;
	return r;
}

/* The SQ CQ's next CQE, polled for (bounded): its opcode, 0xff when none came. */
static uint32_t fxq_wait_send(struct fxq_ctx *c)
{
	for (uint32_t spin = 0; spin < 100000000u; spin++) {
		struct flexio_dev_cqe64 *cqe = fxq_cqe(c->sq_cq_ring, c->sq_cq_ci, c->log_cq);

		if (cqe != NULL) {
			uint32_t op = flexio_dev_cqe_get_opcode(cqe);

			c->sq_cq_ci++;
			flexio_dev_dbr_cq_set_ci((uint32_t *)(uintptr_t)c->sq_cq_dbr, c->sq_cq_ci);
			return op;
		}
	}
	return 0xff;
}

/*
 * One work request of the device QP, built with the segment setters and run
 * through the doorbell: an RDMA WRITE of a (kind 0), an RDMA READ (1), a
 * compare-and-swap of b to a (2), a SEND of a inlined (3) at raddr/rkey. The
 * CQE's opcode; what the device's 8-byte buffer holds after it in last_value.
 */
__dpa_rpc__ uint64_t fxq_post(flexio_uintptr_t ctx, uint32_t kind, uint64_t raddr, uint32_t rkey, uint64_t a,
			      uint64_t b)
{
	struct fxq_ctx *c = (struct fxq_ctx *)(uintptr_t)ctx;
	uint32_t slot = c->sq_pi & ((1u << c->log_sq) - 1);
	union flexio_dev_sqe_seg *w = (union flexio_dev_sqe_seg *)(uintptr_t)(c->sq_ring + slot * 64u);
	uint64_t *buf = (uint64_t *)(uintptr_t)(c->tx_buf + slot * FXQ_MSG);
	static const flexio_ctrl_seg_t type[] = { FLEXIO_CTRL_SEG_RDMA_WRITE, FLEXIO_CTRL_SEG_RDMA_READ,
						  FLEXIO_CTRL_SEG_ATOMIC_COMPARE_AND_SWAP, FLEXIO_CTRL_SEG_SEND_RC };
	struct flexio_dev_thread_ctx *dt;
	uint32_t op;

	if (kind > 3 || flexio_dev_get_thread_ctx(&dt) != 0 ||
	    flexio_dev_outbox_config(dt, (uint16_t)c->outbox_id) != FLEXIO_DEV_STATUS_SUCCESS)
		return 0xfe;
	*buf = kind == 0 ? a : 0;
	flexio_dev_swqe_seg_ctrl_set(&w[0], c->sq_pi, c->qpn, MLX5_CTRL_SEG_CE_CQE_ALWAYS, type[kind]);
	if (kind == 3) {
		flexio_dev_swqe_seg_inline_data_set(&w[1], sizeof(a), (uint32_t *)&a);
	} else {
		flexio_dev_swqe_seg_rdma_set(&w[1], rkey, raddr);
		if (kind == 2)
			flexio_dev_swqe_seg_atomic_set(&w[2], a, b);
		flexio_dev_swqe_seg_data_set(&w[kind == 2 ? 3 : 2], sizeof(*buf), c->lkey, (uint64_t)(uintptr_t)buf);
	}
	c->sq_pi++;
	flexio_dev_dbr_sq_set_pi((uint32_t *)(uintptr_t)c->qp_dbr + 1, c->sq_pi);
	if (flexio_dev_qp_sq_ring_db(dt, (uint16_t)c->sq_pi, c->qpn) != FLEXIO_DEV_STATUS_SUCCESS)
		return 0xfd;
	op = fxq_wait_send(c);
	c->last_value = *buf;
	return op;
}

/* The EQE getters on an entry the host wrote: cqn | owner << 32. */
__dpa_rpc__ uint64_t fxq_eqe(flexio_uintptr_t eqe)
{
	struct flexio_dev_eqe *e = (struct flexio_dev_eqe *)(uintptr_t)eqe;

	return flexio_dev_eqe_get_cqn(e) | (uint64_t)flexio_dev_eqe_get_owner(e) << 32;
}

/* An Ethernet segment written at seg, for the host to read back byte for byte. */
__dpa_rpc__ uint64_t fxq_eth_seg(flexio_uintptr_t seg)
{
	uint8_t hdrs[2] = { 0xab, 0xcd };

	return flexio_dev_swqe_seg_eth_set((union flexio_dev_sqe_seg *)(uintptr_t)seg,
					   FLEXIO_ETH_SEG_L4CS | FLEXIO_ETH_SEG_L3CS, 1460, 2, hdrs);
}

/* The device calls softdpu does not run (no EQs, no emulated functions): one bit per call that failed. */
__dpa_rpc__ uint64_t fxq_unsupported(uint32_t cqn)
{
	struct flexio_dev_thread_ctx *dt;
	uint64_t r = 0;

	if (flexio_dev_get_thread_ctx(&dt) != 0)
		return 0;
	r |= (uint64_t)(flexio_dev_eq_update_ci(dt, 0, 1) == FLEXIO_DEV_STATUS_FAILED) << 0;
	r |= (uint64_t)(flexio_dev_msix_send(dt, cqn) == FLEXIO_DEV_STATUS_FAILED) << 1;
	r |= (uint64_t)(flexio_dev_db_ctx_arm(dt, cqn, 1) == FLEXIO_DEV_STATUS_FAILED) << 2;
	r |= (uint64_t)(flexio_dev_db_ctx_force_trigger(dt, cqn, 1) == FLEXIO_DEV_STATUS_FAILED) << 3;
	return r;
}
