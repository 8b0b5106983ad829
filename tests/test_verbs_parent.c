/*
 * Thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)): a parent domain stands for its PD wherever a
 * PD is taken, holds it (and its thread domain) while it lives, and is held
 * by what is made on it; its allocators are asked for each queue's buffer
 * and doorbell record, and may leave them to the provider — memory they hand
 * over is given back and the queue refused with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

static uint8_t pa_mem[2][4096] __attribute__((aligned(4096)));

struct pa_calls {
	int alloc, free, dbr, own;
	uint64_t last_type;
	void *given;
};

static struct pa_calls pa;

static void *pa_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	(void)pd, (void)size, (void)align;
	if (ctx != &pa)
		return NULL; /* not the context the domain was given: the creation fails, the test with it */
	pa.alloc++;
	pa.dbr += type == MLX5DV_RES_TYPE_DBR;
	pa.last_type = type;
	if (pa.own && type != MLX5DV_RES_TYPE_DBR) {
		pa.given = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
		return pa.given;
	}
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void pa_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	(void)pd, (void)ctx, (void)type;
	pa.free++;
	if (ptr != pa.given)
		return; /* counted, checked by the caller through pa.given */
	free(ptr);
	pa.given = NULL;
}

static void test_td(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_td *td;
	struct ibv_pd *pd, *par;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	ta.comp_mask = 1;
	errno = 0;
	CHECK(ibv_alloc_td(c, &ta) == NULL && errno == EINVAL);
	ta.comp_mask = 0;
	td = ibv_alloc_td(c, &ta);
	CHECK(td != NULL && td->context == c);
	pda.pd = pd;
	pda.td = td;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	CHECK(ibv_dealloc_td(td) == EBUSY);
	CHECK_OK(ibv_dealloc_pd(par));
	CHECK_OK(ibv_dealloc_td(td));
}

static void test_parent_refusals_and_lifetimes(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_pd *pd, *par;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	CHECK(c != NULL);
	pd = ibv_alloc_pd(c);
	CHECK(pd != NULL);
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL); /* no PD */
	pda.pd = pd;
	pda.comp_mask = 1u << 5;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL);
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS; /* without the functions */
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL);
	pda.comp_mask = 0;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL && par->context == c);
	pda.pd = par; /* a parent domain of a parent domain */
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL);
	/* The PD is held by its parent domain, which is held by what is made on it. */
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	cq = ibv_create_cq(c, 8, NULL, NULL, 0);
	CHECK(cq != NULL);
	qp = vq_qp(par, IBV_QPT_RC, cq, cq, 4);
	mr = ibv_reg_mr(par, pa_mem[0], 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(qp != NULL && mr != NULL && mr->pd == par);
	CHECK(ibv_dealloc_pd(par) == EBUSY);
	CHECK(th_undefer(vq_destroy_qp_cb, qp));
	CHECK_OK(ibv_destroy_qp(qp));
	CHECK(ibv_dealloc_pd(par) == EBUSY);
	CHECK_OK(ibv_dereg_mr(mr));
	CHECK_OK(ibv_dealloc_pd(par));
	CHECK_OK(ibv_dealloc_pd(pd));
	CHECK_OK(ibv_destroy_cq(cq));
}

/* A QP on the parent domain and one on its PD reach each other's keys: one protection domain. */
static void test_parent_is_its_pd(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_pd *pd = vf_pd(c), *par;
	struct ibv_cq *cq = vq_cq(c, 16);
	struct ibv_mr *m0, *m1;
	struct ibv_qp *a, *b;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	CHECK(c != NULL && pd != NULL && cq != NULL);
	pda.pd = pd;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	m0 = vq_mr(par, pa_mem[0], 4096, VQ_ACCESS_ALL);
	m1 = vq_mr(pd, pa_mem[1], 4096, VQ_ACCESS_ALL);
	a = vq_qp(par, IBV_QPT_RC, cq, cq, 4);
	b = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(m0 != NULL && m1 != NULL && a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	memset(pa_mem[0], 0x6b, 64);
	memset(pa_mem[1], 0, 64);
	sg = (struct ibv_sge){ .addr = (uintptr_t)pa_mem[0], .length = 64, .lkey = m0->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)pa_mem[1];
	wr.wr.rdma.rkey = m1->rkey;
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	CHECK(memcmp(pa_mem[0], pa_mem[1], 64) == 0);
	CHECK(th_undefer(vq_destroy_qp_cb, a));
	CHECK_OK(ibv_destroy_qp(a));
	CHECK(th_undefer(vf_dereg_cb, m0));
	CHECK_OK(ibv_dereg_mr(m0));
	CHECK_OK(ibv_dealloc_pd(par));
}

static void test_allocators(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_cq_init_attr_ex ca = { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct ibv_pd *pd = vf_pd(c), *par;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;

	CHECK(c != NULL && pd != NULL);
	pda.pd = pd;
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pda.alloc = pa_alloc;
	pda.free = pa_free;
	pda.pd_context = &pa;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	/* A CQ on a parent domain: its allocators are asked for the ring and the record, and defer. */
	memset(&pa, 0, sizeof(pa));
	ca.parent_domain = par;
	cqx = ibv_create_cq_ex(c, &ca);
	CHECK(cqx != NULL);
	CHECK(pa.alloc == 2 && pa.dbr == 1 && pa.free == 0);
	memset(&pa, 0, sizeof(pa));
	qp = vq_qp(par, IBV_QPT_RC, ibv_cq_ex_to_cq(cqx), ibv_cq_ex_to_cq(cqx), 4);
	CHECK(qp != NULL);
	CHECK(pa.alloc == 2 && pa.dbr == 1);
	/* An allocator that hands over its own memory: given back, the queue refused. */
	memset(&pa, 0, sizeof(pa));
	pa.own = 1;
	errno = 0;
	CHECK(ibv_create_qp(par, &(struct ibv_qp_init_attr){ .send_cq = ibv_cq_ex_to_cq(cqx),
							      .recv_cq = ibv_cq_ex_to_cq(cqx),
							      .cap = { .max_send_wr = 2, .max_recv_wr = 2,
								       .max_send_sge = 1, .max_recv_sge = 1 },
							      .qp_type = IBV_QPT_RC }) == NULL);
	CHECK(errno == EOPNOTSUPP && pa.alloc == 1 && pa.free == 1 && pa.last_type == MLX5DV_RES_TYPE_QP && pa.given == NULL);
	/* A CQ may name only a parent domain. */
	ca.parent_domain = pd;
	errno = 0;
	CHECK(ibv_create_cq_ex(c, &ca) == NULL && errno == EINVAL);
	CHECK(th_undefer(vq_destroy_qp_cb, qp));
	CHECK_OK(ibv_destroy_qp(qp));
	CHECK(ibv_dealloc_pd(par) == EBUSY); /* the CQ holds it */
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	CHECK_OK(ibv_dealloc_pd(par));
}

int main(void)
{
	RUN(test_td);
	RUN(test_parent_refusals_and_lifetimes);
	RUN(test_parent_is_its_pd);
	RUN(test_allocators);
	return th_summary("test_verbs_parent");
}
