/*
 * cm_conn — the calls that listen, connect, answer and disconnect.
 *
 * Each sends its CM message at once and returns; the outcome comes as an
 * event (rdma_cm(7)). A synchronous id waits for it in cm_complete().
 */
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base_clock.h"
#include "base_log.h"
#include "cm_int.h"

static int cm_fail(int rc)
{
	pthread_mutex_unlock(&cm_lock);
	errno = rc;
	return -1;
}

CM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *cid = (struct cm_id *)id;
	int rc;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (cid->state == CM_LISTEN) {
		cid->backlog = backlog; /* as the kernel: a second listen only changes the backlog */
		pthread_mutex_unlock(&cm_lock);
		return 0;
	}
	if (cid->state != CM_IDLE)
		return cm_fail(EINVAL);
	if (cid->psock < 0) {
		/* As the kernel: an unbound id listens on the IPv4 wildcard, on a free port. */
		struct sockaddr_in any = { .sin_family = AF_INET };

		rc = cm_bind_locked(cid, (struct sockaddr *)&any);
		if (rc != 0)
			return cm_fail(rc);
	}
	rc = cm_wire_listen(cid);
	if (rc != 0)
		return cm_fail(rc);
	cid->backlog = backlog;
	cid->state = CM_LISTEN;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

static uint32_t cm_random_psn(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)getpid() * 2654435761u;
	return r & 0xffffff;
}

/* Depths beyond the device's are refused, but for the RDMA_MAX_* values that ask for its most (rdma_connect(3)). */
static bool cm_param_ok(const struct cm_id *id, const struct rdma_conn_param *p)
{
	if (p == NULL || id->dev == NULL)
		return true;
	if (p->responder_resources != RDMA_MAX_RESP_RES && p->responder_resources > id->dev->max_resp_res)
		return false;
	return p->initiator_depth == RDMA_MAX_INIT_DEPTH || p->initiator_depth <= id->dev->max_init_depth;
}

static uint8_t cm_min8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/*
 * Keeps the caller's connection parameters (NULL: the kernel's defaults).
 * RDMA_MAX_* stand for the device's most, and on the passive side for no
 * more than the requester offered.
 */
static void cm_keep_param(struct cm_id *id, const struct rdma_conn_param *p)
{
	bool passive = id->state == CM_REQ_RCVD;

	/* Without parameters librdmacm offers the device's depths; one read in flight here. */
	id->responder_resources = p != NULL ? p->responder_resources : 1;
	id->initiator_depth = p != NULL ? p->initiator_depth : 1;
	/* The IB CM carries 3-bit counts: the kernel caps them at 7. */
	id->retry_count = p != NULL ? cm_min8(p->retry_count, 7) : 7;
	id->rnr_retry_count = p != NULL ? cm_min8(p->rnr_retry_count, 7) : 7;
	if (p == NULL || id->dev == NULL)
		return;
	if (p->responder_resources == RDMA_MAX_RESP_RES)
		id->responder_resources = passive ? cm_min8(id->remote.initiator_depth, id->dev->max_resp_res)
						  : id->dev->max_resp_res;
	if (p->initiator_depth == RDMA_MAX_INIT_DEPTH)
		id->initiator_depth = passive ? cm_min8(id->remote.responder_resources, id->dev->max_init_depth)
					      : id->dev->max_init_depth;
}

static void cm_msg_param(struct cm_msg *m, const struct rdma_conn_param *p, struct cm_id *id)
{
	m->responder_resources = id->responder_resources;
	m->initiator_depth = id->initiator_depth;
	m->retry_count = id->retry_count;
	m->rnr_retry_count = id->rnr_retry_count;
	if (p == NULL)
		return;
	m->flow_control = p->flow_control;
	m->srq = p->srq;
	if (id->id.qp == NULL)
		m->qpn = p->qp_num;
	m->pdata_len = p->private_data_len;
	if (p->private_data_len > 0)
		memcpy(m->pdata, p->private_data, p->private_data_len);
}

/*
 * How long a REQ waits for a listener that is not there yet: a REQ on a
 * wire is in flight for a while, and a listener set up meanwhile takes it.
 * Programs that agree on a moment out of band and then listen and connect
 * at once (perftest -R) rely on that.
 */
#define CM_LISTEN_GRACE_NS (200u * 1000u * 1000u)

