/*
 * FlexIO Ethernet SQs and RQs with mlx5dv_dr steering (device code in
 * tests/flexio/fx_eth_dev.c): an injector SQ sends frames to the handler's
 * MAC; a NIC receive rule on the destination MAC hands them to the
 * handler's RQ through its TIR (flexio_rq_get_tir); the handler, woken by
 * its CQ, swaps the MACs and sends each frame back out; a second rule hands
 * them to a collector RQ, whose frames an RPC checks byte for byte.
 * Thousands of frames of 64..1463 bytes; then the refusals.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "flexio/fx_eth_common.h"
#include "harness.h"

extern struct flexio_app *fx_eth_dev;
flexio_func_t fxe_handler, fxe_inject, fxe_collect;

#define FXE_DMAC_OFF 8 /* dmac_47_16 in the outer headers of the match parameters */

static struct ibv_context *ctx;

struct fe {
	struct flexio_process *p;
	struct mlx5dv_devx_uar *devx_uar;
	struct flexio_uar *uar;
	struct flexio_outbox *outbox;
	struct flexio_event_handler *eh;
	struct flexio_cq *cq[4]; /* h_rq, h_sq, c_rq, i_sq */
	struct flexio_sq *h_sq, *i_sq;
	struct flexio_rq *h_rq, *c_rq;
	struct flexio_mkey *mkey;
	flexio_uintptr_t ctx_d;
	struct fxe_ctx c; /* built here, copied to ctx_d */
	struct mlx5dv_dr_domain *dom;
	struct mlx5dv_dr_table *tbl;
	struct mlx5dv_dr_matcher *m;
	struct mlx5dv_dr_action *to_h, *to_c;
	struct mlx5dv_dr_rule *r_h, *r_c;
};

static flexio_uintptr_t zalloc(struct flexio_process *p, size_t len)
{
	flexio_uintptr_t d = 0;

	if (flexio_buf_dev_alloc(p, len, &d) != FLEXIO_STATUS_SUCCESS)
		return 0;
	flexio_buf_dev_memset(p, 0, len, d);
	return d;
}

static struct flexio_cq *cq_new(struct fe *f, struct flexio_thread *t, struct fxe_wq *q)
{
	struct flexio_cq_attr a = { .log_cq_depth = FXE_LOG_CQ, .uar_id = flexio_uar_get_id(f->uar) };
	size_t len = (size_t)64 << FXE_LOG_CQ;
	uint8_t *img = calloc(1, len);
	struct flexio_cq *cq = NULL;

