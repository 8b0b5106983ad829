/*
 * Queue objects for verbs tests: CQs, QPs moved to RTS with the attribute
 * masks rdma-core programs use, and a bounded poll. Everything is released
 * when the case ends (QPs before their CQs: the cleanups run last first).
 */
#ifndef SOFTDPU_TEST_VERBS_QP_FIXTURE_H_
#define SOFTDPU_TEST_VERBS_QP_FIXTURE_H_

#include <errno.h>
#include <string.h>

#include "verbs_fixture.h"

#define VQ_ACCESS_ALL                                                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define VQ_POLL_TRIES 10000000L

static inline void vq_destroy_cq_cb(void *arg)
{
	ibv_destroy_cq(arg);
}

static inline void vq_destroy_qp_cb(void *arg)
{
	ibv_destroy_qp(arg);
}

static inline void vq_destroy_srq_cb(void *arg)
{
	ibv_destroy_srq(arg);
}

static inline void vq_destroy_ah_cb(void *arg)
{
	ibv_destroy_ah(arg);
}

static inline void vq_destroy_channel_cb(void *arg)
{
	ibv_destroy_comp_channel(arg);
}

static inline struct ibv_cq *vq_cq(struct ibv_context *c, int cqe)
{
	struct ibv_cq *cq = ibv_create_cq(c, cqe, NULL, NULL, 0);

	if (cq != NULL)
		th_defer(vq_destroy_cq_cb, cq);
	return cq;
}

static inline struct ibv_mr *vq_mr(struct ibv_pd *pd, void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, len, access);

	if (mr != NULL)
		th_defer(vf_dereg_cb, mr);
	return mr;
}

static inline struct ibv_qp *vq_qp_srq(struct ibv_pd *pd, enum ibv_qp_type type, struct ibv_cq *scq,
				       struct ibv_cq *rcq, struct ibv_srq *srq, uint32_t wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = {.max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = 4, .max_recv_sge = 4,
			.max_inline_data = 64},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

static inline struct ibv_qp *vq_qp(struct ibv_pd *pd, enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
				   uint32_t wr)
{
	return vq_qp_srq(pd, type, scq, rcq, NULL, wr);
}

static inline int vq_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = VQ_ACCESS_ALL,
				.qkey = 0x11111111};

	if (qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* An address of the context's own port: is_global with its GID 0 as destination (source index 0). */
static inline int vq_grh_self(struct ibv_context *c, struct ibv_ah_attr *ah)
{
	ah->is_global = 1;
	ah->grh.sgid_index = 0;
	ah->grh.hop_limit = 64;
	return ibv_query_gid(c, 1, 0, &ah->grh.dgid);
}

static inline int vq_to_rtr(struct ibv_qp *qp, uint32_t dest, uint8_t min_rnr_timer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = min_rnr_timer,
		.ah_attr = {.dlid = 1, .port_num = 1},
	};

	/* A RoCE port routes by GID only (the kernel refuses an address without a GRH): its own GID 0. */
	if (vq_grh_self(qp->context, &a.ah_attr) != 0)
		return EINVAL;
	if (qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static inline int vq_to_rts(struct ibv_qp *qp, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = rnr_retry,
				.sq_psn = 0, .max_rd_atomic = 1};

	if (qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RESET -> RTS connected to dest (0 or an errno value). */
static inline int vq_up(struct ibv_qp *qp, uint32_t dest, uint8_t min_rnr_timer, uint8_t rnr_retry)
{
	int rc = vq_to_init(qp);

	if (rc == 0)
		rc = vq_to_rtr(qp, dest, min_rnr_timer);
	if (rc == 0)
		rc = vq_to_rts(qp, rnr_retry);
	return rc;
}

/* RESET -> RTS connected to dest through a GRH to dgid (another machine's port when its prefix names one). */
static inline int vq_up_grh(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *dgid, uint8_t min_rnr_timer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_4096,
		.dest_qp_num = dest,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = min_rnr_timer,
		.ah_attr = {.is_global = 1, .grh = {.dgid = *dgid, .hop_limit = 2}, .port_num = 1},
	};
	int rc = vq_to_init(qp);

	if (rc == 0)
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc == 0)
		rc = vq_to_rts(qp, 7);
	return rc;
}

/* Polls until one completion arrives (bounded); 1, or 0 when none came. */
static inline int vq_poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (long i = 0; i < VQ_POLL_TRIES; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n != 0)
			return n;
	}
	return 0;
}

/* Two connected RC QPs of one process, each with its own CQ, and two registered buffers. */
struct vq_pair {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	uint8_t *buf[2];
};

/* What vq_pair_open makes: two buffers of len bytes filled with fill[i], registered with access[i]. */
struct vq_pair_spec {
	uint8_t *buf[2];
	size_t len;
	uint8_t fill[2];
	int access[2];
	enum ibv_qp_type type;
};

/* A vq_pair as s says, with CQs of 64 and QPs of type s->type, not yet connected. */
static inline void vq_pair_open(struct vq_pair *p, const struct vq_pair_spec *s)
{
	memset(p, 0, sizeof(*p));
	p->c = vf_open();
	CHECK(p->c != NULL);
	p->pd = vf_pd(p->c);
	CHECK(p->pd != NULL);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = vq_cq(p->c, 64);
		CHECK(p->cq[i] != NULL);
		p->buf[i] = s->buf[i];
		memset(p->buf[i], s->fill[i], s->len);
		p->mr[i] = vq_mr(p->pd, p->buf[i], s->len, s->access[i]);
		CHECK(p->mr[i] != NULL);
		p->qp[i] = vq_qp(p->pd, s->type, p->cq[i], p->cq[i], 16);
		CHECK(p->qp[i] != NULL);
	}
}

/* Both RC QPs of p connected to each other (RESET -> RTS). */
static inline void vq_pair_up(struct vq_pair *p)
{
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(p->qp[i], p->qp[1 - i]->qp_num, 0, 0));
}

/* Both RC QPs of p back to RTS after an error: RESET, then up again. */
static inline void vq_pair_restate(struct vq_pair *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	for (int i = 0; i < 2; i++)
		CHECK_OK(ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE));
	vq_pair_up(p);
}

#endif /* SOFTDPU_TEST_VERBS_QP_FIXTURE_H_ */
