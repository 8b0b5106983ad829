/*
 * librdmacm.so.1's answers to unusual inputs, as rdma-core v44 documents
 * them: rdma_getaddrinfo(3) with hints alone; rdma_connect(3) and
 * rdma_accept(3) with depths beyond the device (EINVAL), with
 * RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH (rdma_cma.h: the device's most)
 * and with retry counts beyond the IB CM's 3 bits (carried as 7); private
 * data over the IB CM's sizes; a peer process that dies between REQ and RTU;
 * a listener's backlog exceeded; one port bound on two IPs. Run under ASan
 * with leak checks, nothing of the ids, QPs and listeners is left.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "rdmacm_fixture.h"

/*
 * rdma_getaddrinfo(3): "Either node, service, or hints must be provided";
 * with hints alone the result is what they say, the source address included
 * (libfabric's verbs provider asks so for a passive endpoint).
 */
static void test_getaddrinfo_hints_only(void)
{
	struct sockaddr_in src = cmf_addr4("127.0.0.1", 7471);
	struct rdma_addrinfo hints, *res = NULL;

	errno = 0;
	CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &res) == -1 && errno == EINVAL);
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_family = AF_INET;
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	CHECK_OK(rdma_getaddrinfo(NULL, NULL, &hints, &res));
	th_defer((th_cleanup_fn)rdma_freeaddrinfo, res);
	CHECK(res->ai_flags == RAI_PASSIVE && res->ai_family == AF_INET);
	CHECK(res->ai_qp_type == IBV_QPT_RC && res->ai_port_space == RDMA_PS_TCP);
	CHECK(res->ai_src_len == sizeof(src) && res->ai_src_addr != NULL);
	CHECK(memcmp(res->ai_src_addr, &src, sizeof(src)) == 0);
	CHECK(res->ai_dst_addr == NULL && res->ai_dst_len == 0);
}

/* Depths beyond the device are refused; RDMA_MAX_* ask for its most; retry counts are the CM's 3 bits. */
static void test_depths_and_counts(void)
{
	static struct cmf_side srv, cli, acc;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct ibv_device_attr da;
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	th_defer(cmf_side_free, &acc);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(ibv_query_device(cli.id->verbs, &da));
	if (da.max_qp_rd_atom >= 0xfe || da.max_qp_init_rd_atom >= 0xfe)
		SKIP("the device's depths leave no value beyond them");
	CHECK_OK(cmf_qp(&cli, cli.id));
	p.responder_resources = (uint8_t)(da.max_qp_rd_atom + 1);
	CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	p.responder_resources = 1;
	p.initiator_depth = (uint8_t)(da.max_qp_init_rd_atom + 1);
	CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	p.responder_resources = RDMA_MAX_RESP_RES;
	p.initiator_depth = RDMA_MAX_INIT_DEPTH;
	p.retry_count = 15;
	p.rnr_retry_count = 15;
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	/* Seen from the listener: the requester's depths swapped. */
	CHECK(ev.param.conn.responder_resources == da.max_qp_init_rd_atom);
	CHECK(ev.param.conn.initiator_depth == da.max_qp_rd_atom);
	CHECK(ev.param.conn.retry_count == 7 && ev.param.conn.rnr_retry_count == 7);
	acc.id = ev.id;
	CHECK_OK(cmf_qp(&acc, acc.id));
	p.responder_resources = (uint8_t)(da.max_qp_rd_atom + 1);
	CHECK(rdma_accept(acc.id, &p) == -1 && errno == EINVAL);
	p.responder_resources = RDMA_MAX_RESP_RES;
	CHECK_OK(rdma_accept(acc.id, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, &ev));
	CHECK(ev.param.conn.responder_resources == da.max_qp_init_rd_atom);
	CHECK(ev.param.conn.initiator_depth == da.max_qp_rd_atom);
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
}

