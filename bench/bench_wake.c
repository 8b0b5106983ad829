/*
 * bench_wake — how an event-driven work queue sleeps and wakes on a Sync Event wait job.
 *
 *   quiet         a wait job pending, nothing happening: wake-ups of the vendor's
 *                 arm -> epoll_wait -> clear -> retrieve loop over 250 ms
 *   doca wake     a thread sleeping in that loop; another thread sets the event:
 *                 time from before the set to the wait job's completion event
 *   eventfd wake  the same hand-over with an eventfd write -> epoll_wait (one wake, no DOCA)
 *   futex wake    the same hand-over with FUTEX_WAKE -> FUTEX_WAIT (the cheapest sleep/wake)
 *
 * The setter lets the waiter fall asleep (200 us) before each set, so every
 * round measures a real wake. Median and p99 over the rounds, in microseconds;
 * the DOCA path as a ratio of the two references. The waiter runs on CPU 0 and
 * the setter on CPU 1 when the machine has two.
 *
 * Usage: bench_wake [--quick] [--rounds N]
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_sync_event.h>

#include "bench_stats.h"

#define NAP_US 200

static void pin(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* One hand-over protocol: the setter stamps, sets; the waiter, once woken, records the delay. */
struct round {
	_Atomic uint64_t stamp; /* setter's time just before the set */
	_Atomic uint32_t done;	/* rounds the waiter finished */
	uint64_t *lat;
	uint32_t rounds;
};

static void setter_loop(struct round *r, void (*set)(void *arg, uint32_t i), void *arg)
{
	pin(1);
	for (uint32_t i = 0; i < r->rounds; i++) {
		usleep(NAP_US);
		atomic_store(&r->stamp, now_ns());
		set(arg, i);
		while (atomic_load(&r->done) != i + 1)
			sched_yield();
	}
}

static void record(struct round *r, uint32_t i)
{
	r->lat[i] = now_ns() - atomic_load(&r->stamp);
	atomic_store(&r->done, i + 1);
}

/* ---- DOCA: a Sync Event context on an event-driven work queue ---- */

struct doca_side {
	struct doca_dev *dev;
	struct doca_devinfo **list;
	struct doca_sync_event *se;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	doca_event_handle_t fd;
	int ep;
	struct round r;
};

static int doca_setup(struct doca_side *d)
{
	struct epoll_event e = { .events = EPOLLIN };
	uint32_t n;

	if (doca_devinfo_list_create(&d->list, &n) != DOCA_SUCCESS || n == 0 ||
	    doca_dev_open(d->list[0], &d->dev) != DOCA_SUCCESS || doca_sync_event_create(&d->se) != DOCA_SUCCESS ||
	    doca_sync_event_publisher_add_location_cpu(d->se, d->dev) != DOCA_SUCCESS ||
	    doca_sync_event_subscriber_add_location_cpu(d->se, d->dev) != DOCA_SUCCESS)
		return -1;
	d->ctx = doca_sync_event_as_ctx(d->se);
	if (d->ctx == NULL || doca_ctx_start(d->ctx) != DOCA_SUCCESS || doca_workq_create(4, &d->wq) != DOCA_SUCCESS ||
	    doca_workq_set_event_driven_enable(d->wq, 1) != DOCA_SUCCESS ||
	    doca_ctx_workq_add(d->ctx, d->wq) != DOCA_SUCCESS || doca_workq_get_event_handle(d->wq, &d->fd) != DOCA_SUCCESS)
		return -1;
	d->ep = epoll_create1(0);
	return d->ep < 0 || epoll_ctl(d->ep, EPOLL_CTL_ADD, d->fd, &e) != 0 ? -1 : 0;
}

static void doca_teardown(struct doca_side *d)
{
	close(d->ep);
	doca_ctx_workq_rm(d->ctx, d->wq);
	doca_workq_destroy(d->wq);
	doca_ctx_stop(d->ctx);
	doca_sync_event_destroy(d->se);
	doca_dev_close(d->dev);
	doca_devinfo_list_destroy(d->list);
}

/* The vendor's loop until the wait job's event, with epoll timeouts of timeout_ms (-1: none). */
static doca_error_t doca_wait(struct doca_side *d, int timeout_ms, unsigned *wakes)
{
	struct doca_event ev;
	struct epoll_event out;
	doca_error_t st;

	for (;;) {
		doca_workq_event_handle_arm(d->wq);
		if (epoll_wait(d->ep, &out, 1, timeout_ms) == 1) {
			(*wakes)++;
			doca_workq_event_handle_clear(d->wq, d->fd);
		}
		st = doca_workq_progress_retrieve(d->wq, &ev, 0);
		if (st != DOCA_ERROR_AGAIN || timeout_ms >= 0)
			return st;
	}
}

static doca_error_t submit_wait(struct doca_side *d, uint64_t above)
{
	struct doca_sync_event_job_wait w = { .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = d->ctx },
					      .value = above, .mask = UINT64_MAX };

	return doca_workq_submit(d->wq, &w.base);
}

static unsigned quiet_wakes(struct doca_side *d)
{
	uint64_t end = now_ns() + 250000000ull;
	unsigned wakes = 0;

	submit_wait(d, 0);
	while (now_ns() < end)
		doca_wait(d, 10, &wakes);
	doca_sync_event_update_set(d->se, 1); /* completes it */
	doca_wait(d, -1, &wakes);
	doca_sync_event_update_set(d->se, 0);
	return wakes;
}

