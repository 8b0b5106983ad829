/*
 * test_verbs_dvmisc: mlx5dv_query_port, reserved QP numbers, the RoCE v2 UDP
 * source port of an RC QP, and ibv_resize_cq, as rdma-core v44's mlx5
 * provider documents and answers them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define DV_VPORT_UPLINK 0xffffu

static char *self_path;

/* A host function is no eswitch manager: mlx5 fills nothing and says so with flags 0. */
static void test_query_port_host(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_port p;

	CHECK(c != NULL);
	memset(&p, 0xa5, sizeof(p));
	CHECK_OK(mlx5dv_query_port(c, 1, &p));
	CHECK(p.flags == 0 && p.vport == 0 && p.vport_vhca_id == 0 && p.esw_owner_vhca_id == 0);
	CHECK(p.vport_steering_icm_rx == 0 && p.vport_steering_icm_tx == 0);
	CHECK(p.reg_c0.value == 0 && p.reg_c0.mask == 0);
	/* A port the device has not, and a length other than the struct's: EINVAL. */
	CHECK_ERR(mlx5dv_query_port(c, 2, &p), EINVAL);
	CHECK_ERR(mlx5dv_query_port(c, 0, &p), EINVAL);
	CHECK_ERR(_mlx5dv_query_port(c, 1, &p, sizeof(p) - 8), EINVAL);
}

/* Run in a process of the DPU side (re-executed): 0 when p0 reports its uplink vport. */
static int query_port_dpu_child(void)
{
	struct ibv_device **l;
	struct ibv_context *c;
	struct mlx5dv_port p;
	int n = 0, rc = 1;

	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		return 2;
	c = ibv_open_device(l[0]);
	if (c != NULL && mlx5dv_query_port(c, 1, &p) == 0 &&
	    p.flags == (MLX5DV_QUERY_PORT_VPORT | MLX5DV_QUERY_PORT_ESW_OWNER_VHCA_ID | MLX5DV_QUERY_PORT_VPORT_REG_C0) &&
	    p.vport == DV_VPORT_UPLINK && p.esw_owner_vhca_id == 0 && p.reg_c0.value != 0 &&
	    p.reg_c0.mask == 0xffff0000u && (p.reg_c0.value & ~p.reg_c0.mask) == 0)
		rc = 0;
	if (c != NULL)
		ibv_close_device(c);
	ibv_free_device_list(l);
	return rc;
}

/* The DPU's PF (p0, the uplink representor of a BlueField-2 in switchdev mode). */
static void test_query_port_dpu(void)
{
	pid_t pid = fork();
	int status = 0;

	CHECK(pid >= 0);
	if (pid == 0) {
		char *argv[] = { self_path, "query-port-dpu", NULL };

		setenv("SOFTDPU_SIDE", "dpu", 1);
		unsetenv("SOFTDPU_TOPOLOGY");
		execv(self_path, argv);
		_exit(3);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Numbers device-wide and never a QP's; a dealloc of one not held is EINVAL. */
static void test_reserved_qpn(void)
{
	struct ibv_context *c = vf_open(), *c2;
	struct ibv_device **l;
	uint32_t q[64], extra;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int n = 0;

	CHECK(c != NULL);
	for (int i = 0; i < 64; i++) {
		CHECK_OK(mlx5dv_reserved_qpn_alloc(c, &q[i]));
		for (int j = 0; j < i; j++)
			CHECK(q[j] != q[i]);
	}
	/* A QP made while they are held gets none of them. */
	pd = vf_pd(c);
	cq = vq_cq(c, 4);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(pd != NULL && cq != NULL && qp != NULL);
	for (int i = 0; i < 64; i++)
		CHECK(qp->qp_num != q[i]);
	/* A QP's number is not a reserved one of this context. */
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c, qp->qp_num), EINVAL);
	/* Another context of the device does not hold this one's. */
	l = vf_list(&n);
	CHECK(l != NULL && n >= 1);
	c2 = ibv_open_device(l[0]);
	CHECK(c2 != NULL);
	th_defer(vf_close_cb, c2);
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c2, q[0]), EINVAL);
	CHECK_OK(mlx5dv_reserved_qpn_alloc(c2, &extra));
	for (int i = 0; i < 64; i++)
		CHECK(extra != q[i]);
	for (int i = 0; i < 64; i++)
		CHECK_OK(mlx5dv_reserved_qpn_dealloc(c, q[i]));
	/* Twice: EINVAL. */
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c, q[0]), EINVAL);
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c, 0xffffff), EINVAL);
	CHECK_OK(mlx5dv_reserved_qpn_dealloc(c2, extra));
	CHECK_ERR(mlx5dv_reserved_qpn_alloc(c, NULL), EINVAL);
}

