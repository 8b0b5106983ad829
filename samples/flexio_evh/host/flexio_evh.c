/*
 * flexio_evh — a CQ-driven FlexIO event handler in the SDK's style. The
 * host places a device QP and its two CQs in DPA memory, connects the QP to
 * a host ibv RC QP, and starts an event handler that the receive CQ wakes.
 * The host sends numbers; the handler answers each v with v*v from the
 * device QP. 2000 messages one at a time, then 2000 in bursts of 16; every
 * answer checked, and the handler's own counters read back by an RPC.
 *
 * Build: as a vendor sample, with the SDK's build_flexio_device.sh for the
 * device side and pkg-config libflexio libibverbs libmlx5 (meson.build).
 */
#define _POSIX_C_SOURCE 200809L
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "../flexio_evh_common.h"

extern struct flexio_app *flexio_evh_device;
flexio_func_t flexio_evh_handler, flexio_evh_stats;

#define N_MSGS 2000
#define BURST 16
#define HOST_SLOTS 32

struct dev {
	struct flexio_process *process;
	struct mlx5dv_devx_uar *devx_uar;
	struct flexio_uar *uar;
	struct flexio_outbox *outbox;
	struct flexio_event_handler *handler;
	struct flexio_cq *rq_cq, *sq_cq;
	struct flexio_qp *qp;
	struct flexio_mkey *mkey;
	struct evh_ctx c; /* built here, then copied to DPA memory at ctx_daddr */
	flexio_uintptr_t ctx_daddr;
};

struct host {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t *buf; /* HOST_SLOTS receive slots, then HOST_SLOTS send slots */
	uint32_t posted;
};

static flexio_uintptr_t dpa_zalloc(struct flexio_process *p, size_t len)
{
	flexio_uintptr_t d = 0;

	if (flexio_buf_dev_alloc(p, len, &d) != FLEXIO_STATUS_SUCCESS ||
	    flexio_buf_dev_memset(p, 0, len, d) != FLEXIO_STATUS_SUCCESS)
		return 0;
	return d;
}

/* A CQ ring as the driver hands it over: every CQE invalid, owner bit 1. */
static flexio_uintptr_t dpa_cq_ring(struct flexio_process *p)
{
	size_t len = (size_t)64 << EVH_LOG_CQ;
	uint8_t *img = calloc(1, len);
	flexio_uintptr_t d = 0;

	if (img == NULL)
		return 0;
	for (size_t i = 0; i < len / 64; i++)
		img[i * 64 + 63] = 0xf1;
	if (flexio_copy_from_host(p, img, len, &d) != FLEXIO_STATUS_SUCCESS)
		d = 0;
	free(img);
	return d;
}

static struct flexio_cq *cq_create(struct dev *d, struct flexio_thread *thread, uint64_t *ring, uint64_t *dbr)
{
	struct flexio_cq_attr a = { .log_cq_depth = EVH_LOG_CQ, .uar_id = flexio_uar_get_id(d->uar) };
	struct flexio_cq *cq = NULL;

