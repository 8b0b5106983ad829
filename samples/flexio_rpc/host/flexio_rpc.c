/*
 * flexio_rpc — a FlexIO host program in the SDK's style: a process of the
 * device app, printing from the DPA to stdout, an RPC over a vector copied
 * into device memory, then 1000 command-queue tasks on 8 DPA threads adding
 * into device memory, and every result checked on the host.
 *
 * Build: as a vendor sample, with the SDK's build_flexio_device.sh for the
 * device side and pkg-config libflexio libibverbs libmlx5 (meson.build).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, in a strict C11 build */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

extern struct flexio_app *flexio_rpc_device;
flexio_func_t flexio_rpc_sum, flexio_rpc_set_counters, flexio_rpc_task;

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

#define N_WORDS 64
#define N_TASKS 1000

static int run(struct ibv_context *ctx)
{
	struct flexio_cmdq_attr qa = { .workers = 8, .batch_size = 32, .state = FLEXIO_CMDQ_STATE_PENDING };
	struct mlx5dv_devx_uar *devx_uar = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct flexio_process *process = NULL;
	struct flexio_uar *uar = NULL;
	struct flexio_cmdq *cmdq = NULL;
	flexio_uintptr_t vec = 0, counters = 0;
	uint64_t words[N_WORDS], want = 0, ret = 0, total = 0, got[8];
	int rc = 1;

	if (devx_uar == NULL || flexio_process_create(ctx, flexio_rpc_device, NULL, &process) != FLEXIO_STATUS_SUCCESS)
		goto out;
	if (flexio_uar_create(process, devx_uar, &uar) != FLEXIO_STATUS_SUCCESS ||
	    flexio_print_init(process, uar, 4096, stdout, 0, NULL) != FLEXIO_STATUS_SUCCESS)
		goto out;
	for (int i = 0; i < N_WORDS; i++) {
		words[i] = (uint64_t)i * i + 1;
		want += words[i];
	}
	if (flexio_copy_from_host(process, words, sizeof(words), &vec) != FLEXIO_STATUS_SUCCESS ||
	    flexio_process_call(process, flexio_rpc_sum, &ret, vec, (uint32_t)N_WORDS, (uint16_t)3) !=
		    FLEXIO_STATUS_SUCCESS)
		goto out;
	fflush(stdout);
	sleep_us(10000); /* the print thread writes the device's line */
	printf("flexio_rpc: RPC returned %llu (expected %llu)\n", (unsigned long long)ret,
	       (unsigned long long)(want * 3));
	if (ret != want * 3)
		goto out;

	if (flexio_buf_dev_alloc(process, sizeof(got), &counters) != FLEXIO_STATUS_SUCCESS ||
	    flexio_buf_dev_memset(process, 0, sizeof(got), counters) != FLEXIO_STATUS_SUCCESS ||
	    flexio_process_call(process, flexio_rpc_set_counters, &ret, counters) != FLEXIO_STATUS_SUCCESS ||
	    flexio_cmdq_create(process, &qa, &cmdq) != FLEXIO_STATUS_SUCCESS)
		goto out;
	for (uint64_t i = 1; i <= N_TASKS; i++)
		if (flexio_cmdq_task_add(cmdq, flexio_rpc_task, i) != FLEXIO_STATUS_SUCCESS)
			goto out;
	flexio_cmdq_state_running(cmdq);
	for (int i = 0; i < 10000 && !flexio_cmdq_is_empty(cmdq); i++)
		sleep_us(1000);
	/* Device memory is host memory here: read it back as the SDK's samples do through a window. */
	memcpy(got, (void *)(uintptr_t)counters, sizeof(got));
	for (int t = 0; t < 8; t++)
		total += got[t];
	printf("flexio_rpc: %d command-queue tasks on %d DPA threads added up to %llu (expected %llu)\n", N_TASKS,
	       qa.workers, (unsigned long long)total, (unsigned long long)N_TASKS * (N_TASKS + 1) / 2);
	if (total == (uint64_t)N_TASKS * (N_TASKS + 1) / 2 && flexio_err_status(process) == 0)
		rc = 0;
out:
	if (cmdq != NULL)
		flexio_cmdq_destroy(cmdq);
	if (process != NULL) {
		if (flexio_err_status(process) != 0)
			flexio_err_display(process);
		flexio_buf_dev_free(process, vec);
		flexio_buf_dev_free(process, counters);
		flexio_process_destroy(process); /* also ends printing */
	}
	if (uar != NULL)
		flexio_uar_destroy(uar);
	if (devx_uar != NULL)
		mlx5dv_devx_free_uar(devx_uar);
	return rc;
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	int rc;

	if (list != NULL)
		ibv_free_device_list(list);
	if (ctx == NULL) {
		fprintf(stderr, "flexio_rpc: no device\n");
		return 1;
	}
	rc = run(ctx);
	ibv_close_device(ctx);
	printf("flexio_rpc: %s\n", rc == 0 ? "OK" : "FAILED");
	return rc;
}