/* RC or UC in RTS only (mlx5's RTS2RTS); other states and types EOPNOTSUPP. */
static void test_udp_sport(void)
{
	static uint8_t b0[64], b1[64];
	struct vq_pair_spec s = { .buf = { b0, b1 }, .len = sizeof(b0), .type = IBV_QPT_RC,
				  .access = { VQ_ACCESS_ALL, VQ_ACCESS_ALL } };
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_sge sg;
	struct ibv_qp *ud;
	struct ibv_wc wc;
	struct vq_pair p;

	vq_pair_open(&p, &s);
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555), EOPNOTSUPP); /* RESET */
	CHECK_OK(vq_to_init(p.qp[0]));
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555), EOPNOTSUPP); /* INIT */
	CHECK_OK(vq_to_rtr(p.qp[0], p.qp[1]->qp_num, 0));
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555), EOPNOTSUPP); /* RTR */
	CHECK_OK(vq_to_rts(p.qp[0], 0));
	CHECK_OK(vq_up(p.qp[1], p.qp[0]->qp_num, 0, 0));
	CHECK_OK(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555));
	CHECK_OK(mlx5dv_modify_qp_udp_sport(p.qp[0], 49152));
	/* The QP goes on working. */
	memset(b0, 0x3c, sizeof(b0));
	sg = (struct ibv_sge){ .addr = (uintptr_t)b0, .length = sizeof(b0), .lkey = p.mr[0]->lkey };
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)b1;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
	CHECK(vq_poll1(p.cq[0], &wc) == 1 && wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS);
	CHECK(memcmp(b0, b1, sizeof(b0)) == 0);
	ud = vq_qp(p.pd, IBV_QPT_UD, p.cq[0], p.cq[0], 4);
	CHECK(ud != NULL);
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(ud, 55555), EOPNOTSUPP);
}

/* Two RC QPs connected: qp[0] sends into cq (also qp[1]'s receive CQ), the other halves complete into a CQ of 64. */
struct rz {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *other;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
};

static uint8_t rz_buf[8192];

static void rz_open(struct rz *z, int cqe, struct ibv_comp_channel *ch)
{
	z->c = vf_open();
	CHECK(z->c != NULL);
	z->pd = vf_pd(z->c);
	CHECK(z->pd != NULL);
	if (ch == NULL) {
		z->cq = vq_cq(z->c, cqe);
	} else {
		z->cq = ibv_create_cq(z->c, cqe, NULL, ch, 0);
		if (z->cq != NULL)
			th_defer(vq_destroy_cq_cb, z->cq);
	}
	z->other = vq_cq(z->c, 64);
	CHECK(z->cq != NULL && z->other != NULL);
	z->mr = vq_mr(z->pd, rz_buf, sizeof(rz_buf), VQ_ACCESS_ALL);
	CHECK(z->mr != NULL);
	z->qp[0] = vq_qp(z->pd, IBV_QPT_RC, z->cq, z->other, 32);
	z->qp[1] = vq_qp(z->pd, IBV_QPT_RC, z->other, z->cq, 32);
	CHECK(z->qp[0] != NULL && z->qp[1] != NULL);
	CHECK_OK(vq_up(z->qp[0], z->qp[1]->qp_num, 0, 0));
	CHECK_OK(vq_up(z->qp[1], z->qp[0]->qp_num, 0, 0));
}

