/*
 * libibverbs.so.1: completion queues — create (sizes as mlx5 rounds them,
 * the refusals), destroy while in use, completion channels (pollable
 * descriptors, get_cq_event/ack, several CQs on one channel, solicited-only
 * arming, non-blocking), the
 * overrun async event, and the extended CQ's start/next/end_poll and read_*.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

static uint8_t vc_mem[2][8192] __attribute__((aligned(4096)));

static void test_create(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_cq_init_attr_ex ax = {.cqe = 10};
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	int ctx_tag;

	CHECK(c != NULL);
	cq = ibv_create_cq(c, 1, &ctx_tag, NULL, 0);
	CHECK(cq != NULL);
	CHECK(cq->cqe == 1 && cq->context == c && cq->cq_context == &ctx_tag && cq->channel == NULL);
	CHECK_OK(ibv_destroy_cq(cq));
	cq = ibv_create_cq(c, 100, NULL, NULL, 0);
	CHECK(cq != NULL && cq->cqe == 127);
	CHECK_OK(ibv_destroy_cq(cq));
	errno = 0;
	CHECK(ibv_create_cq(c, 0, NULL, NULL, 0) == NULL && errno == EINVAL);
	CHECK(ibv_create_cq(c, -1, NULL, NULL, 0) == NULL && errno == EINVAL);
	CHECK(ibv_create_cq(c, 4194304, NULL, NULL, 0) == NULL && errno == EINVAL);
	CHECK(ibv_create_cq(c, 4, NULL, NULL, 1) == NULL && errno == EINVAL); /* one completion vector */
	CHECK(ibv_create_cq(NULL, 4, NULL, NULL, 0) == NULL && errno == EINVAL);
	CHECK(ibv_destroy_cq(NULL) == EINVAL);
	/* Extended: the standard fields and completion timestamps are there, the wall clock is not. */
	ax.wc_flags = IBV_WC_STANDARD_FLAGS;
	cqx = ibv_create_cq_ex(c, &ax);
	CHECK(cqx != NULL && cqx->cqe == 15);
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	ax.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cqx = ibv_create_cq_ex(c, &ax);
	CHECK(cqx != NULL);
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	ax.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	cqx = ibv_create_cq_ex(c, &ax);
	CHECK(cqx != NULL);
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	ax.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO; /* tag matching (test_verbs_tm) */
	cqx = ibv_create_cq_ex(c, &ax);
	CHECK(cqx != NULL);
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	ax.wc_flags = 1ull << 20; /* a field mlx5 has no value for */
	CHECK(ibv_create_cq_ex(c, &ax) == NULL && errno == EOPNOTSUPP);
	ax.wc_flags = 0;
	ax.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ax.flags = 1u << 7;
	CHECK(ibv_create_cq_ex(c, &ax) == NULL && errno == EINVAL);
	/* A flag mlx5 knows that this device has not (its CQ latches an overrun): not supported. */
	ax.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	cqx = ibv_create_cq_ex(c, &ax);
	if (cqx != NULL) /* not refused: released when the case ends */
		th_defer(vq_destroy_cq_cb, ibv_cq_ex_to_cq(cqx));
	CHECK(cqx == NULL && errno == EOPNOTSUPP);
	ax.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN | (1u << 7);
	CHECK(ibv_create_cq_ex(c, &ax) == NULL && errno == EINVAL);
	ax.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cqx = ibv_create_cq_ex(c, &ax);
	CHECK(cqx != NULL);
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	/* Resized as mlx5 does: cqe + 1 rounded up to a power of two, one less reported (test_verbs_dvmisc). */
	cq = vq_cq(c, 8);
	CHECK(cq != NULL);
	CHECK(ibv_resize_cq(cq, 64) == 0 && cq->cqe == 127);
}

/* A CQ that a QP completes into stays; a channel that a CQ uses stays. */
static void test_busy(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	ch = ibv_create_comp_channel(c);
	CHECK(ch != NULL);
	th_defer(vq_destroy_channel_cb, ch);
	cq = ibv_create_cq(c, 8, NULL, ch, 0);
	CHECK(cq != NULL && cq->channel == ch && ch->refcnt == 1);
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(qp != NULL);
	CHECK(ibv_destroy_cq(cq) == EBUSY);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	CHECK_OK(ibv_destroy_qp(qp));
	th_undefer(vq_destroy_qp_cb, qp);
	CHECK_OK(ibv_destroy_cq(cq));
	CHECK(ch->refcnt == 0);
}

