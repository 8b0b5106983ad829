/*
 * kernel_launch — a kernel on four DPA threads held by a wait event that a
 * host thread sets a little later; the host waits for the completion event
 * and checks that every thread ran.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, in a strict C11 build */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "dpa_common.h"

#define NUM_THREADS 4
#define WAIT_THRESH 4
#define COMP_VAL 10

extern doca_dpa_func_t hello_world;

static void *release_kernel(void *event)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 100 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	if (doca_sync_event_update_set(event, WAIT_THRESH + 1) != DOCA_SUCCESS)
		fprintf(stderr, "cannot set the wait event\n");
	return NULL;
}

doca_error_t kernel_launch(struct dpa_resources *resources)
{
	struct doca_sync_event *wait_event = NULL, *comp_event = NULL, *count = NULL;
	doca_dpa_dev_sync_event_t count_handle;
	uint64_t counted = 0;
	pthread_t tid;
	doca_error_t r;

	r = create_doca_dpa_wait_sync_event(resources->doca_dpa, resources->doca_device, &wait_event);
	if (r != DOCA_SUCCESS)
		return r;
	r = create_doca_dpa_completion_sync_event(resources->doca_dpa, resources->doca_device, &comp_event);
	if (r != DOCA_SUCCESS)
		goto destroy_wait;
	r = create_doca_dpa_completion_sync_event(resources->doca_dpa, resources->doca_device, &count);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_export_to_dpa(count, resources->doca_dpa, &count_handle);
	if (r != DOCA_SUCCESS)
		goto destroy_comp;
	r = doca_dpa_kernel_launch_update_set(resources->doca_dpa, wait_event, WAIT_THRESH, comp_event, COMP_VAL,
					      NUM_THREADS, &hello_world, count_handle);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "kernel launch: %s\n", doca_get_error_string(r));
		goto destroy_count;
	}
	if (pthread_create(&tid, NULL, release_kernel, wait_event) != 0) {
		r = DOCA_ERROR_OPERATING_SYSTEM;
		goto destroy_count;
	}
	r = doca_sync_event_wait_gt(comp_event, COMP_VAL - 1, UINT64_MAX);
	pthread_join(tid, NULL);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_get(count, &counted);
	if (r == DOCA_SUCCESS && counted != NUM_THREADS) {
		fprintf(stderr, "%" PRIu64 " threads ran, %d launched\n", counted, NUM_THREADS);
		r = DOCA_ERROR_UNEXPECTED;
	}
	if (r == DOCA_SUCCESS)
		r = doca_dpa_peek_at_last_error(resources->doca_dpa);
destroy_count:
	doca_sync_event_destroy(count);
destroy_comp:
	doca_sync_event_destroy(comp_event);
destroy_wait:
	doca_sync_event_destroy(wait_event);
	return r;
}
