/*
 * librdmacm.so.1 as rdma-core v44 documents it (rdma_cm(7),
 * rdma_get_cm_event(3), rdma_connect(3), rdma_accept(3), rdma_reject(3),
 * rdma_listen(3), rdma_resolve_addr(3), rdma_destroy_id(3)): the events of a
 * connection and their order, private data both ways, a port nobody listens
 * on, a port taken twice, an address no port has, an id destroyed with
 * events pending, a peer process that dies, a connection a forked child
 * holds no part of, a UD service lookup, the device list, IPv6 and the
 * wildcard, the synchronous endpoints of rdma_create_ep(3),
 * rdma_init_qp_attr(3) with the options and SRQ calls, and a program that
 * only blocks in rdma_get_cm_event(3).
 *
 * Statuses are the IB CM's (rdma_get_cm_event(3): "Under InfiniBand, this is
 * the reject reason carried in the IB CM REJ message"): 8 "invalid service
 * ID" when nobody listens, 28 "consumer defined" from rdma_reject().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "harness.h"

#define WAIT_MS 10000 /* hang guard only */
#define REJ_INVALID_SERVICE_ID 8
#define REJ_CONSUMER_DEFINED 28

static struct sockaddr_in addr4(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* The next event of ch within the hang guard, or NULL. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, WAIT_MS) != 1)
		return NULL;
	return rdma_get_cm_event(ch, &ev) == 0 ? ev : NULL;
}

/* Whether the next event is type with status; its copy in *out (private data copied to pdata). */
static bool expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status,
			 struct rdma_cm_event *out, uint8_t *pdata)
{
	struct rdma_cm_event *ev = next_event(ch);
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
	if (pdata != NULL && ev->param.conn.private_data != NULL)
		memcpy(pdata, ev->param.conn.private_data, ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	return ok;
}

/* One side: a channel, an id, and what hangs on it. */
struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static void side_qp_free(struct side *s)
{
	if (s->id != NULL && s->id->qp != NULL)
		rdma_destroy_qp(s->id);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	s->cq = NULL;
	s->pd = NULL;
}

static void side_free(void *arg)
{
	struct side *s = arg;

	side_qp_free(s);
	if (s->id != NULL)
		rdma_destroy_id(s->id);
	if (s->ch != NULL)
		rdma_destroy_event_channel(s->ch);
	memset(s, 0, sizeof(*s));
}

static int side_open(struct side *s, enum rdma_port_space ps)
{
	s->ch = rdma_create_event_channel();
	if (s->ch == NULL)
		return -1;
	return rdma_create_id(s->ch, &s->id, NULL, ps);
}

/* A QP of type on the id (its device's PD and a CQ of its own). */
static int side_qp(struct side *s, struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a;

	s->pd = ibv_alloc_pd(id->verbs);
	s->cq = s->pd != NULL ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (s->cq == NULL)
		return -1;
	memset(&a, 0, sizeof(a));
	a.send_cq = s->cq;
	a.recv_cq = s->cq;
	a.qp_type = type;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return rdma_create_qp(id, s->pd, &a);
}

/* Binds to ip and *port (0: a free one, written back) and listens. */
static int listen_on(struct side *s, const char *ip, uint16_t *port)
{
	struct sockaddr_in a = addr4(ip, *port);

	if (rdma_bind_addr(s->id, (struct sockaddr *)&a) != 0 || rdma_listen(s->id, 4) != 0)
		return -1;
	*port = ntohs(rdma_get_src_port(s->id));
	return *port != 0 ? 0 : -1;
}

/* A port of the space nobody holds now: one rdma_bind_addr picked, released again. */
static uint16_t free_port(enum rdma_port_space ps)
{
	struct side t = { 0 };
	struct sockaddr_in a = addr4("127.0.0.1", 0);
	uint16_t port = 0;

	if (side_open(&t, ps) == 0 && rdma_bind_addr(t.id, (struct sockaddr *)&a) == 0)
		port = ntohs(rdma_get_src_port(t.id));
	side_free(&t);
	return port;
}

/* The client's address and route, with their events. */
static bool resolve(struct side *c, const char *ip, uint16_t port)
{
	struct sockaddr_in a = addr4(ip, port);

	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&a, 2000) != 0 ||
	    !expect_event(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL))
		return false;
	if (rdma_resolve_route(c->id, 2000) != 0 || !expect_event(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL))
		return false;
	return c->id->verbs != NULL;
}

