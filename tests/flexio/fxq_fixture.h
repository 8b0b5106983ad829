/*
 * A FlexIO device QP in DPA memory, its two CQs (the receive one waking an
 * event handler), an outbox, and a host ibv RC QP connected to it: what
 * test_flexio_queue and bench_flexio_evh build. The handler's context
 * (struct fxq_ctx) is in DPA memory, which softdpu's host code can read.
 */
#ifndef FXQ_FIXTURE_H_
#define FXQ_FIXTURE_H_

#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "fx_queue_common.h"

#define LOG_Q 6	   /* 64 WQEs in each ring */
#define LOG_CQ 7   /* 128 CQEs */
#define HOST_RX 32 /* receives the host keeps posted */

static struct ibv_context *ctx;

/* Everything one test builds; released by fx_down. */
struct fx {
	struct flexio_process *p;
	struct mlx5dv_devx_uar *devx_uar;
	struct flexio_uar *uar;
	struct flexio_outbox *outbox;
	struct flexio_event_handler *eh;
	struct flexio_cq *rq_cq, *sq_cq;
	struct flexio_qp *qp;
	struct flexio_mkey *mkey; /* over the DPA message buffers */
	flexio_uintptr_t ctx_d, bufs_d;
	struct fxq_ctx *c; /* the handler's context (DPA memory is host-visible in softdpu) */
	/* the host side */
	struct ibv_pd *hpd;
	struct ibv_cq *hcq;
	struct ibv_qp *hqp;
	struct ibv_mr *hmr;
	uint64_t *hbuf; /* pages of its own: registering memory moves whole pages (fab_share.c) */
	uint64_t *target; /* what the device's RDMA and atomics reach: a page of its own, every remote right */
	struct ibv_mr *tmr;
	uint32_t rx_posted, rx_done;
};

static inline void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
}

static inline flexio_uintptr_t dpa_alloc(struct flexio_process *p, size_t len)
{
	flexio_uintptr_t d = 0;

	if (flexio_buf_dev_alloc(p, len, &d) != FLEXIO_STATUS_SUCCESS)
		return 0;
	flexio_buf_dev_memset(p, 0, len, d);
	return d;
}

/* A CQ ring as a driver initialises it: every CQE invalid, owner 1 (not the device's yet). */
static inline flexio_uintptr_t cq_ring(struct flexio_process *p, uint32_t log)
{
	size_t len = (size_t)64 << log;
	flexio_uintptr_t d = dpa_alloc(p, len);
	uint8_t *img = calloc(1, len);

	if (d != 0 && img != NULL) {
		for (size_t i = 0; i < ((size_t)1 << log); i++)
			img[i * 64 + 63] = 0xf1;
		flexio_host2dev_memcpy(p, img, len, d);
	}
	free(img);
	return d;
}

