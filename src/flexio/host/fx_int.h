/*
 * fx_int — the FlexIO host runtime's objects (libflexio.so).
 *
 * An app is a registered device image and its functions; a process is one
 * loaded copy of an app's image (its own globals, heap, harts, print channel
 * and error state). Device code runs on harts: host threads that enter the
 * image through the device runtime (fx_dev_abi.h) and catch what it does
 * wrong, so a crash or a fatal error in device code becomes the process's
 * error state and the host program goes on.
 */
#ifndef FX_INT_H_
#define FX_INT_H_

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <libflexio/flexio.h>

#include "base_log.h"
#include "fx_dev_abi.h"

struct fx_func {
	struct fx_func *next;
	flexio_func_t *stub; /* the host stub: how the program names the function */
	char name[FLEXIO_MAX_NAME_LEN + 1];
	char unpack_name[FLEXIO_MAX_NAME_LEN + 1];
	size_t argbuf_size;
	flexio_func_arg_pack_fn_t *pack;
	bool pup; /* registered with pack/unpack */
};

struct flexio_app {
	struct flexio_app *next;
	char name[FLEXIO_MAX_NAME_LEN + 1];
	void *elf;
	size_t elf_size;
	struct fx_func *funcs;
	uint32_t users; /* processes made from it */
};

/* The device heap: an arena whose addresses device code dereferences as they are. */
struct fx_block {
	uint64_t off, len;
	bool used;
};

struct fx_heap {
	uint8_t *base;
	uint64_t size;
	struct fx_block *b; /* sorted by offset, covering the arena */
	uint32_t n, cap;
	uint64_t in_use;
};

/* One execution unit running device code for a process. */
struct fx_hart {
	struct flexio_process *proc;
	pthread_t tid;
	bool own_thread; /* its thread is its own (fx_hart_new, fx_hart_start), set before the thread runs */
	bool started;
	sigjmp_buf jb;
	int in_device; /* device code runs: a fault is the process's, not ours (atomic: signal handlers read it) */
	int stop;      /* process destroy: leave device code at once (atomic) */
	int kick_sent; /* a stop signal is on its way (atomic): one at a time, since they queue and would nest */
	void *altstack;
	/*
	 * The one call it runs (RPC hart): posted, taken, done; claimed by its
	 * caller from the post until the result is taken (or the wait timed
	 * out), so a concurrent caller neither overwrites the result nor takes it.
	 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct fx_dev_frame frame;
	const char *fname;
	bool posted, busy, done, claimed;
	flexio_status st;
	uint8_t *argbuf; /* the call's packed arguments, the hart's own (a call that timed out still reads them) */
	size_t argcap;
	uint8_t ctx[FX_DEV_CTX_BYTES];
	int exit_how; /* how the last entry into device code ended (enum fx_exit) */
	bool in_err_handler; /* the process's error handler runs on it: a failure there runs no other */
	/* Wakes the hart's own loop when it sleeps elsewhere than on cv (an event handler's); NULL: cv. */
	void (*wake)(void *arg);
	void *wake_arg;
};

/* How an entry into device code ended. */
enum fx_exit { FX_EXIT_RETURN, FX_EXIT_FINISH, FX_EXIT_RESCHEDULE, FX_EXIT_FATAL, FX_EXIT_STOP };

enum fx_err_kind { FX_ERR_NONE, FX_ERR_SIGNAL, FX_ERR_FATAL };

struct fx_print {
	uint8_t *ring;
	uint64_t size; /* a power of two */
	uint64_t head, tail;
	uint64_t lost;
	FILE *out;
	bool async;
	bool stop;
	pthread_t thread;
	bool thread_up;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	flexio_uintptr_t daddr;
	struct fx_print *next; /* a destroyed channel, kept until the process goes */
};

/* A function's addresses in one process's image. */
struct fx_target {
	struct fx_func *f;
	void *fn, *unpack;
};

struct flexio_process {
	struct flexio_app *app;
	struct ibv_context *ibv_ctx;
	struct ibv_pd *pd;
	bool own_pd;
	int memfd;
	void *dl;
	fx_dev_call_fn call;
	struct fx_dev_ops ops;
	pthread_mutex_t lock; /* heap, print, error state */
	struct fx_heap heap;
	struct fx_hart *rpc;
	struct fx_print *print;	       /* atomic: harts read it while printing */
	struct fx_print *print_retired; /* destroyed channels (under lock) */
	char err_handler[FLEXIO_MAX_NAME_LEN + 1];
	void *err_handler_fn; /* its address in the image (NULL: none set) */
	bool said_unsupported; /* a device call not supported yet was logged */
	uint32_t users;	       /* objects of the process (command queues): destroyed before it */
	struct fx_target *targets; /* resolved once, so a call or task pays no symbol lookup */
	/* fx_window.c: windows, outboxes and device MKeys of the process (under lock). */
	struct flexio_window *windows;
	struct flexio_outbox *outboxes;
	struct flexio_mkey *mkeys;
	uint32_t next_obj_id; /* window and outbox ids: from 1, never reused in the process */
	/* fx_queue.c: CQs and QPs of the process (under lock). */
	struct flexio_cq *cqs;
	struct flexio_qp *qps;
	/* fx_eth.c: Ethernet SQs and RQs of the process (under lock). */
	struct flexio_sq *sqs;
	struct flexio_rq *rqs;
	/* fx_evh.c: event handlers (their threads), live and destroyed (under lock). */
	struct flexio_event_handler *evhs;
	uint32_t next_thread_id;
	/* fx_isolate.c: the protection key of the process's DPA memory (-1: none). */
	int pkey;
	uint32_t ntargets;
	/* Error state: set by a hart, reported and reset by flexio_err_display. */
	int err_fd;
	enum fx_err_kind err_kind;
	int err_sig;
	uint64_t err_code;
	uintptr_t err_addr;
	char err_func[FLEXIO_MAX_NAME_LEN + 1];
};

