/*
 * libibverbs.so.1: posting and polling between two RC QPs (and two UD QPs)
 * of one process — RDMA write/read, send/receive with immediate, atomics,
 * inline data, unsignaled work — and the errors as the card reports them:
 * RNR retries exceeded, remote access, bad local key, use after
 * deregistration, flush of later work, and post_send/post_recv's errno.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define VP_LEN 65536

static uint8_t vp_mem[2][VP_LEN] __attribute__((aligned(4096)));

static void vp_pair(struct vq_pair *p, uint8_t min_rnr_timer, uint8_t rnr_retry)
{
	memset(p, 0, sizeof(*p));
	p->c = vf_open();
	CHECK(p->c != NULL);
	p->pd = vf_pd(p->c);
	CHECK(p->pd != NULL);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = vq_cq(p->c, 64);
		CHECK(p->cq[i] != NULL);
		p->buf[i] = vp_mem[i];
		memset(p->buf[i], 0, VP_LEN);
		p->mr[i] = vq_mr(p->pd, p->buf[i], VP_LEN, VQ_ACCESS_ALL);
		CHECK(p->mr[i] != NULL);
	}
	for (int i = 0; i < 2; i++) {
		p->qp[i] = vq_qp(p->pd, IBV_QPT_RC, p->cq[i], p->cq[i], 16);
		CHECK(p->qp[i] != NULL);
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(p->qp[i], p->qp[1 - i]->qp_num, min_rnr_timer, rnr_retry));
}

static int vp_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, void *laddr, uint32_t len, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, unsigned int flags)
{
	struct ibv_sge sge = {.addr = (uintptr_t)laddr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = flags | IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int vp_recv(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static void vp_expect(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	memset(&wc, 0xee, sizeof(wc));
	CHECK(vq_poll1(cq, &wc) == 1);
	if (wc.wr_id != id || wc.status != st)
		TH_FAIL("wr_id %llu status %s, expected %llu %s", (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), (unsigned long long)id, ibv_wc_status_str(st));
	CHECK(wc.wr_id == id && wc.status == st);
	if (st == IBV_WC_SUCCESS)
		CHECK(wc.opcode == op);
}

/* Random writes and reads of random sizes and offsets, bytes compared each time. */
static void test_write_read_loop(void)
{
	struct vq_pair p;

	vp_pair(&p, 0, 0);
	srand(7);
	for (int i = 0; i < 500; i++) {
		uint32_t len = 1 + (uint32_t)rand() % 4096, so = (uint32_t)rand() % 16384, doff = (uint32_t)rand() % 16384;
		bool inl = len <= 64 && (i & 1);

		for (uint32_t k = 0; k < len; k++)
			p.buf[0][so + k] = (uint8_t)rand();
		CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, (uint64_t)i, p.buf[0] + so, len, p.mr[0]->lkey,
				 (uintptr_t)p.buf[1] + doff, p.mr[1]->rkey, inl ? IBV_SEND_INLINE : 0));
		vp_expect(p.cq[0], (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		CHECK(memcmp(p.buf[1] + doff, p.buf[0] + so, len) == 0);
		/* Read it back into the second half. */
		CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_READ, 1000u + (uint64_t)i, p.buf[0] + 32768, len, p.mr[0]->lkey,
				 (uintptr_t)p.buf[1] + doff, p.mr[1]->rkey, 0));
		{
			struct ibv_wc wc;

			CHECK(vq_poll1(p.cq[0], &wc) == 1);
			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == len);
			CHECK(wc.wr_id == 1000u + (uint64_t)i && wc.qp_num == p.qp[0]->qp_num);
		}
		CHECK(memcmp(p.buf[0] + 32768, p.buf[1] + doff, len) == 0);
	}
	CHECK(ibv_poll_cq(p.cq[1], 1, &(struct ibv_wc){0}) == 0); /* the responder saw nothing */
}

