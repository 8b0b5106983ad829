/*
 * Requester of the DOCA RDMA write sample: reads the responder's connection
 * and memory descriptors, writes its own, connects, imports the responder's
 * memory and writes a string into it with one DOCA_RDMA_JOB_WRITE, its
 * result read through the event's result.ptr as DOCA 2.2's samples do.
 *
 * Usage: rdma_write_requester <dir> [string]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>

#include "rdma_common.h"

#define DEFAULT_STRING "Hi DOCA RDMA!"

static doca_error_t connect_and_import(const char *dir, struct rdma_resources *r)
{
	char path[PATH_LEN];
	void *peer, *mdesc;
	size_t peer_len, mdesc_len;
	doca_error_t ret;

	rdma_path(path, dir, "responder.desc");
	ret = read_file(path, &peer, &peer_len);
	if (ret != DOCA_SUCCESS)
		return ret;
	rdma_path(path, dir, "mmap.desc");
	ret = read_file(path, &mdesc, &mdesc_len);
	if (ret != DOCA_SUCCESS) {
		free(peer);
		return ret;
	}
	rdma_path(path, dir, "requester.desc");
	ret = write_file(path, r->rdma_conn_details, r->rdma_conn_details_size);
	if (ret == DOCA_SUCCESS)
		ret = doca_rdma_connect(r->rdma, peer, peer_len);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_create_from_export(NULL, mdesc, mdesc_len, r->doca_device, &r->remote_mmap);
	free(peer);
	free(mdesc);
	if (ret != DOCA_SUCCESS)
		return ret;
	rdma_path(path, dir, "connected.flag");
	ret = read_file(path, &peer, &peer_len);
	if (ret == DOCA_SUCCESS)
		free(peer);
	return ret;
}

/* One write job: submitted, then retrieved with its result written through event.result.ptr. */
static doca_error_t write_job(struct rdma_resources *r, struct doca_buf *dst, struct doca_buf *src)
{
	struct doca_rdma_job_read_write job = { 0 };
	struct doca_rdma_result rdma_result;
	struct doca_event event = { 0 };
	doca_error_t ret;

	job.base.ctx = r->rdma_ctx;
	job.base.type = DOCA_RDMA_JOB_WRITE;
	job.base.flags = DOCA_JOB_FLAGS_NONE;
	job.base.user_data.u64 = 1;
	job.dst_buff = dst;
	job.src_buff = src;
	ret = doca_workq_submit(r->workq, &job.base);
	if (ret != DOCA_SUCCESS)
		return ret;
	event.result.ptr = &rdma_result;
	do {
		ret = doca_workq_progress_retrieve(r->workq, &event, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
	} while (ret == DOCA_ERROR_AGAIN);
	if (ret != DOCA_SUCCESS)
		return ret == DOCA_ERROR_IO_FAILED ? rdma_result.result : ret;
	if (rdma_result.result != DOCA_SUCCESS)
		return rdma_result.result;
	return event.user_data.u64 == job.base.user_data.u64 ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED;
}

static doca_error_t write_string(struct rdma_resources *r, const char *s)
{
	struct doca_buf_inventory *inv;
	struct doca_buf *src = NULL, *dst = NULL;
	size_t len = strlen(s) + 1;
	void *remote;
	size_t remote_len;
	doca_error_t ret = doca_buf_inventory_create(NULL, INVENTORY_NUM_INITIAL_ELEMENTS, 0, &inv);

	if (ret != DOCA_SUCCESS)
		return ret;
	ret = doca_buf_inventory_start(inv);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_get_memrange(r->remote_mmap, &remote, &remote_len);
	if (ret == DOCA_SUCCESS && len > remote_len)
		ret = DOCA_ERROR_INVALID_VALUE;
	memcpy(r->mmap_memrange, s, len < MEM_RANGE_LEN ? len : MEM_RANGE_LEN);
	if (ret == DOCA_SUCCESS)
		ret = doca_buf_inventory_buf_by_data(inv, r->mmap, r->mmap_memrange, len, &src);
	if (ret == DOCA_SUCCESS)
		ret = doca_buf_inventory_buf_by_addr(inv, r->remote_mmap, remote, len, &dst);
	if (ret == DOCA_SUCCESS)
		ret = write_job(r, dst, src);
	if (dst != NULL)
		doca_buf_refcount_rm(dst, NULL);
	if (src != NULL)
		doca_buf_refcount_rm(src, NULL);
	doca_buf_inventory_stop(inv);
	doca_buf_inventory_destroy(inv);
	return ret;
}

int main(int argc, char **argv)
{
	const char *s = argc > 2 ? argv[2] : DEFAULT_STRING;
	struct rdma_resources r;
	char path[PATH_LEN];
	doca_error_t ret, tmp;

	if (argc < 2 || argc > 3 || strlen(s) >= MEM_RANGE_LEN) {
		fprintf(stderr, "usage: %s <dir> [string]\n", argv[0]);
		return 2;
	}
	ret = allocate_rdma_resources(DOCA_ACCESS_LOCAL_READ_WRITE, DOCA_ACCESS_LOCAL_READ_WRITE, &r);
	if (ret != DOCA_SUCCESS)
		return 1;
	ret = connect_and_import(argv[1], &r);
	if (ret == DOCA_SUCCESS)
		ret = write_string(&r, s);
	if (ret == DOCA_SUCCESS) {
		printf("Written to responder: \"%s\"\n", s);
		rdma_path(path, argv[1], "written.flag");
		ret = write_file(path, "1", 1);
	} else {
		fprintf(stderr, "RDMA write failed: %s\n", doca_get_error_string(ret));
	}
	tmp = destroy_rdma_resources(&r);
	if (ret == DOCA_SUCCESS)
		ret = tmp;
	return ret == DOCA_SUCCESS ? 0 : 1;
}
