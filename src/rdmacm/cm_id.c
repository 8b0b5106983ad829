/*
 * cm_id — creating, binding, resolving and destroying CM ids.
 *
 * Every id is on one list, named to the CM thread by a serial number that is
 * never reused, so a message for an id destroyed in the meantime finds
 * nothing instead of freed memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cm_int.h"
#include "hw_gid.h"

pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cm_list cm_ids = { &cm_ids, &cm_ids };
static uint64_t cm_next_serial = 1;

int cm_ps_qp_type(enum rdma_port_space ps, enum ibv_qp_type *type)
{
	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		*type = IBV_QPT_RC;
		return 0;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		*type = IBV_QPT_UD;
		return 0;
	default:
		return EINVAL;
	}
}

struct cm_id *cm_id_alloc_locked(struct cm_channel *ch, void *context, enum rdma_port_space ps,
				 enum ibv_qp_type qp_type)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->id.channel = &ch->ch;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = qp_type;
	id->id.route.path_rec = &id->path;
	id->ch = ch;
	id->sock = -1;
	id->psock = -1;
	id->sync = ch->sync;
	pthread_cond_init(&id->acked, NULL);
	id->serial = cm_next_serial++;
	cm_list_add_tail(&cm_ids, &id->link);
	return id;
}

struct cm_id *cm_id_alloc(struct cm_channel *ch, void *context, enum rdma_port_space ps,
			  enum ibv_qp_type qp_type)
{
	struct cm_id *id;

	cm_loop_atfork();
	pthread_mutex_lock(&cm_lock);
	id = cm_id_alloc_locked(ch, context, ps, qp_type);
	pthread_mutex_unlock(&cm_lock);
	return id;
}

struct cm_id *cm_id_by_serial(uint64_t serial)
{
	struct cm_list *l;

	for (l = cm_ids.next; l != &cm_ids; l = l->next) {
		struct cm_id *id = cm_container_of(l, struct cm_id, link);

		if (id->serial == serial)
			return id;
	}
	return NULL;
}

/*
 * In a forked child: closes its copies of the parent's sockets, so the
 * parent's peers still see the parent's death as EOF, and its ports free.
 */
void cm_ids_forget_sockets(void)
{
	struct cm_list *l;

	for (l = cm_ids.next; l != &cm_ids; l = l->next) {
		struct cm_id *id = cm_container_of(l, struct cm_id, link);

		if (id->sock >= 0)
			close(id->sock);
		if (id->psock >= 0)
			close(id->psock);
		id->sock = id->psock = -1;
	}
}

/* Retries the REQs waiting for their listeners or their listener's room (cm_lock held); how many still wait. */
int cm_ids_retry(void)
{
	struct cm_list *l, *next;
	int n = 0;

	for (l = cm_ids.next; l != &cm_ids; l = next) {
		struct cm_id *id = cm_container_of(l, struct cm_id, link);

		next = l->next; /* a held REQ delivered or dropped may free its id */
		n += cm_conn_retry(id) || cm_backlog_retry(id);
	}
	return n;
}

void cm_id_bind_dev(struct cm_id *id, struct cm_dev *dev)
{
	id->dev = dev;
	id->id.verbs = dev != NULL ? dev->verbs : NULL;
	id->id.port_num = dev != NULL ? dev->port_num : 0;
	if (dev == NULL)
		return;
	cm_sgid_pick(id);
	if (id->id.pd == NULL)
		id->id.pd = dev->pd;
}

/* Frees id and what hangs on it (cm_lock held; nobody holds its events). */
void cm_id_free_locked(struct cm_id *id)
{
	struct cm_list *l, *next;

	cm_loop_unwatch(id);
	cm_timer_disarm(id);
	if (id->psock >= 0)
		close(id->psock);
	cm_channel_drop_events(id->ch, id);
	cm_mcast_free_locked(id);
	cm_list_del(&id->link);
	/* The requests that came in on a listener outlive it, but not those nobody saw. */
	for (l = cm_ids.next; l != &cm_ids; l = next) {
		struct cm_id *c = cm_container_of(l, struct cm_id, link);

		next = l->next;
		if (c->listener != id)
			continue;
		c->listener = NULL;
		if (c->state == CM_REQ_WAIT) {
			cm_proto_refuse(c);
			next = cm_ids.next; /* the walk restarts: refusing c freed it */
		}
	}
	if (id->sync)
		cm_channel_free(id->ch);
	pthread_cond_destroy(&id->acked);
	free(id->ep_attr);
	free(id->req);
	free(id);
}

/* Frees id; a request never answered is rejected first, as the IB CM does when its id goes. */
void cm_id_drop_locked(struct cm_id *id)
{
	if (id->state == CM_REQ_RCVD && id->sock >= 0) {
		struct cm_msg m;
		bool ud = id->id.qp_type == IBV_QPT_UD;

		cm_wire_fill(id, &m, ud ? CM_MSG_SIDR_REP : CM_MSG_REJ);
		m.status = ud ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED;
		(void)cm_wire_send(id, &m);
	}
	cm_id_free_locked(id);
}