static int poll_cq(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 10000000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n != 0)
			return n;
	}
	return 0;
}

/*
 * The events of a connection in rdma_cm(7)'s order: ADDR_RESOLVED and
 * ROUTE_RESOLVED on the client, CONNECT_REQUEST on the listener, ESTABLISHED
 * on both, and DISCONNECTED on both after the client's rdma_disconnect and
 * the server's answering one; a SEND crosses the connected QPs.
 */
static void test_connect_event_order(void)
{
	static struct side srv, cli, conn;
	struct rdma_cm_event ev;
	uint16_t port = 0;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *smr, *rmr;
	char sbuf[32] = "rdmacm event order", rbuf[32] = { 0 };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	th_defer(side_free, &conn);
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port));
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK(ntohs(rdma_get_dst_port(cli.id)) == port);
	CHECK_OK(side_qp(&cli, cli.id, IBV_QPT_RC));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, NULL));
	CHECK(ev.listen_id == srv.id && ev.id != srv.id);
	conn.id = ev.id;
	CHECK(ntohs(rdma_get_src_port(conn.id)) == port);
	CHECK(conn.id->verbs != NULL);
	CHECK_OK(side_qp(&conn, conn.id, IBV_QPT_RC));
	rmr = ibv_reg_mr(conn.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(rmr != NULL);
	sge = (struct ibv_sge){ .addr = (uintptr_t)rbuf, .length = sizeof(rbuf), .lkey = rmr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	CHECK_OK(ibv_post_recv(conn.id->qp, &rwr, &bad_r));
	CHECK_OK(rdma_accept(conn.id, &p));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, &ev, NULL));
	CHECK(ev.id == conn.id);
	smr = ibv_reg_mr(cli.pd, sbuf, sizeof(sbuf), 0);
	CHECK(smr != NULL);
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = sizeof(sbuf), .lkey = smr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	CHECK_OK(ibv_post_send(cli.id->qp, &swr, &bad_s));
	CHECK(poll_cq(cli.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2);
	CHECK(poll_cq(conn.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == sizeof(sbuf));
	CHECK(memcmp(sbuf, rbuf, sizeof(sbuf)) == 0);
	CHECK_OK(ibv_dereg_mr(smr));
	CHECK_OK(ibv_dereg_mr(rmr));
	CHECK_OK(rdma_disconnect(cli.id));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_DISCONNECTED, 0, &ev, NULL));
	CHECK(ev.id == conn.id);
	CHECK_OK(rdma_disconnect(conn.id));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL));
	/* Nothing more: the channel's fd is not readable, and a non-blocking get says EAGAIN. */
	{
		struct pollfd pf = { .fd = cli.ch->fd, .events = POLLIN };
		struct rdma_cm_event *e;
		int fl = fcntl(cli.ch->fd, F_GETFL);

		CHECK(poll(&pf, 1, 0) == 0);
		CHECK_OK(fcntl(cli.ch->fd, F_SETFL, fl | O_NONBLOCK));
		CHECK(rdma_get_cm_event(cli.ch, &e) == -1 && errno == EAGAIN);
	}
	side_qp_free(&conn);
	CHECK_OK(rdma_destroy_id(conn.id));
	conn.id = NULL;
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/*
 * Private data both ways, at the IB CM's sizes (rdma_connect(3): REQ 56,
 * REP 196, REJ 148 bytes for RDMA_PS_TCP): the receiver's event reports the
 * transport's whole field, the sender's bytes first and zeros after them.
 */
