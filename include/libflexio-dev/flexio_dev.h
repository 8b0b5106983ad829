/*
 * softdpu — FlexIO SDK device API (libflexio-dev, DOCA 2.0-2.2 interface).
 *
 * What device (DPA) code calls: its thread context, leaving a thread or the
 * process, windows onto host memory, outboxes for doorbells, printing to the
 * host and spinlocks. softdpu builds device code with the host's compiler and
 * runs it on host threads, so nothing here is specific to the DPA's ISA.
 */
#ifndef SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_H_
#define SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An address in the process's device memory. */
typedef uint64_t flexio_uintptr_t;

/* Marks a parameter or variable that may go unused (the SDK offers it). */
#ifndef __unused
#define __unused __attribute__((__unused__))
#endif

/* Bracket entry points in older device code; sections mean nothing on the host. */
#define __FLEXIO_ENTRY_POINT_START
#define __FLEXIO_ENTRY_POINT_END

/* What the device calls that can fail return. */
typedef enum {
	FLEXIO_DEV_STATUS_SUCCESS = 0,
	FLEXIO_DEV_STATUS_FAILED = 1,
} flexio_dev_status_t;

/* When a send WQE makes a CQE (the ce field of its control segment). */
enum cq_ce_mode {
	MLX5_CTRL_SEG_CE_CQE_ON_CQE_ERROR = 0x0,
	MLX5_CTRL_SEG_CE_CQE_ON_FIRST_CQE_ERROR = 0x1,
	MLX5_CTRL_SEG_CE_CQE_ALWAYS = 0x2,
	MLX5_CTRL_SEG_CE_CQE_AND_EQE = 0x3,
};

/* The running DPA thread's context (opaque; flexio_dev_get_thread_ctx). */
struct flexio_dev_thread_ctx;

/* ---- entry point types ---- */

/* An RPC: flexio_process_call / flexio_cmdq_task_add without packing; returns the call's result. */
typedef uint64_t(flexio_dev_rpc_handler_t)(uint64_t arg);

/*
 * An RPC whose result nobody waits for (DOCA 2.2's type, as its samples
 * declare their __dpa_global__ RPCs): flexio_process_call runs it and
 * returns 0 as its result.
 */
typedef void(flexio_dev_async_rpc_handler_t)(uint64_t arg);

/* Unpacks argbuf (written by the host's pack function) and calls func with it; returns func's result. */
typedef uint64_t(flexio_dev_arg_unpack_func_t)(void *argbuf, void *func);

/* An event handler's thread entry; it ends with flexio_dev_finish or flexio_dev_reschedule, not return. */
typedef void(flexio_dev_event_handler_t)(uint64_t thread_arg);

/* A polling thread's entry. */
typedef void(flexio_dev_poll_thread_t)(uint64_t thread_arg);

/* ---- spinlocks ---- */

struct spinlock_s {
	uint32_t locked; /* 0: free, 1: held */
};

/* Must run before the lock's first use. */
#define spin_init(lock) __atomic_exchange_n(&((lock)->locked), 0, __ATOMIC_SEQ_CST)

/* Spins until locked goes from 0 to 1 here. */
#define spin_lock(lock)                                                                                  \
	do {                                                                                             \
		uint32_t flexio_spin_free_;                                                              \
		do {                                                                                     \
			flexio_spin_free_ = 0;                                                           \
		} while (!__atomic_compare_exchange_n(&((lock)->locked), &flexio_spin_free_, 1, 0,       \
						      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));              \
	} while (0)

#define spin_unlock(lock) __atomic_exchange_n(&((lock)->locked), 0, __ATOMIC_SEQ_CST)

/* One attempt: zero if the lock was taken. */
#define spin_trylock(lock) __atomic_exchange_n(&((lock)->locked), 1, __ATOMIC_SEQ_CST)

/* ---- the thread ---- */

/* Sets *dtctx to the running thread's context: 0, or negative outside a DPA thread. */
int flexio_dev_get_thread_ctx(struct flexio_dev_thread_ctx **dtctx);
uint32_t flexio_dev_get_thread_id(struct flexio_dev_thread_ctx *dtctx);
/* The thread-local storage address the host gave the event handler. */
flexio_uintptr_t flexio_dev_get_thread_local_storage(struct flexio_dev_thread_ctx *dtctx);

/* Ends the process without error (status 0x40): its threads stop. Does not return. */
void flexio_dev_finish(void);
/* Ends this activation of the thread; its next event starts it from its entry. Does not return. */
void flexio_dev_reschedule(void);

/* ---- windows and outboxes ---- */

/* Selects the outbox (by id) the thread's doorbells go through. */
flexio_dev_status_t flexio_dev_outbox_config(struct flexio_dev_thread_ctx *dtctx, uint16_t outbox_config_id);
/* Selects the window (by id) and the MKey of host memory it reaches. */
flexio_dev_status_t flexio_dev_window_config(struct flexio_dev_thread_ctx *dtctx, uint16_t window_config_id,
					     uint32_t mkey);
/* Changes only the MKey of the thread's window. */
flexio_dev_status_t flexio_dev_window_mkey_config(struct flexio_dev_thread_ctx *dtctx, uint32_t mkey);
/* Sets *daddr to the device address through which the window reaches host address haddr. */
flexio_dev_status_t flexio_dev_window_ptr_acquire(struct flexio_dev_thread_ctx *dtctx, uint64_t haddr,
						  flexio_uintptr_t **daddr);
flexio_dev_status_t flexio_dev_window_copy_from_host(struct flexio_dev_thread_ctx *dtctx, void *daddr,
						     uint64_t haddr, uint32_t size);
flexio_dev_status_t flexio_dev_window_copy_to_host(struct flexio_dev_thread_ctx *dtctx, uint64_t haddr,
						   const void *daddr, uint32_t size);

/* ---- printing (to the host's flexio_print_init stream) ---- */

/* printf, safe against other threads printing at the same time; returns what printf would. */
int flexio_dev_print(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Queues str; returns its length. Needs the thread context (flexio_dev_get_thread_ctx). */
int flexio_dev_puts(struct flexio_dev_thread_ctx *dtctx, char *str);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_H_ */
