/*
 * ibv_rereg_mr (ibv_rereg_mr(3), rdma-core v44): rdma-core's checks of the
 * arguments (IBV_REREG_MR_ERR_INPUT), the device's (IBV_REREG_MR_ERR_CMD with
 * errno), and each change — rights, domain, range — seen by the QPs that use
 * the MR, with its keys kept. A refused call changes nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define RR_LEN 4096

static uint8_t rr_mem[3][RR_LEN] __attribute__((aligned(4096)));

/* Two connected RC QPs; buffer 0 the source, buffer 1 the target the tests re-register. */
static void rr_pair(struct vq_pair *p)
{
	const struct vq_pair_spec s = { .buf = { rr_mem[0], rr_mem[1] }, .len = RR_LEN, .fill = { 0x11, 0xee },
					.access = { VQ_ACCESS_ALL, VQ_ACCESS_ALL }, .type = IBV_QPT_RC };

	vq_pair_open(p, &s);
	memset(rr_mem[2], 0xdd, RR_LEN);
	vq_pair_up(p);
}

#define RR_NO_COMPLETION (-1) /* the WRITE could not be posted, or nothing completed */

/* A signalled WRITE of 64 bytes from buffer 0 to raddr with rkey; its completion status. */
static int rr_write(struct vq_pair *p, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p->buf[0], .length = 64, .lkey = p->mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->qp[0], &wr, &bad) != 0 || vq_poll1(p->cq[0], &wc) != 1 || wc.wr_id != 7)
		return RR_NO_COMPLETION;
	return (int)wc.status;
}

static bool rr_all(const uint8_t *b, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static void test_rereg_input_refused(void)
{
	struct vq_pair p;
	struct ibv_mr *mr;
	uint32_t lkey, rkey;

	rr_pair(&p);
	mr = p.mr[1];
	lkey = mr->lkey;
	rkey = mr->rkey;
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_FLAGS_SUPPORTED << 1, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, RR_LEN, 0) == IBV_REREG_MR_ERR_INPUT);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, rr_mem[2], 0, 0) == IBV_REREG_MR_ERR_INPUT);
	CHECK(errno == EINVAL);
	errno = 0; /* rights given without the flag that changes them */
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, p.pd, NULL, 0, IBV_ACCESS_LOCAL_WRITE) ==
	      IBV_REREG_MR_ERR_INPUT);
	CHECK(errno == EINVAL);
	/* The device's refusals. */
	errno = 0;
	CHECK(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_CMD);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_CMD);
	CHECK(errno == EINVAL);
	errno = 0; /* remote write without local write */
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE) ==
	      IBV_REREG_MR_ERR_CMD);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED) == IBV_REREG_MR_ERR_CMD);
	CHECK(errno == EINVAL);
	/* Nothing changed: the MR is where it was, with its keys and rights. */
	CHECK(mr->lkey == lkey && mr->rkey == rkey && mr->addr == p.buf[1] && mr->length == RR_LEN && mr->pd == p.pd);
	CHECK(rr_write(&p, (uintptr_t)p.buf[1] + 128, rkey) == IBV_WC_SUCCESS);
	CHECK(rr_all(p.buf[1] + 128, 64, 0x11));
}

static void test_rereg_access(void)
{
	struct vq_pair p;
	uint32_t rkey;

	rr_pair(&p);
	rkey = p.mr[1]->rkey;
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE) == 0);
	CHECK(p.mr[1]->rkey == rkey && p.mr[1]->lkey == rkey);
	CHECK(rr_write(&p, (uintptr_t)p.buf[1], rkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(rr_all(p.buf[1], RR_LEN, 0xee));
	vq_pair_restate(&p);
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) == 0);
	CHECK(rr_write(&p, (uintptr_t)p.buf[1], rkey) == IBV_WC_SUCCESS);
	CHECK(rr_all(p.buf[1], 64, 0x11) && rr_all(p.buf[1] + 64, RR_LEN - 64, 0xee));
}

