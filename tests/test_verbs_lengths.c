/*
 * Lengths and counts of work requests, as the mlx5 card and provider check
 * them: a message longer than the port's max_msg_sz (ibv_query_port) fails
 * on the requester with IBV_WC_LOC_LEN_ERR and moves nothing; a gather entry
 * of 2 GiB or more (the data segment's byte count is 31 bits, its top bit
 * marks inline data) is such a message too, never an empty inline segment.
 * Posting itself refuses what mlx5's provider refuses: more gather entries
 * than max_send_sge or inline data beyond max_inline_data (ENOMEM), however
 * the lengths add up. Through ibv_post_send, the ibv_wr_* builders and WQEs
 * written directly (mlx5dv).
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define VL_LEN 65536
#define VL_CANARY 0xa5
#define VL_LOST_NS (10ull * 1000000000ull) /* a hang guard, not a timing */

static uint8_t vl_mem[2][VL_LEN] __attribute__((aligned(4096)));

static void vl_pair(struct vq_pair *p, struct ibv_qp_init_attr_ex *ax)
{
	memset(p, 0, sizeof(*p));
	p->c = vf_open();
	CHECK(p->c != NULL);
	p->pd = vf_pd(p->c);
	CHECK(p->pd != NULL);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = vq_cq(p->c, 64);
		CHECK(p->cq[i] != NULL);
		p->buf[i] = vl_mem[i];
		memset(p->buf[i], i == 0 ? 0x11 : VL_CANARY, VL_LEN);
		p->mr[i] = vq_mr(p->pd, p->buf[i], VL_LEN, VQ_ACCESS_ALL);
		CHECK(p->mr[i] != NULL);
	}
	for (int i = 0; i < 2; i++) {
		if (ax != NULL) {
			ax->pd = p->pd;
			ax->send_cq = ax->recv_cq = p->cq[i];
			p->qp[i] = ibv_create_qp_ex(p->c, ax);
			if (p->qp[i] != NULL)
				th_defer(vq_destroy_qp_cb, p->qp[i]);
		} else {
			p->qp[i] = vq_qp(p->pd, IBV_QPT_RC, p->cq[i], p->cq[i], 16);
		}
		CHECK(p->qp[i] != NULL);
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(p->qp[i], p->qp[1 - i]->qp_num, 0, 0));
}

static bool vl_untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != VL_CANARY)
			return false;
	return true;
}

static void vl_expect(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	memset(&wc, 0xee, sizeof(wc));
	CHECK(vq_poll1(cq, &wc) == 1);
	if (wc.wr_id != id || wc.status != st)
		TH_FAIL("wr_id %llu status %s (byte_len %u), expected %llu %s", (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), wc.byte_len, (unsigned long long)id, ibv_wc_status_str(st));
	CHECK(wc.wr_id == id && wc.status == st);
}

static int vl_post(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_sge *sg, int n, uint64_t raddr,
		   uint32_t rkey, unsigned int flags)
{
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = sg, .num_sge = n, .opcode = op,
				 .send_flags = flags | IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int vl_recv(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

/* The requester's WQE fails with st, the QP goes to ERR, and nothing landed at the responder. */
static void vl_fails(struct vq_pair *p, enum ibv_wc_status st)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;

	vl_expect(p->cq[0], 1, st);
	CHECK_OK(ibv_query_qp(p->qp[0], &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == IBV_QPS_ERR);
	CHECK(vl_untouched(p->buf[1], VL_LEN));
	CHECK(ibv_poll_cq(p->cq[1], 1, &wc) == 0); /* the responder's receive was not consumed */
}

/* A gather entry of lengths the device cannot carry, for WRITE and SEND. */
static void vl_one_long(enum ibv_wr_opcode op, uint32_t len)
{
	struct vq_pair p;
	struct ibv_sge sge;

	vl_pair(&p, NULL);
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = len, .lkey = p.mr[0]->lkey};
	if (op == IBV_WR_SEND)
		CHECK_OK(vl_recv(p.qp[1], 9, p.buf[1], VL_LEN, p.mr[1]->lkey));
	CHECK_OK(vl_post(p.qp[0], op, &sge, 1, (uintptr_t)p.buf[1], p.mr[1]->rkey, 0));
	vl_fails(&p, IBV_WC_LOC_LEN_ERR);
}

/* 2 GiB: the top bit of the byte count alone; read as an empty inline segment it moved nothing, successfully. */
static void test_sge_2g(void)
{
	vl_one_long(IBV_WR_RDMA_WRITE, 0x80000000u);
	vl_one_long(IBV_WR_SEND, 0x80000000u);
}

/* Beyond max_msg_sz but below 2 GiB, and beyond 2 GiB (which the 31-bit count cannot hold). */
static void test_sge_beyond_max_msg(void)
{
	struct ibv_port_attr pa;
	struct vq_pair p;

	vl_pair(&p, NULL);
	CHECK_OK(ibv_query_port(p.c, 1, &pa));
	CHECK(pa.max_msg_sz == 1u << 30);
	vl_one_long(IBV_WR_RDMA_WRITE, pa.max_msg_sz + 1);
	vl_one_long(IBV_WR_SEND, pa.max_msg_sz + 1);
	vl_one_long(IBV_WR_RDMA_WRITE, 0x80000010u);
	vl_one_long(IBV_WR_SEND, 0xfffffff0u);
}

/* Entries each within the MR's kind of size whose sum is beyond max_msg_sz: the message, not an entry, counts. */
static void test_sum_beyond_max_msg(void)
{
	struct vq_pair p;
	struct ibv_sge sg[4];

	vl_pair(&p, NULL);
	for (int i = 0; i < 4; i++)
		sg[i] = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 0x40000000u, .lkey = p.mr[0]->lkey};
	CHECK_OK(vl_post(p.qp[0], IBV_WR_RDMA_WRITE, sg, 4, (uintptr_t)p.buf[1], p.mr[1]->rkey, 0));
	vl_fails(&p, IBV_WC_LOC_LEN_ERR);
}

