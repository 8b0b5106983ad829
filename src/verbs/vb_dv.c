/*
 * vb_dv — libibverbs' side of mlx5 direct access. libmlx5.so.1 holds no
 * device state; its mlx5dv_* functions land here through the vb_dv_ops table
 * of the device (vb.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw_dcs.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_UAR_DB_OFFSET 0x800	/* the doorbell (BlueFlame) register in a UAR page, as mlx5 */
#define VB_DV_MASK_FILLED                                                                          \
	(MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_SWP |                           \
	 MLX5DV_CONTEXT_MASK_STRIDING_RQ | MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS |                  \
	 MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS | MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS |               \
	 MLX5DV_CONTEXT_MASK_DC_ODP_CAPS | MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH |            \
	 MLX5DV_CONTEXT_MASK_DCI_STREAMS | MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD)

/*
 * Fills what the caller's comp_mask asks for and the device can say, and
 * reports back what it filled. The offloads these fields describe (software
 * parsing, striding RQ, tunnels, flow actions) are absent: their
 * capabilities read zero. version/flags as rdma-core: version 0, CQEs of
 * format version 1, 128-byte CQEs with compression and padding and the
 * compression formats mlx5dv_create_cq accepts (vb_dvcq.c).
 */
static int vb_dv_query_device(struct ibv_context *c, struct mlx5dv_context *a)
{
	uint64_t want;

	if (vb_ctx_checked(c) == NULL || a == NULL)
		return EINVAL;
	want = a->comp_mask;
	a->version = 0;
	a->flags = MLX5DV_CONTEXT_FLAGS_CQE_V1 | vb_dvcq_ctx_flags();
	if (want & MLX5DV_CONTEXT_MASK_CQE_COMPRESION)
		a->cqe_comp_caps = vb_dvcq_comp_caps();
	if (want & MLX5DV_CONTEXT_MASK_SWP)
		memset(&a->sw_parsing_caps, 0, sizeof(a->sw_parsing_caps));
	if (want & MLX5DV_CONTEXT_MASK_STRIDING_RQ)
		memset(&a->striding_rq_caps, 0, sizeof(a->striding_rq_caps));
	if (want & MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS)
		a->tunnel_offloads_caps = 0;
	if (want & MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS)
		a->flow_action_flags = 0;
	if (want & MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS)
		a->num_lag_ports = 1;
	if (want & MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH)
		a->max_wr_memcpy_length = vb_dv_memcpy_max(); /* mlx5dv_wr_memcpy's largest (vb_memcpy_wr.c) */
	if (want & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS)
		a->dc_odp_caps = vb_odp_dc_caps(); /* DC takes ODP MRs as RC (vb_odp.c) */
	if (want & MLX5DV_CONTEXT_MASK_DCI_STREAMS) {
		a->dci_streams_caps.max_log_num_concurent = HW_DCS_LOG_MAX_CONC;
		a->dci_streams_caps.max_log_num_errored = HW_DCS_LOG_MAX_ERRORED;
	}
	if (want & MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD)
		vb_sig_caps(&a->sig_caps); /* a ConnectX-6 Dx's (vb_sig.c) */
	a->comp_mask = want & VB_DV_MASK_FILLED;
	return 0;
}

static_assert(sizeof(struct hw_wqe_datagram_seg) == sizeof(struct mlx5_wqe_av), "the AH's AV is mlx5's");

#define VB_OBJ_ALL                                                                                 \
	(MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ | MLX5DV_OBJ_RWQ | MLX5DV_OBJ_DM |          \
	 MLX5DV_OBJ_AH | MLX5DV_OBJ_PD)

static int vb_dv_qp(struct mlx5dv_qp *out, struct ibv_qp *in)
{
	struct vb_qp *qp = vb_qp_of(in);
	struct vb_context *ctx = vb_ctx_checked(in->context);
	uint8_t *bell = ctx != NULL ? vb_bell_ctx_page(ctx) : NULL;

	if (bell == NULL)
		return ctx == NULL ? EINVAL : ENOMEM;
	out->dbrec = (__be32 *)qp->dbrec;
	out->sq.buf = qp->sq_buf;
	out->sq.wqe_cnt = qp->sq_wqe_cnt;
	out->sq.stride = HW_SEND_WQE_BB;
	out->rq.buf = qp->rq_wqe_cnt != 0 ? qp->rq_buf : NULL;
	out->rq.wqe_cnt = qp->rq_wqe_cnt;
	out->rq.stride = qp->rq_wqe_cnt != 0 ? 1u << qp->rq_shift : 0;
	out->bf.reg = bell + VB_UAR_DB_OFFSET;
	out->bf.size = 0; /* no BlueFlame buffer: the doorbell is one 8-byte write */
	if (out->comp_mask & MLX5DV_QP_MASK_UAR_MMAP_OFFSET)
		out->uar_mmap_offset = 0;
	out->comp_mask &= MLX5DV_QP_MASK_UAR_MMAP_OFFSET;
	/*
	 * The program may now write WQEs, the record and bf.reg itself, never
	 * calling the library: the write to bf.reg traps and runs the SQ on the
	 * writer's thread (vb_bell.c), and the engine thread watches the record.
	 */
	hw_qp_set_polled(qp->hw, true);
	vb_bell_qp_arm(qp, bell);
	return 0;
}

