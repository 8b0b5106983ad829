/* Resources and descriptor files of the DOCA RDMA write sample pair (rdma_common.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdma_common.h"

#define WAIT_FILE_MS 30000

static doca_error_t open_first_device(struct doca_dev **dev)
{
	struct doca_devinfo **list;
	uint32_t n;
	doca_error_t ret = doca_devinfo_list_create(&list, &n);

	if (ret != DOCA_SUCCESS)
		return ret;
	ret = n == 0 ? DOCA_ERROR_NOT_FOUND : doca_dev_open(list[0], dev);
	doca_devinfo_list_destroy(list);
	return ret;
}

static doca_error_t create_mmap(uint32_t permissions, struct rdma_resources *r)
{
	doca_error_t ret;

	r->mmap_memrange = calloc(1, MEM_RANGE_LEN);
	if (r->mmap_memrange == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ret = doca_mmap_create(NULL, &r->mmap);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_dev_add(r->mmap, r->doca_device);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_set_memrange(r->mmap, r->mmap_memrange, MEM_RANGE_LEN);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_set_permissions(r->mmap, permissions);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_start(r->mmap);
	return ret;
}

static doca_error_t create_rdma(uint32_t permissions, struct rdma_resources *r)
{
	doca_error_t ret = doca_rdma_create(&r->rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	r->rdma_ctx = doca_rdma_as_ctx(r->rdma);
	ret = doca_ctx_dev_add(r->rdma_ctx, r->doca_device);
	if (ret == DOCA_SUCCESS)
		ret = doca_rdma_set_permissions(r->rdma, permissions);
	if (ret == DOCA_SUCCESS)
		ret = doca_ctx_start(r->rdma_ctx);
	if (ret == DOCA_SUCCESS)
		ret = doca_workq_create(WORKQ_DEPTH, &r->workq);
	if (ret == DOCA_SUCCESS)
		ret = doca_ctx_workq_add(r->rdma_ctx, r->workq);
	if (ret == DOCA_SUCCESS)
		ret = doca_rdma_export(r->rdma, &r->rdma_conn_details, &r->rdma_conn_details_size);
	return ret;
}

doca_error_t allocate_rdma_resources(uint32_t mmap_permissions, uint32_t rdma_permissions,
				     struct rdma_resources *resources)
{
	doca_error_t ret;

	memset(resources, 0, sizeof(*resources));
	ret = open_first_device(&resources->doca_device);
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "no DOCA device: %s\n", doca_get_error_string(ret));
		return ret;
	}
	ret = create_mmap(mmap_permissions, resources);
	if (ret == DOCA_SUCCESS)
		ret = create_rdma(rdma_permissions, resources);
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "failed to allocate the RDMA resources: %s\n", doca_get_error_string(ret));
		destroy_rdma_resources(resources);
	}
	return ret;
}

doca_error_t destroy_rdma_resources(struct rdma_resources *r)
{
	doca_error_t ret = DOCA_SUCCESS;

	if (r->workq != NULL && (doca_ctx_workq_rm(r->rdma_ctx, r->workq) != DOCA_SUCCESS ||
				 doca_workq_destroy(r->workq) != DOCA_SUCCESS))
		ret = DOCA_ERROR_BAD_STATE;
	if (r->rdma != NULL) {
		doca_ctx_stop(r->rdma_ctx);
		doca_ctx_dev_rm(r->rdma_ctx, r->doca_device);
		if (doca_rdma_destroy(r->rdma) != DOCA_SUCCESS)
			ret = DOCA_ERROR_BAD_STATE;
	}
	if (r->remote_mmap != NULL && doca_mmap_destroy(r->remote_mmap) != DOCA_SUCCESS)
		ret = DOCA_ERROR_BAD_STATE;
	if (r->mmap != NULL && doca_mmap_destroy(r->mmap) != DOCA_SUCCESS)
		ret = DOCA_ERROR_BAD_STATE;
	if (r->doca_device != NULL && doca_dev_close(r->doca_device) != DOCA_SUCCESS)
		ret = DOCA_ERROR_BAD_STATE;
	free(r->mmap_memrange);
	memset(r, 0, sizeof(*r));
	return ret;
}

void rdma_path(char *path, const char *dir, const char *name)
{
	snprintf(path, PATH_LEN, "%s/%s", dir, name);
}

/* Written under a temporary name and renamed: the reader never sees half a file. */
doca_error_t write_file(const char *path, const void *data, size_t len)
{
	char tmp[PATH_LEN + 8];
	FILE *f;
	size_t done;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (f == NULL)
		return DOCA_ERROR_OPERATING_SYSTEM;
	done = fwrite(data, 1, len, f);
	if (fclose(f) != 0 || done != len || rename(tmp, path) != 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	return DOCA_SUCCESS;
}

static FILE *wait_open(const char *path)
{
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };

	for (int waited = 0; waited < WAIT_FILE_MS; waited += 10) {
		FILE *f = fopen(path, "rb");

		if (f != NULL || errno != ENOENT)
			return f;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

doca_error_t read_file(const char *path, void **data, size_t *len)
{
	FILE *f = wait_open(path);
	long n;
	void *buf;

	if (f == NULL) {
		fprintf(stderr, "no file %s\n", path);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (buf = malloc((size_t)n)) == NULL) {
		fclose(f);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	fclose(f);
	*data = buf;
	*len = (size_t)n;
	return DOCA_SUCCESS;
}
