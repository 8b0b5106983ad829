/*
 * XRC, from the IB specification and ibv_open_xrcd(3), ibv_create_srq_ex(3),
 * ibv_create_qp_ex(3), ibv_open_qp(3) and ibv_post_send(3): domains opened
 * privately or by file (O_CREAT / O_EXCL as the kernel answers them, a
 * domain busy while objects use it), XRC SRQs with their CQ, XRC send and
 * receive QPs moved through the kernel's XRC attribute tables, a SEND whose
 * XRC segment names the SRQ (its receive completes into the SRQ's CQ with
 * the receive QP's number), RDMA checked against the named SRQ's PD, an SRQ
 * of another domain NAKed as an invalid request, receives posted to XRC QPs
 * refused, ibv_open_qp, and a domain shared by two processes through a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define XR_LEN 4096

/* CHECK for helpers that return a value: a failure leaves the case (th_stop does not return inside one). */
#define XR_NEED(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			TH_FAIL("%s", #cond);                                                      \
			th_stop();                                                                 \
		}                                                                                  \
	} while (0)

static uint8_t xr_mem[3][XR_LEN] __attribute__((aligned(4096)));

/* A temporary file naming a domain: its path (removed when the case ends) and an open descriptor. */
struct xr_file {
	char path[64];
	int fd;
};

static void xr_file_cb(void *arg)
{
	struct xr_file *f = arg;

	if (f->fd >= 0)
		close(f->fd);
	unlink(f->path);
}

/* The case's file (static: the harness releases it after the case). */
static struct xr_file *xr_file(void)
{
	static struct xr_file f;

	snprintf(f.path, sizeof(f.path), "/tmp/test_verbs_xrc.XXXXXX");
	f.fd = mkstemp(f.path);
	XR_NEED(f.fd >= 0);
	th_defer(xr_file_cb, &f);
	return &f;
}

static void xr_close_cb(void *arg)
{
	ibv_close_xrcd(arg);
}

static struct ibv_xrcd *xr_open(struct ibv_context *c, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = fd,
				       .oflags = oflags};

	return ibv_open_xrcd(c, &a);
}

/* A domain that closes with the case. */
static struct ibv_xrcd *xr_domain(struct ibv_context *c, int fd, int oflags)
{
	struct ibv_xrcd *x = xr_open(c, fd, oflags);

	XR_NEED(x != NULL);
	th_defer(xr_close_cb, x);
	return x;
}

static struct ibv_srq *xr_srq(struct ibv_context *c, struct ibv_pd *pd, struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = {.max_wr = 16, .max_sge = 1},
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = x,
		.cq = cq,
	};
	struct ibv_srq *s = ibv_create_srq_ex(c, &a);

	XR_NEED(s != NULL);
	th_defer(vq_destroy_srq_cb, s);
	return s;
}

static struct ibv_qp *xr_recv_qp(struct ibv_context *c, struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x};
	struct ibv_qp *qp = ibv_create_qp_ex(c, &a);

	XR_NEED(qp != NULL);
	th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

static struct ibv_qp *xr_send_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_cq *cq, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD | (ops != 0 ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0),
		.pd = pd,
		.send_cq = cq,
		.cap = {.max_send_wr = 16, .max_send_sge = 1},
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(c, &a);

	XR_NEED(qp != NULL);
	th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

static int xr_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = VQ_ACCESS_ALL};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* The kernel's masks: an XRC send QP's RTR is UC's, its RTS RC's; a receive QP's RTR is RC's, its RTS needs only timeout and PSN. */
static int xr_rtr_timer(struct ibv_qp *qp, uint32_t dest, uint8_t min_rnr_timer)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
				.max_dest_rd_atomic = 1, .min_rnr_timer = min_rnr_timer, .ah_attr = {.port_num = 1}};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (vq_grh_self(qp->context, &a.ah_attr) != 0)
		return EIO;
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

static int xr_rtr(struct ibv_qp *qp, uint32_t dest)
{
	return xr_rtr_timer(qp, dest, 1);
}

static int xr_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				.max_rd_atomic = 1};

	if (qp->qp_type == IBV_QPT_XRC_RECV)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int xr_up(struct ibv_qp *qp, uint32_t dest)
{
	int rc = xr_init(qp);

	if (rc == 0)
		rc = xr_rtr(qp, dest);
	return rc == 0 ? xr_rts(qp) : rc;
}

/* One process's XRC setup: a domain, an XRC SRQ on its CQ, a receive QP and a send QP connected to it. */
struct xr_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_qp *recv, *send;
	struct ibv_mr *mr[3];
	uint8_t *buf[3];
	uint32_t srqn;
};

