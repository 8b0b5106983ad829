/*
 * libibverbs.so.1: queue pairs — creation (caps rounded as mlx5, refusals),
 * the state machine with the kernel's required and optional attribute masks
 * (a wrong mask is EINVAL and changes nothing), query, SRQs with their limit
 * event, and the ibv_qp_ex work request builders.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

static uint8_t vqm[2][16384] __attribute__((aligned(4096)));

static void test_create_caps(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr a;
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	a = (struct ibv_qp_init_attr){.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 5, .max_recv_wr = 5, .max_send_sge = 2, .max_recv_sge = 3}};
	qp = ibv_create_qp(pd, &a);
	CHECK(qp != NULL);
	CHECK(qp->state == IBV_QPS_RESET && qp->qp_type == IBV_QPT_RC && qp->pd == pd && qp->send_cq == cq);
	CHECK(qp->qp_num != 0);
	/* RC WQEs hold a LOCAL_INV UMR (128 bytes): 192-byte WQEs, 8 per 1 KiB ring. */
	CHECK(a.cap.max_send_wr == 5 && a.cap.max_recv_wr == 8 && a.cap.max_recv_sge == 4);
	CHECK(a.cap.max_inline_data == 192 - 128 - 4);
	CHECK_OK(ibv_destroy_qp(qp));
	/* Refusals. */
	a.cap.max_send_wr = 40000;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL);
	a.cap.max_send_wr = 4;
	a.cap.max_send_sge = 100;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL);
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 31;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL);
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 2000;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL);
	a.cap.max_inline_data = 0;
	a.send_cq = NULL;
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EINVAL);
	a.send_cq = cq;
	a.qp_type = IBV_QPT_DRIVER; /* only mlx5dv_create_qp makes one (DC: test_verbs_dc; raw packet: test_verbs_raw) */
	CHECK(ibv_create_qp(pd, &a) == NULL && errno == EOPNOTSUPP);
	CHECK(ibv_create_qp(NULL, &a) == NULL && errno == EINVAL);
	CHECK(ibv_destroy_qp(NULL) == EINVAL);
	/* The extended form: send_ops_flags beyond the type's are refused. */
	ax = (struct ibv_qp_init_attr_ex){.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .pd = pd,
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
					  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	CHECK(ibv_create_qp_ex(c, &ax) == NULL && errno == EOPNOTSUPP);
	ax.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL);
	CHECK(ibv_qp_to_qp_ex(qp) != NULL);
	CHECK_OK(ibv_destroy_qp(qp));
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(qp != NULL);
	CHECK(ibv_qp_to_qp_ex(qp) == NULL);
}

static void vqs_state(struct ibv_qp *qp, enum ibv_qp_state want)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	CHECK_OK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == want && qp->state == want);
}

