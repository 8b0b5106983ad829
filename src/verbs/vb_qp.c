/*
 * vb_qp — queue pairs: create (sized as the mlx5 provider sizes them),
 * the state machine with the kernel's attribute rules, query, destroy.
 *
 * The rings are the hw QP's (RQ first, SQ after it, the PRM layout); the
 * library keeps the producer side as an mlx5 driver does (vb_post.c). A
 * modify is checked whole before anything changes: the transition must be
 * in the IB table, the mask must hold the transition's required attributes
 * and nothing beyond its optional ones, and the values must be in range.
 * SQD and SQE are not states a QP can be moved to: EINVAL. A signature
 * pipelining QP stops in SQD by itself (vb_sig_pipe.c).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "fab_xm.h"
#include "hw_ids.h"
#include "hw_machine.h"
#include "hw_xm.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_QP_SEND_OPS_RC                                                                          \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |       \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |                 \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define VB_QP_SEND_OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
/* UC: what needs no answer. */
#define VB_QP_SEND_OPS_UC                                                                          \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |       \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV)
#define VB_QP_COMP_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS)
/* Creation flags mlx5 knows but this device has not (Ethernet offloads, a UD QP's chosen source QPN). */
#define VB_QP_CREATE_UNSUPPORTED                                                                   \
	(IBV_QP_CREATE_SCATTER_FCS | IBV_QP_CREATE_CVLAN_STRIPPING | IBV_QP_CREATE_SOURCE_QPN |    \
	 IBV_QP_CREATE_PCI_WRITE_END_PADDING)
/* The send WQE overhead before data: ctrl and the largest of raddr+atomic or a LOCAL_INV UMR. */
#define VB_SQ_OVERHEAD_RC                                                                          \
	(sizeof(struct hw_wqe_ctrl_seg) + sizeof(struct hw_wqe_umr_ctrl_seg) + sizeof(struct hw_wqe_mkey_ctx_seg))
#define VB_SQ_OVERHEAD_UD (sizeof(struct hw_wqe_ctrl_seg) + sizeof(struct hw_wqe_datagram_seg))
/* A raw packet WQE: ctrl, the Ethernet segment and the rest of its 18-byte inline L2 header. */
#define VB_SQ_OVERHEAD_RAW (sizeof(struct hw_wqe_ctrl_seg) + sizeof(struct hw_eth_seg) + HW_WQE_DS_BYTES)
#define VB_MAX_RD_ATOMIC 16
/* What a QP's access flags may carry: the MR flags (only the remote rights mean anything to a QP). */
#define VB_ACCESS_QP                                                                               \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB)

static uint32_t vb_pow2_up(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}


/* mlx5's send queue sizing: WQEs of the largest request, the ring a power of two of basic blocks. */
static int vb_qp_size_sq(struct vb_qp *qp, struct ibv_qp_init_attr_ex *a)
{
	uint32_t over = a->qp_type == IBV_QPT_UD ? VB_SQ_OVERHEAD_UD : VB_SQ_OVERHEAD_RC;
	uint32_t size, inl = 0, wq;

	if (a->qp_type == IBV_QPT_RAW_PACKET)
		over = VB_SQ_OVERHEAD_RAW;

	if (a->qp_type == IBV_QPT_DRIVER)
		over += sizeof(struct hw_wqe_datagram_seg); /* a DCI's WQE carries the DC address */
	if (a->qp_type == IBV_QPT_XRC_SEND)
		over += sizeof(struct hw_wqe_xrc_seg); /* an XRC WQE names the target's SRQ */

	if (a->cap.max_send_sge > (VB_MAX_SQ_DESC - over) / sizeof(struct hw_wqe_data_seg))
		return EINVAL;
	if (a->cap.max_inline_data > VB_MAX_SQ_DESC - over - sizeof(struct hw_wqe_inl_seg))
		return EINVAL;
	if (a->cap.max_send_wr > VB_MAX_QP_WR)
		return EINVAL;
	if (a->cap.max_inline_data != 0)
		inl = over + ((sizeof(struct hw_wqe_inl_seg) + a->cap.max_inline_data + 15) & ~15u);
	size = over + a->cap.max_send_sge * (uint32_t)sizeof(struct hw_wqe_data_seg);
	if (inl > size)
		size = inl;
	size = (size + HW_SEND_WQE_BB - 1) & ~(uint32_t)(HW_SEND_WQE_BB - 1);
	qp->max_inline = size - over - (uint32_t)sizeof(struct hw_wqe_inl_seg);
	qp->sq_max_wqe = size;
	qp->sq_max_gs = a->cap.max_send_sge;
	if (a->cap.max_send_wr == 0) {
		qp->sq_wqe_cnt = 1;
		qp->sq_max_post = 0;
		return 0;
	}
	wq = vb_pow2_up(a->cap.max_send_wr * size);
	qp->sq_wqe_cnt = wq / HW_SEND_WQE_BB;
	if (qp->sq_wqe_cnt > (1u << HW_QP_LOG_SQ_MAX))
		return EINVAL;
	qp->sq_max_post = wq / size;
	return 0;
}

