/*
 * hw_life — each process's robust mutex in the device-wide life table,
 * held by a thread that only waits (hw_life.h).
 */
#include "hw_life.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_ids.h"
#include "hw_shm.h"

#define LIFE_VERSION 1u
#define LIFE_ENTRIES 4096u /* processes sharing queues at once */

struct life_entry {
	_Atomic uint64_t owner; /* 0 free; else the process's word (hw_ids_self_word) */
	uint32_t tid;		/* the holder thread, once it holds m */
	uint32_t pad;
	pthread_mutex_t m;	/* robust, process-shared; its first word is the futex */
} __attribute__((aligned(64)));
_Static_assert(sizeof(pthread_mutex_t) >= sizeof(int), "the futex word leads the mutex");

static struct life_entry *tbl;
static pthread_once_t tbl_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t self_idx = HW_LIFE_NONE, self_tid;
static pid_t self_pid;
static bool forked; /* this process is a fork's child: it starts no holder thread */

static void life_fork_child(void)
{
	forked = true;
}

/* At load: a fork before the first queue must count too. */
__attribute__((constructor)) static void life_hooks(void)
{
	pthread_atfork(NULL, NULL, life_fork_child);
}

static void tbl_open(void)
{
	tbl = hw_shm_table("life", LIFE_VERSION, sizeof(struct life_entry) * LIFE_ENTRIES);
}

const _Atomic int *hw_life_at(uint32_t idx)
{
	pthread_once(&tbl_once, tbl_open);
	if (tbl == NULL || idx >= LIFE_ENTRIES)
		return NULL;
	return (const _Atomic int *)(const void *)&tbl[idx].m;
}

/* A free entry, else one of a dead process, taken; HW_LIFE_NONE when none. */
static uint32_t life_claim(uint64_t me)
{
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < LIFE_ENTRIES; i++) {
			uint64_t w = atomic_load_explicit(&tbl[i].owner, memory_order_relaxed);

			if (pass == 0 ? w != 0 : (w == 0 || w == me || !hw_ids_word_dead(w)))
				continue;
			if (atomic_compare_exchange_strong(&tbl[i].owner, &w, me))
				return i;
		}
	return HW_LIFE_NONE;
}

static int life_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

struct life_start {
	struct life_entry *e;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state; /* 0 starting, 1 holding, -1 failed */
};

/* The holder: takes the mutex and waits for the process to end; signals stay the program's. */
static void *life_main(void *arg)
{
	struct life_start *s = arg;
	int rc = pthread_mutex_lock(&s->e->m);

	s->e->tid = (uint32_t)syscall(SYS_gettid);
	pthread_mutex_lock(&s->lock);
	s->state = rc == 0 ? 1 : -1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (rc != 0)
		return NULL;
	for (;;)
		pause();
	return NULL;
}

static int life_start_holder(struct life_entry *e)
{
	struct life_start s = { .e = e, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	int rc;

	sigfillset(&all);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 << 10);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &a, life_main, &s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&s.lock);
	while (s.state == 0)
		pthread_cond_wait(&s.cond, &s.lock);
	pthread_mutex_unlock(&s.lock);
	return s.state == 1 ? 0 : EIO;
}

/*
 * A fork's child of a threaded parent should not start threads before it
 * execs (a sanitizer's allocator, say, can be left locked by a parent
 * thread, and the new thread's start-up blocks on it): the calling thread,
 * usually the one that forked, holds the entry itself. Should it end
 * before the process, peers see the process gone.
 */
static int life_hold_here(struct life_entry *e)
{
	int rc = pthread_mutex_lock(&e->m);

	e->tid = (uint32_t)syscall(SYS_gettid);
	return rc;
}

/* Under self_lock: this process's entry, made once (again in a forked child, which has no holder). */
static void life_setup(void)
{
	uint32_t idx;

	if (self_pid == getpid())
		return;
	self_pid = getpid();
	self_idx = HW_LIFE_NONE;
	pthread_once(&tbl_once, tbl_open);
	if (tbl == NULL)
		return;
	idx = life_claim(hw_ids_self_word());
	if (idx == HW_LIFE_NONE) {
		BASE_WARN("the life table is full: peers learn of this process's death only by its pid");
		return;
	}
	tbl[idx].tid = 0;
	if (life_mutex_init(&tbl[idx].m) != 0 || (forked ? life_hold_here(&tbl[idx]) : life_start_holder(&tbl[idx])) != 0) {
		atomic_store(&tbl[idx].owner, 0);
		return;
	}
	self_idx = idx;
	self_tid = tbl[idx].tid;
}

void hw_life_self(uint32_t *idx, uint32_t *tid)
{
	pthread_mutex_lock(&self_lock);
	life_setup();
	*idx = self_idx;
	*tid = self_tid;
	pthread_mutex_unlock(&self_lock);
}
