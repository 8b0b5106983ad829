/*
 * UC QPs (unreliable connected), from the IB specification and
 * ibv_create_qp(3) / ibv_modify_qp(3): created as RC ones are, moved
 * through the kernel's UC attribute table, sending SEND and RDMA WRITE
 * (with immediate) without acknowledgement: a message the responder
 * cannot take — no receive posted, a refused rkey, no such QP — is
 * dropped there while the requester completes as delivered; READ and
 * atomics are not UC operations. Also the QP creation flags.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define UC_LEN 4096

static uint8_t uc_mem[2][UC_LEN] __attribute__((aligned(4096)));

static int uc_rtr(struct ibv_qp *qp, uint32_t dest, int extra)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
				 .min_rnr_timer = 1, .max_dest_rd_atomic = 1,
				 .ah_attr = { .is_global = 1, .grh = { .hop_limit = 1 }, .port_num = 1 } };

	if (ibv_query_gid(qp->context, 1, 0, &a.ah_attr.grh.dgid) != 0)
		return EIO;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     extra);
}

static int uc_rts(struct ibv_qp *qp, int extra)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 0, .timeout = 14, .retry_cnt = 7 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | extra);
}

static int uc_up(struct ibv_qp *qp, uint32_t dest)
{
	int rc = vq_to_init(qp);

	if (rc == 0)
		rc = uc_rtr(qp, dest, 0);
	return rc == 0 ? uc_rts(qp, 0) : rc;
}

static void uc_pair(struct vq_pair *p)
{
	const struct vq_pair_spec s = { .buf = { uc_mem[0], uc_mem[1] }, .len = UC_LEN, .fill = { 0x5a, 0xc3 },
					.access = { VQ_ACCESS_ALL, VQ_ACCESS_ALL }, .type = IBV_QPT_UC };

	vq_pair_open(p, &s);
	for (int i = 0; i < 2; i++)
		CHECK_OK(uc_up(p->qp[i], p->qp[1 - i]->qp_num));
}

/* One signalled WR of qp 0 from buffer 0 at off, len bytes: its completion's status (-1: none). */
static int uc_post(struct vq_pair *p, enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint64_t raddr,
		   uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p->buf[0] + off, .length = len, .lkey = p->mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x1234) }, *bad = NULL;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->qp[0], &wr, &bad) != 0 || vq_poll1(p->cq[0], &wc) != 1 || wc.wr_id != 77)
		return -1;
	return (int)wc.status;
}

static int uc_recv(struct vq_pair *p, uint64_t id, uint32_t off)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p->buf[1] + off, .length = 256, .lkey = p->mr[1]->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(p->qp[1], &wr, &bad);
}

static bool uc_all(const uint8_t *b, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static void test_uc_create_and_modify(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 8);
	struct ibv_qp_init_attr_ex ax = { .qp_type = IBV_QPT_UC, .send_cq = cq, .recv_cq = cq, .pd = pd,
					  .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						   .max_recv_sge = 1 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND };
	struct ibv_qp *qp, *peer;

	CHECK(c != NULL && pd != NULL && cq != NULL);
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL && qp->qp_type == IBV_QPT_UC && qp->state == IBV_QPS_RESET);
	th_defer(vq_destroy_qp_cb, qp);
	/* READ and atomics are not UC operations. */
	ax.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ;
	errno = 0;
	CHECK(ibv_create_qp_ex(c, &ax) == NULL && errno == EOPNOTSUPP);
	peer = vq_qp(pd, IBV_QPT_UC, cq, cq, 4);
	CHECK(peer != NULL);
	/* The kernel's UC table: no RNR timer or read depth at RTR, no retries or timeout at RTS. */
	CHECK_OK(vq_to_init(qp));
	CHECK(uc_rtr(qp, peer->qp_num, IBV_QP_MIN_RNR_TIMER) == EINVAL);
	CHECK(uc_rtr(qp, peer->qp_num, IBV_QP_MAX_DEST_RD_ATOMIC) == EINVAL);
	CHECK(uc_rtr(qp, peer->qp_num, 0) == 0 && qp->state == IBV_QPS_RTR);
	CHECK(uc_rts(qp, IBV_QP_TIMEOUT) == EINVAL);
	CHECK(uc_rts(qp, IBV_QP_RETRY_CNT) == EINVAL);
	CHECK(uc_rts(qp, 0) == 0 && qp->state == IBV_QPS_RTS);
}

static void test_create_flags(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 8);
	struct ibv_qp_init_attr_ex ax = { .qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq, .pd = pd,
					  .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						   .max_recv_sge = 1 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS };
	struct ibv_qp *qp;

	CHECK(c != NULL && pd != NULL && cq != NULL);
	ax.create_flags = 0;
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL);
	CHECK_OK(ibv_destroy_qp(qp));
	ax.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL);
	CHECK_OK(ibv_destroy_qp(qp));
	errno = 0;
	ax.create_flags = IBV_QP_CREATE_SOURCE_QPN;
	CHECK(ibv_create_qp_ex(c, &ax) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	ax.create_flags = 1u << 20;
	CHECK(ibv_create_qp_ex(c, &ax) == NULL && errno == EINVAL);
	ax.qp_type = IBV_QPT_RC;
	ax.create_flags = 0;
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL);
	CHECK_OK(ibv_destroy_qp(qp));
	errno = 0;
	ax.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	CHECK(ibv_create_qp_ex(c, &ax) == NULL && errno == EOPNOTSUPP);
}