	a.element_type = thread != NULL ? FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD : FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ;
	a.thread = thread;
	*ring = a.cq_ring_qmem.daddr = dpa_cq_ring(d->process);
	*dbr = a.cq_dbr_daddr = dpa_zalloc(d->process, 8);
	if (*ring == 0 || *dbr == 0 || flexio_cq_create(d->process, NULL, &a, &cq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	return cq;
}

/* The device's receive ring, every WQE posted over its own slot, and the record saying so. */
static int rq_post_all(struct dev *d)
{
	struct { uint32_t byte_count, lkey; uint64_t addr; } wqe[1u << EVH_LOG_Q];
	uint32_t dbr[2] = { htobe32(1u << EVH_LOG_Q), 0 };

	for (uint32_t i = 0; i < (1u << EVH_LOG_Q); i++) {
		wqe[i].byte_count = htobe32(EVH_MSG);
		wqe[i].lkey = htobe32(d->c.lkey);
		wqe[i].addr = htobe64(d->c.rx_buf + (uint64_t)i * EVH_MSG);
	}
	d->c.rq_pi = 1u << EVH_LOG_Q;
	return flexio_host2dev_memcpy(d->process, wqe, sizeof(wqe), d->c.rq_ring) == FLEXIO_STATUS_SUCCESS &&
			       flexio_host2dev_memcpy(d->process, dbr, sizeof(dbr), d->c.qp_dbr) == FLEXIO_STATUS_SUCCESS
		       ? 0
		       : -1;
}

static int qp_create(struct dev *d)
{
	struct flexio_qp_attr a = { .transport_type = FLEXIO_QPC_ST_RC, .log_sq_depth = EVH_LOG_Q,
				    .log_rq_depth = EVH_LOG_Q, .qp_access_mask = IBV_ACCESS_LOCAL_WRITE };

	a.uar_id = flexio_uar_get_id(d->uar);
	a.pd = flexio_process_get_pd(d->process);
	a.sq_cqn = flexio_cq_get_cq_num(d->sq_cq);
	a.rq_cqn = flexio_cq_get_cq_num(d->rq_cq);
	/* One buffer: the RQ (16-byte WQEs) first, then the SQ (64-byte WQEs), as mlx5 lays out a QP. */
	d->c.rq_ring = dpa_zalloc(d->process, (16u << EVH_LOG_Q) + (64u << EVH_LOG_Q));
	d->c.sq_ring = d->c.rq_ring + (16u << EVH_LOG_Q);
	d->c.qp_dbr = dpa_zalloc(d->process, 8);
	a.qp_wq_buff_qmem.daddr = d->c.rq_ring;
	a.qp_wq_dbr_qmem.daddr = d->c.qp_dbr;
	if (d->c.rq_ring == 0 || d->c.qp_dbr == 0 || flexio_qp_create(d->process, NULL, &a, &d->qp) != FLEXIO_STATUS_SUCCESS)
		return -1;
	d->c.qpn = flexio_qp_get_qp_num(d->qp);
	return 0;
}

/* The DPA buffers messages land in and answers leave from, under a device MKey. */
static int data_buffers(struct dev *d)
{
	size_t len = 2u * EVH_MSG << EVH_LOG_Q;
	struct flexio_mkey_attr ma = { .pd = flexio_process_get_pd(d->process), .len = len,
				       .access = IBV_ACCESS_LOCAL_WRITE };

	ma.daddr = d->c.rx_buf = dpa_zalloc(d->process, len);
	d->c.tx_buf = d->c.rx_buf + (EVH_MSG << EVH_LOG_Q);
	if (d->c.rx_buf == 0 || flexio_device_mkey_create(d->process, &ma, &d->mkey) != FLEXIO_STATUS_SUCCESS)
		return -1;
	d->c.lkey = flexio_mkey_get_id(d->mkey);
	return 0;
}

static int dev_create(struct ibv_context *ctx, struct dev *d)
{
	struct flexio_event_handler_attr ea = { .host_stub_func = flexio_evh_handler };

	d->devx_uar = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (d->devx_uar == NULL || flexio_process_create(ctx, flexio_evh_device, NULL, &d->process) != FLEXIO_STATUS_SUCCESS ||
	    flexio_uar_create(d->process, d->devx_uar, &d->uar) != FLEXIO_STATUS_SUCCESS ||
	    flexio_outbox_create(d->process, NULL, d->uar, &d->outbox) != FLEXIO_STATUS_SUCCESS ||
	    flexio_event_handler_create(d->process, &ea, NULL, d->outbox, &d->handler) != FLEXIO_STATUS_SUCCESS)
		return -1;
	d->c.outbox_id = flexio_outbox_get_id(d->outbox);
	d->rq_cq = cq_create(d, flexio_event_handler_get_thread(d->handler), &d->c.rq_cq_ring, &d->c.rq_cq_dbr);
	d->sq_cq = cq_create(d, NULL, &d->c.sq_cq_ring, &d->c.sq_cq_dbr);
	if (d->rq_cq == NULL || d->sq_cq == NULL || qp_create(d) != 0 || data_buffers(d) != 0 || rq_post_all(d) != 0)
		return -1;
	d->c.rq_cqn = flexio_cq_get_cq_num(d->rq_cq);
	return 0;
}

static void dev_destroy(struct dev *d)
{
	if (d->handler != NULL)
		flexio_event_handler_destroy(d->handler);
	if (d->qp != NULL)
		flexio_qp_destroy(d->qp);
	if (d->rq_cq != NULL)
		flexio_cq_destroy(d->rq_cq);
	if (d->sq_cq != NULL)
		flexio_cq_destroy(d->sq_cq);
	if (d->mkey != NULL)
		flexio_device_mkey_destroy(d->mkey);
	if (d->outbox != NULL)
		flexio_outbox_destroy(d->outbox);
	if (d->uar != NULL)
		flexio_uar_destroy(d->uar);
	if (d->process != NULL) {
		if (flexio_err_status(d->process) != 0)
			flexio_err_display(d->process);
		flexio_process_destroy(d->process); /* DPA memory goes with it */
	}
	if (d->devx_uar != NULL)
		mlx5dv_devx_free_uar(d->devx_uar);
}

static int host_create(struct ibv_context *ctx, struct host *h)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 64, .max_recv_wr = 64,
								       .max_send_sge = 1, .max_recv_sge = 1 } };

	if (posix_memalign((void **)&h->buf, 4096, 2 * HOST_SLOTS * sizeof(uint64_t)) != 0)
		return -1;
	h->pd = ibv_alloc_pd(ctx);
	h->cq = h->pd != NULL ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	if (h->cq == NULL)
		return -1;
	qa.send_cq = qa.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &qa);
	h->mr = ibv_reg_mr(h->pd, h->buf, 2 * HOST_SLOTS * sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE);
	return h->qp != NULL && h->mr != NULL ? 0 : -1;
}