static void xr_env_up(struct xr_env *e, uint64_t ops)
{
	memset(e, 0, sizeof(*e));
	e->c = vf_open();
	CHECK(e->c != NULL);
	e->pd = vf_pd(e->c);
	e->scq = vq_cq(e->c, 64);
	e->rcq = vq_cq(e->c, 64);
	CHECK(e->pd != NULL && e->scq != NULL && e->rcq != NULL);
	e->x = xr_domain(e->c, -1, 0);
	e->srq = xr_srq(e->c, e->pd, e->x, e->rcq);
	CHECK_OK(ibv_get_srq_num(e->srq, &e->srqn));
	e->recv = xr_recv_qp(e->c, e->x);
	e->send = xr_send_qp(e->c, e->pd, e->scq, ops);
	for (int i = 0; i < 3; i++) {
		e->buf[i] = xr_mem[i];
		memset(e->buf[i], 0x11 * (i + 1), XR_LEN);
		e->mr[i] = vq_mr(e->pd, e->buf[i], XR_LEN, VQ_ACCESS_ALL);
		CHECK(e->mr[i] != NULL);
	}
	CHECK_OK(xr_up(e->recv, e->send->qp_num));
	CHECK_OK(xr_up(e->send, e->recv->qp_num));
}

static void xr_recv_post(struct ibv_srq *srq, struct ibv_mr *mr, void *p, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = {.addr = (uintptr_t)p, .length = len, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sg, .num_sge = 1}, *bad = NULL;

	CHECK_OK(ibv_post_srq_recv(srq, &wr, &bad));
}

/* One signalled WR of the send QP naming srqn: its completion's status (-1: none). */
static int xr_post(struct xr_env *e, enum ibv_wr_opcode op, uint32_t srqn, void *p, uint32_t len, uint64_t raddr,
		   uint32_t rkey)
{
	struct ibv_sge sg = {.addr = (uintptr_t)p, .length = len, .lkey = e->mr[0]->lkey};
	struct ibv_send_wr wr = {.wr_id = 0x77, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0xabcd)}, *bad = NULL;
	struct ibv_wc wc;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(e->send, &wr, &bad) != 0 || vq_poll1(e->scq, &wc) != 1)
		return -1;
	XR_NEED(wc.wr_id == 0x77 && wc.qp_num == e->send->qp_num);
	return wc.status;
}

static void test_xrcd_open_flags(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_xrcd_init_attr a = {.comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1};
	struct ibv_xrcd *p, *d1, *d2;
	struct xr_file *f = xr_file();

	CHECK(c != NULL);
	/* Both the descriptor and the flags are required. */
	errno = 0;
	CHECK(ibv_open_xrcd(c, &a) == NULL && errno == EINVAL);
	p = xr_open(c, -1, 0);
	CHECK(p != NULL);
	/* A file no domain is open on: O_CREAT makes one, without it EAGAIN (the kernel's answers). */
	errno = 0;
	CHECK(xr_open(c, f->fd, 0) == NULL && errno == EAGAIN);
	d1 = xr_open(c, f->fd, O_CREAT | O_EXCL);
	CHECK(d1 != NULL);
	/* Open now: joined without flags, and O_EXCL is EINVAL. */
	d2 = xr_open(c, f->fd, 0);
	CHECK(d2 != NULL);
	errno = 0;
	CHECK(xr_open(c, f->fd, O_CREAT | O_EXCL) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(xr_open(c, 1000, O_CREAT) == NULL && errno == EBADF);
	CHECK_OK(ibv_close_xrcd(d1));
	CHECK_OK(ibv_close_xrcd(d2));
	/* All closed: the domain is gone. */
	errno = 0;
	CHECK(xr_open(c, f->fd, 0) == NULL && errno == EAGAIN);
	CHECK_OK(ibv_close_xrcd(p));
}

/* A domain is busy while an SRQ or a receive QP made through it exists. */
static void test_xrcd_close_busy(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 16);
	struct ibv_xrcd *x = xr_open(c, -1, 0);
	struct ibv_qp_init_attr_ex qa = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x};
	struct ibv_srq_init_attr_ex sa = {
		.attr = {.max_wr = 4, .max_sge = 1},
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq};
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	CHECK(x != NULL && cq != NULL);
	srq = ibv_create_srq_ex(c, &sa);
	CHECK(srq != NULL);
	CHECK_ERR(ibv_close_xrcd(x), EBUSY);
	/* The SRQ's CQ is in use too. */
	CHECK_ERR(ibv_destroy_cq(cq), EBUSY);
	CHECK_OK(ibv_destroy_srq(srq));
	qp = ibv_create_qp_ex(c, &qa);
	CHECK(qp != NULL);
	CHECK_ERR(ibv_close_xrcd(x), EBUSY);
	CHECK_OK(ibv_destroy_qp(qp));
	CHECK_OK(ibv_close_xrcd(x));
}