/* fx_app.c */
struct fx_func *fx_func_find(struct flexio_app *app, flexio_func_t *stub);
void fx_app_get(struct flexio_app *app);
void fx_app_put(struct flexio_app *app);

/*
 * fx_process.c: the device function behind host_func in p's image, into
 * fr (fn, unpack, kind) and *f; FLEXIO_STATUS_FAILED (logged) for a function
 * of no app of p's or one not in the image.
 */
flexio_status fx_dev_target(struct flexio_process *p, flexio_func_t *host_func, struct fx_func **f,
			    struct fx_dev_frame *fr);

/*
 * fx_process.c: whether [daddr, daddr+len) lies inside one buffer of p's
 * heap with daddr aligned to align (takes p's lock): where queue rings,
 * records and host copies must lie.
 */
bool fx_dev_span(struct flexio_process *p, flexio_uintptr_t daddr, uint64_t len, uint64_t align);

/* fx_heap.c */
int fx_heap_init(struct fx_heap *h, uint64_t size);
void fx_heap_fini(struct fx_heap *h);
flexio_uintptr_t fx_heap_alloc(struct fx_heap *h, uint64_t len);
int fx_heap_free(struct fx_heap *h, flexio_uintptr_t daddr);
/* Whether [daddr, daddr+len) lies in one allocated buffer. */
bool fx_heap_owns(const struct fx_heap *h, flexio_uintptr_t daddr, uint64_t len);

/* fx_hart.c */
/* A hart of proc without a thread of its own (a command-queue worker attaches its thread to it). */
struct fx_hart *fx_hart_alloc(struct flexio_process *proc);
void fx_hart_free(struct fx_hart *h);
/* The calling thread becomes h's: its faults in device code are h's (its alternate stack installed). */
void fx_hart_attach(struct fx_hart *h);
void fx_hart_detach(struct fx_hart *h);
/* Runs f in device code on the calling thread, attached to h; the outcome. */
flexio_status fx_hart_exec(struct fx_hart *h, struct fx_dev_frame *f, const char *fname);
/* Asks h to stop, and makes its thread leave device code at once if it is inside. */
void fx_hart_kick(struct fx_hart *h);
/* A hart with a thread of its own, running the calls posted by fx_hart_run. */
struct fx_hart *fx_hart_new(struct flexio_process *proc);
/*
 * Runs frame on hart h with a copy of args (len bytes) as its argument
 * buffer, waiting up to timeout_ms; FLEXIO_STATUS_TIMEOUT leaves it running.
 */
flexio_status fx_hart_run(struct fx_hart *h, const struct fx_dev_frame *frame, const void *args, size_t len,
			  const char *fname, unsigned timeout_ms, uint64_t *ret);
/* Starts a thread of h's own running main(h) (an event handler's loop); 0 or an errno. */
int fx_hart_start(struct fx_hart *h, void *(*main)(void *));
/* How long a hart polls for work before it sleeps (0 on one core). */
uint64_t fx_hart_spin_ns(void);
/* Stops h (out of device code at once if it is inside) and frees it. */
void fx_hart_destroy(struct fx_hart *h);
/* The ops device code's finish, reschedule and fatal errors go through. */
void fx_hart_finish(void *host_thread) __attribute__((noreturn));
void fx_hart_reschedule(void *host_thread) __attribute__((noreturn));
void fx_hart_fatal(void *host_thread, uint64_t code) __attribute__((noreturn));

/* fx_err.c */
void fx_err_set(struct flexio_process *p, enum fx_err_kind kind, int sig, uint64_t code, uintptr_t addr,
		const char *func);

/* fx_print.c */
size_t fx_print_put(void *proc, const char *buf, size_t len);
void fx_print_fini(struct flexio_process *p);

/* fx_queue.c: the doorbells of device code (fx_dev_ops), and process destroy. */
int fx_dev_sq_ring_db(void *proc, uint32_t outbox_id, uint32_t qnum, uint32_t pi);
int fx_dev_cq_arm(void *proc, uint32_t outbox_id, uint32_t cqn, uint32_t ci);
void fx_queue_fini(struct flexio_process *p);

/* fx_window.c */
/* ops->window_ptr: the host address of [haddr, haddr+len) through window_id under mkey, NULL when refused. */
void *fx_window_ptr(void *proc, uint32_t window_id, uint32_t mkey, uint64_t haddr, uint64_t len, int write);
/* ops->outbox_check. */
int fx_outbox_check(void *proc, uint32_t outbox_id);
/* Process destroy: windows, outboxes and MKeys the program left. */
void fx_window_fini(struct flexio_process *p);

/* fx_log.c: where the library's messages go (base_log), and its settings. */
unsigned fx_call_timeout_ms(void);
uint64_t fx_heap_bytes(void);

#endif /* FX_INT_H_ */
