/*
 * Device code of the FlexIO runtime tests (test_flexio.c): RPCs that
 * return what they were given, touch device memory, keep a device global,
 * print, crash, report a fatal error, or never return.
 */
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_err.h>
#include <stddef.h>
#include <stdint.h>

static uint64_t counter; /* a device global: one per process */

__dpa_rpc__ uint64_t fxt_add(uint64_t a, uint64_t b)
{
	return a + b;
}

/* Every width and sign: a checksum the host computes the same way. */
__dpa_rpc__ uint64_t fxt_widths(int8_t a, uint16_t b, int32_t c, uint64_t d, int16_t e, uint8_t f, void *p)
{
	return (uint64_t)(int64_t)a * 3 + (uint64_t)b * 5 + (uint64_t)(int64_t)c * 7 + d * 11 +
	       (uint64_t)(int64_t)e * 13 + (uint64_t)f * 17 + (uint64_t)(uintptr_t)p;
}

__dpa_rpc__ uint64_t fxt_count(void)
{
	return ++counter;
}

/* The sum of len bytes at a device address. */
__dpa_rpc__ uint64_t fxt_sum(flexio_uintptr_t daddr, uint32_t len)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)daddr;
	uint64_t s = 0;

	for (uint32_t i = 0; i < len; i++)
		s += p[i] * (i + 1u);
	return s;
}

/* Writes len bytes of a pattern at a device address. */
__dpa_rpc__ uint64_t fxt_fill(flexio_uintptr_t daddr, uint32_t len, uint8_t seed)
{
	uint8_t *p = (uint8_t *)(uintptr_t)daddr;

	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7u);
	return len;
}

__dpa_rpc__ uint64_t fxt_print(uint64_t v)
{
	struct flexio_dev_thread_ctx *ctx;

	flexio_dev_get_thread_ctx(&ctx);
	flexio_dev_print("device says %llu\n", (unsigned long long)v);
	flexio_dev_puts(ctx, "and puts\n");
	return v;
}

__dpa_rpc__ uint64_t fxt_crash(uint64_t how)
{
	volatile int *bad = (volatile int *)(uintptr_t)how;

	return (uint64_t)*bad;
}

__dpa_rpc__ uint64_t fxt_fatal(uint64_t code)
{
	flexio_dev_error(code);
	return 0;
}

__dpa_rpc__ uint64_t fxt_spin(uint64_t unused)
{
	volatile uint64_t n = unused;

	for (;;)
		n++;
	return n;
}

/* Registered by name without pack/unpack (flexio_func_register): a plain RPC handler. */
uint64_t fxt_raw(uint64_t arg)
{
	return arg + 1;
}

/* Command-queue tasks: counted, summed, and which DPA threads ran them. */
static uint64_t task_count, task_sum, task_threads, task_first;

__dpa_rpc__ uint64_t fxt_task(uint64_t arg)
{
	struct flexio_dev_thread_ctx *ctx;

	flexio_dev_get_thread_ctx(&ctx);
	__atomic_fetch_or(&task_threads, 1ull << (flexio_dev_get_thread_id(ctx) & 63), __ATOMIC_RELEASE);
	if (arg == 999999)
		return *(volatile uint64_t *)(uintptr_t)8; /* a task that crashes */
	/*
	 * The first task keeps its worker until another worker has run one, so
	 * several workers take tasks however the host schedules the harts (a
	 * bound of spins, in case none ever does).
	 */
	if (__atomic_exchange_n(&task_first, 1, __ATOMIC_ACQ_REL) == 0)
		for (uint64_t i = 0; i < 4000000000ull; i++)
			if (__builtin_popcountll(__atomic_load_n(&task_threads, __ATOMIC_ACQUIRE)) >= 2)
				break;
	for (volatile int i = 0; i < 20000; i++)
		; /* some work */
	__atomic_fetch_add(&task_sum, arg, __ATOMIC_RELAXED);
	__atomic_fetch_add(&task_count, 1, __ATOMIC_RELAXED);
	return 0;
}

__dpa_rpc__ uint64_t fxt_task_stats(uint64_t which)
{
	uint64_t v = which == 0 ? task_count : which == 1 ? task_sum : task_threads;

	if (which == 3)
		task_count = task_sum = task_threads = task_first = 0;
	return v;
}

/* The process's error handler (flexio_process_error_handler_set by name): what it was given. */
static uint64_t err_calls, err_code, err_ctx_ok, err_errno;

__dpa_global__ void fxt_on_error(uint64_t thread_ctx, uint64_t err)
{
	struct flexio_dev_thread_ctx *dt = NULL;

	flexio_dev_get_thread_ctx(&dt);
	err_calls++;
	err_code = err;
	err_ctx_ok = (uint64_t)(uintptr_t)dt == thread_ctx;
	err_errno = flexio_dev_get_errno((struct flexio_dev_thread_ctx *)(uintptr_t)thread_ctx);
	flexio_dev_reschedule();
}

/* calls | code << 8 | ctx_ok << 40 | errno << 48 (small codes) */
__dpa_rpc__ uint64_t fxt_err_seen(void)
{
	return err_calls | err_code << 8 | err_ctx_ok << 40 | err_errno << 48;
}

/* DOCA 2.2's asynchronous RPC type: nothing returned; arg names a device word to mark. */
flexio_dev_async_rpc_handler_t fxt_async_mark;

__dpa_global__ void fxt_async_mark(uint64_t arg)
{
	__atomic_fetch_add((uint64_t *)(uintptr_t)arg, 1, __ATOMIC_RELAXED);
}
