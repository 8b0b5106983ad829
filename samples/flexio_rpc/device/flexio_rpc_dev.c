/*
 * Device side of the flexio_rpc sample: an RPC that checks a vector it is
 * given in device memory and prints from the DPA, and a command-queue task
 * that adds its argument into a device-memory counter.
 */
#include <libflexio-dev/flexio_dev.h>
#include <stdint.h>

static uint64_t *counters; /* device memory the host handed over (flexio_rpc_set_counters) */

/* The sum of the n 64-bit words at vec, scaled; printed from the DPA. */
__dpa_rpc__ uint64_t flexio_rpc_sum(flexio_uintptr_t vec, uint32_t n, uint16_t scale)
{
	const uint64_t *v = (const uint64_t *)vec;
	uint64_t s = 0;

	for (uint32_t i = 0; i < n; i++)
		s += v[i];
	flexio_dev_print("flexio_rpc: sum of %u words = %llu, scaled by %u\n", n, (unsigned long long)s, scale);
	return s * scale;
}

__dpa_rpc__ uint64_t flexio_rpc_set_counters(flexio_uintptr_t daddr)
{
	counters = (uint64_t *)daddr;
	return 0;
}

/* A command-queue task: counters[thread] += arg, so each DPA thread's share is visible. */
__dpa_rpc__ uint64_t flexio_rpc_task(uint64_t arg)
{
	struct flexio_dev_thread_ctx *ctx;

	flexio_dev_get_thread_ctx(&ctx);
	__atomic_fetch_add(&counters[flexio_dev_get_thread_id(ctx) % 8], arg, __ATOMIC_RELAXED);
	return 0;
}