/* An RDMA READ of 2 GiB: nothing is read into the local buffer. */
static void test_read_2g(void)
{
	struct vq_pair p;
	struct ibv_sge sge;

	vl_pair(&p, NULL);
	memset(p.buf[0], VL_CANARY, VL_LEN);
	memset(p.buf[1], 0x33, VL_LEN);
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 0x80000000u, .lkey = p.mr[0]->lkey};
	CHECK_OK(vl_post(p.qp[0], IBV_WR_RDMA_READ, &sge, 1, (uintptr_t)p.buf[1], p.mr[1]->rkey, 0));
	vl_expect(p.cq[0], 1, IBV_WC_LOC_LEN_ERR);
	CHECK(vl_untouched(p.buf[0], VL_LEN));
}

/* Within max_msg_sz but beyond the MR: the key's range, as before. */
static void test_sge_beyond_mr(void)
{
	struct vq_pair p;
	struct ibv_sge sge;

	vl_pair(&p, NULL);
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = VL_LEN + 1, .lkey = p.mr[0]->lkey};
	CHECK_OK(vl_post(p.qp[0], IBV_WR_RDMA_WRITE, &sge, 1, (uintptr_t)p.buf[1], p.mr[1]->rkey, 0));
	vl_fails(&p, IBV_WC_LOC_PROT_ERR);
}

/* UD: 2 GiB is beyond max_msg_sz (and the MTU) too. */
static void test_ud_2g(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_ah_attr aa = {.dlid = 1, .port_num = 1};
	struct ibv_send_wr wr, *bad;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_ah *ah;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	memset(vl_mem[0], VL_CANARY, VL_LEN);
	mr = vq_mr(pd, vl_mem[0], VL_LEN, VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	a = vq_qp(pd, IBV_QPT_UD, cq, cq, 8);
	b = vq_qp(pd, IBV_QPT_UD, cq, cq, 8);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, 0, 0, 0));
	CHECK_OK(vq_up(b, 0, 0, 0));
	CHECK_OK(vq_grh_self(c, &aa));
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	CHECK_OK(vl_recv(b, 3, vl_mem[0] + 4096, 8192, mr->lkey));
	sge = (struct ibv_sge){.addr = (uintptr_t)vl_mem[0], .length = 0x80000000u, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	vl_expect(cq, 1, IBV_WC_LOC_LEN_ERR);
	CHECK(vl_untouched(vl_mem[0], VL_LEN));
}

/* Posting refuses what mlx5's provider refuses, and lengths that wrap a 32-bit sum change nothing. */
static void test_post_refuses(void)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_sge sg[5];
	struct vq_pair p;
	struct ibv_wc wc;

	vl_pair(&p, NULL);
	CHECK_OK(ibv_query_qp(p.qp[0], &qa, IBV_QP_CAP, &qi));
	for (int i = 0; i < 5; i++)
		sg[i] = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 8, .lkey = p.mr[0]->lkey};
	wr = (struct ibv_send_wr){.wr_id = 1, .sg_list = sg, .num_sge = (int)qi.cap.max_send_sge + 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED};
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1];
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK(qi.cap.max_send_sge == 4);
	CHECK(ibv_post_send(p.qp[0], &wr, &bad) == ENOMEM && bad == &wr);
	/* Inline: 16 bytes then one that wraps the sum to 5 (within max_inline_data if it wrapped). */
	sg[0].length = 16;
	sg[1].length = 0xfffffff5u;
	wr.num_sge = 2;
	wr.send_flags |= IBV_SEND_INLINE;
	bad = NULL;
	CHECK(ibv_post_send(p.qp[0], &wr, &bad) == ENOMEM && bad == &wr);
	sg[1].length = qi.cap.max_inline_data;
	bad = NULL;
	CHECK(ibv_post_send(p.qp[0], &wr, &bad) == ENOMEM && bad == &wr);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	CHECK(vl_untouched(p.buf[1], VL_LEN));
}

