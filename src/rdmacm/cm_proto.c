/*
 * cm_proto — what a message from the peer, or the peer's death, does to an
 * id, in the IB CM's terms: the events and their status codes are those the
 * kernel's RDMA CM reports for an IB or RoCE port (all under cm_lock).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base_log.h"
#include "cm_int.h"

static void cm_remote_from(struct cm_remote *r, const struct cm_msg *m)
{
	r->qpn = m->qpn;
	r->psn = m->psn;
	r->qkey = m->qkey;
	r->lid = m->lid;
	memcpy(r->gid.raw, m->gid, sizeof(r->gid.raw));
	r->responder_resources = m->responder_resources;
	r->initiator_depth = m->initiator_depth;
	r->retry_count = m->retry_count;
	r->rnr_retry_count = m->rnr_retry_count;
	r->flow_control = m->flow_control;
	r->srq = m->srq;
}

/* The connection parameters of an event, seen from the receiver (depths swapped, as the kernel does). */
static void cm_event_conn(struct cm_event *e, const struct cm_msg *m, uint8_t full)
{
	struct rdma_conn_param *c = &e->ev.param.conn;

	cm_event_pdata(e, m->pdata, m->pdata_len, full);
	c->responder_resources = m->initiator_depth;
	c->initiator_depth = m->responder_resources;
	c->flow_control = m->flow_control;
	c->retry_count = m->retry_count;
	c->rnr_retry_count = m->rnr_retry_count;
	c->srq = m->srq;
	c->qp_num = m->qpn;
}

static void cm_queue(struct cm_id *id, enum rdma_cm_event_type type, int status)
{
	cm_event_queue(id->ch, cm_event_new(id, type, status));
}

static void cm_refuse(struct cm_id *c, bool ud, uint32_t reason);

/* A socket accepted on a listener: a hidden id until its REQ comes. */
void cm_proto_accept_sock(struct cm_id *listener, int fd)
{
	struct cm_id *c = cm_id_alloc_locked(listener->ch, listener->id.context, listener->id.ps,
					     listener->id.qp_type);

	if (c == NULL) {
		close(fd);
		return;
	}
	c->sock = fd;
	c->sync = false; /* on the listener's channel, not owning it (rdma_get_request moves it) */
	c->listener = listener;
	c->state = CM_REQ_WAIT;
	if (cm_loop_watch(c, fd) != 0) {
		cm_id_free_locked(c);
		return;
	}
	/* A connection that sends no REQ is closed when the CM's response timeout passes (cm_timer.c). */
	cm_timer_arm_response(c);
}

/* Whether the listener takes a request for dst: its own IP, or any when bound to the wildcard. */
static bool cm_listener_takes(const struct cm_id *l, const struct sockaddr *dst)
{
	const struct sockaddr *src = (const struct sockaddr *)&l->src;

	return l->state == CM_LISTEN && (cm_addr_is_any(src) || cm_addr_same_ip(src, dst));
}

/* Answers a request as the IB CM does when no listener has its service ID, and frees the id. */
void cm_proto_refuse(struct cm_id *c)
{
	cm_refuse(c, c->id.qp_type == IBV_QPT_UD, CM_REJ_INVALID_SERVICE_ID);
}

/* Rejects with reason (UD: the SIDR status saying no QP has the service) and frees the id. */
static void cm_refuse(struct cm_id *c, bool ud, uint32_t reason)
{
	struct cm_msg m;

	cm_wire_fill(c, &m, ud ? CM_MSG_SIDR_REP : CM_MSG_REJ);
	m.status = ud ? CM_SIDR_UNSUPPORTED : reason;
	(void)cm_wire_send(c, &m);
	cm_id_free_locked(c);
}

/*
 * A REQ the kernel's RDMA CM would not take (its addresses not of one IP
 * family, a SIDR REQ for a connected id or a REQ for a UD one): the
 * consumer's handler fails, and the IB CM rejects as the consumer did (a
 * SIDR REQ: its REP's REJECT status). The application sees nothing.
 */
static void cm_refuse_malformed(struct cm_id *c, bool ud)
{
	struct cm_msg r;

	cm_wire_fill(c, &r, ud ? CM_MSG_SIDR_REP : CM_MSG_REJ);
	r.status = ud ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED;
	(void)cm_wire_send(c, &r);
	cm_id_free_locked(c);
}