/* What each XRC object needs, as ibv_create_srq_ex(3) and ibv_create_qp_ex(3) describe it: EINVAL without it. */
static void test_xrc_create_refusals(void)
{
	struct ibv_context *c = vf_open(), *c2 = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 16);
	struct ibv_xrcd *x = xr_domain(c, -1, 0), *x2 = xr_domain(c2, -1, 0);
	struct ibv_srq_init_attr_ex sa = {
		.attr = {.max_wr = 4, .max_sge = 1},
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq};
	struct ibv_qp_init_attr_ex ra = {.qp_type = IBV_QPT_XRC_RECV, .xrcd = x};
	struct ibv_qp_init_attr_ex ia = {.qp_type = IBV_QPT_XRC_SEND, .comp_mask = IBV_QP_INIT_ATTR_PD,
					 .cap = {.max_send_wr = 1, .max_send_sge = 1}};

	CHECK(pd != NULL && cq != NULL);
	errno = 0;
	CHECK(ibv_create_srq_ex(c, &sa) == NULL && errno == EINVAL); /* no CQ */
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	sa.xrcd = x2;
	errno = 0;
	CHECK(ibv_create_srq_ex(c, &sa) == NULL && errno == EINVAL); /* another context's domain */
	errno = 0;
	CHECK(ibv_create_qp_ex(c, &ra) == NULL && errno == EINVAL); /* no IBV_QP_INIT_ATTR_XRCD */
	errno = 0;
	CHECK(ibv_create_qp_ex(c, &ia) == NULL && errno == EINVAL); /* no PD nor send CQ */
	ia.pd = pd;
	errno = 0;
	CHECK(ibv_create_qp_ex(c, &ia) == NULL && errno == EINVAL); /* no send CQ */
}

/* A send QP addressed to a QP that is no XRC receive QP reaches nobody: its retries run out. */
static void test_xrc_send_to_rc(void)
{
	struct xr_env e;
	struct ibv_qp *rc, *s;

	xr_env_up(&e, 0);
	rc = vq_qp(e.pd, IBV_QPT_RC, e.rcq, e.rcq, 4); /* destroyed with the case */
	CHECK(rc != NULL);
	s = xr_send_qp(e.c, e.pd, e.scq, 0);
	CHECK_OK(xr_up(s, rc->qp_num));
	e.send = s;
	CHECK(xr_post(&e, IBV_WR_SEND, e.srqn, e.buf[0], 4, 0, 0) == IBV_WC_RETRY_EXC_ERR);
}