#define VL_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ)

/* The ibv_wr_* builders: the same lengths, the same outcomes. */
static void test_wr_builders(void)
{
	struct ibv_qp_init_attr_ex ax = {.qp_type = IBV_QPT_RC,
					 .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					 .send_ops_flags = VL_OPS,
					 .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 1,
						 .max_inline_data = 32}};
	struct ibv_qp_init_attr qi;
	struct ibv_data_buf db[2];
	struct ibv_qp_attr qa;
	struct ibv_sge sg[3];
	struct ibv_qp_ex *x;
	struct vq_pair p;
	struct ibv_wc wc;

	vl_pair(&p, &ax);
	x = ibv_qp_to_qp_ex(p.qp[0]);
	CHECK(x != NULL);
	/* More entries than max_send_sge, inline beyond max_inline_data, inline lengths whose sum wraps: ENOMEM. */
	for (int i = 0; i < 3; i++)
		sg[i] = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 8, .lkey = p.mr[0]->lkey};
	ibv_wr_start(x);
	x->wr_id = 1;
	ibv_wr_rdma_write(x, p.mr[1]->rkey, (uintptr_t)p.buf[1]);
	ibv_wr_set_sge_list(x, 3, sg);
	CHECK(ibv_wr_complete(x) == ENOMEM);
	db[0] = (struct ibv_data_buf){.addr = p.buf[0], .length = 16};
	db[1] = (struct ibv_data_buf){.addr = p.buf[0], .length = SIZE_MAX - 7};
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, p.mr[1]->rkey, (uintptr_t)p.buf[1]);
	ibv_wr_set_inline_data_list(x, 2, db);
	CHECK(ibv_wr_complete(x) == ENOMEM);
	CHECK_OK(ibv_query_qp(p.qp[0], &qa, IBV_QP_CAP, &qi));
	CHECK(qi.cap.max_inline_data >= 32 && qi.cap.max_inline_data < VL_LEN);
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, p.mr[1]->rkey, (uintptr_t)p.buf[1]);
	ibv_wr_set_inline_data(x, p.buf[0], qi.cap.max_inline_data + 1);
	CHECK(ibv_wr_complete(x) == ENOMEM);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	/* A 2 GiB entry is posted and fails on the device. */
	CHECK_OK(vl_recv(p.qp[1], 9, p.buf[1], VL_LEN, p.mr[1]->lkey));
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, p.mr[0]->lkey, (uintptr_t)p.buf[0], 0x80000000u);
	CHECK_OK(ibv_wr_complete(x));
	vl_fails(&p, IBV_WC_LOC_LEN_ERR);
}

static uint64_t vl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Rings a WQE the caller wrote at pi and waits for its CQE (hang guard); NULL when none came. */
static struct mlx5_cqe64 *vl_raw_ring(struct mlx5dv_qp *dq, struct mlx5dv_cq *dcq, uint32_t *pi, uint32_t nbb,
				      uint32_t *ci)
{
	const uint64_t *ctrl = (const void *)((uint8_t *)dq->sq.buf + (size_t)(*pi & (dq->sq.wqe_cnt - 1)) * dq->sq.stride);
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)dcq->buf + (*ci & (dcq->cqe_cnt - 1));
	uint64_t lost_at;

	*pi += nbb;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dq->dbrec[MLX5_SND_DBR] = htobe32(*pi & 0xffff);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile uint64_t *)dq->bf.reg = *ctrl;
	lost_at = vl_now() + VL_LOST_NS;
	while (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_INVALID || mlx5dv_get_cqe_owner(cqe) != ((*ci / dcq->cqe_cnt) & 1)) {
		if (vl_now() > lost_at)
			return NULL;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	(*ci)++;
	dcq->dbrec[0] = htobe32(*ci & 0xffffff);
	return cqe;
}

