/*
 * Fuzz target: what a peer's bytes do to a CM id (src/rdmacm/cm_check.c and
 * cm_proto.c), through the entry the CM thread uses: the bytes received
 * (recv truncates at struct cm_msg, MSG_TRUNC tells the real length) pass
 * cm_msg_check or are dropped, and what passes goes to cm_proto_recv. The
 * id starts in any state, RC or UD, with or without its listener, a QP, a
 * full backlog; the layers under cm_proto.c are stand-ins here that record
 * the events and the id's end. After each message the id is freed, or in a
 * state its old one may lead to, with at most one event, and a
 * CONNECT_REQUEST only for a well-formed REQ of the listener's kind.
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cm_int.h"

#define FZ_MAX_EVENTS 8

static struct cm_dev fz_dev;
static struct cm_channel fz_ch;
static bool fz_freed, fz_full, fz_hold_ok, fz_rts_fails;
static int fz_nev;
static enum rdma_cm_event_type fz_ev[FZ_MAX_EVENTS];

/* The stand-ins for the layers under cm_proto.c. */
struct cm_event *cm_event_new(struct cm_id *id, enum rdma_cm_event_type type, int status)
{
	struct cm_event *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = id;
	return e;
}

void cm_event_pdata(struct cm_event *e, const void *data, uint8_t len, uint8_t full)
{
	if (len > 0)
		memcpy(e->pdata, data, len);
	e->ev.param.conn.private_data = full ? e->pdata : NULL;
	e->ev.param.conn.private_data_len = full;
}

void cm_event_queue(struct cm_channel *ch, struct cm_event *e)
{
	(void)ch;
	if (e == NULL)
		return;
	if (fz_nev < FZ_MAX_EVENTS)
		fz_ev[fz_nev] = e->ev.event;
	fz_nev++;
	free(e);
}

struct cm_id *cm_id_alloc_locked(struct cm_channel *ch, void *context, enum rdma_port_space ps,
				 enum ibv_qp_type qp_type)
{
	(void)ch, (void)context, (void)ps, (void)qp_type;
	return NULL;
}

int cm_loop_watch(struct cm_id *id, int fd)
{
	(void)id, (void)fd;
	return EINVAL;
}

void cm_loop_unwatch(struct cm_id *id)
{
	id->sock = -1;
}

void cm_id_free_locked(struct cm_id *id)
{
	(void)id;
	fz_freed = true;
}

void cm_timer_arm_response(struct cm_id *id)
{
	(void)id;
}

void cm_wire_fill(struct cm_id *id, struct cm_msg *m, uint8_t type)
{
	(void)id;
	memset(m, 0, sizeof(*m));
	m->type = type;
}

int cm_wire_send(struct cm_id *id, struct cm_msg *m)
{
	(void)m;
	return id->sock < 0 ? ENOTCONN : 0;
}

bool cm_backlog_full(const struct cm_id *l)
{
	(void)l;
	return fz_full;
}

bool cm_backlog_hold(struct cm_id *c, const struct cm_msg *m)
{
	(void)c, (void)m;
	return fz_hold_ok;
}

struct cm_dev *cm_resolve_local(const struct sockaddr *addr)
{
	return addr->sa_family == AF_INET ? &fz_dev : NULL;
}

struct cm_dev *cm_dev_first(void)
{
	return &fz_dev;
}

bool cm_addr_is_any(const struct sockaddr *addr)
{
	return addr->sa_family == AF_INET && ((const struct sockaddr_in *)addr)->sin_addr.s_addr == 0;
}

void cm_id_bind_dev(struct cm_id *id, struct cm_dev *dev)
{
	id->dev = dev;
}

void cm_ece_recv(struct cm_id *id, const struct cm_msg *m)
{
	id->remote_ece.vendor_id = m->ece_vendor;
	id->remote_ece.options = m->ece_options;
}

void cm_ud_ah_attr(struct cm_id *id, struct ibv_ah_attr *ah)
{
	(void)id;
	memset(ah, 0, sizeof(*ah));
}

int cm_qp_rtr_rts(struct cm_id *id)
{
	(void)id;
	return fz_rts_fails ? EINVAL : 0;
}