static void test_send_recv(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct vq_pair p;
	struct ibv_wc wc;

	vp_pair(&p, 0, 0);
	for (int i = 0; i < 100; i++) {
		uint32_t len = 1 + (uint32_t)i * 37;

		memset(p.buf[0], 'a' + i % 26, len);
		CHECK_OK(vp_recv(p.qp[1], 500u + (uint64_t)i, p.buf[1], 8192, p.mr[1]->lkey));
		sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = len, .lkey = p.mr[0]->lkey};
		wr = (struct ibv_send_wr){.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					  .opcode = (i & 1) ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0xabc00000u + (uint32_t)i)};
		CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
		vp_expect(p.cq[0], (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_SEND);
		CHECK(vq_poll1(p.cq[1], &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 500u + (uint64_t)i);
		CHECK(wc.byte_len == len && wc.qp_num == p.qp[1]->qp_num);
		if (i & 1)
			CHECK(wc.wc_flags == IBV_WC_WITH_IMM && wc.imm_data == htobe32(0xabc00000u + (uint32_t)i));
		else
			CHECK(wc.wc_flags == 0);
		CHECK(memcmp(p.buf[1], p.buf[0], len) == 0);
	}
}

static void test_write_imm(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct vq_pair p;
	struct ibv_wc wc;

	vp_pair(&p, 0, 0);
	memcpy(p.buf[0], "immediate", 9);
	CHECK_OK(vp_recv(p.qp[1], 77, NULL, 0, 0));
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 9, .lkey = p.mr[0]->lkey};
	wr = (struct ibv_send_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(42)};
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 100;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
	vp_expect(p.cq[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(vq_poll1(p.cq[1], &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 77);
	CHECK(wc.wc_flags == IBV_WC_WITH_IMM && wc.imm_data == htobe32(42) && wc.byte_len == 9);
	CHECK(memcmp(p.buf[1] + 100, "immediate", 9) == 0);
}

static void test_atomics(void)
{
	struct ibv_send_wr wr, *bad;
	uint64_t *target, *old;
	struct ibv_sge sge;
	struct vq_pair p;
	struct ibv_wc wc;

	vp_pair(&p, 0, 0);
	target = (uint64_t *)(void *)(p.buf[1] + 64);
	old = (uint64_t *)(void *)p.buf[0];
	*target = 10;
	for (int i = 0; i < 50; i++) {
		sge = (struct ibv_sge){.addr = (uintptr_t)old, .length = 8, .lkey = p.mr[0]->lkey};
		wr = (struct ibv_send_wr){.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED};
		wr.wr.atomic.remote_addr = (uintptr_t)target;
		wr.wr.atomic.rkey = p.mr[1]->rkey;
		wr.wr.atomic.compare_add = 3;
		CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
		CHECK(vq_poll1(p.cq[0], &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD && wc.byte_len == 8);
		CHECK(*old == 10u + 3u * (uint64_t)i && *target == 13u + 3u * (uint64_t)i);
	}
	/* Compare and swap: a miss leaves memory alone, a hit swaps; both return the old value. */
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 99;
	CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
	CHECK(vq_poll1(p.cq[0], &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_COMP_SWAP);
	CHECK(*old == 160 && *target == 160);
	wr.wr.atomic.compare_add = 160;
	CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
	CHECK(vq_poll1(p.cq[0], &wc) == 1);
	CHECK(*old == 160 && *target == 99);
}

/* Unsignaled work makes no completion; a signaled one after it releases its room too. */
static void test_unsignaled(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr[4], *bad;
	struct vq_pair p;
	struct ibv_wc wc[4];

	vp_pair(&p, 0, 0);
	memset(p.buf[0], 5, 64);
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 64, .lkey = p.mr[0]->lkey};
	for (int i = 0; i < 4; i++) {
		wr[i] = (struct ibv_send_wr){.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					     .opcode = IBV_WR_RDMA_WRITE, .next = i < 3 ? &wr[i + 1] : NULL};
		wr[i].wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 64u * (uint64_t)i;
		wr[i].wr.rdma.rkey = p.mr[1]->rkey;
	}
	wr[3].send_flags = IBV_SEND_SIGNALED;
	for (int round = 0; round < 40; round++) {
		CHECK_OK(ibv_post_send(p.qp[0], wr, &bad));
		CHECK(ibv_poll_cq(p.cq[0], 4, wc) == 1);
		CHECK(wc[0].wr_id == 3 && wc[0].status == IBV_WC_SUCCESS);
	}
	for (int i = 0; i < 256; i++)
		CHECK(p.buf[1][i] == 5);
}

/* A SEND with no receive: no retries (rnr_retry 0) fails at once; later work is flushed. */
static void test_rnr_retry_exc(void)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct vq_pair p;

	vp_pair(&p, 1, 0);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_SEND, 1, p.buf[0], 8, p.mr[0]->lkey, 0, 0, 0));
	vp_expect(p.cq[0], 1, IBV_WC_RNR_RETRY_EXC_ERR, 0);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 2, p.buf[0], 8, p.mr[0]->lkey, (uintptr_t)p.buf[1],
			 p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 2, IBV_WC_WR_FLUSH_ERR, 0);
	CHECK_OK(ibv_query_qp(p.qp[0], &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == IBV_QPS_ERR && p.qp[0]->state == IBV_QPS_ERR);
	/* Receives posted to a QP in error come back flushed. */
	CHECK_OK(vp_recv(p.qp[0], 3, p.buf[0], 64, p.mr[0]->lkey));
	vp_expect(p.cq[0], 3, IBV_WC_WR_FLUSH_ERR, 0);
}