/* The masks of each transition: a missing required or an extra attribute is EINVAL, nothing changes. */
static void test_modify_masks(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
	int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	struct ibv_qp *qp, *peer;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	peer = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(qp != NULL && peer != NULL);
	/* RESET -> INIT needs pkey index, port, access flags; a QKEY is not for RC. */
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
	CHECK(ibv_modify_qp(qp, &a, init_mask | IBV_QP_QKEY) == EINVAL);
	vqs_state(qp, IBV_QPS_RESET);
	a.port_num = 2;
	CHECK(ibv_modify_qp(qp, &a, init_mask) == EINVAL);
	a.port_num = 1;
	a.qp_access_flags = 1u << 10;
	CHECK(ibv_modify_qp(qp, &a, init_mask) == EINVAL);
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	/* RESET -> RTR skips a state: not in the table. */
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL);
	a.qp_state = IBV_QPS_INIT;
	CHECK_OK(ibv_modify_qp(qp, &a, init_mask));
	vqs_state(qp, IBV_QPS_INIT);
	/* INIT -> INIT with optional attributes only. */
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS));
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == EINVAL);
	/* INIT -> RTR: each required attribute in turn left out. */
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = peer->qp_num,
				 .max_dest_rd_atomic = 1, .min_rnr_timer = 12, .ah_attr = {.dlid = 1, .port_num = 1}};
	CHECK_OK(vq_grh_self(qp->context, &a.ah_attr)); /* RoCE: an address needs a GRH */
	{
		int req[] = {IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC,
			     IBV_QP_MIN_RNR_TIMER};
		int all = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

		for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
			CHECK(ibv_modify_qp(qp, &a, all & ~req[i]) == EINVAL);
		CHECK(ibv_modify_qp(qp, &a, all | IBV_QP_SQ_PSN) == EINVAL);
		a.min_rnr_timer = 32;
		CHECK(ibv_modify_qp(qp, &a, all) == EINVAL);
		a.min_rnr_timer = 12;
		vqs_state(qp, IBV_QPS_INIT);
		CHECK_OK(ibv_modify_qp(qp, &a, all));
	}
	vqs_state(qp, IBV_QPS_RTR);
	/* RTR -> RTS. */
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .sq_psn = 5,
				 .max_rd_atomic = 1};
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == EINVAL);
	a.rnr_retry = 8;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == EINVAL);
	a.rnr_retry = 7;
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
	vqs_state(qp, IBV_QPS_RTS);
	/* RTS -> RTS with an optional attribute; with CUR_STATE it must be the real one. */
	a.min_rnr_timer = 3;
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER));
	a.cur_qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE) == EINVAL);
	/* SQD and SQE: not on this device. */
	a.qp_state = IBV_QPS_SQD;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL);
	a.qp_state = IBV_QPS_SQE;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL);
	vqs_state(qp, IBV_QPS_RTS);
	/* Query returns what was set. */
	{
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr qi;

		CHECK_OK(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi));
		CHECK(q.dest_qp_num == peer->qp_num && q.path_mtu == IBV_MTU_1024 && q.sq_psn == 5);
		CHECK(q.min_rnr_timer == 3 && q.rnr_retry == 7 && q.timeout == 14 && q.port_num == 1);
		CHECK(q.qp_access_flags == IBV_ACCESS_REMOTE_WRITE && q.max_dest_rd_atomic == 1);
		CHECK(qi.qp_type == IBV_QPT_RC && qi.send_cq == cq && qi.cap.max_send_wr == q.cap.max_send_wr);
	}
	/* ERR and RESET from anywhere; RESET -> INIT again. */
	a.qp_state = IBV_QPS_ERR;
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	vqs_state(qp, IBV_QPS_ERR);
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL);
	a.qp_state = IBV_QPS_RESET;
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	vqs_state(qp, IBV_QPS_RESET);
	CHECK_OK(vq_to_init(qp));
	a.qp_state = IBV_QPS_ERR;
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	CHECK(ibv_modify_qp(NULL, &a, IBV_QP_STATE) == EINVAL);
}

static void test_modify_ud(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 7};
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_UD, cq, cq, 4);
	CHECK(qp != NULL);
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL);
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      EINVAL);
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN) == EINVAL);
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL);
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
	a.qkey = 9;
	CHECK_OK(ibv_modify_qp(qp, &a, IBV_QP_QKEY));
	{
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr qi;

		CHECK_OK(ibv_query_qp(qp, &q, IBV_QP_QKEY, &qi));
		CHECK(q.qkey == 9 && q.qp_state == IBV_QPS_RTS);
	}
}

static int vqs_readable(int fd, int ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	return poll(&pf, 1, ms);
}

