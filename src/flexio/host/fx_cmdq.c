/*
 * fx_cmdq — the command queue: tasks (a device function and one 64-bit
 * argument) run in the order added by `workers` DPA threads of the process,
 * each a host thread attached to a hart of its own, so a task that crashes
 * or reports a fatal error sets the process's error state and its worker
 * goes on with the next task. A queue created pending keeps its tasks until
 * flexio_cmdq_state_running.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_int.h"

#define FX_CMDQ_WORKERS_MAX 254 /* the DPA's execution units less the OS's (USER_EUS_LIMIT) */

struct fx_task {
	struct fx_dev_frame frame;
	const char *fname;
	uint64_t arg;
};

struct fx_worker {
	struct flexio_cmdq *q;
	struct fx_hart *h;
	pthread_t tid;
	uint32_t id; /* the DPA thread's id (flexio_dev_get_thread_id) */
	bool started;
};

struct flexio_cmdq {
	struct flexio_process *process;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct fx_task *t; /* a ring of cap tasks, head..head+n */
	uint32_t cap, head, n;
	uint32_t running; /* tasks taken by a worker and not done yet */
	bool go, stop;
	uint32_t nworkers;
	struct fx_worker *w;
};

static void *fx_cmdq_worker(void *arg)
{
	struct fx_worker *w = arg;
	struct flexio_cmdq *q = w->q;

	fx_hart_attach(w->h);
	pthread_mutex_lock(&q->mu);
	for (;;) {
		struct fx_task t;

		while (!q->stop && (!q->go || q->n == 0))
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop)
			break;
		t = q->t[q->head];
		q->head = (q->head + 1) % q->cap;
		q->n--;
		q->running++;
		pthread_mutex_unlock(&q->mu);
		t.frame.thread_id = w->id;
		t.frame.argbuf = &t.arg; /* a packed task's one 64-bit argument */
		(void)fx_hart_exec(w->h, &t.frame, t.fname); /* a fault is the process's error state */
		pthread_mutex_lock(&q->mu);
		q->running--; /* no wake-up: only workers wait on cv, for tasks, and this one looks again itself */
	}
	pthread_mutex_unlock(&q->mu);
	fx_hart_detach(w->h);
	return NULL;
}

static void fx_cmdq_free(struct flexio_cmdq *q)
{
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	for (uint32_t i = 0; i < q->nworkers; i++) {
		struct fx_worker *w = &q->w[i];

		for (int k = 0; w->started && pthread_tryjoin_np(w->tid, NULL) == EBUSY; k++) {
			fx_hart_kick(w->h); /* a task that never returns is made to leave */
			usleep(k < 10 ? 100 : 2000);
		}
		fx_hart_free(w->h);
	}
	if (q->n != 0)
		BASE_WARN("command queue destroyed with %u tasks not run", q->n);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q->w);
	free(q->t);
	free(q);
}

flexio_status flexio_cmdq_create(struct flexio_process *process, struct flexio_cmdq_attr *fattr,
				 struct flexio_cmdq **cmdq)
{
	struct flexio_cmdq *q;