static void test_private_data(void)
{
	static struct side srv, cli, cli2;
	struct rdma_cm_event ev;
	uint8_t req[56], rep[196], rej[100], got[256];
	uint16_t port = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	uint8_t big[57] = { 0 };

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	th_defer(side_free, &cli2);
	fill(req, sizeof(req), 1);
	fill(rep, sizeof(rep), 2);
	fill(rej, sizeof(rej), 3);
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port));
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	p.private_data = big;
	p.private_data_len = sizeof(big);
	CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	p.private_data = req;
	p.private_data_len = sizeof(req);
	CHECK_OK(rdma_connect(cli.id, &p));
	memset(got, 0xee, sizeof(got));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, got));
	CHECK(ev.param.conn.private_data_len == 56);
	CHECK(memcmp(got, req, sizeof(req)) == 0);
	p.private_data = rep;
	p.private_data_len = sizeof(rep);
	p.qp_num = 0x123; /* no QP on the id: the REP carries this number */
	CHECK_OK(rdma_accept(ev.id, &p));
	memset(got, 0xee, sizeof(got));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &ev, got));
	CHECK(ev.param.conn.private_data_len == 196 && ev.param.conn.qp_num == 0x123);
	CHECK(memcmp(got, rep, sizeof(rep)) == 0);
	CHECK_OK(rdma_establish(cli.id));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, &ev, NULL));
	CHECK_OK(rdma_disconnect(cli.id));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_DISCONNECTED, 0, &ev, NULL));
	CHECK_OK(rdma_destroy_id(ev.id));

	/* A rejection's private data: 100 bytes sent, 148 reported, zeros after the 100. */
	CHECK_OK(side_open(&cli2, RDMA_PS_TCP));
	CHECK(resolve(&cli2, "127.0.0.1", port));
	p.private_data = NULL;
	p.private_data_len = 0;
	CHECK_OK(rdma_connect(cli2.id, &p));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, NULL));
	CHECK(rdma_reject(ev.id, rej, 149) == -1 && errno == EINVAL);
	CHECK_OK(rdma_reject(ev.id, rej, sizeof(rej)));
	CHECK_OK(rdma_destroy_id(ev.id));
	memset(got, 0xee, sizeof(got));
	CHECK(expect_event(cli2.ch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED, &ev, got));
	CHECK(ev.param.conn.private_data_len == 148);
	CHECK(memcmp(got, rej, sizeof(rej)) == 0);
	for (int i = (int)sizeof(rej); i < 148; i++)
		CHECK(got[i] == 0);
}

/*
 * A port nobody listens on: REJECTED with the IB CM's "invalid service ID"
 * (8). A port whose listener is bound to another IP: the IB CM has a
 * listener for the service ID and the RDMA CM above it refuses, so the
 * consumer's reject (28).
 */
static void test_no_listener(void)
{
	static struct side cli, srv, cli2;
	uint16_t port = free_port(RDMA_PS_TCP), port2 = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };

	th_defer(side_free, &cli);
	th_defer(side_free, &srv);
	th_defer(side_free, &cli2);
	CHECK(port != 0);
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_REJECTED, REJ_INVALID_SERVICE_ID, NULL, NULL));
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port2));
	CHECK_OK(side_open(&cli2, RDMA_PS_TCP));
	CHECK(resolve(&cli2, "127.0.0.2", port2));
	CHECK_OK(rdma_connect(cli2.id, &p));
	CHECK(expect_event(cli2.ch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED, NULL, NULL));
	{
		struct pollfd pf = { .fd = srv.ch->fd, .events = POLLIN };

		CHECK(poll(&pf, 1, 0) == 0); /* the listener saw nothing */
	}
}

/* One port, two ids: the second bind is refused (EADDRINUSE) until the first id is gone. */
static void test_port_taken(void)
{
	static struct side a, b, u;
	uint16_t port = 0, again;
	struct sockaddr_in sa;

	th_defer(side_free, &a);
	th_defer(side_free, &b);
	th_defer(side_free, &u);
	CHECK_OK(side_open(&a, RDMA_PS_TCP));
	CHECK_OK(listen_on(&a, "127.0.0.1", &port));
	sa = addr4("127.0.0.1", port);
	CHECK_OK(rdma_listen(a.id, 8)); /* a second listen on the same id only changes its backlog */
	CHECK_OK(side_open(&b, RDMA_PS_TCP));
	CHECK(rdma_bind_addr(b.id, (struct sockaddr *)&sa) == -1 && errno == EADDRINUSE);
	/* Another port space has ports of its own. */
	CHECK_OK(side_open(&u, RDMA_PS_UDP));
	CHECK_OK(rdma_bind_addr(u.id, (struct sockaddr *)&sa));
	CHECK_OK(rdma_destroy_id(a.id));
	a.id = NULL;
	again = port;
	CHECK_OK(listen_on(&b, "127.0.0.1", &again));
	CHECK(again == port);
}

/*
 * Addresses no port of this machine has: rdma_bind_addr refuses them
 * (EADDRNOTAVAIL), rdma_resolve_addr reports ADDR_ERROR. 192.0.2.1 is a
 * documentation address (RFC 5737); nothing is ever sent to it.
 */