/* An SRQ feeding two QPs; its limit event; destroy while in use. */
static void test_srq(void)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 10, .max_sge = 2}};
	struct ibv_context *c = vf_open();
	struct ibv_qp *a, *b1, *b2;
	struct ibv_async_event ev;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rw, *rbad;
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_cq *cq, *rcq;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	uint32_t num = 0;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 64);
	rcq = vq_cq(c, 64);
	CHECK(pd != NULL && cq != NULL && rcq != NULL);
	mr = vq_mr(pd, vqm, sizeof(vqm), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	srq = ibv_create_srq(pd, &sa);
	CHECK(srq != NULL);
	th_defer(vq_destroy_srq_cb, srq);
	CHECK(sa.attr.max_wr == 15 && sa.attr.max_sge >= 2);
	CHECK_OK(ibv_get_srq_num(srq, &num));
	CHECK(num != 0);
	CHECK_OK(ibv_query_srq(srq, &q));
	CHECK(q.max_wr == 15 && q.srq_limit == 0);
	a = vq_qp(pd, IBV_QPT_RC, cq, cq, 16);
	b1 = vq_qp_srq(pd, IBV_QPT_RC, cq, rcq, srq, 16);
	CHECK(a != NULL && b1 != NULL);
	b2 = vq_qp_srq(pd, IBV_QPT_RC, cq, rcq, srq, 16);
	CHECK(b2 != NULL);
	CHECK(ibv_destroy_srq(srq) == EBUSY);
	CHECK_OK(vq_up(a, b1->qp_num, 0, 0));
	CHECK_OK(vq_up(b1, a->qp_num, 0, 0));
	/* A QP on an SRQ takes no receives of its own. */
	sge = (struct ibv_sge){.addr = (uintptr_t)vqm[1], .length = 256, .lkey = mr->lkey};
	rw = (struct ibv_recv_wr){.wr_id = 0, .sg_list = &sge, .num_sge = 1};
	CHECK(ibv_post_recv(b1, &rw, &rbad) == EINVAL);
	for (int i = 0; i < 15; i++) {
		rw.wr_id = 100u + (uint64_t)i;
		sge.addr = (uintptr_t)vqm[1] + 256u * (uint64_t)i;
		CHECK_OK(ibv_post_srq_recv(srq, &rw, &rbad));
	}
	CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == ENOMEM && rbad == &rw);
	rw.num_sge = (int)sa.attr.max_sge + 1;
	CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == EINVAL);
	rw.num_sge = 1;
	/* Arm the limit at 12: it fires once fewer than 12 are left. */
	q.srq_limit = 12;
	CHECK_OK(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT));
	q.max_wr = 100;
	CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR) == EINVAL);
	sge = (struct ibv_sge){.addr = (uintptr_t)vqm[0], .length = 32, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
	for (int i = 0; i < 4; i++) {
		vqm[0][0] = (uint8_t)i;
		wr.wr_id = (uint64_t)i;
		CHECK_OK(ibv_post_send(a, &wr, &bad));
		CHECK(vq_poll1(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i);
		CHECK(vq_poll1(rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
		CHECK(wc.wr_id == 100u + (uint64_t)i && wc.qp_num == b1->qp_num && wc.byte_len == 32);
		CHECK(vqm[1][256 * i] == (uint8_t)i);
	}
	CHECK(vqs_readable(c->async_fd, 5000) == 1);
	CHECK_OK(ibv_get_async_event(c, &ev));
	CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq);
	ibv_ack_async_event(&ev);
	CHECK_OK(ibv_query_srq(srq, &q));
	CHECK(q.srq_limit == 0);
	/* Freed WQEs go back on the list: the SRQ takes receives again. */
	for (int i = 0; i < 4; i++)
		CHECK_OK(ibv_post_srq_recv(srq, &rw, &rbad));
	CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == ENOMEM);
	/* A limit above what is posted is reached already. */
	q.srq_limit = 15;
	CHECK_OK(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT));
	q.srq_limit = 16;
	CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT) == EINVAL);
	CHECK(ibv_destroy_srq(NULL) == EINVAL);
}

/* The next async event, within ms: its type and QP, or -1 when none came. */
static int next_qp_event(struct ibv_context *c, int ms, struct ibv_qp **qp)
{
	struct ibv_async_event ev;

	if (vqs_readable(c->async_fd, ms) != 1 || ibv_get_async_event(c, &ev) != 0)
		return -1;
	*qp = ev.element.qp;
	ibv_ack_async_event(&ev);
	return (int)ev.event_type;
}

/*
 * IBV_EVENT_QP_LAST_WQE_REACHED: a QP on an SRQ entering the error state,
 * once each time (again after a reset and a new error), whether moved there
 * (ibv_modify_qp) or by a failed WQE of its own (a WRITE with a bad rkey);
 * a QP with receives of its own reports none.
 */