/* What a program writing WQEs itself gets: the card's syndromes in the error CQE. */
static void vl_raw_case(uint32_t byte_count, uint8_t ds, uint8_t synd)
{
	struct vq_pair p;
	struct mlx5dv_qp dq = {0};
	struct mlx5dv_cq dcq = {0};
	struct mlx5dv_obj obj;
	struct mlx5_cqe64 *cqe;
	uint32_t pi = 0, ci = 0;
	uint8_t *wqe;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_raddr_seg *rs;
	struct mlx5_wqe_data_seg *d;

	vl_pair(&p, NULL);
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = p.qp[0];
	obj.qp.out = &dq;
	obj.cq.in = p.cq[0];
	obj.cq.out = &dcq;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ));
	wqe = dq.sq.buf;
	ctrl = (void *)wqe;
	rs = (void *)(ctrl + 1);
	d = (void *)(rs + 1);
	mlx5dv_set_ctrl_seg(ctrl, 0, MLX5_OPCODE_RDMA_WRITE, 0, p.qp[0]->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, ds, 0, 0);
	rs->raddr = htobe64((uintptr_t)p.buf[1]);
	rs->rkey = htobe32(p.mr[1]->rkey);
	rs->reserved = 0;
	mlx5dv_set_data_seg(d, byte_count, p.mr[0]->lkey, (uintptr_t)p.buf[0]);
	cqe = vl_raw_ring(&dq, &dcq, &pi, 1, &ci);
	CHECK(cqe != NULL);
	CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ_ERR);
	if (((struct mlx5_err_cqe *)(void *)cqe)->syndrome != synd)
		TH_FAIL("syndrome 0x%x, expected 0x%x", ((struct mlx5_err_cqe *)(void *)cqe)->syndrome, synd);
	CHECK(((struct mlx5_err_cqe *)(void *)cqe)->syndrome == synd);
	CHECK(vl_untouched(p.buf[1], VL_LEN));
}

static void test_raw_wqes(void)
{
	/* mlx5dv_set_data_seg of 2 GiB, of more than max_msg_sz. */
	vl_raw_case(0x80000000u, 3, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	vl_raw_case((1u << 30) + 64, 3, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	/* A ds count of 0, and one that stops before the remote address ends. */
	vl_raw_case(64, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	vl_raw_case(64, 1, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	/* An inline segment longer than the WQE that holds it. */
	vl_raw_case(0x80000000u | 200, 3, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
}

/* A receive entry beyond its MR (2 GiB): the responder fails it, nothing lands. */
static void test_recv_2g(void)
{
	struct vq_pair p;
	struct ibv_sge sge;

	vl_pair(&p, NULL);
	CHECK_OK(vl_recv(p.qp[1], 9, p.buf[1], 0x80000000u, p.mr[1]->lkey));
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 64, .lkey = p.mr[0]->lkey};
	CHECK_OK(vl_post(p.qp[0], IBV_WR_SEND, &sge, 1, 0, 0, 0));
	vl_expect(p.cq[0], 1, IBV_WC_REM_OP_ERR);
	vl_expect(p.cq[1], 9, IBV_WC_LOC_PROT_ERR);
	CHECK(vl_untouched(p.buf[1], VL_LEN));
}

/*
 * A receive entry longer than the MR under it, though the message would fit
 * the part inside: the responder checks the whole entry, fails the receive,
 * and nothing lands.
 */
static void test_recv_beyond_mr(void)
{
	struct vq_pair p;
	struct ibv_mr *small;
	struct ibv_sge sge;

	vl_pair(&p, NULL);
	small = vq_mr(p.pd, p.buf[1], 1024, VQ_ACCESS_ALL);
	CHECK(small != NULL);
	CHECK_OK(vl_recv(p.qp[1], 9, p.buf[1], 4096, small->lkey));
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 64, .lkey = p.mr[0]->lkey};
	CHECK_OK(vl_post(p.qp[0], IBV_WR_SEND, &sge, 1, 0, 0, 0));
	vl_expect(p.cq[0], 1, IBV_WC_REM_OP_ERR);
	vl_expect(p.cq[1], 9, IBV_WC_LOC_PROT_ERR);
	CHECK(vl_untouched(p.buf[1], VL_LEN));
}

int main(void)
{
	RUN(test_sge_2g);
	RUN(test_sge_beyond_max_msg);
	RUN(test_sum_beyond_max_msg);
	RUN(test_read_2g);
	RUN(test_sge_beyond_mr);
	RUN(test_ud_2g);
	RUN(test_recv_beyond_mr);
	RUN(test_post_refuses);
	RUN(test_wr_builders);
	RUN(test_raw_wqes);
	RUN(test_recv_2g);
	return th_summary("test_verbs_lengths");
}