/* A signalled RDMA WRITE of 64 bytes, wr_id id, from the first 4 KiB into the second. */
static void rz_write(struct rz *z, uint64_t id)
{
	struct ibv_sge sg = { .addr = (uintptr_t)rz_buf, .length = 64, .lkey = z->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)rz_buf + 4096;
	wr.wr.rdma.rkey = z->mr->rkey;
	CHECK_OK(ibv_post_send(z->qp[0], &wr, &bad));
}

/* The next completion of cq is a successful WRITE with this wr_id. */
static void rz_expect_write(struct ibv_cq *cq, uint64_t id)
{
	struct ibv_wc wc;

	CHECK(vq_poll1(cq, &wc) == 1);
	CHECK(wc.wr_id == id && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE);
}

/*
 * Growing keeps the unpolled CQEs in order (here across the old ring's wrap),
 * and the queues that complete into the CQ, the requester's and the
 * responder's, write into the new ring.
 */
static void test_resize_cq_grow_keeps_cqes(void)
{
	struct ibv_sge rsg = { .addr = (uintptr_t)rz_buf + 4096, .length = 4096 };
	struct ibv_sge ssg = { .addr = (uintptr_t)rz_buf, .length = 100 };
	struct ibv_recv_wr rwr = { .wr_id = 100, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 9, .sg_list = &ssg, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc[2];
	bool got_send = false, got_recv = false;
	struct rz z;

	rz_open(&z, 3, NULL);
	CHECK(z.cq->cqe == 3);
	/* Three polled, then three left across the ring's end (indices 3, 4, 5 of a ring of 4). */
	for (uint64_t i = 1; i <= 3; i++)
		rz_write(&z, i);
	for (uint64_t i = 1; i <= 3; i++)
		rz_expect_write(z.cq, i);
	for (uint64_t i = 4; i <= 6; i++)
		rz_write(&z, i);
	CHECK_OK(ibv_resize_cq(z.cq, 15));
	CHECK(z.cq->cqe == 15);
	for (uint64_t i = 4; i <= 6; i++)
		rz_expect_write(z.cq, i);
	CHECK(ibv_poll_cq(z.cq, 2, wc) == 0);
	/* Requester and responder complete into the new ring. */
	rsg.lkey = z.mr->lkey;
	ssg.lkey = z.mr->lkey;
	memset(rz_buf, 0x5a, 100);
	memset(rz_buf + 4096, 0, 100);
	CHECK_OK(ibv_post_recv(z.qp[1], &rwr, &rbad));
	CHECK_OK(ibv_post_send(z.qp[0], &swr, &sbad));
	for (int n = 0; n < 2; n++) {
		CHECK(vq_poll1(z.cq, &wc[0]) == 1 && wc[0].status == IBV_WC_SUCCESS);
		if (wc[0].wr_id == 9 && wc[0].opcode == IBV_WC_SEND && wc[0].qp_num == z.qp[0]->qp_num)
			got_send = true;
		if (wc[0].wr_id == 100 && wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 100 &&
		    wc[0].qp_num == z.qp[1]->qp_num)
			got_recv = true;
	}
	CHECK(got_send && got_recv);
	CHECK(memcmp(rz_buf, rz_buf + 4096, 100) == 0);
	/* All 15 usable: no overrun. */
	for (uint64_t i = 10; i < 25; i++)
		rz_write(&z, i);
	for (uint64_t i = 10; i < 25; i++)
		rz_expect_write(z.cq, i);
}

/* Shrinking below the unpolled CQEs, 0, or past max_cqe: EINVAL, the CQ as it was; a size the ring has: 0. */
static void test_resize_cq_limits(void)
{
	struct ibv_device_attr da;
	struct ibv_wc wc;
	struct rz z;

	rz_open(&z, 31, NULL);
	CHECK_OK(ibv_query_device(z.c, &da));
	CHECK(z.cq->cqe == 31);
	for (uint64_t i = 1; i <= 5; i++)
		rz_write(&z, i);
	CHECK_ERR(ibv_resize_cq(z.cq, 3), EINVAL);
	CHECK_ERR(ibv_resize_cq(z.cq, 4), EINVAL);
	CHECK(z.cq->cqe == 31);
	CHECK_ERR(ibv_resize_cq(z.cq, 0), EINVAL);
	CHECK_ERR(ibv_resize_cq(z.cq, -1), EINVAL);
	CHECK_ERR(ibv_resize_cq(z.cq, da.max_cqe + 1), EINVAL);
	CHECK(z.cq->cqe == 31);
	/* Exactly as many as the new size holds: allowed (5 fit a ring of 8, cqe 7). */
	CHECK_OK(ibv_resize_cq(z.cq, 5));
	CHECK(z.cq->cqe == 7);
	CHECK_OK(ibv_resize_cq(z.cq, 6)); /* the same ring: nothing changes */
	CHECK(z.cq->cqe == 7);
	for (uint64_t i = 1; i <= 5; i++)
		rz_expect_write(z.cq, i);
	CHECK_OK(ibv_resize_cq(z.cq, 1));
	CHECK(z.cq->cqe == 1);
	rz_write(&z, 6);
	rz_expect_write(z.cq, 6);
	CHECK(ibv_poll_cq(z.cq, 1, &wc) == 0);
}

/* An armed CQ stays armed: the first CQE after the resize signals the channel. */
static void test_resize_cq_event(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *ev_cq;
	struct pollfd pfd;
	void *ctx_out;
	struct rz z;

	z.c = vf_open();
	CHECK(z.c != NULL);
	ch = ibv_create_comp_channel(z.c);
	CHECK(ch != NULL);
	th_defer(vq_destroy_channel_cb, ch);
	/* rz_open opens its own context: make the channel's the one used. */
	{
		struct ibv_context *c = z.c;

		z.pd = vf_pd(c);
		z.cq = ibv_create_cq(c, 3, NULL, ch, 0);
		CHECK(z.pd != NULL && z.cq != NULL);
		th_defer(vq_destroy_cq_cb, z.cq);
		z.other = vq_cq(c, 64);
		z.mr = vq_mr(z.pd, rz_buf, sizeof(rz_buf), VQ_ACCESS_ALL);
		CHECK(z.other != NULL && z.mr != NULL);
		z.qp[0] = vq_qp(z.pd, IBV_QPT_RC, z.cq, z.other, 32);
		z.qp[1] = vq_qp(z.pd, IBV_QPT_RC, z.other, z.cq, 32);
		CHECK(z.qp[0] != NULL && z.qp[1] != NULL);
		CHECK_OK(vq_up(z.qp[0], z.qp[1]->qp_num, 0, 0));
		CHECK_OK(vq_up(z.qp[1], z.qp[0]->qp_num, 0, 0));
	}
	CHECK_OK(ibv_req_notify_cq(z.cq, 0));
	CHECK_OK(ibv_resize_cq(z.cq, 63));
	CHECK(z.cq->cqe == 63);
	rz_write(&z, 1);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 10000) == 1); /* hang guard only */
	CHECK_OK(ibv_get_cq_event(ch, &ev_cq, &ctx_out));
	CHECK(ev_cq == z.cq);
	ibv_ack_cq_events(ev_cq, 1);
	rz_expect_write(z.cq, 1);
}

