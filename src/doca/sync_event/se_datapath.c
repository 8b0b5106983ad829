/*
 * se_datapath — get, update and wait on a started Sync Event.
 *
 * The counter is one 64-bit word read and written with C11 atomics, so the
 * same code serves a process-local counter, the user's memory and a page
 * shared with another process.
 */
#include <sched.h>

#include "dc_log.h"
#include "se_priv.h"

/* Polls between two checks that an exporter still holds its page (a system call). */
#define DSE_LIVENESS_PERIOD 1024u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

bool dse_started(const struct doca_sync_event *ev)
{
	return ev->state == DSE_SYNC_STARTED || (ev->state == DSE_CTX_MODE && ev->ctx.started);
}

doca_error_t dse_peer_check(struct doca_sync_event *ev)
{
	if (ev->seg == NULL)
		return DOCA_SUCCESS;
	if (atomic_load_explicit(&ev->seg->revoked, memory_order_acquire) != 0)
		return DOCA_ERROR_NOT_CONNECTED;
	if (atomic_load_explicit(&ev->exporter_gone, memory_order_acquire))
		return DOCA_ERROR_NOT_CONNECTED;
	/* A killed exporter cannot revoke: its memfd leaving /proc tells instead. */
	if (ev->imported &&
	    atomic_fetch_add_explicit(&ev->poll_tick, 1, memory_order_relaxed) % DSE_LIVENESS_PERIOD ==
		    DSE_LIVENESS_PERIOD - 1 &&
	    !fab_shm_owner_alive(&ev->shm))
		return DOCA_ERROR_NOT_CONNECTED;
	return DOCA_SUCCESS;
}

static doca_error_t op_check(const struct doca_sync_event *ev)
{
	if (!dse_started(ev)) {
		DC_ERR("Sync Event is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (ev->seg != NULL && atomic_load_explicit(&ev->seg->revoked, memory_order_acquire) != 0) {
		DC_ERR("the exporter destroyed this Sync Event");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value)
{
	doca_error_t ret;

	if (event == NULL || value == NULL) {
		DC_ERR("event and value must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = op_check(event);
	if (ret != DOCA_SUCCESS)
		return ret;
	*value = atomic_load_explicit(event->value, memory_order_acquire);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value)
{
	doca_error_t ret;

	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = op_check(event);
	if (ret != DOCA_SUCCESS)
		return ret;
	atomic_store_explicit(event->value, value, memory_order_release);
	hw_bell_ring(event->bell);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched)
{
	doca_error_t ret;

	if (event == NULL || fetched == NULL) {
		DC_ERR("event and fetched must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = op_check(event);
	if (ret != DOCA_SUCCESS)
		return ret;
	*fetched = atomic_fetch_add_explicit(event->value, value, memory_order_acq_rel);
	hw_bell_ring(event->bell);
	return DOCA_SUCCESS;
}

static doca_error_t wait_gt(struct doca_sync_event *ev, uint64_t value, uint64_t mask, bool yield)
{
	doca_error_t ret;

	if (ev == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = op_check(ev);
	if (ret != DOCA_SUCCESS)
		return ret;
	while (!dse_gt(ev, value, mask)) {
		ret = dse_peer_check(ev);
		if (ret != DOCA_SUCCESS) {
			DC_ERR("Sync Event exporter is gone; stopped waiting");
			return ret;
		}
		if (yield)
			sched_yield();
		else
			cpu_relax();
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait_gt(event, value, mask, false);
}

doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait_gt(event, value, mask, true);
}