/* With retries, the requester waits out the responder's RNR timer; the poll drives the retries. */
static void test_rnr_retries_then_receive(void)
{
	struct vq_pair p;
	struct ibv_wc wc;

	vp_pair(&p, 1, 3); /* 10 us timer, 3 retries */
	CHECK_OK(vp_post(p.qp[0], IBV_WR_SEND, 1, p.buf[0], 8, p.mr[0]->lkey, 0, 0, 0));
	vp_expect(p.cq[0], 1, IBV_WC_RNR_RETRY_EXC_ERR, 0);
	/* Infinite retries: a receive posted later completes the send. */
	vp_pair(&p, 1, 7);
	memcpy(p.buf[0], "late", 4);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_SEND, 2, p.buf[0], 4, p.mr[0]->lkey, 0, 0, 0));
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	CHECK_OK(vp_recv(p.qp[1], 9, p.buf[1], 64, p.mr[1]->lkey));
	vp_expect(p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	vp_expect(p.cq[1], 9, IBV_WC_SUCCESS, IBV_WC_RECV);
	CHECK(memcmp(p.buf[1], "late", 4) == 0);
}

/* Polls cq for one completion for up to 5 s of elapsed time (a bound for waits the device times itself). */
static int vp_poll_timed(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(cq, 1, wc);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (n == 0 && t.tv_sec - t0.tv_sec < 5);
	return n;
}

/*
 * A request to a peer that has not reached RTR yet is dropped and sent again,
 * as a card's requester retransmits: the peer moving to RTR meanwhile takes
 * it; a peer left in INIT ends it in RETRY_EXC_ERR (after the retries).
 */
static void test_peer_not_ready_yet(void)
{
	struct ibv_wc wc;
	struct vq_pair p;

	for (int late = 1; late >= 0; late--) {
		vp_pair(&p, 0, 0);
		CHECK_OK(ibv_modify_qp(p.qp[1], &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET }, IBV_QP_STATE));
		CHECK_OK(vq_to_init(p.qp[1]));
		memcpy(p.buf[0], "early bird", 10);
		CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 1, p.buf[0], 10, p.mr[0]->lkey, (uintptr_t)p.buf[1],
				 p.mr[1]->rkey, 0));
		CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0); /* not answered, not failed */
		CHECK(memcmp(p.buf[1], "early bird", 10) != 0);
		if (late) {
			CHECK_OK(vq_to_rtr(p.qp[1], p.qp[0]->qp_num, 0));
			CHECK(vp_poll_timed(p.cq[0], &wc) == 1);
			CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE);
			CHECK(memcmp(p.buf[1], "early bird", 10) == 0);
		} else {
			CHECK(vp_poll_timed(p.cq[0], &wc) == 1);
			CHECK(wc.wr_id == 1 && wc.status == IBV_WC_RETRY_EXC_ERR);
			CHECK(memcmp(p.buf[1], "early bird", 10) != 0);
		}
	}
}