/* mlx5's receive queue sizing: a power-of-two stride of data segments. */
static int vb_qp_size_rq(struct vb_qp *qp, struct ibv_qp_init_attr_ex *a)
{
	uint32_t sge = a->cap.max_recv_sge > 1 ? a->cap.max_recv_sge : 1;
	uint32_t stride = vb_pow2_up(sge * (uint32_t)sizeof(struct hw_wqe_data_seg));
	uint32_t wq;

	if (a->srq != NULL || a->qp_type == IBV_QPT_DRIVER || a->qp_type == IBV_QPT_XRC_SEND) {
		qp->rq_wqe_cnt = 0; /* a DCI and an XRC send QP receive nothing, a DCT through its SRQ */
		return 0;
	}
	if (a->cap.max_recv_sge > VB_MAX_SGE || stride > VB_MAX_RQ_DESC || a->cap.max_recv_wr > VB_MAX_QP_WR)
		return EINVAL;
	wq = vb_pow2_up(a->cap.max_recv_wr > 0 ? a->cap.max_recv_wr : 1) * stride;
	if (wq < HW_SEND_WQE_BB)
		wq = HW_SEND_WQE_BB;
	qp->rq_wqe_cnt = wq / stride;
	qp->rq_shift = vb_log2_up(stride);
	qp->rq_max_gs = stride / sizeof(struct hw_wqe_data_seg);
	qp->rq_max_post = a->cap.max_recv_wr > 0 ? qp->rq_wqe_cnt : 0;
	if (qp->rq_wqe_cnt > (1u << HW_QP_LOG_RQ_MAX))
		return EINVAL;
	return 0;
}

int vb_qp_objs_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a)
{
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL || a->pd->context != &ctx->vctx.context)
		return EINVAL;
	if (a->send_cq == NULL || (a->recv_cq == NULL && a->qp_type != IBV_QPT_XRC_SEND))
		return EINVAL;
	if (a->srq != NULL && a->srq->context != &ctx->vctx.context)
		return EINVAL;
	return 0;
}

/*
 * Creation flags: none, or blocking the QP's own multicast from looping
 * back (mlx5 takes it on any type; vb_mcast.c keeps it with the QP's groups). Flags the kernel knows but this device has not (raw packet, IPoIB):
 * EOPNOTSUPP, as the kernel answers flags the card lacks; unknown ones EINVAL.
 */
static int vb_qp_create_flags_ok(const struct ibv_qp_init_attr_ex *a)
{
	uint32_t f = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ? a->create_flags : 0;

	f &= ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	if (f & ~(uint32_t)VB_QP_CREATE_UNSUPPORTED)
		return EINVAL;
	return f != 0 ? EOPNOTSUPP : 0;
}

static int vb_qp_attr_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a)
{
	uint64_t ops;

	if (a->comp_mask & ~(uint32_t)VB_QP_COMP_MASK)
		return EOPNOTSUPP;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL || a->pd->context != &ctx->vctx.context)
		return EINVAL;
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UD && a->qp_type != IBV_QPT_UC &&
	    a->qp_type != IBV_QPT_XRC_SEND && a->qp_type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	if (vb_qp_objs_ok(ctx, a) != 0)
		return EINVAL;
	if (a->qp_type == IBV_QPT_RAW_PACKET)
		return vb_raw_attr_ok(ctx, a);
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = a->qp_type == IBV_QPT_UD	 ? VB_QP_SEND_OPS_UD
		      : a->qp_type == IBV_QPT_UC ? VB_QP_SEND_OPS_UC
						 : VB_QP_SEND_OPS_RC;
		if (a->send_ops_flags & ~ops)
			return EOPNOTSUPP;
	}
	return vb_qp_create_flags_ok(a);
}

static void vb_qp_free(struct vb_qp *qp)
{
	vb_bell_qp_disarm(qp);
	if (qp->hw != NULL)
		hw_qp_destroy(qp->hw);
	if (qp->qpx.qp_base.context != NULL) /* after the fence: no event raised for it since */
		vb_async_forget(vb_ctx(qp->qpx.qp_base.context), &qp->qpx.qp_base);
	vb_qmem_put(&qp->qmem); /* after the device's fence (hw_qp_destroy) */
	if (qp->raw != NULL)
		vb_raw_free(qp);
	if (qp->qpx.qp_base.qp_num != 0)
		(void)hw_id_free(HW_ID_QPN, qp->qpx.qp_base.qp_num);
	free(qp->sq_wrid);
	free(qp->sq_wqe_head);
	free(qp->sq_wc_op);
	free(qp->rq_wrid);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&qp->qpx.qp_base.mutex);
	pthread_cond_destroy(&qp->qpx.qp_base.cond);
	free(qp);
}

