/*
 * bench_sync — cross-process sync-event ping-pong latency, side by side with
 * the physical limit: a raw cache-line ping-pong between two processes through
 * shared memory. Both pairs run on the same two CPUs, polling.
 *
 * The host process exports a sync event and re-executes itself as the DPU
 * side (SOFTDPU_SIDE=dpu), which creates the event from the export; the host
 * sets odd values, the DPU answers with the next even one.
 *
 * Usage: bench_sync [--quick]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <doca_dev.h>
#include <doca_sync_event.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int other_cpu(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
}

/* ---- raw shared-memory ping-pong (the limit) ---- */

static double raw_pingpong(long rounds)
{
	_Atomic uint64_t *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double t0, t;
	pid_t pid;

	if (line == MAP_FAILED)
		return -1;
	atomic_store(line, 0);
	pid = fork();
	if (pid == 0) {
		pin(other_cpu());
		for (long k = 0; k < rounds; k++) {
			while (atomic_load_explicit(line, memory_order_acquire) != (uint64_t)(2 * k + 1))
				;
			atomic_store_explicit(line, (uint64_t)(2 * k + 2), memory_order_release);
		}
		_exit(0);
	}
	pin(0);
	t0 = now();
	for (long k = 0; k < rounds; k++) {
		atomic_store_explicit(line, (uint64_t)(2 * k + 1), memory_order_release);
		while (atomic_load_explicit(line, memory_order_acquire) != (uint64_t)(2 * k + 2))
			;
	}
	t = now() - t0;
	waitpid(pid, NULL, 0);
	munmap((void *)line, 4096);
	return t / (double)rounds * 1e6;
}

/* ---- DOCA sync event ping-pong ---- */

static struct doca_dev *open_first(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0)
		return NULL;
	doca_dev_open(list[0], &dev);
	doca_devinfo_list_destroy(list);
	return dev;
}

static int role_dpu(const char *hex, long rounds)
{
	uint8_t blob[4096];
	size_t n = 0;
	unsigned v;
	struct doca_dev *dev = open_first();
	struct doca_sync_event *ev;

	while (n < sizeof(blob) && sscanf(hex + 2 * n, "%2x", &v) == 1)
		blob[n++] = (uint8_t)v;
	if (dev == NULL || doca_sync_event_create_from_export(dev, blob, n, &ev) != DOCA_SUCCESS ||
	    doca_sync_event_start(ev) != DOCA_SUCCESS)
		return 1;
	pin(other_cpu());
	for (long k = 0; k < rounds; k++) {
		if (doca_sync_event_wait_gt(ev, (uint64_t)(2 * k), UINT64_MAX) != DOCA_SUCCESS ||
		    doca_sync_event_update_set(ev, (uint64_t)(2 * k + 2)) != DOCA_SUCCESS)
			return 1;
	}
	doca_sync_event_stop(ev);
	doca_sync_event_destroy(ev);
	doca_dev_close(dev);
	return 0;
}

static double doca_pingpong(long rounds)
{
	struct doca_dev *dev = open_first();
	struct doca_sync_event *ev;
	const uint8_t *blob;
	size_t len;
	char *cmd;
	FILE *child;
	double t0, t;

	if (dev == NULL || doca_sync_event_create(&ev) != DOCA_SUCCESS ||
	    doca_sync_event_publisher_add_location_cpu(ev, dev) != DOCA_SUCCESS ||
	    doca_sync_event_subscriber_add_location_dpu(ev) != DOCA_SUCCESS || doca_sync_event_start(ev) != DOCA_SUCCESS ||
	    doca_sync_event_export_to_dpu(ev, dev, &blob, &len) != DOCA_SUCCESS)
		return -1;
	cmd = malloc(2 * len + 128);
	snprintf(cmd, 128, "SOFTDPU_SIDE=dpu /proc/%d/exe dpu %ld ", (int)getpid(), rounds);
	for (size_t i = 0; i < len; i++)
		sprintf(cmd + strlen(cmd), "%02x", blob[i]);
	child = popen(cmd, "r");
	free(cmd);
	if (child == NULL)
		return -1;
	pin(0);
	t0 = now();
	for (long k = 0; k < rounds; k++) {
		if (doca_sync_event_update_set(ev, (uint64_t)(2 * k + 1)) != DOCA_SUCCESS ||
		    doca_sync_event_wait_gt(ev, (uint64_t)(2 * k + 1), UINT64_MAX) != DOCA_SUCCESS) {
			pclose(child);
			return -1;
		}
	}
	t = now() - t0;
	pclose(child);
	doca_sync_event_stop(ev);
	doca_sync_event_destroy(ev);
	doca_dev_close(dev);
	return t / (double)rounds * 1e6;
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	long rounds = quick ? 2000 : 200000;
	double best_doca = 1e9, best_raw = 1e9;

	if (argc > 3 && strcmp(argv[1], "dpu") == 0)
		return role_dpu(argv[3], strtol(argv[2], NULL, 10));
	/* Alternate the two so both see the machine in the same state; keep the best run of each. */
	for (int i = 0; i < (quick ? 1 : 3); i++) {
		double d = doca_pingpong(rounds), r = raw_pingpong(rounds);

		if (d > 0 && d < best_doca)
			best_doca = d;
		if (r > 0 && r < best_raw)
			best_raw = r;
	}
	printf("== bench_sync: cross-process ping-pong round trip, polling, CPUs 0 and %d, %ld rounds ==\n",
	       other_cpu(), rounds);
	printf("%-52s %10s %10s\n", "path", "us/round", "vs raw");
	printf("%-52s %10.3f %9.2fx\n", "DOCA sync event: update_set + wait_gt, two processes", best_doca,
	       best_doca / best_raw);
	printf("%-52s %10.3f %9.2fx\n", "raw shared cache line: store + spin, two processes", best_raw, 1.0);
	printf("best of %d runs each, alternating\n", quick ? 1 : 3);
	return best_doca < 1e9 ? 0 : 1;
}