static int vb_dv_cq(struct mlx5dv_cq *out, struct ibv_cq *in)
{
	struct vb_cq *cq = vb_cq_of(in);
	struct vb_context *ctx = vb_ctx_checked(in->context);
	void *uar = ctx != NULL ? vb_bell_cq_page(ctx) : NULL;

	if (uar == NULL)
		return ctx == NULL ? EINVAL : ENOMEM;
	out->buf = cq->ring;
	out->dbrec = (__be32 *)cq->dbrec;
	out->cqe_cnt = 1u << cq->log_size;
	out->cqe_size = 1u << cq->cqe_log;
	out->cq_uar = uar;
	out->cqn = cq->cqn;
	out->comp_mask = 0;
	return 0;
}

static int vb_dv_srq(struct mlx5dv_srq *out, struct ibv_srq *in)
{
	struct vb_srq *srq = vb_srq_of(in);

	if (vb_ctx_checked(in->context) == NULL)
		return EINVAL;
	out->buf = srq->buf;
	out->dbrec = (__be32 *)srq->dbrec;
	out->stride = 1u << srq->log_stride;
	out->head = srq->head;
	out->tail = srq->tail;
	if (out->comp_mask & MLX5DV_SRQ_MASK_SRQN)
		out->srqn = srq->srqn;
	out->comp_mask &= MLX5DV_SRQ_MASK_SRQN;
	return 0;
}

/* Every object asked for is checked before any view is filled: a refusal fills nothing. */
static int vb_dv_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	int rc = 0;

	if (obj == NULL || type == 0 || (type & ~(uint64_t)VB_OBJ_ALL))
		return EINVAL;
	if (type & ~(uint64_t)(MLX5DV_OBJ_PD | MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ | MLX5DV_OBJ_AH |
			       MLX5DV_OBJ_DM))
		return EOPNOTSUPP;
	if (((type & MLX5DV_OBJ_PD) && (obj->pd.in == NULL || obj->pd.out == NULL)) ||
	    ((type & MLX5DV_OBJ_AH) && (obj->ah.in == NULL || obj->ah.out == NULL)) ||
	    ((type & MLX5DV_OBJ_QP) && (obj->qp.in == NULL || obj->qp.out == NULL)) ||
	    ((type & MLX5DV_OBJ_CQ) && (obj->cq.in == NULL || obj->cq.out == NULL)) ||
	    ((type & MLX5DV_OBJ_SRQ) && (obj->srq.in == NULL || obj->srq.out == NULL)) ||
	    ((type & MLX5DV_OBJ_DM) && (obj->dm.in == NULL || obj->dm.out == NULL)))
		return EINVAL;
	/* First: a dm not of this device is refused before any other view is filled. */
	if (type & MLX5DV_OBJ_DM)
		rc = vb_dm_view(obj->dm.in, obj->dm.out);
	if (rc == 0 && (type & MLX5DV_OBJ_QP))
		rc = vb_dv_qp(obj->qp.out, obj->qp.in);
	if (rc == 0 && (type & MLX5DV_OBJ_CQ))
		rc = vb_dv_cq(obj->cq.out, obj->cq.in);
	if (rc == 0 && (type & MLX5DV_OBJ_SRQ))
		rc = vb_dv_srq(obj->srq.out, obj->srq.in);

	if (rc == 0 && (type & MLX5DV_OBJ_AH)) {
		/* The AV the AH's UD WQEs carry, in the layout of struct mlx5_wqe_av (hw_prm.h checks its offsets). */
		obj->ah.out->av = (struct mlx5_wqe_av *)(void *)&((struct vb_ah *)(void *)obj->ah.in)->av;
		obj->ah.out->comp_mask = 0;
	}
	if (rc == 0 && (type & MLX5DV_OBJ_PD)) {
		obj->pd.out->pdn = obj->pd.in->handle;
		obj->pd.out->comp_mask = 0;
	}
	return rc;
}

static struct mlx5dv_devx_uar *vb_dv_alloc_uar(struct ibv_context *c, uint32_t flags)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	long page = sysconf(_SC_PAGESIZE);
	struct vb_uar *u;
	uint32_t id;

	if (ctx == NULL || (flags != MLX5DV_UAR_ALLOC_TYPE_BF && flags != MLX5DV_UAR_ALLOC_TYPE_NC)) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL || (u->page = vb_bell_uar_page()) == NULL) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	/* From 1: page 0 is the driver's own on the card, and programs take 0 for "none" (rdma-core's suite does). */
	id = atomic_fetch_add(&ctx->dev->next_uar_page, 1) + 1;
	u->dv = ctx->dev->dv;
	u->uar.base_addr = u->page;
	u->uar.reg_addr = (char *)u->page + VB_UAR_DB_OFFSET;
	u->uar.page_id = id;
	u->uar.mmap_off = (off_t)id * page;
	return &u->uar;
}

