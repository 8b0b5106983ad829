/*
 * vb_rss — RSS QPs: ibv_create_qp_ex(3) of a raw packet QP with
 * IBV_QP_INIT_ATTR_RX_HASH and IBV_QP_INIT_ATTR_IND_TABLE. Such a QP has no
 * queues of its own: it is the port's indirect TIR (hw_eth_tir_create_rss)
 * over the WQs of its indirection table, so a flow to it (ibv_create_flow,
 * mlx5dv_dr's QP action) sends each frame to the WQ whose entry the
 * Toeplitz hash of the selected fields picks (hash & (table size - 1)).
 *
 * Refusals as the v44 provider and the kernel's mlx5 give them: a key
 * longer than 40 bytes EINVAL (libmlx5); a QP type other than raw packet,
 * a hash function other than Toeplitz, inner-header or IPsec SPI fields,
 * unknown field bits EOPNOTSUPP; a key of another length, IPv4 with IPv6
 * fields, TCP with UDP ports, no fields over a table of more than one WQ,
 * a send CQ or creation flags, a receive CQ, SRQ or receive capacities (the
 * WQs receive), a missing indirection table or PD EINVAL. It cannot be
 * modified or queried (EOPNOTSUPP, as libmlx5 answers an RSS QP); posting to
 * it finds no room (ENOMEM). The table is held while the QP lives.
 */
#include <stdlib.h>
#include <string.h>

#include "hw_eth.h"
#include "vb_export.h"
#include "vb_int.h"

#define RSS_MASK_OK                                                                                \
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_RX_HASH |          \
	 IBV_QP_INIT_ATTR_IND_TABLE)
#define RSS_FIELDS_V4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define RSS_FIELDS_V6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define RSS_FIELDS_TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define RSS_FIELDS_UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/* mlx5_ib's create_rss_raw_qp_tir, in its order, after the provider's key length. */
static int rss_hash_ok(const struct ibv_rx_hash_conf *h)
{
	uint64_t f = h->rx_hash_fields_mask;

	if (f & IBV_RX_HASH_INNER)
		return EOPNOTSUPP; /* inner headers need tunnel offloads, which the port has not */
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ)
		return EOPNOTSUPP;
	if (h->rx_hash_key_len != HW_RSS_KEY_LEN || h->rx_hash_key == NULL)
		return EINVAL;
	if ((f & RSS_FIELDS_V4) && (f & RSS_FIELDS_V6))
		return EINVAL;
	if ((f & RSS_FIELDS_TCP) && (f & RSS_FIELDS_UDP))
		return EINVAL;
	if (f & ~(uint64_t)HW_RSS_FIELDS_ALL)
		return EOPNOTSUPP; /* IPsec SPI, unknown */
	return 0;
}

static int rss_attr_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a)
{
	if (a->comp_mask & ~(uint32_t)RSS_MASK_OK)
		return EOPNOTSUPP;
	if (a->rx_hash_conf.rx_hash_key_len > HW_RSS_KEY_LEN)
		return EINVAL; /* libmlx5: longer than its command's key */
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) || !(a->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE) ||
	    a->rwq_ind_tbl == NULL || a->rwq_ind_tbl->context != &ctx->vctx.context)
		return EINVAL;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL || a->pd->context != &ctx->vctx.context)
		return EINVAL;
	if (a->recv_cq != NULL || a->srq != NULL || a->cap.max_recv_wr != 0 || a->cap.max_recv_sge != 0)
		return EINVAL; /* the core's: the WQs receive, not the QP */
	if (a->qp_type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	if (!ctx->dev->roce)
		return EINVAL; /* an InfiniBand port carries no Ethernet frames */
	if (a->send_cq != NULL || ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags != 0))
		return EINVAL; /* mlx5's RSS TIR: no send side, no flags */
	return rss_hash_ok(&a->rx_hash_conf);
}

/* The indirect TIR over the table's WQs. */
static int rss_tir(const struct ibv_qp_init_attr_ex *a, uint32_t *tirn)
{
	struct hw_rss_conf conf = {.fields = (uint32_t)a->rx_hash_conf.rx_hash_fields_mask};
	uint32_t rqns[HW_ETH_RSS_TABLE_MAX], n = 0;
	enum hw_status st;

	memcpy(conf.key, a->rx_hash_conf.rx_hash_key, HW_RSS_KEY_LEN);
	vb_ind_rqns(a->rwq_ind_tbl, rqns, &n);
	if (conf.fields == 0 && n > 1)
		return EINVAL; /* no fields: a steering entry to one WQ only, as mlx5_ib */
	st = hw_eth_tir_create_rss(&conf, rqns, n, tirn);
	return st == HW_OK ? 0 : st == HW_ERR_NOMEM ? ENOMEM : EINVAL;
}

static void rss_fill(struct vb_qp *qp, struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a, uint32_t qpn)
{
	struct ibv_qp *b = &qp->qpx.qp_base;

	qp->ctx = ctx;
	qp->pd = vb_pd_of(a->pd);
	b->context = &ctx->vctx.context;
	b->qp_context = a->qp_context;
	b->pd = a->pd;
	b->qp_num = qpn;
	b->state = IBV_QPS_RESET;
	b->qp_type = IBV_QPT_RAW_PACKET;
	b->events_completed = 0;
	qp->init.qp_context = a->qp_context;
	qp->init.qp_type = IBV_QPT_RAW_PACKET;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.port_num = VB_PORT;
}

struct ibv_qp *vb_rss_create_qp(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct vb_qp *qp = NULL;
	uint32_t qpn = 0, tirn = 0;
	int rc = rss_attr_ok(ctx, a);

	if (rc != 0)
		goto err;
	rc = ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		goto err;
	if (hw_id_alloc(HW_ID_QPN, &qpn) != HW_OK) {
		qpn = 0;
		goto err_free; /* ENOMEM: the numbers ran out */
	}
	rc = rss_tir(a, &tirn);
	if (rc != 0)
		goto err_id;
	rc = vb_raw_rss_new(qp, tirn, a->rwq_ind_tbl);
	if (rc != 0)
		goto err_tir;
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
	rss_fill(qp, ctx, a, qpn);
	vb_ind_hold(a->rwq_ind_tbl, true);
	atomic_fetch_add(&qp->pd->users, 1);
	memset(&a->cap, 0, sizeof(a->cap));
	return &qp->qpx.qp_base;

err_tir:
	(void)hw_eth_tir_destroy(tirn);
err_id:
	(void)hw_id_free(HW_ID_QPN, qpn);
err_free:
	free(qp);
err:
	errno = rc;
	return NULL;
}

int vb_rss_destroy_qp(struct vb_qp *qp)
{
	struct ibv_rwq_ind_table *ind = vb_raw_rss_ind(qp);

	vb_raw_free(qp); /* the TIR first: frames stop reaching the WQs through it */
	vb_ind_hold(ind, false);
	atomic_fetch_sub(&qp->pd->users, 1);
	(void)hw_id_free(HW_ID_QPN, qp->qpx.qp_base.qp_num);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&qp->qpx.qp_base.mutex);
	pthread_cond_destroy(&qp->qpx.qp_base.cond);
	free(qp);
	return 0;
}
