/*
 * DOCA RDMA write sample pair, in the structure of DOCA 2.2's
 * rdma_write_requester / rdma_write_responder: each side allocates its
 * resources (device, mmap, work queue, RDMA context), the descriptors travel
 * as files, the requester writes a string into the responder's memory with
 * one DOCA_RDMA_JOB_WRITE and the responder prints what arrived.
 *
 * Files in the directory given as the first argument: responder.desc and
 * mmap.desc (the responder's connection descriptor and memory export),
 * requester.desc (the requester's), connected.flag (the responder is
 * connected: its QP takes requests), written.flag (the requester's job is
 * done). Where the vendor's samples wait for the user to copy the files and
 * press enter, these wait for the file to appear (at most 30 s).
 */
#ifndef RDMA_COMMON_H_
#define RDMA_COMMON_H_

#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_rdma.h>

#define MEM_RANGE_LEN 4096
#define WORKQ_DEPTH 10
#define INVENTORY_NUM_INITIAL_ELEMENTS 16
#define PATH_LEN 512

struct rdma_resources {
	struct doca_dev *doca_device;
	struct doca_workq *workq;
	struct doca_mmap *mmap;
	struct doca_mmap *remote_mmap;
	char *mmap_memrange;
	struct doca_rdma *rdma;
	struct doca_ctx *rdma_ctx;
	const void *rdma_conn_details;
	size_t rdma_conn_details_size;
};

/* Opens the first device and sets up mmap, RDMA context (started) and work queue. */
doca_error_t allocate_rdma_resources(uint32_t mmap_permissions, uint32_t rdma_permissions,
				     struct rdma_resources *resources);
doca_error_t destroy_rdma_resources(struct rdma_resources *resources);

/* dir/name into path. */
void rdma_path(char *path, const char *dir, const char *name);
doca_error_t write_file(const char *path, const void *data, size_t len);
/* Waits for the file (bounded), then reads it whole into a malloc'd buffer. */
doca_error_t read_file(const char *path, void **data, size_t *len);

#endif /* RDMA_COMMON_H_ */