/* A remote key without the right: REM_ACCESS_ERR, memory untouched, later work flushed. */
static void test_remote_access_error(void)
{
	struct ibv_mr *ro;
	struct vq_pair p;

	vp_pair(&p, 0, 0);
	ro = vq_mr(p.pd, p.buf[1] + 8192, 4096, IBV_ACCESS_REMOTE_READ);
	CHECK(ro != NULL);
	memset(p.buf[0], 0x5a, 64);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 1, p.buf[0], 64, p.mr[0]->lkey, (uintptr_t)p.buf[1] + 8192,
			 ro->rkey, 0));
	vp_expect(p.cq[0], 1, IBV_WC_REM_ACCESS_ERR, 0);
	for (int i = 0; i < 64; i++)
		CHECK(p.buf[1][8192 + i] == 0);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 2, p.buf[0], 64, p.mr[0]->lkey, (uintptr_t)p.buf[1],
			 p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 2, IBV_WC_WR_FLUSH_ERR, 0);
	CHECK(p.buf[1][0] == 0);
	/* Beyond the registration is an access error too. */
	vp_pair(&p, 0, 0);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_READ, 3, p.buf[0], 64, p.mr[0]->lkey,
			 (uintptr_t)p.buf[1] + VP_LEN - 32, p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 3, IBV_WC_REM_ACCESS_ERR, 0);
}

/* A key of a domain of its own on p's context, registered over len bytes at buf. */
static void vp_other_pd_mr(struct vq_pair *p, struct ibv_pd **pd, struct ibv_mr **mr, void *buf, size_t len)
{
	*pd = ibv_alloc_pd(p->c);
	CHECK(*pd != NULL);
	*mr = ibv_reg_mr(*pd, buf, len, VQ_ACCESS_ALL);
	CHECK(*mr != NULL);
}

static void vp_drop_other(struct ibv_pd *pd, struct ibv_mr *mr)
{
	CHECK_OK(ibv_dereg_mr(mr));
	CHECK_OK(ibv_dealloc_pd(pd));
}

/*
 * Keys a WRITE or READ of one entry, or of inline data, may not use: the
 * completion is the card's error and no byte moves, whether the key lacks
 * the right, belongs to another domain or names less memory.
 */
static void test_key_refusals(void)
{
	struct ibv_mr *ro, *other, *nolw;
	struct ibv_pd *pd2;
	struct vq_pair p;

	/* Inline data to a key without REMOTE_WRITE. */
	vp_pair(&p, 0, 0);
	ro = vq_mr(p.pd, p.buf[1] + 8192, 4096, IBV_ACCESS_REMOTE_READ);
	CHECK(ro != NULL);
	memset(p.buf[0], 0x6b, 128);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 1, p.buf[0], 32, 0, (uintptr_t)p.buf[1] + 8192, ro->rkey,
			 IBV_SEND_INLINE));
	vp_expect(p.cq[0], 1, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(p.buf[1][8192] == 0 && p.buf[1][8192 + 31] == 0);
	/* An rkey of another protection domain than the responder's QP. */
	vp_pair(&p, 0, 0);
	vp_other_pd_mr(&p, &pd2, &other, p.buf[1] + 16384, 4096);
	memset(p.buf[0], 0x6b, 128);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 2, p.buf[0], 64, p.mr[0]->lkey, (uintptr_t)p.buf[1] + 16384,
			 other->rkey, 0));
	vp_expect(p.cq[0], 2, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(p.buf[1][16384] == 0 && p.buf[1][16384 + 63] == 0);
	vp_drop_other(pd2, other);
	/* An lkey of another domain than the requester's. */
	vp_pair(&p, 0, 0);
	vp_other_pd_mr(&p, &pd2, &other, p.buf[0] + 16384, 4096);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 3, p.buf[0] + 16384, 64, other->lkey, (uintptr_t)p.buf[1],
			 p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 3, IBV_WC_LOC_PROT_ERR, 0);
	vp_drop_other(pd2, other);
	/* A READ into memory registered in the requester's domain without LOCAL_WRITE. */
	vp_pair(&p, 0, 0);
	nolw = vq_mr(p.pd, p.buf[0] + 16384, 4096, 0);
	CHECK(nolw != NULL);
	memset(p.buf[0] + 16384, 0x6b, 64);
	memset(p.buf[1], 0x3c, 64);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_READ, 4, p.buf[0] + 16384, 64, nolw->lkey, (uintptr_t)p.buf[1],
			 p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 4, IBV_WC_LOC_PROT_ERR, 0);
	CHECK(p.buf[0][16384] == 0x6b && p.buf[0][16384 + 63] == 0x6b);
	/* A WRITE one byte past the remote registration. */
	vp_pair(&p, 0, 0);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 5, p.buf[0], 64, p.mr[0]->lkey,
			 (uintptr_t)p.buf[1] + VP_LEN - 63, p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 5, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(p.buf[1][VP_LEN - 63] == 0);
}