#define PEER_SENDS_EARLY 2
#define PEER_SENDS 10
#define PEER_STRESS 200 /* SENDs while the parent resizes again and again */

/* The length of the peer's i-th SEND, so each receive is told from the others. */
static uint32_t peer_len(int i)
{
	return 16u + (uint32_t)i;
}

/* Polls one completion of cq, bounded; 1 when it came. */
static int peer_poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (long i = 0; i < VQ_POLL_TRIES; i++)
		if (ibv_poll_cq(cq, 1, wc) != 0)
			return 1;
	return 0;
}

/* SENDs i in [from, to) from qp, each polled from cq: 0 when all succeeded. */
static int peer_send(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, uint8_t *buf, int from, int to)
{
	for (int i = from; i < to; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)buf, .length = peer_len(i), .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		memset(buf, 0x40 + i, peer_len(i));
		if (ibv_post_send(qp, &wr, &bad) != 0 || peer_poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)i)
			return 1;
	}
	return 0;
}

/*
 * The other process (re-executed): a QP connected to the parent's, whose
 * receives complete into the CQ the parent resizes; this process's engine
 * writes those CQEs. It sends some, waits for the resize, sends the rest.
 */
static int resize_peer_child(uint32_t dest, int in, int out, int early, int total)
{
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct ibv_device **l;
	struct ibv_context *c = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	int n = 0, rc = 1;
	char go;

	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		return 2;
	c = ibv_open_device(l[0]);
	if (c == NULL || (pd = ibv_alloc_pd(c)) == NULL || (cq = ibv_create_cq(c, 64, NULL, NULL, 0)) == NULL)
		goto out;
	{
		struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					      .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
						       .max_recv_sge = 1 } };

		qp = ibv_create_qp(pd, &a);
	}
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (qp == NULL || mr == NULL || write(out, &qp->qp_num, sizeof(qp->qp_num)) != sizeof(qp->qp_num) ||
	    vq_up(qp, dest, 0, 0) != 0 || read(in, &go, 1) != 1)
		goto out;
	if (peer_send(qp, cq, mr, buf, 0, early) != 0 || write(out, "1", 1) != 1 || read(in, &go, 1) != 1)
		goto out;
	if (peer_send(qp, cq, mr, buf, early, total) != 0 || write(out, "2", 1) != 1)
		goto out;
	rc = 0;
