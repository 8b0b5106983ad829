/*
 * Comm channel tests. The host side (clients) runs in this process; DPU-side
 * services and extra clients run as children: this binary re-executed through
 * /proc/self/exe with a role argument and SOFTDPU_SIDE set for the child
 * (tests/th_proc.h); a child says READY on its stdout.
 * Every wait is a bounded loop; the poll timeouts are hang guards only.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "doca_comm_channel.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "dev_open.h"
#include "harness.h"
#include "th_proc.h"

#define MAX_MSG 4080
#define GUARD_MS 10000	/* a wait this long means the test failed; never a measurement */
#define WAIT_ROUNDS 100000
#define HOST_PCI "0000:0b:00.0" /* pf0, represented by hpf0 under p0 */
#define DPU_PCI "0000:03:00.0"	/* p0 */

typedef struct doca_comm_channel_ep_t ep_t;
typedef struct doca_comm_channel_addr_t addr_t;

static char svc[48]; /* per-run service name prefix, so parallel runs never meet */

/* ------------------------------------------------------------------ devices */

/* ------------------------------------------------------------------ waiting */

static int wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, GUARD_MS) == 1;
}

static doca_error_t recv_wait(ep_t *ep, void *buf, size_t *len, addr_t **peer)
{
	doca_event_channel_t rfd;
	size_t cap = *len;
	doca_error_t ret;

	if (doca_comm_channel_ep_get_event_channel(ep, NULL, &rfd) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	for (int i = 0; i < WAIT_ROUNDS; i++) {
		*len = cap;
		ret = doca_comm_channel_ep_recvfrom(ep, buf, len, DOCA_CC_MSG_FLAG_NONE, peer);
		if (ret != DOCA_ERROR_AGAIN)
			return ret;
		doca_comm_channel_ep_event_handle_arm_recv(ep);
		if (!wait_fd(rfd, POLLIN))
			return DOCA_ERROR_TIME_OUT;
	}
	return DOCA_ERROR_TIME_OUT;
}

static doca_error_t send_wait(ep_t *ep, const void *msg, size_t len, addr_t *peer)
{
	doca_event_channel_t sfd;
	doca_error_t ret;

	if (doca_comm_channel_ep_get_event_channel(ep, &sfd, NULL) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	for (int i = 0; i < WAIT_ROUNDS; i++) {
		ret = doca_comm_channel_ep_sendto(ep, msg, len, DOCA_CC_MSG_FLAG_NONE, peer);
		if (ret != DOCA_ERROR_AGAIN)
			return ret;
		doca_comm_channel_ep_event_handle_arm_send(ep);
		if (!wait_fd(sfd, POLLIN))
			return DOCA_ERROR_TIME_OUT;
	}
	return DOCA_ERROR_TIME_OUT;
}

/* Sends a text request and waits for the text answer. */
static doca_error_t request(ep_t *ep, addr_t *peer, const char *req, char *ans, size_t cap)
{
	size_t len = cap - 1;
	addr_t *from;
	doca_error_t ret = send_wait(ep, req, strlen(req), peer);

	if (ret == DOCA_SUCCESS)
		ret = recv_wait(ep, ans, &len, &from);
	ans[ret == DOCA_SUCCESS ? len : 0] = '\0';
	return ret;
}

/* ------------------------------------------------------------------ endpoints */

static doca_error_t client_connect(struct doca_dev *dev, const char *name, ep_t **ep, addr_t **peer)
{
	doca_event_channel_t rfd;
	doca_error_t ret;

	ret = doca_comm_channel_ep_create(ep);
	if (ret == DOCA_SUCCESS)
		ret = doca_comm_channel_ep_set_device(*ep, dev);
	if (ret == DOCA_SUCCESS)
		ret = doca_comm_channel_ep_connect(*ep, name, peer);
	if (ret == DOCA_SUCCESS)
		ret = doca_comm_channel_ep_get_event_channel(*ep, NULL, &rfd);
	/* The handshake completes when the service's answer arrives on the receive handle. */
	for (int i = 0; i < WAIT_ROUNDS && ret == DOCA_SUCCESS; i++) {
		doca_error_t st = doca_comm_channel_peer_addr_update_info(*peer);

		if (st != DOCA_ERROR_CONNECTION_INPROGRESS)
			return st;
		if (!wait_fd(rfd, POLLIN))
			return DOCA_ERROR_TIME_OUT;
	}
	return ret;
}

static doca_error_t service_listen(struct doca_dev *dev, struct doca_dev_rep *rep, const char *name, ep_t **ep)
{
	doca_error_t ret = doca_comm_channel_ep_create(ep);

	if (ret == DOCA_SUCCESS)
		ret = doca_comm_channel_ep_set_device(*ep, dev);
	if (ret == DOCA_SUCCESS)
		ret = doca_comm_channel_ep_set_device_rep(*ep, rep);
	if (ret == DOCA_SUCCESS)
		ret = doca_comm_channel_ep_listen(*ep, name);
	return ret;
}

static doca_error_t service_open(const char *name, struct doca_dev **dev, struct doca_dev_rep **rep, ep_t **ep)
{
	doca_error_t ret = th_open_dev_pci(DPU_PCI, dev);

	if (ret == DOCA_SUCCESS)
		ret = th_open_rep_pci(*dev, HOST_PCI, rep);
	if (ret == DOCA_SUCCESS)
		ret = service_listen(*dev, *rep, name, ep);
	return ret;
}

static void service_close(struct doca_dev *dev, struct doca_dev_rep *rep, ep_t *ep)
{
	doca_comm_channel_ep_destroy(ep);
	doca_dev_rep_close(rep);
	doca_dev_close(dev);
}

/* ------------------------------------------------------------------ children */

/* The roles of this case (tests/th_proc.h), found by pid; the harness reaps them when the case ends. */
#define MAX_CHILDREN 8
static struct th_proc *children[MAX_CHILDREN];

static void forget_child(void *slot)
{
	*(struct th_proc **)slot = NULL;
}

/* A role with up to two more arguments (NULL: none). */
static pid_t spawn_args(const char *side, const char *role, const char *name, const char *a1, const char *a2)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (children[i] != NULL)
			continue;
		children[i] = th_proc_start(side, role, name, a1, a2, NULL);
		if (children[i] == NULL)
			return -1;
		th_defer(forget_child, &children[i]);
		return children[i]->pid;
	}
	return -1;
}

static pid_t spawn(const char *side, const char *role, const char *name)
{
	return spawn_args(side, role, name, NULL, NULL);
}

/* A role that also keeps two pipe ends, named by its arguments: close-on-exec is lifted while it starts. */
static pid_t spawn_with_fds(const char *side, const char *role, const char *name, int fd1, int fd2)
{
	char a1[16], a2[16];
	pid_t pid;

	snprintf(a1, sizeof(a1), "%d", fd1);
	snprintf(a2, sizeof(a2), "%d", fd2);
	fcntl(fd1, F_SETFD, 0);
	fcntl(fd2, F_SETFD, 0);
	pid = spawn_args(side, role, name, a1, a2);
	fcntl(fd1, F_SETFD, FD_CLOEXEC);
	fcntl(fd2, F_SETFD, FD_CLOEXEC);
	return pid;
}