/* Private data over the IB CM's sizes less the RDMA CM header: EINVAL, and nothing sent (rdma_accept(3), rdma_reject(3)). */
static void test_private_data_limits(void)
{
	static struct cmf_side srv, cli, usrv, ucli;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	uint8_t big[256] = { 0 };
	struct rdma_cm_event ev;
	struct sockaddr_in a;
	uint16_t port = 0, uport = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	th_defer(cmf_side_free, &usrv);
	th_defer(cmf_side_free, &ucli);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	p.private_data = big;
	p.private_data_len = 57;
	CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	p.private_data_len = 56;
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	p.qp_num = 0x42;
	p.private_data_len = 197;
	CHECK(rdma_accept(ev.id, &p) == -1 && errno == EINVAL);
	CHECK(rdma_reject(ev.id, big, 149) == -1 && errno == EINVAL);
	CHECK(cmf_quiet(cli.ch)); /* nothing went out */
	CHECK_OK(rdma_reject(ev.id, big, 148));
	CHECK_OK(rdma_destroy_id(ev.id));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_REJECTED, 28, NULL));

	/* UD: SIDR REQ 180, SIDR REP 136 (accept and reject alike). */
	usrv.ch = rdma_create_event_channel();
	CHECK(usrv.ch != NULL);
	CHECK_OK(rdma_create_id(usrv.ch, &usrv.id, NULL, RDMA_PS_UDP));
	a = cmf_addr4("127.0.0.1", 0);
	CHECK_OK(rdma_bind_addr(usrv.id, (struct sockaddr *)&a));
	CHECK_OK(rdma_listen(usrv.id, 4));
	uport = ntohs(rdma_get_src_port(usrv.id));
	ucli.ch = rdma_create_event_channel();
	CHECK(ucli.ch != NULL);
	CHECK_OK(rdma_create_id(ucli.ch, &ucli.id, NULL, RDMA_PS_UDP));
	CHECK(cmf_resolve(&ucli, "127.0.0.1", uport));
	p.private_data_len = 181;
	CHECK(rdma_connect(ucli.id, &p) == -1 && errno == EINVAL);
	p.private_data_len = 180;
	CHECK_OK(rdma_connect(ucli.id, &p));
	CHECK(cmf_expect(usrv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	p.private_data_len = 137;
	CHECK(rdma_accept(ev.id, &p) == -1 && errno == EINVAL);
	CHECK(rdma_reject(ev.id, big, 137) == -1 && errno == EINVAL);
	CHECK_OK(rdma_reject(ev.id, big, 136));
	CHECK_OK(rdma_destroy_id(ev.id));
	CHECK(cmf_expect(ucli.ch, RDMA_CM_EVENT_UNREACHABLE, 2, NULL)); /* SIDR status 2: rejected */
}

static pid_t kid = -1;

static void kid_reap(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
}

static void kid_kill(void)
{
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	kid = -1;
}

/* The child requester: connects to port (with a QP when qp) and writes what it saw on fd: 'R' for CONNECT_RESPONSE. */
static void kid_requester(uint16_t port, int fd)
{
	struct cmf_side c = { 0 };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .qp_num = 0x31 };
	struct rdma_cm_event *ev;
	char r = 'R';

	if (cmf_open(&c) != 0 || !cmf_resolve(&c, "127.0.0.1", port) || rdma_connect(c.id, &p) != 0)
		_exit(10);
	ev = cmf_next_event(c.ch, CMF_WAIT_MS);
	if (ev == NULL || ev->event != RDMA_CM_EVENT_CONNECT_RESPONSE || write(fd, &r, 1) != 1)
		_exit(11);
	for (;;)
		pause(); /* never rdma_establish: no RTU */
}

/* The child listener: listens, writes its port, and 'Q' once a request is in. */
static void kid_listener(int fd)
{
	struct cmf_side s = { 0 };
	uint16_t port = 0;
	char q = 'Q';

	if (cmf_open(&s) != 0 || cmf_listen(&s, "127.0.0.1", &port, 4) != 0 || write(fd, &port, sizeof(port)) != 2)
		_exit(10);
	if (cmf_next_event(s.ch, CMF_WAIT_MS) == NULL || write(fd, &q, 1) != 1)
		_exit(11);
	for (;;)
		pause(); /* never answers */
}

static bool read_byte(int fd, char want)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char c = 0;

	return poll(&pf, 1, CMF_WAIT_MS) == 1 && read(fd, &c, 1) == 1 && c == want;
}

static void close_pipe(void *arg)
{
	int *fds = arg;

	close(fds[0]);
	close(fds[1]);
}

/*
 * A peer process that dies between REQ and RTU: a requester killed before
 * the answer or after the REP leaves the listener's id CONNECT_ERROR
 * (-ETIMEDOUT); a listener killed with the request unanswered leaves the
 * requester UNREACHABLE (-ETIMEDOUT). Every id and QP then goes cleanly.
 */
