/*
 * fx_print — printing from device code: flexio_dev_print / puts put bytes
 * into a ring in the process's device memory; in synchronous mode a host
 * thread writes them to the chosen FILE as they come, in asynchronous mode
 * they wait for flexio_print_flush. A full ring: the synchronous writer is
 * waited for (up to a second), the asynchronous ring drops what does not fit
 * and the next flush says how much was lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fx_int.h"

#define FX_PRINT_MIN 2048u
#define FX_PRINT_WAIT_MS 1000u

/* Under pr->mu: writes what the ring holds to the FILE. */
static void fx_print_drain_locked(struct fx_print *pr)
{
	while (pr->tail != pr->head) {
		uint64_t at = pr->tail & (pr->size - 1);
		uint64_t n = pr->head - pr->tail;

		if (n > pr->size - at)
			n = pr->size - at;
		fwrite(pr->ring + at, 1, n, pr->out);
		pr->tail += n;
	}
	if (pr->lost != 0) {
		fprintf(pr->out, "\n[flexio print: %llu bytes lost, the print buffer was full]\n",
			(unsigned long long)pr->lost);
		pr->lost = 0;
	}
	fflush(pr->out);
}

static void *fx_print_main(void *arg)
{
	struct fx_print *pr = arg;

	pthread_mutex_lock(&pr->mu);
	while (!pr->stop) {
		if (pr->tail == pr->head)
			pthread_cond_wait(&pr->cv, &pr->mu);
		fx_print_drain_locked(pr);
		pthread_cond_broadcast(&pr->cv); /* room again for a waiting writer */
	}
	fx_print_drain_locked(pr);
	pthread_mutex_unlock(&pr->mu);
	return NULL;
}

/* The wait for room is bounded on the monotonic clock: the wall clock may jump. */
static void fx_print_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

size_t fx_print_put(void *proc, const char *buf, size_t len)
{
	struct flexio_process *p = proc;
	struct fx_print *pr = __atomic_load_n(&p->print, __ATOMIC_ACQUIRE);
	struct timespec dl;
	size_t done = 0;

	if (pr == NULL)
		return 0; /* no print_init: the device's output goes nowhere, as on the card */
	clock_gettime(CLOCK_MONOTONIC, &dl); /* the clock of pr->cv: the bound is elapsed time */
	dl.tv_sec += FX_PRINT_WAIT_MS / 1000;
	pthread_mutex_lock(&pr->mu);
	while (done < len && !pr->stop) {
		uint64_t room = pr->size - (pr->head - pr->tail);

		if (room == 0 && !pr->async && !pr->stop &&
		    pthread_cond_timedwait(&pr->cv, &pr->mu, &dl) != ETIMEDOUT)
			continue;
		if (room == 0)
			break;
		for (; done < len && room > 0; done++, room--)
			pr->ring[pr->head++ & (pr->size - 1)] = (uint8_t)buf[done];
	}
	pr->lost += len - done;
	if (!pr->async)
		pthread_cond_broadcast(&pr->cv);
	pthread_mutex_unlock(&pr->mu);
	return done;
}

flexio_status flexio_print_init(struct flexio_process *process, struct flexio_uar *flexio_uar, size_t data_bsize,
				FILE *out, int is_async, pthread_t *ppthread)
{
	struct fx_print *pr;

	if (process == NULL || flexio_uar == NULL || out == NULL || data_bsize < FX_PRINT_MIN ||
	    (data_bsize & (data_bsize - 1)) != 0) {
		BASE_ERR("invalid argument (process, UAR, FILE; the size a power of two of at least %u bytes)",
			 FX_PRINT_MIN);
		return FLEXIO_STATUS_FAILED;
	}
	if (process->print != NULL) {
		BASE_ERR("printing of this process is set up already");
		return FLEXIO_STATUS_FAILED;
	}
	pr = calloc(1, sizeof(*pr));
	if (pr == NULL || flexio_buf_dev_alloc(process, data_bsize, &pr->daddr) != FLEXIO_STATUS_SUCCESS) {
		free(pr);
		return FLEXIO_STATUS_FAILED;
	}
	pr->ring = (uint8_t *)(uintptr_t)pr->daddr;
	pr->size = data_bsize;
	pr->out = out;
	pr->async = is_async != 0;
	pthread_mutex_init(&pr->mu, NULL);
	fx_print_cond_init(&pr->cv);
	if (!pr->async) {
		if (pthread_create(&pr->thread, NULL, fx_print_main, pr) != 0) {
			flexio_buf_dev_free(process, pr->daddr);
			free(pr);
			return FLEXIO_STATUS_FAILED;
		}
		pr->thread_up = true;
		if (ppthread != NULL)
			*ppthread = pr->thread;
	}
	__atomic_store_n(&process->print, pr, __ATOMIC_RELEASE);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_print_flush(struct flexio_process *process)
{
	struct fx_print *pr = process != NULL ? process->print : NULL;

	if (pr == NULL)
		return FLEXIO_STATUS_FAILED;
	if (!pr->async)
		return FLEXIO_STATUS_SUCCESS; /* the writer thread keeps up by itself */
	pthread_mutex_lock(&pr->mu);
	fx_print_drain_locked(pr);
	pthread_mutex_unlock(&pr->mu);
	return FLEXIO_STATUS_SUCCESS;
}

/* Ends the writer and writes out what is left; later device prints are dropped. */
static void fx_print_stop(struct fx_print *pr)
{
	pthread_mutex_lock(&pr->mu);
	pr->stop = true;
	pthread_cond_broadcast(&pr->cv);
	if (pr->async)
		fx_print_drain_locked(pr); /* what was printed is not lost at the end */
	pthread_mutex_unlock(&pr->mu);
	if (pr->thread_up)
		pthread_join(pr->thread, NULL);
	pr->thread_up = false;
}

/* Process destroy, no hart left: every print channel the process had is freed. */
void fx_print_fini(struct flexio_process *p)
{
	struct fx_print *pr = p->print;

	if (pr != NULL) {
		fx_print_stop(pr);
		pr->next = p->print_retired;
		p->print_retired = pr;
		p->print = NULL;
	}
	while ((pr = p->print_retired) != NULL) {
		p->print_retired = pr->next;
		pthread_mutex_destroy(&pr->mu);
		pthread_cond_destroy(&pr->cv);
		flexio_buf_dev_free(p, pr->daddr);
		free(pr);
	}
}

/*
 * Device code may be printing meanwhile: the channel stops and is unhooked,
 * but its memory stays until the process goes, so a hart that took it a
 * moment before finds it stopped, not freed.
 */
flexio_status flexio_print_destroy(struct flexio_process *process)
{
	struct fx_print *pr = process != NULL ? __atomic_load_n(&process->print, __ATOMIC_ACQUIRE) : NULL;

	if (pr == NULL)
		return FLEXIO_STATUS_FAILED;
	fx_print_stop(pr);
	__atomic_store_n(&process->print, NULL, __ATOMIC_RELEASE);
	pthread_mutex_lock(&process->lock);
	pr->next = process->print_retired;
	process->print_retired = pr;
	pthread_mutex_unlock(&process->lock);
	return FLEXIO_STATUS_SUCCESS;
}