static void test_srq_last_wqe(void)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_ERR};
	struct ibv_context *c = vf_open();
	struct ibv_qp *a, *b, *plain, *got = NULL;
	struct ibv_send_wr wr, *bad;
	struct ibv_srq *srq;
	struct ibv_sge sge;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 64);
	mr = vq_mr(pd, vqm, sizeof(vqm), VQ_ACCESS_ALL);
	srq = ibv_create_srq(pd, &sa);
	CHECK(pd != NULL && cq != NULL && mr != NULL && srq != NULL);
	th_defer(vq_destroy_srq_cb, srq);
	a = vq_qp_srq(pd, IBV_QPT_RC, cq, cq, srq, 16);
	b = vq_qp_srq(pd, IBV_QPT_RC, cq, cq, srq, 16);
	plain = vq_qp(pd, IBV_QPT_RC, cq, cq, 16);
	CHECK(a != NULL && b != NULL && plain != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	CHECK(next_qp_event(c, 0, &got) == -1);
	/* Moved to ERR: one event; moved there again: none more. */
	CHECK_OK(ibv_modify_qp(b, &qa, IBV_QP_STATE));
	CHECK(next_qp_event(c, 5000, &got) == IBV_EVENT_QP_LAST_WQE_REACHED && got == b);
	CHECK_OK(ibv_modify_qp(b, &qa, IBV_QP_STATE));
	CHECK_OK(ibv_modify_qp(plain, &qa, IBV_QP_STATE));
	CHECK(next_qp_event(c, 50, &got) == -1);
	/* Reset, connected again: a's WRITE with a bad rkey fails it into ERR, its event follows. */
	qa.qp_state = IBV_QPS_RESET;
	CHECK_OK(ibv_modify_qp(b, &qa, IBV_QP_STATE));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	sge = (struct ibv_sge){.addr = (uintptr_t)vqm[0], .length = 16, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = {.remote_addr = (uintptr_t)vqm[1], .rkey = mr->rkey ^ 0x5500}};
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 7 && wc.status == IBV_WC_REM_ACCESS_ERR);
	CHECK(next_qp_event(c, 5000, &got) == IBV_EVENT_QP_LAST_WQE_REACHED && got == a);
	/* And b again, after its reset, when moved to ERR once more. */
	qa.qp_state = IBV_QPS_ERR;
	CHECK_OK(ibv_modify_qp(b, &qa, IBV_QP_STATE));
	CHECK(next_qp_event(c, 5000, &got) == IBV_EVENT_QP_LAST_WQE_REACHED && got == b);
	CHECK(next_qp_event(c, 50, &got) == -1);
}

/*
 * An affiliated event not yet taken when its object is destroyed is dropped
 * (as the kernel drops it): the program is never handed the destroyed QP.
 * An event of another QP queued behind it still arrives, and the
 * descriptor's count stays right (non-blocking: EAGAIN once all are taken).
 */
static void test_event_dropped_at_destroy(void)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_ERR};
	struct ibv_context *c = vf_open();
	struct ibv_async_event ev;
	struct ibv_qp *gone, *kept, *got = NULL;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	srq = ibv_create_srq(pd, &sa);
	CHECK(pd != NULL && cq != NULL && srq != NULL);
	th_defer(vq_destroy_srq_cb, srq);
	gone = ibv_create_qp(pd, &(struct ibv_qp_init_attr){.send_cq = cq, .recv_cq = cq, .srq = srq,
							    .qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 4, .max_send_sge = 1}});
	kept = vq_qp_srq(pd, IBV_QPT_RC, cq, cq, srq, 16);
	CHECK(gone != NULL && kept != NULL);
	CHECK_OK(ibv_modify_qp(gone, &qa, IBV_QP_STATE));
	CHECK_OK(ibv_modify_qp(kept, &qa, IBV_QP_STATE));
	CHECK(vqs_readable(c->async_fd, 5000) == 1);
	CHECK_OK(ibv_destroy_qp(gone));
	CHECK(next_qp_event(c, 5000, &got) == IBV_EVENT_QP_LAST_WQE_REACHED && got == kept);
	CHECK(fcntl(c->async_fd, F_SETFL, fcntl(c->async_fd, F_GETFL) | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(ibv_get_async_event(c, &ev) == -1 && errno == EAGAIN);
}

/*
 * An SRQ of max_wr 0 and max_sge 0 (the attributes' zero values) is made, as
 * mlx5 makes it: one WQE, kept out of circulation, so it reports max_wr 0
 * and any receive posted to it finds it full (ENOMEM).
 */
static void test_srq_empty(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 0, .max_sge = 0}};
	struct ibv_recv_wr rw = {.wr_id = 1}, *bad = NULL;
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	srq = ibv_create_srq(pd, &sa);
	CHECK(srq != NULL);
	th_defer(vq_destroy_srq_cb, srq);
	CHECK(sa.attr.max_wr == 0 && sa.attr.max_sge >= 1);
	CHECK_OK(ibv_query_srq(srq, &q));
	CHECK(q.max_wr == 0 && q.srq_limit == 0);
	CHECK(ibv_post_srq_recv(srq, &rw, &bad) == ENOMEM && bad == &rw);
}

