/*
 * flexio_window — a FlexIO host program in the SDK's style: host memory
 * registered under the process's PD, a window onto it, and an RPC whose
 * device code reaches that memory through the window: it adds one to each
 * byte and writes a checksum of the result back. The host checks both, then
 * that the window refuses a write aimed outside the registered memory.
 *
 * Build: as a vendor sample, with the SDK's build_flexio_device.sh for the
 * device side and pkg-config libflexio libibverbs libmlx5 (meson.build).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

extern struct flexio_app *flexio_window_device;
flexio_func_t flexio_window_transform;

#define N_BYTES 4096
#define WINDOW_COPY_REFUSED 4 /* the device code's WINDOW_COPY */

/* The host memory the device reaches: the bytes, then their checksum. */
struct host_area {
	uint8_t data[N_BYTES];
	uint64_t checksum;
};

/* The device code's checksum, over the bytes as they should be after it ran. */
static uint64_t expected_checksum(const uint8_t *before, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + (uint8_t)(before[i] + 1);
	return sum;
}

static flexio_status transform(struct flexio_process *process, struct flexio_window *window, struct ibv_mr *mr,
			       void *data, void *sum, uint64_t *ret)
{
	return flexio_process_call(process, flexio_window_transform, ret, flexio_window_get_id(window), mr->lkey,
				   (uint64_t)(uintptr_t)data, (uint32_t)N_BYTES, (uint64_t)(uintptr_t)sum);
}

static int run(struct ibv_context *ctx)
{
	struct host_area *area = calloc(1, sizeof(*area));
	uint8_t *before = malloc(N_BYTES);
	struct flexio_process *process = NULL;
	struct flexio_window *window = NULL;
	struct ibv_mr *mr = NULL;
	uint64_t want, ret = 0, outside = 0;
	int rc = 1;

	if (area == NULL || before == NULL ||
	    flexio_process_create(ctx, flexio_window_device, NULL, &process) != FLEXIO_STATUS_SUCCESS)
		goto out;
	for (int i = 0; i < N_BYTES; i++)
		area->data[i] = (uint8_t)(i * 7 + 3);
	memcpy(before, area->data, N_BYTES);
	want = expected_checksum(before, N_BYTES);

	/* The window works in the process's PD: device code reaches memory registered there. */
	mr = ibv_reg_mr(flexio_process_get_pd(process), area, sizeof(*area), IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL ||
	    flexio_window_create(process, flexio_process_get_pd(process), &window) != FLEXIO_STATUS_SUCCESS)
		goto out;
	if (transform(process, window, mr, area->data, &area->checksum, &ret) != FLEXIO_STATUS_SUCCESS)
		goto out;
	printf("flexio_window: device code returned %llu, checksum %#llx (expected %#llx)\n", (unsigned long long)ret,
	       (unsigned long long)area->checksum, (unsigned long long)want);
	if (ret != 0 || area->checksum != want)
		goto out;
	for (int i = 0; i < N_BYTES; i++) {
		if (area->data[i] != (uint8_t)(before[i] + 1)) {
			printf("flexio_window: byte %d is %u, expected %u\n", i, area->data[i],
			       (uint8_t)(before[i] + 1));
			goto out;
		}
	}
	printf("flexio_window: %d bytes incremented in host memory by device code\n", N_BYTES);

	/* A checksum aimed at memory no MR covers: the window refuses it and the word stays as it was. */
	if (transform(process, window, mr, area->data, &outside, &ret) != FLEXIO_STATUS_SUCCESS)
		goto out;
	printf("flexio_window: a write outside the registered memory was %s\n",
	       ret == WINDOW_COPY_REFUSED && outside == 0 ? "refused" : "NOT refused");
	if (ret == WINDOW_COPY_REFUSED && outside == 0 && flexio_err_status(process) == 0)
		rc = 0;
out:
	if (window != NULL)
		flexio_window_destroy(window);
	if (mr != NULL)
		ibv_dereg_mr(mr); /* before the process, whose PD it is on */
	if (process != NULL) {
		if (flexio_err_status(process) != 0)
			flexio_err_display(process);
		flexio_process_destroy(process);
	}
	free(before);
	free(area);
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
		fprintf(stderr, "flexio_window: no device\n");
		return 1;
	}
	rc = run(ctx);
	ibv_close_device(ctx);
	printf("flexio_window: %s\n", rc == 0 ? "OK" : "FAILED");
	return rc;
}