static void test_xrc_send(void)
{
	struct xr_env e;
	struct ibv_wc wc;

	xr_env_up(&e, 0);
	xr_recv_post(e.srq, e.mr[1], e.buf[1], 256, 501);
	xr_recv_post(e.srq, e.mr[1], e.buf[1] + 1024, 256, 502);
	memcpy(e.buf[0], "xrc payload", 11);
	CHECK(xr_post(&e, IBV_WR_SEND, e.srqn, e.buf[0], 11, 0, 0) == IBV_WC_SUCCESS);
	CHECK(xr_post(&e, IBV_WR_SEND_WITH_IMM, e.srqn, e.buf[0], 5, 0, 0) == IBV_WC_SUCCESS);
	/* Both receives complete into the SRQ's CQ, naming the receive QP and found through the SRQ. */
	CHECK(vq_poll1(e.rcq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 501 && wc.byte_len == 11 &&
	      wc.qp_num == e.recv->qp_num && !(wc.wc_flags & IBV_WC_WITH_IMM));
	CHECK(vq_poll1(e.rcq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 502 && wc.byte_len == 5 &&
	      wc.qp_num == e.recv->qp_num && (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xabcd));
	CHECK(memcmp(e.buf[1], "xrc payload", 11) == 0 && e.buf[1][11] == 0x22);
	CHECK(memcmp(e.buf[1] + 1024, "xrc p", 5) == 0 && e.buf[1][1024 + 5] == 0x22);
	CHECK(ibv_poll_cq(e.scq, 1, &wc) == 0 && ibv_poll_cq(e.rcq, 1, &wc) == 0);
}

/*
 * Many SENDs through two receive QPs into two SRQs on one CQ, each receive
 * reposted once polled: every completion names its SRQ's receive, in the
 * order posted there, and its bytes (the SRQs' free lists go round several
 * times).
 */
static void test_xrc_many(void)
{
	struct xr_env e;
	struct ibv_srq *srq[2];
	struct ibv_qp *r2, *s1, *s2;
	uint32_t n[2];
	uint64_t next[2] = {0, 0}, posted[2] = {0, 0};
	struct ibv_wc wc;

	xr_env_up(&e, 0);
	srq[0] = e.srq;
	srq[1] = xr_srq(e.c, e.pd, e.x, e.rcq);
	n[0] = e.srqn;
	CHECK_OK(ibv_get_srq_num(srq[1], &n[1]));
	r2 = xr_recv_qp(e.c, e.x);
	s1 = e.send;
	s2 = xr_send_qp(e.c, e.pd, e.scq, 0);
	CHECK_OK(xr_up(r2, s2->qp_num));
	CHECK_OK(xr_up(s2, r2->qp_num));
	for (int k = 0; k < 2; k++)
		for (; posted[k] < 8; posted[k]++)
			xr_recv_post(srq[k], e.mr[1], e.buf[1] + 2048 * k + 64 * (posted[k] % 16), 64,
				     (uint64_t)k << 32 | posted[k]);
	for (uint32_t i = 0; i < 200; i++) {
		int k = (int)(i % 3 == 0), q = (int)(i % 2);

		e.buf[0][0] = (uint8_t)i;
		e.send = q == 0 ? s1 : s2;
		CHECK(xr_post(&e, IBV_WR_SEND, n[k], e.buf[0], 1, 0, 0) == IBV_WC_SUCCESS);
		CHECK(vq_poll1(e.rcq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == ((uint64_t)k << 32 | next[k]) && wc.byte_len == 1);
		CHECK(wc.qp_num == (q == 0 ? e.recv->qp_num : r2->qp_num));
		CHECK(e.buf[1][2048 * k + 64 * (next[k] % 16)] == (uint8_t)i);
		next[k]++;
		xr_recv_post(srq[k], e.mr[1], e.buf[1] + 2048 * k + 64 * (posted[k] % 16), 64,
			     (uint64_t)k << 32 | posted[k]);
		posted[k]++;
	}
}

/* The builders: ibv_wr_set_xrc_srqn names the SRQ of the open WQE. */
static void test_xrc_wr_builders(void)
{
	struct xr_env e;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	xr_env_up(&e, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	x = ibv_qp_to_qp_ex(e.send);
	CHECK(x != NULL);
	xr_recv_post(e.srq, e.mr[1], e.buf[1], 64, 9);
	memcpy(e.buf[0], "builders", 8);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, e.srqn);
	ibv_wr_set_sge(x, e.mr[0]->lkey, (uintptr_t)e.buf[0], 8);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, e.mr[2]->rkey, (uintptr_t)e.buf[2] + 100);
	ibv_wr_set_sge(x, e.mr[0]->lkey, (uintptr_t)e.buf[0], 8);
	ibv_wr_set_xrc_srqn(x, e.srqn);
	CHECK_OK(ibv_wr_complete(x));
	for (uint64_t id = 1; id <= 2; id++) {
		CHECK(vq_poll1(e.scq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == id);
	}
	CHECK(vq_poll1(e.rcq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 9 && wc.byte_len == 8 && wc.qp_num == e.recv->qp_num);
	CHECK(memcmp(e.buf[1], "builders", 8) == 0 && memcmp(e.buf[2] + 100, "builders", 8) == 0);
	/* A WQE without its SRQ never closes: the session fails whole. */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, e.mr[0]->lkey, (uintptr_t)e.buf[0], 8);
	CHECK_ERR(ibv_wr_complete(x), EINVAL);
}

/* An SRQ of another domain, or no XRC SRQ at all: the request is NAKed as invalid and nothing lands. */
static void test_xrc_wrong_srq(void)
{
	struct xr_env e;
	struct ibv_xrcd *other;
	struct ibv_cq *ocq;
	struct ibv_srq *osrq, *basic;
	struct ibv_srq_init_attr ba = {.attr = {.max_wr = 4, .max_sge = 1}};
	uint32_t on, bn;
	struct ibv_wc wc;

	xr_env_up(&e, 0);
	other = xr_domain(e.c, -1, 0);
	ocq = vq_cq(e.c, 16);
	osrq = xr_srq(e.c, e.pd, other, ocq);
	CHECK_OK(ibv_get_srq_num(osrq, &on));
	basic = ibv_create_srq(e.pd, &ba);
	CHECK(basic != NULL);
	th_defer(vq_destroy_srq_cb, basic);
	CHECK_OK(ibv_get_srq_num(basic, &bn));
	xr_recv_post(osrq, e.mr[1], e.buf[1], 64, 1);
	xr_recv_post(basic, e.mr[1], e.buf[1], 64, 2);
	CHECK(xr_post(&e, IBV_WR_SEND, on, e.buf[0], 8, 0, 0) == IBV_WC_REM_INV_REQ_ERR);
	CHECK(ibv_poll_cq(ocq, 1, &wc) == 0 && ibv_poll_cq(e.rcq, 1, &wc) == 0);
	CHECK(e.buf[1][0] == 0x22);
	/* The send QP is in ERR now; a fresh pair for the next. */
	{
		struct ibv_qp *s = xr_send_qp(e.c, e.pd, e.scq, 0), *r = xr_recv_qp(e.c, e.x);

		CHECK_OK(xr_up(r, s->qp_num));
		CHECK_OK(xr_up(s, r->qp_num));
		e.send = s;
		CHECK(xr_post(&e, IBV_WR_SEND, bn, e.buf[0], 8, 0, 0) == IBV_WC_REM_INV_REQ_ERR);
		CHECK(ibv_poll_cq(e.rcq, 1, &wc) == 0);
		CHECK(e.buf[1][0] == 0x22);
	}
}

/* RDMA through a receive QP: the key is checked against the PD of the SRQ the request names. */
static void test_xrc_rdma_pd(void)
{
	struct xr_env e;
	struct ibv_pd *pd2;
	struct ibv_srq *srq2;
	uint32_t n2;
	uint64_t old;

	xr_env_up(&e, 0);
	memcpy(e.buf[0], "rdma-xrc", 8);
	CHECK(xr_post(&e, IBV_WR_RDMA_WRITE, e.srqn, e.buf[0], 8, (uintptr_t)e.buf[2], e.mr[2]->rkey) ==
	      IBV_WC_SUCCESS);
	CHECK(memcmp(e.buf[2], "rdma-xrc", 8) == 0);
	CHECK(xr_post(&e, IBV_WR_RDMA_READ, e.srqn, e.buf[0] + 512, 8, (uintptr_t)e.buf[2], e.mr[2]->rkey) ==
	      IBV_WC_SUCCESS);
	CHECK(memcmp(e.buf[0] + 512, "rdma-xrc", 8) == 0);
	memset(e.buf[2] + 64, 0, 8);
	e.buf[2][64] = 7;
	CHECK(xr_post(&e, IBV_WR_ATOMIC_FETCH_AND_ADD, e.srqn, e.buf[0] + 256, 8, (uintptr_t)e.buf[2] + 64,
		      e.mr[2]->rkey) == IBV_WC_SUCCESS);
	memcpy(&old, e.buf[0] + 256, 8);
	CHECK(old == 7 && e.buf[2][64] == 12);
	/* An XRC SRQ of the same domain in another PD: the same rkey is refused. */
	pd2 = vf_pd(e.c);
	CHECK(pd2 != NULL);
	srq2 = xr_srq(e.c, pd2, e.x, e.rcq);
	CHECK_OK(ibv_get_srq_num(srq2, &n2));
	memset(e.buf[2], 0x33, 8);
	CHECK(xr_post(&e, IBV_WR_RDMA_WRITE, n2, e.buf[0], 8, (uintptr_t)e.buf[2], e.mr[2]->rkey) ==
	      IBV_WC_REM_ACCESS_ERR);
	CHECK(e.buf[2][0] == 0x33);
}

/*
 * The named SRQ empty: the SEND waits on RNR (rnr_retry 7: for ever) and
 * goes once a receive is posted, at once when the SRQ is this process's
 * (the receive QP's RNR timer is 655 ms, and the receive is there when the
 * post returns); with rnr_retry 0 it fails at once.
 */
static void test_xrc_rnr(void)
{
	struct xr_env e;
	struct ibv_sge sg;
	struct ibv_send_wr wr = {.wr_id = 5, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 0,
				.max_rd_atomic = 1};
	struct ibv_qp *s, *r;
	struct ibv_wc wc;

	xr_env_up(&e, 0);
	sg = (struct ibv_sge){.addr = (uintptr_t)e.buf[0], .length = 4, .lkey = e.mr[0]->lkey};
	wr.qp_type.xrc.remote_srqn = e.srqn;
	r = xr_recv_qp(e.c, e.x);
	s = xr_send_qp(e.c, e.pd, e.scq, 0);
	CHECK_OK(xr_init(r));
	CHECK_OK(xr_rtr_timer(r, s->qp_num, 0));
	CHECK_OK(xr_rts(r));
	CHECK_OK(xr_up(s, r->qp_num));
	CHECK_OK(ibv_post_send(s, &wr, &bad));
	CHECK(ibv_poll_cq(e.scq, 1, &wc) == 0); /* no receive anywhere: it cannot have completed */
	xr_recv_post(e.srq, e.mr[1], e.buf[1], 64, 6);
	CHECK(ibv_poll_cq(e.rcq, 1, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 6 && wc.qp_num == r->qp_num && wc.byte_len == 4);
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 5);
	/* No retries: RNR_RETRY_EXC_ERR. */
	s = xr_send_qp(e.c, e.pd, e.scq, 0);
	r = xr_recv_qp(e.c, e.x);
	CHECK_OK(xr_up(r, s->qp_num));
	CHECK_OK(xr_init(s));
	CHECK_OK(xr_rtr(s, r->qp_num));
	CHECK_OK(ibv_modify_qp(s, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
	CHECK_OK(ibv_post_send(s, &wr, &bad));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 5);
}

static void test_xrc_post_recv_refused(void)
{
	struct xr_env e;
	struct ibv_sge sg;
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sg, .num_sge = 1}, *bad = NULL;

	xr_env_up(&e, 0);
	sg = (struct ibv_sge){.addr = (uintptr_t)e.buf[1], .length = 64, .lkey = e.mr[1]->lkey};
	CHECK_ERR(ibv_post_recv(e.send, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	bad = NULL;
	CHECK_ERR(ibv_post_recv(e.recv, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
}

/* The kernel's XRC tables: what a receive QP needs at RTR, and nothing a send QP may not take at RTS. */
static void test_xrc_modify_masks(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 16);
	struct ibv_xrcd *x = xr_domain(c, -1, 0);
	struct ibv_qp *r = xr_recv_qp(c, x), *s = xr_send_qp(c, pd, cq, 0);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = s->qp_num,
				.ah_attr = {.port_num = 1}};
	struct ibv_qp_attr ts = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .min_rnr_timer = 1};

	CHECK_OK(vq_grh_self(c, &a.ah_attr));
	CHECK_OK(xr_init(r));
	CHECK_OK(xr_init(s));
	/* A receive QP's RTR needs max_dest_rd_atomic and min_rnr_timer, as RC's. */
	CHECK_ERR(ibv_modify_qp(r, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
		  EINVAL);
	CHECK_OK(xr_rtr(r, s->qp_num));
	CHECK_OK(xr_rtr(s, r->qp_num));
	/* A send QP's RTS takes no min_rnr_timer (it receives nothing); a receive QP's does. */
	CHECK_ERR(ibv_modify_qp(s, &ts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
		  EINVAL);
	CHECK_OK(ibv_modify_qp(r, &ts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | IBV_QP_MIN_RNR_TIMER));
	CHECK_OK(xr_rts(s));
}

/* ibv_open_qp: a second handle on a receive QP, by number within its domain. */
static void test_xrc_open_qp(void)
{
	struct ibv_context *c = vf_open();
	struct xr_file *f = xr_file();
	struct ibv_xrcd *x, *y, *other;
	struct ibv_qp *r, *h;
	struct ibv_qp_open_attr oa = {.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						   IBV_QP_OPEN_ATTR_TYPE,
				      .qp_type = IBV_QPT_XRC_RECV};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	CHECK(c != NULL);
	x = xr_domain(c, f->fd, O_CREAT);
	y = xr_domain(c, f->fd, 0);
	other = xr_domain(c, -1, 0);
	r = ibv_create_qp_ex(c, &(struct ibv_qp_init_attr_ex){.qp_type = IBV_QPT_XRC_RECV,
								 .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x});
	CHECK(r != NULL);
	oa.qp_num = r->qp_num;
	oa.xrcd = other;
	errno = 0;
	CHECK(ibv_open_qp(c, &oa) == NULL && errno == EINVAL);
	oa.xrcd = y;
	h = ibv_open_qp(c, &oa);
	CHECK(h != NULL);
	CHECK(h->qp_num == r->qp_num && h->qp_type == IBV_QPT_XRC_RECV);
	/* Moved through the handle, the QP itself moves. */
	CHECK_OK(xr_init(h));
	CHECK_OK(ibv_query_qp(r, &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == IBV_QPS_INIT);
	CHECK_ERR(ibv_destroy_qp(r), EBUSY);
	CHECK_OK(ibv_destroy_qp(h));
	CHECK_OK(ibv_destroy_qp(r));
}

/*
 * The other process of test_xrc_two_processes: opens the domain of the
 * file named, makes an XRC SRQ with its CQ and a buffer, posts two
 * receives and makes a receive QP of the domain; prints "SRQ <srqn> <rkey>
 * <addr> <receive qpn>". On "peer <qpn>" it moves the receive QP up,
 * connected to that send QP, and prints "UP <errno>"; on "check" it prints
 * what its CQ got, one line per receive: "GOT <n> <status> <wr_id>
 * <qp_num> <byte_len> <data ok>", then "WRITE <ok>" and "EVENT <1: its SRQ's
 * limit event came>" (the limit is armed at 2).
 */
/* The next async event of c, waited for up to a hang guard: 1 when it is srq's limit event. */
static int xr_async_srq_event(struct ibv_context *c, struct ibv_srq *srq)
{
	struct pollfd pf = {.fd = c->async_fd, .events = POLLIN};
	struct ibv_async_event ev;
	int ok;

	if (poll(&pf, 1, TH_PROC_WAIT_MS) != 1 || ibv_get_async_event(c, &ev) != 0)
		return 0;
	ok = ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq;
	ibv_ack_async_event(&ev);
	return ok;
}

static int role_srq(const char *path)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	int fd = open(path, O_RDONLY);
	struct ibv_xrcd *x = c != NULL && fd >= 0 ? xr_open(c, fd, 0) : NULL;
	struct ibv_srq_init_attr_ex sa = {
		.attr = {.max_wr = 4, .max_sge = 1},
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq};
	struct ibv_qp_init_attr_ex qa = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x};
	struct ibv_srq *srq = x != NULL && cq != NULL ? ibv_create_srq_ex(c, &sa) : NULL;
	struct ibv_qp *rq = srq != NULL ? ibv_create_qp_ex(c, &qa) : NULL;
	static uint8_t buf[XR_LEN] __attribute__((aligned(4096)));
	struct ibv_mr *mr = rq != NULL ? ibv_reg_mr(pd, buf, XR_LEN, VQ_ACCESS_ALL) : NULL;
	struct ibv_sge sg = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr != NULL ? mr->lkey : 0};
	struct ibv_recv_wr wr = {.wr_id = 4242, .sg_list = &sg, .num_sge = 1}, *bad;
	uint32_t srqn = 0;
	unsigned int peer = 0;
	char line[64];

	if (mr == NULL || ibv_get_srq_num(srq, &srqn) != 0 || ibv_post_srq_recv(srq, &wr, &bad) != 0)
		return 2;
	sg.addr += 64;
	wr.wr_id = 4243;
	if (ibv_post_srq_recv(srq, &wr, &bad) != 0)
		return 2;
	/* Armed at 2: the first receive another process's requester takes fires it. */
	if (ibv_modify_srq(srq, &(struct ibv_srq_attr){.srq_limit = 2}, IBV_SRQ_LIMIT) != 0)
		return 2;
	printf("SRQ %u %u %llu %u\n", srqn, mr->rkey, (unsigned long long)(uintptr_t)buf, rq->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "peer %u", &peer) != 1)
		return 3;
	printf("UP %d\n", xr_up(rq, peer));
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "check", 5) != 0)
		return 3;
	for (int k = 0; k < 2; k++) {
		struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
		int n = 0;

		for (long i = 0; i < VQ_POLL_TRIES && n == 0; i++)
			n = ibv_poll_cq(cq, 1, &wc);
		printf("GOT %d %d %llu %u %u %d\n", n, wc.status, (unsigned long long)wc.wr_id, wc.qp_num,
		       wc.byte_len, memcmp(buf + 64 * k, k == 0 ? "cross" : "other", 5) == 0);
	}
	printf("WRITE %d\n", memcmp(buf + 1024, "written", 7) == 0);
	fflush(stdout);
	printf("EVENT %d\n", xr_async_srq_event(c, srq));
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 4;
	ibv_destroy_qp(rq);
	ibv_dereg_mr(mr);
	ibv_destroy_srq(srq);
	ibv_close_xrcd(x);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	close(fd);
	return 0;
}

/* The other process of test_xrcd_other_process: holds the domain of the file named (O_CREAT) until told. */
static int role_hold(const char *path)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	int fd = open(path, O_RDONLY);
	struct ibv_xrcd *x = c != NULL && fd >= 0 ? xr_open(c, fd, O_CREAT) : NULL;
	char line[16];

	if (x == NULL)
		return 2;
	printf("HELD\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 3;
	ibv_close_xrcd(x);
	ibv_close_device(c);
	ibv_free_device_list(l);
	close(fd);
	return 0;
}

/*
 * Whether a file's domain is open is answered across processes: held by
 * another process only, O_CREAT | O_EXCL is EINVAL and an open without
 * flags joins it; once that process has closed it, it is gone (EAGAIN).
 */
static void test_xrcd_other_process(void)
{
	struct ibv_context *c = vf_open();
	struct xr_file *f = xr_file();
	struct th_proc *p = th_proc_start(NULL, "hold", f->path, NULL);
	struct ibv_xrcd *x;
	const char *l;

	CHECK(c != NULL && p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && strcmp(l, "HELD") == 0);
	errno = 0;
	CHECK(xr_open(c, f->fd, O_CREAT | O_EXCL) == NULL && errno == EINVAL);
	x = xr_open(c, f->fd, 0);
	CHECK(x != NULL);
	CHECK_OK(ibv_close_xrcd(x));
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
	errno = 0;
	CHECK(xr_open(c, f->fd, 0) == NULL && errno == EAGAIN);
}

/* The role's report of one receive: it came, into its CQ, with this wr_id, receive QP and length, bytes right. */
static bool xr_got(struct th_proc *p, uint64_t id, uint32_t qpn, uint32_t len)
{
	const char *l = th_proc_line(p);
	unsigned long long wrid = 0;
	unsigned int q = 0, n_len = 0;
	int n = 0, st = -1, ok = 0;

	return l != NULL && sscanf(l, "GOT %d %d %llu %u %u %d", &n, &st, &wrid, &q, &n_len, &ok) == 6 && n == 1 &&
	       st == IBV_WC_SUCCESS && wrid == id && q == qpn && n_len == len && ok == 1;
}

/*
 * Two processes share a domain by its file, the SRQ, its CQ and memory in
 * the other process. A SEND through a receive QP of this process takes the
 * other process's receive and completes into its CQ; a WRITE is checked
 * against that SRQ's PD. A send QP of this process connected to the other
 * process's receive QP reaches the same SRQ. A receive QP of a private
 * domain is refused the SRQ; ibv_open_qp opens the other process's receive
 * QP here, queried but moved only by its creator. The SRQ's limit event
 * reaches its owner though the receive was taken here. Once the other
 * process is gone, its receive QP answers nothing (retries exceeded) and
 * its SRQ number names no SRQ (invalid request).
 */
static void test_xrc_two_processes(void)
{
	struct xr_env e;
	struct xr_file *f = xr_file();
	struct ibv_xrcd *shared;
	struct ibv_qp *r, *s, *s2, *h;
	struct th_proc *p;
	unsigned int srqn = 0, rkey = 0, rqpn = 0;
	unsigned long long addr = 0;
	int up = -1, wok = 0, ev = 0;
	const char *l;
	struct ibv_qp_open_attr oa = {.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						   IBV_QP_OPEN_ATTR_TYPE,
				      .qp_type = IBV_QPT_XRC_RECV};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	xr_env_up(&e, 0);
	shared = xr_domain(e.c, f->fd, O_CREAT);
	p = th_proc_start(NULL, "srq", f->path, NULL);
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "SRQ %u %u %llu %u", &srqn, &rkey, &addr, &rqpn) == 4);
	/* A target of a private domain: the other process's SRQ is not in it. */
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_REM_INV_REQ_ERR);
	r = xr_recv_qp(e.c, shared);
	s = xr_send_qp(e.c, e.pd, e.scq, 0);
	s2 = xr_send_qp(e.c, e.pd, e.scq, 0);
	CHECK_OK(xr_up(r, s->qp_num));
	CHECK_OK(xr_up(s, r->qp_num));
	CHECK_OK(xr_up(s2, rqpn));
	CHECK(th_proc_send(p, "peer %u", s2->qp_num) == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "UP %d", &up) == 1 && up == 0);
	e.send = s;
	memcpy(e.buf[0], "cross", 5);
	memcpy(e.buf[0] + 100, "written", 7);
	memcpy(e.buf[0] + 200, "other", 5);
	CHECK(xr_post(&e, IBV_WR_RDMA_WRITE, srqn, e.buf[0] + 100, 7, addr + 1024, rkey) == IBV_WC_SUCCESS);
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_SUCCESS);
	e.send = s2;
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0] + 200, 5, 0, 0) == IBV_WC_SUCCESS);
	/* The other process's receive QP, opened here: its state is read, not set. */
	oa.qp_num = rqpn;
	oa.xrcd = shared;
	h = ibv_open_qp(e.c, &oa);
	CHECK(h != NULL);
	th_defer(vq_destroy_qp_cb, h);
	CHECK_OK(ibv_query_qp(h, &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == IBV_QPS_RTS);
	CHECK_ERR(ibv_modify_qp(h, &(struct ibv_qp_attr){.qp_state = IBV_QPS_ERR}, IBV_QP_STATE), EOPNOTSUPP);
	oa.xrcd = e.x;
	errno = 0;
	CHECK(ibv_open_qp(e.c, &oa) == NULL && errno == EINVAL);
	CHECK(th_proc_send(p, "check") == 0);
	CHECK(xr_got(p, 4242, r->qp_num, 5));
	CHECK(xr_got(p, 4243, rqpn, 5));
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "WRITE %d", &wok) == 1 && wok == 1);
	/* The other process's limit event, crossed by a receive taken here. */
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "EVENT %d", &ev) == 1 && ev == 1);
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
	/* The other process gone with its objects: its receive QP answers nothing, its SRQ is no SRQ. */
	e.send = s2;
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_RETRY_EXC_ERR);
	e.send = s;
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_REM_INV_REQ_ERR);
}

