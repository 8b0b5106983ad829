/*
 * dpa_host_mem — host memory registered with a DPA context: a verbs MR on
 * the context's PD (so its keys are the device's, and RDMA of any QP of the
 * device reaches it under the access given), and the record device code
 * names it by (dpa_abi.h): DPA threads are host threads, so device code
 * loads and stores the host addresses themselves once checked.
 */
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "dpa_int.h"

struct doca_dpa_mem {
	struct doca_dpa *dpa;
	struct ibv_mr *mr;
	struct dpa_dev_mem dev;
};

#define DPA_ACCESS_ALL                                                                                                 \
	(DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC)

static int dpa_ibv_access(unsigned int access)
{
	int a = 0;

	if (access & DOCA_ACCESS_LOCAL_READ_WRITE)
		a |= IBV_ACCESS_LOCAL_WRITE;
	if (access & DOCA_ACCESS_RDMA_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	if (access & DOCA_ACCESS_RDMA_WRITE)
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (access & DOCA_ACCESS_RDMA_ATOMIC)
		a |= IBV_ACCESS_REMOTE_ATOMIC;
	return a;
}

doca_error_t doca_dpa_mem_host_register(struct doca_dpa *dpa, void *addr, size_t length, unsigned int access,
					struct doca_dpa_mem **mem, unsigned int flags)
{
	struct doca_dpa_mem *m;

	if (dpa == NULL || addr == NULL || length == 0 || mem == NULL || flags != 0 || (access & ~DPA_ACCESS_ALL) != 0) {
		BASE_ERR("invalid argument (dpa, addr, length 0, mem, access beyond local and RDMA, flags must be 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Verbs' rule: remote write and atomics need local write. */
	if ((access & (DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC)) && !(access & DOCA_ACCESS_LOCAL_READ_WRITE)) {
		BASE_ERR("RDMA write or atomic access needs DOCA_ACCESS_LOCAL_READ_WRITE");
		return DOCA_ERROR_INVALID_VALUE;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	m->mr = ibv_reg_mr(dpa->pd, addr, length, dpa_ibv_access(access));
	if (m->mr == NULL) {
		BASE_ERR("cannot register [%p, +%zu) with the device", addr, length);
		free(m);
		return DOCA_ERROR_DRIVER;
	}
	m->dpa = dpa;
	m->dev = (struct dpa_dev_mem){ .magic = DPA_MEM_MAGIC, .addr = (uint64_t)(uintptr_t)addr, .len = length,
				       .access = access, .lkey = m->mr->lkey, .rkey = m->mr->rkey };
	*mem = m;
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_mem_unregister(struct doca_dpa_mem *mem)
{
	if (mem == NULL) {
		BASE_ERR("mem must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ibv_dereg_mr(mem->mr) != 0) {
		BASE_ERR("the device refused to deregister the memory");
		return DOCA_ERROR_DRIVER;
	}
	mem->dev.magic = 0;
	free(mem);
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_mem_dev_export(struct doca_dpa_mem *mem, doca_dpa_dev_mem_t *handle)
{
	if (mem == NULL || handle == NULL) {
		BASE_ERR("mem and handle must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*handle = (doca_dpa_dev_mem_t)(uintptr_t)&mem->dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_mem_rkey_get(struct doca_dpa_mem *mem, uint32_t *rkey)
{
	if (mem == NULL || rkey == NULL) {
		BASE_ERR("mem and rkey must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*rkey = mem->dev.rkey;
	return DOCA_SUCCESS;
}
