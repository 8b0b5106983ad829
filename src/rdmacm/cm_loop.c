/*
 * cm_loop — the process's CM thread.
 *
 * It waits on every listening and connected socket of the process (epoll) and
 * turns what arrives into events on the ids' channels, so a program that only
 * blocks in rdma_get_cm_event() or polls the channel's fd sees its peer's
 * REQ, REP, RTU, DREQ or death. Started on the first socket; a forked child
 * starts its own, and the parent's ids are not the child's: it closes its
 * copies of their sockets. It sleeps until the earliest CM timer
 * (cm_timer.c) or the next retry tick.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base_log.h"
#include "cm_int.h"
#include "hw_eng_thread.h"

static int cm_ep = -1;
static int cm_kick = -1;	/* an eventfd in the epoll set (serial 0): wakes the thread */
static int cm_retrying;		/* REQs waiting for their listeners: the thread ticks */

#define CM_RETRY_TICK_MS 5
static pthread_once_t cm_atfork_once = PTHREAD_ONCE_INIT;

static void cm_loop_listener(struct cm_id *id)
{
	for (;;) {
		int fd = accept4(id->psock, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		cm_proto_accept_sock(id, fd);
	}
}

static void cm_loop_conn(uint64_t serial)
{
	struct cm_msg m;
	struct cm_id *id;

	for (;;) {
		ssize_t n;

		/* Looked up again each time: a handler may have freed the id. */
		id = cm_id_by_serial(serial);
		if (id == NULL || id->sock < 0)
			return;
		/* MSG_TRUNC: the message's own length, so a longer one is not read as its first bytes. */
		n = recv(id->sock, &m, sizeof(m), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			cm_proto_eof(id);
			return;
		}
		if (cm_msg_check(&m, (size_t)n))
			cm_proto_recv(id, &m);
		else
			BASE_WARN("a malformed CM message (%zd bytes) dropped", n);
	}
}

static void cm_loop_events(const struct epoll_event *evs, int n)
{
	uint64_t v;
	int i;

	for (i = 0; i < n; i++) {
		struct cm_id *id;

		if (evs[i].data.u64 == 0) {
			if (read(cm_kick, &v, sizeof(v)) < 0)
				BASE_DBG("kick: %d", errno);
			continue;
		}
		id = cm_id_by_serial(evs[i].data.u64);
		if (id == NULL)
			continue;
		if (id->state == CM_LISTEN)
			cm_loop_listener(id);
		else
			cm_loop_conn(id->serial);
	}
}

/* How long the thread may sleep: until the next retry tick or timer, -1 for ever (cm_lock held). */
static int cm_loop_timeout(void)
{
	int t = cm_timer_next_ms();

	if (cm_retrying > 0 && (t < 0 || t > CM_RETRY_TICK_MS))
		t = CM_RETRY_TICK_MS;
	return t;
}

static void *cm_loop_run(void *arg)
{
	int ep = (int)(intptr_t)arg;
	struct epoll_event evs[16];
	int timeout;

	pthread_mutex_lock(&cm_lock);
	timeout = cm_loop_timeout();
	pthread_mutex_unlock(&cm_lock);
	for (;;) {
		/* Whatever changes the timeout meanwhile kicks the eventfd. */
		int n = epoll_wait(ep, evs, 16, timeout);

		if (n < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&cm_lock);
		if (n > 0)
			cm_loop_events(evs, n);
		if (cm_retrying > 0)
			cm_retrying = cm_ids_retry();
		cm_timer_expire();
		timeout = cm_loop_timeout();
		pthread_mutex_unlock(&cm_lock);
	}
	return NULL;
}

static void cm_atfork_prepare(void)
{
	pthread_mutex_lock(&cm_lock);
}

static void cm_atfork_parent(void)
{
	pthread_mutex_unlock(&cm_lock);
}

static void cm_atfork_child(void)
{
	/*
	 * The thread is not in the child, the parent's epoll set is not the
	 * child's to change, and its connections are the parent's alone.
	 */
	if (cm_ep >= 0)
		close(cm_ep);
	if (cm_kick >= 0)
		close(cm_kick);
	cm_ep = cm_kick = -1;
	cm_retrying = 0;
	cm_timer_forget_all();
	cm_ids_forget_sockets();
	pthread_mutex_unlock(&cm_lock);
}

/*
 * After the engine's own: fork handlers prepare in the reverse order of
 * their registration, so cm_lock is taken before the QP registry's lock, as
 * a modify under cm_lock takes them (accept, connect).
 */
static void cm_atfork_register(void)
{
	hw_eng_fork_ready();
	pthread_atfork(cm_atfork_prepare, cm_atfork_parent, cm_atfork_child);
}

/* Before the first socket: a fork must then close the child's copies. */
void cm_loop_atfork(void)
{
	pthread_once(&cm_atfork_once, cm_atfork_register);
}

/* Starts the thread on first use (cm_lock held). */
static int cm_loop_start(void)
{
	struct epoll_event kev = { .events = EPOLLIN, .data.u64 = 0 };
	pthread_attr_t attr;
	pthread_t t;
	int ep, rc;

	if (cm_ep >= 0)
		return 0;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return errno;
	cm_kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cm_kick < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, cm_kick, &kev) != 0) {
		rc = errno;
		goto fail;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, cm_loop_run, (void *)(intptr_t)ep);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		goto fail;
	cm_ep = ep;
	return 0;
fail:
	if (cm_kick >= 0)
		close(cm_kick);
	cm_kick = -1;
	close(ep);
	return rc;
}

/* Wakes the thread (starting it first) to look at its retries and timers again (cm_lock held). */
void cm_loop_kick(void)
{
	uint64_t one = 1;

	if (cm_loop_start() != 0) {
		BASE_ERR("the CM thread cannot start: timers will not fire");
		return;
	}
	if (write(cm_kick, &one, sizeof(one)) < 0)
		BASE_DBG("kick: %d", errno);
}

/* A REQ waits for its listener: the thread retries it every tick (cm_lock held). */
int cm_loop_retry_start(void)
{
	int rc = cm_loop_start();

	if (rc != 0)
		return rc;
	cm_retrying++;
	cm_loop_kick();
	return 0;
}

int cm_loop_watch(struct cm_id *id, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = id->serial };
	int rc = cm_loop_start();

	if (rc != 0)
		return rc;
	if (epoll_ctl(cm_ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		return errno;
	return 0;
}

/* Stops watching and closes the id's connection (cm_lock held). */
void cm_loop_unwatch(struct cm_id *id)
{
	if (id->sock >= 0) {
		if (cm_ep >= 0)
			(void)epoll_ctl(cm_ep, EPOLL_CTL_DEL, id->sock, NULL);
		close(id->sock);
		id->sock = -1;
	}
}
