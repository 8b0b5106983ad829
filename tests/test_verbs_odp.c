/*
 * On-demand paging as ibv_query_device_ex(3), ibv_reg_mr(3) and
 * ibv_advise_mr(3) describe it: the capabilities a ConnectX-6 Dx reports
 * for explicit ODP (no implicit ODP, no UC or XRC here), MRs registered
 * with IBV_ACCESS_ON_DEMAND taking every RC operation, and the prefetch
 * advice with the kernel's refusals.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define OD_LEN 8192
#define OD_ACCESS (VQ_ACCESS_ALL | IBV_ACCESS_ON_DEMAND)

static uint8_t od_mem[2][OD_LEN] __attribute__((aligned(4096)));

static void test_odp_caps(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex a;

	CHECK(c != NULL);
	memset(&a, 0xa5, sizeof(a));
	CHECK_OK(ibv_query_device_ex(c, NULL, &a));
	CHECK(a.odp_caps.general_caps == IBV_ODP_SUPPORT);
	CHECK(a.odp_caps.per_transport_caps.rc_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
	       IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV));
	CHECK(a.odp_caps.per_transport_caps.uc_odp_caps == 0);
	CHECK(a.odp_caps.per_transport_caps.ud_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV));
	/* XRC requests take RC's paths. */
	CHECK(a.xrc_odp_caps == a.odp_caps.per_transport_caps.rc_odp_caps);
}

static void od_pair(struct vq_pair *p)
{
	const struct vq_pair_spec s = { .buf = { od_mem[0], od_mem[1] }, .len = OD_LEN, .fill = { 0x21, 0x43 },
					.access = { OD_ACCESS, OD_ACCESS }, .type = IBV_QPT_RC };

	vq_pair_open(p, &s);
	vq_pair_up(p);
}

/* One signalled WR of qp 0 (its local side in buffer 0); the status of its completion. */
static int od_post(struct vq_pair *p, struct ibv_send_wr *wr, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p->buf[0] + off, .length = len, .lkey = p->mr[0]->lkey };
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;

	wr->sg_list = &sg;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(p->qp[0], wr, &bad) != 0 || vq_poll1(p->cq[0], &wc) != 1)
		return -1;
	return (int)wc.status;
}

static void test_odp_traffic(void)
{
	struct ibv_send_wr wr;
	struct vq_pair p;
	uint64_t old;

	od_pair(&p);
	/* WRITE then READ back, each through ODP keys on both sides. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 1000;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK(od_post(&p, &wr, 0, 3000) == IBV_WC_SUCCESS);
	CHECK(memcmp(p.buf[1] + 1000, p.buf[0], 3000) == 0 && p.buf[1][999] == 0x43 && p.buf[1][4000] == 0x43);
	memset(p.buf[1] + 5000, 0x65, 100);
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ };
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 5000;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK(od_post(&p, &wr, 4096, 100) == IBV_WC_SUCCESS);
	CHECK(p.buf[0][4096] == 0x65 && p.buf[0][4195] == 0x65 && p.buf[0][4196] == 0x21);
	/* A fetch-and-add on an ODP key. */
	memset(p.buf[1] + 64, 0, 8);
	p.buf[1][64] = 5;
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD };
	wr.wr.atomic.remote_addr = (uintptr_t)p.buf[1] + 64;
	wr.wr.atomic.rkey = p.mr[1]->rkey;
	wr.wr.atomic.compare_add = 3;
	CHECK(od_post(&p, &wr, 2048, 8) == IBV_WC_SUCCESS);
	memcpy(&old, p.buf[0] + 2048, 8);
	CHECK(old == 5 && p.buf[1][64] == 8);
}

static void test_advise_mr(void)
{
	struct vq_pair p;
	struct ibv_sge sg[2];
	struct ibv_mr *ro;
	struct ibv_pd *other;

	od_pair(&p);
	sg[0] = (struct ibv_sge){ .addr = (uintptr_t)p.buf[0], .length = OD_LEN, .lkey = p.mr[0]->lkey };
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)p.buf[1] + 100, .length = 100, .lkey = p.mr[1]->lkey };
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2));
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, sg, 2));
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, sg, 1));
	/* The kernel's refusals. */
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1u << 5, sg, 1) == EINVAL);
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 0) == EINVAL);
	CHECK(ibv_advise_mr(p.pd, (enum ibv_advise_mr_advice)7, 0, sg, 1) == EOPNOTSUPP);
	sg[1].length = OD_LEN; /* beyond its MR */
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2) == EFAULT);
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)p.buf[1], .length = 8, .lkey = p.mr[1]->lkey ^ 0x100 };
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2) == EFAULT);
	/* A read-only key takes a read advice, not a write one. */
	ro = vq_mr(p.pd, od_mem[1], 64, IBV_ACCESS_ON_DEMAND);
	CHECK(ro != NULL);
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)od_mem[1], .length = 64, .lkey = ro->lkey };
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg[1], 1));
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sg[1], 1) == EFAULT);
	/* Another domain's key. */
	other = ibv_alloc_pd(p.c);
	CHECK(other != NULL);
	CHECK(ibv_advise_mr(other, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1) == EFAULT);
	CHECK_OK(ibv_dealloc_pd(other));
}

/* A QP's access flags may name ODP (and the other MR flags), as the kernel takes them; unknown bits not. */
static void test_qp_access_odp(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 4);
	struct ibv_qp *qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = OD_ACCESS };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

	CHECK(c != NULL && pd != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(qp != NULL);
	a.qp_access_flags = OD_ACCESS | (1u << 12);
	CHECK(ibv_modify_qp(qp, &a, mask) == EINVAL);
	a.qp_access_flags = OD_ACCESS;
	CHECK_OK(ibv_modify_qp(qp, &a, mask));
	CHECK(qp->state == IBV_QPS_INIT);
}

int main(void)
{
	RUN(test_qp_access_odp);
	RUN(test_odp_caps);
	RUN(test_odp_traffic);
	RUN(test_advise_mr);
	return th_summary("test_verbs_odp");
}
