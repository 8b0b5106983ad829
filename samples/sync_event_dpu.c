/*
 * Sync event, DPU side (run with SOFTDPU_SIDE=dpu, before sync_event_host):
 * receives the host's exported sync event over the comm channel, creates it
 * from the export, and answers every odd value the host sets with the next
 * even one.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>

#include <doca_dev.h>
#include <doca_log.h>
#include <doca_sync_event.h>

#include "sample_common.h"
#include "sync_event_proto.h"

DOCA_LOG_REGISTER(SYNC_EVENT_DPU);

static doca_error_t answer(struct doca_sync_event *ev, uint64_t rounds)
{
	doca_error_t r = DOCA_SUCCESS;

	for (uint64_t k = 0; k < rounds && r == DOCA_SUCCESS; k++) {
		r = doca_sync_event_wait_gt(ev, 2 * k, UINT64_MAX);
		if (r == DOCA_SUCCESS)
			r = doca_sync_event_update_set(ev, 2 * k + 2);
	}
	if (r == DOCA_SUCCESS)
		printf("dpu: answered %llu rounds through the host's sync event\n", (unsigned long long)rounds);
	return r;
}

int main(void)
{
	struct sync_event_hello hello;
	struct doca_sync_event *ev = NULL;
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	struct sample_cc cc = { 0 };
	uint8_t blob[4096];
	size_t n = sizeof(hello), len = sizeof(blob);
	doca_error_t r;

	r = sample_open_dev(SAMPLE_DPU_PCI, &dev);
	if (r == DOCA_SUCCESS)
		r = sample_open_rep(dev, SAMPLE_HOST_PCI, &rep);
	if (r == DOCA_SUCCESS)
		r = sample_cc_service(&cc, dev, rep, SYNC_EVENT_SERVICE);
	if (r == DOCA_SUCCESS)
		printf("dpu: waiting for the host on comm channel service \"%s\"\n", SYNC_EVENT_SERVICE);
	if (r == DOCA_SUCCESS)
		r = sample_cc_recv(&cc, &hello, &n);
	if (r == DOCA_SUCCESS && (n != sizeof(hello) || hello.magic != SYNC_EVENT_MAGIC))
		r = DOCA_ERROR_INVALID_VALUE;
	if (r == DOCA_SUCCESS)
		r = sample_cc_recv(&cc, blob, &len);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_create_from_export(dev, blob, len, &ev);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_start(ev);
	if (r == DOCA_SUCCESS)
		r = answer(ev, hello.rounds);
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("sync event ping-pong failed: %s", doca_get_error_string(r));
	if (ev != NULL) {
		doca_sync_event_stop(ev);
		doca_sync_event_destroy(ev);
	}
	sample_cc_close(&cc);
	if (rep != NULL)
		doca_dev_rep_close(rep);
	if (dev != NULL)
		doca_dev_close(dev);
	return r == DOCA_SUCCESS ? 0 : 1;
}