static void test_unknown_address(void)
{
	static struct side c;
	struct sockaddr_in a = addr4("192.0.2.1", 7471);

	th_defer(side_free, &c);
	CHECK_OK(side_open(&c, RDMA_PS_TCP));
	CHECK(rdma_bind_addr(c.id, (struct sockaddr *)&a) == -1 && errno == EADDRNOTAVAIL);
	CHECK_OK(rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&a, 2000));
	CHECK(expect_event(c.ch, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH, NULL, NULL));
	CHECK(rdma_resolve_route(c.id, 2000) == -1 && errno == EINVAL);
}

/*
 * Ids destroyed with events queued and never read: a listener with a
 * CONNECT_REQUEST (its requester is rejected, as the IB CM rejects a request
 * whose id goes away) and a client with its ADDR_RESOLVED. Under ASan with
 * leak checks, nothing of them is left.
 */
static void test_destroy_pending(void)
{
	static struct side srv, cli, lone;
	struct sockaddr_in a;
	uint16_t port = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct pollfd pf;

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	th_defer(side_free, &lone);
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port));
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK_OK(rdma_connect(cli.id, &p));
	pf = (struct pollfd){ .fd = srv.ch->fd, .events = POLLIN };
	CHECK(poll(&pf, 1, WAIT_MS) == 1); /* the request is queued */
	CHECK_OK(rdma_destroy_id(srv.id));
	srv.id = NULL;
	CHECK(poll(&pf, 1, 0) == 0); /* and went with its listener */
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED, NULL, NULL));
	CHECK_OK(side_open(&lone, RDMA_PS_TCP));
	a = addr4("127.0.0.1", port);
	CHECK_OK(rdma_resolve_addr(lone.id, NULL, (struct sockaddr *)&a, 2000));
	CHECK_OK(rdma_destroy_id(lone.id));
	lone.id = NULL;
	pf = (struct pollfd){ .fd = lone.ch->fd, .events = POLLIN };
	CHECK(poll(&pf, 1, 0) == 0);
}

static pid_t kid = -1;

static void destroy_id_cb(void *id)
{
	rdma_destroy_id(id);
}

static void kid_reap(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
}

/* The child: listens on a free port and says which on fd, accepts one connection, then waits to be killed. */
static void kid_server(int fd)
{
	struct side s = { 0 }, c = { 0 };
	struct rdma_cm_event ev;
	uint16_t port = 0;
	char ok = 'E';

	if (side_open(&s, RDMA_PS_TCP) != 0 || listen_on(&s, "127.0.0.1", &port) != 0)
		_exit(10);
	if (write(fd, &port, sizeof(port)) != sizeof(port))
		_exit(11);
	if (!expect_event(s.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, NULL))
		_exit(12);
	if (side_qp(&c, ev.id, IBV_QPT_RC) != 0 || rdma_accept(ev.id, NULL) != 0)
		_exit(13);
	if (!expect_event(s.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL))
		_exit(14);
	if (write(fd, &ok, 1) != 1)
		_exit(15);
	for (;;)
		pause();
}

/* A peer process killed after the connection is up: DISCONNECTED, then rdma_disconnect still succeeds. */
static void test_peer_killed(void)
{
	static struct side cli;
	uint16_t port = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct pollfd pf;
	int fds[2];
	char c;

	CHECK_OK(pipe(fds));
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		close(fds[0]);
		kid_server(fds[1]);
	}
	th_defer(kid_reap, NULL);
	close(fds[1]);
	pf = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	CHECK(poll(&pf, 1, WAIT_MS) == 1 && read(fds[0], &port, sizeof(port)) == sizeof(port) && port != 0);
	th_defer(side_free, &cli);
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK_OK(side_qp(&cli, cli.id, IBV_QPT_RC));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL));
	CHECK(poll(&pf, 1, WAIT_MS) == 1 && read(fds[0], &c, 1) == 1 && c == 'E');
	close(fds[0]);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	kid = -1;
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL));
	CHECK_OK(rdma_disconnect(cli.id));
}

/*
 * A child forked while a connection is up holds no part of it: when the
 * parent's requester goes, its peer sees DISCONNECTED although the child
 * still runs.
 */