/* The ibv_wr_* builders: every RC operation, rollback on error, abort. */
static void test_qp_ex(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp_ex *x;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq, *rcq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	uint64_t *target = (uint64_t *)(void *)(vqm[1] + 4096), *old = (uint64_t *)(void *)(vqm[0] + 4096);

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 64);
	rcq = vq_cq(c, 64);
	CHECK(pd != NULL && cq != NULL && rcq != NULL);
	mr = vq_mr(pd, vqm, sizeof(vqm), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	ax = (struct ibv_qp_init_attr_ex){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2, .max_inline_data = 32}};
	a = ibv_create_qp_ex(c, &ax);
	CHECK(a != NULL);
	th_defer(vq_destroy_qp_cb, a);
	b = vq_qp(pd, IBV_QPT_RC, rcq, rcq, 8);
	CHECK(b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	x = ibv_qp_to_qp_ex(a);
	CHECK(x != NULL);
	memcpy(vqm[0], "builders", 8);
	*target = 5;
	{
		struct ibv_sge sl[2] = {{.addr = (uintptr_t)vqm[0], .length = 4, .lkey = mr->lkey},
					{.addr = (uintptr_t)vqm[0] + 4, .length = 4, .lkey = mr->lkey}};
		struct ibv_sge rs = {.addr = (uintptr_t)vqm[1] + 8192, .length = 64, .lkey = mr->lkey};
		struct ibv_recv_wr rw = {.wr_id = 50, .sg_list = &rs, .num_sge = 1}, *rbad;

		CHECK_OK(ibv_post_recv(b, &rw, &rbad));
		rw.wr_id = 51;
		CHECK_OK(ibv_post_recv(b, &rw, &rbad));
		ibv_wr_start(x);
		x->wr_id = 1;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]);
		ibv_wr_set_sge_list(x, 2, sl);
		x->wr_id = 2;
		ibv_wr_rdma_write_imm(x, mr->rkey, (uintptr_t)vqm[1] + 100, htobe32(3));
		ibv_wr_set_inline_data(x, "inline!", 7);
		x->wr_id = 3;
		ibv_wr_atomic_fetch_add(x, mr->rkey, (uintptr_t)target, 10);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)old, 8);
		x->wr_id = 4;
		ibv_wr_send_imm(x, htobe32(9));
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)vqm[0], 8);
		x->wr_id = 5;
		ibv_wr_rdma_read(x, mr->rkey, (uintptr_t)vqm[1]);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)vqm[0] + 2048, 8);
		x->wr_id = 6;
		ibv_wr_atomic_cmp_swp(x, mr->rkey, (uintptr_t)target, 15, 77);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)old, 8);
		CHECK_OK(ibv_wr_complete(x));
	}
	for (uint64_t i = 1; i <= 6; i++) {
		CHECK(vq_poll1(cq, &wc) == 1);
		CHECK(wc.wr_id == i && wc.status == IBV_WC_SUCCESS);
	}
	CHECK(memcmp(vqm[1], "builders", 8) == 0 && memcmp(vqm[1] + 100, "inline!", 7) == 0);
	CHECK(*target == 77 && *old == 15);
	CHECK(memcmp(vqm[0] + 2048, "builders", 8) == 0);
	CHECK(vq_poll1(rcq, &wc) == 1 && wc.wr_id == 50 && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK(vq_poll1(rcq, &wc) == 1 && wc.wr_id == 51 && wc.opcode == IBV_WC_RECV && wc.imm_data == htobe32(9));
	CHECK(memcmp(vqm[1] + 8192, "builders", 8) == 0);
	/* Errors roll the whole batch back. */
	memset(vqm[1], 0, 16);
	ibv_wr_start(x);
	x->wr_id = 7;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)vqm[0], 8);
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]);
	ibv_wr_set_inline_data(x, vqm[0], ax.cap.max_inline_data + 1);
	CHECK(ibv_wr_complete(x) == ENOMEM);
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]);
	ibv_wr_set_sge_list(x, 3, (struct ibv_sge[3]){{0}});
	CHECK(ibv_wr_complete(x) == ENOMEM);
	ibv_wr_start(x);
	ibv_wr_set_ud_addr(x, NULL, 1, 1);
	CHECK(ibv_wr_complete(x) == EINVAL);
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]); /* no data */
	CHECK(ibv_wr_complete(x) == EINVAL);
	ibv_wr_start(x);
	ibv_wr_bind_mw(x, NULL, 0, NULL);
	CHECK(ibv_wr_complete(x) == EINVAL);
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)vqm[0], 8);
	ibv_wr_abort(x);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
	CHECK(vqm[1][0] == 0);
	/* The ring is as before: a new batch works. */
	ibv_wr_start(x);
	x->wr_id = 8;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)vqm[1]);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)vqm[0], 8);
	CHECK_OK(ibv_wr_complete(x));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 8 && wc.status == IBV_WC_SUCCESS);
	CHECK(memcmp(vqm[1], "builders", 8) == 0);
}