static void test_bad_lkey(void)
{
	struct vq_pair p;

	vp_pair(&p, 0, 0);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 1, p.buf[0], 64, p.mr[0]->lkey ^ 0x5500, (uintptr_t)p.buf[1],
			 p.mr[1]->rkey, 0));
	vp_expect(p.cq[0], 1, IBV_WC_LOC_PROT_ERR, 0);
}

/* A key deregistered is gone: the peer's access fails, nothing lands. */
static void test_use_after_dereg(void)
{
	struct ibv_mr *mr;
	struct vq_pair p;
	uint32_t rkey;

	vp_pair(&p, 0, 0);
	mr = ibv_reg_mr(p.pd, p.buf[1] + 4096, 4096, VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	rkey = mr->rkey;
	CHECK_OK(ibv_dereg_mr(mr));
	memset(p.buf[0], 1, 64);
	CHECK_OK(vp_post(p.qp[0], IBV_WR_RDMA_WRITE, 1, p.buf[0], 64, p.mr[0]->lkey, (uintptr_t)p.buf[1] + 4096,
			 rkey, 0));
	vp_expect(p.cq[0], 1, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(p.buf[1][4096] == 0);
}

/* post_send and post_recv refuse as mlx5 does: errno, *bad_wr, the earlier requests posted. */
static void test_post_errors(void)
{
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_recv_wr rw, *rbad = NULL;
	struct ibv_sge sge[8];
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct vq_pair p;
	struct ibv_wc wc;
	int posted = 0;

	vp_pair(&p, 0, 0);
	CHECK_OK(ibv_query_qp(p.qp[0], &qa, IBV_QP_CAP, &qi));
	for (int i = 0; i < 8; i++)
		sge[i] = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 8, .lkey = p.mr[0]->lkey};
	wr[0] = (struct ibv_send_wr){.wr_id = 1, .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				     .send_flags = IBV_SEND_SIGNALED, .next = &wr[1]};
	wr[0].wr.rdma.remote_addr = (uintptr_t)p.buf[1];
	wr[0].wr.rdma.rkey = p.mr[1]->rkey;
	wr[1] = wr[0];
	wr[1].next = NULL;
	wr[1].wr_id = 2;
	wr[1].opcode = (enum ibv_wr_opcode)77;
	CHECK(ibv_post_send(p.qp[0], wr, &bad) == EINVAL && bad == &wr[1]);
	vp_expect(p.cq[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE); /* the first one went */
	wr[1].opcode = IBV_WR_BIND_MW;
	CHECK(ibv_post_send(p.qp[0], &wr[1], &bad) == EINVAL && bad == &wr[1]);
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].num_sge = (int)qi.cap.max_send_sge + 1;
	CHECK(ibv_post_send(p.qp[0], &wr[1], &bad) == ENOMEM && bad == &wr[1]);
	wr[1].num_sge = 1;
	sge[0].length = qi.cap.max_inline_data + 1;
	wr[1].send_flags = IBV_SEND_INLINE;
	CHECK(ibv_post_send(p.qp[0], &wr[1], &bad) == ENOMEM && bad == &wr[1]);
	sge[0].length = 8;
	/* Unsignaled work keeps its room until a completion: the queue fills. */
	wr[1].send_flags = 0;
	while (ibv_post_send(p.qp[0], &wr[1], &bad) == 0)
		posted++;
	CHECK(posted == (int)qi.cap.max_send_wr && bad == &wr[1]);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	/* Receives: too many scatter entries, then a full queue. */
	rw = (struct ibv_recv_wr){.wr_id = 5, .sg_list = sge, .num_sge = (int)qi.cap.max_recv_sge + 1};
	CHECK(ibv_post_recv(p.qp[1], &rw, &rbad) == EINVAL && rbad == &rw);
	rw.num_sge = 1;
	posted = 0;
	while (ibv_post_recv(p.qp[1], &rw, &rbad) == 0)
		posted++;
	CHECK(posted == (int)qi.cap.max_recv_wr && rbad == &rw);
}

/* UD: two QPs, an address handle, the GRH area ahead of the payload. */
static void test_ud(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_ah_attr aa = {.dlid = 1, .port_num = 1, .is_global = 1, .grh = {.hop_limit = 64}};
	struct ibv_send_wr wr, *bad;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	cq = vq_cq(c, 16);
	CHECK(cq != NULL);
	mr = vq_mr(pd, vp_mem[0], VP_LEN, VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	a = vq_qp(pd, IBV_QPT_UD, cq, cq, 8);
	b = vq_qp(pd, IBV_QPT_UD, cq, cq, 8);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, 0, 0, 0));
	CHECK_OK(vq_up(b, 0, 0, 0));
	CHECK_OK(ibv_query_gid(c, 1, 0, &aa.grh.dgid)); /* RoCE: the port is reached by its GID */
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	memset(vp_mem[0], 0, 4096);
	memcpy(vp_mem[0], "datagram", 8);
	CHECK_OK(vp_recv(b, 3, vp_mem[0] + 1024, 1024, mr->lkey));
	sge = (struct ibv_sge){.addr = (uintptr_t)vp_mem[0], .length = 8, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 4, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(7)};
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	/* The receiver's completion is written as the datagram lands, before the sender's. */
	CHECK(vq_poll1(cq, &wc) == 1);
	CHECK(wc.wr_id == 3 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV);
	CHECK(wc.byte_len == 8 + 40 && wc.src_qp == a->qp_num && wc.qp_num == b->qp_num);
	CHECK(wc.wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM) && wc.imm_data == htobe32(7));
	CHECK(memcmp(vp_mem[0] + 1024 + 40, "datagram", 8) == 0);
	CHECK(vq_poll1(cq, &wc) == 1);
	CHECK(wc.wr_id == 4 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
	/* A wrong qkey drops the datagram: the sender completes, the receiver gets nothing. */
	wr.wr.ud.remote_qkey = 0x22222222;
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 4);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
	/* A UD request without an address handle is refused. */
	wr.wr.ud.ah = NULL;
	CHECK(ibv_post_send(a, &wr, &bad) == EINVAL && bad == &wr);
	CHECK(ibv_create_ah(NULL, &aa) == NULL && errno == EINVAL);
	aa.port_num = 2;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EINVAL);
	CHECK(ibv_destroy_ah(NULL) == EINVAL);
}

