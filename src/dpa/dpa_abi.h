/*
 * dpa_abi — what the DOCA DPA host library (host/) and the DOCA DPA device
 * library linked into every image (dev/) agree on.
 *
 * A kernel launch is a record in host memory (DPA threads are host threads
 * of this process): the kernel's device function and unpacker by name, its
 * packed arguments, its events and its count of threads. Each thread is one
 * task of the context's FlexIO command queue running the device library's
 * entry with the address of its own slot.
 */
#ifndef DPA_ABI_H_
#define DPA_ABI_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The device library's entries, registered with the app as raw FlexIO functions. */
#define DPA_RT_ENTRY_NAME "__doca_dpa_rt_entry"   /* a kernel thread (a command-queue task) */
#define DPA_RT_LOOKUP_NAME "__doca_dpa_rt_lookup" /* a kernel's addresses in the image (an RPC) */
#define DPA_NAME_MAX 256

struct dpa_launch;

/* One thread's task argument. */
struct dpa_thread {
	struct dpa_launch *l;
	uint32_t rank;
};

/*
 * A lookup: the kernel's device function and the unpacker dpacc made for
 * it, by name, and their addresses in the process's image (NULL: none).
 * Done by the RPC hart at a context's first launch of a kernel, not by
 * kernel threads: a lookup takes the loader's lock, which a thread made to
 * leave device code (destroy, the maximum run time) would leave held.
 */
struct dpa_lookup {
	char fn[DPA_NAME_MAX];
	char unpack[DPA_NAME_MAX];
	void *fnp, *unpackp;
};

struct dpa_launch {
	char fn[DPA_NAME_MAX]; /* the kernel's name (messages) */
	void *fnp, *unpackp;   /* its device function and unpacker */
	uint32_t nthreads;
	uint32_t comp_add; /* comp_h: add comp_val (1) or set it (0) */
	uint64_t wait_h;   /* a struct se_dpa_handle address, 0: none */
	uint64_t wait_thr;
	uint64_t comp_h; /* as wait_h */
	uint64_t comp_val;
	_Atomic uint64_t start_ns; /* CLOCK_MONOTONIC when its first thread passed the wait (0: not yet) */
	_Atomic uint32_t left;	   /* threads not returned */
	struct dpa_launch *next;   /* the context's list (host) */
	void *argbuf;		   /* the packed arguments */
	struct dpa_thread t[];
};

/* What a doca_dpa_dev_mem_t names: host memory registered with a context (doca_dpa_mem_host_register). */
#define DPA_MEM_MAGIC 0x445041484d454d31ull /* "DPAHMEM1" */

struct dpa_dev_mem {
	uint64_t magic;
	uint64_t addr, len;
	uint32_t access; /* DOCA_ACCESS_* */
	uint32_t lkey, rkey;
};

/*
 * What a doca_dpa_dev_ep_t names: an endpoint (an RC QP of the device) and
 * the host functions device code posts and waits through, 0 or -1 (a
 * completion in error: the context's fatal error).
 */
#define DPA_EP_MAGIC 0x4450414550543031ull /* "DPAEPT01" */

struct dpa_dev_ep {
	uint64_t magic;
	void *ep;
	int (*put)(void *ep, uint64_t laddr, uint64_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey);
	int (*sync)(void *ep);
	/* A remote Sync Event's counter set to (add false) or increased by value, after what was posted before. */
	int (*signal)(void *ep, uint64_t raddr, uint32_t rkey, uint64_t value, bool add);
};

#endif /* DPA_ABI_H_ */