	a.element_type = t != NULL ? FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD : FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ;
	a.thread = t;
	for (size_t i = 0; img != NULL && i < len / 64; i++)
		img[i * 64 + 63] = 0xf1;
	q->cq_ring = a.cq_ring_qmem.daddr = zalloc(f->p, len);
	q->cq_dbr = a.cq_dbr_daddr = zalloc(f->p, 8);
	if (img != NULL && q->cq_ring != 0)
		flexio_host2dev_memcpy(f->p, img, len, q->cq_ring);
	free(img);
	if (flexio_cq_create(f->p, NULL, &a, &cq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	q->cqn = flexio_cq_get_cq_num(cq);
	return cq;
}

static struct flexio_sq *sq_new(struct fe *f, struct fxe_wq *q)
{
	struct flexio_wq_attr a = { .log_wq_depth = FXE_LOG_Q, .uar_id = flexio_uar_get_id(f->uar),
				    .pd = flexio_process_get_pd(f->p) };
	struct flexio_sq *sq = NULL;

	q->ring = a.wq_ring_qmem.daddr = zalloc(f->p, 64u << FXE_LOG_Q);
	if (flexio_sq_create(f->p, NULL, q->cqn, &a, &sq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	q->num = flexio_sq_get_wq_num(sq);
	return sq;
}

/* An RQ with every WQE posted over its own buffer (as the host side of a vendor program does). */
static struct flexio_rq *rq_new(struct fe *f, struct fxe_wq *q)
{
	struct flexio_wq_attr a = { .log_wq_depth = FXE_LOG_Q, .uar_id = flexio_uar_get_id(f->uar),
				    .pd = flexio_process_get_pd(f->p) };
	struct flexio_rq *rq = NULL;
	uint32_t n = 1u << FXE_LOG_Q;

	q->ring = a.wq_ring_qmem.daddr = zalloc(f->p, 16u << FXE_LOG_Q);
	q->dbr = a.wq_dbr_qmem.daddr = zalloc(f->p, 8);
	for (uint32_t i = 0; q->ring != 0 && i < n; i++) {
		uint32_t *w = (uint32_t *)(uintptr_t)(q->ring + 16u * i);

		w[0] = htobe32(FXE_BUF);
		w[1] = htobe32(f->c.lkey);
		*(uint64_t *)(void *)&w[2] = htobe64(q->bufs + (uint64_t)i * FXE_BUF);
	}
	q->pi = n;
	if (q->dbr != 0)
		*(uint32_t *)(uintptr_t)q->dbr = htobe32(n);
	if (flexio_rq_create(f->p, NULL, q->cqn, &a, &rq) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	q->num = flexio_rq_get_wq_num(rq);
	return rq;
}

/* The frame buffers of the four queues, under one device MKey. */
static int buffers(struct fe *f)
{
	size_t per = (size_t)FXE_BUF << FXE_LOG_Q;
	struct flexio_mkey_attr ma = { .pd = flexio_process_get_pd(f->p), .len = 4 * per,
				       .access = IBV_ACCESS_LOCAL_WRITE };
	struct fxe_wq *qs[4] = { &f->c.h_rq, &f->c.h_sq, &f->c.c_rq, &f->c.i_sq };

	ma.daddr = zalloc(f->p, 4 * per);
	if (ma.daddr == 0 || flexio_device_mkey_create(f->p, &ma, &f->mkey) != FLEXIO_STATUS_SUCCESS)
		return -1;
	for (int i = 0; i < 4; i++)
		qs[i]->bufs = ma.daddr + i * per;
	f->c.lkey = flexio_mkey_get_id(f->mkey);
	return 0;
}

static int queues(struct fe *f)
{
	struct flexio_event_handler_attr ea = { .host_stub_func = fxe_handler };

	f->devx_uar = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (f->devx_uar == NULL || flexio_process_create(ctx, fx_eth_dev, NULL, &f->p) != FLEXIO_STATUS_SUCCESS ||
	    flexio_uar_create(f->p, f->devx_uar, &f->uar) != FLEXIO_STATUS_SUCCESS ||
	    flexio_outbox_create(f->p, NULL, f->uar, &f->outbox) != FLEXIO_STATUS_SUCCESS ||
	    flexio_event_handler_create(f->p, &ea, NULL, f->outbox, &f->eh) != FLEXIO_STATUS_SUCCESS ||
	    buffers(f) != 0)
		return -1;
	f->c.outbox_id = flexio_outbox_get_id(f->outbox);
	f->cq[0] = cq_new(f, flexio_event_handler_get_thread(f->eh), &f->c.h_rq);
	f->cq[1] = cq_new(f, NULL, &f->c.h_sq);
	f->cq[2] = cq_new(f, NULL, &f->c.c_rq);
	f->cq[3] = cq_new(f, NULL, &f->c.i_sq);
	if (f->cq[0] == NULL || f->cq[1] == NULL || f->cq[2] == NULL || f->cq[3] == NULL)
		return -1;
	f->h_rq = rq_new(f, &f->c.h_rq);
	f->c_rq = rq_new(f, &f->c.c_rq);
	f->h_sq = sq_new(f, &f->c.h_sq);
	f->i_sq = sq_new(f, &f->c.i_sq);
	return f->h_rq != NULL && f->c_rq != NULL && f->h_sq != NULL && f->i_sq != NULL ? 0 : -1;
}

static struct mlx5dv_flow_match_parameters *dmac_param(uint64_t mac)
{
	struct mlx5dv_flow_match_parameters *p = calloc(1, sizeof(*p) + 64);

	if (p == NULL)
		return NULL;
	p->match_sz = 64;
	for (int i = 0; i < 6; i++)
		((uint8_t *)p->match_buf)[FXE_DMAC_OFF + i] = (uint8_t)(mac >> (8 * (5 - i)));
	return p;
}

static int steering(struct fe *f)
{
	struct mlx5dv_flow_match_parameters *mask = dmac_param(0xffffffffffffull), *v_h = dmac_param(FXE_MAC_DPA),
					    *v_c = dmac_param(FXE_MAC_HOST);
	int rc = -1;

	if (mask == NULL || v_h == NULL || v_c == NULL)
		goto out;
	f->dom = mlx5dv_dr_domain_create(ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	f->tbl = f->dom != NULL ? mlx5dv_dr_table_create(f->dom, 0) : NULL;
	f->m = f->tbl != NULL ? mlx5dv_dr_matcher_create(f->tbl, 0, 1, mask) : NULL;
	f->to_h = mlx5dv_dr_action_create_dest_devx_tir(flexio_rq_get_tir(f->h_rq));
	f->to_c = mlx5dv_dr_action_create_dest_devx_tir(flexio_rq_get_tir(f->c_rq));
	if (f->m == NULL || f->to_h == NULL || f->to_c == NULL)
		goto out;
	f->r_h = mlx5dv_dr_rule_create(f->m, v_h, 1, &f->to_h);
	f->r_c = mlx5dv_dr_rule_create(f->m, v_c, 1, &f->to_c);
	rc = f->r_h != NULL && f->r_c != NULL ? 0 : -1;
out:
	free(mask);
	free(v_h);
	free(v_c);
	return rc;
}

static void steering_down(struct fe *f)
{
	if (f->r_h != NULL)
		mlx5dv_dr_rule_destroy(f->r_h);
	if (f->r_c != NULL)
		mlx5dv_dr_rule_destroy(f->r_c);
	if (f->to_h != NULL)
		mlx5dv_dr_action_destroy(f->to_h);
	if (f->to_c != NULL)
		mlx5dv_dr_action_destroy(f->to_c);
	if (f->m != NULL)
		mlx5dv_dr_matcher_destroy(f->m);
	if (f->tbl != NULL)
		mlx5dv_dr_table_destroy(f->tbl);
	if (f->dom != NULL)
		mlx5dv_dr_domain_destroy(f->dom);
	f->r_h = f->r_c = NULL;
	f->to_h = f->to_c = NULL;
	f->m = NULL;
	f->tbl = NULL;
	f->dom = NULL;
}

static void fe_down(struct fe *f)
{
	if (f->eh != NULL)
		flexio_event_handler_destroy(f->eh);
	steering_down(f);
	if (f->h_sq != NULL)
		flexio_sq_destroy(f->h_sq);
	if (f->i_sq != NULL)
		flexio_sq_destroy(f->i_sq);
	if (f->h_rq != NULL)
		flexio_rq_destroy(f->h_rq);
	if (f->c_rq != NULL)
		flexio_rq_destroy(f->c_rq);
	for (int i = 0; i < 4; i++)
		if (f->cq[i] != NULL)
			flexio_cq_destroy(f->cq[i]);
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
	free(f);
}

static struct fe *fe_up(void)
{
	struct fe *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	if (queues(f) != 0 || steering(f) != 0 ||
	    flexio_copy_from_host(f->p, &f->c, sizeof(f->c), &f->ctx_d) != FLEXIO_STATUS_SUCCESS) {
		fe_down(f);
		return NULL;
	}
	return f;
}

static uint64_t collect_until(struct fe *f, uint64_t want)
{
	uint64_t got = 0;
	time_t give_up = time(NULL) + 10;

	while (got < want && time(NULL) <= give_up)
		if (flexio_process_call(f->p, fxe_collect, &got, f->ctx_d) != FLEXIO_STATUS_SUCCESS)
			break;
	return got;
}

static void test_packet_processor(void)
{
	struct fe *f = fe_up();
	struct fxe_ctx *dc;
	uint64_t r = 0, total = 0;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	dc = (struct fxe_ctx *)(uintptr_t)f->ctx_d;
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	for (int round = 0; round < 300; round++) {
		uint32_t n = 1 + (uint32_t)(round % 16);

		CHECK(flexio_process_call(f->p, fxe_inject, &r, f->ctx_d, n) == FLEXIO_STATUS_SUCCESS && r == 0);
		total += n;
		if (collect_until(f, total) != total)
			break;
	}
	CHECK(dc->collected == total && dc->injected == total);
	CHECK(dc->forwarded == total);
	CHECK(dc->bad == 0);
	CHECK(dc->activations >= 1 && dc->activations <= total + 1);
	CHECK(flexio_err_status(f->p) == 0);
	/* An RQ whose TIR a rule names is not destroyed; once the rule is gone it is. */
	CHECK(flexio_rq_destroy(f->c_rq) == FLEXIO_STATUS_FAILED);
	CHECK(mlx5dv_dr_rule_destroy(f->r_c) == 0);
	f->r_c = NULL;
	CHECK(mlx5dv_dr_action_destroy(f->to_c) == 0);
	f->to_c = NULL;
	CHECK(flexio_rq_destroy(f->c_rq) == FLEXIO_STATUS_SUCCESS);
	f->c_rq = NULL;
	fe_down(f);
}

static void test_refusals(void)
{
	struct fe *f = fe_up();
	struct flexio_wq_attr a = { .log_wq_depth = 4 };
	struct flexio_sq *sq = (struct flexio_sq *)1;
	struct flexio_rq *rq = (struct flexio_rq *)1;
	uint8_t stack[1024];

	CHECK(f != NULL);
	if (f == NULL)
		return;
	a.pd = flexio_process_get_pd(f->p);
	a.wq_ring_qmem.daddr = zalloc(f->p, 64u << 4);
	a.wq_dbr_qmem.daddr = zalloc(f->p, 8);
	CHECK(flexio_sq_create(NULL, NULL, f->c.i_sq.cqn, &a, &sq) == FLEXIO_STATUS_FAILED && sq == NULL);
	CHECK(flexio_sq_create(f->p, NULL, f->c.i_sq.cqn, NULL, &sq) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_sq_create(f->p, NULL, f->c.i_sq.cqn, &a, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_sq_create(f->p, NULL, 0xabcdef, &a, &sq) == FLEXIO_STATUS_FAILED); /* no such CQ */
	a.log_wq_depth = 16;
	CHECK(flexio_sq_create(f->p, NULL, f->c.i_sq.cqn, &a, &sq) == FLEXIO_STATUS_FAILED);
	a.log_wq_depth = 5; /* a ring bigger than its buffer */
	CHECK(flexio_sq_create(f->p, NULL, f->c.i_sq.cqn, &a, &sq) == FLEXIO_STATUS_FAILED);
	a.log_wq_depth = 4;
	a.wq_ring_qmem.daddr = (uintptr_t)stack; /* not DPA memory */
	CHECK(flexio_sq_create(f->p, NULL, f->c.i_sq.cqn, &a, &sq) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_rq_create(f->p, NULL, f->c.c_rq.cqn, &a, &rq) == FLEXIO_STATUS_FAILED && rq == NULL);
	a.wq_ring_qmem.daddr = zalloc(f->p, 64u << 4);
	a.wq_dbr_qmem.daddr = (uintptr_t)stack;
	CHECK(flexio_rq_create(f->p, NULL, f->c.c_rq.cqn, &a, &rq) == FLEXIO_STATUS_FAILED);
	a.wq_dbr_qmem.daddr = zalloc(f->p, 8);
	CHECK(flexio_sq_create(f->p, NULL, f->c.i_sq.cqn, &a, &sq) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_sq_get_wq_num(sq) != 0 && flexio_sq_get_wq_num(sq) != f->c.i_sq.num);
	CHECK(flexio_sq_destroy(sq) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_rq_create(f->p, NULL, f->c.c_rq.cqn, &a, &rq) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_rq_get_tir(rq) != NULL && flexio_rq_get_wq_num(rq) != 0);
	CHECK(flexio_rq_destroy(rq) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_cq_destroy(f->cq[3]) == FLEXIO_STATUS_FAILED); /* the injector SQ completes into it */
	CHECK(flexio_sq_destroy(NULL) == FLEXIO_STATUS_FAILED && flexio_rq_destroy(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_sq_get_wq_num(NULL) == 0 && flexio_rq_get_wq_num(NULL) == 0 && flexio_rq_get_tir(NULL) == NULL);
	fe_down(f);
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
	if (ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	RUN(test_packet_processor);
	RUN(test_refusals);
	ibv_close_device(ctx);
	return th_summary("test_flexio_eth");
}