/* UD through the builders, with set_ud_addr. */
static void test_qp_ex_ud(void)
{
	struct ibv_ah_attr aa = {.dlid = 1, .port_num = 1};
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp_ex *x;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct ibv_sge rs;
	struct ibv_recv_wr rw, *rbad;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	mr = vq_mr(pd, vqm, sizeof(vqm), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	ax = (struct ibv_qp_init_attr_ex){.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .pd = pd,
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_SEND,
					  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	a = ibv_create_qp_ex(c, &ax);
	CHECK(a != NULL);
	th_defer(vq_destroy_qp_cb, a);
	b = vq_qp(pd, IBV_QPT_UD, cq, cq, 4);
	CHECK(b != NULL);
	CHECK_OK(vq_up(a, 0, 0, 0));
	CHECK_OK(vq_up(b, 0, 0, 0));
	CHECK_OK(vq_grh_self(c, &aa));
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	rs = (struct ibv_sge){.addr = (uintptr_t)vqm[1], .length = 128, .lkey = mr->lkey};
	rw = (struct ibv_recv_wr){.wr_id = 9, .sg_list = &rs, .num_sge = 1};
	CHECK_OK(ibv_post_recv(b, &rw, &rbad));
	x = ibv_qp_to_qp_ex(a);
	CHECK(x != NULL);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, b->qp_num, 0x11111111);
	ibv_wr_set_inline_data(x, "ud!", 3);
	CHECK_OK(ibv_wr_complete(x));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 9 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 43);
	CHECK(wc.src_qp == a->qp_num && wc.wc_flags == IBV_WC_GRH); /* RoCE: every datagram carries a GRH */
	CHECK(memcmp(vqm[1] + 40, "ud!", 3) == 0);
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	/* An RC operation on a UD QP. */
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 0, 0);
	CHECK(ibv_wr_complete(x) == EINVAL);
}

static int vqr_recv(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t lkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)addr, .length = 64, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static int vqr_write(struct ibv_qp *qp, uint64_t id, void *src, uint32_t lkey, void *dst, uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)src, .length = 64, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * A QP moved to RESET leaves nothing of its own in its CQs (mlx5_modify_qp
 * cleans them): the flushed receives of a QP that failed are gone, the
 * completions of another QP on the same CQ stay, in their order, and the CQ
 * goes on with new completions after them.
 */