static void test_rereg_pd(void)
{
	struct vq_pair p;
	struct ibv_pd *other;
	uint32_t rkey;

	rr_pair(&p);
	rkey = p.mr[1]->rkey;
	other = ibv_alloc_pd(p.c);
	CHECK(other != NULL);
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0) == 0);
	CHECK(p.mr[1]->pd == other && p.mr[1]->rkey == rkey);
	/* A domain in use: the PD that now holds the MR cannot go. */
	CHECK(ibv_dealloc_pd(other) == EBUSY);
	CHECK(rr_write(&p, (uintptr_t)p.buf[1], rkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(rr_all(p.buf[1], RR_LEN, 0xee));
	vq_pair_restate(&p);
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_PD, p.pd, NULL, 0, 0) == 0);
	CHECK(rr_write(&p, (uintptr_t)p.buf[1], rkey) == IBV_WC_SUCCESS);
	CHECK(rr_all(p.buf[1], 64, 0x11));
	CHECK_OK(ibv_dealloc_pd(other));
}

static void test_rereg_translation(void)
{
	struct vq_pair p;
	uint32_t rkey;

	rr_pair(&p);
	rkey = p.mr[1]->rkey;
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_TRANSLATION, NULL, rr_mem[2], RR_LEN / 2, 0) == 0);
	CHECK(p.mr[1]->addr == rr_mem[2] && p.mr[1]->length == RR_LEN / 2 && p.mr[1]->rkey == rkey);
	/* The new range takes the WRITE; beyond its end and at the old range it is refused. */
	CHECK(rr_write(&p, (uintptr_t)rr_mem[2] + 64, rkey) == IBV_WC_SUCCESS);
	CHECK(rr_all(rr_mem[2] + 64, 64, 0x11) && rr_all(rr_mem[2], 64, 0xdd) &&
	      rr_all(rr_mem[2] + 128, RR_LEN - 128, 0xdd));
	CHECK(rr_write(&p, (uintptr_t)rr_mem[2] + RR_LEN / 2 - 32, rkey) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	CHECK(rr_write(&p, (uintptr_t)p.buf[1], rkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(rr_all(p.buf[1], RR_LEN, 0xee));
	CHECK(rr_all(rr_mem[2] + RR_LEN / 2 - 32, 32, 0xdd));
}

/* All three at once, and a receive posted with the old range refused as a local protection error. */
static void test_rereg_all_and_recv(void)
{
	struct vq_pair p;
	struct ibv_pd *other;
	struct ibv_sge rs = { .length = 64 }, ss = { .length = 64 };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 }, *rbad = NULL;
	struct ibv_send_wr swr = { .wr_id = 8, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad = NULL;
	struct ibv_wc wc;

	rr_pair(&p);
	other = ibv_alloc_pd(p.c);
	CHECK(other != NULL);
	rs.addr = (uintptr_t)p.buf[1];
	rs.lkey = p.mr[1]->lkey;
	ss.addr = (uintptr_t)p.buf[0];
	ss.lkey = p.mr[0]->lkey;
	CHECK_OK(ibv_post_recv(p.qp[1], &rwr, &rbad));
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_TRANSLATION, NULL, rr_mem[2], RR_LEN, 0) == 0);
	CHECK_OK(ibv_post_send(p.qp[0], &swr, &sbad));
	CHECK(vq_poll1(p.cq[1], &wc) == 1);
	CHECK(wc.wr_id == 9 && wc.status == IBV_WC_LOC_PROT_ERR);
	CHECK(vq_poll1(p.cq[0], &wc) == 1);
	CHECK(wc.wr_id == 8 && wc.status == IBV_WC_REM_OP_ERR);
	CHECK(rr_all(p.buf[1], RR_LEN, 0xee) && rr_all(rr_mem[2], RR_LEN, 0xdd));
	CHECK(ibv_rereg_mr(p.mr[1], IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
			   other, p.buf[1], RR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) == 0);
	CHECK(p.mr[1]->pd == other && p.mr[1]->addr == p.buf[1]);
	/* Re-registered MRs go with their PD as any other. */
	CHECK(th_undefer(vf_dereg_cb, p.mr[1]));
	CHECK_OK(ibv_dereg_mr(p.mr[1]));
	p.mr[1] = NULL;
	CHECK_OK(ibv_dealloc_pd(other));
}

int main(void)
{
	RUN(test_rereg_input_refused);
	RUN(test_rereg_access);
	RUN(test_rereg_pd);
	RUN(test_rereg_translation);
	RUN(test_rereg_all_and_recv);
	return th_summary("test_verbs_rereg");
}