static void test_fork_holds_nothing(void)
{
	static struct side srv, cli;
	struct rdma_cm_event ev;
	uint16_t port = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port));
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, NULL));
	th_defer(destroy_id_cb, ev.id);
	p.qp_num = 0x77;
	CHECK_OK(rdma_accept(ev.id, &p));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, NULL, NULL));
	CHECK_OK(rdma_establish(cli.id));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL));
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		for (;;)
			pause();
	}
	th_defer(kid_reap, NULL);
	CHECK_OK(rdma_destroy_id(cli.id));
	cli.id = NULL;
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_DISCONNECTED, 0, &ev, NULL));
}

/*
 * A UD service lookup (RDMA_PS_UDP): the requester's ESTABLISHED carries the
 * responder's QPN and the Q_Key RDMA_UDP_QKEY in its ud parameters, and an
 * AH made from them reaches the responder's QP.
 */
static void test_ud_lookup(void)
{
	static struct side srv, cli, conn;
	struct rdma_cm_event ev;
	uint16_t port = 0;
	uint8_t req[20], got[256];
	struct rdma_conn_param p = { 0 };
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *smr, *rmr;
	struct ibv_ah *ah;
	char sbuf[32] = "rdmacm ud", rbuf[40 + 32] = { 0 };

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	th_defer(side_free, &conn);
	fill(req, sizeof(req), 9);
	CHECK_OK(side_open(&srv, RDMA_PS_UDP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port));
	CHECK_OK(side_open(&cli, RDMA_PS_UDP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK_OK(side_qp(&cli, cli.id, IBV_QPT_UD));
	p.private_data = req;
	p.private_data_len = sizeof(req);
	CHECK_OK(rdma_connect(cli.id, &p));
	memset(got, 0xee, sizeof(got));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, got));
	CHECK(ev.param.ud.private_data_len == 180 && memcmp(got, req, sizeof(req)) == 0);
	CHECK(ev.param.ud.qp_num == cli.id->qp->qp_num && ev.param.ud.ah_attr.is_global == 1);
	conn.id = ev.id;
	CHECK_OK(side_qp(&conn, conn.id, IBV_QPT_UD));
	rmr = ibv_reg_mr(conn.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(rmr != NULL);
	sge = (struct ibv_sge){ .addr = (uintptr_t)rbuf, .length = sizeof(rbuf), .lkey = rmr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	CHECK_OK(ibv_post_recv(conn.id->qp, &rwr, &bad_r));
	CHECK_OK(rdma_accept(conn.id, NULL));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, &ev, NULL));
	CHECK(ev.param.ud.qp_num == conn.id->qp->qp_num);
	CHECK(ev.param.ud.qkey == RDMA_UDP_QKEY);
	ah = ibv_create_ah(cli.pd, &ev.param.ud.ah_attr);
	CHECK(ah != NULL);
	smr = ibv_reg_mr(cli.pd, sbuf, sizeof(sbuf), 0);
	CHECK(smr != NULL);
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = sizeof(sbuf), .lkey = smr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = ev.param.ud.qp_num;
	swr.wr.ud.remote_qkey = ev.param.ud.qkey;
	CHECK_OK(ibv_post_send(cli.id->qp, &swr, &bad_s));
	CHECK(poll_cq(cli.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2);
	CHECK(poll_cq(conn.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 40 + sizeof(sbuf));
	CHECK(memcmp(rbuf + 40, sbuf, sizeof(sbuf)) == 0);
	CHECK_OK(ibv_destroy_ah(ah));
	CHECK_OK(ibv_dereg_mr(smr));
	CHECK_OK(ibv_dereg_mr(rmr));
}

/* rdma_get_devices(3): every device of the process, open, NULL-terminated; a bound id's verbs is one of them. */
static void test_devices(void)
{
	static struct side s;
	struct ibv_device **list;
	struct ibv_context **ctxs;
	struct sockaddr_in a = addr4("127.0.0.1", 0);
	int n = -1, nv = -1, i;
	bool found = false;

	th_defer(side_free, &s);
	list = ibv_get_device_list(&nv);
	CHECK(list != NULL && nv > 0);
	ibv_free_device_list(list);
	ctxs = rdma_get_devices(&n);
	CHECK(ctxs != NULL);
	th_defer((th_cleanup_fn)rdma_free_devices, ctxs);
	CHECK(n == nv && ctxs[n] == NULL);
	CHECK_OK(side_open(&s, RDMA_PS_TCP));
	CHECK(s.id->verbs == NULL);
	CHECK_OK(rdma_bind_addr(s.id, (struct sockaddr *)&a));
	for (i = 0; i < n; i++)
		found |= ctxs[i] == s.id->verbs;
	CHECK(found && s.id->port_num == 1);
	CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED") == 0);
}

/*
 * A listener on the IPv6 wildcard takes a request for ::1; the request's id
 * reports the addresses the requester used, and the requester's are the
 * reverse.
 */
static void test_ipv6_wildcard(void)
{
	static struct side srv, cli;
	struct sockaddr_in6 any, lo;
	struct rdma_cm_event ev;
	struct sockaddr_in6 *l, *r;
	uint16_t port = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	memset(&any, 0, sizeof(any));
	any.sin6_family = AF_INET6;
	any.sin6_port = htons(port);
	lo = any;
	lo.sin6_addr = in6addr_loopback;
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(rdma_bind_addr(srv.id, (struct sockaddr *)&any));
	CHECK_OK(rdma_listen(srv.id, 1));
	port = ntohs(rdma_get_src_port(srv.id));
	CHECK(port != 0);
	lo.sin6_port = htons(port);
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK_OK(rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&lo, 2000));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL));
	CHECK_OK(rdma_resolve_route(cli.id, 2000));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, NULL));
	l = (struct sockaddr_in6 *)rdma_get_local_addr(ev.id);
	r = (struct sockaddr_in6 *)rdma_get_peer_addr(ev.id);
	CHECK(l->sin6_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&l->sin6_addr) && ntohs(l->sin6_port) == port);
	CHECK(r->sin6_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&r->sin6_addr));
	CHECK(r->sin6_port == rdma_get_src_port(cli.id) && r->sin6_port != 0);
	CHECK(ev.id->verbs != NULL);
	CHECK_OK(rdma_reject(ev.id, NULL, 0));
	CHECK_OK(rdma_destroy_id(ev.id));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED, NULL, NULL));
}