static void test_peer_dies_before_rtu(void)
{
	static struct cmf_side srv, acc, cli;
	static int fds[2];
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &acc);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(pipe(fds));
	th_defer(close_pipe, fds);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));

	/* Killed after its REQ: the answer finds nobody. */
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0)
		kid_requester(port, fds[1]);
	th_defer(kid_reap, NULL);
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	kid_kill();
	acc.id = ev.id;
	CHECK_OK(cmf_qp(&acc, acc.id));
	CHECK_OK(rdma_accept(acc.id, NULL));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, NULL));
	cmf_side_free(&acc);

	/* Killed after the REP, before its RTU. */
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0)
		kid_requester(port, fds[1]);
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	acc.id = ev.id;
	CHECK_OK(cmf_qp(&acc, acc.id));
	CHECK_OK(rdma_accept(acc.id, NULL));
	CHECK(read_byte(fds[0], 'R'));
	kid_kill();
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, NULL));
	cmf_side_free(&acc);

	/* The listener killed with the request unanswered. */
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0)
		kid_listener(fds[1]);
	{
		struct pollfd pf = { .fd = fds[0], .events = POLLIN };

		CHECK(poll(&pf, 1, CMF_WAIT_MS) == 1 && read(fds[0], &port, sizeof(port)) == sizeof(port));
	}
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(cmf_qp(&cli, cli.id));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(read_byte(fds[0], 'Q'));
	kid_kill();
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL));
	CHECK(cmf_quiet(srv.ch) && cmf_quiet(cli.ch));
}

/* A request from s to port with one byte of private data, tag. */
static int connect_tagged(struct cmf_side *s, uint16_t port, uint8_t *tag)
{
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };

	if (cmf_open(s) != 0 || !cmf_resolve(s, "127.0.0.1", port))
		return -1;
	p.private_data = tag;
	p.private_data_len = 1;
	return rdma_connect(s->id, &p);
}

/* The next event is a CONNECT_REQUEST tagged tag; rejects it. */
static bool request_tagged(struct cmf_side *srv, uint8_t tag)
{
	struct rdma_cm_event *ev = cmf_next_event(srv->ch, CMF_WAIT_MS);
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	bool ok;

	if (ev == NULL)
		return false;
	type = ev->event;
	ok = type == RDMA_CM_EVENT_CONNECT_REQUEST && ((const uint8_t *)ev->param.conn.private_data)[0] == tag;
	if (!ok)
		fprintf(stderr, "event %s, tag %c expected\n", rdma_event_str(type), tag);
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
	}
	return ok;
}

/*
 * rdma_listen(3)'s backlog: with as many requests queued unretrieved as it
 * allows, a further REQ is not delivered (the kernel drops it for the
 * requester to retry). One that finds room before its requester gives up is
 * delivered then; one whose requester's CM timeout passes first ends in
 * UNREACHABLE (-ETIMEDOUT) and is never seen: the next request delivered is
 * a later one.
 */
static void test_backlog(void)
{
	static struct cmf_side srv, a, b, c, d;
	uint8_t ta = 'A', tb = 'B', tc = 'C', td = 'D';
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &a);
	th_defer(cmf_side_free, &b);
	th_defer(cmf_side_free, &c);
	th_defer(cmf_side_free, &d);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 1));

	/* Room found: B waits until A's request is retrieved. */
	setenv("SOFTDPU_CM_TIMEOUT_MS", "60000", 1);
	CHECK_OK(connect_tagged(&a, port, &ta));
	{
		struct pollfd pf = { .fd = srv.ch->fd, .events = POLLIN };

		CHECK(poll(&pf, 1, CMF_WAIT_MS) == 1); /* A's request is queued */
	}
	CHECK_OK(connect_tagged(&b, port, &tb));
	CHECK(request_tagged(&srv, 'A'));
	CHECK(request_tagged(&srv, 'B'));
	CHECK(cmf_expect(a.ch, RDMA_CM_EVENT_REJECTED, 28, NULL));
	CHECK(cmf_expect(b.ch, RDMA_CM_EVENT_REJECTED, 28, NULL));

	/* No room in time: D gives up, and the request after C's is not D's. */
	CHECK_OK(connect_tagged(&c, port, &tc));
	{
		struct pollfd pf = { .fd = srv.ch->fd, .events = POLLIN };

		CHECK(poll(&pf, 1, CMF_WAIT_MS) == 1);
	}
	setenv("SOFTDPU_CM_TIMEOUT_MS", "300", 1);
	CHECK_OK(connect_tagged(&d, port, &td));
	CHECK(cmf_expect(d.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL));
	CHECK(request_tagged(&srv, 'C'));
	cmf_side_free(&a);
	CHECK_OK(connect_tagged(&a, port, &ta));
	CHECK(request_tagged(&srv, 'A'));
	unsetenv("SOFTDPU_CM_TIMEOUT_MS");
}

