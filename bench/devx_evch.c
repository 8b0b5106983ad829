/*
 * devx_evch — what a DevX completion event costs (docs/PERFORMANCE.md).
 *
 * A DevX QP sends to an ibv QP of the same process; its DevX CQ is
 * subscribed on an event channel and armed as on the card (record, then the
 * UAR's CQ doorbell). Printed: the CPU the process spends over 2 s while
 * the CQ is armed and nothing happens (the event watcher's idle cost), and
 * the median and 90th percentile of the time from the send's CQE, polled,
 * to the channel's fd readable, over 400 firings. Run with
 * SOFTDPU_RAW_TRAP=0 beside it for the watcher that reads the records
 * every 50 us.
 *
 * Usage: devx_evch
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "devx_fixture.h"

#define DE_COMP 0x00	   /* MLX5_EVENT_TYPE_COMP */
#define DE_FIRINGS 400
#define DE_IDLE_S 2

static double de_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static uint64_t de_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int de_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool de_readable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN);
}

/* One SEND of the DevX QP, its CQE polled, the peer's receive taken. */
static void de_send(struct dx *d, struct dx_peer *p, uint16_t n)
{
	struct ibv_wc wc;

	CHECK_OK(dx_peer_recv(p));
	dx_send_imm(d, MSG, IMM + n);
	dx_check_req_cqe(d, n);
	CHECK(vq_poll1(p->cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
}

static void de_run(void)
{
	uint8_t buf[sizeof(struct mlx5dv_devx_async_event_hdr) + 64];
	struct mlx5dv_devx_event_channel *ch;
	struct dx_peer *p = calloc(1, sizeof(*p));
	uint64_t lat[DE_FIRINGS];
	uint16_t comp = DE_COMP;
	struct dx *d = NULL;
	double c0;

	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	CHECK_OK(dx_peer_open(p, d->c));
	dx_create(d);
	dx_up(d, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, d->qpn, 12, 7));
	ch = mlx5dv_devx_create_event_channel(d->c, 0);
	CHECK(ch != NULL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, 1));
	dx_cq_arm(d, 0);
	c0 = de_cpu_s();
	sleep(DE_IDLE_S);
	printf("devx_evch idle, CQ armed: %.2f %% of a core\n", (de_cpu_s() - c0) / DE_IDLE_S * 100.0);
	for (uint16_t i = 0; i < DE_FIRINGS; i++) {
		uint64_t t0;

		de_send(d, p, i);
		t0 = de_now();
		while (!de_readable(ch->fd))
			;
		lat[i] = de_now() - t0;
		CHECK(mlx5dv_devx_get_event(ch, (void *)buf, sizeof(buf)) == (ssize_t)sizeof(buf));
		dx_cq_arm(d, i + 1u);
	}
	qsort(lat, DE_FIRINGS, sizeof(lat[0]), de_cmp);
	printf("devx_evch CQE polled to event readable: median %.1f us, p90 %.1f us (%d firings)\n",
	       (double)lat[DE_FIRINGS / 2] / 1e3, (double)lat[DE_FIRINGS * 9 / 10] / 1e3, DE_FIRINGS);
	mlx5dv_devx_destroy_event_channel(ch);
}

int main(void)
{
	RUN(de_run);
	return th_summary("devx_evch");
}
