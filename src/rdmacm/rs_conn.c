/*
 * rs_conn — making and connecting rsockets: rsocket, rbind, rlisten,
 * raccept, rconnect. The CM id of a socket has an event channel of its
 * own, whose fd is the socket's number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "rs_int.h"

static void rs_defaults(struct rs *rs)
{
	rs->sq_size = rs->rq_size = RS_DEF_QSIZE;
	rs->sbuf_size = rs->rbuf_size = RS_DEF_BUF;
	rs->inline_size = RS_DEF_INLINE;
	rs->nodelay = 1; /* nothing is held back for coalescing here */
}

/* A socket with its event channel (and an id unless with_id is false). */
static struct rs *rs_new(int domain, bool with_id)
{
	struct rs *rs = calloc(1, sizeof(*rs));
	int fl;

	if (rs == NULL)
		return NULL;
	pthread_mutex_init(&rs->lock, NULL);
	pthread_cond_init(&rs->progress, NULL);
	rs->domain = domain;
	rs->fd = -1;
	rs->reqs_tail = &rs->reqs;
	rs_defaults(rs);
	rs->ch = rdma_create_event_channel();
	if (rs->ch == NULL)
		goto fail;
	/* The socket's own calls decide when to wait: events are taken without blocking. */
	fl = fcntl(rs->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(rs->ch->fd, F_SETFL, fl | O_NONBLOCK) != 0)
		goto fail;
	rs->fd = rs->ch->fd;
	if (with_id && rdma_create_id(rs->ch, &rs->id, rs, RDMA_PS_TCP) != 0)
		goto fail;
	if (rs_index_add(rs) != 0)
		goto fail;
	return rs;
fail:
	rs_free(rs);
	return NULL;
}

void rs_free(struct rs *rs)
{
	struct rs_req *r;
	int err = errno;

	rs_index_del(rs);
	while ((r = rs->reqs) != NULL) {
		struct rdma_cm_id *id = r->ev->id;

		rs->reqs = r->next;
		(void)rdma_reject(id, NULL, 0);
		(void)rdma_ack_cm_event(r->ev);
		(void)rdma_destroy_id(id);
		free(r);
	}
	rs_iomap_free(rs);
	rs_res_destroy(rs);
	if (rs->id != NULL)
		(void)rdma_destroy_id(rs->id);
	if (rs->ch != NULL)
		rdma_destroy_event_channel(rs->ch);
	pthread_mutex_destroy(&rs->lock);
	pthread_cond_destroy(&rs->progress);
	free(rs);
	errno = err;
}

struct rs *rs_alloc(int domain)
{
	return rs_new(domain, true);
}

CM_EXPORT int rsocket(int domain, int type, int protocol)
{
	static int dgram_once;
	struct rs *rs;

	if (domain != AF_INET && domain != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	if (type == SOCK_DGRAM) {
		if (!__atomic_exchange_n(&dgram_once, 1, __ATOMIC_RELAXED))
			BASE_WARN("rsocket: SOCK_DGRAM (rsockets over UD) is not supported by softdpu's librdmacm");
		errno = EOPNOTSUPP;
		return -1;
	}
	if (type != SOCK_STREAM) {
		errno = EINVAL;
		return -1;
	}
	if (protocol != 0 && protocol != IPPROTO_TCP) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	rs = rs_alloc(domain);
	return rs == NULL ? -1 : rs->fd;
}

CM_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs *rs = rs_lock(socket);
	int ret = -1;

	if (rs == NULL)
		return -1;
	if (addr == NULL || addrlen < sizeof(struct sockaddr_in)) {
		errno = EINVAL;
		goto out;
	}
	if (rs->state != RS_INIT) {
		errno = EINVAL;
		goto out;
	}
	ret = rdma_bind_addr(rs->id, (struct sockaddr *)addr);
out:
	rs_unlock(rs);
	return ret;
}

CM_EXPORT int rlisten(int socket, int backlog)
{
	struct rs *rs = rs_lock(socket);
	int ret = -1;

	if (rs == NULL)
		return -1;
	if (rs->state != RS_INIT && rs->state != RS_LISTEN) {
		errno = EINVAL;
		goto out;
	}
	ret = rdma_listen(rs->id, backlog);
	if (ret == 0)
		rs->state = RS_LISTEN;
out:
	rs_unlock(rs);
	return ret;
}

