/*
 * fx_evh — event handlers: the DPA threads CQ events activate (fx_evh.h).
 *
 * An activation enters the handler's function from the top with the
 * handler's argument. It ends by returning or by flexio_dev_thread_reschedule
 * (the thread waits for the next event), by flexio_dev_finish (the thread is
 * done: no further activation), or by a crash or fatal error (the process's
 * error state; the thread is done). Process destroy stops a thread that
 * never leaves device code. A destroyed handler's object stays until its
 * process goes, so a CQ event racing with the destroy touches live memory.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fx_evh.h"
#include "fx_int.h"

enum fx_evh_state { FX_EVH_CREATED, FX_EVH_RUNNING, FX_EVH_DONE, FX_EVH_DESTROYED };

struct flexio_thread {
	struct flexio_event_handler *eh;
};

struct flexio_event_handler {
	struct flexio_event_handler *next;
	struct flexio_process *proc;
	struct flexio_thread thread;
	struct fx_hart *hart;
	struct fx_dev_frame frame; /* the entry: function, thread id, TLS; arg set by run */
	char fname[FLEXIO_MAX_NAME_LEN + 1];
	uint32_t id;
	_Atomic uint32_t pending;  /* an event came since the last activation began */
	_Atomic uint32_t gen;	   /* futex word: moves at every event, run and stop */
	_Atomic uint32_t sleeping; /* the thread waits on gen: a wake needs the system call */
	_Atomic uint32_t state;	   /* enum fx_evh_state */
	uint64_t activations;
};

static void fx_futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Something for the thread to look at: the sleeping thread is woken (Dekker with fx_evh_wait). */
static void fx_evh_kick(struct flexio_event_handler *e)
{
	atomic_fetch_add_explicit(&e->gen, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&e->sleeping, memory_order_seq_cst))
		fx_futex_wake(&e->gen);
}

void fx_thread_wake(struct flexio_thread *t)
{
	struct flexio_event_handler *e = t->eh;

	atomic_store_explicit(&e->pending, 1, memory_order_seq_cst);
	fx_evh_kick(e);
}

static void fx_evh_wake_hook(void *arg)
{
	fx_evh_kick(arg);
}

static bool fx_evh_ready(struct flexio_event_handler *e, struct fx_hart *h)
{
	return __atomic_load_n(&h->stop, __ATOMIC_SEQ_CST) ||
	       (atomic_load_explicit(&e->pending, memory_order_acquire) &&
		atomic_load_explicit(&e->state, memory_order_acquire) == FX_EVH_RUNNING);
}

static uint64_t fx_evh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Until an activation is due or the hart is stopped: polled for a while
 * after the last activation (a wake through the kernel costs more than the
 * activation itself), then slept on the futex.
 */
static void fx_evh_wait(struct flexio_event_handler *e, struct fx_hart *h)
{
	uint64_t until = fx_evh_now() + fx_hart_spin_ns();

	for (uint32_t i = 1; !fx_evh_ready(e, h); i++) {
		uint32_t g;

		if ((i & 255) != 0) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			continue;
		}
		if (fx_evh_now() < until) {
			/*
			 * A woken thread often lands on its waker's core: polling
			 * there would hold the waker off the core until the spin
			 * ends (100 us). Yielding lets it run.
			 */
			sched_yield();
			continue;
		}
		g = atomic_load_explicit(&e->gen, memory_order_seq_cst);
		atomic_store_explicit(&e->sleeping, 1, memory_order_seq_cst);
		if (!fx_evh_ready(e, h) && atomic_load_explicit(&e->gen, memory_order_seq_cst) == g)
			syscall(SYS_futex, &e->gen, FUTEX_WAIT_PRIVATE, g, NULL, NULL, 0);
		atomic_store_explicit(&e->sleeping, 0, memory_order_seq_cst);
		until = fx_evh_now() + fx_hart_spin_ns();
	}
}

/* One activation; whether the thread may be activated again. */
static bool fx_evh_activate(struct flexio_event_handler *e, struct fx_hart *h)
{
	struct fx_dev_frame f = e->frame;
	flexio_status st;

	atomic_store_explicit(&e->pending, 0, memory_order_seq_cst);
	e->activations++;
	st = fx_hart_exec(h, &f, e->fname);
	if (st == FLEXIO_STATUS_SUCCESS && h->exit_how != FX_EXIT_FINISH)
		return true;
	if (st == FLEXIO_STATUS_FATAL_ERR)
		BASE_ERR("event handler %s (thread %u) stopped: its device code failed", e->fname, e->id);
	return false;
}

static void *fx_evh_main(void *arg)
{
	struct fx_hart *h = arg;
	struct flexio_event_handler *e = h->wake_arg;

	fx_hart_attach(h);
	for (;;) {
		fx_evh_wait(e, h);
		if (__atomic_load_n(&h->stop, __ATOMIC_SEQ_CST))
			break;
		if (!fx_evh_activate(e, h)) {
			uint32_t running = FX_EVH_RUNNING;

			atomic_compare_exchange_strong(&e->state, &running, FX_EVH_DONE);
			while (!__atomic_load_n(&h->stop, __ATOMIC_SEQ_CST))
				fx_evh_wait(e, h); /* done: only the stop is waited for */
			break;
		}
	}
	fx_hart_detach(h);
	return NULL;
}

static flexio_status fx_evh_entry(struct flexio_process *p, const struct flexio_event_handler_attr *a,
				  struct flexio_event_handler *e)
{
	struct fx_func *f;

