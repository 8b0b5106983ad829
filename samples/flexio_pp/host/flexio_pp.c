/*
 * flexio_pp — a FlexIO packet processor in the SDK's style. The host puts
 * an Ethernet RQ and SQ with their CQs in DPA memory, steers the frames for
 * the processor's MAC to the RQ's TIR with mlx5dv_dr rules, and starts an
 * event handler that the RQ's CQ wakes; the handler swaps each frame's MACs
 * and sends it back. The port's wire is looped, so a second RQ and SQ play
 * the far end: 5000 frames of 60..1059 bytes go out to the processor, come
 * back with their MACs swapped, and are checked byte for byte.
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

#include "../flexio_pp_common.h"

extern struct flexio_app *flexio_pp_device;
flexio_func_t flexio_pp_handler, flexio_pp_send, flexio_pp_receive, flexio_pp_stat;

#define N_FRAMES 5000
#define MATCH_BYTES 64 /* the outer headers of the match parameters */
#define DMAC_AT 8      /* dmac_47_16 in them */

struct pp {
	struct flexio_process *process;
	struct mlx5dv_devx_uar *devx_uar;
	struct flexio_uar *uar;
	struct flexio_outbox *outbox;
	struct flexio_event_handler *handler;
	struct flexio_cq *cq[4]; /* rq, sq, peer_rq, peer_sq */
	struct flexio_rq *rq, *peer_rq;
	struct flexio_sq *sq, *peer_sq;
	struct flexio_mkey *mkey;
	struct pp_ctx c;
	flexio_uintptr_t ctx_daddr;
	struct mlx5dv_dr_domain *domain;
	struct mlx5dv_dr_table *table;
	struct mlx5dv_dr_matcher *matcher;
	struct mlx5dv_dr_action *to_pp, *to_peer;
	struct mlx5dv_dr_rule *rule_pp, *rule_peer;
};

static flexio_uintptr_t dpa_zalloc(struct flexio_process *p, size_t len)
{
	flexio_uintptr_t d = 0;

	if (flexio_buf_dev_alloc(p, len, &d) != FLEXIO_STATUS_SUCCESS ||
	    flexio_buf_dev_memset(p, 0, len, d) != FLEXIO_STATUS_SUCCESS)
		return 0;
	return d;
}

static struct flexio_cq *cq_create(struct pp *x, struct flexio_thread *thread, struct pp_wq *q)
{
	struct flexio_cq_attr a = { .log_cq_depth = PP_LOG_CQ, .uar_id = flexio_uar_get_id(x->uar) };
	size_t len = (size_t)64 << PP_LOG_CQ;
	uint8_t *img = calloc(1, len);
	struct flexio_cq *cq = NULL;

	if (img == NULL)
		return NULL;
	for (size_t i = 0; i < len / 64; i++)
		img[i * 64 + 63] = 0xf1; /* every CQE invalid, owner 1: as a driver hands a ring over */
	a.element_type = thread != NULL ? FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD : FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ;
	a.thread = thread;
	if (flexio_copy_from_host(x->process, img, len, &q->cq_ring) == FLEXIO_STATUS_SUCCESS) {
		a.cq_ring_qmem.daddr = q->cq_ring;
		a.cq_dbr_daddr = q->cq_dbr = dpa_zalloc(x->process, 8);
		if (q->cq_dbr == 0 || flexio_cq_create(x->process, NULL, &a, &cq) != FLEXIO_STATUS_SUCCESS)
			cq = NULL;
	}
	free(img);
	if (cq != NULL)
		q->cqn = flexio_cq_get_cq_num(cq);
	return cq;
}

static struct flexio_sq *sq_create(struct pp *x, struct pp_wq *q)
{
	struct flexio_wq_attr a = { .log_wq_depth = PP_LOG_Q, .uar_id = flexio_uar_get_id(x->uar),
				    .pd = flexio_process_get_pd(x->process) };
	struct flexio_sq *sq = NULL;

