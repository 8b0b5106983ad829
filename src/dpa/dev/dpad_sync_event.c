/*
 * dpad_sync_event — device code's side of DOCA Sync Events: the handle is
 * the event's record (se_dpa_handle.h); an update rings the event's bell
 * through the host function the record names, as a host update does.
 */
#include <sched.h>

#include "dpad_int.h"
#include "se_dpa_handle.h"

static inline struct se_dpa_handle *dpad_se(doca_dpa_dev_sync_event_t h)
{
	return (struct se_dpa_handle *)(uintptr_t)h;
}

void doca_dpa_dev_sync_event_get(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t *value)
{
	*value = atomic_load_explicit(dpad_se(dpa_dev_se_handle)->value, memory_order_acquire);
}

void doca_dpa_dev_sync_event_update_add(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t value)
{
	struct se_dpa_handle *h = dpad_se(dpa_dev_se_handle);

	atomic_fetch_add_explicit(&h->busy, 1, memory_order_acquire);
	atomic_fetch_add_explicit(h->value, value, memory_order_acq_rel);
	h->ring(h->bell);
	atomic_fetch_sub_explicit(&h->busy, 1, memory_order_release); /* the last touch: destroy may go on */
}

void doca_dpa_dev_sync_event_update_set(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t value)
{
	struct se_dpa_handle *h = dpad_se(dpa_dev_se_handle);

	atomic_fetch_add_explicit(&h->busy, 1, memory_order_acquire);
	atomic_store_explicit(h->value, value, memory_order_release);
	h->ring(h->bell);
	atomic_fetch_sub_explicit(&h->busy, 1, memory_order_release); /* the last touch: destroy may go on */
}

/* Yields between looks: DPA threads share the host's cores with the program. */
void doca_dpa_dev_sync_event_wait_gt(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t value, uint64_t mask)
{
	struct se_dpa_handle *h = dpad_se(dpa_dev_se_handle);

	while ((atomic_load_explicit(h->value, memory_order_acquire) & mask) <= value)
		sched_yield();
}