static void vb_dv_free_uar(struct mlx5dv_devx_uar *uar)
{
	struct vb_uar *u = (struct vb_uar *)uar;

	if (uar == NULL)
		return;
	vb_bell_uar_free(u->page);
	free(u);
}

#define VB_UMEM_ACCESS                                                                             \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |              \
	 IBV_ACCESS_REMOTE_ATOMIC)

/* Pinning is only recorded: the device reaches the program's memory through its own mappings. */
static struct mlx5dv_devx_umem *vb_dv_umem_reg_ex(struct ibv_context *c, struct mlx5dv_devx_umem_in *in)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct vb_umem *u;

	if (ctx == NULL || in == NULL || in->addr == NULL || in->size == 0 ||
	    (in->access & ~(uint32_t)VB_UMEM_ACCESS) ||
	    ((in->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(in->access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	if (in->comp_mask & ~(uint64_t)MLX5DV_UMEM_MASK_DMABUF) {
		errno = EINVAL;
		return NULL;
	}
	if (in->comp_mask & MLX5DV_UMEM_MASK_DMABUF) {
		errno = EOPNOTSUPP;	/* no dma-buf exporters without a kernel device */
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	u->dv = ctx->dev->dv;
	u->ctx = c;
	u->addr = in->addr;
	u->size = in->size;
	u->access = in->access;
	pthread_mutex_lock(&ctx->lock);
	u->umem.umem_id = ++ctx->next_umem_id;
	u->next = ctx->umems;
	ctx->umems = u;	/* DevX commands name it by id */
	pthread_mutex_unlock(&ctx->lock);
	return &u->umem;
}

static struct mlx5dv_devx_umem *vb_dv_umem_reg(struct ibv_context *c, void *addr, size_t size,
					       uint32_t access)
{
	struct mlx5dv_devx_umem_in in = {.addr = addr, .size = size, .access = access,
					 .pgsz_bitmap = UINT64_MAX};

	return vb_dv_umem_reg_ex(c, &in);
}

/* EBUSY while a DevX queue lives in it, as the kernel's reference on the umem refuses. */
static int vb_dv_umem_dereg(struct mlx5dv_devx_umem *umem)
{
	struct vb_umem *u = (struct vb_umem *)umem;
	struct vb_context *ctx;
	int rc = 0;

	if (umem == NULL)
		return EINVAL;
	if (u->ctx == NULL) { /* deregistered with its context (vb_devx_close) */
		free(u);
		return 0;
	}
	ctx = vb_ctx(u->ctx);
	pthread_mutex_lock(&ctx->lock);
	if (atomic_load(&u->users) != 0)
		rc = EBUSY;
	for (struct vb_umem **pp = &ctx->umems; rc == 0 && *pp != NULL; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	pthread_mutex_unlock(&ctx->lock);
	if (rc == 0)
		free(u);
	return rc;
}

const struct vb_dv_ops vb_dv_ops_impl = {
	.query_device = vb_dv_query_device,
	.init_obj = vb_dv_init_obj,
	.devx_alloc_uar = vb_dv_alloc_uar,
	.devx_free_uar = vb_dv_free_uar,
	.devx_umem_reg = vb_dv_umem_reg,
	.devx_umem_dereg = vb_dv_umem_dereg,
	.devx_umem_reg_ex = vb_dv_umem_reg_ex,
	.create_mkey = vb_dv_create_mkey,
	.destroy_mkey = vb_dv_destroy_mkey,
	.create_qp = vb_dv_create_qp,
	.create_cq = vb_dv_create_cq,
	.devx_obj_create = vb_dv_devx_obj_create,
	.devx_obj_destroy = vb_dv_devx_obj_destroy,
	.dr_domain_create = vb_dv_dr_domain_create,
	.dr_domain_destroy = vb_dv_dr_domain_destroy,
	.dr_table_create = vb_dv_dr_table_create,
	.dr_table_destroy = vb_dv_dr_table_destroy,
	.dr_matcher_create = vb_dv_dr_matcher_create,
	.dr_matcher_destroy = vb_dv_dr_matcher_destroy,
	.dr_rule_create = vb_dv_dr_rule_create,
	.dr_rule_destroy = vb_dv_dr_rule_destroy,
	.dr_qp_dest = vb_dv_dr_qp_dest,
	.dr_allow_duplicates = vb_dv_dr_allow_duplicates,
	.dr_dump = vb_dv_dr_dump,
	.flow_matcher_create = vb_dv_flow_matcher_create,
	.flow_matcher_destroy = vb_dv_flow_matcher_destroy,
	.flow_create = vb_dv_flow_create,
	.devx_general_cmd = vb_dv_devx_general_cmd,
	.misc = &vb_dv_misc_ops_impl,
	.alloc_dm = vb_dv_alloc_dm,
	.dcs = &vb_dv_dcs_ops_impl,
	.act = &vb_dv_act_ops_impl,
	.devx = &vb_dv_devx_ops_impl,
	.sig = &vb_dv_sig_ops_impl,
	.pace = &vb_dv_pace_ops_impl,
	.dm_map_op_addr = vb_dm_map_op_addr,
	.var = &vb_dv_var_ops_impl,
};