/* Work posted before RTS waits in the ring and runs at the modify to RTS. */
static void test_post_before_rts(void)
{
	struct vq_pair p;
	struct ibv_wc wc;

	vp_pair(&p, 0, 0);
	/* A fresh QP in INIT connected to qp[1]. */
	{
		struct ibv_qp *q = vq_qp(p.pd, IBV_QPT_RC, p.cq[0], p.cq[0], 4);

		CHECK(q != NULL);
		CHECK_OK(vq_to_init(q));
		memset(p.buf[0], 9, 16);
		CHECK_OK(vp_post(q, IBV_WR_RDMA_WRITE, 5, p.buf[0], 16, p.mr[0]->lkey, (uintptr_t)p.buf[1] + 512,
				 p.mr[1]->rkey, 0));
		CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0 && p.buf[1][512] == 0);
		CHECK_OK(vq_to_rtr(q, p.qp[1]->qp_num, 0));
		CHECK_OK(vq_to_rts(q, 0));
		vp_expect(p.cq[0], 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		CHECK(p.buf[1][512] == 9 && p.buf[1][527] == 9);
	}
}

/* An extended RC QP of p's domain on cq, with the SEND and RDMA_WRITE builders. */
static struct ibv_qp *vp_qp_ex(struct vq_pair *p, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = p->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(p->c, &a);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

/* One RDMA_WRITE through ibv_wr_*: what ibv_wr_complete returns. */
static int vp_wr_write(struct ibv_qp *qp, struct vq_pair *p)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(x);
	x->wr_id = 7;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, p->mr[1]->rkey, (uintptr_t)p->buf[1] + 1024);
	ibv_wr_set_sge(x, p->mr[0]->lkey, (uintptr_t)p->buf[0], 16);
	return ibv_wr_complete(x);
}

