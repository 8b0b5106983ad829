/*
 * bench_dpa — DOCA DPA's costs beside what they are made of, in one run:
 *
 *   launch       doca_dpa_kernel_launch_update_set of an empty kernel on one
 *                thread until the host sees its completion event (median, p99)
 *   se rt        a Sync Event round trip host -> DPA -> host: the host sets
 *                one event, a running kernel waiting on it sets another
 *   futex rt     the same hand-over between two threads with FUTEX_WAKE /
 *                FUTEX_WAIT, both ways: the floor of a sleeping DPA thread
 *   line rt      a cache line passed back and forth between two spinning
 *                threads: the physical floor of a polling one
 *
 * Usage: bench_dpa [--quick]
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <doca_dev.h>
#include <doca_dpa.h>
#include <doca_sync_event.h>

#include "bench_rt.h"

extern struct doca_dpa_app *bench_dpa_dev;
extern doca_dpa_func_t bd_nop, bd_pong;

/* A started event: the DPA publishes (dpa_pub) or subscribes, the CPU of dev the other side. */
static struct doca_sync_event *event(struct doca_dpa *dpa, struct doca_dev *dev, int dpa_pub)
{
	struct doca_sync_event *se = NULL;

	if (doca_sync_event_create(&se) != DOCA_SUCCESS ||
	    (dpa_pub ? doca_sync_event_publisher_add_location_dpa(se, dpa)
		     : doca_sync_event_publisher_add_location_cpu(se, dev)) != DOCA_SUCCESS ||
	    (dpa_pub ? doca_sync_event_subscriber_add_location_cpu(se, dev)
		     : doca_sync_event_subscriber_add_location_dpa(se, dpa)) != DOCA_SUCCESS ||
	    doca_sync_event_start(se) != DOCA_SUCCESS) {
		fprintf(stderr, "bench_dpa: cannot make a Sync Event\n");
		exit(1);
	}
	return se;
}

static struct stats launch_rt(struct doca_dpa *dpa, struct doca_sync_event *comp, uint32_t n, uint64_t *lat)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		if (doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, i + 1, 1, &bd_nop) != DOCA_SUCCESS ||
		    doca_sync_event_wait_gt_yield(comp, i, UINT64_MAX) != DOCA_SUCCESS) {
			fprintf(stderr, "bench_dpa: launch %u failed\n", i);
			exit(1);
		}
		lat[i] = now_ns() - t0;
	}
	return summarize(lat, n);
}

static struct stats se_rt(struct doca_dpa *dpa, struct doca_dev *dev, uint32_t n, uint64_t *lat)
{
	struct doca_sync_event *p = event(dpa, dev, 0), *q = event(dpa, dev, 1), *comp = event(dpa, dev, 1);
	doca_dpa_dev_sync_event_t ph, qh;

	if (doca_sync_event_export_to_dpa(p, dpa, &ph) != DOCA_SUCCESS ||
	    doca_sync_event_export_to_dpa(q, dpa, &qh) != DOCA_SUCCESS ||
	    doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, 1, 1, &bd_pong, ph, qh, (uint64_t)n) !=
		    DOCA_SUCCESS) {
		fprintf(stderr, "bench_dpa: cannot start the ping-pong kernel\n");
		exit(1);
	}
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t t0 = now_ns();

		doca_sync_event_update_set(p, i);
		doca_sync_event_wait_gt_yield(q, i - 1, UINT64_MAX);
		lat[i - 1] = now_ns() - t0;
	}
	doca_sync_event_wait_gt(comp, 0, UINT64_MAX);
	doca_sync_event_destroy(comp);
	doca_sync_event_destroy(q);
	doca_sync_event_destroy(p);
	return summarize(lat, n);
}

static struct doca_dev *open_dev(struct doca_devinfo ***list)
{
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_list_create(list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_dev_open((*list)[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	return dev;
}

int main(int argc, char **argv)
{
	uint32_t n = (argc > 1 && strcmp(argv[1], "--quick") == 0) ? 2000 : 20000;
	uint64_t *lat = malloc(n * sizeof(*lat));
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = open_dev(&list);
	struct doca_dpa *dpa = NULL;
	struct doca_sync_event *comp;
	struct stats s;

	if (lat == NULL || dev == NULL || doca_dpa_create(dev, bench_dpa_dev, &dpa, 0) != DOCA_SUCCESS) {
		fprintf(stderr, "bench_dpa: no device or DPA context\n");
		return 1;
	}
	comp = event(dpa, dev, 1);
	launch_rt(dpa, comp, n / 10, lat); /* warm-up */
	s = launch_rt(dpa, comp, n, lat);
	printf("dpa launch:      median %7.2f us  p99 %7.2f us\n", s.median_us, s.p99_us);
	doca_sync_event_destroy(comp);
	s = se_rt(dpa, dev, n, lat);
	printf("dpa se rt:       median %7.2f us  p99 %7.2f us\n", s.median_us, s.p99_us);
	s = futex_rt(n, lat);
	printf("futex rt:        median %7.2f us  p99 %7.2f us\n", s.median_us, s.p99_us);
	s = line_rt(n, lat);
	printf("cache-line rt:   median %7.2f us  p99 %7.2f us\n", s.median_us, s.p99_us);
	doca_dpa_destroy(dpa);
	doca_dev_close(dev);
	doca_devinfo_list_destroy(list);
	free(lat);
	return 0;
}
