/*
 * FlexIO device code written the way the DOCA 2.0-2.2 samples write it: an
 * event handler that takes packets from an RQ's CQ, copies them into SQ
 * buffers and sends them back (MACs swapped), an RPC that sets it up, an RDMA
 * write and an atomic through a QP, a window onto host memory, emulated
 * doorbells and MSI-X, spinlocks, printing, error codes and the device libc.
 * It only has to compile — as C11 with the host compiler, against softdpu's
 * headers alone, with every warning an error and the device-code compiler's
 * keywords (__dpa_global__, __dpa_rpc__) defined away on the command line.
 * It is never linked or run.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The system headers and the device libc's together: they must not clash. */
#include <libflexio-libc/stdio.h>
#include <libflexio-libc/string.h>
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_debug.h>
#include <libflexio-dev/flexio_dev_err.h>
#include <libflexio-dev/flexio_dev_queue_access.h>
#include <stdarg.h>
#include <stdio.h>

#define DP_LOG_CQ_DEPTH 7
#define DP_LOG_WQ_DEPTH 7
#define DP_LOG_WQ_DATA_BSIZE 11
#define DP_CQ_IDX_MASK ((1U << DP_LOG_CQ_DEPTH) - 1)
#define DP_RQ_IDX_MASK ((1U << DP_LOG_WQ_DEPTH) - 1)
#define DP_SQ_IDX_MASK ((1U << (DP_LOG_WQ_DEPTH + LOG_SQE_NUM_SEGS)) - 1)
#define DP_DATA_IDX_MASK ((1U << DP_LOG_WQ_DEPTH) - 1)
#define DP_USER_ERROR 0x81

/* What the host hands over (flexio_host_program.c's struct hp_host2dev). */
struct dp_cq_transf {
	uint32_t cq_num;
	uint32_t log_cq_depth;
	flexio_uintptr_t cq_ring_daddr;
	flexio_uintptr_t cq_dbr_daddr;
};

struct dp_wq_transf {
	uint32_t wq_num;
	uint32_t wqd_mkey_id;
	flexio_uintptr_t wq_ring_daddr;
	flexio_uintptr_t wq_dbr_daddr;
	flexio_uintptr_t wqd_daddr;
};

struct dp_host2dev {
	struct dp_cq_transf rq_cq, sq_cq;
	struct dp_wq_transf rq, sq;
	uint32_t window_id;
	uint32_t outbox_id;
	uint32_t host_mkey;
	uint64_t host_buf;
};

struct dp_cq_ctx {
	uint32_t cq_number;
	struct flexio_dev_cqe64 *cq_ring, *cqe;
	uint32_t cq_idx;
	uint8_t cq_hw_owner_bit;
	uint32_t *cq_dbr;
};

struct dp_rq_ctx {
	uint32_t rq_number;
	struct flexio_dev_wqe_rcv_data_seg *rq_ring;
	uint32_t *rq_dbr;
};

struct dp_sq_ctx {
	uint32_t sq_number;
	uint32_t sq_wqe_seg_idx;
	union flexio_dev_sqe_seg *sq_ring;
	uint32_t *sq_dbr;
	uint32_t sq_pi;
};

static struct {
	uint32_t lkey;
	uint32_t window_id;
	uint32_t outbox_id;
	uint32_t host_mkey;
	uint64_t host_buf;
	uint64_t packets;
	struct dp_cq_ctx rq_cq_ctx;
	struct dp_rq_ctx rq_ctx;
	struct dp_sq_ctx sq_ctx;
	struct dp_cq_ctx sq_cq_ctx;
	char *sq_data;
	uint32_t tx_buff_idx;
	struct spinlock_s lock;
} dp_ctx;

static void dp_cq_ctx_init(struct dp_cq_ctx *c, const struct dp_cq_transf *t)
{
	c->cq_number = t->cq_num;
	c->cq_ring = (struct flexio_dev_cqe64 *)t->cq_ring_daddr;
	c->cq_dbr = (uint32_t *)t->cq_dbr_daddr;
	c->cqe = c->cq_ring;
	c->cq_idx = 0;
	c->cq_hw_owner_bit = 0x1;
}