static void doca_set(void *arg, uint32_t i)
{
	doca_sync_event_update_set(((struct doca_side *)arg)->se, (uint64_t)i + 1);
}

static void *doca_setter(void *arg)
{
	struct doca_side *d = arg;

	setter_loop(&d->r, doca_set, d);
	return NULL;
}

static int doca_rounds(struct doca_side *d)
{
	unsigned wakes = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, doca_setter, d) != 0)
		return -1;
	for (uint32_t i = 0; i < d->r.rounds; i++) {
		if (submit_wait(d, i) != DOCA_SUCCESS || doca_wait(d, -1, &wakes) != DOCA_SUCCESS)
			return -1;
		record(&d->r, i);
	}
	pthread_join(t, NULL);
	return 0;
}

/* ---- references ---- */

struct efd_side {
	int efd, ep;
	struct round r;
};

static void efd_set(void *arg, uint32_t i)
{
	uint64_t one = 1;

	(void)i;
	if (write(((struct efd_side *)arg)->efd, &one, sizeof(one)) < 0)
		perror("eventfd write");
}

static void *efd_setter(void *arg)
{
	struct efd_side *s = arg;

	setter_loop(&s->r, efd_set, s);
	return NULL;
}

static int efd_rounds(struct efd_side *s)
{
	struct epoll_event e = { .events = EPOLLIN }, out;
	uint64_t v;
	pthread_t t;

	s->efd = eventfd(0, EFD_NONBLOCK);
	s->ep = epoll_create1(0);
	if (s->efd < 0 || s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->efd, &e) != 0 ||
	    pthread_create(&t, NULL, efd_setter, s) != 0)
		return -1;
	for (uint32_t i = 0; i < s->r.rounds; i++) {
		while (epoll_wait(s->ep, &out, 1, -1) != 1)
			;
		if (read(s->efd, &v, sizeof(v)) < 0)
			return -1;
		record(&s->r, i);
	}
	pthread_join(t, NULL);
	close(s->ep);
	close(s->efd);
	return 0;
}

struct futex_side {
	_Atomic uint32_t word;
	struct round r;
};

static void futex_set(void *arg, uint32_t i)
{
	struct futex_side *s = arg;

	atomic_store(&s->word, i + 1);
	syscall(SYS_futex, &s->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void *futex_setter(void *arg)
{
	struct futex_side *s = arg;

	setter_loop(&s->r, futex_set, s);
	return NULL;
}

static int futex_rounds(struct futex_side *s)
{
	pthread_t t;

	if (pthread_create(&t, NULL, futex_setter, s) != 0)
		return -1;
	for (uint32_t i = 0; i < s->r.rounds; i++) {
		while (atomic_load(&s->word) != i + 1)
			syscall(SYS_futex, &s->word, FUTEX_WAIT_PRIVATE, i, NULL, NULL, 0);
		record(&s->r, i);
	}
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t rounds = 3000;
	struct doca_side d = { .ep = -1 };
	struct efd_side e = { 0 };
	struct futex_side f = { 0 };
	struct stats sd, se, sf;
	unsigned quiet;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			rounds = 100;
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = (uint32_t)strtoul(argv[++i], NULL, 0);
	}
	d.r.lat = calloc(rounds, sizeof(uint64_t));
	e.r.lat = calloc(rounds, sizeof(uint64_t));
	f.r.lat = calloc(rounds, sizeof(uint64_t));
	if (d.r.lat == NULL || e.r.lat == NULL || f.r.lat == NULL || doca_setup(&d) != 0) {
		fprintf(stderr, "bench_wake: setup failed\n");
		return 1;
	}
	d.r.rounds = e.r.rounds = f.r.rounds = rounds;
	pin(0);
	quiet = quiet_wakes(&d);
	if (doca_rounds(&d) != 0 || efd_rounds(&e) != 0 || futex_rounds(&f) != 0) {
		fprintf(stderr, "bench_wake: a round failed\n");
		return 1;
	}
	sd = summarize(d.r.lat, rounds);
	se = summarize(e.r.lat, rounds);
	sf = summarize(f.r.lat, rounds);
	printf("== event-driven wait on a Sync Event: sleep and wake (%u rounds) ==\n", rounds);
	printf("quiet period 250 ms, one blocked wait job: %u wake-up(s)\n", quiet);
	printf("%-14s %10s %10s %14s %14s\n", "path", "median us", "p99 us", "vs eventfd", "vs futex");
	printf("%-14s %10.2f %10.2f %13.2fx %13.2fx\n", "doca wake", sd.median_us, sd.p99_us,
	       sd.median_us / se.median_us, sd.median_us / sf.median_us);
	printf("%-14s %10.2f %10.2f %13.2fx %13.2fx\n", "eventfd wake", se.median_us, se.p99_us, 1.0, se.median_us / sf.median_us);
	printf("%-14s %10.2f %10.2f %14s %13.2fx\n", "futex wake", sf.median_us, sf.p99_us, "", 1.0);
	doca_teardown(&d);
	free(d.r.lat);
	free(e.r.lat);
	free(f.r.lat);
	return 0;
}
