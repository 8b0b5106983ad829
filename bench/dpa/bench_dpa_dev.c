/* Device code of bench_dpa: an empty kernel, and a ping-pong on two events. */
#include <doca_dpa_dev.h>
#include <doca_dpa_dev_sync_event.h>

__dpa_global__ void bd_nop(void)
{
}

/* Rounds 1..n: waits for ping > i-1, answers pong = i. */
__dpa_global__ void bd_pong(doca_dpa_dev_sync_event_t ping, doca_dpa_dev_sync_event_t pong, uint64_t n)
{
	for (uint64_t i = 1; i <= n; i++) {
		doca_dpa_dev_sync_event_wait_gt(ping, i - 1, UINT64_MAX);
		doca_dpa_dev_sync_event_update_set(pong, i);
	}
}