/*
 * The alignment mlx5 asks for a QP's buffer from a parent domain's
 * allocators: the larger WQE stride, or the buffer's size rounded up to a
 * page and then to a power of two, over 64 (the QP context's page offset
 * quanta), whichever is larger.
 */
static size_t vb_qp_qmem_align(size_t bytes, uint32_t log_rq_stride)
{
	size_t buf_page = 1, stride = HW_SEND_WQE_BB;

	bytes = (bytes + VB_QMEM_ALIGN - 1) & ~(size_t)(VB_QMEM_ALIGN - 1);
	while (buf_page < bytes)
		buf_page <<= 1;
	if (((size_t)1 << log_rq_stride) > stride)
		stride = (size_t)1 << log_rq_stride;
	return buf_page / 64 > stride ? buf_page / 64 : stride;
}

/*
 * The rings in a parent domain's allocators' memory, when they give it: RQ
 * first, then the SQ from the next page boundary, so that the pages of the
 * receive ring peers map hold no byte of the send ring (hw_qp_attr.sq). So
 * a QP with an RQ asks a page more than mlx5's size. An XRC send QP has no
 * receive side to give peers: its memory is refused (EOPNOTSUPP).
 */
static int vb_qp_qmem(struct vb_qp *qp, struct ibv_pd *pd, struct hw_qp_attr *ha, bool srq)
{
	size_t rq = srq ? 0 : (size_t)1 << (ha->log_rq_size + ha->log_rq_stride);
	size_t sq = (size_t)HW_SEND_WQE_BB << ha->log_sq_size;
	size_t align = vb_qp_qmem_align(rq + sq, srq ? 0 : ha->log_rq_stride);
	size_t len = (rq + (rq != 0 ? VB_QMEM_ALIGN : 0) + sq + align - 1) & ~(align - 1);
	uintptr_t b;
	int rc = vb_qmem_get(&qp->qmem, pd, len, align, MLX5DV_RES_TYPE_QP);

	if (rc != 0 || qp->qmem.buf == NULL)
		return rc;
	if (ha->type == HW_QPT_XRC_INI) {
		vb_qmem_put(&qp->qmem);
		return EOPNOTSUPP;
	}
	b = (uintptr_t)qp->qmem.buf;
	ha->ring = qp->qmem.buf;
	ha->sq = (void *)(rq != 0 ? (b + rq + VB_QMEM_ALIGN - 1) & ~(uintptr_t)(VB_QMEM_ALIGN - 1) : b);
	ha->dbrec = qp->qmem.dbrec;
	return 0;
}

/*
 * A QP on an SRQ entered the error state: IBV_EVENT_QP_LAST_WQE_REACHED, as
 * the card reports it once no more receives will be taken from the SRQ for
 * it (the program then drains its CQ and destroys it).
 */
static void vb_qp_last_wqe(void *arg)
{
	struct vb_qp *qp = arg;
	struct ibv_async_event ev = {.event_type = IBV_EVENT_QP_LAST_WQE_REACHED};

	ev.element.qp = &qp->qpx.qp_base;
	if (vb_async_post(vb_ctx(qp->qpx.qp_base.context), &ev) != 0)
		BASE_ERR("QP %u: the last-WQE event could not be queued", qp->qpx.qp_base.qp_num);
}

static int vb_qp_hw_create(struct vb_context *ctx, struct vb_qp *qp, const struct ibv_qp_init_attr_ex *a,
			   const struct vb_qp_kind *k)
{
	struct hw_qp_attr ha = {
		.type = k->hw,
		.dc_key = k->dc_key,
		.pd = vb_pd_of(a->pd)->hw,
		.send_cq = vb_cq_of(a->send_cq)->hw,
		.recv_cq = a->recv_cq != NULL ? vb_cq_of(a->recv_cq)->hw : NULL,
		.log_sq_size = vb_log2_up(qp->sq_wqe_cnt),
		.log_rq_size = vb_log2_up(qp->rq_wqe_cnt > 0 ? qp->rq_wqe_cnt : 1),
		.log_rq_stride = qp->rq_wqe_cnt > 0 ? qp->rq_shift : HW_QP_LOG_RQ_STRIDE_MIN,
		.srq = a->srq != NULL ? vb_srq_of(a->srq)->hw : NULL,
		.lid = ctx->dev->lid,
		.shared = true,
	};
	struct hw_gid_entry g0;
	enum hw_status st;
	uint32_t qpn;
	int rc = vb_alloc_type_errno("MLX_QP");

	if (rc == 0)
		rc = vb_qp_qmem(qp, a->pd, &ha, a->srq != NULL);
	if (rc != 0)
		return rc;
	if (hw_gid_get(&ctx->dev->fn, 0, &g0))
		memcpy(ha.gid, g0.gid, sizeof(ha.gid));
	ha.roce = ctx->dev->roce;
	st = hw_id_alloc(HW_ID_QPN, &qpn);
	if (st != HW_OK)
		return vb_id_errno(st);
	qp->qpx.qp_base.qp_num = qpn;
	ha.qpn = qpn;
	/* A named machine takes requests of other machines once it has queues to take them on. */
	if (hw_machine_ipv4(NULL))
		(void)fab_xm_serve();
	st = hw_qp_create(&ha, &qp->hw);
	if (st != HW_OK) {
		qp->hw = NULL;
		return vb_qmem_errno(st);
	}
	qp->dbrec = hw_qp_dbrec(qp->hw);
	qp->sq_buf = hw_qp_sq_buf(qp->hw);
	qp->rq_buf = hw_qp_rq_buf(qp->hw);
	if (a->srq != NULL && a->qp_type != IBV_QPT_DRIVER) /* not a DCT: it reports no last WQE */
		hw_qp_on_err(qp->hw, vb_qp_last_wqe, qp);
	return 0;
}