struct vc_pair {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;    /* the receiver's, on the channel */
	struct ibv_cq *scq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
};

static void vc_pair(struct vc_pair *p, int cqe)
{
	memset(p, 0, sizeof(*p));
	p->c = vf_open();
	CHECK(p->c != NULL);
	p->pd = vf_pd(p->c);
	CHECK(p->pd != NULL);
	p->ch = ibv_create_comp_channel(p->c);
	CHECK(p->ch != NULL);
	th_defer(vq_destroy_channel_cb, p->ch);
	p->cq = ibv_create_cq(p->c, cqe, &p->cq, p->ch, 0);
	CHECK(p->cq != NULL);
	th_defer(vq_destroy_cq_cb, p->cq);
	p->scq = vq_cq(p->c, 64);
	CHECK(p->scq != NULL);
	p->mr = vq_mr(p->pd, vc_mem, sizeof(vc_mem), VQ_ACCESS_ALL);
	CHECK(p->mr != NULL);
	p->a = vq_qp(p->pd, IBV_QPT_RC, p->scq, p->scq, 16);
	p->b = vq_qp(p->pd, IBV_QPT_RC, p->cq, p->cq, 16);
	CHECK(p->a != NULL && p->b != NULL);
	CHECK_OK(vq_up(p->a, p->b->qp_num, 0, 0));
	CHECK_OK(vq_up(p->b, p->a->qp_num, 0, 0));
}

static void vc_send(struct vc_pair *p, uint64_t id, unsigned int flags)
{
	struct ibv_sge sge = {.addr = (uintptr_t)vc_mem[0], .length = 16, .lkey = p->mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *rbad;
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = flags}, *bad;

	rw.sg_list = &(struct ibv_sge){.addr = (uintptr_t)vc_mem[1], .length = 64, .lkey = p->mr->lkey};
	CHECK_OK(ibv_post_recv(p->b, &rw, &rbad));
	CHECK_OK(ibv_post_send(p->a, &wr, &bad));
}

static int vc_readable(int fd, int ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	return poll(&pf, 1, ms);
}