out:
	if (qp != NULL)
		ibv_destroy_qp(qp);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (cq != NULL)
		ibv_destroy_cq(cq);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	if (c != NULL)
		ibv_close_device(c);
	ibv_free_device_list(l);
	return rc;
}

static pid_t peer_pid = -1;

static void peer_reap_cb(void *arg)
{
	(void)arg;
	if (peer_pid > 0) {
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, NULL, 0);
		peer_pid = -1;
	}
}

/* Starts the peer process (re-executed) for the parent's QP qpn, with its pipes: early SENDs, then the rest of total. */
static void peer_start(uint32_t qpn, int to_kid[2], int from_kid[2], int early, int total)
{
	char num[4][16];

	snprintf(num[0], sizeof(num[0]), "%u", qpn);
	snprintf(num[1], sizeof(num[1]), "%d", to_kid[0]);
	snprintf(num[2], sizeof(num[2]), "%d", from_kid[1]);
	snprintf(num[3], sizeof(num[3]), "%d", early);
	fflush(NULL);
	peer_pid = fork();
	CHECK(peer_pid >= 0);
	if (peer_pid == 0) {
		char tot[16];
		char *argv[] = { self_path, "resize-peer", num[0], num[1], num[2], num[3], tot, NULL };

		snprintf(tot, sizeof(tot), "%d", total);
		execv(self_path, argv);
		_exit(3);
	}
}

/*
 * A CQ another process's queue completes into: that process's producer
 * follows the resize (its view moves to the new block at its next CQE), the
 * CQEs it wrote before stay, in order, and none is lost after.
 */