static int vb_qp_alloc_ids(struct vb_qp *qp)
{
	qp->sq_wrid = calloc(qp->sq_wqe_cnt, sizeof(*qp->sq_wrid));
	qp->sq_wqe_head = calloc(qp->sq_wqe_cnt, sizeof(*qp->sq_wqe_head));
	qp->sq_wc_op = calloc(qp->sq_wqe_cnt, sizeof(*qp->sq_wc_op));
	qp->rq_wrid = calloc(qp->rq_wqe_cnt > 0 ? qp->rq_wqe_cnt : 1, sizeof(*qp->rq_wrid));
	return qp->sq_wrid && qp->sq_wqe_head && qp->sq_wc_op && qp->rq_wrid ? 0 : ENOMEM;
}

static void vb_qp_fill(struct vb_qp *qp, struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *q = &qp->qpx.qp_base;

	q->context = c;
	q->qp_context = a->qp_context;
	q->pd = a->pd;
	q->send_cq = a->send_cq;
	q->recv_cq = a->recv_cq;
	q->srq = a->srq;
	q->handle = q->qp_num;
	q->state = IBV_QPS_RESET;
	q->qp_type = a->qp_type;
	q->events_completed = 0;
	qp->sig_bits = a->sq_sig_all ? HW_WQE_CTRL_CQ_UPDATE : 0;
	/* What the program gets back, as mlx5 reports it. */
	a->cap.max_send_wr = qp->sq_max_post;
	a->cap.max_inline_data = qp->max_inline;
	a->cap.max_recv_wr = a->srq != NULL ? 0 : qp->rq_max_post;
	a->cap.max_recv_sge = a->srq != NULL ? 0 : qp->rq_max_gs;
	qp->init.qp_context = a->qp_context;
	qp->init.send_cq = a->send_cq;
	qp->init.recv_cq = a->recv_cq;
	qp->init.srq = a->srq;
	qp->init.cap = a->cap;
	qp->init.qp_type = a->qp_type;
	qp->init.sq_sig_all = a->sq_sig_all;
	qp->block_self_mcast = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
			       (a->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	qp->attr.cap = a->cap;
	qp->attr.port_num = VB_PORT;
}

/*
 * An XRC send QP: an RC requester (PD, send CQ) whose requests name the
 * target's SRQ; as the kernel, it has no receive side, so a receive CQ or
 * SRQ given is not used.
 */
static struct ibv_qp *vb_qp_create_xrc_send(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp_init_attr_ex b = *a;
	struct vb_qp_kind k = {.hw = HW_QPT_XRC_INI};
	struct ibv_qp *qp;
	int rc;

	b.recv_cq = NULL;
	b.srq = NULL;
	b.cap.max_recv_wr = 0;
	b.cap.max_recv_sge = 0;
	rc = vb_qp_attr_ok(ctx, &b);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	qp = vb_qp_create(ctx, &b, &k);
	if (qp != NULL)
		a->cap = b.cap;
	return qp;
}

struct ibv_qp *vb_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct vb_qp_kind k;
	int rc;

	if (ctx == NULL || a == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type == IBV_QPT_XRC_RECV)
		return vb_xrc_create_recv_qp(ctx, a);
	if (a->comp_mask & (IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE))
		return vb_rss_create_qp(ctx, a);
	if (a->qp_type == IBV_QPT_XRC_SEND)
		return vb_qp_create_xrc_send(ctx, a);
	rc = vb_qp_attr_ok(ctx, a);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	k = (struct vb_qp_kind){.hw = a->qp_type == IBV_QPT_UD	 ? HW_QPT_UD
				      : a->qp_type == IBV_QPT_UC ? HW_QPT_UC
								 : HW_QPT_RC,
				.raw = a->qp_type == IBV_QPT_RAW_PACKET};
	return vb_qp_create(ctx, a, &k);
}