/*
 * The SRQ's process killed without destroying anything: its SRQ is gone
 * with it (an invalid request, as a card's kernel destroys a dead
 * process's objects), and its receive QP answers nothing.
 */
static void test_xrc_srq_owner_killed(void)
{
	struct xr_env e;
	struct xr_file *f = xr_file();
	struct ibv_xrcd *shared;
	struct ibv_qp *r, *s, *s2;
	struct th_proc *p;
	unsigned int srqn = 0, rkey = 0, rqpn = 0;
	unsigned long long addr = 0;
	int up = -1;
	const char *l;

	xr_env_up(&e, 0);
	shared = xr_domain(e.c, f->fd, O_CREAT);
	p = th_proc_start(NULL, "srq", f->path, NULL);
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "SRQ %u %u %llu %u", &srqn, &rkey, &addr, &rqpn) == 4);
	r = xr_recv_qp(e.c, shared);
	s = xr_send_qp(e.c, e.pd, e.scq, 0);
	s2 = xr_send_qp(e.c, e.pd, e.scq, 0);
	CHECK_OK(xr_up(r, s->qp_num));
	CHECK_OK(xr_up(s, r->qp_num));
	CHECK_OK(xr_up(s2, rqpn));
	CHECK(th_proc_send(p, "peer %u", s2->qp_num) == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "UP %d", &up) == 1 && up == 0);
	e.send = s;
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_SUCCESS);
	th_proc_kill(p);
	CHECK(th_proc_wait(p) != 0);
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_REM_INV_REQ_ERR);
	e.send = s2;
	CHECK(xr_post(&e, IBV_WR_SEND, srqn, e.buf[0], 5, 0, 0) == IBV_WC_RETRY_EXC_ERR);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "srq") == 0)
		return role_srq(argv[2]);
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return role_hold(argv[2]);
	RUN(test_xrcd_open_flags);
	RUN(test_xrcd_close_busy);
	RUN(test_xrc_create_refusals);
	RUN(test_xrc_send);
	RUN(test_xrc_send_to_rc);
	RUN(test_xrc_many);
	RUN(test_xrc_wr_builders);
	RUN(test_xrc_wrong_srq);
	RUN(test_xrc_rdma_pd);
	RUN(test_xrc_rnr);
	RUN(test_xrc_post_recv_refused);
	RUN(test_xrc_modify_masks);
	RUN(test_xrc_open_qp);
	RUN(test_xrcd_other_process);
	RUN(test_xrc_two_processes);
	RUN(test_xrc_srq_owner_killed);
	return th_summary("test_verbs_xrc");
}
