/*
 * cm_ep — the endpoint helpers of rdma_getaddrinfo(3) and rdma_create_ep(3):
 * names through the system resolver, ids that are synchronous (their calls
 * wait for the outcome), and rdma_get_request(3) on a listener.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cm_int.h"

static int cm_gai_errno(int rc)
{
	if (rc == EAI_SYSTEM)
		return errno;
	if (rc == EAI_MEMORY)
		return ENOMEM;
	if (rc == EAI_FAMILY)
		return EAFNOSUPPORT;
	return EADDRNOTAVAIL;
}

static struct sockaddr *cm_dup_addr(const struct sockaddr *a, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c != NULL)
		memcpy(c, a, len);
	return c;
}

/* One result from the system resolver's first answer. */
static int cm_ai_fill(struct rdma_addrinfo *r, const struct addrinfo *ai, const struct rdma_addrinfo *hints)
{
	struct sockaddr **slot;
	socklen_t *len;

	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_port_space = hints != NULL && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	r->ai_qp_type = hints != NULL && hints->ai_qp_type ? hints->ai_qp_type
			: (r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
	slot = (r->ai_flags & RAI_PASSIVE) ? &r->ai_src_addr : &r->ai_dst_addr;
	len = (r->ai_flags & RAI_PASSIVE) ? &r->ai_src_len : &r->ai_dst_len;
	*slot = cm_dup_addr(ai->ai_addr, ai->ai_addrlen);
	if (*slot == NULL)
		return ENOMEM;
	*len = ai->ai_addrlen;
	return 0;
}

/* Neither node nor service: the hints alone say what the result is (rdma_getaddrinfo(3)). */
static int cm_ai_from_hints(struct rdma_addrinfo *r, const struct rdma_addrinfo *hints)
{
	r->ai_flags = hints->ai_flags;
	r->ai_family = hints->ai_family;
	r->ai_qp_type = hints->ai_qp_type;
	r->ai_port_space = hints->ai_port_space;
	if (hints->ai_dst_addr != NULL && hints->ai_dst_len) {
		r->ai_dst_addr = cm_dup_addr(hints->ai_dst_addr, hints->ai_dst_len);
		if (r->ai_dst_addr == NULL)
			return ENOMEM;
		r->ai_dst_len = hints->ai_dst_len;
	}
	return 0;
}

static int cm_ai_resolve(struct rdma_addrinfo *r, const char *node, const char *service,
			 const struct rdma_addrinfo *hints)
{
	struct addrinfo h, *ai = NULL;
	int rc;

	memset(&h, 0, sizeof(h));
	h.ai_family = hints != NULL && hints->ai_family ? hints->ai_family : AF_INET;
	h.ai_socktype = SOCK_STREAM;
	if (hints != NULL && (hints->ai_flags & RAI_PASSIVE))
		h.ai_flags |= AI_PASSIVE;
	if (hints != NULL && (hints->ai_flags & RAI_NUMERICHOST))
		h.ai_flags |= AI_NUMERICHOST;
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc != 0)
		return cm_gai_errno(rc);
	rc = cm_ai_fill(r, ai, hints);
	freeaddrinfo(ai);
	return rc;
}

CM_EXPORT int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
			       struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r;
	int rc;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL)) {
		errno = EINVAL;
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (node != NULL || service != NULL)
		rc = cm_ai_resolve(r, node, service, hints);
	else
		rc = cm_ai_from_hints(r, hints);
	/* The caller's source address stands when the lookup gave none. */
	if (rc == 0 && r->ai_src_addr == NULL && hints != NULL && hints->ai_src_addr != NULL && hints->ai_src_len) {
		r->ai_src_addr = cm_dup_addr(hints->ai_src_addr, hints->ai_src_len);
		r->ai_src_len = hints->ai_src_len;
		rc = r->ai_src_addr == NULL ? ENOMEM : 0;
	}
	if (rc != 0) {
		rdma_freeaddrinfo(r);
		errno = rc;
		return -1;
	}
	*res = r;
	return 0;
}

CM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

static int cm_ep_passive(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_qp_init_attr *attr)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (rdma_bind_addr(id, res->ai_src_addr) != 0)
		return -1;
	/* rdma_get_request() makes each request's QP with these. */
	if (attr != NULL) {
		cid->ep_attr = malloc(sizeof(*attr));
		if (cid->ep_attr == NULL) {
			errno = ENOMEM;
			return -1;
		}
		*cid->ep_attr = *attr;
	}
	return 0;
}

CM_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
			     struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	int rc;

	if (id == NULL || res == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	cid->pd = pd;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = cm_ep_passive(cid, res, qp_init_attr);
	} else {
		rc = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000);
		if (rc == 0)
			rc = rdma_resolve_route(cid, 2000);
		if (rc == 0 && qp_init_attr != NULL)
			rc = rdma_create_qp(cid, pd, qp_init_attr);
	}
	if (rc != 0) {
		int e = errno;

		rdma_destroy_id(cid);
		errno = e;
		return -1;
	}
	*id = cid;
	return 0;
}

CM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

CM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cm_id *l = (struct cm_id *)listen;
	struct rdma_cm_event *ev;
	struct cm_id *c;
	int rc;

	if (listen == NULL || id == NULL || !l->sync) {
		errno = EINVAL;
		return -1;
	}
	if (listen->event != NULL) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->status != 0 || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		rc = ev->status != 0 ? -ev->status : EINVAL;
		rdma_ack_cm_event(ev);
		errno = rc;
		return -1;
	}
	c = (struct cm_id *)ev->id;
	/* The request's id is synchronous too, on a channel of its own. */
	pthread_mutex_lock(&cm_lock);
	rc = cm_migrate_locked(c, NULL);
	pthread_mutex_unlock(&cm_lock);
	if (listen->pd != NULL)
		c->id.pd = listen->pd;
	if (rc == 0 && l->ep_attr != NULL) {
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(&c->id, listen->pd, &a) != 0)
			rc = errno;
	}
	if (rc != 0) {
		rdma_ack_cm_event(ev);
		rdma_destroy_id(&c->id);
		errno = rc;
		return -1;
	}
	c->id.event = ev;
	*id = &c->id;
	return 0;
}