struct ibv_qp *vb_qp_create(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a, const struct vb_qp_kind *k)
{
	struct ibv_context *context = &ctx->vctx.context;
	struct vb_qp *qp;
	int rc;

	rc = ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		goto err;
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
	qp->ctx = ctx;
	rc = vb_qp_size_sq(qp, a);
	if (rc == 0)
		rc = vb_qp_size_rq(qp, a);
	if (rc == 0)
		rc = vb_qp_alloc_ids(qp);
	if (rc == 0)
		rc = k->raw ? vb_raw_hw_create(ctx, qp, a) : vb_qp_hw_create(ctx, qp, a, k);
	if (rc != 0)
		goto err_free;
	vb_qp_fill(qp, context, a);
	qp->pd = vb_pd_of(a->pd);
	if (!k->raw && vb_scat_default())
		vb_scat_set(qp, true);
	qp->scq = vb_cq_of(a->send_cq);
	qp->rcq = a->recv_cq != NULL ? vb_cq_of(a->recv_cq) : NULL;
	qp->srq = a->srq != NULL ? vb_srq_of(a->srq) : NULL;
	atomic_fetch_add(&qp->pd->users, 1);
	if (qp->srq != NULL)
		atomic_fetch_add(&qp->srq->users, 1);
	vb_cq_add_qp(qp->scq, qp, true);
	if (qp->rcq != NULL)
		vb_cq_add_qp(qp->rcq, qp, false);
	vb_qp_wr_fill(qp);
	qp->ex = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
	qp->dc_type = k->dc_type;
	return &qp->qpx.qp_base;

err_free:
	vb_qp_free(qp);
err:
	errno = rc;
	return NULL;
}

VB_EXPORT struct ibv_qp *vb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);
VB_EXPORT struct ibv_qp *vb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, sizeof(*attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	qp = vb_create_qp_ex(pd->context, &a);
	if (qp != NULL)
		attr->cap = a.cap;
	return qp;
}
VB_SYMVER(vb_create_qp, ibv_create_qp, "IBVERBS_1.1");

VB_EXPORT int vb_destroy_qp(struct ibv_qp *qp);
VB_EXPORT int vb_destroy_qp(struct ibv_qp *ibqp)
{
	struct vb_qp *qp = vb_qp_of(ibqp);

	if (ibqp == NULL)
		return EINVAL;
	if (vb_mcast_busy(qp))
		return EBUSY; /* still in a multicast group, as the kernel refuses it */
	if (qp->xrcd != NULL)
		return vb_xrc_destroy_qp(qp);
	if (qp->raw != NULL && vb_raw_busy(qp))
		return EBUSY; /* flows still steer to it, as the kernel refuses it */
	if (vb_raw_rss_ind(qp) != NULL)
		return vb_rss_destroy_qp(qp);
	vb_cq_del_qp(qp->scq, qp, true);
	if (qp->rcq != NULL)
		vb_cq_del_qp(qp->rcq, qp, false);
	if (qp->srq != NULL)
		atomic_fetch_sub(&qp->srq->users, 1);
	atomic_fetch_sub(&qp->pd->users, 1);
	vb_qp_free(qp);
	return 0;
}
VB_SYMVER(vb_destroy_qp, ibv_destroy_qp, "IBVERBS_1.1");

/* The IB transitions this device has, with their required and optional attributes per type. */
struct vb_trans {
	bool valid;
	int req[5]; /* [0] RC, [1] UD, [2] UC, [3] XRC send, [4] XRC receive (the kernel's qp_state_table) */
	int opt[5];
};

#define VB_RC_PATH (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)
#define VB_UC_PATH (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE)
#define VB_INIT_ATTRS (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define VB_UD_INIT_ATTRS (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define VB_RTR_REQ_RC                                                                              \
	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |  \
	 IBV_QP_MIN_RNR_TIMER)