static void rs_conn_param(struct rdma_conn_param *p, const struct rs_hello *h)
{
	memset(p, 0, sizeof(*p));
	p->private_data = h;
	p->private_data_len = sizeof(*h);
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static void rs_inherit(struct rs *c, const struct rs *l)
{
	c->sq_size = l->sq_size;
	c->rq_size = l->rq_size;
	c->sbuf_size = l->sbuf_size;
	c->rbuf_size = l->rbuf_size;
	c->inline_size = l->inline_size;
	c->nodelay = l->nodelay;
	c->keepalive = l->keepalive;
	c->keepidle = l->keepidle;
	c->iomap_size = l->iomap_size;
}

/* Answers one request of the listener: a new socket, REP sent. */
static struct rs *rs_accept_req(struct rs *l, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param p;
	struct rs_hello h;
	struct rs *c = rs_new(l->domain, false);
	int ok;

	if (c == NULL) {
		(void)rdma_reject(id, NULL, 0);
		(void)rdma_ack_cm_event(ev);
		(void)rdma_destroy_id(id);
		return NULL;
	}
	rs_inherit(c, l);
	ok = rs_hello_take(c, ev->param.conn.private_data, ev->param.conn.private_data_len) == 0;
	(void)rdma_ack_cm_event(ev);
	if (!ok) {
		(void)rdma_reject(id, NULL, 0);
		(void)rdma_destroy_id(id);
		errno = ECONNABORTED;
		goto fail;
	}
	if (rdma_migrate_id(id, c->ch) != 0) {
		(void)rdma_reject(id, NULL, 0);
		(void)rdma_destroy_id(id);
		goto fail;
	}
	id->context = c;
	c->id = id;
	if (rs_res_create(c) != 0)
		goto reject;
	rs_hello_fill(c, &h);
	rs_conn_param(&p, &h);
	if (rdma_accept(id, &p) != 0)
		goto reject;
	c->state = RS_ACCEPTING;
	return c;
reject:
	(void)rdma_reject(id, NULL, 0);
fail:
	rs_free(c);
	return NULL;
}

static void rs_name_out(const struct sockaddr *a, struct sockaddr *addr, socklen_t *addrlen)
{
	socklen_t len = a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	if (addr == NULL || addrlen == NULL)
		return;
	memcpy(addr, a, *addrlen < len ? *addrlen : len);
	*addrlen = len;
}

CM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *l = rs_lock(socket), *c;
	struct rs_req *r;

	if (l == NULL)
		return -1;
	if (l->state != RS_LISTEN) {
		errno = EINVAL;
		goto fail;
	}
	for (;;) {
		rs_process(l);
		if (l->reqs != NULL)
			break;
		if (l->nonblock) {
			errno = EAGAIN;
			goto fail;
		}
		if (rs_wait(l, POLLIN) != 0 && errno != EINTR)
			goto fail;
	}
	r = l->reqs;
	l->reqs = r->next;
	if (l->reqs == NULL)
		l->reqs_tail = &l->reqs;
	c = rs_accept_req(l, r->ev);
	free(r);
	rs_unlock(l);
	if (c == NULL)
		return -1;
	rs_name_out(rdma_get_peer_addr(c->id), addr, addrlen);
	return c->fd;
fail:
	rs_unlock(l);
	return -1;
}

/* Address and route resolution: answered at once, so waited for even when non-blocking. */
static int rs_expect(struct rs *rs, enum rdma_cm_event_type type)
{
	struct pollfd p = { .fd = rs->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int status;

	while (rdma_get_cm_event(rs->ch, &ev) != 0) {
		if (errno != EAGAIN || (poll(&p, 1, -1) < 0 && errno != EINTR))
			return -1;
	}
	status = ev->event == type ? 0 : ev->status;
	(void)rdma_ack_cm_event(ev);
	if (status == 0)
		return 0;
	errno = status < 0 ? -status : EHOSTUNREACH;
	return -1;
}

static int rs_start_connect(struct rs *rs, const struct sockaddr *addr)
{
	struct rdma_conn_param p;
	struct rs_hello h;

	if (rdma_resolve_addr(rs->id, NULL, (struct sockaddr *)addr, 2000) != 0 ||
	    rs_expect(rs, RDMA_CM_EVENT_ADDR_RESOLVED) != 0)
		return -1;
	if (rdma_resolve_route(rs->id, 2000) != 0 || rs_expect(rs, RDMA_CM_EVENT_ROUTE_RESOLVED) != 0)
		return -1;
	if (rs_res_create(rs) != 0)
		return -1;
	rs_hello_fill(rs, &h);
	rs_conn_param(&p, &h);
	if (rdma_connect(rs->id, &p) != 0)
		return -1;
	rs->state = RS_CONNECTING;
	return 0;
}

CM_EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs *rs = rs_lock(socket);
	int ret = -1;

	if (rs == NULL)
		return -1;
	if (addr == NULL || addrlen < sizeof(struct sockaddr_in)) {
		errno = EINVAL;
		goto out;
	}
	switch (rs->state) {
	case RS_INIT:
		break;
	case RS_CONNECTING:
		errno = EALREADY;
		goto out;
	case RS_LISTEN:
		errno = EINVAL;
		goto out;
	default:
		errno = EISCONN;
		goto out;
	}
	if (rs_start_connect(rs, addr) != 0)
		goto out;
	if (rs->nonblock) {
		errno = EINPROGRESS;
		goto out;
	}
	while (rs->state == RS_CONNECTING)
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			goto out;
	if (rs->state == RS_CONNECTED) {
		ret = 0;
	} else {
		errno = rs->so_error ? rs->so_error : ECONNREFUSED;
		rs->so_error = 0;
	}
out:
	rs_unlock(rs);
	return ret;
}