	if (cmdq != NULL)
		*cmdq = NULL;
	if (process == NULL || fattr == NULL || cmdq == NULL || fattr->workers <= 0 ||
	    fattr->workers > FX_CMDQ_WORKERS_MAX || fattr->batch_size <= 0 ||
	    (fattr->state != FLEXIO_CMDQ_STATE_PENDING && fattr->state != FLEXIO_CMDQ_STATE_RUNNING)) {
		BASE_ERR("invalid argument (process, attributes: 1..%d workers, a batch size, a state)",
			 FX_CMDQ_WORKERS_MAX);
		return FLEXIO_STATUS_FAILED;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return FLEXIO_STATUS_FAILED;
	q->process = process;
	q->go = fattr->state == FLEXIO_CMDQ_STATE_RUNNING;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->w = calloc((size_t)fattr->workers, sizeof(*q->w));
	if (q->w == NULL)
		goto err;
	for (int i = 0; i < fattr->workers; i++) {
		struct fx_worker *w = &q->w[i];

		w->q = q;
		w->h = fx_hart_alloc(process);
		if (w->h == NULL)
			goto err;
		q->nworkers++;
		w->id = (uint32_t)i;
		if (pthread_create(&w->tid, NULL, fx_cmdq_worker, w) != 0)
			goto err;
		w->started = true;
	}
	pthread_mutex_lock(&process->lock);
	process->users++;
	pthread_mutex_unlock(&process->lock);
	*cmdq = q;
	return FLEXIO_STATUS_SUCCESS;
err:
	BASE_ERR("cannot start %d command-queue workers", fattr->workers);
	fx_cmdq_free(q);
	return FLEXIO_STATUS_FAILED;
}

/* Under q->mu: room for one more task. */
static int fx_cmdq_grow(struct flexio_cmdq *q)
{
	uint32_t cap = q->cap == 0 ? 64 : 2 * q->cap;
	struct fx_task *t;

	if (q->n < q->cap)
		return 0;
	t = malloc(cap * sizeof(*t));
	if (t == NULL)
		return -1;
	for (uint32_t i = 0; i < q->n; i++)
		t[i] = q->t[(q->head + i) % q->cap];
	free(q->t);
	q->t = t;
	q->cap = cap;
	q->head = 0;
	return 0;
}

flexio_status flexio_cmdq_task_add(struct flexio_cmdq *cmdq, flexio_func_t *host_func, uint64_t arg)
{
	struct fx_task t = { 0 };
	struct fx_func *f;

	if (cmdq == NULL || fx_dev_target(cmdq->process, host_func, &f, &t.frame) != FLEXIO_STATUS_SUCCESS) {
		BASE_ERR("invalid argument (queue, or a function of the process's app)");
		return FLEXIO_STATUS_FAILED;
	}
	if (f->pup && f->argbuf_size != sizeof(uint64_t)) {
		BASE_ERR("%s: a command-queue task takes one 64-bit argument", f->name);
		return FLEXIO_STATUS_FAILED;
	}
	t.frame.arg = arg;
	t.arg = arg;
	t.fname = f->name;
	pthread_mutex_lock(&cmdq->mu);
	if (fx_cmdq_grow(cmdq) != 0) {
		pthread_mutex_unlock(&cmdq->mu);
		return FLEXIO_STATUS_FAILED;
	}
	cmdq->t[(cmdq->head + cmdq->n) % cmdq->cap] = t;
	cmdq->n++;
	pthread_cond_signal(&cmdq->cv);
	pthread_mutex_unlock(&cmdq->mu);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_cmdq_state_running(struct flexio_cmdq *cmdq)
{
	if (cmdq == NULL)
		return FLEXIO_STATUS_FAILED;
	pthread_mutex_lock(&cmdq->mu);
	cmdq->go = true;
	pthread_cond_broadcast(&cmdq->cv);
	pthread_mutex_unlock(&cmdq->mu);
	return FLEXIO_STATUS_SUCCESS;
}

int flexio_cmdq_is_empty(struct flexio_cmdq *cmdq)
{
	int empty;

	if (cmdq == NULL)
		return 0;
	pthread_mutex_lock(&cmdq->mu);
	empty = cmdq->n == 0 && cmdq->running == 0;
	pthread_mutex_unlock(&cmdq->mu);
	return empty;
}

flexio_status flexio_cmdq_destroy(struct flexio_cmdq *cmdq)
{
	struct flexio_process *p;

	if (cmdq == NULL)
		return FLEXIO_STATUS_FAILED;
	p = cmdq->process;
	fx_cmdq_free(cmdq);
	pthread_mutex_lock(&p->lock);
	p->users--;
	pthread_mutex_unlock(&p->lock);
	return FLEXIO_STATUS_SUCCESS;
}
