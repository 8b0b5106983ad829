/*
 * rs_wait — an rsocket's progress outside the data calls: its CM events
 * (connection established, refused, ended; a listener's requests) and the
 * wait of a blocking call on its CQ channel and event channel.
 */
#include <errno.h>
#include <stdlib.h>

#include "base_log.h"
#include "rs_int.h"

static void rs_queue_req(struct rs *rs, struct rdma_cm_event *ev)
{
	struct rs_req *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		(void)rdma_reject(ev->id, NULL, 0);
		(void)rdma_ack_cm_event(ev);
		return;
	}
	r->ev = ev;
	*rs->reqs_tail = r;
	rs->reqs_tail = &r->next;
}

static void rs_fail(struct rs *rs, int err)
{
	if (rs->state == RS_CONNECTING)
		rs->so_error = err;
	rs->err = err;
	rs->state = RS_CLOSED;
}

/* The peer's REP came with the ESTABLISHED event of the active side. */
static void rs_on_established(struct rs *rs, const struct rdma_cm_event *ev)
{
	if (rs->state == RS_CONNECTING) {
		if (rs_hello_take(rs, ev->param.conn.private_data, ev->param.conn.private_data_len) != 0) {
			(void)rdma_disconnect(rs->id);
			rs_fail(rs, ECONNREFUSED);
			return;
		}
		rs->state = RS_CONNECTED;
	} else if (rs->state == RS_ACCEPTING) {
		rs->state = RS_CONNECTED;
	}
}

static void rs_on_event(struct rs *rs, struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		rs_queue_req(rs, ev);
		return; /* acked when accepted or refused */
	case RDMA_CM_EVENT_ESTABLISHED:
		rs_on_established(rs, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rs_fail(rs, ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rs_fail(rs, ev->status == -ETIMEDOUT ? ETIMEDOUT : ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* The peer closed, or died: flush what is posted (the QP goes to ERR). */
		(void)rdma_disconnect(rs->id);
		rs->disconnected = true;
		if (rs->state != RS_CONNECTED)
			rs_fail(rs, ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		(void)rdma_disconnect(rs->id);
		rs->disconnected = true;
		rs->err = ENODEV;
		break;
	default:
		break;
	}
	(void)rdma_ack_cm_event(ev);
}

/* Takes the CM events and completions there are, without waiting. */
int rs_process(struct rs *rs)
{
	struct rdma_cm_event *ev;

	rs_poll_cq(rs);
	while (rdma_get_cm_event(rs->ch, &ev) == 0) {
		rs_on_event(rs, ev);
		/* What completed before a disconnect counts: take it before the flush. */
		rs_poll_cq(rs);
	}
	rs_give_credits(rs, false);
	return 0;
}

static void rs_cq_events(struct rs *rs)
{
	struct ibv_cq *cq;
	void *ctx;

	while (rs->cc != NULL && ibv_get_cq_event(rs->cc, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		rs->armed = false;
	}
}

/* Arms the CQ; 1 when completions came meanwhile (no need to sleep). */
int rs_arm(struct rs *rs)
{
	if (rs->cq == NULL || rs->armed)
		return 0;
	if (ibv_req_notify_cq(rs->cq, 0) != 0)
		return 0;
	rs->armed = true;
	return rs_poll_cq(rs) > 0;
}

/* A blocking call found nothing to do: sleeps (lock dropped) until the socket has news. */
int rs_wait(struct rs *rs, short events)
{
	struct pollfd p[2] = { { .fd = rs->ch->fd, .events = POLLIN }, { .fd = -1, .events = POLLIN } };
	int ret;

	(void)events;
	/* The peer may be waiting for what was read: credits go before sleeping. */
	rs_give_credits(rs, false);
	if (rs_arm(rs))
		return 0;
	if (rs->polling) {
		/*
		 * Another thread (a reader while this one writes) sleeps on the
		 * channels: it would take the wake-up meant for this one too.
		 */
		pthread_cond_wait(&rs->progress, &rs->lock);
		return 0;
	}
	if (rs->cc != NULL)
		p[1].fd = rs->cc->fd;
	rs->polling = true;
	rs_unlock(rs);
	ret = poll(p, 2, -1);
	pthread_mutex_lock(&rs->lock);
	rs->polling = false;
	pthread_cond_broadcast(&rs->progress);
	if (ret < 0)
		return -1;
	rs_cq_events(rs);
	return rs_process(rs);
}

/* rpoll's part: drops the CQ events its poll woke for. */
void rs_woken(struct rs *rs)
{
	rs_cq_events(rs);
}