	a.wq_ring_qmem.daddr = q->ring = dpa_zalloc(x->process, 64u << PP_LOG_Q);
	if (q->ring == 0 || flexio_sq_create(x->process, NULL, q->cqn, &a, &sq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	q->num = flexio_sq_get_wq_num(sq);
	return sq;
}

/* An RQ with every receive WQE posted over its own buffer, and the record saying so. */
static struct flexio_rq *rq_create(struct pp *x, struct pp_wq *q)
{
	struct flexio_wq_attr a = { .log_wq_depth = PP_LOG_Q, .uar_id = flexio_uar_get_id(x->uar),
				    .pd = flexio_process_get_pd(x->process) };
	struct { uint32_t byte_count, lkey; uint64_t addr; } wqe[1u << PP_LOG_Q];
	uint32_t dbr[2] = { htobe32(1u << PP_LOG_Q), 0 };
	struct flexio_rq *rq = NULL;

	for (uint32_t i = 0; i < (1u << PP_LOG_Q); i++) {
		wqe[i].byte_count = htobe32(PP_BUF);
		wqe[i].lkey = htobe32(x->c.lkey);
		wqe[i].addr = htobe64(q->bufs + (uint64_t)i * PP_BUF);
	}
	q->pi = 1u << PP_LOG_Q;
	if (flexio_copy_from_host(x->process, wqe, sizeof(wqe), &q->ring) != FLEXIO_STATUS_SUCCESS ||
	    flexio_copy_from_host(x->process, dbr, sizeof(dbr), &q->dbr) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	a.wq_ring_qmem.daddr = q->ring;
	a.wq_dbr_qmem.daddr = q->dbr;
	if (flexio_rq_create(x->process, NULL, q->cqn, &a, &rq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	q->num = flexio_rq_get_wq_num(rq);
	return rq;
}

/* The frame buffers of the four queues, under one device MKey. */
static int buffers(struct pp *x)
{
	size_t per = (size_t)PP_BUF << PP_LOG_Q;
	struct flexio_mkey_attr ma = { .pd = flexio_process_get_pd(x->process), .len = 4 * per,
				       .access = IBV_ACCESS_LOCAL_WRITE };
	struct pp_wq *q[4] = { &x->c.rq, &x->c.sq, &x->c.peer_rq, &x->c.peer_sq };

	ma.daddr = dpa_zalloc(x->process, 4 * per);
	if (ma.daddr == 0 || flexio_device_mkey_create(x->process, &ma, &x->mkey) != FLEXIO_STATUS_SUCCESS)
		return -1;
	for (int i = 0; i < 4; i++)
		q[i]->bufs = ma.daddr + i * per;
	x->c.lkey = flexio_mkey_get_id(x->mkey);
	return 0;
}

static int device_create(struct ibv_context *ctx, struct pp *x)
{
	struct flexio_event_handler_attr ea = { .host_stub_func = flexio_pp_handler };

	x->devx_uar = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (x->devx_uar == NULL ||
	    flexio_process_create(ctx, flexio_pp_device, NULL, &x->process) != FLEXIO_STATUS_SUCCESS ||
	    flexio_uar_create(x->process, x->devx_uar, &x->uar) != FLEXIO_STATUS_SUCCESS ||
	    flexio_outbox_create(x->process, NULL, x->uar, &x->outbox) != FLEXIO_STATUS_SUCCESS ||
	    flexio_event_handler_create(x->process, &ea, NULL, x->outbox, &x->handler) != FLEXIO_STATUS_SUCCESS ||
	    buffers(x) != 0)
		return -1;
	x->c.outbox_id = flexio_outbox_get_id(x->outbox);
	x->cq[0] = cq_create(x, flexio_event_handler_get_thread(x->handler), &x->c.rq);
	x->cq[1] = cq_create(x, NULL, &x->c.sq);
	x->cq[2] = cq_create(x, NULL, &x->c.peer_rq);
	x->cq[3] = cq_create(x, NULL, &x->c.peer_sq);
	if (x->cq[0] == NULL || x->cq[1] == NULL || x->cq[2] == NULL || x->cq[3] == NULL)
		return -1;
	x->rq = rq_create(x, &x->c.rq);
	x->peer_rq = rq_create(x, &x->c.peer_rq);
	x->sq = sq_create(x, &x->c.sq);
	x->peer_sq = sq_create(x, &x->c.peer_sq);
	return x->rq != NULL && x->peer_rq != NULL && x->sq != NULL && x->peer_sq != NULL ? 0 : -1;
}

static struct mlx5dv_flow_match_parameters *dmac_match(uint64_t mac)
{
	struct mlx5dv_flow_match_parameters *m = calloc(1, sizeof(*m) + MATCH_BYTES);

	if (m == NULL)
		return NULL;
	m->match_sz = MATCH_BYTES;
	for (int i = 0; i < 6; i++)
		((uint8_t *)m->match_buf)[DMAC_AT + i] = (uint8_t)(mac >> (8 * (5 - i)));
	return m;
}

/* NIC receive rules on the destination MAC: the processor's frames to its RQ, the far end's to the other. */
static int steering_create(struct ibv_context *ctx, struct pp *x)
{
	struct mlx5dv_flow_match_parameters *mask = dmac_match(0xffffffffffffull), *pp = dmac_match(PP_MAC_DPA),
					    *peer = dmac_match(PP_MAC_PEER);
	int rc = -1;

	if (mask == NULL || pp == NULL || peer == NULL)
		goto out;
	x->domain = mlx5dv_dr_domain_create(ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	x->table = x->domain != NULL ? mlx5dv_dr_table_create(x->domain, 0) : NULL;
	x->matcher = x->table != NULL ? mlx5dv_dr_matcher_create(x->table, 0, 1 /* outer headers */, mask) : NULL;
	x->to_pp = mlx5dv_dr_action_create_dest_devx_tir(flexio_rq_get_tir(x->rq));
	x->to_peer = mlx5dv_dr_action_create_dest_devx_tir(flexio_rq_get_tir(x->peer_rq));
	if (x->matcher == NULL || x->to_pp == NULL || x->to_peer == NULL)
		goto out;
	x->rule_pp = mlx5dv_dr_rule_create(x->matcher, pp, 1, &x->to_pp);
	x->rule_peer = mlx5dv_dr_rule_create(x->matcher, peer, 1, &x->to_peer);
	rc = x->rule_pp != NULL && x->rule_peer != NULL ? 0 : -1;
out:
	free(mask);
	free(pp);
	free(peer);
	return rc;
}

static void steering_destroy(struct pp *x)
{
	if (x->rule_pp != NULL)
		mlx5dv_dr_rule_destroy(x->rule_pp);
	if (x->rule_peer != NULL)
		mlx5dv_dr_rule_destroy(x->rule_peer);
	if (x->to_pp != NULL)
		mlx5dv_dr_action_destroy(x->to_pp);
	if (x->to_peer != NULL)
		mlx5dv_dr_action_destroy(x->to_peer);
	if (x->matcher != NULL)
		mlx5dv_dr_matcher_destroy(x->matcher);
	if (x->table != NULL)
		mlx5dv_dr_table_destroy(x->table);
	if (x->domain != NULL)
		mlx5dv_dr_domain_destroy(x->domain);
}

/* Reverse order of creation: the handler first (it may still be sending), the rules before their TIRs. */
static void destroy_all(struct pp *x)
{
	if (x->handler != NULL)
		flexio_event_handler_destroy(x->handler);
	steering_destroy(x);
	if (x->sq != NULL)
		flexio_sq_destroy(x->sq);
	if (x->peer_sq != NULL)
		flexio_sq_destroy(x->peer_sq);
	if (x->rq != NULL)
		flexio_rq_destroy(x->rq);
	if (x->peer_rq != NULL)
		flexio_rq_destroy(x->peer_rq);
	for (int i = 0; i < 4; i++)
		if (x->cq[i] != NULL)
			flexio_cq_destroy(x->cq[i]);
	if (x->mkey != NULL)
		flexio_device_mkey_destroy(x->mkey);
	if (x->outbox != NULL)
		flexio_outbox_destroy(x->outbox);
	if (x->uar != NULL)
		flexio_uar_destroy(x->uar);
	if (x->process != NULL) {
		if (flexio_err_status(x->process) != 0)
			flexio_err_display(x->process);
		flexio_process_destroy(x->process);
	}
	if (x->devx_uar != NULL)
		mlx5dv_devx_free_uar(x->devx_uar);
}

static uint64_t stat_of(struct pp *x, uint32_t which)
{
	uint64_t v = ~0ull;

	flexio_process_call(x->process, flexio_pp_stat, &v, x->ctx_daddr, which);
	return v;
}

/* Frames in bursts of 1..16; each burst waited for until it came back (bounded). */
static int traffic(struct pp *x)
{
	uint64_t sent = 0, back = 0, r = 0;
	time_t give_up = time(NULL) + 30;

	for (uint32_t burst = 1; sent < N_FRAMES; burst = burst % 16 + 1) {
		uint32_t n = sent + burst > N_FRAMES ? (uint32_t)(N_FRAMES - sent) : burst;

		if (flexio_process_call(x->process, flexio_pp_send, &r, x->ctx_daddr, n) != FLEXIO_STATUS_SUCCESS ||
		    r != 0)
			return -1;
		sent += n;
		while (back < sent && time(NULL) <= give_up)
			if (flexio_process_call(x->process, flexio_pp_receive, &back, x->ctx_daddr) !=
			    FLEXIO_STATUS_SUCCESS)
				return -1;
		if (back < sent)
			return -1;
	}
	return 0;
}

static int run(struct ibv_context *ctx)
{
	struct pp x = { 0 };
	int rc = -1;

	if (device_create(ctx, &x) != 0 || steering_create(ctx, &x) != 0 ||
	    flexio_copy_from_host(x.process, &x.c, sizeof(x.c), &x.ctx_daddr) != FLEXIO_STATUS_SUCCESS ||
	    flexio_event_handler_run(x.handler, x.ctx_daddr) != FLEXIO_STATUS_SUCCESS || traffic(&x) != 0) {
		fprintf(stderr, "flexio_pp: setting up or running the traffic failed\n");
		goto out;
	}
	printf("flexio_pp: %llu frames sent, %llu forwarded by the packet processor in %llu activations, %llu back "
	       "with their MACs swapped, %llu wrong\n",
	       (unsigned long long)stat_of(&x, 0), (unsigned long long)stat_of(&x, 2),
	       (unsigned long long)stat_of(&x, 3), (unsigned long long)stat_of(&x, 1),
	       (unsigned long long)stat_of(&x, 4));
	if (stat_of(&x, 1) == N_FRAMES && stat_of(&x, 2) == N_FRAMES && stat_of(&x, 4) == 0 &&
	    flexio_err_status(x.process) == 0)
		rc = 0;
out:
	destroy_all(&x);
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
		fprintf(stderr, "flexio_pp: no device\n");
		return 1;
	}
	rc = run(ctx);
	ibv_close_device(ctx);
	printf("flexio_pp: %s\n", rc == 0 ? "OK" : "FAILED");
	return rc == 0 ? 0 : 1;
}
