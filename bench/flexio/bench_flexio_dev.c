/* Device code of bench_flexio: an RPC and a command-queue task that do next to nothing. */
#include <libflexio-dev/flexio_dev.h>
#include <stdint.h>

static uint64_t tasks_done;

__dpa_rpc__ uint64_t bf_nop(uint64_t a)
{
	return a + 1;
}

__dpa_rpc__ uint64_t bf_task(uint64_t a)
{
	(void)a;
	__atomic_fetch_add(&tasks_done, 1, __ATOMIC_RELAXED);
	return 0;
}

__dpa_rpc__ uint64_t bf_tasks_done(uint64_t reset)
{
	uint64_t v = __atomic_load_n(&tasks_done, __ATOMIC_RELAXED);

	if (reset)
		__atomic_store_n(&tasks_done, 0, __ATOMIC_RELAXED);
	return v;
}
