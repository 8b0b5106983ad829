/*
 * Device side of the flexio_multithread sample: an RPC nobody waits on for
 * a result (DOCA 2.2's flexio_dev_async_rpc_handler_t) that computes one
 * element of C = A x B, A and B in DPA memory, C in host memory reached
 * through the host's window. Each host thread calls it for its own element.
 */
#include <libflexio-dev/flexio_dev.h>
#include <stdint.h>

#include "../flexio_multithread_common.h"

flexio_dev_async_rpc_handler_t flexio_multithread_rpc;

__dpa_global__ void flexio_multithread_rpc(uint64_t arg)
{
	struct host_to_device_config *cfg = (struct host_to_device_config *)arg;
	struct flexio_dev_thread_ctx *ctx;
	flexio_uintptr_t *c_daddr;
	const int32_t *a, *b;
	int32_t *c, sum = 0;

	if (flexio_dev_get_thread_ctx(&ctx) < 0)
		return;
	if (flexio_dev_window_config(ctx, (uint16_t)cfg->window_id, cfg->mkey) != FLEXIO_DEV_STATUS_SUCCESS)
		return;
	if (flexio_dev_window_ptr_acquire(ctx, cfg->haddr, &c_daddr) != FLEXIO_DEV_STATUS_SUCCESS)
		return;
	a = (const int32_t *)cfg->mat_a_daddr;
	b = (const int32_t *)cfg->mat_b_daddr;
	c = (int32_t *)c_daddr;
	for (uint32_t i = 0; i < N; i++)
		sum += a[cfg->row * N + i] * b[i * N + cfg->col];
	c[cfg->row * N + cfg->col] = sum;
}