static void test_resize_cq_other_process(void)
{
	static uint8_t rbuf[PEER_SENDS][64];
	int to_kid[2], from_kid[2], ws = 0;
	struct ibv_cq *cq, *other;
	uint32_t kid_qpn = 0;
	struct ibv_context *c;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	char ack;

	c = vf_open();
	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 3);
	other = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL && other != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, other, cq, 16);
	mr = vq_mr(pd, rbuf, sizeof(rbuf), VQ_ACCESS_ALL);
	CHECK(qp != NULL && mr != NULL);
	CHECK(pipe(to_kid) == 0 && pipe(from_kid) == 0);
	peer_start(qp->qp_num, to_kid, from_kid, PEER_SENDS_EARLY, PEER_SENDS);
	th_defer(peer_reap_cb, NULL);
	close(to_kid[0]);
	close(from_kid[1]);
	CHECK(read(from_kid[0], &kid_qpn, sizeof(kid_qpn)) == sizeof(kid_qpn));
	CHECK_OK(vq_up(qp, kid_qpn, 0, 0));
	for (int i = 0; i < PEER_SENDS; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)rbuf[i], .length = sizeof(rbuf[i]), .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100u + (uint64_t)i, .sg_list = &sg, .num_sge = 1 }, *bad;

		CHECK_OK(ibv_post_recv(qp, &wr, &bad));
	}
	CHECK(write(to_kid[1], "g", 1) == 1);
	CHECK(read(from_kid[0], &ack, 1) == 1 && ack == '1');
	/* Its first CQEs wait in the old ring; the next ones it writes after the resize. */
	CHECK_OK(ibv_resize_cq(cq, 15));
	CHECK(cq->cqe == 15);
	CHECK(write(to_kid[1], "g", 1) == 1);
	CHECK(read(from_kid[0], &ack, 1) == 1 && ack == '2');
	for (int i = 0; i < PEER_SENDS; i++) {
		CHECK(vq_poll1(cq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 100u + (uint64_t)i);
		CHECK(wc.byte_len == peer_len(i) && wc.qp_num == qp->qp_num);
		for (uint32_t k = 0; k < peer_len(i); k++)
			CHECK(rbuf[i][k] == 0x40 + i);
	}
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
	CHECK(waitpid(peer_pid, &ws, 0) == peer_pid);
	peer_pid = -1;
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	close(to_kid[1]);
	close(from_kid[0]);
}

/*
 * The fence under load: the other process SENDs without pause while this
 * one resizes the CQ back and forth (always room for them all); every
 * receive completes once, in order, with its length and bytes.
 */
static void test_resize_cq_while_other_process_sends(void)
{
	static uint8_t rbuf[PEER_STRESS][256];
	int to_kid[2], from_kid[2], ws = 0, got = 0, resizes = 0;
	struct ibv_cq *cq, *other;
	uint32_t kid_qpn = 0;
	struct ibv_context *c;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	char ack;

	c = vf_open();
	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 255);
	other = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL && other != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, other, cq, 256);
	mr = vq_mr(pd, rbuf, sizeof(rbuf), VQ_ACCESS_ALL);
	CHECK(qp != NULL && mr != NULL);
	CHECK(pipe(to_kid) == 0 && pipe(from_kid) == 0);
	peer_start(qp->qp_num, to_kid, from_kid, 0, PEER_STRESS);
	th_defer(peer_reap_cb, NULL);
	close(to_kid[0]);
	close(from_kid[1]);
	CHECK(read(from_kid[0], &kid_qpn, sizeof(kid_qpn)) == sizeof(kid_qpn));
	CHECK_OK(vq_up(qp, kid_qpn, 0, 0));
	for (int i = 0; i < PEER_STRESS; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)rbuf[i], .length = sizeof(rbuf[i]), .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sg, .num_sge = 1 }, *bad;

		CHECK_OK(ibv_post_recv(qp, &wr, &bad));
	}
	CHECK(write(to_kid[1], "g", 1) == 1);
	CHECK(read(from_kid[0], &ack, 1) == 1 && ack == '1');
	CHECK(write(to_kid[1], "g", 1) == 1);
	for (long tries = 0; got < PEER_STRESS && tries < VQ_POLL_TRIES; tries++) {
		/* Between the two sizes that hold every SEND: the CQ never overruns. */
		CHECK_OK(ibv_resize_cq(cq, (resizes++ & 1) ? 255 : 511));
		/* One CQE per resize: the moves interleave with the other process's CQEs. */
		if (ibv_poll_cq(cq, 1, &wc) == 1) {
			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == (uint64_t)got);
			CHECK(wc.byte_len == peer_len(got));
			for (uint32_t k = 0; k < peer_len(got); k++)
				CHECK(rbuf[got][k] == (uint8_t)(0x40 + got));
			got++;
		}
	}
	CHECK(got == PEER_STRESS);
	CHECK(read(from_kid[0], &ack, 1) == 1 && ack == '2');
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
	CHECK(waitpid(peer_pid, &ws, 0) == peer_pid);
	peer_pid = -1;
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	close(to_kid[1]);
	close(from_kid[0]);
}