#define VB_RTR_REQ_UC (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define VB_RTR_OPT_RC (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX)
#define VB_RTS_REQ_RC (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static const struct vb_trans vb_qp_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = {.valid = true},
		[IBV_QPS_ERR] = {.valid = true},
		[IBV_QPS_INIT] = {.valid = true,
				  .req = {VB_INIT_ATTRS, VB_UD_INIT_ATTRS, VB_INIT_ATTRS, VB_INIT_ATTRS, VB_INIT_ATTRS}},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = {.valid = true},
		[IBV_QPS_ERR] = {.valid = true},
		[IBV_QPS_INIT] = {.valid = true,
				  .opt = {VB_INIT_ATTRS, VB_UD_INIT_ATTRS, VB_INIT_ATTRS, VB_INIT_ATTRS, VB_INIT_ATTRS}},
		[IBV_QPS_RTR] = {.valid = true,
				 .req = {VB_RTR_REQ_RC, 0, VB_RTR_REQ_UC, VB_RTR_REQ_UC, VB_RTR_REQ_RC},
				 .opt = {VB_RTR_OPT_RC, IBV_QP_PKEY_INDEX | IBV_QP_QKEY, VB_RTR_OPT_RC, VB_RTR_OPT_RC,
					 VB_RTR_OPT_RC}},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = {.valid = true},
		[IBV_QPS_ERR] = {.valid = true},
		[IBV_QPS_RTS] = {.valid = true,
				 .req = {VB_RTS_REQ_RC, IBV_QP_SQ_PSN, IBV_QP_SQ_PSN, VB_RTS_REQ_RC,
					 IBV_QP_TIMEOUT | IBV_QP_SQ_PSN},
				 .opt = {IBV_QP_CUR_STATE | VB_RC_PATH, IBV_QP_CUR_STATE | IBV_QP_QKEY,
					 IBV_QP_CUR_STATE | VB_UC_PATH, IBV_QP_CUR_STATE | VB_UC_PATH,
					 IBV_QP_CUR_STATE | VB_RC_PATH}},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = {.valid = true},
		[IBV_QPS_ERR] = {.valid = true},
		[IBV_QPS_RTS] = {.valid = true,
				 .opt = {IBV_QP_CUR_STATE | VB_RC_PATH, IBV_QP_CUR_STATE | IBV_QP_QKEY,
					 IBV_QP_CUR_STATE | VB_UC_PATH, IBV_QP_CUR_STATE | VB_UC_PATH,
					 IBV_QP_CUR_STATE | VB_RC_PATH}},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = {.valid = true},
		[IBV_QPS_ERR] = {.valid = true},
	},
};

#define VB_QP_MASK_KNOWN ((IBV_QP_RATE_LIMIT << 1) - 1)

/* The value checks of a modify (after the mask's): 0 or EINVAL. */
static int vb_qp_values_ok(const struct vb_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	if ((mask & IBV_QP_PORT) && a->port_num != VB_PORT)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~(unsigned int)VB_ACCESS_QP))
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > HW_QP_RNR_TIMER_MAX)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > HW_QP_RNR_RETRY_INFINITE)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > VB_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > VB_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & IBV_QP_AV) && vb_ah_attr_ok(vb_ctx(qp->qpx.qp_base.context)->dev, &a->ah_attr) != 0)
		return EINVAL;
	return 0;
}

/* The transition's checks: 0 or EINVAL, nothing changed. */
static int vb_qp_modify_ok(const struct vb_qp *qp, const struct ibv_qp_attr *a, int mask, enum ibv_qp_state *to)
{
	enum ibv_qp_state cur = qp->qpx.qp_base.state;
	const struct vb_trans *t;
	enum ibv_qp_type qt = qp->qpx.qp_base.qp_type;
	int ty = qt == IBV_QPT_UD ? 1 : qt == IBV_QPT_UC ? 2 : qt == IBV_QPT_XRC_SEND ? 3 : qt == IBV_QPT_XRC_RECV ? 4 : 0;

	if (mask & ~VB_QP_MASK_KNOWN)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
		return EINVAL;
	*to = (mask & IBV_QP_STATE) ? a->qp_state : cur;
	if ((unsigned int)cur > IBV_QPS_ERR || (unsigned int)*to > IBV_QPS_ERR)
		return EINVAL;
	if (qp->dc_type != 0) {
		int rc = vb_dc_mask_ok(qp->dc_type, cur, *to, mask);

		return rc != 0 ? rc : vb_qp_values_ok(qp, a, mask);
	}
	t = &vb_qp_table[cur][*to];
	if (!t->valid)
		return EINVAL;
	if ((mask & t->req[ty]) != t->req[ty])
		return EINVAL;
	if (mask & ~(t->req[ty] | t->opt[ty] | IBV_QP_STATE))
		return EINVAL;
	return vb_qp_values_ok(qp, a, mask);
}

static void vb_qp_keep(struct vb_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *k = &qp->attr;

	if (mask & IBV_QP_PKEY_INDEX)
		k->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		k->port_num = a->port_num;
	if (mask & IBV_QP_ACCESS_FLAGS)
		k->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_QKEY)
		k->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		k->ah_attr = a->ah_attr;
	if (mask & IBV_QP_ALT_PATH) {
		k->alt_ah_attr = a->alt_ah_attr;
		k->alt_pkey_index = a->alt_pkey_index;
		k->alt_port_num = a->alt_port_num;
		k->alt_timeout = a->alt_timeout;
	}
	if (mask & IBV_QP_PATH_MTU)
		k->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		k->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		k->rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		k->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		k->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		k->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		k->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_RNR_RETRY)
		k->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_TIMEOUT)
		k->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		k->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_PATH_MIG_STATE)
		k->path_mig_state = a->path_mig_state;
}