static struct th_proc *child_of(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] != NULL && children[i]->pid == pid)
			return children[i];
	return NULL;
}

/* Starts a child and waits for its READY line. go_fd, if wanted, gets a descriptor writing to the child's stdin. */
static pid_t start_child(const char *side, const char *role, const char *name, int *go_fd)
{
	pid_t pid = spawn(side, role, name);
	struct th_proc *c = child_of(pid);
	const char *l;

	if (c == NULL)
		return -1;
	if (go_fd != NULL && (*go_fd = fcntl(c->in, F_DUPFD_CLOEXEC, 0)) < 0)
		return -1;
	if ((l = th_proc_line(c)) == NULL || strcmp(l, "READY") != 0) {
		th_proc_kill(c);
		th_proc_wait(c);
		return -1;
	}
	return pid;
}

/* Exit code of the child, or 128 + the signal that ended it; -1 when it did not end (then it is killed). */
static int child_status(pid_t pid)
{
	struct th_proc *c = child_of(pid);

	return c == NULL ? -1 : th_proc_wait(c);
}

/* A role tells the test it is ready on its stdout. */
static void signal_ready(int fd)
{
	if (write(fd, "READY\n", 6) != 6)
		exit(90);
}

/* Echo service: echoes every message; "STATS" answers counters, "QUIT" ends it. */
struct echo_state {
	unsigned resets;
};

static void echo_stats(ep_t *ep, char *out, size_t cap, const struct echo_state *st)
{
	addr_t **list;
	uint32_t n = 0, pending = 0;

	if (doca_comm_channel_ep_update_service_state_info(ep) == DOCA_SUCCESS &&
	    doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n) == DOCA_SUCCESS)
		doca_comm_channel_ep_get_pending_connections(ep, &pending);
	snprintf(out, cap, "resets=%u peers=%u pending=%u", st->resets, n, pending);
}

static int echo_one(ep_t *ep, struct echo_state *st)
{
	static char buf[MAX_MSG + 1];
	size_t len = MAX_MSG;
	addr_t *peer = NULL;
	doca_error_t ret = recv_wait(ep, buf, &len, &peer);

	if (ret == DOCA_ERROR_CONNECTION_RESET) {
		st->resets++;
		return doca_comm_channel_ep_disconnect(ep, peer) == DOCA_SUCCESS ? 0 : 91;
	}
	if (ret != DOCA_SUCCESS)
		return 92;
	if (len == 4 && memcmp(buf, "QUIT", 4) == 0)
		return send_wait(ep, "BYE", 3, peer) == DOCA_SUCCESS ? 1 : 93;
	if (len == 5 && memcmp(buf, "STATS", 5) == 0) {
		echo_stats(ep, buf, sizeof(buf), st);
		len = strlen(buf);
	}
	return send_wait(ep, buf, len, peer) == DOCA_SUCCESS ? 0 : 94;
}

static int role_echo(const char *name, int ready_fd)
{
	struct echo_state st = { 0 };
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	ep_t *ep = NULL;
	int rc = 0;

	if (service_open(name, &dev, &rep, &ep) != DOCA_SUCCESS)
		return 80;
	signal_ready(ready_fd);
	while (rc == 0)
		rc = echo_one(ep, &st);
	service_close(dev, rep, ep);
	return rc == 1 ? 0 : rc;
}

#define SINK_MSG 100

/* Sink service: reads nothing until told how many messages to expect, then checks them all. */
static int role_sink(const char *name, int ready_fd, int go_fd)
{
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	char buf[MAX_MSG];
	uint32_t expect = 0, i;
	addr_t *peer = NULL;
	ep_t *ep = NULL;
	int rc = 0;

	if (service_open(name, &dev, &rep, &ep) != DOCA_SUCCESS)
		return 80;
	signal_ready(ready_fd);
	if (!wait_fd(go_fd, POLLIN) || read(go_fd, &expect, sizeof(expect)) != sizeof(expect))
		rc = 81;
	for (i = 0; i < expect && rc == 0; i++) {
		size_t len = sizeof(buf);
		uint32_t seq;

		if (recv_wait(ep, buf, &len, &peer) != DOCA_SUCCESS || len != SINK_MSG)
			rc = 82;
		memcpy(&seq, buf, sizeof(seq));
		if (rc == 0 && seq != i)
			rc = 83;
	}
	snprintf(buf, sizeof(buf), "OK %u", i);
	if (rc == 0 && send_wait(ep, buf, strlen(buf), peer) != DOCA_SUCCESS)
		rc = 84;
	/* The answer stays readable by the client after this process is gone. */
	service_close(dev, rep, ep);
	close(go_fd);
	return rc;
}

/* Host client that connects, proves it works, then waits to be killed. */
static int role_client(const char *name, int ready_fd)
{
	struct doca_dev *dev = NULL;
	char ans[64];
	addr_t *peer;
	ep_t *ep;

	if (th_open_dev_pci(HOST_PCI, &dev) != DOCA_SUCCESS || client_connect(dev, name, &ep, &peer) != DOCA_SUCCESS)
		return 80;
	if (request(ep, peer, "hello", ans, sizeof(ans)) != DOCA_SUCCESS || strcmp(ans, "hello") != 0)
		return 81;
	signal_ready(ready_fd);
	for (;;)
		pause();
}

/* ------------------------------------------------------------------ DPU-side API checks (child) */

static const char *dpu_name;

static void dpu_caps(void)
{
	struct doca_dev *dev;
	uint32_t v = 0;

	CHECK_OK(th_open_dev_pci(DPU_PCI, &dev));
	CHECK_OK(doca_comm_channel_get_service_max_num_connections(doca_dev_as_devinfo(dev), &v));
	CHECK(v == 128);
	CHECK_ERR(doca_comm_channel_get_service_max_num_connections(doca_dev_as_devinfo(dev), NULL),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dev_close(dev));
}

static void dpu_listen_rules(void)
{
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	addr_t *peer;
	ep_t *ep;

	CHECK_OK(th_open_dev_pci(DPU_PCI, &dev));
	CHECK_OK(th_open_rep_pci(dev, HOST_PCI, &rep));
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, dpu_name), DOCA_ERROR_BAD_STATE); /* no device */
	CHECK_OK(doca_comm_channel_ep_set_device(ep, dev));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, dpu_name), DOCA_ERROR_BAD_STATE); /* no representor */
	CHECK_ERR(doca_comm_channel_ep_connect(ep, dpu_name, &peer), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_comm_channel_ep_set_device_rep(ep, rep));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_listen(ep, ""), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(ep), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_comm_channel_ep_listen(ep, dpu_name));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, dpu_name), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, dpu_name, &peer), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_set_device(ep, dev), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_device_rep(ep, rep), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_max_msg_size(ep, 100), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_send_queue_size(ep, 16), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_recv_queue_size(ep, 16), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK_OK(doca_dev_rep_close(rep));
	CHECK_OK(doca_dev_close(dev));
}