static void *pd_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	(void)pd, (void)ctx, (void)align, (void)type;
	return aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
}

static void pd_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	(void)pd, (void)ctx, (void)type;
	free(ptr);
}

/* A CQ whose ring a parent domain's allocators gave: EOPNOTSUPP, the CQ as it was and working. */
static void test_resize_cq_parent_domain(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
						   .alloc = pd_alloc, .free = pd_free };
	struct ibv_cq_init_attr_ex ca = { .cqe = 15, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct ibv_cq_ex *cqx;
	struct ibv_pd *par;
	struct ibv_wc wc;

	CHECK(c != NULL);
	pda.pd = vf_pd(c);
	CHECK(pda.pd != NULL);
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	th_defer(vf_dealloc_pd_cb, par);
	ca.parent_domain = par;
	cqx = ibv_create_cq_ex(c, &ca);
	CHECK(cqx != NULL);
	th_defer(vq_destroy_cq_cb, ibv_cq_ex_to_cq(cqx));
	CHECK_ERR(ibv_resize_cq(ibv_cq_ex_to_cq(cqx), 63), EOPNOTSUPP);
	CHECK(ibv_cq_ex_to_cq(cqx)->cqe == 15);
	CHECK(ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc) == 0);
}

/*
 * Packet pacing: the device reports a ConnectX-6 Dx's (1 kbit/s to 100
 * Gbit/s on raw packet QPs), so a raw packet QP's rate outside that range is
 * mlx5_rl_add_rate's EINVAL, one within it and 0 (no limit) are accepted;
 * IBV_QP_RATE_LIMIT on an RC QP is no attribute of any transition (EINVAL).
 * test_verbs_pace checks what the rate does.
 */
static void test_rate_limit(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex ax;
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *raw, *rc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	CHECK(c != NULL);
	memset(&ax, 0xa5, sizeof(ax));
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	CHECK(ax.packet_pacing_caps.qp_rate_limit_min == 1 && ax.packet_pacing_caps.qp_rate_limit_max == 100000000 &&
	      ax.packet_pacing_caps.supported_qpts == 1u << IBV_QPT_RAW_PACKET);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	{
		struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
					      .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						       .max_recv_sge = 1 } };

		raw = ibv_create_qp(pd, &a);
		CHECK(raw != NULL);
		th_defer(vq_destroy_qp_cb, raw);
	}
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_STATE | IBV_QP_PORT));
	m.qp_state = IBV_QPS_RTR;
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_STATE));
	m.qp_state = IBV_QPS_RTS;
	m.rate_limit = 100000001;
	CHECK_ERR(ibv_modify_qp(raw, &m, IBV_QP_STATE | IBV_QP_RATE_LIMIT), EINVAL);
	CHECK(raw->state == IBV_QPS_RTR);
	m.rate_limit = 0;
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_STATE | IBV_QP_RATE_LIMIT));
	CHECK(raw->state == IBV_QPS_RTS);
	m.rate_limit = 100000;
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_RATE_LIMIT));
	rc = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(rc != NULL);
	CHECK_OK(vq_up(rc, rc->qp_num, 0, 0));
	CHECK_ERR(ibv_modify_qp(rc, &m, IBV_QP_RATE_LIMIT), EINVAL);
}