static void dp_step_cq(struct dp_cq_ctx *c, uint32_t mask)
{
	c->cq_idx++;
	c->cqe = &c->cq_ring[c->cq_idx & mask];
	if (!(c->cq_idx & mask))
		c->cq_hw_owner_bit = !c->cq_hw_owner_bit;
	flexio_dev_dbr_cq_set_ci(c->cq_dbr, c->cq_idx);
}

static union flexio_dev_sqe_seg *dp_next_sqe(struct dp_sq_ctx *s)
{
	return &s->sq_ring[s->sq_wqe_seg_idx++ & DP_SQ_IDX_MASK];
}

static void dp_swap_macs(char *packet)
{
	char tmp[6];

	memcpy(tmp, packet, sizeof(tmp));
	memcpy(packet, packet + 6, sizeof(tmp));
	memcpy(packet + 6, tmp, sizeof(tmp));
}

/* The device libc's formatting into buffers. */
static int dp_format(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int dp_format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

static void dp_process_packet(struct flexio_dev_thread_ctx *dtctx)
{
	struct flexio_dev_wqe_rcv_data_seg *rwqe;
	union flexio_dev_sqe_seg *swqe;
	uint8_t inline_hdrs[2] = {0, 0};
	uint32_t data_sz;
	uint16_t wqe_idx;
	char *rq_data;
	char *sq_data;

	wqe_idx = flexio_dev_cqe_get_wqe_counter(dp_ctx.rq_cq_ctx.cqe);
	data_sz = flexio_dev_cqe_get_byte_cnt(dp_ctx.rq_cq_ctx.cqe);
	if (flexio_dev_cqe_get_qpn(dp_ctx.rq_cq_ctx.cqe) != dp_ctx.rq_ctx.rq_number)
		flexio_dev_print("CQE of queue %u\n", flexio_dev_cqe_get_qpn(dp_ctx.rq_cq_ctx.cqe));
	rwqe = &dp_ctx.rq_ctx.rq_ring[wqe_idx & DP_RQ_IDX_MASK];
	rq_data = (char *)flexio_dev_rwqe_get_addr(rwqe);
	sq_data = dp_ctx.sq_data + ((size_t)(dp_ctx.tx_buff_idx++ & DP_DATA_IDX_MASK) << DP_LOG_WQ_DATA_BSIZE);
	memcpy(sq_data, rq_data, data_sz);
	dp_swap_macs(sq_data);

	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	flexio_dev_swqe_seg_ctrl_set(swqe, dp_ctx.sq_ctx.sq_pi, dp_ctx.sq_ctx.sq_number,
				     MLX5_CTRL_SEG_CE_CQE_ON_CQE_ERROR, FLEXIO_CTRL_SEG_SEND_EN);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	if (data_sz > 64)
		flexio_dev_swqe_seg_eth_set(swqe, FLEXIO_ETH_SEG_L3CS | FLEXIO_ETH_SEG_L4CS, 0, 0, NULL);
	else
		flexio_dev_swqe_seg_eth_set(swqe, 0, 0, sizeof(inline_hdrs), inline_hdrs);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	flexio_dev_swqe_seg_mem_ptr_data_set(swqe, data_sz, dp_ctx.lkey, (uint64_t)(uintptr_t)sq_data);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	flexio_dev_swqe_seg_data_set(swqe, 0, dp_ctx.lkey, 0);
	dp_ctx.sq_ctx.sq_pi++;
	flexio_dev_qp_sq_ring_db(dtctx, (uint16_t)dp_ctx.sq_ctx.sq_pi, dp_ctx.sq_ctx.sq_number);
	flexio_dev_dbr_rq_inc_pi(dp_ctx.rq_ctx.rq_dbr);
}

/* An RDMA write and a compare-and-swap on the QP, segments filled by hand and by the helpers. */
static void dp_rdma(struct flexio_dev_thread_ctx *dtctx, uint32_t qpn, uint32_t rkey, uint64_t raddr)
{
	union flexio_dev_sqe_seg *swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	uint32_t inline_words[3] = {1, 2, 3};

	flexio_dev_swqe_seg_ctrl_set(swqe, dp_ctx.sq_ctx.sq_pi, qpn, MLX5_CTRL_SEG_CE_CQE_ALWAYS,
				     FLEXIO_CTRL_SEG_RDMA_WRITE);
	swqe->ctrl.general_id = cpu_to_be32(0x1234);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	flexio_dev_swqe_seg_rdma_set(swqe, rkey, raddr);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	flexio_dev_swqe_seg_inline_data_set(swqe, sizeof(inline_words), inline_words);
	dp_ctx.sq_ctx.sq_pi++;

	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	swqe->ctrl.idx_opcode = cpu_to_be32(((dp_ctx.sq_ctx.sq_pi & 0xffff) << 8) |
					    MLX5_CTRL_SEG_OPCODE_ATOMIC_COMPARE_AND_SWAP);
	swqe->ctrl.qpn_ds = cpu_to_be32((qpn << 8) | 4);
	swqe->ctrl.signature_fm_ce_se = cpu_to_be32(MLX5_CTRL_SEG_CE_CQE_ALWAYS << 2);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	swqe->rdma.raddr = cpu_to_be64(raddr);
	swqe->rdma.rkey = cpu_to_be32(rkey);
	swqe = dp_next_sqe(&dp_ctx.sq_ctx);
	flexio_dev_swqe_seg_atomic_set(swqe, 1, 0);
	dp_ctx.sq_ctx.sq_pi++;
	flexio_dev_dbr_sq_set_pi(dp_ctx.sq_ctx.sq_dbr + 1, dp_ctx.sq_ctx.sq_pi);
	flexio_dev_qp_sq_ring_db(dtctx, (uint16_t)dp_ctx.sq_ctx.sq_pi, qpn);
}

/* Host memory through the window: read a counter, bump it, write it back. */
static int dp_window(struct flexio_dev_thread_ctx *dtctx)
{
	flexio_uintptr_t *host_ptr = NULL;
	uint64_t counter = 0;

	if (flexio_dev_window_config(dtctx, (uint16_t)dp_ctx.window_id, dp_ctx.host_mkey) !=
	    FLEXIO_DEV_STATUS_SUCCESS)
		return -1;
	if (flexio_dev_window_mkey_config(dtctx, dp_ctx.host_mkey) != FLEXIO_DEV_STATUS_SUCCESS)
		return -1;
	if (flexio_dev_window_ptr_acquire(dtctx, dp_ctx.host_buf, &host_ptr) != FLEXIO_DEV_STATUS_SUCCESS)
		return -1;
	if (flexio_dev_window_copy_from_host(dtctx, &counter, dp_ctx.host_buf, sizeof(counter)) !=
	    FLEXIO_DEV_STATUS_SUCCESS)
		return -1;
	counter += host_ptr != NULL ? *host_ptr : 0;
	return flexio_dev_window_copy_to_host(dtctx, dp_ctx.host_buf, &counter, sizeof(counter)) ==
			       FLEXIO_DEV_STATUS_SUCCESS
		       ? 0
		       : -1;
}

/* Set-up RPC: queue contexts from the host's description, then a greeting. */
flexio_dev_rpc_handler_t dp_rpc_init;
__dpa_rpc__ uint64_t dp_rpc_init(uint64_t arg)
{
	struct dp_host2dev *h2d = (struct dp_host2dev *)arg;
	char greeting[64];
	uint32_t i;

	spin_init(&dp_ctx.lock);
	dp_ctx.lkey = h2d->sq.wqd_mkey_id;
	dp_ctx.window_id = h2d->window_id;
	dp_ctx.outbox_id = h2d->outbox_id;
	dp_ctx.host_mkey = h2d->host_mkey;
	dp_ctx.host_buf = h2d->host_buf;
	dp_cq_ctx_init(&dp_ctx.rq_cq_ctx, &h2d->rq_cq);
	dp_cq_ctx_init(&dp_ctx.sq_cq_ctx, &h2d->sq_cq);
	dp_ctx.rq_ctx.rq_number = h2d->rq.wq_num;
	dp_ctx.rq_ctx.rq_ring = (struct flexio_dev_wqe_rcv_data_seg *)h2d->rq.wq_ring_daddr;
	dp_ctx.rq_ctx.rq_dbr = (uint32_t *)h2d->rq.wq_dbr_daddr;
	dp_ctx.sq_ctx.sq_number = h2d->sq.wq_num;
	dp_ctx.sq_ctx.sq_ring = (union flexio_dev_sqe_seg *)h2d->sq.wq_ring_daddr;
	dp_ctx.sq_ctx.sq_dbr = (uint32_t *)h2d->sq.wq_dbr_daddr;
	dp_ctx.sq_data = (char *)h2d->sq.wqd_daddr;
	for (i = 0; i <= DP_RQ_IDX_MASK; i++) {
		struct flexio_dev_wqe_rcv_data_seg *rwqe = &dp_ctx.rq_ctx.rq_ring[i];

		rwqe->byte_count = cpu_to_be32(1U << DP_LOG_WQ_DATA_BSIZE);
		rwqe->lkey = cpu_to_be32(h2d->rq.wqd_mkey_id);
		rwqe->addr = cpu_to_be64(h2d->rq.wqd_daddr + ((uint64_t)i << DP_LOG_WQ_DATA_BSIZE));
	}
	memset(dp_ctx.sq_ctx.sq_ring, 0, sizeof(union flexio_dev_sqe_seg) << (DP_LOG_WQ_DEPTH + LOG_SQE_NUM_SEGS));
	dp_format(greeting, sizeof(greeting), "rq %u sq %u ready", dp_ctx.rq_ctx.rq_number, dp_ctx.sq_ctx.sq_number);
	snprintf(greeting + strlen(greeting), sizeof(greeting) - strlen(greeting), "%c", '\n');
	return (uint64_t)flexio_dev_print("%s", greeting) > 0 ? 0 : 1;
}

/* Command-queue task: counts under the lock, checks the thread's errno. */
flexio_dev_rpc_handler_t dp_rpc_task;
__dpa_rpc__ uint64_t dp_rpc_task(uint64_t arg)
{
	struct flexio_dev_thread_ctx *dtctx;
	uint64_t err;

	if (flexio_dev_get_thread_ctx(&dtctx) < 0)
		return 1;
	spin_lock(&dp_ctx.lock);
	dp_ctx.packets += arg & 0xff;
	spin_unlock(&dp_ctx.lock);
	if (!spin_trylock(&dp_ctx.lock))
		spin_unlock(&dp_ctx.lock);
	err = flexio_dev_get_errno(dtctx);
	if (err) {
		flexio_dev_rst_errno(dtctx);
		return err;
	}
	return flexio_dev_get_and_rst_errno(dtctx);
}

/* A function registered with pack/unpack: its unpacker and the function itself. */
uint64_t dp_add(uint64_t a, uint64_t b);
uint64_t dp_add(uint64_t a, uint64_t b)
{
	return a + b;
}

flexio_dev_arg_unpack_func_t dp_add_unpack;
uint64_t dp_add_unpack(void *argbuf, void *func)
{
	uint64_t *args = (uint64_t *)argbuf;

	return ((uint64_t(*)(uint64_t, uint64_t))func)(args[0], args[1]);
}

/* The fatal-error handler the host names (flexio_process_error_handler_set). */
flexio_dev_event_handler_t dp_error_handler;
__dpa_global__ void dp_error_handler(uint64_t arg)
{
	print_sim_str("fatal error\n", 12);
	print_sim_hex(arg, 16);
	print_sim_int((int)arg, 10);
	print_sim_putc('\n');
	SIM_TRACEVAL(arg);
	flexio_dev_finish();
}

/* A polling thread: waits for its doorbell CQE, then leaves. */
flexio_dev_poll_thread_t dp_poll;
__dpa_global__ void dp_poll(uint64_t thread_arg)
{
	struct flexio_dev_thread_ctx *dtctx;
	struct flexio_dev_eqe *eqe = (struct flexio_dev_eqe *)thread_arg;
	uint32_t eq_ci = 0;

	flexio_dev_get_thread_ctx(&dtctx);
	while (flexio_dev_eqe_get_owner(eqe) == (eq_ci & 1))
		;
	if (eqe->type == 0) {
		uint32_t cqn = flexio_dev_eqe_get_cqn(eqe);

		flexio_dev_db_ctx_arm(dtctx, cqn, (uint32_t)(thread_arg >> 32));
		flexio_dev_db_ctx_force_trigger(dtctx, cqn, (uint32_t)(thread_arg >> 32));
		flexio_dev_msix_send(dtctx, cqn);
	}
	flexio_dev_eq_update_ci(dtctx, ++eq_ci, be32_to_cpu(eqe->event_data.cqn) & 0xffffff);
	flexio_dev_reschedule();
}

/* The event handler: one activation per armed-CQ event. */
flexio_dev_event_handler_t dp_event_handler;
__dpa_global__ void dp_event_handler(uint64_t thread_arg)
{
	struct flexio_dev_thread_ctx *dtctx;
	char name[16];
	char msg[] = "handler up\n";

	(void)thread_arg;
	if (flexio_dev_get_thread_ctx(&dtctx) < 0)
		flexio_dev_error(DP_USER_ERROR);
	if (flexio_dev_outbox_config(dtctx, (uint16_t)dp_ctx.outbox_id) != FLEXIO_DEV_STATUS_SUCCESS)
		flexio_dev_error(DP_USER_ERROR + 1);
	flexio_dev_puts(dtctx, msg);
	strncpy(name, "dp", sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	strcpy(name + strlen(name), "_handler");
	if (strcmp(name, "dp_handler") != 0 || strncmp(name, "dp", 2) != 0 || memcmp(name, "dp", 2) != 0)
		flexio_dev_error(DP_USER_ERROR + 2);
	flexio_dev_print("thread %u tls %#llx\n", flexio_dev_get_thread_id(dtctx),
			 (unsigned long long)flexio_dev_get_thread_local_storage(dtctx));

	while (flexio_dev_cqe_get_owner(dp_ctx.rq_cq_ctx.cqe) != dp_ctx.rq_cq_ctx.cq_hw_owner_bit) {
		if (flexio_dev_cqe_get_opcode(dp_ctx.rq_cq_ctx.cqe) == 0xd ||
		    (dp_ctx.rq_cq_ctx.cqe->op_own >> 4) == 0xe)
			flexio_dev_error(DP_USER_ERROR + 3);
		dp_process_packet(dtctx);
		dp_step_cq(&dp_ctx.rq_cq_ctx, DP_CQ_IDX_MASK);
		dp_ctx.packets++;
	}
	if (be16_to_cpu(dp_ctx.sq_cq_ctx.cqe->wqe_counter) != 0 || dp_ctx.sq_cq_ctx.cqe->signature != 0)
		dp_step_cq(&dp_ctx.sq_cq_ctx, DP_CQ_IDX_MASK);
	if (dp_window(dtctx) == 0)
		dp_rdma(dtctx, dp_ctx.sq_ctx.sq_number, dp_ctx.host_mkey, dp_ctx.host_buf);
	flexio_dev_cq_arm(dtctx, dp_ctx.rq_cq_ctx.cq_idx, dp_ctx.rq_cq_ctx.cq_number);
	flexio_dev_reschedule();
}