/* Sends the id's REQ on a new connection: 0, ECONNREFUSED when nobody listens, or another errno. */
static int cm_send_req(struct cm_id *id)
{
	int rc = cm_wire_connect(id);

	if (rc != 0)
		return rc;
	rc = cm_wire_send(id, id->req);
	if (rc == 0)
		rc = cm_loop_watch(id, id->sock);
	if (rc != 0) {
		cm_loop_unwatch(id);
		return rc;
	}
	free(id->req);
	id->req = NULL;
	cm_timer_arm_response(id);
	return 0;
}

/* No listener took the REQ: the IB CM's answer for an unknown service ID. */
static void cm_refused(struct cm_id *id, int rc)
{
	bool ud = id->id.qp_type == IBV_QPT_UD;

	BASE_DBG("connect to port %u: %s", cm_addr_port((struct sockaddr *)&id->dst), strerror(rc));
	free(id->req);
	id->req = NULL;
	id->state = CM_REJECTED;
	if (rc == EAGAIN) /* the listening process takes nothing: the REQ would time out */
		cm_event_queue(id->ch, cm_event_new(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT));
	else if (ud)
		cm_event_queue(id->ch, cm_event_new(id, RDMA_CM_EVENT_UNREACHABLE, CM_SIDR_UNSUPPORTED));
	else
		cm_event_queue(id->ch, cm_event_new(id, RDMA_CM_EVENT_REJECTED, CM_REJ_INVALID_SERVICE_ID));
}

/* The CM thread's retry of a REQ waiting for its listener; false once it is sent or refused. */
bool cm_conn_retry(struct cm_id *id)
{
	int rc;

	if (id->req == NULL || id->state != CM_CONNECT)
		return false;
	rc = cm_send_req(id);
	if (rc == ECONNREFUSED && base_clock_ns() < id->req_until)
		return true;
	if (rc != 0)
		cm_refused(id, rc);
	return false;
}

static int cm_connect_locked(struct cm_id *id, struct rdma_conn_param *p)
{
	bool ud = id->id.qp_type == IBV_QPT_UD;
	int rc;

	if (id->state != CM_ROUTE_RESOLVED)
		return EINVAL;
	if (p != NULL && (p->private_data_len > (ud ? CM_SIDR_REQ_PDATA : CM_REQ_PDATA) ||
			  (p->private_data_len > 0 && p->private_data == NULL) || !cm_param_ok(id, p)))
		return EINVAL;
	id->req = malloc(sizeof(*id->req));
	if (id->req == NULL)
		return ENOMEM;
	cm_keep_param(id, p);
	id->psn = cm_random_psn();
	cm_wire_fill(id, id->req, ud ? CM_MSG_SIDR_REQ : CM_MSG_REQ);
	cm_msg_param(id->req, p, id);
	if (!ud)
		cm_ece_req(id, id->req);
	id->state = CM_CONNECT;
	rc = cm_send_req(id);
	if (rc == ECONNREFUSED) {
		id->req_until = base_deadline_ns(CM_LISTEN_GRACE_NS);
		if (cm_loop_retry_start() != 0)
			cm_refused(id, rc);
		return 0;
	}
	if (rc == EAGAIN || rc == ENOENT) {
		cm_refused(id, rc);
		return 0;
	}
	if (rc != 0) {
		free(id->req);
		id->req = NULL;
		id->state = CM_ROUTE_RESOLVED;
	}
	return rc;
}

CM_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	int rc;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_connect_locked((struct cm_id *)id, conn_param);
	if (rc != 0)
		return cm_fail(rc);
	pthread_mutex_unlock(&cm_lock);
	return cm_complete((struct cm_id *)id);
}

