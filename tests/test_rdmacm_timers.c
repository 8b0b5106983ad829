/*
 * The RDMA CM's timers, as the kernel's CM has them (rdma_cm(7),
 * rdma_get_cm_event(3), rdma_resolve_addr(3)): a peer that lives but does
 * not answer — a process stopped with SIGSTOP — ends a REQ in UNREACHABLE
 * (-ETIMEDOUT), a REP in UNREACHABLE (-ETIMEDOUT) and a DREQ in
 * DISCONNECTED (-ETIMEDOUT); an address query on a port's link that nobody
 * answers ends in ADDR_ERROR (-ETIMEDOUT) once its timeout_ms passed.
 *
 * SOFTDPU_CM_TIMEOUT_MS is set short here so the program does not wait the
 * kernel's 74 s; the hang guard is far longer than it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "rdmacm_fixture.h"

#define CM_TIMEOUT_MS "400"

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

/* Stops the child and waits until it is stopped: from then on its CM answers nothing. */
static bool kid_stop(void)
{
	int st;

	return kill(kid, SIGSTOP) == 0 && waitpid(kid, &st, WUNTRACED) == kid && WIFSTOPPED(st);
}

/*
 * The child: listens on a free port and writes it on fd; with accept, takes
 * one request with a QP and writes 'E' once it is established. Then waits.
 */
static void kid_server(int fd, bool accept)
{
	struct cmf_side s = { 0 }, c = { 0 };
	struct rdma_cm_event ev;
	uint16_t port = 0;
	char ok = 'E';

	if (cmf_open(&s) != 0 || cmf_listen(&s, "127.0.0.1", &port, 4) != 0)
		_exit(10);
	if (write(fd, &port, sizeof(port)) != sizeof(port))
		_exit(11);
	if (accept) {
		if (!cmf_expect(s.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev))
			_exit(12);
		if (cmf_qp(&c, ev.id) != 0 || rdma_accept(ev.id, NULL) != 0)
			_exit(13);
		if (!cmf_expect(s.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL) || write(fd, &ok, 1) != 1)
			_exit(14);
	}
	for (;;)
		pause();
}

/* Forks kid_server; its port in *port. */
static bool spawn_server(bool accept, uint16_t *port, int *rfd)
{
	struct pollfd pf;
	int fds[2];

	if (pipe(fds) != 0)
		return false;
	kid = fork();
	if (kid < 0)
		return false;
	if (kid == 0) {
		close(fds[0]);
		kid_server(fds[1], accept);
	}
	th_defer(kid_reap, NULL);
	close(fds[1]);
	*rfd = fds[0];
	pf = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	return poll(&pf, 1, CMF_WAIT_MS) == 1 && read(fds[0], port, sizeof(*port)) == sizeof(*port) && *port != 0;
}

static void close_fd(void *arg)
{
	close((int)(intptr_t)arg);
}

/* A REQ whose listener's process is stopped: UNREACHABLE, -ETIMEDOUT, and the id goes cleanly. */
static void test_req_unanswered(void)
{
	static struct cmf_side cli;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	uint16_t port = 0;
	int fd = -1;

	CHECK(spawn_server(false, &port, &fd));
	th_defer(close_fd, (void *)(intptr_t)fd);
	CHECK(kid_stop());
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(cmf_qp(&cli, cli.id));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL));
	CHECK(cmf_quiet(cli.ch));
}

/* The child: connects without a QP to port and then waits (its RTU never comes once it is stopped). */
static void kid_client(uint16_t port)
{
	struct cmf_side c = { 0 };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .qp_num = 0x55 };

	if (cmf_open(&c) != 0 || !cmf_resolve(&c, "127.0.0.1", port) || rdma_connect(c.id, &p) != 0)
		_exit(10);
	for (;;)
		pause();
}

/* A REP whose requester's process is stopped before its RTU: UNREACHABLE, -ETIMEDOUT on the listener's id. */
static void test_rep_unanswered(void)
{
	static struct cmf_side srv;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .qp_num = 0x66 };
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0)
		kid_client(port);
	th_defer(kid_reap, NULL);
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	CHECK(kid_stop());
	CHECK_OK(rdma_accept(ev.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL));
	CHECK_OK(rdma_destroy_id(ev.id));
	CHECK(cmf_quiet(srv.ch));
}

/* A DREQ to a stopped peer: DISCONNECTED, -ETIMEDOUT, once; a second rdma_disconnect is harmless. */
static void test_dreq_unanswered(void)
{
	static struct cmf_side cli;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct pollfd pf;
	uint16_t port = 0;
	int fd = -1;
	char c = 0;

	CHECK(spawn_server(true, &port, &fd));
	th_defer(close_fd, (void *)(intptr_t)fd);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(cmf_qp(&cli, cli.id));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
	pf = (struct pollfd){ .fd = fd, .events = POLLIN };
	CHECK(poll(&pf, 1, CMF_WAIT_MS) == 1 && read(fd, &c, 1) == 1 && c == 'E');
	CHECK(kid_stop());
	CHECK_OK(rdma_disconnect(cli.id));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT, NULL));
	CHECK_OK(rdma_disconnect(cli.id));
	CHECK(cmf_quiet(cli.ch));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * 192.168.100.77 is on pf0's link (192.168.100.0/24, docs/TOPOLOGY.md) and
 * no function has it: the neighbour query goes unanswered, so ADDR_ERROR
 * -ETIMEDOUT comes, and not before timeout_ms. The id can resolve again
 * after it; an id destroyed while its query waits reports nothing.
 */
static void test_addr_query_timeout(void)
{
	static struct cmf_side c, d;
	struct sockaddr_in a = cmf_addr4("192.168.100.77", 7471);
	struct sockaddr_in lo = cmf_addr4("127.0.0.1", 7471);
	uint64_t t0;

	th_defer(cmf_side_free, &c);
	th_defer(cmf_side_free, &d);
	CHECK_OK(cmf_open(&c));
	t0 = now_ms();
	CHECK_OK(rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&a, 300));
	CHECK(rdma_resolve_route(c.id, 300) == -1 && errno == EINVAL); /* no address yet */
	CHECK(cmf_expect(c.ch, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, NULL));
	CHECK(now_ms() - t0 >= 300);
	CHECK_OK(rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&lo, 300));
	CHECK(cmf_expect(c.ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL));
	CHECK_OK(cmf_open(&d));
	CHECK_OK(rdma_resolve_addr(d.id, NULL, (struct sockaddr *)&a, 200));
	CHECK_OK(rdma_destroy_id(d.id));
	d.id = NULL;
	CHECK(cmf_next_event(d.ch, 600) == NULL);
}

int main(void)
{
	setenv("SOFTDPU_CM_TIMEOUT_MS", CM_TIMEOUT_MS, 1);
	RUN(test_req_unanswered);
	RUN(test_rep_unanswered);
	RUN(test_dreq_unanswered);
	RUN(test_addr_query_timeout);
	return th_summary("test_rdmacm_timers");
}