/* Back to RESET: the driver's counters start over with the device's (mlx5_init_qp_indices). */
static void vb_qp_reset(struct vb_qp *qp)
{
	qp->sq_cur_post = 0;
	qp->sq_head = 0;
	atomic_store(&qp->sq_tail, 0);
	qp->rq_head = 0;
	atomic_store(&qp->rq_tail, 0);
	qp->fm_cache = 0;
	qp->dbrec[HW_QP_DBR_RCV] = 0;
	qp->dbrec[HW_QP_DBR_SND] = 0;
}

/* RESET drops the QP's completions still in its CQs, as mlx5_modify_qp does (mlx5_cq_clean). */
static void vb_qp_clean_cqs(struct vb_qp *qp)
{
	uint32_t qpn = qp->qpx.qp_base.qp_num;

	if (qp->rcq != NULL)
		vb_cq_clean(qp->rcq, qpn, qp->srq);
	if (qp->scq != NULL && qp->scq != qp->rcq)
		vb_cq_clean(qp->scq, qpn, NULL);
}

static enum hw_qp_state vb_hw_state(enum ibv_qp_state s)
{
	switch (s) {
	case IBV_QPS_INIT:
		return HW_QP_INIT;
	case IBV_QPS_RTR:
		return HW_QP_RTR;
	case IBV_QPS_RTS:
		return HW_QP_RTS;
	case IBV_QPS_ERR:
		return HW_QP_ERR;
	default:
		return HW_QP_RESET;
	}
}

static enum ibv_qp_state vb_ibv_state(enum hw_qp_state s)
{
	static const enum ibv_qp_state m[] = {
		[HW_QP_RESET] = IBV_QPS_RESET, [HW_QP_INIT] = IBV_QPS_INIT, [HW_QP_RTR] = IBV_QPS_RTR,
		[HW_QP_RTS] = IBV_QPS_RTS, [HW_QP_ERR] = IBV_QPS_ERR,
	};

	return (unsigned int)s <= HW_QP_ERR ? m[s] : IBV_QPS_ERR;
}

/*
 * Connects an RC or UC QP moving to RTR to the port its address names: by
 * its GID (hw_gid.h) when it has a GRH (always on RoCE): a port of this
 * machine, whose QP of that number only is reached; another machine's,
 * through the fabric (hw_xm.h, RC only); nobody's. Without a GRH
 * (InfiniBand), by number on this machine. As on a fabric, the modify
 * succeeds either way; sends to nobody fail (RC: transport retries
 * exceeded) or are lost (UC).
 */
static void vb_qp_route(struct vb_qp *qp, const struct ibv_qp_attr *k)
{
	bool roce = vb_ctx(qp->qpx.qp_base.context)->dev->roce;
	struct hw_gid_dest d = { .where = HW_GID_HERE };

	if (k->ah_attr.is_global)
		hw_gid_route(k->ah_attr.grh.dgid.raw, &d);
	if (roce)
		vb_dmac(k->ah_attr.grh.dgid.raw, qp->dmac);
	/* An InfiniBand GRH that names no port keeps LID routing: the GID is only carried within a subnet. */
	if (!roce && d.where == HW_GID_NOWHERE)
		d.where = HW_GID_HERE, d.lid = 0;
	if (d.where == HW_GID_MACHINE && qp->qpx.qp_base.qp_type == IBV_QPT_RC) {
		(void)hw_qp_connect_machine(qp->hw, d.machine, k->dest_qp_num, k->ah_attr.grh.dgid.raw);
		return;
	}
	if (d.where == HW_GID_HERE && hw_qp_connect_port(qp->hw, k->dest_qp_num, roce ? d.lid : 0) == HW_OK)
		return;
	BASE_DBG("QP %u: no QP %u to connect to", qp->qpx.qp_base.qp_num, k->dest_qp_num);
	hw_qp_connect(qp->hw, NULL);
}

/* A QP's remote access flags as the device's responder rights. */
static uint32_t vb_qp_rights(unsigned int access)
{
	return ((access & IBV_ACCESS_REMOTE_READ) ? HW_ACCESS_REMOTE_READ : 0) |
	       ((access & IBV_ACCESS_REMOTE_WRITE) ? HW_ACCESS_REMOTE_WRITE : 0) |
	       ((access & IBV_ACCESS_REMOTE_ATOMIC) ? HW_ACCESS_REMOTE_ATOMIC : 0);
}