static void test_reset_cleans_cq(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 16), *pcq = vq_cq(c, 16);
	struct ibv_mr *mr = vq_mr(pd, vqm[0], sizeof(vqm[0]), VQ_ACCESS_ALL);
	struct ibv_qp *a, *b, *pa, *pb;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET }, err = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[8];

	CHECK(c != NULL && pd != NULL && cq != NULL && pcq != NULL && mr != NULL);
	a = vq_qp(pd, IBV_QPT_RC, cq, cq, 16);
	b = vq_qp(pd, IBV_QPT_RC, cq, cq, 16);
	pa = vq_qp(pd, IBV_QPT_RC, pcq, pcq, 16);
	pb = vq_qp(pd, IBV_QPT_RC, pcq, pcq, 16);
	CHECK(a != NULL && b != NULL && pa != NULL && pb != NULL);
	CHECK_OK(vq_up(a, pa->qp_num, 0, 0));
	CHECK_OK(vq_up(pa, a->qp_num, 0, 0));
	CHECK_OK(vq_up(b, pb->qp_num, 0, 0));
	CHECK_OK(vq_up(pb, b->qp_num, 0, 0));
	/* On cq, in this order: b's WRITE 1, a's two receives flushed, b's WRITE 2. */
	CHECK_OK(vqr_recv(a, 101, vqm[0], mr->lkey));
	CHECK_OK(vqr_recv(a, 102, vqm[0] + 64, mr->lkey));
	CHECK_OK(vqr_write(b, 1, vqm[0] + 256, mr->lkey, vqm[0] + 512, mr->rkey));
	CHECK_OK(ibv_modify_qp(a, &err, IBV_QP_STATE));
	CHECK_OK(vqr_write(b, 2, vqm[0] + 256, mr->lkey, vqm[0] + 576, mr->rkey));
	CHECK_OK(ibv_modify_qp(a, &reset, IBV_QP_STATE));
	CHECK(ibv_poll_cq(cq, 8, wc) == 2);
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].qp_num == b->qp_num);
	CHECK(wc[1].wr_id == 2 && wc[1].status == IBV_WC_SUCCESS && wc[1].qp_num == b->qp_num);
	CHECK(ibv_poll_cq(cq, 8, wc) == 0);
	/* Up again, a works: its next completion is its own new one. */
	CHECK_OK(vq_up(a, pa->qp_num, 0, 0));
	CHECK_OK(vqr_write(a, 3, vqm[0] + 256, mr->lkey, vqm[0] + 640, mr->rkey));
	CHECK(vq_poll1(cq, wc) == 1);
	CHECK(wc[0].wr_id == 3 && wc[0].status == IBV_WC_SUCCESS && wc[0].qp_num == a->qp_num);
	/* RESET of a QP with nothing in the CQ changes nothing there. */
	CHECK_OK(ibv_modify_qp(pa, &reset, IBV_QP_STATE));
	CHECK(ibv_poll_cq(pcq, 8, wc) == 0);
}

/*
 * ibv_query_qp_data_in_order(3) answers 1 (in order guaranteed) or 0 (not),
 * never an error: this device does not guarantee the order of the bytes
 * within a WQE, so 0 for each operation it describes, in RTS and before.
 */
static void test_data_in_order(void)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ};
	struct ibv_context *c = vf_open();
	struct ibv_qp *rc, *ud;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	rc = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	ud = vq_qp(pd, IBV_QPT_UD, cq, cq, 4);
	CHECK(rc != NULL && ud != NULL);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		CHECK(ibv_query_qp_data_in_order(rc, ops[i], 0) == 0);
	CHECK_OK(vq_up(rc, rc->qp_num, 0, 0));
	CHECK_OK(vq_up(ud, 0, 0, 0));
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		CHECK(ibv_query_qp_data_in_order(rc, ops[i], 0) == 0);
		CHECK(ibv_query_qp_data_in_order(ud, ops[i], 0) == 0);
	}
}

/* errno of a creation expected to fail; an object made anyway is released when the case ends (and 0 returned). */
static int vt_refused(void *obj, th_cleanup_fn release)
{
	int e = errno;

	if (obj == NULL)
		return e;
	th_defer(release, obj);
	return 0;
}

static void vt_unset_alloc_env(void *arg)
{
	(void)arg;
	unsetenv("MLX_QP_ALLOC_TYPE");
	unsetenv("MLX_CQ_ALLOC_TYPE");
	unsetenv("MLX_SRQ_ALLOC_TYPE");
}

/*
 * mlx5's buffer placement variables, read at each creation: HUGE and CONTIG
 * admit no other placement and this device places rings on neither, so the
 * QP, CQ and SRQ are refused (ENOMEM, as mlx5 without such pages); the
 * PREFER_ kinds, ALL and ANON fall back to the ordinary rings.
 */