/*
 * A QP in RESET (made so, or moved back there from RTS) takes no work, as
 * mlx5's provider refuses it: ibv_post_send ENOMEM, ibv_post_recv EINVAL
 * (*bad_wr the first request), ibv_wr_complete EINVAL; nothing runs.
 */
static void test_post_in_reset(void)
{
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_RESET};
	struct ibv_send_wr *bad = NULL;
	struct ibv_recv_wr *rbad = NULL;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct ibv_recv_wr rw;
	struct vq_pair p;
	struct ibv_wc wc;
	struct ibv_qp *q;

	vp_pair(&p, 0, 0);
	memset(p.buf[0], 3, 64);
	sge = (struct ibv_sge){.addr = (uintptr_t)p.buf[0], .length = 16, .lkey = p.mr[0]->lkey};
	wr = (struct ibv_send_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED};
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 1024;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	rw = (struct ibv_recv_wr){.wr_id = 2, .sg_list = &sge, .num_sge = 1};
	q = vq_qp(p.pd, IBV_QPT_RC, p.cq[0], p.cq[0], 4);
	CHECK(q != NULL && q->state == IBV_QPS_RESET);
	CHECK(ibv_post_send(q, &wr, &bad) == ENOMEM && bad == &wr);
	CHECK(ibv_post_recv(q, &rw, &rbad) == EINVAL && rbad == &rw);
	/* From RTS back to RESET. */
	CHECK_OK(ibv_modify_qp(p.qp[0], &qa, IBV_QP_STATE));
	bad = NULL;
	rbad = NULL;
	CHECK(ibv_post_send(p.qp[0], &wr, &bad) == ENOMEM && bad == &wr);
	CHECK(ibv_post_recv(p.qp[0], &rw, &rbad) == EINVAL && rbad == &rw);
	/* An empty list is no request: nothing to refuse. */
	CHECK(ibv_post_send(p.qp[0], NULL, &bad) == 0);
	CHECK(ibv_post_recv(p.qp[0], NULL, &rbad) == 0);
	/* ibv_wr_*: the session is rolled back; in RTS the same session runs. */
	q = vp_qp_ex(&p, p.cq[0]);
	CHECK(q != NULL);
	CHECK(vp_wr_write(q, &p) == EINVAL);
	CHECK_OK(vq_up(q, p.qp[1]->qp_num, 0, 0));
	CHECK_OK(vp_wr_write(q, &p));
	vp_expect(p.cq[0], 7, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(memcmp(p.buf[1] + 1024, p.buf[0], 16) == 0);
	memset(p.buf[1] + 1024, 0, 16);
	CHECK_OK(ibv_modify_qp(q, &qa, IBV_QP_STATE));
	CHECK(vp_wr_write(q, &p) == EINVAL);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	CHECK(p.buf[1][1024] == 0);
}