	if (fx_dev_target(p, a->host_stub_func, &f, &e->frame) != FLEXIO_STATUS_SUCCESS)
		return FLEXIO_STATUS_FAILED;
	e->frame.kind = FX_DEV_HANDLER; /* a flexio_dev_event_handler_t: called with its argument, not unpacked */
	e->frame.tls = a->thread_local_storage_daddr;
	e->frame.arg = a->arg;
	snprintf(e->fname, sizeof(e->fname), "%s", f->name);
	return FLEXIO_STATUS_SUCCESS;
}

static bool fx_evh_attr_ok(const struct flexio_event_handler_attr *a)
{
	if (a->affinity.type != FLEXIO_AFFINITY_NONE && a->affinity.type != FLEXIO_AFFINITY_STRICT &&
	    a->affinity.type != FLEXIO_AFFINITY_GROUP) {
		BASE_ERR("affinity type %d is not one of FLEXIO_AFFINITY_*", (int)a->affinity.type);
		return false;
	}
	return true;
}

flexio_status flexio_event_handler_create(struct flexio_process *process, struct flexio_event_handler_attr *fattr,
					  const struct flexio_window *window, const struct flexio_outbox *outbox,
					  struct flexio_event_handler **event_handler_ptr)
{
	struct flexio_event_handler *e;

	(void)window; /* device code configures its window and outbox by id (flexio_dev_*_config) */
	(void)outbox;
	if (event_handler_ptr != NULL)
		*event_handler_ptr = NULL;
	if (process == NULL || fattr == NULL || event_handler_ptr == NULL || fattr->host_stub_func == NULL) {
		BASE_ERR("invalid argument (process, attributes with a host stub, handler pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	if (!fx_evh_attr_ok(fattr))
		return FLEXIO_STATUS_FAILED;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return FLEXIO_STATUS_FAILED;
	e->proc = process;
	e->thread.eh = e;
	if (fx_evh_entry(process, fattr, e) != FLEXIO_STATUS_SUCCESS)
		goto err;
	e->hart = fx_hart_alloc(process);
	if (e->hart == NULL)
		goto err;
	e->hart->wake = fx_evh_wake_hook;
	e->hart->wake_arg = e;
	pthread_mutex_lock(&process->lock);
	e->id = ++process->next_thread_id;
	e->frame.thread_id = e->id;
	e->next = process->evhs;
	process->evhs = e;
	pthread_mutex_unlock(&process->lock);
	if (fx_hart_start(e->hart, fx_evh_main) != 0) {
		BASE_ERR("cannot start the thread of event handler %s", e->fname);
		atomic_store(&e->state, FX_EVH_DESTROYED); /* listed, freed with the process */
		fx_hart_free(e->hart);
		e->hart = NULL;
		return FLEXIO_STATUS_FAILED;
	}
	*event_handler_ptr = e;
	return FLEXIO_STATUS_SUCCESS;

err:
	free(e);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_event_handler_run(struct flexio_event_handler *event_handler, uint64_t user_arg)
{
	struct flexio_event_handler *e = event_handler;
	uint32_t created = FX_EVH_CREATED;

	if (e == NULL)
		return FLEXIO_STATUS_FAILED;
	e->frame.arg = user_arg; /* read by the thread only once it sees RUNNING */
	if (!atomic_compare_exchange_strong(&e->state, &created, FX_EVH_RUNNING)) {
		BASE_ERR("event handler %s runs already, or is done", e->fname);
		return FLEXIO_STATUS_FAILED;
	}
	fx_evh_kick(e); /* an event that came before run activates it now */
	return FLEXIO_STATUS_SUCCESS;
}

static void fx_evh_stop(struct flexio_event_handler *e)
{
	atomic_store(&e->state, FX_EVH_DESTROYED);
	fx_hart_destroy(e->hart);
	e->hart = NULL;
}

flexio_status flexio_event_handler_destroy(struct flexio_event_handler *event_handler)
{
	if (event_handler == NULL || event_handler->hart == NULL) {
		BASE_ERR("invalid argument (an event handler not destroyed yet)");
		return FLEXIO_STATUS_FAILED;
	}
	fx_evh_stop(event_handler);
	return FLEXIO_STATUS_SUCCESS;
}

struct flexio_thread *flexio_event_handler_get_thread(struct flexio_event_handler *event_handler)
{
	return event_handler != NULL ? &event_handler->thread : NULL;
}

uint32_t flexio_event_handler_get_id(struct flexio_event_handler *event_handler)
{
	return event_handler != NULL ? event_handler->id : 0;
}

bool fx_thread_of(struct flexio_process *p, const struct flexio_thread *t)
{
	bool found = false;

	if (t == NULL)
		return false;
	pthread_mutex_lock(&p->lock);
	for (struct flexio_event_handler *e = p->evhs; e != NULL && !found; e = e->next)
		found = &e->thread == t && atomic_load(&e->state) != FX_EVH_DESTROYED;
	pthread_mutex_unlock(&p->lock);
	return found;
}

void fx_evh_stop_all(struct flexio_process *p)
{
	for (struct flexio_event_handler *e = p->evhs; e != NULL; e = e->next)
		if (e->hart != NULL)
			fx_evh_stop(e);
}

void fx_evh_fini(struct flexio_process *p)
{
	while (p->evhs != NULL) {
		struct flexio_event_handler *e = p->evhs;

		p->evhs = e->next;
		free(e);
	}
}
