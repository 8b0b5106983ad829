/*
 * Device side of the flexio_cmdq sample: a command-queue task that marks its
 * slot of a table in device memory with the DPA thread that ran it, and the
 * RPCs by which the host hands the table over and checks it afterwards.
 */
#include <libflexio-dev/flexio_dev.h>
#include <stdint.h>

#define MAX_THREADS 64 /* the host asks for at most this many workers */
#define TASK_WORK 2000  /* loop turns per task */

/*
 * Slot i holds, once task i has run, the number of runs in its high 32 bits
 * and the id of the thread that ran it in its low 32. One atomic add writes
 * both; a second run leaves a count of 2 or more (a carry out of the low
 * half only adds to the count), so "ran exactly once" is a count of 1.
 */
#define ONE_RUN (1ull << 32)

static uint64_t *table; /* device memory the host handed over (cmdq_set_table) */
static uint64_t table_len;

__dpa_rpc__ uint64_t cmdq_set_table(flexio_uintptr_t daddr, uint64_t n)
{
	table = (uint64_t *)daddr;
	table_len = n;
	return 0;
}

/* A command-queue task (a flexio_dev_rpc_handler_t): arg is the task's slot. */
__dpa_rpc__ uint64_t cmdq_task(uint64_t arg)
{
	struct flexio_dev_thread_ctx *dtctx;

	if (arg >= table_len || flexio_dev_get_thread_ctx(&dtctx) < 0)
		return 1; /* the slot stays 0, which cmdq_missed reports */
	/* Some work, as a real task has: an empty one is done before the other workers wake. */
	for (volatile int i = 0; i < TASK_WORK; i++)
		;
	__atomic_fetch_add(&table[arg], ONE_RUN + flexio_dev_get_thread_id(dtctx), __ATOMIC_RELAXED);
	return 0;
}

/* How many tasks did not run exactly once. */
__dpa_rpc__ uint64_t cmdq_missed(void)
{
	uint64_t missed = 0;

	for (uint64_t i = 0; i < table_len; i++)
		missed += __atomic_load_n(&table[i], __ATOMIC_RELAXED) >> 32 != 1;
	return missed;
}

/* How many distinct DPA threads ran the tasks; past MAX_THREADS it stops counting. */
__dpa_rpc__ uint64_t cmdq_threads(void)
{
	uint32_t seen[MAX_THREADS + 1];
	uint64_t n = 0;

	for (uint64_t i = 0; i < table_len && n <= MAX_THREADS; i++) {
		uint64_t v = __atomic_load_n(&table[i], __ATOMIC_RELAXED);
		uint64_t k = 0;

		if (v >> 32 != 1)
			continue; /* no single thread to name */
		while (k < n && seen[k] != (uint32_t)v)
			k++;
		if (k == n)
			seen[n++] = (uint32_t)v;
	}
	return n;
}