static void host_destroy(struct host *h)
{
	if (h->qp != NULL)
		ibv_destroy_qp(h->qp);
	if (h->mr != NULL)
		ibv_dereg_mr(h->mr);
	if (h->cq != NULL)
		ibv_destroy_cq(h->cq);
	if (h->pd != NULL)
		ibv_dealloc_pd(h->pd);
	free(h->buf);
}

static int host_qp_up(struct host *h, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };

	if (ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1; /* RoCE: the device's own port, by its GID 0 */
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_query_gid(h->qp->context, 1, 0, &a.ah_attr.grh.dgid) != 0)
		return -1;
	a.min_rnr_timer = 1;
	if (ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int dev_qp_up(struct dev *d, uint32_t dest)
{
	struct flexio_qp_attr a = { .qp_access_mask = IBV_ACCESS_LOCAL_WRITE, .path_mtu = FLEXIO_QP_QPC_MTU_BYTES_1K,
				    .min_rnr_nak_timer = 1, .remote_qp_num = dest };
	const enum flexio_qp_state steps[] = { FLEXIO_QP_STATE_INIT, FLEXIO_QP_STATE_RTR, FLEXIO_QP_STATE_RTS };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		a.next_state = steps[i];
		if (flexio_qp_modify(d->qp, &a, NULL) != FLEXIO_STATUS_SUCCESS)
			return -1;
	}
	return 0;
}

static int host_post_recv(struct host *h)
{
	struct ibv_sge s = { .addr = (uintptr_t)&h->buf[h->posted % HOST_SLOTS], .length = 8, .lkey = h->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = h->posted % HOST_SLOTS, .sg_list = &s, .num_sge = 1 }, *bad;

	h->posted++;
	return ibv_post_recv(h->qp, &w, &bad);
}