CM_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
			     enum rdma_port_space ps)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	enum ibv_qp_type type;
	struct cm_id *cid;

	if (id == NULL || cm_ps_qp_type(ps, &type) != 0) {
		errno = EINVAL;
		return -1;
	}
	/* Without a channel the id is synchronous: its calls wait for their outcome. */
	if (ch == NULL) {
		ch = cm_channel_alloc(true);
		if (ch == NULL)
			return -1;
	}
	cid = cm_id_alloc(ch, context, ps, type);
	if (cid == NULL) {
		if (channel == NULL)
			cm_channel_free(ch);
		errno = ENOMEM;
		return -1;
	}
	*id = &cid->id;
	return 0;
}

CM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cm_lock);
	/* rdma_destroy_id(3): waits until every event reported on the id is acked. */
	while (cid->unacked > 0)
		pthread_cond_wait(&cid->acked, &cm_lock);
	cm_id_drop_locked(cid);
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

/* Binds the id to addr's device and reserves its port (cm_lock held). */
int cm_bind_locked(struct cm_id *id, const struct sockaddr *addr)
{
	struct cm_dev *dev = NULL;
	uint16_t port;
	int rc;

	if (cm_addr_len(addr) == 0)
		return EAFNOSUPPORT;
	if (id->state != CM_IDLE || id->psock >= 0)
		return EINVAL;
	if (!cm_addr_is_any(addr)) {
		dev = cm_resolve_local(addr);
		if (dev == NULL)
			return EADDRNOTAVAIL;
	}
	memcpy(&id->src, addr, cm_addr_len(addr));
	port = cm_addr_port(addr);
	rc = cm_wire_bind(id, &port);
	if (rc != 0)
		return rc;
	cm_addr_set_port((struct sockaddr *)&id->src, port);
	memcpy(&id->id.route.addr.src_addr, &id->src, cm_addr_len(addr));
	cm_id_bind_dev(id, dev);
	return 0;
}

CM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	int rc;

	if (id == NULL || addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_bind_locked((struct cm_id *)id, addr);
	pthread_mutex_unlock(&cm_lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/*
 * The source of an id that is unbound, or bound to the wildcard: the
 * destination's IP (a local address is its own port; another side's or the
 * loopback range reaches the first port, whose IP the kernel would pick is
 * not one the topology's devices route by), with the bound port; an unbound
 * id binds an ephemeral port of its own there, as the kernel reserves one,
 * so no other id takes it (cm_wire_bind).
 */
static int cm_pick_src(struct cm_id *id, const struct sockaddr *dst)
{
	uint16_t port = cm_addr_port((struct sockaddr *)&id->src);
	int rc;

	memcpy(&id->src, dst, cm_addr_len(dst));
	cm_addr_set_port((struct sockaddr *)&id->src, port);
	if (id->psock >= 0)
		return 0;
	port = 0;
	rc = cm_wire_bind(id, &port);
	if (rc != 0) {
		memset(&id->src, 0, sizeof(id->src));
		return rc;
	}
	cm_addr_set_port((struct sockaddr *)&id->src, port);
	return 0;
}

/* The GID an IP address stands for as a destination (rdma_ip2gid): its local entry, else its IP form. */
static void cm_ip_gid(const struct sockaddr *ip, union ibv_gid *gid)
{
	struct hw_addr_port ap;

	memset(gid, 0, sizeof(*gid));
	if (hw_addr_port(ip, &ap) == 0) {
		memcpy(gid->raw, ap.gid, sizeof(gid->raw));
	} else if (ip->sa_family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, &((const struct sockaddr_in *)ip)->sin_addr, 4);
	} else if (ip->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)ip)->sin6_addr, 16);
	}
}

static void cm_fill_path(struct cm_id *id)
{
	struct ibv_sa_path_rec *p = &id->path;

	memset(p, 0, sizeof(*p));
	p->sgid = id->sgid;
	p->dgid = id->id.route.addr.addr.ibaddr.dgid;
	p->slid = htobe16(id->dev->lid);
	p->dlid = p->slid;
	p->reversible = htobe32(1);
	p->numb_path = 1;
	p->pkey = htobe16(0xffff);
	p->mtu_selector = 2;
	p->mtu = (uint8_t)id->dev->mtu;
	p->rate_selector = 2;
	p->rate = 16; /* 100 Gb/s */
	p->packet_life_time_selector = 2;
	p->packet_life_time = 14;
	p->hop_limit = 64;
	id->id.route.num_paths = 1;
}