/*
 * mlx5dv_pp_alloc(3) and mlx5dv_sched_node_create(3) through libmlx5.so.1,
 * as a program calls them (test_verbs_pace checks what they do): an entry's
 * index, shared for the same context and another one when dedicated; a
 * tree whose node is EBUSY while a leaf is under it, a leaf destroyed twice
 * EINVAL (the handle is looked up, not read); a QP in RESET EOPNOTSUPP.
 */
static void test_pace_through_libmlx5(void)
{
	uint8_t ctx[12] = { 0, 0, 0x03, 0xe8 }; /* rate_limit 1000 kbit/s, big-endian */
	struct ibv_context *c = vf_open();
	struct mlx5dv_sched_attr a = { 0 };
	struct mlx5dv_sched_node *root;
	struct mlx5dv_sched_leaf *leaf;
	struct mlx5dv_pp *p1, *p2, *p3;
	struct ibv_qp *rc;
	struct ibv_cq *cq;

	CHECK(c != NULL);
	p1 = mlx5dv_pp_alloc(c, sizeof(ctx), ctx, 0);
	p2 = mlx5dv_pp_alloc(c, sizeof(ctx), ctx, 0);
	p3 = mlx5dv_pp_alloc(c, sizeof(ctx), ctx, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	CHECK(p1 != NULL && p2 != NULL && p3 != NULL);
	CHECK(p1->index == p2->index && p3->index != p1->index);
	mlx5dv_pp_free(p3);
	mlx5dv_pp_free(p2);
	mlx5dv_pp_free(p1);
	errno = 0;
	CHECK(mlx5dv_pp_alloc(c, 2, ctx, 0) == NULL && errno == EINVAL);
	root = mlx5dv_sched_node_create(c, &a);
	CHECK(root != NULL);
	a.parent = root;
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW;
	a.max_avg_bw = 10;
	leaf = mlx5dv_sched_leaf_create(c, &a);
	CHECK(leaf != NULL);
	CHECK_ERR(mlx5dv_sched_node_destroy(root), EBUSY);
	a.max_avg_bw = 20;
	CHECK_OK(mlx5dv_sched_leaf_modify(leaf, &a));
	cq = vq_cq(c, 8);
	CHECK(cq != NULL);
	rc = vq_qp(vf_pd(c), IBV_QPT_RC, cq, cq, 4);
	CHECK(rc != NULL);
	CHECK_ERR(mlx5dv_modify_qp_sched_elem(rc, leaf, NULL), EOPNOTSUPP);
	CHECK_OK(mlx5dv_sched_leaf_destroy(leaf));
	CHECK_ERR(mlx5dv_sched_leaf_destroy(leaf), EINVAL);
	CHECK_OK(mlx5dv_sched_node_destroy(root));
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "query-port-dpu") == 0)
		return query_port_dpu_child();
	if (argc == 7 && strcmp(argv[1], "resize-peer") == 0)
		return resize_peer_child((uint32_t)strtoul(argv[2], NULL, 0), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
					 atoi(argv[6]));
	self_path = argv[0];
	RUN(test_query_port_host);
	RUN(test_query_port_dpu);
	RUN(test_reserved_qpn);
	RUN(test_udp_sport);
	RUN(test_resize_cq_grow_keeps_cqes);
	RUN(test_resize_cq_limits);
	RUN(test_resize_cq_event);
	RUN(test_resize_cq_other_process);
	RUN(test_resize_cq_while_other_process_sends);
	RUN(test_resize_cq_parent_domain);
	RUN(test_rate_limit);
	RUN(test_pace_through_libmlx5);
	return th_summary("test_verbs_dvmisc");
}