static inline struct flexio_cq *cq_new(struct fx *f, struct flexio_thread *t, uint64_t *ring_out, uint64_t *dbr_out)
{
	struct flexio_cq_attr a = { .log_cq_depth = LOG_CQ };
	struct flexio_cq *cq = NULL;

	a.element_type = t != NULL ? FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD : FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ;
	a.thread = t;
	a.uar_id = flexio_uar_get_id(f->uar);
	a.cq_ring_qmem.daddr = cq_ring(f->p, LOG_CQ);
	a.cq_dbr_daddr = dpa_alloc(f->p, 8);
	*ring_out = a.cq_ring_qmem.daddr;
	*dbr_out = a.cq_dbr_daddr;
	if (flexio_cq_create(f->p, NULL, &a, &cq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	return cq;
}

static inline int qp_new(struct fx *f)
{
	struct flexio_qp_attr a = { .transport_type = FLEXIO_QPC_ST_RC, .log_sq_depth = LOG_Q,
				    .log_rq_depth = LOG_Q, .rq_type = FLEXIO_QP_QPC_RQ_TYPE_REGULAR,
				    .qp_access_mask = IBV_ACCESS_LOCAL_WRITE };

	a.uar_id = flexio_uar_get_id(f->uar);
	a.pd = flexio_process_get_pd(f->p);
	a.sq_cqn = flexio_cq_get_cq_num(f->sq_cq);
	a.rq_cqn = flexio_cq_get_cq_num(f->rq_cq);
	f->c->rq_ring = dpa_alloc(f->p, (16u << LOG_Q) + (64u << LOG_Q));
	f->c->sq_ring = f->c->rq_ring + (16u << LOG_Q); /* RQ first, then SQ, as mlx5 lays a QP out */
	f->c->qp_dbr = dpa_alloc(f->p, 8);
	a.qp_wq_buff_qmem.daddr = f->c->rq_ring;
	a.qp_wq_dbr_qmem.daddr = f->c->qp_dbr;
	return flexio_qp_create(f->p, NULL, &a, &f->qp) == FLEXIO_STATUS_SUCCESS ? 0 : -1;
}

/* The device's receives, posted by the host before the handler runs (as vendor programs do). */
static inline void rq_fill(struct fx *f)
{
	struct fxq_ctx *c = f->c;
	uint32_t n = 1u << LOG_Q;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t *w = (uint32_t *)(uintptr_t)(c->rq_ring + 16u * i);

		w[0] = htobe32(FXQ_MSG);
		w[1] = htobe32(c->lkey);
		*(uint64_t *)(void *)&w[2] = htobe64(c->rx_buf + (uint64_t)i * FXQ_MSG);
	}
	c->rq_pi = n;
	*(uint32_t *)(uintptr_t)c->qp_dbr = htobe32(n);
}

static inline int host_side(struct fx *f)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 64, .max_recv_wr = 64,
								       .max_send_sge = 1, .max_recv_sge = 1 } };

	if (posix_memalign((void **)&f->hbuf, 4096, 2 * HOST_RX * sizeof(uint64_t)) != 0)
		return -1;
	f->hpd = ibv_alloc_pd(ctx);
	f->hcq = f->hpd != NULL ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	if (f->hcq == NULL)
		return -1;
	qa.send_cq = qa.recv_cq = f->hcq;
	f->hqp = ibv_create_qp(f->hpd, &qa);
	f->hmr = ibv_reg_mr(f->hpd, f->hbuf, 2 * HOST_RX * sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE);
	if (posix_memalign((void **)&f->target, 4096, 4096) != 0)
		return -1;
	memset(f->target, 0, 4096);
	f->tmr = ibv_reg_mr(f->hpd, f->target, 4096,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC);
	return f->hqp != NULL && f->hmr != NULL && f->tmr != NULL ? 0 : -1;
}

