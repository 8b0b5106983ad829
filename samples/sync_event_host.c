/*
 * Sync event, host side (run with SOFTDPU_SIDE=host, start sync_event_dpu
 * first): creates a sync event whose publisher is the host CPU and whose
 * subscriber is the DPU, exports it to the DPU over the comm channel, then
 * plays ping-pong: the host sets an odd value and waits for the DPU to answer
 * with the next even one.
 *
 * Usage: sync_event_host [rounds]   (default 10000)
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_dev.h>
#include <doca_log.h>
#include <doca_sync_event.h>

#include "sample_common.h"
#include "sync_event_proto.h"

DOCA_LOG_REGISTER(SYNC_EVENT_HOST);

static doca_error_t make_event(struct doca_dev *dev, struct doca_sync_event **ev, const uint8_t **blob, size_t *len)
{
	doca_error_t r = doca_sync_event_create(ev);

	if (r == DOCA_SUCCESS)
		r = doca_sync_event_publisher_add_location_cpu(*ev, dev);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_subscriber_add_location_dpu(*ev);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_start(*ev);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_export_to_dpu(*ev, dev, blob, len);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Odd values from the host, even answers from the DPU. */
static doca_error_t ping_pong(struct doca_sync_event *ev, uint64_t rounds)
{
	doca_error_t r = DOCA_SUCCESS;
	double t0 = now_s();

	for (uint64_t k = 0; k < rounds && r == DOCA_SUCCESS; k++) {
		r = doca_sync_event_update_set(ev, 2 * k + 1);
		if (r == DOCA_SUCCESS)
			r = doca_sync_event_wait_gt(ev, 2 * k + 1, UINT64_MAX);
	}
	if (r == DOCA_SUCCESS)
		printf("host: %llu ping-pong rounds with the DPU, %.2f us per round trip\n", (unsigned long long)rounds,
		       (now_s() - t0) * 1e6 / (double)rounds);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000;
	struct sync_event_hello hello = { .magic = SYNC_EVENT_MAGIC, .rounds = rounds };
	struct doca_sync_event *ev = NULL;
	struct doca_dev *dev = NULL;
	struct sample_cc cc = { 0 };
	const uint8_t *blob;
	size_t len;
	uint64_t last = 0;
	doca_error_t r;

	r = sample_open_dev(SAMPLE_HOST_PCI, &dev);
	if (r == DOCA_SUCCESS)
		r = make_event(dev, &ev, &blob, &len);
	if (r == DOCA_SUCCESS)
		r = sample_cc_client(&cc, dev, SYNC_EVENT_SERVICE);
	if (r == DOCA_SUCCESS)
		r = sample_cc_send(&cc, &hello, sizeof(hello));
	if (r == DOCA_SUCCESS)
		r = sample_cc_send(&cc, blob, len);
	if (r == DOCA_SUCCESS)
		r = ping_pong(ev, rounds);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_get(ev, &last);
	if (r == DOCA_SUCCESS && last != 2 * rounds)
		r = DOCA_ERROR_UNEXPECTED;
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("sync event ping-pong failed: %s", doca_get_error_string(r));
	sample_cc_close(&cc);
	if (ev != NULL) {
		doca_sync_event_stop(ev);
		doca_sync_event_destroy(ev);
	}
	if (dev != NULL)
		doca_dev_close(dev);
	return r == DOCA_SUCCESS ? 0 : 1;
}
