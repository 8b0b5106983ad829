/*
 * Device code of the window tests (test_flexio_window.c): RPCs that reach
 * host memory through a window, configure an outbox, and read DPA memory.
 * Each returns the device call's status (or what it read), so the host
 * asserts the exact outcome.
 */
#include <libflexio-dev/flexio_dev.h>
#include <stddef.h>
#include <stdint.h>

/* The status of an acquire, with 0x100 added when the pointer came back NULL. */
#define FXW_NULL_PTR 0x100u
/* What fxw_sum returns when the window refused the address. */
#define FXW_REFUSED UINT64_MAX

static struct flexio_dev_thread_ctx *fxw_ctx(void)
{
	struct flexio_dev_thread_ctx *ctx = NULL;

	flexio_dev_get_thread_ctx(&ctx);
	return ctx;
}

/* Configures the window and acquires haddr: the status, and whether the pointer is NULL. */
__dpa_rpc__ uint64_t fxw_acquire(uint32_t window_id, uint32_t mkey, uint64_t haddr)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();
	flexio_uintptr_t *p = (flexio_uintptr_t *)(uintptr_t)1;
	flexio_dev_status_t st;

	if (flexio_dev_window_config(ctx, (uint16_t)window_id, mkey) != FLEXIO_DEV_STATUS_SUCCESS)
		return 0xdead;
	st = flexio_dev_window_ptr_acquire(ctx, haddr, &p);
	return (uint64_t)st | (p == NULL ? FXW_NULL_PTR : 0);
}

/* The sum of len bytes at haddr, each weighted by its position from 1, read through the window. */
__dpa_rpc__ uint64_t fxw_sum(uint32_t window_id, uint32_t mkey, uint64_t haddr, uint32_t len)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();
	flexio_uintptr_t *p = NULL;
	const uint8_t *b;
	uint64_t s = 0;

	flexio_dev_window_config(ctx, (uint16_t)window_id, mkey);
	if (flexio_dev_window_ptr_acquire(ctx, haddr, &p) != FLEXIO_DEV_STATUS_SUCCESS)
		return FXW_REFUSED;
	b = (const uint8_t *)p;
	for (uint32_t i = 0; i < len; i++)
		s += b[i] * (i + 1u);
	return s;
}

/* Writes len bytes of a pattern (seed + 3i) at haddr through the acquired pointer; the acquire's status. */
__dpa_rpc__ uint64_t fxw_fill(uint32_t window_id, uint32_t mkey, uint64_t haddr, uint32_t len, uint8_t seed)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();
	flexio_uintptr_t *p = NULL;
	flexio_dev_status_t st;
	uint8_t *b;

	flexio_dev_window_config(ctx, (uint16_t)window_id, mkey);
	st = flexio_dev_window_ptr_acquire(ctx, haddr, &p);
	if (st != FLEXIO_DEV_STATUS_SUCCESS)
		return st;
	b = (uint8_t *)p;
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + 3u * i);
	return st;
}

/* Configures the window with a wrong key, then sets the right one alone: the acquire's status. */
__dpa_rpc__ uint64_t fxw_rekey(uint32_t window_id, uint32_t bad_mkey, uint32_t mkey, uint64_t haddr)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();
	flexio_uintptr_t *p = NULL;
	uint64_t r;

	flexio_dev_window_config(ctx, (uint16_t)window_id, bad_mkey);
	r = flexio_dev_window_ptr_acquire(ctx, haddr, &p);
	if (flexio_dev_window_mkey_config(ctx, mkey) != FLEXIO_DEV_STATUS_SUCCESS)
		return 0xdead;
	return r << 8 | flexio_dev_window_ptr_acquire(ctx, haddr, &p);
}

/* flexio_dev_window_copy_to_host of size bytes at daddr (DPA memory) to haddr: its status. */
__dpa_rpc__ uint64_t fxw_copy_to(uint32_t window_id, uint32_t mkey, uint64_t haddr, flexio_uintptr_t daddr,
				 uint32_t size)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();

	flexio_dev_window_config(ctx, (uint16_t)window_id, mkey);
	return flexio_dev_window_copy_to_host(ctx, haddr, (const void *)(uintptr_t)daddr, size);
}

/* flexio_dev_window_copy_from_host of size bytes at haddr to daddr (DPA memory): its status. */
__dpa_rpc__ uint64_t fxw_copy_from(uint32_t window_id, uint32_t mkey, flexio_uintptr_t daddr, uint64_t haddr,
				   uint32_t size)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();

	flexio_dev_window_config(ctx, (uint16_t)window_id, mkey);
	return flexio_dev_window_copy_from_host(ctx, (void *)(uintptr_t)daddr, haddr, size);
}

/* The calls with a NULL context, pointer or size: one bit per call that did not fail (0 expected). */
__dpa_rpc__ uint64_t fxw_bad_args(uint64_t haddr)
{
	struct flexio_dev_thread_ctx *ctx = fxw_ctx();
	flexio_uintptr_t *p = (flexio_uintptr_t *)(uintptr_t)1;
	uint8_t b[8] = { 0 };
	uint64_t ok = 0;

	ok |= (uint64_t)(flexio_dev_outbox_config(NULL, 1) != FLEXIO_DEV_STATUS_FAILED) << 0;
	ok |= (uint64_t)(flexio_dev_window_config(NULL, 1, 1) != FLEXIO_DEV_STATUS_FAILED) << 1;
	ok |= (uint64_t)(flexio_dev_window_mkey_config(NULL, 1) != FLEXIO_DEV_STATUS_FAILED) << 2;
	ok |= (uint64_t)(flexio_dev_window_ptr_acquire(NULL, haddr, &p) != FLEXIO_DEV_STATUS_FAILED) << 3;
	ok |= (uint64_t)(p != NULL) << 4;
	ok |= (uint64_t)(flexio_dev_window_ptr_acquire(ctx, haddr, NULL) != FLEXIO_DEV_STATUS_FAILED) << 5;
	ok |= (uint64_t)(flexio_dev_window_copy_to_host(NULL, haddr, b, 8) != FLEXIO_DEV_STATUS_FAILED) << 6;
	ok |= (uint64_t)(flexio_dev_window_copy_to_host(ctx, haddr, NULL, 8) != FLEXIO_DEV_STATUS_FAILED) << 7;
	ok |= (uint64_t)(flexio_dev_window_copy_to_host(ctx, haddr, b, 0) != FLEXIO_DEV_STATUS_FAILED) << 8;
	ok |= (uint64_t)(flexio_dev_window_copy_from_host(NULL, b, haddr, 8) != FLEXIO_DEV_STATUS_FAILED) << 9;
	ok |= (uint64_t)(flexio_dev_window_copy_from_host(ctx, NULL, haddr, 8) != FLEXIO_DEV_STATUS_FAILED) << 10;
	ok |= (uint64_t)(flexio_dev_window_copy_from_host(ctx, b, haddr, 0) != FLEXIO_DEV_STATUS_FAILED) << 11;
	return ok;
}

__dpa_rpc__ uint64_t fxw_outbox(uint32_t outbox_id)
{
	return flexio_dev_outbox_config(fxw_ctx(), (uint16_t)outbox_id);
}

/* The weighted sum of len bytes of DPA memory (as fxw_sum weighs them). */
__dpa_rpc__ uint64_t fxw_dev_sum(flexio_uintptr_t daddr, uint32_t len)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)daddr;
	uint64_t s = 0;

	for (uint32_t i = 0; i < len; i++)
		s += b[i] * (i + 1u);
	return s;
}