static inline int host_connect(struct fx *f)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC };

	if (ibv_modify_qp(f->hqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = flexio_qp_get_qp_num(f->qp);
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1; /* RoCE: the device's own port, by its GID 0 */
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_query_gid(ctx, 1, 0, &a.ah_attr.grh.dgid) != 0)
		return -1;
	a.min_rnr_timer = 1;
	a.max_dest_rd_atomic = 16; /* the device's READs and atomics */
	if (ibv_modify_qp(f->hqp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* the device reposts its receives as it answers */
	a.max_rd_atomic = 16;
	return ibv_modify_qp(f->hqp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline int fx_qp_move(struct flexio_qp *qp, enum flexio_qp_state s, uint32_t remote)
{
	struct flexio_qp_attr a = { .next_state = s, .remote_qp_num = remote, .qp_access_mask = IBV_ACCESS_LOCAL_WRITE,
				    .path_mtu = FLEXIO_QP_QPC_MTU_BYTES_1K, .min_rnr_nak_timer = 1 };

	return flexio_qp_modify(qp, &a, NULL) == FLEXIO_STATUS_SUCCESS ? 0 : -1;
}

static inline int device_connect(struct fx *f)
{
	uint32_t hq = f->hqp->qp_num;

	return fx_qp_move(f->qp, FLEXIO_QP_STATE_INIT, 0) || fx_qp_move(f->qp, FLEXIO_QP_STATE_RTR, hq) ||
			       fx_qp_move(f->qp, FLEXIO_QP_STATE_RTS, 0)
		       ? -1
		       : 0;
}

static inline int device_objects(struct fx *f, struct flexio_app *app, flexio_func_t *handler, enum fxq_mode mode)
{
	struct flexio_event_handler_attr ea = { .host_stub_func = handler };
	struct flexio_mkey_attr ma;
	struct fxq_ctx *c;

	if (flexio_process_create(ctx, app, NULL, &f->p) != FLEXIO_STATUS_SUCCESS)
		return -1;
	f->devx_uar = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (f->devx_uar == NULL || flexio_uar_create(f->p, f->devx_uar, &f->uar) != FLEXIO_STATUS_SUCCESS ||
	    flexio_outbox_create(f->p, NULL, f->uar, &f->outbox) != FLEXIO_STATUS_SUCCESS ||
	    flexio_event_handler_create(f->p, &ea, NULL, f->outbox, &f->eh) != FLEXIO_STATUS_SUCCESS)
		return -1;
	f->ctx_d = dpa_alloc(f->p, sizeof(struct fxq_ctx));
	f->bufs_d = dpa_alloc(f->p, 2u * FXQ_MSG << LOG_Q);
	if (f->ctx_d == 0 || f->bufs_d == 0)
		return -1;
	c = f->c = (struct fxq_ctx *)(uintptr_t)f->ctx_d;
	c->mode = mode;
	c->log_rq = c->log_sq = LOG_Q;
	c->log_cq = LOG_CQ;
	c->rx_buf = f->bufs_d;
	c->tx_buf = f->bufs_d + (FXQ_MSG << LOG_Q);
	c->outbox_id = flexio_outbox_get_id(f->outbox);
	f->rq_cq = cq_new(f, flexio_event_handler_get_thread(f->eh), &c->rq_cq_ring, &c->rq_cq_dbr);
	f->sq_cq = cq_new(f, NULL, &c->sq_cq_ring, &c->sq_cq_dbr);
	if (f->rq_cq == NULL || f->sq_cq == NULL || qp_new(f) != 0)
		return -1;
	ma.pd = flexio_process_get_pd(f->p);
	ma.daddr = f->bufs_d;
	ma.len = 2u * FXQ_MSG << LOG_Q;
	ma.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (flexio_device_mkey_create(f->p, &ma, &f->mkey) != FLEXIO_STATUS_SUCCESS)
		return -1;
	c->lkey = flexio_mkey_get_id(f->mkey);
	c->qpn = flexio_qp_get_qp_num(f->qp);
	c->rq_cqn = flexio_cq_get_cq_num(f->rq_cq);
	c->sq_cqn = flexio_cq_get_cq_num(f->sq_cq);
	rq_fill(f);
	return 0;
}

static inline void fx_down(struct fx *f)
{
	/* The handler first: its thread may still be completing an answer into the host's queues. */
	if (f->eh != NULL)
		flexio_event_handler_destroy(f->eh);
	if (f->hqp != NULL)
		ibv_destroy_qp(f->hqp);
	if (f->hmr != NULL)
		ibv_dereg_mr(f->hmr);
	if (f->tmr != NULL)
		ibv_dereg_mr(f->tmr);
	if (f->hcq != NULL)
		ibv_destroy_cq(f->hcq);
	if (f->hpd != NULL)
		ibv_dealloc_pd(f->hpd);
	if (f->qp != NULL)
		flexio_qp_destroy(f->qp);
	if (f->rq_cq != NULL)
		flexio_cq_destroy(f->rq_cq);
	if (f->sq_cq != NULL)
		flexio_cq_destroy(f->sq_cq);
	if (f->mkey != NULL)
		flexio_device_mkey_destroy(f->mkey);
	if (f->outbox != NULL)
		flexio_outbox_destroy(f->outbox);
	if (f->uar != NULL)
		flexio_uar_destroy(f->uar);
	if (f->p != NULL)
		flexio_process_destroy(f->p);
	if (f->devx_uar != NULL)
		mlx5dv_devx_free_uar(f->devx_uar);
	free(f->hbuf);
	free(f->target);
	free(f);
}

static inline struct fx *fx_up(struct flexio_app *app, flexio_func_t *handler, enum fxq_mode mode)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	if (device_objects(f, app, handler, mode) != 0 || host_side(f) != 0 || host_connect(f) != 0 || device_connect(f) != 0) {
		fx_down(f);
		return NULL;
	}
	return f;
}

static inline int host_post_recv(struct fx *f)
{
	uint32_t slot = f->rx_posted % HOST_RX;
	struct ibv_sge s = { .addr = (uintptr_t)&f->hbuf[slot], .length = 8, .lkey = f->hmr->lkey };
	struct ibv_recv_wr w = { .wr_id = f->rx_posted, .sg_list = &s, .num_sge = 1 }, *bad;

	f->rx_posted++;
	return ibv_post_recv(f->hqp, &w, &bad);
}

static inline int host_send(struct fx *f, uint64_t v)
{
	uint64_t *slot = &f->hbuf[HOST_RX + (v % HOST_RX)];
	struct ibv_sge s = { .addr = (uintptr_t)slot, .length = 8, .lkey = f->hmr->lkey };
	struct ibv_send_wr w = { .wr_id = 1ull << 63 | v, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	*slot = v;
	return ibv_post_send(f->hqp, &w, &bad);
}

#endif /* FXQ_FIXTURE_H_ */
