/*
 * Kernels of test_dpa (built by DOCA DPA's dpacc as the vendor's scripts
 * call it): events set and added from device code, ranks, arguments of
 * several widths, DPA memory written and read, waits on events, printing,
 * and kernels gone wrong (a fault, a fatal error, one that never returns).
 */
#include <stdint.h>

#include <doca_dpa_dev.h>
#include <doca_dpa_dev_sync_event.h>
#include <libflexio-dev/flexio_dev_err.h>

__dpa_global__ void dpt_set(doca_dpa_dev_sync_event_t ev, uint64_t v)
{
	doca_dpa_dev_sync_event_update_set(ev, v);
}

/* Each thread adds its rank's bit when it sees the launch's thread count. */
__dpa_global__ void dpt_ranks(doca_dpa_dev_sync_event_t ev, unsigned int expect_n)
{
	if (doca_dpa_dev_num_threads() == expect_n)
		doca_dpa_dev_sync_event_update_add(ev, 1ull << doca_dpa_dev_thread_rank());
}

/* len bytes at addr: seed + i * step (arguments of 8, 16, 32 and 64 bits). */
__dpa_global__ void dpt_fill(doca_dpa_dev_uintptr_t addr, uint32_t len, uint8_t seed, uint16_t step)
{
	uint8_t *p = (uint8_t *)(uintptr_t)addr;

	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * step);
}

/* The 8 bytes at addr, as the event's value. */
__dpa_global__ void dpt_read64(doca_dpa_dev_sync_event_t ev, doca_dpa_dev_uintptr_t addr)
{
	uint64_t v;

	__builtin_memcpy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	doca_dpa_dev_sync_event_update_set(ev, v);
}

/* Waits for w > thr in device code, then reads it into out plus one. */
__dpa_global__ void dpt_relay(doca_dpa_dev_sync_event_t w, uint64_t thr, doca_dpa_dev_sync_event_t out)
{
	uint64_t v;

	doca_dpa_dev_sync_event_wait_gt(w, thr, UINT64_MAX);
	doca_dpa_dev_sync_event_get(w, &v);
	doca_dpa_dev_sync_event_update_set(out, v + 1);
}

__dpa_global__ void dpt_print(uint64_t v)
{
	doca_dpa_dev_printf("dpa thread %u of %u says %lu\n", doca_dpa_dev_thread_rank(), doca_dpa_dev_num_threads(),
			    (unsigned long)v);
}

__dpa_global__ void dpt_fault(uint64_t addr)
{
	*(volatile uint64_t *)(uintptr_t)addr = 1;
}

__dpa_global__ void dpt_fatal(void)
{
	flexio_dev_error(7);
}

__dpa_global__ void dpt_spin(void)
{
	for (volatile int x = 0;; x++)
		;
}

/* Registered host memory through a pointer device code asks for: each byte xor key. */
__dpa_global__ void dpt_host_xor(doca_dpa_dev_mem_t mem, uint64_t addr, uint32_t len, uint8_t key)
{
	doca_dpa_dev_uintptr_t p;

	doca_dpa_dev_external_ptr_get(addr, mem, &p);
	for (uint32_t i = 0; i < len; i++)
		((uint8_t *)(uintptr_t)p)[i] ^= key;
}

__dpa_global__ void dpt_copy(uint64_t dst, doca_dpa_dev_mem_t dst_mem, uint64_t src, doca_dpa_dev_mem_t src_mem,
			     uint64_t len)
{
	doca_dpa_dev_memcpy_nb(dst, dst_mem, src, src_mem, len);
	doca_dpa_dev_memcpy_synchronize();
}

/* A rows x cols array of 16-bit elements, transposed. */
__dpa_global__ void dpt_transpose(uint64_t dst, doca_dpa_dev_mem_t dst_mem, uint64_t src, doca_dpa_dev_mem_t src_mem,
				  uint32_t rows, uint32_t cols)
{
	doca_dpa_dev_memcpy_transpose2D_nb(dst, dst_mem, src, src_mem, (size_t)rows * cols * 2, 2, cols, rows);
	doca_dpa_dev_memcpy_synchronize();
}

__dpa_global__ void dpt_rkey(doca_dpa_dev_sync_event_t ev, doca_dpa_dev_mem_t mem)
{
	doca_dpa_dev_sync_event_update_set(ev, doca_dpa_dev_mem_rkey_get(mem));
}

__dpa_global__ void dpt_put(void)
{
	doca_dpa_dev_put_nb(0, 0, 8, 0, 0, 0);
}

/* RDMA WRITE of len bytes of registered memory to the endpoint's peer, waited for. */
__dpa_global__ void dpt_ep_put(doca_dpa_dev_ep_t ep, uint64_t laddr, doca_dpa_dev_mem_t lmem, uint32_t len,
			       uint64_t raddr, uint32_t rkey)
{
	uint32_t r = doca_dpa_dev_thread_rank(), part = len / doca_dpa_dev_num_threads();

	doca_dpa_dev_put_nb(ep, laddr + r * part, part, lmem, raddr + r * part, rkey);
	doca_dpa_dev_ep_synchronize(ep);
}

/* A put and its signal (set or add) of a remote Sync Event: the event's handle is a struct by value. */
__dpa_global__ void dpt_ep_put_signal(doca_dpa_dev_ep_t ep, uint64_t laddr, doca_dpa_dev_mem_t lmem, uint32_t len,
				      uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t ev, uint64_t val,
				      uint8_t add)
{
	if (add)
		doca_dpa_dev_put_signal_add_nb(ep, laddr, lmem, len, raddr, rkey, ev, val);
	else
		doca_dpa_dev_put_signal_set_nb(ep, laddr, lmem, len, raddr, rkey, ev, val);
	doca_dpa_dev_ep_synchronize(ep);
}

__dpa_global__ void dpt_put_signal(doca_dpa_dev_ep_t ep)
{
	doca_dpa_dev_sync_event_remote_t ev = { { 0, 0 } };

	doca_dpa_dev_put_signal_add_nb(ep, 0, 0, 0, 0, 0, ev, 1);
}
