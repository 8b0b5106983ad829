/*
 * Responder of the DOCA RDMA write sample: exports its connection and its
 * memory (RDMA write permitted) to files, connects to the requester's
 * descriptor and, once the requester says its write is done, prints the
 * string that arrived in its memory.
 *
 * Usage: rdma_write_responder <dir>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_common.h"

static doca_error_t exchange(const char *dir, struct rdma_resources *r)
{
	char path[PATH_LEN];
	const void *mmap_desc;
	size_t mmap_desc_len, peer_len;
	void *peer;
	doca_error_t ret;

	ret = doca_mmap_export_rdma(r->mmap, r->doca_device, &mmap_desc, &mmap_desc_len);
	if (ret != DOCA_SUCCESS)
		return ret;
	rdma_path(path, dir, "responder.desc");
	ret = write_file(path, r->rdma_conn_details, r->rdma_conn_details_size);
	rdma_path(path, dir, "mmap.desc");
	if (ret == DOCA_SUCCESS)
		ret = write_file(path, mmap_desc, mmap_desc_len);
	rdma_path(path, dir, "requester.desc");
	if (ret == DOCA_SUCCESS)
		ret = read_file(path, &peer, &peer_len);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = doca_rdma_connect(r->rdma, peer, peer_len);
	free(peer);
	/* The requester writes once this side takes requests (the vendor's sample: once the user pressed enter). */
	rdma_path(path, dir, "connected.flag");
	if (ret == DOCA_SUCCESS)
		ret = write_file(path, "1", 1);
	return ret;
}

int main(int argc, char **argv)
{
	struct rdma_resources r;
	char path[PATH_LEN];
	void *flag;
	size_t flag_len;
	doca_error_t ret, tmp;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <dir>\n", argv[0]);
		return 2;
	}
	ret = allocate_rdma_resources(DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_WRITE, DOCA_ACCESS_RDMA_WRITE, &r);
	if (ret != DOCA_SUCCESS)
		return 1;
	ret = exchange(argv[1], &r);
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "failed to exchange the descriptors: %s\n", doca_get_error_string(ret));
		goto destroy;
	}
	rdma_path(path, argv[1], "written.flag");
	ret = read_file(path, &flag, &flag_len);
	if (ret != DOCA_SUCCESS)
		goto destroy;
	free(flag);
	r.mmap_memrange[MEM_RANGE_LEN - 1] = '\0';
	printf("Requester wrote: \"%s\"\n", r.mmap_memrange);
destroy:
	tmp = destroy_rdma_resources(&r);
	if (ret == DOCA_SUCCESS)
		ret = tmp;
	return ret == DOCA_SUCCESS ? 0 : 1;
}