static void dpu_service_idle(void)
{
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	doca_event_channel_t s = -1, r = -1, v = -1;
	struct doca_dev_rep *got_rep;
	addr_t **list, *peer;
	uint32_t n = 9, pending = 9;
	char buf[16];
	size_t len = sizeof(buf);
	ep_t *ep, *ep2;

	CHECK_OK(service_open(dpu_name, &dev, &rep, &ep));
	CHECK_OK(doca_comm_channel_ep_get_device_rep(ep, &got_rep));
	CHECK(got_rep == rep);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &peer), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_comm_channel_ep_get_event_channel(ep, &s, &r));
	CHECK(s >= 0 && r >= 0 && s != r);
	CHECK_OK(doca_comm_channel_ep_get_service_event_channel(ep, &v));
	CHECK(v >= 0 && v != s && v != r);
	CHECK_OK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK_OK(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n));
	CHECK(n == 0);
	CHECK_OK(doca_comm_channel_ep_get_pending_connections(ep, &pending));
	CHECK(pending == 0);
	CHECK_ERR(doca_comm_channel_ep_get_pending_connections(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	/* Nobody else may serve the same name for the same function. */
	CHECK_OK(doca_comm_channel_ep_create(&ep2));
	CHECK_OK(doca_comm_channel_ep_set_device(ep2, dev));
	CHECK_OK(doca_comm_channel_ep_set_device_rep(ep2, rep));
	CHECK_ERR(doca_comm_channel_ep_listen(ep2, dpu_name), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_OK(doca_comm_channel_ep_destroy(ep2));
	service_close(dev, rep, ep);
}

static int raw_connect(const char *name);
static void hello_frame(uint8_t f[24]);

/* The service handle reports a new client and a hang-up; the snapshot counts pending and connected ones. */
static void dpu_service_events(void)
{
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	doca_event_channel_t v;
	uint8_t hello[24];
	uint32_t n = 9, pending = 9;
	addr_t **list;
	ep_t *ep;
	int raw;

	CHECK_OK(service_open(dpu_name, &dev, &rep, &ep));
	CHECK_OK(doca_comm_channel_ep_get_service_event_channel(ep, &v));
	CHECK_OK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK(poll(&(struct pollfd){ .fd = v, .events = POLLIN }, 1, 0) == 0);
	raw = raw_connect(dpu_name);
	CHECK(raw >= 0);
	CHECK(wait_fd(v, POLLIN));
	CHECK_OK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK_OK(doca_comm_channel_ep_get_pending_connections(ep, &pending));
	CHECK(pending == 1); /* connected, no HELLO yet */
	CHECK(poll(&(struct pollfd){ .fd = v, .events = POLLIN }, 1, 0) == 0);
	hello_frame(hello);
	CHECK(send(raw, hello, sizeof(hello), MSG_NOSIGNAL) == (ssize_t)sizeof(hello));
	CHECK_OK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK_OK(doca_comm_channel_ep_get_pending_connections(ep, &pending));
	CHECK_OK(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n));
	CHECK(pending == 0 && n == 1);
	close(raw);
	CHECK(wait_fd(v, POLLIN)); /* hang-up */
	CHECK_OK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK_OK(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n));
	CHECK(n == 0);
	service_close(dev, rep, ep);
}

static int role_dpu_api(const char *name)
{
	dpu_name = name;
	RUN(dpu_caps);
	RUN(dpu_listen_rules);
	RUN(dpu_service_idle);
	RUN(dpu_service_events);
	return th_failed == 0 ? 0 : 70;
}

/* ------------------------------------------------------------------ host-side tests */

static struct doca_dev *host_dev;

static void mkname(char *out, size_t cap, const char *what)
{
	snprintf(out, cap, "%s-%s", svc, what);
}