static int host_send(struct host *h, uint64_t v)
{
	uint64_t *slot = &h->buf[HOST_SLOTS + v % HOST_SLOTS];
	struct ibv_sge s = { .addr = (uintptr_t)slot, .length = 8, .lkey = h->mr->lkey };
	struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	*slot = v;
	return ibv_post_send(h->qp, &w, &bad);
}

/* Waits for n answers, which must be the squares of *next, *next+1, ...; 0, or -1 on a wrong or missing one. */
static int host_answers(struct host *h, uint32_t n, uint64_t *next)
{
	time_t give_up = time(NULL) + 10;

	while (n != 0) {
		struct ibv_wc wc;
		int got = ibv_poll_cq(h->cq, 1, &wc);

		if (got == 0 && time(NULL) > give_up)
			return -1;
		if (got == 0 || (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND))
			continue;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || h->buf[wc.wr_id] != *next * *next) {
			fprintf(stderr, "flexio_evh: answer %llu wrong (status %d)\n", (unsigned long long)*next, wc.status);
			return -1;
		}
		(*next)++;
		n--;
		if (host_post_recv(h) != 0)
			return -1;
	}
	return 0;
}

static int exchange(struct host *h, uint32_t burst)
{
	uint64_t sent = 0, next = 0;

	while (sent < N_MSGS) {
		for (uint32_t i = 0; i < burst; i++)
			if (host_send(h, 1000 + sent++) != 0)
				return -1;
		next = 1000 + sent - burst;
		if (host_answers(h, burst, &next) != 0)
			return -1;
	}
	return 0;
}

static uint64_t stat_of(struct dev *d, uint32_t which)
{
	uint64_t v = ~0ull;

	flexio_process_call(d->process, flexio_evh_stats, &v, d->ctx_daddr, which);
	return v;
}

static int run(struct ibv_context *ctx)
{
	struct dev d = { 0 };
	struct host h = { 0 };
	int rc = -1;

	if (dev_create(ctx, &d) != 0 || host_create(ctx, &h) != 0 || host_qp_up(&h, d.c.qpn) != 0 ||
	    dev_qp_up(&d, h.qp->qp_num) != 0 ||
	    flexio_copy_from_host(d.process, &d.c, sizeof(d.c), &d.ctx_daddr) != FLEXIO_STATUS_SUCCESS)
		goto out;
	for (uint32_t i = 0; i < HOST_SLOTS; i++)
		if (host_post_recv(&h) != 0)
			goto out;
	if (flexio_event_handler_run(d.handler, d.ctx_daddr) != FLEXIO_STATUS_SUCCESS || exchange(&h, 1) != 0 ||
	    exchange(&h, BURST) != 0)
		goto out;
	printf("flexio_evh: %d answers one at a time and %d in bursts of %d: all right\n", N_MSGS, N_MSGS, BURST);
	printf("flexio_evh: the handler took %llu messages in %llu activations, %llu errors\n",
	       (unsigned long long)stat_of(&d, 0), (unsigned long long)stat_of(&d, 1),
	       (unsigned long long)stat_of(&d, 2));
	if (stat_of(&d, 0) == 2 * N_MSGS && stat_of(&d, 2) == 0 && flexio_err_status(d.process) == 0)
		rc = 0;
out:
	/* The handler first: its thread may still be completing an answer into the host's queues. */
	if (d.handler != NULL && flexio_event_handler_destroy(d.handler) == FLEXIO_STATUS_SUCCESS)
		d.handler = NULL;
	host_destroy(&h);
	dev_destroy(&d);
	return rc;
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	int rc;

	if (list != NULL)
		ibv_free_device_list(list);
	if (ctx == NULL) {
		fprintf(stderr, "flexio_evh: no device\n");
		return 1;
	}
	rc = run(ctx);
	ibv_close_device(ctx);
	printf("flexio_evh: %s\n", rc == 0 ? "OK" : "FAILED");
	return rc == 0 ? 0 : 1;
}