static int cm_resolve_addr_locked(struct cm_id *id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms)
{
	struct cm_event *e;
	struct cm_dev *dev;
	int rc = 0;

	if (cm_addr_len(dst) == 0)
		return EAFNOSUPPORT;
	if (src != NULL && id->state == CM_IDLE && id->psock < 0) {
		rc = cm_bind_locked(id, src);
		if (rc != 0)
			return rc;
	}
	if (id->state != CM_IDLE)
		return EINVAL;
	if (cm_mcast_group(dst) && (id->psock < 0 || cm_addr_is_any((struct sockaddr *)&id->src)))
		cm_mcast_pick_src(id, dst); /* a group: the port's own address, as routing picks it */
	else if (id->psock < 0 || cm_addr_is_any((struct sockaddr *)&id->src))
		rc = cm_pick_src(id, dst);
	if (rc != 0)
		return rc;
	memcpy(&id->dst, dst, cm_addr_len(dst));
	memcpy(&id->id.route.addr.src_addr, &id->src, cm_addr_len((struct sockaddr *)&id->src));
	memcpy(&id->id.route.addr.dst_addr, dst, cm_addr_len(dst));
	if (!cm_addr_reachable(dst) && !cm_mcast_group(dst) && cm_addr_on_link(dst)) {
		/* On a port's link, but no port has it: the neighbour query goes unanswered until timeout_ms. */
		id->state = CM_ADDR_QUERY;
		cm_timer_arm(id, timeout_ms > 0 ? (unsigned)timeout_ms : 0);
		return 0;
	}
	if (!cm_addr_reachable(dst) && !cm_mcast_group(dst)) {
		/* Off every port's link: there is no route, so no neighbour to ask. */
		e = cm_event_new(id, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
		cm_event_queue(id->ch, e);
		return 0;
	}
	dev = id->dev;
	if (dev == NULL)
		dev = cm_resolve_local(dst);
	if (dev == NULL)
		dev = cm_dev_first();
	if (dev == NULL)
		return ENODEV;
	cm_id_bind_dev(id, dev);
	/* The destination's GID until its REQ/REP names the peer's entry (a local destination: that entry). */
	cm_ip_gid(dst, &id->id.route.addr.addr.ibaddr.dgid);
	id->id.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	id->state = CM_ADDR_RESOLVED;
	cm_event_queue(id->ch, cm_event_new(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0));
	return 0;
}

CM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
				int timeout_ms)
{
	int rc;

	if (id == NULL || dst_addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_resolve_addr_locked((struct cm_id *)id, src_addr, dst_addr, timeout_ms);
	pthread_mutex_unlock(&cm_lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return cm_complete((struct cm_id *)id);
}

CM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *cid = (struct cm_id *)id;

	(void)timeout_ms; /* a RoCE route asks no one (no SA): nothing to wait for */
	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (cid->state != CM_ADDR_RESOLVED) {
		pthread_mutex_unlock(&cm_lock);
		errno = EINVAL;
		return -1;
	}
	cm_fill_path(cid);
	cid->state = CM_ROUTE_RESOLVED;
	cm_event_queue(cid->ch, cm_event_new(cid, RDMA_CM_EVENT_ROUTE_RESOLVED, 0));
	pthread_mutex_unlock(&cm_lock);
	return cm_complete(cid);
}

/* Moves id to channel (NULL: a private one, making it synchronous) with its queued events. */
int cm_migrate_locked(struct cm_id *id, struct cm_channel *to)
{
	struct cm_channel *from = id->ch;
	struct cm_list *l, *next;

	if (to == from)
		return 0;
	if (to == NULL) {
		to = cm_channel_alloc(true);
		if (to == NULL)
			return ENOMEM;
	}
	for (l = from->events.next; l != &from->events; l = next) {
		struct cm_event *e = cm_container_of(l, struct cm_event, link);

		next = l->next;
		if (e->owner != id)
			continue;
		cm_list_del(&e->link);
		cm_event_requeue(from, to, e);
	}
	if (id->sync && from != to)
		cm_channel_free(from);
	id->ch = to;
	id->id.channel = &to->ch;
	id->sync = to->sync;
	return 0;
}

CM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	int rc;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_migrate_locked((struct cm_id *)id, (struct cm_channel *)channel);
	pthread_mutex_unlock(&cm_lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

CM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	if (id == NULL || (optval == NULL && optlen > 0)) {
		errno = EINVAL;
		return -1;
	}
	/* Accepted and kept by the kernel; nothing here depends on them. */
	if ((level == RDMA_OPTION_ID && (optname == RDMA_OPTION_ID_TOS || optname == RDMA_OPTION_ID_REUSEADDR ||
					 optname == RDMA_OPTION_ID_AFONLY || optname == RDMA_OPTION_ID_ACK_TIMEOUT)) ||
	    (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH))
		return 0;
	errno = ENOSYS;
	return -1;
}

CM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)event;
	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	return 0; /* the CM here learns of establishment from its own RTU */
}
