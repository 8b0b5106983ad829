/*
 * What the librdmacm test programs share: IPv4 addresses, the next event of
 * a channel within a hang guard, and one side of a connection (a channel,
 * an id, a PD and CQ for its QP).
 */
#ifndef SOFTDPU_RDMACM_FIXTURE_H_
#define SOFTDPU_RDMACM_FIXTURE_H_

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CMF_WAIT_MS 20000 /* hang guard only */

static inline struct sockaddr_in cmf_addr4(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* The next event of ch within wait_ms, or NULL. */
static inline struct rdma_cm_event *cmf_next_event(struct rdma_event_channel *ch, int wait_ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, wait_ms) != 1)
		return NULL;
	return rdma_get_cm_event(ch, &ev) == 0 ? ev : NULL;
}

/* Whether the next event is type with status; its copy in *out (acked: pointers in it are stale). */
static inline bool cmf_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status,
			      struct rdma_cm_event *out)
{
	struct rdma_cm_event *ev = cmf_next_event(ch, CMF_WAIT_MS);
	bool ok;

	if (ev == NULL) {
		fprintf(stderr, "no event (expected %s)\n", rdma_event_str(type));
		return false;
	}
	ok = ev->event == type && ev->status == status;
	if (!ok)
		fprintf(stderr, "event %s status %d, expected %s status %d\n", rdma_event_str(ev->event), ev->status,
			rdma_event_str(type), status);
	if (out != NULL)
		*out = *ev;
	rdma_ack_cm_event(ev);
	return ok;
}

/* Whether ch has no event queued now. */
static inline bool cmf_quiet(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

struct cmf_side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static inline void cmf_side_free(void *arg)
{
	struct cmf_side *s = arg;

	if (s->id != NULL && s->id->qp != NULL)
		rdma_destroy_qp(s->id);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->id != NULL)
		rdma_destroy_id(s->id);
	if (s->ch != NULL)
		rdma_destroy_event_channel(s->ch);
	memset(s, 0, sizeof(*s));
}

static inline int cmf_open(struct cmf_side *s)
{
	s->ch = rdma_create_event_channel();
	if (s->ch == NULL)
		return -1;
	return rdma_create_id(s->ch, &s->id, NULL, RDMA_PS_TCP);
}

/* An RC QP on id (which s owns or not) with s's own PD and CQ. */
static inline int cmf_qp(struct cmf_side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	s->pd = ibv_alloc_pd(id->verbs);
	s->cq = s->pd != NULL ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (s->cq == NULL)
		return -1;
	memset(&a, 0, sizeof(a));
	a.send_cq = s->cq;
	a.recv_cq = s->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return rdma_create_qp(id, s->pd, &a);
}

/* Binds s to ip and *port (0: a free one, written back) and listens with backlog. */
static inline int cmf_listen(struct cmf_side *s, const char *ip, uint16_t *port, int backlog)
{
	struct sockaddr_in a = cmf_addr4(ip, *port);

	if (rdma_bind_addr(s->id, (struct sockaddr *)&a) != 0 || rdma_listen(s->id, backlog) != 0)
		return -1;
	*port = ntohs(rdma_get_src_port(s->id));
	return *port != 0 ? 0 : -1;
}

/* The address and route of ip:port, with their events. */
static inline bool cmf_resolve(struct cmf_side *c, const char *ip, uint16_t port)
{
	struct sockaddr_in a = cmf_addr4(ip, port);

	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&a, 2000) != 0 ||
	    !cmf_expect(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL))
		return false;
	if (rdma_resolve_route(c->id, 2000) != 0 || !cmf_expect(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL))
		return false;
	return c->id->verbs != NULL;
}

#endif /* SOFTDPU_RDMACM_FIXTURE_H_ */