struct ep_server {
	uint16_t port;
	int rc;
	char got[16];
};

/* rdma_server's way (rdma_create_ep(3), rdma_get_request(3)): synchronous ids, QPs made by the library. */
static void *ep_server_run(void *arg)
{
	struct ep_server *s = arg;
	struct rdma_addrinfo hints, *res = NULL;
	struct ibv_qp_init_attr a;
	struct rdma_cm_id *listen_id = NULL, *id = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc;
	char port[8];

	s->rc = -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	snprintf(port, sizeof(port), "%u", s->port);
	if (rdma_getaddrinfo("127.0.0.1", port, &hints, &res) != 0)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.cap.max_send_wr = a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.sq_sig_all = 1;
	if (rdma_create_ep(&listen_id, res, NULL, &a) != 0 || rdma_listen(listen_id, 1) != 0)
		goto out;
	s->rc = -2;
	if (rdma_get_request(listen_id, &id) != 0 || id->qp == NULL || id->recv_cq == NULL)
		goto out;
	s->rc = -3;
	mr = rdma_reg_msgs(id, s->got, sizeof(s->got));
	if (mr == NULL || rdma_post_recv(id, NULL, s->got, sizeof(s->got), mr) != 0 || rdma_accept(id, NULL) != 0)
		goto out;
	s->rc = -4;
	if (rdma_get_recv_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
		goto out;
	s->rc = 0;
	rdma_disconnect(id);
out:
	if (mr != NULL)
		rdma_dereg_mr(mr);
	if (id != NULL)
		rdma_destroy_ep(id);
	if (listen_id != NULL)
		rdma_destroy_ep(listen_id);
	rdma_freeaddrinfo(res);
	return NULL;
}

static void test_sync_endpoints(void)
{
	static struct ep_server s;
	static struct rdma_addrinfo *res;
	static struct rdma_cm_id *id;
	struct rdma_addrinfo hints;
	struct ibv_qp_init_attr a;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	pthread_t t;
	char port[8], msg[16] = "sync endpoint";

	memset(&s, 0, sizeof(s));
	s.port = free_port(RDMA_PS_TCP);
	CHECK(s.port != 0);
	CHECK_OK(pthread_create(&t, NULL, ep_server_run, &s));
	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	snprintf(port, sizeof(port), "%u", s.port);
	CHECK_OK(rdma_getaddrinfo("127.0.0.1", port, &hints, &res));
	th_defer((th_cleanup_fn)rdma_freeaddrinfo, res);
	CHECK(res->ai_dst_addr != NULL && res->ai_qp_type == IBV_QPT_RC);
	memset(&a, 0, sizeof(a));
	a.cap.max_send_wr = a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.sq_sig_all = 1;
	CHECK_OK(rdma_create_ep(&id, res, NULL, &a));
	th_defer((th_cleanup_fn)rdma_destroy_ep, id);
	/* Until the server listens, the synchronous connect is refused (ECONNREFUSED): try again. */
	for (int i = 0; i < 2000; i++) {
		if (rdma_connect(id, NULL) == 0)
			break;
		CHECK(errno == ECONNREFUSED);
		rdma_destroy_ep(id);
		th_undefer((th_cleanup_fn)rdma_destroy_ep, id);
		usleep(5000);
		CHECK_OK(rdma_create_ep(&id, res, NULL, &a));
		th_defer((th_cleanup_fn)rdma_destroy_ep, id);
	}
	mr = rdma_reg_msgs(id, msg, sizeof(msg));
	CHECK(mr != NULL);
	CHECK_OK(rdma_post_send(id, NULL, msg, sizeof(msg), mr, 0));
	CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	CHECK_OK(pthread_join(t, NULL));
	CHECK(s.rc == 0 && memcmp(s.got, msg, sizeof(msg)) == 0);
	CHECK_OK(rdma_dereg_mr(mr));
	CHECK_OK(rdma_disconnect(id));
}

/*
 * rdma_init_qp_attr(3) gives the attributes the CM applies: INIT with the
 * port and access, RTR with the peer's QPN and PSN and a global AH to its
 * GID, RTS with the own PSN; rdma_listen binds an unbound id to the
 * wildcard on a free port; options the kernel keeps are accepted; an SRQ
 * is made on the id.
 */
static void test_qp_attr_and_options(void)
{
	static struct side srv, cli, conn;
	struct rdma_cm_event ev;
	struct ibv_qp_attr qa;
	struct ibv_srq_init_attr sa;
	struct sockaddr_in *la, ta;
	uint8_t tos = 32;
	int mask, reuse = 1;
	struct rdma_conn_param p = { .responder_resources = 2, .initiator_depth = 3, .retry_count = 6 };

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	th_defer(side_free, &conn);
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(rdma_listen(srv.id, 1));
	la = (struct sockaddr_in *)rdma_get_local_addr(srv.id);
	CHECK(la->sin_family == AF_INET && la->sin_addr.s_addr == htonl(INADDR_ANY) && la->sin_port != 0);
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK_OK(rdma_set_option(cli.id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)));
	CHECK_OK(rdma_set_option(cli.id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &reuse, sizeof(reuse)));
	CHECK(resolve(&cli, "127.0.0.1", ntohs(la->sin_port)));
	CHECK_OK(side_qp(&cli, cli.id, IBV_QPT_RC));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(expect_event(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, NULL));
	CHECK(ev.param.conn.responder_resources == 3 && ev.param.conn.initiator_depth == 2);
	CHECK(ev.param.conn.retry_count == 6 && ev.param.conn.qp_num == cli.id->qp->qp_num);
	conn.id = ev.id;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	CHECK_OK(rdma_init_qp_attr(conn.id, &qa, &mask));
	CHECK((mask & (IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS)) ==
	      (IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS));
	CHECK(qa.port_num == 1 && (qa.qp_access_flags & IBV_ACCESS_REMOTE_WRITE));
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	CHECK_OK(rdma_init_qp_attr(conn.id, &qa, &mask));
	CHECK((mask & (IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)) == (IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN));
	CHECK(qa.dest_qp_num == cli.id->qp->qp_num && qa.ah_attr.is_global == 1);
	CHECK(memcmp(&qa.ah_attr.grh.dgid, &cli.id->route.addr.addr.ibaddr.sgid, 16) == 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	CHECK_OK(rdma_init_qp_attr(conn.id, &qa, &mask));
	CHECK((mask & IBV_QP_SQ_PSN) && qa.sq_psn < (1u << 24));
	qa.qp_state = IBV_QPS_SQD;
	CHECK(rdma_init_qp_attr(conn.id, &qa, &mask) == -1 && errno == EINVAL);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	CHECK_OK(rdma_create_srq(conn.id, NULL, &sa));
	CHECK(conn.id->srq != NULL);
	rdma_destroy_srq(conn.id);
	CHECK(conn.id->srq == NULL);
	CHECK_OK(rdma_notify(conn.id, IBV_EVENT_COMM_EST));
	CHECK_OK(rdma_reject(conn.id, NULL, 0));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED, NULL, NULL));
	ta = addr4("127.0.0.1", 0);
	CHECK(rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&ta, 2000) == -1 && errno == EINVAL);
}

