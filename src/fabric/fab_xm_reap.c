/*
 * fab_xm_reap — keys deregistered on a thread of their own (fab_xm_reap.h).
 */
#include "fab_xm_reap.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base_log.h"
#include "hw_mem.h"

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t more;
	bool up;
	uint32_t *keys; /* waiting to be deregistered */
	uint32_t n, cap;
} rp = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };

static void *rp_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rp.lock);
	for (;;) {
		uint32_t key;

		while (rp.n == 0)
			pthread_cond_wait(&rp.more, &rp.lock);
		key = rp.keys[--rp.n];
		pthread_mutex_unlock(&rp.lock);
		(void)hw_mkey_dereg(key); /* waits out the executions in progress, holding nothing */
		pthread_mutex_lock(&rp.lock);
	}
	return NULL;
}

static void rp_start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, rp_thread, NULL) != 0) {
		BASE_WARN("no thread for the verbs service's deregistrations: they run on the service's own");
		return;
	}
	pthread_detach(t);
	rp.up = true;
}

/* Under rp.lock: room for one more key. */
static bool rp_room_locked(void)
{
	uint32_t cap = rp.cap != 0 ? 2 * rp.cap : 64;
	uint32_t *k;

	if (rp.n < rp.cap)
		return true;
	k = realloc(rp.keys, cap * sizeof(*k));
	if (k == NULL)
		return false;
	rp.keys = k;
	rp.cap = cap;
	return true;
}

void fab_xm_key_drop(uint32_t key)
{
	bool queued = false;

	pthread_once(&rp.once, rp_start);
	pthread_mutex_lock(&rp.lock);
	if (rp.up && rp_room_locked()) {
		rp.keys[rp.n++] = key;
		queued = true;
		pthread_cond_signal(&rp.more);
	}
	pthread_mutex_unlock(&rp.lock);
	if (!queued)
		(void)hw_mkey_dereg(key);
}
