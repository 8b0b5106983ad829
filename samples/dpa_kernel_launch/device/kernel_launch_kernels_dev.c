/*
 * The sample's kernel: each DPA thread says hello and counts itself into
 * an event the host reads.
 */
#include <doca_dpa_dev.h>
#include <doca_dpa_dev_sync_event.h>

__dpa_global__ void hello_world(doca_dpa_dev_sync_event_t count)
{
	doca_dpa_dev_printf("Hello from kernel: thread %u of %u\n", doca_dpa_dev_thread_rank(),
			    doca_dpa_dev_num_threads());
	doca_dpa_dev_sync_event_update_add(count, 1);
}