static void test_channel_events(void)
{
	struct vc_pair p;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	vc_pair(&p, 16);
	CHECK(vc_readable(p.ch->fd, 0) == 0);
	CHECK_OK(ibv_req_notify_cq(p.cq, 0));
	CHECK(vc_readable(p.ch->fd, 0) == 0);
	vc_send(&p, 1, 0);
	CHECK(vc_readable(p.ch->fd, 5000) == 1);
	CHECK_OK(ibv_get_cq_event(p.ch, &ev_cq, &ev_ctx));
	CHECK(ev_cq == p.cq && ev_ctx == &p.cq);
	ibv_ack_cq_events(ev_cq, 1);
	CHECK(p.cq->comp_events_completed == 1);
	CHECK(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	/* Not re-armed: the next completion makes no event. */
	vc_send(&p, 2, 0);
	CHECK(vc_readable(p.ch->fd, 0) == 0);
	CHECK(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 2);
	/* A non-blocking channel reports EAGAIN when nothing is there. */
	CHECK(fcntl(p.ch->fd, F_SETFL, fcntl(p.ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(ibv_get_cq_event(p.ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
	/* An arm with a completion already waiting fires at once. */
	vc_send(&p, 3, 0);
	CHECK_OK(ibv_req_notify_cq(p.cq, 0));
	CHECK(vc_readable(p.ch->fd, 5000) == 1);
	CHECK_OK(ibv_get_cq_event(p.ch, &ev_cq, &ev_ctx));
	ibv_ack_cq_events(ev_cq, 1);
	CHECK(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 3);
}

/* A signaled SEND from a to b: a's send CQ and b's receive CQ each get one completion. */
static void vc_send_signaled(struct ibv_qp *a, struct ibv_qp *b, struct ibv_mr *mr, uint64_t id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)vc_mem[0], .length = 16, .lkey = mr->lkey};
	struct ibv_sge rsge = {.addr = (uintptr_t)vc_mem[1], .length = 64, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = id, .sg_list = &rsge, .num_sge = 1}, *rbad;
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;

	CHECK_OK(ibv_post_recv(b, &rw, &rbad));
	CHECK_OK(ibv_post_send(a, &wr, &bad));
}

/*
 * Several CQs on one channel: each armed CQ that fires is one event, and
 * get_cq_event hands out each exactly once (ibv_get_cq_event(3)); an event
 * of a CQ destroyed before it was taken is not handed out.
 */
static void test_channel_shared(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq[3], *ev_cq;
	struct ibv_qp *a, *b, *d, *e;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	void *ev_ctx;
	int seen[2] = {0, 0};

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	ch = ibv_create_comp_channel(c);
	CHECK(ch != NULL);
	th_defer(vq_destroy_channel_cb, ch);
	for (int i = 0; i < 2; i++) {
		cq[i] = ibv_create_cq(c, 16, &cq[i], ch, 0);
		CHECK(cq[i] != NULL);
		th_defer(vq_destroy_cq_cb, cq[i]);
	}
	mr = vq_mr(pd, vc_mem, sizeof(vc_mem), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	a = vq_qp(pd, IBV_QPT_RC, cq[0], cq[0], 16);
	b = vq_qp(pd, IBV_QPT_RC, cq[1], cq[1], 16);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	CHECK_OK(ibv_req_notify_cq(cq[0], 0));
	CHECK_OK(ibv_req_notify_cq(cq[1], 0));
	vc_send_signaled(a, b, mr, 1);
	for (int i = 0; i < 2; i++) {
		CHECK(vc_readable(ch->fd, 5000) == 1);
		CHECK_OK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
		CHECK((ev_cq == cq[0] && ev_ctx == &cq[0]) || (ev_cq == cq[1] && ev_ctx == &cq[1]));
		seen[ev_cq == cq[1]]++;
		ibv_ack_cq_events(ev_cq, 1);
	}
	CHECK(seen[0] == 1 && seen[1] == 1);
	CHECK(vc_readable(ch->fd, 0) == 0);
	CHECK(ibv_poll_cq(cq[0], 1, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	CHECK(ibv_poll_cq(cq[1], 1, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	/* A third CQ fires and is destroyed before its event is taken: nothing is handed out. */
	cq[2] = ibv_create_cq(c, 16, NULL, ch, 0);
	CHECK(cq[2] != NULL);
	d = ibv_create_qp(pd, &(struct ibv_qp_init_attr){.send_cq = cq[2], .recv_cq = cq[2], .qp_type = IBV_QPT_RC,
						  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
							  .max_recv_sge = 1}});
	e = vq_qp(pd, IBV_QPT_RC, cq[1], cq[1], 16);
	CHECK(d != NULL && e != NULL);
	CHECK_OK(vq_up(d, e->qp_num, 0, 0));
	CHECK_OK(vq_up(e, d->qp_num, 0, 0));
	CHECK_OK(ibv_req_notify_cq(cq[2], 0));
	vc_send_signaled(d, e, mr, 2);
	CHECK(vc_readable(ch->fd, 5000) == 1);
	CHECK_OK(ibv_destroy_qp(d));
	CHECK_OK(ibv_destroy_cq(cq[2]));
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
	CHECK(ibv_poll_cq(cq[1], 1, &wc) == 1 && wc.wr_id == 2);
}

/* Solicited-only: an unsolicited receive does not fire, a solicited one does. */
static void test_solicited(void)
{
	struct vc_pair p;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	vc_pair(&p, 16);
	CHECK_OK(ibv_req_notify_cq(p.cq, 1));
	vc_send(&p, 1, 0);
	CHECK(vc_readable(p.ch->fd, 0) == 0);
	CHECK(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 1);
	vc_send(&p, 2, IBV_SEND_SOLICITED);
	CHECK(vc_readable(p.ch->fd, 5000) == 1);
	CHECK_OK(ibv_get_cq_event(p.ch, &ev_cq, &ev_ctx));
	CHECK(ev_cq == p.cq);
	ibv_ack_cq_events(ev_cq, 1);
	CHECK(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 2);
}

/*
 * Armed, a completion, then polled and armed again before the event was
 * taken (UCX's wait loop does this): the event the first arm fired is still
 * delivered. Many rounds, each the arm racing the device passing the fire
 * on to the channel (once lost about one wait in ten under UCX's UD).
 */
static void test_rearm_before_event(void)
{
	struct vc_pair p;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	vc_pair(&p, 16);
	for (uint64_t i = 1; i <= 300; i++) {
		CHECK_OK(ibv_req_notify_cq(p.cq, 0));
		vc_send(&p, i, IBV_SEND_SIGNALED); /* signaled: the send queue's slot comes back */
		while (ibv_poll_cq(p.cq, 1, &wc) == 0)
			;
		CHECK(wc.wr_id == i && wc.status == IBV_WC_SUCCESS);
		while (ibv_poll_cq(p.scq, 1, &wc) == 0)
			;
		CHECK_OK(ibv_req_notify_cq(p.cq, 0)); /* the same sequence number: that arm fired */
		if (vc_readable(p.ch->fd, 5000) != 1) {
			CHECK(!"the fired arm's event was lost by the arm after it");
			return;
		}
		CHECK_OK(ibv_get_cq_event(p.ch, &ev_cq, &ev_ctx));
		CHECK(ev_cq == p.cq);
		ibv_ack_cq_events(ev_cq, 1);
		CHECK(ibv_poll_cq(p.cq, 1, &wc) == 0);
	}
}

/*
 * Armed for the next completion, then for solicited ones only (another
 * thread's arm, as UCX's async thread does): the CQ stays armed for the next
 * completion (IB: a solicited request does not narrow a pending next one).
 */
static void test_solicited_does_not_narrow(void)
{
	struct vc_pair p;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	vc_pair(&p, 16);
	CHECK_OK(ibv_req_notify_cq(p.cq, 0));
	CHECK_OK(ibv_req_notify_cq(p.cq, 1));
	vc_send(&p, 1, 0); /* not solicited */
	CHECK(vc_readable(p.ch->fd, 5000) == 1);
	CHECK_OK(ibv_get_cq_event(p.ch, &ev_cq, &ev_ctx));
	CHECK(ev_cq == p.cq);
	ibv_ack_cq_events(ev_cq, 1);
	CHECK(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 1);
	/* Solicited-only on its own stays so: an unsolicited completion makes no event. */
	CHECK_OK(ibv_req_notify_cq(p.cq, 1));
	vc_send(&p, 2, 0);
	while (ibv_poll_cq(p.cq, 1, &wc) == 0)
		;
	CHECK(wc.wr_id == 2 && vc_readable(p.ch->fd, 50) == 0);
}

/* More completions than the ring holds: the CQ reports IBV_EVENT_CQ_ERR once. */
static void test_overrun(void)
{
	struct ibv_async_event ev;
	struct vc_pair p;
	struct ibv_wc wc[4];

	vc_pair(&p, 1); /* two slots */
	for (int i = 0; i < 3; i++)
		vc_send(&p, (uint64_t)i, 0);
	CHECK(ibv_poll_cq(p.cq, 4, wc) == 2);
	CHECK(wc[0].wr_id == 0 && wc[1].wr_id == 1);
	CHECK(vc_readable(p.c->async_fd, 5000) == 1);
	CHECK_OK(ibv_get_async_event(p.c, &ev));
	CHECK(ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == p.cq);
	ibv_ack_async_event(&ev);
	vc_send(&p, 9, 0);
	CHECK(ibv_poll_cq(p.cq, 4, wc) == 1);
	CHECK(vc_readable(p.c->async_fd, 0) == 0);
}

/* The extended CQ: ENOENT when empty, then every completion through start/next and read_*. */
static uint64_t vc_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t vc_clock_ns(void)
{
	return vc_ns(CLOCK_MONOTONIC);
}

static void test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ax = {.cqe = 16,
					 .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
						     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK};
	uint64_t w0, w1;
	struct ibv_poll_cq_attr pa = {0};
	uint64_t t0, t1, ts_recv;
	struct ibv_context *c = vf_open();
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rw, *rbad;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *a, *b;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	cqx = ibv_create_cq_ex(c, &ax);
	CHECK(cqx != NULL);
	th_defer(vq_destroy_cq_cb, ibv_cq_ex_to_cq(cqx));
	mr = vq_mr(pd, vc_mem, sizeof(vc_mem), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	a = vq_qp(pd, IBV_QPT_RC, ibv_cq_ex_to_cq(cqx), ibv_cq_ex_to_cq(cqx), 8);
	b = vq_qp(pd, IBV_QPT_RC, ibv_cq_ex_to_cq(cqx), ibv_cq_ex_to_cq(cqx), 8);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	CHECK(ibv_start_poll(cqx, &pa) == ENOENT);
	sge = (struct ibv_sge){.addr = (uintptr_t)vc_mem[1], .length = 64, .lkey = mr->lkey};
	rw = (struct ibv_recv_wr){.wr_id = 10, .sg_list = &sge, .num_sge = 1};
	CHECK_OK(ibv_post_recv(b, &rw, &rbad));
	sge = (struct ibv_sge){.addr = (uintptr_t)vc_mem[0], .length = 24, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 20, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x1234)};
	w0 = vc_ns(CLOCK_REALTIME);
	t0 = vc_clock_ns();
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	t1 = vc_clock_ns();
	w1 = vc_ns(CLOCK_REALTIME);
	CHECK_OK(ibv_start_poll(cqx, &pa));
	CHECK(cqx->wr_id == 10 && cqx->status == IBV_WC_SUCCESS);
	/* The device clock is CLOCK_MONOTONIC in ns (hca_core_clock 1 GHz). */
	ts_recv = ibv_wc_read_completion_ts(cqx);
	CHECK(t0 <= ts_recv && ts_recv <= t1);
	/* The same instant in UTC (a second of slack for the clocks' steps between the reads). */
	CHECK(ibv_wc_read_completion_wallclock_ns(cqx) + 1000000000u >= w0 &&
	      ibv_wc_read_completion_wallclock_ns(cqx) <= w1 + 1000000000u);
	CHECK(ibv_wc_read_opcode(cqx) == IBV_WC_RECV && ibv_wc_read_byte_len(cqx) == 24);
	CHECK(ibv_wc_read_qp_num(cqx) == b->qp_num && ibv_wc_read_wc_flags(cqx) == IBV_WC_WITH_IMM);
	CHECK(ibv_wc_read_imm_data(cqx) == htobe32(0x1234));
	CHECK(ibv_wc_read_vendor_err(cqx) == 0 && ibv_wc_read_sl(cqx) == 0);
	CHECK_OK(ibv_next_poll(cqx));
	CHECK(cqx->wr_id == 20 && cqx->status == IBV_WC_SUCCESS && ibv_wc_read_opcode(cqx) == IBV_WC_SEND);
	CHECK(ts_recv <= ibv_wc_read_completion_ts(cqx) && ibv_wc_read_completion_ts(cqx) <= t1);
	CHECK(ibv_wc_read_qp_num(cqx) == a->qp_num);
	CHECK(ibv_next_poll(cqx) == ENOENT);
	ibv_end_poll(cqx);
	CHECK(ibv_start_poll(cqx, &pa) == ENOENT);
	pa.comp_mask = 1;
	CHECK(ibv_start_poll(cqx, &pa) == EINVAL);
}

/* ibv_query_rt_values_ex(3) and mlx5dv_get_clock_info: the raw clock is the CQEs' clock, its ns map to UTC. */
static void test_clocks(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct mlx5dv_clock_info ci;
	uint64_t t0, t1, raw, w0, w1, ns;

	CHECK(c != NULL);
	t0 = vc_clock_ns();
	CHECK_OK(ibv_query_rt_values_ex(c, &v));
	t1 = vc_clock_ns();
	raw = (uint64_t)v.raw_clock.tv_sec * 1000000000u + (uint64_t)v.raw_clock.tv_nsec;
	CHECK(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && t0 <= raw && raw <= t1);
	v.comp_mask = 1u << 3;
	CHECK(ibv_query_rt_values_ex(c, &v) == EINVAL);
	w0 = vc_ns(CLOCK_REALTIME);
	CHECK_OK(mlx5dv_get_clock_info(c, &ci));
	w1 = vc_ns(CLOCK_REALTIME);
	ns = mlx5dv_ts_to_ns(&ci, vc_clock_ns());
	CHECK(ns + 1000000000u >= w0 && ns <= w1 + 1000000000u);
}

int main(void)
{
	RUN(test_create);
	RUN(test_busy);
	RUN(test_channel_events);
	RUN(test_channel_shared);
	RUN(test_solicited);
	RUN(test_rearm_before_event);
	RUN(test_solicited_does_not_narrow);
	RUN(test_overrun);
	RUN(test_cq_ex);
	RUN(test_clocks);
	return th_summary("test_verbs_cq");
}