/* Whether an id may go from state a to b on one message (cm_proto.c's transitions, as the IB CM has them). */
static bool fz_legal(enum cm_state a, enum cm_state b)
{
	if (a == b)
		return true;
	switch (a) {
	case CM_REQ_WAIT:
		return b == CM_REQ_RCVD;
	case CM_CONNECT:
		return b == CM_REP_RCVD || b == CM_CONNECTED || b == CM_REJECTED;
	case CM_ACCEPT:
		return b == CM_CONNECTED || b == CM_REJECTED || b == CM_DREQ_RCVD;
	case CM_CONNECTED:
	case CM_REP_RCVD:
		return b == CM_DREQ_RCVD;
	case CM_DREQ_SENT:
		return b == CM_DISCONNECTED;
	default:
		return false;
	}
}

/* The one event a message may give in state a, landing in b. */
static bool fz_event_ok(enum cm_state a, enum cm_state b, const struct cm_msg *m, bool ud)
{
	if (fz_nev == 0)
		return true;
	if (fz_nev > 1)
		return false;
	switch (fz_ev[0]) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return a == CM_REQ_WAIT && b == CM_REQ_RCVD && cm_msg_req_addrs(m) &&
		       (m->type == CM_MSG_SIDR_REQ) == ud && (m->type == CM_MSG_REQ || m->type == CM_MSG_SIDR_REQ);
	case RDMA_CM_EVENT_ESTABLISHED:
		return (a == CM_CONNECT && (m->type == (ud ? CM_MSG_SIDR_REP : CM_MSG_REP))) ||
		       (a == CM_ACCEPT && m->type == CM_MSG_RTU);
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		return a == CM_CONNECT && !ud && m->type == CM_MSG_REP;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return a == CM_CONNECT && !ud && m->type == CM_MSG_REP && fz_rts_fails;
	case RDMA_CM_EVENT_REJECTED:
		return (a == CM_CONNECT || a == CM_ACCEPT) && m->type == CM_MSG_REJ;
	case RDMA_CM_EVENT_UNREACHABLE:
		return a == CM_CONNECT && ud && m->type == CM_MSG_SIDR_REP && m->status != 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		return m->type == CM_MSG_DREQ || (a == CM_DREQ_SENT && m->type == CM_MSG_DREP);
	default:
		return false;
	}
}

static void fz_addr(struct sockaddr_storage *ss, uint8_t sel)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4791) };

	memset(ss, 0, sizeof(*ss));
	if (sel & 1)
		a.sin_addr.s_addr = htonl(0x7f000001);
	memcpy(ss, &a, sizeof(a));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cm_id id, listener;
	static struct ibv_qp qp;
	size_t at = 2;
	bool ud;

	if (size < 2)
		return 0;
	memset(&id, 0, sizeof(id));
	memset(&listener, 0, sizeof(listener));
	fz_freed = false;
	id.state = (enum cm_state)(data[0] % (CM_REJECTED + 1));
	ud = data[1] & 1;
	id.id.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC;
	id.ch = &fz_ch;
	id.sock = 3; /* never used as a descriptor here: the stand-ins send nothing */
	id.psock = -1;
	id.id.qp = (data[1] & 2) ? &qp : NULL;
	listener.state = (data[1] & 4) ? CM_IDLE : CM_LISTEN;
	listener.id.qp_type = id.id.qp_type;
	listener.ch = &fz_ch;
	fz_addr(&listener.src, data[1] >> 6);
	id.listener = (data[1] & 8) ? NULL : &listener;
	fz_full = data[1] & 16;
	fz_hold_ok = data[1] & 32;
	fz_rts_fails = data[1] & 64;
	while (at < size && !fz_freed) {
		/* A length byte (high bit: exactly a message), then that many bytes as the peer sent them. */
		size_t n = data[at] & 0x80 ? sizeof(struct cm_msg) : data[at] * 8u;
		uint8_t *buf = malloc(n + 1);
		struct cm_msg m;
		enum cm_state before = id.state;

		at++;
		for (size_t i = 0; i < n; i++)
			buf[i] = at + i < size ? data[at + i] : 0;
		at += n;
		memset(&m, 0, sizeof(m));
		memcpy(&m, buf, n < sizeof(m) ? n : sizeof(m));
		free(buf);
		if (!cm_msg_check(&m, n))
			continue;
		fz_nev = 0;
		cm_proto_recv(&id, &m);
		if (fz_freed) {
			if (before != CM_REQ_WAIT || fz_nev != 0)
				abort();
			break;
		}
		if (!fz_legal(before, id.state) || !fz_event_ok(before, id.state, &m, ud))
			abort();
		if (id.state == CM_REQ_RCVD && before == CM_REQ_WAIT &&
		    cm_addr_port((const struct sockaddr *)&id.src) != cm_addr_port((const struct sockaddr *)&listener.src))
			abort();
	}
	return 0;
}
