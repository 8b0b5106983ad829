/*
 * bench_flexio — the FlexIO runtime's costs beside what they are made of,
 * in one run:
 *
 *   process_call   flexio_process_call of an RPC that returns at once: the
 *                  round trip host -> hart -> host (median, p99)
 *   futex rt       the same hand-over between two threads with FUTEX_WAKE /
 *                  FUTEX_WAIT, both ways: the floor of a sleeping hart
 *   line rt        a cache line passed back and forth between two spinning
 *                  threads: the physical floor of a polling hart
 *   function call  the RPC's device function called directly (no hart)
 *   cmdq tasks     command-queue tasks per second on 1, 2 and 4 workers,
 *                  against direct calls of the same function per second
 *
 * Usage: bench_flexio [--quick]
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "bench_rt.h"

extern struct flexio_app *bench_flexio_dev;
flexio_func_t bf_nop, bf_task, bf_tasks_done;

static __attribute__((noinline)) uint64_t direct_nop(uint64_t a)
{
	__asm__ volatile("" : : : "memory");
	return a + 1;
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	uint32_t n = quick ? 2000 : 50000, ntasks = quick ? 20000 : 400000;
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct flexio_process *p = NULL;
	uint64_t *lat = calloc(n, sizeof(*lat)), r = 0, t0, sink = 0;
	struct stats rpc, fx, ln;
	double call_ns, direct_rate;

	ibv_free_device_list(l);
	if (ctx == NULL || lat == NULL || flexio_process_create(ctx, bench_flexio_dev, NULL, &p) != FLEXIO_STATUS_SUCCESS) {
		fprintf(stderr, "bench_flexio: no device or no process\n");
		return 1;
	}
	for (uint32_t i = 0; i < 200; i++) /* warm: the hart exists, the image is faulted in */
		flexio_process_call(p, bf_nop, &r, (uint64_t)i);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t1 = now_ns();

		if (flexio_process_call(p, bf_nop, &r, (uint64_t)i) != FLEXIO_STATUS_SUCCESS || r != i + 1u) {
			fprintf(stderr, "bench_flexio: call %u failed\n", i);
			return 1;
		}
		lat[i] = now_ns() - t1;
	}
	rpc = summarize(lat, n);
	fx = futex_rt(n, lat);
	ln = line_rt(n, lat);
	t0 = now_ns();
	for (uint32_t i = 0; i < 10u * n; i++)
		sink += direct_nop(i);
	call_ns = (double)(now_ns() - t0) / (10.0 * n);
	direct_rate = 1e9 / call_ns;
	printf("FlexIO RPC round trip (us): median, p99; against a futex and a cache-line round trip between two threads\n");
	printf("%-16s %10s %10s\n", "", "median", "p99");
	printf("%-16s %10.2f %10.2f\n", "process_call", rpc.median_us, rpc.p99_us);
	printf("%-16s %10.2f %10.2f\n", "futex rt", fx.median_us, fx.p99_us);
	printf("%-16s %10.2f %10.2f\n", "line rt", ln.median_us, ln.p99_us);
	printf("%-16s %10.4f\n", "function call", call_ns / 1e3);
	printf("process_call / futex rt: %.2fx, / line rt: %.2fx (median)\n\n", rpc.median_us / fx.median_us,
	       rpc.median_us / ln.median_us);

	printf("Command-queue tasks per second (%u tasks), against direct calls of a function per second\n", ntasks);
	printf("%-8s %14s %12s\n", "workers", "tasks/s", "of direct");
	for (int w = 1; w <= 4; w *= 2) {
		struct flexio_cmdq_attr a = { .workers = w, .batch_size = 64, .state = FLEXIO_CMDQ_STATE_PENDING };
		struct flexio_cmdq *q = NULL;
		uint64_t done = 0;
		double secs;

		flexio_process_call(p, bf_tasks_done, &r, (uint64_t)1);
		if (flexio_cmdq_create(p, &a, &q) != FLEXIO_STATUS_SUCCESS)
			return 1;
		for (uint32_t i = 0; i < ntasks; i++)
			flexio_cmdq_task_add(q, bf_task, i);
		t0 = now_ns();
		flexio_cmdq_state_running(q);
		while (!flexio_cmdq_is_empty(q))
			usleep(100);
		secs = (double)(now_ns() - t0) / 1e9;
		flexio_process_call(p, bf_tasks_done, &done, (uint64_t)0);
		flexio_cmdq_destroy(q);
		if (done != ntasks) {
			fprintf(stderr, "bench_flexio: %llu of %u tasks ran\n", (unsigned long long)done, ntasks);
			return 1;
		}
		printf("%-8d %14.0f %11.4fx\n", w, ntasks / secs, ntasks / secs / direct_rate);
	}
	flexio_process_destroy(p);
	ibv_close_device(ctx);
	free(lat);
	return sink == 0; /* keeps the direct calls */
}