static void test_alloc_type(void)
{
	static const char *const strict[] = {"HUGE", "contig"};
	static const char *const fallback[] = {"PREFER_HUGE", "PREFER_CONTIG", "ALL", "ANON"};
	struct ibv_context *c = vf_open();
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_qp_init_attr qa = {.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					      .max_recv_sge = 1},
				      .qp_type = IBV_QPT_RC};
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 8);
	CHECK(pd != NULL && cq != NULL);
	qa.send_cq = qa.recv_cq = cq;
	th_defer(vt_unset_alloc_env, NULL);
	for (size_t i = 0; i < 2; i++) {
		CHECK_OK(setenv("MLX_QP_ALLOC_TYPE", strict[i], 1));
		errno = 0;
		CHECK(vt_refused(ibv_create_qp(pd, &qa), vq_destroy_qp_cb) == ENOMEM);
		CHECK_OK(setenv("MLX_CQ_ALLOC_TYPE", strict[i], 1));
		errno = 0;
		CHECK(vt_refused(ibv_create_cq(c, 8, NULL, NULL, 0), vq_destroy_cq_cb) == ENOMEM);
		CHECK_OK(setenv("MLX_SRQ_ALLOC_TYPE", strict[i], 1));
		errno = 0;
		CHECK(vt_refused(ibv_create_srq(pd, &sa), vq_destroy_srq_cb) == ENOMEM);
	}
	for (size_t i = 0; i < 4; i++) {
		CHECK_OK(setenv("MLX_QP_ALLOC_TYPE", fallback[i], 1));
		CHECK_OK(setenv("MLX_CQ_ALLOC_TYPE", fallback[i], 1));
		CHECK_OK(setenv("MLX_SRQ_ALLOC_TYPE", fallback[i], 1));
		qp = ibv_create_qp(pd, &qa);
		CHECK(qp != NULL);
		CHECK_OK(ibv_destroy_qp(qp));
		CHECK(vq_cq(c, 8) != NULL);
		srq = ibv_create_srq(pd, &sa);
		CHECK(srq != NULL);
		CHECK_OK(ibv_destroy_srq(srq));
	}
}

/*
 * ibv_create_qp_ex's creation flags: the mask bit with no flag is nothing to
 * refuse; BLOCK_SELF_MCAST_LB holds on a device without multicast (nothing
 * loops back); the flags of raw packet and IPoIB QPs, which this device
 * has not, are EOPNOTSUPP, as the kernel refuses flags the card lacks.
 */
static void test_create_flags(void)
{
	static const uint32_t refused[] = {IBV_QP_CREATE_SCATTER_FCS, IBV_QP_CREATE_CVLAN_STRIPPING,
					   IBV_QP_CREATE_SOURCE_QPN, IBV_QP_CREATE_PCI_WRITE_END_PADDING};
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	ax = (struct ibv_qp_init_attr_ex){.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
					  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	for (int t = 0; t < 2; t++) {
		ax.qp_type = t == 0 ? IBV_QPT_RC : IBV_QPT_UD;
		ax.create_flags = 0;
		qp = ibv_create_qp_ex(c, &ax);
		CHECK(qp != NULL);
		CHECK_OK(ibv_destroy_qp(qp));
		ax.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
		qp = ibv_create_qp_ex(c, &ax);
		CHECK(qp != NULL);
		CHECK_OK(ibv_destroy_qp(qp));
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
			ax.create_flags = refused[i];
			errno = 0;
			CHECK(vt_refused(ibv_create_qp_ex(c, &ax), vq_destroy_qp_cb) == EOPNOTSUPP);
		}
	}
}

int main(void)
{
	RUN(test_create_caps);
	RUN(test_modify_masks);
	RUN(test_modify_ud);
	RUN(test_srq);
	RUN(test_srq_empty);
	RUN(test_srq_last_wqe);
	RUN(test_event_dropped_at_destroy);
	RUN(test_data_in_order);
	RUN(test_alloc_type);
	RUN(test_create_flags);
	RUN(test_qp_ex);
	RUN(test_qp_ex_ud);
	RUN(test_reset_cleans_cq);
	return th_summary("test_verbs_qp");
}
