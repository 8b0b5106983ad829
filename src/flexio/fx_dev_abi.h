/*
 * fx_dev_abi — what the host runtime (src/flexio/host) and the device
 * runtime linked into every device image (src/flexio/dev) agree on.
 *
 * A device image is a shared object the host runtime loads once per FlexIO
 * process (memfd + dlopen), so each process has its own copy of the image's
 * globals and of the device runtime's state. The device runtime never links
 * the host libraries: it reaches the emulated device only through the
 * operations table handed to it at load (fxd_attach), and the host enters
 * device code only through fxd_call. Both are looked up by name.
 */
#ifndef FX_DEV_ABI_H_
#define FX_DEV_ABI_H_

#include <stddef.h>
#include <stdint.h>

#define FX_DEV_ABI_VERSION 2
#define FX_DEV_ATTACH_SYM "__flexio_dev_rt_attach"
#define FX_DEV_CALL_SYM "__flexio_dev_rt_call"
/* Room the host keeps for each DPA thread's device-side context (struct flexio_dev_thread_ctx). */
#define FX_DEV_CTX_BYTES 256

/* How fxd_call runs its function. */
enum fx_dev_kind {
	FX_DEV_RPC_UNPACK = 1, /* unpack(argbuf, fn): an RPC whose arguments the host packed */
	FX_DEV_RPC_RAW = 2,    /* fn(arg): an RPC registered without pack/unpack */
	FX_DEV_HANDLER = 3,    /* fn(arg): an event handler's activation (void) */
	FX_DEV_ERR_HANDLER = 4, /* fn(ctx, arg): the process's error handler, on the thread that failed; errno = arg */
};

/* One entry into device code, on a hart. */
struct fx_dev_frame {
	void *host_thread;  /* the host's thread object, handed back in the ops below */
	void *ctx;	    /* FX_DEV_CTX_BYTES of the thread's device context (kept across activations) */
	uint32_t thread_id; /* flexio_dev_get_thread_id */
	uint32_t kind;	    /* enum fx_dev_kind */
	uint64_t tls;	    /* thread-local storage address (0: none) */
	void *fn;
	void *unpack;
	void *argbuf;
	uint64_t arg;
	uint64_t ret; /* out: the RPC's return value */
};

/* What device code may ask of the host (set once, before any call). */
struct fx_dev_ops {
	uint32_t version; /* FX_DEV_ABI_VERSION */
	void *proc;	  /* the host's process object */
	/* flexio_dev_print / puts: bytes for the process's print channel; how many were taken. */
	size_t (*print)(void *proc, const char *buf, size_t len);
	/* Ends the current activation: finish, reschedule, or a fatal error (code); never returns. */
	void (*finish)(void *host_thread) __attribute__((noreturn));
	void (*reschedule)(void *host_thread) __attribute__((noreturn));
	void (*fatal)(void *host_thread, uint64_t code) __attribute__((noreturn));
	/* A window's bytes: the host address of [haddr, haddr+len) under mkey with the rights asked (0: refused). */
	void *(*window_ptr)(void *proc, uint32_t window_id, uint32_t mkey, uint64_t haddr, uint64_t len, int write);
	/* flexio_dev_outbox_config: 0 when outbox_id is one of the process's outboxes, -1 otherwise. */
	int (*outbox_check)(void *proc, uint32_t outbox_id);
	/*
	 * Doorbells through an outbox: the SQ (or QP) qnum has WQEs up to
	 * producer counter pi; CQ cqn armed at consumer index ci. 0, or -1 when
	 * the queue is not the process's or the device refused (logged).
	 */
	int (*sq_ring_db)(void *proc, uint32_t outbox_id, uint32_t qnum, uint32_t pi);
	int (*cq_arm)(void *proc, uint32_t outbox_id, uint32_t cqn, uint32_t ci);
	/* A device call softdpu does not run yet: logged by the host (once per name). */
	void (*unsupported)(void *proc, const char *name);
};

typedef int (*fx_dev_attach_fn)(const struct fx_dev_ops *ops);
typedef void (*fx_dev_call_fn)(struct fx_dev_frame *f);

#endif /* FX_DEV_ABI_H_ */