struct blocked_get {
	struct rdma_event_channel *ch;
	int rc;
	int err;
	_Atomic pid_t tid;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
};

static void *blocked_get_run(void *arg)
{
	struct blocked_get *b = arg;
	struct rdma_cm_event *ev;

	b->tid = (pid_t)syscall(SYS_gettid);
	b->rc = rdma_get_cm_event(b->ch, &ev);
	b->err = errno;
	if (b->rc == 0) {
		b->type = ev->event;
		b->id = ev->id;
		rdma_ack_cm_event(ev);
	}
	return NULL;
}

/*
 * A program that only blocks in rdma_get_cm_event(3), never polling the fd:
 * the request that arrives meanwhile wakes it (the CM's own thread delivers
 * it).
 */
static void test_blocking_get(void)
{
	static struct side srv, cli;
	static struct blocked_get b;
	uint16_t port = 0;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct timespec until;
	pthread_t t;

	th_defer(side_free, &srv);
	th_defer(side_free, &cli);
	CHECK_OK(side_open(&srv, RDMA_PS_TCP));
	CHECK_OK(listen_on(&srv, "127.0.0.1", &port));
	b = (struct blocked_get){ .ch = srv.ch, .rc = -2 };
	CHECK_OK(pthread_create(&t, NULL, blocked_get_run, &b));
	CHECK_OK(side_open(&cli, RDMA_PS_TCP));
	CHECK(resolve(&cli, "127.0.0.1", port));
	CHECK_OK(rdma_connect(cli.id, &p));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	if (pthread_timedjoin_np(t, NULL, &until) != 0) {
		pthread_cancel(t);
		pthread_join(t, NULL);
		CHECK(!"rdma_get_cm_event stayed blocked");
	}
	CHECK(b.rc == 0 && b.type == RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK_OK(rdma_reject(b.id, NULL, 0));
	CHECK_OK(rdma_destroy_id(b.id));
	CHECK(expect_event(cli.ch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED, NULL, NULL));
}

/* Whether the thread *tid (once known) sleeps in poll(2), as /proc says: bounded. */
static bool in_poll(_Atomic pid_t *tid)
{
	for (int i = 0; i < 2000; i++) {
		char path[64];
		long nr = -1;
		FILE *f;

		if (*tid != 0) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)*tid);
			f = fopen(path, "r");
			if (f != NULL) {
				if (fscanf(f, "%ld", &nr) != 1)
					nr = -1;
				fclose(f);
			}
			if (nr == SYS_poll || nr == SYS_ppoll)
				return true;
		}
		usleep(1000);
	}
	return false;
}