/* The device's side of a checked modify. */
static int vb_qp_apply(struct vb_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state to, int mask)
{
	const struct ibv_qp_attr *k = &qp->attr;

	if (mask & IBV_QP_ACCESS_FLAGS)
		(void)hw_qp_set_rights(qp->hw, vb_qp_rights(k->qp_access_flags));
	if ((mask & IBV_QP_QKEY) && qp->qpx.qp_base.qp_type == IBV_QPT_UD)
		(void)hw_qp_set_qkey(qp->hw, k->qkey);
	if (mask & (IBV_QP_MIN_RNR_TIMER | IBV_QP_RNR_RETRY))
		(void)hw_qp_set_rnr(qp->hw, k->min_rnr_timer, k->rnr_retry);
	if (mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT))
		(void)hw_qp_set_retry(qp->hw, k->timeout, k->retry_cnt);
	if (cur == IBV_QPS_INIT && to == IBV_QPS_RTR &&
	    (qp->qpx.qp_base.qp_type == IBV_QPT_RC || qp->qpx.qp_base.qp_type == IBV_QPT_UC ||
	     qp->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND))
		vb_qp_route(qp, k);
	if (cur == to)
		return 0;
	if (to == IBV_QPS_RESET)
		vb_qp_reset(qp);
	if (hw_qp_modify(qp->hw, vb_hw_state(to)) != HW_OK)
		return EINVAL;
	if (to == IBV_QPS_RESET)
		vb_qp_clean_cqs(qp);
	return 0;
}

VB_EXPORT int vb_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
VB_EXPORT int vb_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct vb_qp *qp = vb_qp_of(ibqp);
	enum ibv_qp_state cur, to;
	int rc;

	if (ibqp == NULL || attr == NULL)
		return EINVAL;
	if (qp->open_of != NULL) { /* a handle ibv_open_qp gave: the QP it opened moves */
		rc = vb_modify_qp(&qp->open_of->qpx.qp_base, attr, mask);
		ibqp->state = qp->open_of->qpx.qp_base.state;
		return rc;
	}
	if (qp->raw != NULL)
		return vb_raw_modify(qp, attr, mask);
	if (qp->hw->view != NULL)
		return EOPNOTSUPP; /* opened in another process than its creator's: only the creator moves it */
	/* Stopped by a signature error (vb_sig_pipe.c): SQD's moves are that file's. */
	if (qp->sig_pipe && (rc = vb_sig_pipe_modify(qp, attr, mask)) >= 0)
		return rc;
	/* A QP the device moved to ERR (a failed work request) is in ERR for the table too. */
	if (hw_qp_state(qp->hw) == HW_QP_ERR)
		ibqp->state = IBV_QPS_ERR;
	cur = ibqp->state;
	rc = vb_qp_modify_ok(qp, attr, mask, &to);
	if (rc != 0)
		return rc;
	vb_qp_keep(qp, attr, mask);
	rc = vb_qp_apply(qp, cur, to, mask);
	if (rc != 0)
		return rc;
	ibqp->state = to;
	qp->attr.qp_state = to;
	if (to == IBV_QPS_RTS && cur != IBV_QPS_RTS && qp->scq != NULL)
		vb_qp_ring(qp); /* work posted before RTS runs now */
	return 0;
}
VB_SYMVER(vb_modify_qp, ibv_modify_qp, "IBVERBS_1.1");

VB_EXPORT int vb_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			  struct ibv_qp_init_attr *init_attr);
VB_EXPORT int vb_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
			  struct ibv_qp_init_attr *init_attr)
{
	struct vb_qp *qp = vb_qp_of(ibqp);

	(void)attr_mask; /* as the kernel: every attribute is returned */
	if (ibqp == NULL || attr == NULL || init_attr == NULL)
		return EINVAL;
	if (vb_raw_rss_ind(qp) != NULL)
		return EOPNOTSUPP; /* an RSS QP: libmlx5 queries none */
	if (qp->open_of != NULL)
		qp = qp->open_of; /* a handle ibv_open_qp gave: the QP it opened */
	if (qp->hw != NULL && qp->hw->view != NULL) /* one of another process: its state is as its owner set it */
		qp->qpx.qp_base.state = vb_ibv_state(hw_qp_state(qp->hw));
	if (qp->hw != NULL && hw_qp_state(qp->hw) == HW_QP_ERR)
		qp->qpx.qp_base.state = IBV_QPS_ERR;
	ibqp->state = qp->qpx.qp_base.state;
	*attr = qp->attr;
	attr->qp_state = ibqp->state;
	attr->cur_qp_state = ibqp->state;
	if (vb_sig_pipe_held(qp))
		attr->qp_state = attr->cur_qp_state = IBV_QPS_SQD; /* stopped by a signature error (vb_sig_pipe.c) */
	attr->sq_draining = 0;
	attr->en_sqd_async_notify = 0;
	*init_attr = qp->init;
	return 0;
}
VB_SYMVER(vb_query_qp, ibv_query_qp, "IBVERBS_1.1");

/*
 * ibv_query_qp_data_in_order(3): 1 only when the bytes of one WQE are
 * guaranteed to land in order, so a reader may poll the data instead of the
 * completion. The engine moves data with memcpy and, for large copies,
 * non-temporal stores, neither of which orders its stores by address: no
 * guarantee, for any opcode or state, as mlx5 answers on a card without the
 * data-in-order capability. flags must be 0 (the same answer otherwise).
 */
VB_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}
