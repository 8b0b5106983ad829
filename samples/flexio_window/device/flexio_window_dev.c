/*
 * Device side of the flexio_window sample: an RPC that reaches a host
 * buffer through the window the host made, adds one to each byte there, and
 * writes a checksum of the result back to host memory.
 */
#include <libflexio-dev/flexio_dev.h>
#include <stdint.h>

/* What went wrong, for the host to report (0: nothing). */
enum { WINDOW_OK, WINDOW_NO_CTX, WINDOW_CONFIG, WINDOW_ACQUIRE, WINDOW_COPY };

/*
 * len bytes at host address haddr, under the host's MR key mkey, each plus
 * one; their checksum to host address sum_haddr.
 */
__dpa_rpc__ uint64_t flexio_window_transform(uint32_t window_id, uint32_t mkey, uint64_t haddr, uint32_t len,
					     uint64_t sum_haddr)
{
	struct flexio_dev_thread_ctx *ctx;
	flexio_uintptr_t *daddr;
	uint64_t sum = 0;
	uint8_t *bytes;

	if (flexio_dev_get_thread_ctx(&ctx) < 0)
		return WINDOW_NO_CTX;
	if (flexio_dev_window_config(ctx, (uint16_t)window_id, mkey) != FLEXIO_DEV_STATUS_SUCCESS)
		return WINDOW_CONFIG;
	if (flexio_dev_window_ptr_acquire(ctx, haddr, &daddr) != FLEXIO_DEV_STATUS_SUCCESS)
		return WINDOW_ACQUIRE;
	bytes = (uint8_t *)daddr;
	for (uint32_t i = 0; i < len; i++) {
		bytes[i]++;
		sum = sum * 31 + bytes[i];
	}
	if (flexio_dev_window_copy_to_host(ctx, sum_haddr, &sum, sizeof(sum)) != FLEXIO_DEV_STATUS_SUCCESS)
		return WINDOW_COPY;
	return WINDOW_OK;
}