/*
 * A channel destroyed while another thread waits in rdma_get_cm_event on it
 * (rping's teardown does this): the waiter stays blocked, as a read of the
 * kernel CM's closed fd does, and nothing it holds is freed under it (ASan).
 */
static void test_destroy_channel_while_waiting(void)
{
	static struct blocked_get b;
	pthread_t t;

	b = (struct blocked_get){ .ch = rdma_create_event_channel(), .rc = -2 };
	CHECK(b.ch != NULL);
	CHECK_OK(pthread_create(&t, NULL, blocked_get_run, &b));
	CHECK(in_poll(&b.tid)); /* destroying before it waits would be the test's own use after free */
	rdma_destroy_event_channel(b.ch);
	usleep(100000);
	CHECK(b.rc == -2 && in_poll(&b.tid));
	pthread_cancel(t);
	pthread_join(t, NULL);
}

int main(void)
{
	setenv("SOFTDPU_LOG_LEVEL", "error", 0);
	RUN(test_connect_event_order);
	RUN(test_private_data);
	RUN(test_no_listener);
	RUN(test_port_taken);
	RUN(test_unknown_address);
	RUN(test_destroy_pending);
	RUN(test_peer_killed);
	RUN(test_fork_holds_nothing);
	RUN(test_ud_lookup);
	RUN(test_devices);
	RUN(test_ipv6_wildcard);
	RUN(test_sync_endpoints);
	RUN(test_qp_attr_and_options);
	RUN(test_blocking_get);
	RUN(test_destroy_channel_while_waiting);
	return th_summary("test_rdmacm");
}