static void test_uc_write_and_send(void)
{
	struct vq_pair p;
	struct ibv_wc wc;

	uc_pair(&p);
	CHECK(uc_post(&p, IBV_WR_RDMA_WRITE, 0, 300, (uintptr_t)p.buf[1] + 100, p.mr[1]->rkey) == IBV_WC_SUCCESS);
	CHECK(memcmp(p.buf[1] + 100, p.buf[0], 300) == 0 && p.buf[1][99] == 0xc3 && p.buf[1][400] == 0xc3);
	CHECK_OK(uc_recv(&p, 5, 1024));
	memset(p.buf[0] + 512, 0x77, 64);
	CHECK(uc_post(&p, IBV_WR_SEND_WITH_IMM, 512, 64, 0, 0) == IBV_WC_SUCCESS);
	CHECK(vq_poll1(p.cq[1], &wc) == 1);
	CHECK(wc.wr_id == 5 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == 64 &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0x1234) && wc.qp_num == p.qp[1]->qp_num);
	CHECK(uc_all(p.buf[1] + 1024, 64, 0x77) && p.buf[1][1088] == 0xc3);
}

/* What an RC responder would NAK is dropped at a UC one; the requester sees success and goes on. */
static void test_uc_drops(void)
{
	struct vq_pair p;
	struct ibv_wc wc;

	uc_pair(&p);
	/* No receive posted: the SEND is dropped, not retried; the next one takes the next receive. */
	memset(p.buf[0], 0x11, 64);
	CHECK(uc_post(&p, IBV_WR_SEND, 0, 64, 0, 0) == IBV_WC_SUCCESS);
	CHECK(ibv_poll_cq(p.cq[1], 1, &wc) == 0);
	CHECK_OK(uc_recv(&p, 9, 0));
	memset(p.buf[0] + 64, 0x22, 64);
	CHECK(uc_post(&p, IBV_WR_SEND, 64, 64, 0, 0) == IBV_WC_SUCCESS);
	CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.wr_id == 9 && wc.status == IBV_WC_SUCCESS);
	CHECK(uc_all(p.buf[1], 64, 0x22));
	/* A refused rkey and a range beyond the MR: nothing written, both QPs still up. */
	CHECK(uc_post(&p, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)p.buf[1] + 512, p.mr[1]->rkey ^ 0x100) ==
	      IBV_WC_SUCCESS);
	CHECK(uc_post(&p, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)p.buf[1] + UC_LEN - 32, p.mr[1]->rkey) ==
	      IBV_WC_SUCCESS);
	CHECK(uc_all(p.buf[1] + 512, 64, 0xc3) && uc_all(p.buf[1] + UC_LEN - 32, 32, 0xc3));
	CHECK(uc_post(&p, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)p.buf[1] + 512, p.mr[1]->rkey) == IBV_WC_SUCCESS);
	CHECK(uc_all(p.buf[1] + 512, 64, 0x11));
	/* READ is no UC operation: a local QP operation error, the requester in ERR. */
	CHECK(uc_post(&p, IBV_WR_RDMA_READ, 0, 64, (uintptr_t)p.buf[1], p.mr[1]->rkey) == IBV_WC_LOC_QP_OP_ERR);
	CHECK(uc_post(&p, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)p.buf[1], p.mr[1]->rkey) == IBV_WC_WR_FLUSH_ERR);
}

/* UC answers UC only: connected to an RC QP, its messages reach nobody. */
static void test_uc_not_to_rc(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 8);
	struct ibv_mr *mr = vq_mr(pd, uc_mem[0], UC_LEN, VQ_ACCESS_ALL);
	struct ibv_qp *uc, *rc;
	struct ibv_sge sg = { .addr = (uintptr_t)uc_mem[0], .length = 64 };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	CHECK(c != NULL && pd != NULL && cq != NULL && mr != NULL);
	uc = vq_qp(pd, IBV_QPT_UC, cq, cq, 4);
	rc = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(uc != NULL && rc != NULL);
	CHECK_OK(uc_up(uc, rc->qp_num));
	memset(uc_mem[0], 0x31, 64);
	memset(uc_mem[0] + 1024, 0x00, 64);
	sg.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = (uintptr_t)uc_mem[0] + 1024;
	wr.wr.rdma.rkey = mr->rkey;
	CHECK_OK(ibv_post_send(uc, &wr, &bad));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 3 && wc.status == IBV_WC_SUCCESS);
	CHECK(uc_all(uc_mem[0] + 1024, 64, 0x00));
}

int main(void)
{
	RUN(test_uc_create_and_modify);
	RUN(test_create_flags);
	RUN(test_uc_write_and_send);
	RUN(test_uc_drops);
	RUN(test_uc_not_to_rc);
	return th_summary("test_verbs_uc");
}