/* p's QPs again, each brought up with these QP access flags (the MRs keep every right). */
static void vp_pair_access(struct vq_pair *p, unsigned int access)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access};

	for (int i = 0; i < 2; i++) {
		p->qp[i] = vq_qp(p->pd, IBV_QPT_RC, p->cq[i], p->cq[i], 16);
		CHECK(p->qp[i] != NULL);
		CHECK_OK(ibv_modify_qp(p->qp[i], &a,
				       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	}
	for (int i = 0; i < 2; i++) {
		CHECK_OK(vq_to_rtr(p->qp[i], p->qp[1 - i]->qp_num, 0));
		CHECK_OK(vq_to_rts(p->qp[i], 0));
	}
}

static int vp_atomic(struct vq_pair *p, enum ibv_wr_opcode op, uint64_t id, uint64_t *target)
{
	struct ibv_sge sge = {.addr = (uintptr_t)p->buf[0], .length = 8, .lkey = p->mr[0]->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;

	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = p->mr[1]->rkey;
	wr.wr.atomic.compare_add = 5;
	wr.wr.atomic.swap = 6;
	return ibv_post_send(p->qp[0], &wr, &bad);
}

/*
 * The responder QP's access flags govern atomics (IB: a QP without remote
 * atomic enabled answers an atomic with an invalid-request NAK): without
 * IBV_ACCESS_REMOTE_ATOMIC, FETCH_ADD and CMP_SWP complete with
 * IBV_WC_REM_INV_REQ_ERR though the key allows them, memory untouched, the
 * requester in ERR; with it they succeed.
 */
static void test_atomic_qp_access(void)
{
	static const unsigned int without[] = {IBV_ACCESS_LOCAL_WRITE,
					       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						       IBV_ACCESS_REMOTE_READ};
	static const enum ibv_wr_opcode ops[] = {IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	uint64_t *target;
	struct vq_pair p;

	vp_pair(&p, 0, 0);
	target = (uint64_t *)(void *)(p.buf[1] + 64);
	for (size_t i = 0; i < 2; i++) {
		for (size_t o = 0; o < 2; o++) {
			vp_pair_access(&p, without[i]);
			*target = 5;
			memset(p.buf[0], 0xa5, 8);
			CHECK_OK(vp_atomic(&p, ops[o], 10 + o, target));
			vp_expect(p.cq[0], 10 + o, IBV_WC_REM_INV_REQ_ERR, 0);
			CHECK(*target == 5 && p.buf[0][0] == 0xa5 && p.buf[0][7] == 0xa5);
			CHECK_OK(ibv_query_qp(p.qp[0], &qa, IBV_QP_STATE, &qi));
			CHECK(qa.qp_state == IBV_QPS_ERR);
		}
	}
	vp_pair_access(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	*target = 5;
	CHECK_OK(vp_atomic(&p, IBV_WR_ATOMIC_CMP_AND_SWP, 20, target));
	vp_expect(p.cq[0], 20, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	CHECK(*target == 6);
	CHECK_OK(vp_atomic(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, 21, target));
	vp_expect(p.cq[0], 21, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	CHECK(*target == 11);
}

int main(void)
{
	RUN(test_write_read_loop);
	RUN(test_send_recv);
	RUN(test_write_imm);
	RUN(test_atomics);
	RUN(test_unsignaled);
	RUN(test_rnr_retry_exc);
	RUN(test_rnr_retries_then_receive);
	RUN(test_peer_not_ready_yet);
	RUN(test_remote_access_error);
	RUN(test_bad_lkey);
	RUN(test_key_refusals);
	RUN(test_use_after_dereg);
	RUN(test_post_errors);
	RUN(test_ud);
	RUN(test_post_before_rts);
	RUN(test_post_in_reset);
	RUN(test_atomic_qp_access);
	return th_summary("test_verbs_post");
}