static void cm_on_req(struct cm_id *c, const struct cm_msg *m, bool ud)
{
	struct cm_id *l = c->listener;
	struct cm_event *e;
	struct cm_dev *dev;

	if (!cm_msg_req_addrs(m) || ud != (c->id.qp_type == IBV_QPT_UD)) {
		cm_refuse_malformed(c, ud);
		return;
	}
	if (l == NULL || l->state != CM_LISTEN) {
		cm_refuse(c, ud, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	/*
	 * A listener has the port but not this IP: the IB CM found a listener
	 * for the service ID and the RDMA CM above it refused, so the consumer
	 * rejects (28), as the kernel does.
	 */
	if (!cm_listener_takes(l, (const struct sockaddr *)&m->dst)) {
		cm_refuse(c, ud, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	/* Beyond the backlog the kernel drops the REQ for the requester to retry: held here. */
	if (cm_backlog_full(l)) {
		if (!cm_backlog_hold(c, m))
			cm_refuse(c, ud, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	dev = l->dev != NULL ? l->dev : cm_resolve_local((const struct sockaddr *)&m->dst);
	if (dev == NULL)
		dev = cm_dev_first();
	if (dev == NULL) {
		cm_refuse(c, ud, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	memcpy(&c->src, &m->dst, sizeof(c->src));
	memcpy(&c->dst, &m->src, sizeof(c->dst));
	/* The kernel takes the port from the service ID the REQ reached, not from its header. */
	cm_addr_set_port((struct sockaddr *)&c->src, cm_addr_port((const struct sockaddr *)&l->src));
	cm_id_bind_dev(c, dev); /* after src: the source GID is its address's entry */
	memcpy(&c->id.route.addr.src_addr, &c->src, cm_addr_len((struct sockaddr *)&c->src));
	memcpy(&c->id.route.addr.dst_addr, &c->dst, cm_addr_len((struct sockaddr *)&c->dst));
	memcpy(c->id.route.addr.addr.ibaddr.dgid.raw, m->gid, 16);
	c->id.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	cm_remote_from(&c->remote, m);
	cm_ece_recv(c, m);
	c->state = CM_REQ_RCVD;
	e = cm_event_new(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (e == NULL) {
		cm_refuse(c, ud, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	e->ev.listen_id = &l->id;
	if (ud) {
		cm_event_pdata(e, m->pdata, m->pdata_len, CM_SIDR_REQ_PDATA);
		e->ev.param.ud.private_data = e->pdata;
		e->ev.param.ud.private_data_len = CM_SIDR_REQ_PDATA;
		cm_ud_ah_attr(c, &e->ev.param.ud.ah_attr); /* the path back to the requester */
		e->ev.param.ud.qp_num = m->qpn;
		e->ev.param.ud.qkey = m->qkey;
	} else {
		cm_event_conn(e, m, CM_REQ_PDATA);
	}
	cm_event_queue(c->ch, e);
}

static void cm_on_rep(struct cm_id *id, const struct cm_msg *m)
{
	struct cm_event *e;
	struct cm_msg rtu;

	cm_remote_from(&id->remote, m);
	cm_ece_recv(id, m);
	memcpy(id->id.route.addr.addr.ibaddr.dgid.raw, m->gid, 16);
	if (id->id.qp == NULL) {
		/* The application owns the QP: it moves it and calls rdma_establish(). */
		id->state = CM_REP_RCVD;
		e = cm_event_new(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	} else if (cm_qp_rtr_rts(id) != 0) {
		cm_wire_fill(id, &rtu, CM_MSG_REJ);
		rtu.status = CM_REJ_CONSUMER_DEFINED;
		(void)cm_wire_send(id, &rtu);
		cm_loop_unwatch(id);
		id->state = CM_REJECTED;
		e = cm_event_new(id, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL);
	} else {
		cm_wire_fill(id, &rtu, CM_MSG_RTU);
		(void)cm_wire_send(id, &rtu);
		id->state = CM_CONNECTED;
		e = cm_event_new(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	}
	if (e != NULL && e->ev.event != RDMA_CM_EVENT_CONNECT_ERROR)
		cm_event_conn(e, m, CM_REP_PDATA);
	cm_event_queue(id->ch, e);
}

static void cm_on_rej(struct cm_id *id, const struct cm_msg *m)
{
	struct cm_event *e = cm_event_new(id, RDMA_CM_EVENT_REJECTED, (int)m->status);

	if (e != NULL)
		cm_event_pdata(e, m->pdata, m->pdata_len, CM_REJ_PDATA);
	cm_loop_unwatch(id);
	id->state = CM_REJECTED;
	cm_event_queue(id->ch, e);
}

static void cm_on_sidr_rep(struct cm_id *id, const struct cm_msg *m)
{
	struct cm_event *e;

	cm_loop_unwatch(id); /* SIDR is one exchange: no connection to keep */
	if (m->status != 0) {
		id->state = CM_REJECTED;
		e = cm_event_new(id, RDMA_CM_EVENT_UNREACHABLE, (int)m->status);
		if (e != NULL)
			cm_event_pdata(e, m->pdata, m->pdata_len, CM_SIDR_REP_PDATA);
		cm_event_queue(id->ch, e);
		return;
	}
	cm_remote_from(&id->remote, m);
	memcpy(id->id.route.addr.addr.ibaddr.dgid.raw, m->gid, 16);
	id->state = CM_CONNECTED;
	e = cm_event_new(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (e == NULL)
		return;
	cm_event_pdata(e, m->pdata, m->pdata_len, CM_SIDR_REP_PDATA);
	e->ev.param.ud.private_data = e->pdata;
	e->ev.param.ud.private_data_len = CM_SIDR_REP_PDATA;
	cm_ud_ah_attr(id, &e->ev.param.ud.ah_attr);
	e->ev.param.ud.qp_num = m->qpn;
	e->ev.param.ud.qkey = m->qkey;
	cm_event_queue(id->ch, e);
}

static void cm_on_dreq(struct cm_id *id)
{
	struct cm_msg m;

	if (id->state == CM_DREQ_SENT) {
		/* Both sides disconnected at once: answer, and this side is done too. */
		cm_wire_fill(id, &m, CM_MSG_DREP);
		(void)cm_wire_send(id, &m);
		id->state = CM_DISCONNECTED;
		cm_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	} else if (id->state == CM_CONNECTED || id->state == CM_ACCEPT || id->state == CM_REP_RCVD) {
		id->state = CM_DREQ_RCVD;
		cm_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	}
}

void cm_proto_recv(struct cm_id *id, const struct cm_msg *m)
{
	switch (m->type) {
	case CM_MSG_REQ:
	case CM_MSG_SIDR_REQ:
		if (id->state == CM_REQ_WAIT)
			cm_on_req(id, m, m->type == CM_MSG_SIDR_REQ);
		return;
	case CM_MSG_REP: /* the answer of a connection, not of a UD lookup: and the other way */
		if (id->state == CM_CONNECT && id->id.qp_type != IBV_QPT_UD)
			cm_on_rep(id, m);
		return;
	case CM_MSG_SIDR_REP:
		if (id->state == CM_CONNECT && id->id.qp_type == IBV_QPT_UD)
			cm_on_sidr_rep(id, m);
		return;
	case CM_MSG_REJ:
		if (id->state == CM_CONNECT || id->state == CM_ACCEPT)
			cm_on_rej(id, m);
		return;
	case CM_MSG_RTU:
		if (id->state == CM_ACCEPT) {
			id->state = CM_CONNECTED;
			cm_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		}
		return;
	case CM_MSG_DREQ:
		cm_on_dreq(id);
		return;
	case CM_MSG_DREP:
		if (id->state == CM_DREQ_SENT) {
			id->state = CM_DISCONNECTED;
			cm_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		}
		return;
	default:
		BASE_WARN("an unknown CM message %u dropped", m->type);
	}
}

/* The peer's socket closed: its process ended or destroyed its id. */
void cm_proto_eof(struct cm_id *id)
{
	cm_loop_unwatch(id);
	switch (id->state) {
	case CM_REQ_WAIT:
		cm_id_free_locked(id);
		return;
	case CM_REQ_RCVD:
		id->peer_gone = true;
		return;
	case CM_CONNECT:
		/* No REP will come: the IB CM's REQ times out. */
		id->state = CM_REJECTED;
		cm_queue(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return;
	case CM_ACCEPT:
		id->state = CM_DISCONNECTED;
		cm_queue(id, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT);
		return;
	case CM_CONNECTED:
	case CM_REP_RCVD:
	case CM_DREQ_SENT:
		id->state = CM_DISCONNECTED;
		cm_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	default:
		return;
	}
}