static int cm_accept_locked(struct cm_id *id, struct rdma_conn_param *p)
{
	bool ud = id->id.qp_type == IBV_QPT_UD;
	struct cm_msg m;
	int rc;

	if (id->state != CM_REQ_RCVD)
		return EINVAL;
	if (p != NULL && (p->private_data_len > (ud ? CM_SIDR_REP_PDATA : CM_REP_PDATA) ||
			  (p->private_data_len > 0 && p->private_data == NULL) || !cm_param_ok(id, p)))
		return EINVAL;
	cm_keep_param(id, p);
	if (p == NULL) {
		/* rdma_accept(3) without parameters: answer with what the peer asked for. */
		id->responder_resources = id->remote.initiator_depth;
		id->initiator_depth = id->remote.responder_resources;
	}
	id->retry_count = id->remote.retry_count;
	id->psn = cm_random_psn();
	if (!ud && id->id.qp != NULL && cm_qp_rtr_rts(id) != 0)
		return EINVAL;
	cm_wire_fill(id, &m, ud ? CM_MSG_SIDR_REP : CM_MSG_REP);
	cm_msg_param(&m, p, id);
	if (!ud)
		cm_ece_rep(id, &m);
	rc = id->peer_gone ? ECONNRESET : cm_wire_send(id, &m);
	if (rc != 0) {
		/* The requester is gone: its REP would time out. */
		cm_loop_unwatch(id);
		id->state = CM_DISCONNECTED;
		cm_event_queue(id->ch, cm_event_new(id, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT));
		return 0;
	}
	if (ud) {
		cm_loop_unwatch(id);
		id->state = CM_CONNECTED;
	} else {
		id->state = CM_ACCEPT;
		cm_timer_arm_response(id); /* for the RTU */
	}
	return 0;
}

CM_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *cid = (struct cm_id *)id;
	int rc;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_accept_locked(cid, conn_param);
	if (rc != 0)
		return cm_fail(rc);
	pthread_mutex_unlock(&cm_lock);
	/* A synchronous RC id waits for the RTU (ESTABLISHED); SIDR has none. */
	return id->qp_type == IBV_QPT_UD ? 0 : cm_complete(cid);
}

/*
 * Rejects a request (or a REP of an id without a QP of the CM's) with the IB
 * CM's reason; SIDR has one reject status whatever the reason (as the kernel).
 */
int cm_reject(struct cm_id *cid, const void *private_data, uint8_t private_data_len, uint32_t reason)
{
	bool ud;
	struct cm_msg m;

	if (cid == NULL || (private_data == NULL && private_data_len > 0)) {
		errno = EINVAL;
		return -1;
	}
	ud = cid->id.qp_type == IBV_QPT_UD;
	if (private_data_len > (ud ? CM_SIDR_REP_PDATA : CM_REJ_PDATA)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (cid->state != CM_REQ_RCVD && cid->state != CM_REP_RCVD)
		return cm_fail(EINVAL);
	cm_wire_fill(cid, &m, ud ? CM_MSG_SIDR_REP : CM_MSG_REJ);
	m.status = ud ? CM_SIDR_REJECT : reason;
	m.pdata_len = private_data_len;
	if (private_data_len > 0)
		memcpy(m.pdata, private_data, private_data_len);
	(void)cm_wire_send(cid, &m);
	cm_loop_unwatch(cid);
	cid->state = CM_REJECTED;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return cm_reject((struct cm_id *)id, private_data, private_data_len, CM_REJ_CONSUMER_DEFINED);
}

CM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *cid = (struct cm_id *)id;
	struct cm_msg m;
	int rc;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (cid->state != CM_REP_RCVD)
		return cm_fail(EINVAL);
	cm_wire_fill(cid, &m, CM_MSG_RTU);
	if (id->qp == NULL)
		m.qpn = 0;
	rc = cm_wire_send(cid, &m);
	if (rc != 0)
		return cm_fail(rc);
	cid->state = CM_CONNECTED;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *cid = (struct cm_id *)id;
	struct cm_msg m;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	switch (cid->state) {
	case CM_IDLE:
	case CM_ADDR_QUERY:
	case CM_ADDR_RESOLVED:
	case CM_ROUTE_RESOLVED:
	case CM_LISTEN:
	case CM_REQ_WAIT:
	case CM_REQ_RCVD:
		return cm_fail(EINVAL);
	default:
		break;
	}
	/* As librdmacm: the QP goes to ERR first, so its posted work flushes. */
	(void)cm_qp_err(cid);
	if (cid->state == CM_CONNECTED || cid->state == CM_ACCEPT || cid->state == CM_REP_RCVD) {
		cm_wire_fill(cid, &m, CM_MSG_DREQ);
		if (cm_wire_send(cid, &m) == 0) {
			cid->state = CM_DREQ_SENT;
			cm_timer_arm_response(cid); /* for the DREP */
		}
	} else if (cid->state == CM_DREQ_RCVD) {
		cm_wire_fill(cid, &m, CM_MSG_DREP);
		(void)cm_wire_send(cid, &m);
		cid->state = CM_DISCONNECTED;
	}
	pthread_mutex_unlock(&cm_lock);
	return 0;
}