static void test_caps(void)
{
	struct doca_devinfo *info = doca_dev_as_devinfo(host_dev);
	uint32_t v = 0;

	CHECK_OK(doca_comm_channel_get_max_service_name_len(&v));
	CHECK(v == 64);
	CHECK_OK(doca_comm_channel_get_max_message_size(info, &v));
	CHECK(v == MAX_MSG);
	CHECK_OK(doca_comm_channel_get_max_send_queue_size(info, &v));
	CHECK(v == 8192);
	CHECK_OK(doca_comm_channel_get_max_recv_queue_size(info, &v));
	CHECK(v == 8192);
	CHECK_ERR(doca_comm_channel_get_service_max_num_connections(info, &v), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_get_max_service_name_len(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_message_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_message_size(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_send_queue_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_recv_queue_size(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_service_max_num_connections(NULL, &v), DOCA_ERROR_INVALID_VALUE);
}

static void test_ep_properties(void)
{
	struct doca_dev *dev = (struct doca_dev *)1;
	struct doca_dev_rep *rep = (struct doca_dev_rep *)1;
	uint16_t v = 0;
	ep_t *ep;

	CHECK_ERR(doca_comm_channel_ep_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_destroy(NULL), DOCA_ERROR_NOT_CONNECTED);
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	CHECK_OK(doca_comm_channel_ep_get_max_msg_size(ep, &v));
	CHECK(v == MAX_MSG);
	CHECK_OK(doca_comm_channel_ep_get_send_queue_size(ep, &v));
	CHECK(v == 64);
	CHECK_OK(doca_comm_channel_ep_get_recv_queue_size(ep, &v));
	CHECK(v == 64);
	CHECK_OK(doca_comm_channel_ep_set_max_msg_size(ep, 10)); /* raised to the minimum */
	CHECK_OK(doca_comm_channel_ep_get_max_msg_size(ep, &v));
	CHECK(v == 64);
	CHECK_ERR(doca_comm_channel_ep_set_max_msg_size(ep, MAX_MSG + 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_comm_channel_ep_set_max_msg_size(ep, MAX_MSG));
	CHECK_OK(doca_comm_channel_ep_set_send_queue_size(ep, 100)); /* next power of two */
	CHECK_OK(doca_comm_channel_ep_get_send_queue_size(ep, &v));
	CHECK(v == 128);
	CHECK_OK(doca_comm_channel_ep_set_recv_queue_size(ep, 0)); /* the minimum */
	CHECK_OK(doca_comm_channel_ep_get_recv_queue_size(ep, &v));
	CHECK(v == 8);
	CHECK_ERR(doca_comm_channel_ep_set_send_queue_size(ep, 8193), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_recv_queue_size(ep, 9000), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_comm_channel_ep_get_device(ep, &dev));
	CHECK(dev == NULL);
	CHECK_OK(doca_comm_channel_ep_get_device_rep(ep, &rep));
	CHECK(rep == NULL);
	CHECK_ERR(doca_comm_channel_ep_set_device(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_device_rep(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_comm_channel_ep_set_device(ep, host_dev));
	CHECK_OK(doca_comm_channel_ep_get_device(ep, &dev));
	CHECK(dev == host_dev);
	CHECK_ERR(doca_dev_close(host_dev), DOCA_ERROR_IN_USE); /* the endpoint holds the device */
	CHECK_ERR(doca_comm_channel_ep_get_device(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_device_rep(NULL, &rep), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_max_msg_size(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_send_queue_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_recv_queue_size(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_max_msg_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_send_queue_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_recv_queue_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

/* Everything that needs a listening or connected endpoint refuses an idle one. */
static void test_idle_endpoint(void)
{
	doca_event_channel_t fd;
	addr_t **list, *peer = NULL;
	uint32_t n;
	char buf[8];
	size_t len = sizeof(buf);
	ep_t *ep;

	CHECK_OK(doca_comm_channel_ep_create(&ep));
	CHECK_ERR(doca_comm_channel_ep_get_event_channel(ep, &fd, &fd), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_get_event_channel(ep, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(ep, &fd), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_event_handle_arm_send(ep), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_event_handle_arm_recv(ep), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_event_handle_arm_send(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_event_handle_arm_recv(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, NULL, &len, 0, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, NULL, 0, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, NULL), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_sendto(NULL, "x", 1, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_disconnect(ep, NULL), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_disconnect(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(ep), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_pending_connections(ep, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static void test_host_side_rules(void)
{
	char name[64], longname[80];
	addr_t *peer;
	ep_t *ep;

	mkname(name, sizeof(name), "nobody");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[64] = '\0'; /* 64 characters: one more than the limit */
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, &peer), DOCA_ERROR_BAD_STATE); /* no device */
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_comm_channel_ep_set_device(ep, host_dev));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_NOT_SUPPORTED); /* host side */
	CHECK_ERR(doca_comm_channel_ep_connect(ep, NULL, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, "", &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, longname, &peer), DOCA_ERROR_INVALID_VALUE);
	/* Nobody listens: refused at once, and the endpoint stays usable. */
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, &peer), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_OK(doca_comm_channel_ep_set_max_msg_size(ep, 128));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static void test_dpu_side_rules(void)
{
	char name[64];
	pid_t pid;

	mkname(name, sizeof(name), "dpu-api");
	pid = spawn("dpu", "dpu_api", name);
	CHECK(pid > 0);
	CHECK(child_status(pid) == 0);
}

static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* Sizes 1..max both ways (the service echoes), byte for byte. */
static void exchange_all_sizes(ep_t *ep, addr_t *peer)
{
	static uint8_t out[MAX_MSG], in[MAX_MSG];
	uint64_t v;

	for (size_t sz = 1; sz <= MAX_MSG; sz++) {
		size_t len = sizeof(in);
		addr_t *from = NULL;

		fill(out, sz, (uint32_t)sz);
		CHECK_OK(send_wait(ep, out, sz, peer));
		CHECK_OK(recv_wait(ep, in, &len, &from));
		CHECK(from == peer && len == sz && memcmp(in, out, sz) == 0);
	}
	CHECK_OK(doca_comm_channel_peer_addr_update_info(peer));
	CHECK_OK(doca_comm_channel_peer_addr_get_send_messages(peer, &v));
	CHECK(v == MAX_MSG);
	CHECK_OK(doca_comm_channel_peer_addr_get_recv_messages(peer, &v));
	CHECK(v == MAX_MSG);
	CHECK_OK(doca_comm_channel_peer_addr_get_send_bytes(peer, &v));
	CHECK(v == (uint64_t)MAX_MSG * (MAX_MSG + 1) / 2);
	CHECK_OK(doca_comm_channel_peer_addr_get_recv_bytes(peer, &v));
	CHECK(v == (uint64_t)MAX_MSG * (MAX_MSG + 1) / 2);
	CHECK_OK(doca_comm_channel_peer_addr_get_send_in_flight_messages(peer, &v));
	CHECK(v == 0);
	CHECK_ERR(doca_comm_channel_peer_addr_get_send_messages(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_recv_bytes(peer, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_send_in_flight_messages(peer, NULL), DOCA_ERROR_INVALID_VALUE);
}

static void bad_sends_and_small_buffer(ep_t *ep, addr_t *peer)
{
	static uint8_t out[MAX_MSG + 1], in[MAX_MSG];
	size_t len = 10;
	addr_t *from = NULL;

	CHECK_ERR(doca_comm_channel_ep_sendto(ep, out, MAX_MSG + 1, 0, peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, out, 0, 0, peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, NULL, 1, 0, peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, out, 1, 1, peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, in, &len, 1, &from), DOCA_ERROR_INVALID_VALUE);
	/* A message that does not fit: its size is reported and it stays queued. */
	fill(out, 100, 7);
	CHECK_OK(send_wait(ep, out, 100, peer));
	CHECK_ERR(recv_wait(ep, in, &len, &from), DOCA_ERROR_INVALID_VALUE);
	CHECK(len == 100);
	len = 99;
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, in, &len, 0, &from), DOCA_ERROR_INVALID_VALUE);
	CHECK(len == 100);
	len = 100;
	CHECK_OK(doca_comm_channel_ep_recvfrom(ep, in, &len, 0, &from));
	CHECK(len == 100 && memcmp(in, out, 100) == 0);
	len = sizeof(in);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, in, &len, 0, &from), DOCA_ERROR_AGAIN);
}

static void quit_service(ep_t *ep, addr_t *peer, pid_t pid)
{
	char ans[16];
	size_t len = sizeof(ans);
	addr_t *from;

	CHECK_OK(request(ep, peer, "QUIT", ans, sizeof(ans)));
	CHECK(strcmp(ans, "BYE") == 0);
	CHECK(child_status(pid) == 0);
	/* The service is gone: the connection says so, and never blocks. */
	CHECK_ERR(recv_wait(ep, ans, &len, &from), DOCA_ERROR_CONNECTION_RESET);
	CHECK(from == peer);
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(peer), DOCA_ERROR_CONNECTION_ABORTED);
}

static void test_exchange(void)
{
	char name[64];
	addr_t *peer;
	ep_t *ep;
	pid_t pid;

	mkname(name, sizeof(name), "echo");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	exchange_all_sizes(ep, peer);
	bad_sends_and_small_buffer(ep, peer);
	quit_service(ep, peer, pid);
	CHECK_OK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static void test_pingpong_10k(void)
{
	char name[64];
	addr_t *peer;
	ep_t *ep;
	pid_t pid;

	mkname(name, sizeof(name), "pingpong");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	for (uint32_t i = 0; i < 10000; i++) {
		uint32_t in[2] = { 0 }, out[2] = { i, ~i };
		size_t len = sizeof(in);
		addr_t *from;

		CHECK_OK(send_wait(ep, out, sizeof(out), peer));
		CHECK_OK(recv_wait(ep, in, &len, &from));
		CHECK(len == sizeof(in) && in[0] == i && in[1] == ~i);
	}
	quit_service(ep, peer, pid);
	CHECK_OK(doca_comm_channel_ep_destroy(ep)); /* destroy also disconnects */
}

/* Fills the queue of a service that does not read: AGAIN, then the send handle wakes when it drains. */
static void test_queue_full(void)
{
	doca_event_channel_t sfd;
	uint8_t msg[SINK_MSG] = { 0 };
	char name[64], ans[32];
	size_t len = sizeof(ans) - 1;
	uint32_t sent = 0;
	doca_error_t ret = DOCA_SUCCESS;
	addr_t *peer, *from;
	int go = -1;
	ep_t *ep;
	pid_t pid;

	mkname(name, sizeof(name), "sink");
	pid = start_child("dpu", "sink", name, &go);
	CHECK(pid > 0);
	/* The service answers the handshake only when it reads: send without waiting for it. */
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	CHECK_OK(doca_comm_channel_ep_set_device(ep, host_dev));
	CHECK_OK(doca_comm_channel_ep_connect(ep, name, &peer));
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(peer), DOCA_ERROR_CONNECTION_INPROGRESS);
	for (int i = 0; i < 1000000 && ret == DOCA_SUCCESS; i++) {
		memcpy(msg, &sent, sizeof(sent));
		ret = doca_comm_channel_ep_sendto(ep, msg, sizeof(msg), 0, peer);
		if (ret == DOCA_SUCCESS)
			sent++;
	}
	CHECK_ERR(ret, DOCA_ERROR_AGAIN);
	CHECK(sent > 0);
	CHECK_OK(doca_comm_channel_ep_get_event_channel(ep, &sfd, NULL));
	CHECK_OK(doca_comm_channel_ep_event_handle_arm_send(ep));
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0); /* full: no room to report */
	CHECK(write(go, &sent, sizeof(sent)) == sizeof(sent));
	CHECK(wait_fd(sfd, POLLIN)); /* the service drained the queue */
	CHECK_OK(recv_wait(ep, ans, &len, &from));
	ans[len] = '\0';
	char want[32];
	snprintf(want, sizeof(want), "OK %u", sent);
	CHECK(strcmp(ans, want) == 0);
	CHECK(child_status(pid) == 0);
	close(go);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static unsigned stat_field(const char *ans, const char *key)
{
	const char *p = strstr(ans, key);

	return p == NULL ? 999 : (unsigned)strtoul(p + strlen(key), NULL, 10);
}

/* Asks the service for its counters until key reaches want (the service sees events in its own order). */
static int stats_reach(ep_t *ep, addr_t *peer, const char *key, unsigned want)
{
	char ans[128];

	for (int i = 0; i < 10000; i++) {
		if (request(ep, peer, "STATS", ans, sizeof(ans)) != DOCA_SUCCESS)
			return 0;
		if (stat_field(ans, key) == want)
			return 1;
	}
	return 0;
}

static void two_clients_talk(ep_t *a, addr_t *pa, ep_t *b, addr_t *pb)
{
	for (uint32_t i = 0; i < 200; i++) {
		uint32_t ma[2] = { 0xA, i }, mb[2] = { 0xB, i }, in[2];
		size_t len = sizeof(in);
		addr_t *from;

		CHECK_OK(send_wait(a, ma, sizeof(ma), pa));
		CHECK_OK(send_wait(b, mb, sizeof(mb), pb));
		CHECK_OK(recv_wait(b, in, &len, &from));
		CHECK(from == pb && len == sizeof(in) && in[0] == 0xB && in[1] == i);
		len = sizeof(in);
		CHECK_OK(recv_wait(a, in, &len, &from));
		CHECK(from == pa && len == sizeof(in) && in[0] == 0xA && in[1] == i);
	}
}

/* Two clients here, a third in a child that is killed: the service reports it and serves on. */
static void test_clients_and_kill(void)
{
	char name[64];
	addr_t *pa, *pb;
	ep_t *a, *b;
	pid_t svc_pid, cli_pid;

	mkname(name, sizeof(name), "multi");
	svc_pid = start_child("dpu", "echo", name, NULL);
	CHECK(svc_pid > 0);
	CHECK_OK(client_connect(host_dev, name, &a, &pa));
	CHECK_OK(client_connect(host_dev, name, &b, &pb));
	two_clients_talk(a, pa, b, pb);
	cli_pid = start_child("host", "client", name, NULL);
	CHECK(cli_pid > 0);
	CHECK(stats_reach(a, pa, "peers=", 3));
	CHECK(kill(cli_pid, SIGKILL) == 0);
	CHECK(child_status(cli_pid) == 128 + SIGKILL);
	CHECK(stats_reach(a, pa, "resets=", 1));
	CHECK(stats_reach(a, pa, "peers=", 2));
	two_clients_talk(a, pa, b, pb);
	/* A client that leaves properly is a reset for the service too, and only for it. */
	CHECK_OK(doca_comm_channel_ep_destroy(b));
	CHECK(stats_reach(a, pa, "resets=", 2));
	quit_service(a, pa, svc_pid);
	CHECK_OK(doca_comm_channel_ep_destroy(a));
}

static void test_service_killed(void)
{
	char name[64], ans[16];
	size_t len = sizeof(ans);
	addr_t *peer, *from;
	ep_t *ep;
	pid_t pid;

	mkname(name, sizeof(name), "victim");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	CHECK_OK(request(ep, peer, "ping", ans, sizeof(ans)));
	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(child_status(pid) == 128 + SIGKILL);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, peer), DOCA_ERROR_CONNECTION_RESET);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, peer), DOCA_ERROR_CONNECTION_RESET);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, ans, &len, 0, &from), DOCA_ERROR_CONNECTION_RESET);
	CHECK(from == peer);
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(peer), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_OK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_disconnect(ep, peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, ans, &len, 0, &from), DOCA_ERROR_NOT_CONNECTED);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static void test_event_channels(void)
{
	doca_event_channel_t sfd, rfd, v;
	struct epoll_event ev;
	char name[64], buf[16];
	size_t len = sizeof(buf);
	addr_t *peer, *from, **list;
	uint32_t n;
	int epfd;
	ep_t *ep;
	pid_t pid;

	mkname(name, sizeof(name), "events");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	CHECK_OK(doca_comm_channel_ep_get_event_channel(ep, &sfd, &rfd));
	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(ep, &v), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(ep), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n), DOCA_ERROR_NOT_SUPPORTED);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(epfd >= 0);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = rfd };
	CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, rfd, &ev) == 0);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
	CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev) == 0);
	CHECK_OK(doca_comm_channel_ep_event_handle_arm_recv(ep));
	CHECK(epoll_wait(epfd, &ev, 1, 0) == 0); /* nothing to receive, send not armed */
	CHECK_OK(doca_comm_channel_ep_sendto(ep, "ping", 4, 0, peer));
	CHECK(epoll_wait(epfd, &ev, 1, GUARD_MS) == 1 && ev.data.fd == rfd);
	CHECK_OK(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &from));
	CHECK(len == 4 && memcmp(buf, "ping", 4) == 0);
	CHECK(epoll_wait(epfd, &ev, 1, 0) == 0);
	CHECK_OK(doca_comm_channel_ep_event_handle_arm_send(ep)); /* room in the queue: reported at once */
	CHECK(epoll_wait(epfd, &ev, 1, GUARD_MS) == 1 && ev.data.fd == sfd);
	close(epfd);
	quit_service(ep, peer, pid);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static void test_reconnect(void)
{
	char name[64], ans[16];
	addr_t *peer, *peer2;
	ep_t *ep;
	pid_t pid;

	mkname(name, sizeof(name), "again");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, &peer2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_comm_channel_ep_set_device(ep, host_dev), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_comm_channel_peer_addr_set_user_data(peer, 0x1234));
	uint64_t ud = 0;
	CHECK_OK(doca_comm_channel_peer_addr_get_user_data(peer, &ud));
	CHECK(ud == 0x1234);
	CHECK_ERR(doca_comm_channel_peer_addr_get_user_data(peer, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_set_user_data(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(request(ep, peer, "one", ans, sizeof(ans)));
	CHECK_OK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_OK(doca_comm_channel_ep_connect(ep, name, &peer2));
	CHECK_OK(doca_comm_channel_peer_addr_get_user_data(peer2, &ud));
	CHECK(ud == 0);
	CHECK_OK(request(ep, peer2, "two", ans, sizeof(ans)));
	CHECK(strcmp(ans, "two") == 0);
	CHECK(stats_reach(ep, peer2, "resets=", 1)); /* the first connection's close */
	quit_service(ep, peer2, pid);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

#define MAX_CLIENTS 128

/* The service holds 128 clients; the next one is refused, and a freed place can be taken again. */
static void test_max_clients(void)
{
	static ep_t *eps[MAX_CLIENTS + 1];
	static addr_t *peers[MAX_CLIENTS + 1];
	char name[64];
	int n = 0;
	pid_t pid;

	mkname(name, sizeof(name), "crowd");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	for (; n < MAX_CLIENTS; n++)
		if (client_connect(host_dev, name, &eps[n], &peers[n]) != DOCA_SUCCESS)
			break;
	CHECK(n == MAX_CLIENTS);
	/* Refused by connect itself or by the first call after it, depending on who is faster. */
	CHECK_ERR(client_connect(host_dev, name, &eps[n], &peers[n]), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_OK(doca_comm_channel_ep_destroy(eps[n]));
	CHECK(stats_reach(eps[0], peers[0], "peers=", MAX_CLIENTS));
	CHECK_OK(doca_comm_channel_ep_destroy(eps[1]));
	CHECK(stats_reach(eps[0], peers[0], "resets=", 1));
	CHECK_OK(client_connect(host_dev, name, &eps[1], &peers[1]));
	quit_service(eps[0], peers[0], pid);
	for (int i = 0; i < MAX_CLIENTS; i++)
		CHECK_OK(doca_comm_channel_ep_destroy(eps[i]));
}

/* ------------------------------------------------------------------ hostile peers */

static int raw_connect(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "softdpu-cc/%u/%s/%s", (unsigned)geteuid(),
			 HOST_PCI, name);
	socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, salen) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* A well-formed version-1 HELLO, as docs/comm_channel.md describes it. */
static void hello_frame(uint8_t f[24])
{
	uint32_t pid = (uint32_t)getpid();

	memset(f, 0, 24);
	memcpy(f, "SDCC", 4);
	f[4] = 1;  /* version */
	f[6] = 1;  /* HELLO */
	f[8] = 24; /* frame size */
	f[12] = MAX_MSG & 0xff;
	f[13] = MAX_MSG >> 8;
	memcpy(f + 16, &pid, 4); /* little-endian machine assumed by this test */
}

static int raw_closed_by_peer(int fd)
{
	uint8_t buf[64];

	/* Any answer frames first, then EOF; bounded by the number of frames. */
	for (int i = 0; i < 4; i++) {
		if (!wait_fd(fd, POLLIN))
			return 0;
		if (recv(fd, buf, sizeof(buf), 0) <= 0)
			return 1;
	}
	return 0;
}

static void test_malformed_peers(void)
{
	static uint8_t big[5000];
	char name[64], ans[16];
	uint8_t hello[24];
	addr_t *peer;
	ep_t *ep;
	int junk, liar;
	pid_t pid;

	mkname(name, sizeof(name), "hostile");
	pid = start_child("dpu", "echo", name, NULL);
	CHECK(pid > 0);
	junk = raw_connect(name);
	CHECK(junk >= 0);
	CHECK(send(junk, "garbage", 7, MSG_NOSIGNAL) == 7);
	CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	CHECK_OK(request(ep, peer, "still", ans, sizeof(ans)));
	CHECK(strcmp(ans, "still") == 0);
	CHECK(raw_closed_by_peer(junk)); /* dropped during the handshake, never shown to the service */
	close(junk);
	liar = raw_connect(name);
	CHECK(liar >= 0);
	hello_frame(hello);
	CHECK(send(liar, hello, sizeof(hello), MSG_NOSIGNAL) == (ssize_t)sizeof(hello));
	CHECK(send(liar, big, sizeof(big), MSG_NOSIGNAL) == (ssize_t)sizeof(big)); /* over the 4080-byte limit */
	CHECK(stats_reach(ep, peer, "resets=", 1));
	CHECK(raw_closed_by_peer(liar));
	close(liar);
	CHECK_OK(request(ep, peer, "alive", ans, sizeof(ans)));
	CHECK(strcmp(ans, "alive") == 0);
	quit_service(ep, peer, pid);
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

/* ------------------------------------------------------------------ messages before the close */

/*
 * A peer that sends and then goes away at once: everything it sent is
 * delivered, in order, and only then is the connection reported reset. Host
 * and child step through each round over two pipes, so each ordering below
 * happens for certain rather than by luck of scheduling.
 */
#define CLOSE_ROUNDS 200

/* Size of message i of round r: spread over 1..MAX_MSG. */
static size_t round_size(uint32_t r, uint32_t i)
{
	return 1 + (r * 997u + i * 1499u) % MAX_MSG;
}

static uint32_t round_seed(uint32_t r, uint32_t i)
{
	return r * 8 + i;
}

static int pipe_tell(int fd, char c)
{
	return write(fd, &c, 1) == 1;
}

static int pipe_expect(int fd, char want)
{
	char c = 0;

	return wait_fd(fd, POLLIN) && read(fd, &c, 1) == 1 && c == want;
}

/* A child that steps with the host: *down is written by the host, *up read by it. */
static pid_t start_stepper(const char *role, const char *name, int *down, int *up)
{
	int u[2], d[2];
	pid_t pid;

	if (pipe2(u, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(d, O_CLOEXEC) < 0) {
		close(u[0]);
		close(u[1]);
		return -1;
	}
	pid = spawn_with_fds("dpu", role, name, u[1], d[0]);
	close(u[1]);
	close(d[0]);
	*down = d[1];
	*up = u[0];
	return pid;
}

static void stop_stepper(pid_t pid, int down, int up, int failed, int *status)
{
	close(down);
	close(up);
	if (failed)
		kill(pid, SIGKILL);
	*status = child_status(pid);
}

static int recv_checked(ep_t *ep, uint32_t r, uint32_t i, addr_t **peer)
{
	static uint8_t buf[MAX_MSG], want[MAX_MSG];
	size_t len = sizeof(buf), sz = round_size(r, i);
	addr_t *from = NULL;

	if (recv_wait(ep, buf, &len, &from) != DOCA_SUCCESS)
		return 0;
	if (*peer == NULL)
		*peer = from;
	fill(want, sz, round_seed(r, i));
	return from == *peer && len == sz && memcmp(buf, want, sz) == 0;
}

static uint32_t answers_of(uint32_t r)
{
	return 1 + r % 3;
}

/* One round of the answering service: listen, receive the request, answer, disconnect and destroy at once. */
static int answer_and_leave(struct doca_dev *dev, struct doca_dev_rep *rep, const char *name, uint32_t r, int up,
			    int down)
{
	static uint8_t out[MAX_MSG];
	addr_t *peer = NULL;
	ep_t *ep = NULL;
	int rc = 0;

	if (service_listen(dev, rep, name, &ep) != DOCA_SUCCESS || !pipe_tell(up, 'R'))
		return 80;
	if (!pipe_expect(down, 'G'))
		rc = 81;
	else if (!recv_checked(ep, r, 0, &peer))
		rc = 82;
	for (uint32_t i = 1; rc == 0 && i <= answers_of(r); i++) {
		fill(out, round_size(r, i), round_seed(r, i));
		if (send_wait(ep, out, round_size(r, i), peer) != DOCA_SUCCESS)
			rc = 83;
	}
	/* No waiting for the client to read the answers. */
	if (peer != NULL && doca_comm_channel_ep_disconnect(ep, peer) != DOCA_SUCCESS && rc == 0)
		rc = 84;
	if (doca_comm_channel_ep_destroy(ep) != DOCA_SUCCESS && rc == 0)
		rc = 85;
	if (rc == 0 && !pipe_tell(up, 'D'))
		rc = 86;
	return rc;
}

static int role_answer_leave(const char *name, int up, int down)
{
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	int rc = 0;

	if (th_open_dev_pci(DPU_PCI, &dev) != DOCA_SUCCESS || th_open_rep_pci(dev, HOST_PCI, &rep) != DOCA_SUCCESS)
		return 80;
	for (uint32_t r = 0; r < CLOSE_ROUNDS && rc == 0; r++)
		rc = answer_and_leave(dev, rep, name, r, up, down);
	doca_dev_rep_close(rep);
	doca_dev_close(dev);
	return rc;
}

enum leave_order {
	LEAVE_READ_AFTER,     /* the client reads once the service is gone */
	LEAVE_UNREAD_REQUEST, /* the service leaves a message of the client unread */
	LEAVE_SEND_AFTER,     /* the client sends to the gone service, then reads */
	LEAVE_RACE,           /* the client reads while the service leaves */
	LEAVE_ORDERS,
};

static int handle_readable(ep_t *ep)
{
	struct pollfd p = { .events = POLLIN };

	return doca_comm_channel_ep_get_event_channel(ep, NULL, &p.fd) == DOCA_SUCCESS && poll(&p, 1, 0) == 1;
}

/*
 * The answers of round r, byte for byte, then the reset for good. Once the
 * service is gone (gone is set), the receive handle must announce each answer
 * and then the reset without any waiting.
 */
static void read_answers_then_reset(ep_t *ep, addr_t *peer, uint32_t r, int gone)
{
	char buf[16];
	size_t len = sizeof(buf);
	addr_t *from = peer;

	for (uint32_t i = 1; i <= answers_of(r); i++) {
		CHECK(!gone || handle_readable(ep));
		CHECK(recv_checked(ep, r, i, &from));
	}
	CHECK(!gone || handle_readable(ep));
	CHECK_ERR(recv_wait(ep, buf, &len, &from), DOCA_ERROR_CONNECTION_RESET);
	CHECK(from == peer);
	len = sizeof(buf);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &from), DOCA_ERROR_CONNECTION_RESET);
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(peer), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, peer), DOCA_ERROR_CONNECTION_RESET);
}

static void leave_round(const char *name, uint32_t r, int down, int up)
{
	static uint8_t out[MAX_MSG];
	enum leave_order order = r % LEAVE_ORDERS;
	addr_t *peer;
	ep_t *ep;

	CHECK(pipe_expect(up, 'R'));
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	CHECK_OK(doca_comm_channel_ep_set_device(ep, host_dev));
	/* As the vendor samples do: the request queues behind the handshake. */
	CHECK_OK(doca_comm_channel_ep_connect(ep, name, &peer));
	fill(out, round_size(r, 0), round_seed(r, 0));
	CHECK_OK(send_wait(ep, out, round_size(r, 0), peer));
	if (order == LEAVE_UNREAD_REQUEST)
		CHECK_OK(send_wait(ep, "unread", 6, peer));
	CHECK(pipe_tell(down, 'G'));
	if (order != LEAVE_RACE)
		CHECK(pipe_expect(up, 'D'));
	if (order == LEAVE_SEND_AFTER)
		CHECK_ERR(doca_comm_channel_ep_sendto(ep, "late", 4, 0, peer), DOCA_ERROR_CONNECTION_RESET);
	read_answers_then_reset(ep, peer, r, order != LEAVE_RACE);
	if (th_case_failed)
		return;
	if (order == LEAVE_RACE)
		CHECK(pipe_expect(up, 'D'));
	CHECK_OK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

/* The DPU answers and at once disconnects and destroys its endpoint: the host still gets every answer. */
static void test_answer_then_leave(void)
{
	char name[64];
	int down, up, st;
	uint32_t r;
	pid_t pid;

	mkname(name, sizeof(name), "leave");
	pid = start_stepper("answer_leave", name, &down, &up);
	CHECK(pid > 0);
	for (r = 0; r < CLOSE_ROUNDS && !th_case_failed; r++)
		leave_round(name, r, down, up);
	stop_stepper(pid, down, up, th_case_failed, &st);
	if (th_case_failed) {
		fprintf(stderr, "  in round %u (order %u)\n", r - 1, (r - 1) % LEAVE_ORDERS);
		return;
	}
	CHECK(st == 0);
}

enum drain_order {
	DRAIN_BEFORE_ACCEPT,  /* the client is gone before the service accepts it */
	DRAIN_WELCOME_UNREAD, /* the client leaves the service's handshake answer unread */
	DRAIN_LIVE,           /* the client completes the handshake, sends and leaves at once */
	DRAIN_ORDERS,
};

static uint32_t messages_of(uint32_t r)
{
	return 1 + r % 4;
}

/* One client of the draining service: its messages in order, then its reset. */
static int drain_one(ep_t *ep, uint32_t r, int up, int down)
{
	enum drain_order order = r % DRAIN_ORDERS;
	addr_t *peer = NULL, *from = NULL, **list;
	uint32_t n = 0;
	char buf[16];
	size_t len = sizeof(buf);

	if (!pipe_expect(down, order == DRAIN_WELCOME_UNREAD ? 'W' : 'G'))
		return 81;
	if (order == DRAIN_WELCOME_UNREAD) {
		/* Accepts the client and answers its handshake without reading any of its messages. */
		if (doca_comm_channel_ep_update_service_state_info(ep) != DOCA_SUCCESS ||
		    doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n) != DOCA_SUCCESS || n != 1)
			return 82;
		if (!pipe_tell(up, 'W') || !pipe_expect(down, 'G'))
			return 83;
	}
	for (uint32_t i = 0; i < messages_of(r); i++)
		if (!recv_checked(ep, r, i, &peer))
			return 84;
	if (recv_wait(ep, buf, &len, &from) != DOCA_ERROR_CONNECTION_RESET || from != peer)
		return 85;
	if (doca_comm_channel_ep_disconnect(ep, peer) != DOCA_SUCCESS)
		return 86;
	return pipe_tell(up, 'D') ? 0 : 87;
}

static int role_drain(const char *name, int up, int down)
{
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	ep_t *ep = NULL;
	int rc = 0;

	if (service_open(name, &dev, &rep, &ep) != DOCA_SUCCESS || !pipe_tell(up, 'R'))
		return 80;
	for (uint32_t r = 0; r < CLOSE_ROUNDS && rc == 0; r++)
		rc = drain_one(ep, r, up, down);
	service_close(dev, rep, ep);
	return rc;
}

static void send_and_leave(const char *name, uint32_t r, int down, int up)
{
	static uint8_t out[MAX_MSG];
	enum drain_order order = r % DRAIN_ORDERS;
	addr_t *peer;
	ep_t *ep;

	if (order == DRAIN_LIVE) {
		CHECK(pipe_tell(down, 'G'));
		CHECK_OK(client_connect(host_dev, name, &ep, &peer));
	} else {
		CHECK_OK(doca_comm_channel_ep_create(&ep));
		CHECK_OK(doca_comm_channel_ep_set_device(ep, host_dev));
		CHECK_OK(doca_comm_channel_ep_connect(ep, name, &peer));
	}
	for (uint32_t i = 0; i < messages_of(r); i++) {
		fill(out, round_size(r, i), round_seed(r, i));
		CHECK_OK(send_wait(ep, out, round_size(r, i), peer));
	}
	if (order == DRAIN_WELCOME_UNREAD) {
		CHECK(pipe_tell(down, 'W'));
		CHECK(pipe_expect(up, 'W'));
	}
	CHECK_OK(doca_comm_channel_ep_destroy(ep)); /* at once: no waiting for the service to read */
	if (order != DRAIN_LIVE)
		CHECK(pipe_tell(down, 'G'));
	CHECK(pipe_expect(up, 'D'));
}

/* The host sends and at once destroys its endpoint: the DPU still receives every message, then the reset. */
static void test_send_then_leave(void)
{
	char name[64];
	int down, up, st;
	uint32_t r;
	pid_t pid;

	mkname(name, sizeof(name), "drain");
	pid = start_stepper("drain", name, &down, &up);
	CHECK(pid > 0);
	if (!pipe_expect(up, 'R'))
		TH_FAIL("service did not start");
	for (r = 0; r < CLOSE_ROUNDS && !th_case_failed; r++)
		send_and_leave(name, r, down, up);
	if (th_case_failed) {
		/* The service's exit status says which of its checks failed. */
		stop_stepper(pid, down, up, 0, &st);
		fprintf(stderr, "  in round %u (order %u), service status %d\n", r - 1, (r - 1) % DRAIN_ORDERS, st);
		return;
	}
	stop_stepper(pid, down, up, 0, &st);
	CHECK(st == 0);
}

/* ------------------------------------------------------------------ leaks */

static int fd_baseline;

static int count_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

/* Every endpoint above was destroyed: none of its sockets or event handles may remain. */
static void test_no_fd_leak(void)
{
	CHECK(count_fds() == fd_baseline);
}

/* ------------------------------------------------------------------ main */

static int run_role(int argc, char **argv)
{
	const char *role = argv[1];

	/* Ready is said on stdout; a sink is told to go on stdin. */
	if (argc < 3)
		return 64;
	if (strcmp(role, "echo") == 0)
		return role_echo(argv[2], STDOUT_FILENO);
	if (strcmp(role, "sink") == 0)
		return role_sink(argv[2], STDOUT_FILENO, STDIN_FILENO);
	if (strcmp(role, "client") == 0)
		return role_client(argv[2], STDOUT_FILENO);
	if (strcmp(role, "dpu_api") == 0)
		return role_dpu_api(argv[2]);
	if (strcmp(role, "answer_leave") == 0)
		return role_answer_leave(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (strcmp(role, "drain") == 0)
		return role_drain(argv[2], atoi(argv[3]), atoi(argv[4]));
	return 64;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return run_role(argc, argv);
	/* The side is read on the first DOCA call: this process is the host. */
	setenv("SOFTDPU_SIDE", "host", 1);
	signal(SIGPIPE, SIG_IGN); /* a child that failed has closed its pipe: report, do not die */
	snprintf(svc, sizeof(svc), "cct-%d", (int)getpid());
	if (th_open_dev_pci(HOST_PCI, &host_dev) != DOCA_SUCCESS) {
		fprintf(stderr, "cannot open host function %s\n", HOST_PCI);
		return 1;
	}
	fd_baseline = count_fds();
	RUN(test_caps);
	RUN(test_ep_properties);
	RUN(test_idle_endpoint);
	RUN(test_host_side_rules);
	RUN(test_dpu_side_rules);
	RUN(test_exchange);
	RUN(test_pingpong_10k);
	RUN(test_queue_full);
	RUN(test_clients_and_kill);
	RUN(test_service_killed);
	RUN(test_event_channels);
	RUN(test_reconnect);
	RUN(test_max_clients);
	RUN(test_malformed_peers);
	RUN(test_answer_then_leave);
	RUN(test_send_then_leave);
	RUN(test_no_fd_leak);
	doca_dev_close(host_dev);
	return th_summary("test_comm_channel");
}