static int bind_listen(struct cmf_side *s, const char *ip, uint16_t port)
{
	struct sockaddr_in a = cmf_addr4(ip, port);

	if (cmf_open(s) != 0 || rdma_bind_addr(s->id, (struct sockaddr *)&a) != 0)
		return -1;
	return rdma_listen(s->id, 4);
}

static bool bind_refused(struct cmf_side *s, const char *ip, uint16_t port)
{
	struct sockaddr_in a = cmf_addr4(ip, port);

	errno = 0;
	return cmf_open(s) == 0 && rdma_bind_addr(s->id, (struct sockaddr *)&a) == -1 && errno == EADDRINUSE;
}

/*
 * One port, two IPs: as the kernel binds (rdma_bind_addr(3) over its port
 * check), ids may share a port on different specific IPs, each taking the
 * requests for its own IP; the same IP twice, or the wildcard beside a
 * specific IP, is EADDRINUSE. A request for a third IP of the port is
 * refused (28: the port has listeners, none for that IP).
 */
static void test_bind_two_ips(void)
{
	static struct cmf_side one, two, again, any, c1, c2, c3;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &one);
	th_defer(cmf_side_free, &two);
	th_defer(cmf_side_free, &again);
	th_defer(cmf_side_free, &any);
	th_defer(cmf_side_free, &c1);
	th_defer(cmf_side_free, &c2);
	th_defer(cmf_side_free, &c3);
	CHECK_OK(cmf_open(&one));
	CHECK_OK(cmf_listen(&one, "127.0.0.1", &port, 4));
	CHECK_OK(bind_listen(&two, "127.0.0.2", port));
	CHECK(ntohs(rdma_get_src_port(two.id)) == port);
	CHECK(bind_refused(&again, "127.0.0.1", port));
	CHECK(bind_refused(&any, "0.0.0.0", port));
	CHECK_OK(cmf_open(&c2));
	CHECK(cmf_resolve(&c2, "127.0.0.2", port));
	CHECK_OK(rdma_connect(c2.id, &p));
	CHECK(cmf_expect(two.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	CHECK(ev.listen_id == two.id);
	CHECK_OK(rdma_reject(ev.id, NULL, 0));
	CHECK_OK(rdma_destroy_id(ev.id));
	CHECK_OK(cmf_open(&c1));
	CHECK(cmf_resolve(&c1, "127.0.0.1", port));
	CHECK_OK(rdma_connect(c1.id, &p));
	CHECK(cmf_expect(one.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	CHECK(ev.listen_id == one.id);
	CHECK_OK(rdma_reject(ev.id, NULL, 0));
	CHECK_OK(rdma_destroy_id(ev.id));
	CHECK_OK(cmf_open(&c3));
	CHECK(cmf_resolve(&c3, "127.0.0.3", port));
	CHECK_OK(rdma_connect(c3.id, &p));
	CHECK(cmf_expect(c3.ch, RDMA_CM_EVENT_REJECTED, 28, NULL));
	CHECK(cmf_quiet(one.ch) && cmf_quiet(two.ch));
	/* With both gone the wildcard takes the port, and then no specific IP does. */
	cmf_side_free(&one);
	cmf_side_free(&two);
	cmf_side_free(&again);
	cmf_side_free(&any);
	CHECK_OK(bind_listen(&any, "0.0.0.0", port));
	CHECK(bind_refused(&again, "127.0.0.1", port));
}

int main(void)
{
	RUN(test_getaddrinfo_hints_only);
	RUN(test_depths_and_counts);
	RUN(test_private_data_limits);
	RUN(test_peer_dies_before_rtu);
	RUN(test_backlog);
	RUN(test_bind_two_ips);
	return th_summary("test_rdmacm_inputs");
}
