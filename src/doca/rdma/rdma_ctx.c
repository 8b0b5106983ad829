/*
 * rdma_ctx — the DOCA RDMA context: creation, properties and capabilities.
 */
#include <stdlib.h>
#include <string.h>

#include "dc_dev.h"
#include "dc_log.h"
#include "hw_gid.h"
#include "hw_qp.h"
#include "rdma_priv.h"

#define RDMA_SEND_CHAIN 3  /* ctrl + 3 data segments: one basic block */
#define RDMA_RW_CHAIN 2	   /* ctrl + remote address + 2 data segments */
#define RDMA_RIGHTS_MASK (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | \
			  DOCA_ACCESS_RDMA_ATOMIC)

static doca_error_t rdma_dev_check(struct doca_ctx *ctx, struct doca_dev *dev)
{
	(void)ctx;
	(void)dev;
	return DOCA_SUCCESS; /* every function of the device has an RDMA port */
}

static doca_error_t rdma_start(struct doca_ctx *ctx)
{
	return rdma_queues_open(rdma_of(ctx));
}

static void rdma_stop(struct doca_ctx *ctx)
{
	rdma_queues_close(rdma_of(ctx));
}

const struct dc_ctx_ops rdma_ops = {
	.name = "RDMA",
	.max_devs = 1,
	.event_driven = true,
	.dev_check = rdma_dev_check,
	.job_check = rdma_job_check,
	.job_exec = rdma_job_exec,
	.job_bell = rdma_job_bell,
	.job_issue = rdma_job_issue,
	.job_take = rdma_job_take,
	.start = rdma_start,
	.stop = rdma_stop,
};

doca_error_t doca_rdma_create(struct doca_rdma **rdma)
{
	struct doca_rdma *r;

	if (rdma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (dc_ctx_init(&r->ctx, &rdma_ops) != DOCA_SUCCESS) {
		free(r);
		return DOCA_ERROR_INITIALIZATION;
	}
	r->sq_size = RDMA_DEF_QUEUE;
	r->rq_size = RDMA_DEF_QUEUE;
	r->permissions = DOCA_ACCESS_LOCAL_READ_WRITE;
	r->recv_chain = 1;
	r->mtu = DOCA_MTU_SIZE_1K_BYTES;
	r->grh = true;
	*rdma = r;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_destroy(struct doca_rdma *rdma)
{
	doca_error_t ret;

	if (rdma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (rdma->ctx.started)
		return DOCA_ERROR_BAD_STATE;
	ret = dc_ctx_fini(&rdma->ctx);
	if (ret != DOCA_SUCCESS)
		return ret == DOCA_ERROR_IN_USE ? DOCA_ERROR_BAD_STATE : ret;
	free(rdma);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma)
{
	return rdma != NULL ? &rdma->ctx : NULL;
}

/* ---- capabilities ---- */

doca_error_t doca_rdma_job_get_supported(const struct doca_devinfo *devinfo, enum doca_rdma_job_types job_type)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (job_type < DOCA_RDMA_JOB_RECV || job_type > DOCA_RDMA_JOB_ATOMIC_FETCH_ADD)
		return DOCA_ERROR_NOT_SUPPORTED;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size)
{
	if (devinfo == NULL || max_recv_queue_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_recv_queue_size = RDMA_MAX_QUEUE;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size)
{
	if (devinfo == NULL || max_send_queue_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_send_queue_size = RDMA_MAX_QUEUE;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size)
{
	if (devinfo == NULL || max_message_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_message_size = HW_QP_MAX_MSG;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_max_buf_chain_len(const struct doca_devinfo *devinfo, enum doca_rdma_job_types job_type,
					     enum doca_rdma_transport_type transport_type, uint32_t *max_buf_chain_len)
{
	if (devinfo == NULL || max_buf_chain_len == NULL || transport_type != DOCA_RDMA_TRANSPORT_RC)
		return DOCA_ERROR_INVALID_VALUE;
	switch (job_type) {
	case DOCA_RDMA_JOB_RECV:
		*max_buf_chain_len = RDMA_MAX_RECV_CHAIN;
		return DOCA_SUCCESS;
	case DOCA_RDMA_JOB_SEND:
	case DOCA_RDMA_JOB_SEND_IMM:
		*max_buf_chain_len = RDMA_SEND_CHAIN;
		return DOCA_SUCCESS;
	case DOCA_RDMA_JOB_READ:
	case DOCA_RDMA_JOB_WRITE:
	case DOCA_RDMA_JOB_WRITE_IMM:
		*max_buf_chain_len = RDMA_RW_CHAIN;
		return DOCA_SUCCESS;
	case DOCA_RDMA_JOB_ATOMIC_CMP_SWP:
	case DOCA_RDMA_JOB_ATOMIC_FETCH_ADD:
		*max_buf_chain_len = 1;
		return DOCA_SUCCESS;
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
}

doca_error_t doca_rdma_get_gid_table_size(struct doca_devinfo *devinfo, uint32_t *gid_table_size)
{
	if (devinfo == NULL || gid_table_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*gid_table_size = hw_gid_tbl_len(dc_devinfo_fn(devinfo));
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_gid(struct doca_devinfo *devinfo, uint32_t start_index, uint32_t num_entries,
			       struct doca_rdma_gid *gid_array)
{
	const struct hw_function *f;

	if (devinfo == NULL || gid_array == NULL || num_entries == 0)
		return DOCA_ERROR_INVALID_VALUE;
	f = dc_devinfo_fn(devinfo);
	if (start_index >= hw_gid_tbl_len(f) || num_entries > hw_gid_tbl_len(f) - start_index)
		return DOCA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < num_entries; i++) {
		struct hw_gid_entry e;

		/* An empty entry of the table reads as zeros, as the card's. */
		if (hw_gid_get(f, start_index + i, &e))
			memcpy(gid_array[i].raw, e.gid, sizeof(gid_array[i].raw));
		else
			memset(gid_array[i].raw, 0, sizeof(gid_array[i].raw));
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_transport_type_supported(const struct doca_devinfo *devinfo,
						    enum doca_rdma_transport_type transport_type)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return transport_type == DOCA_RDMA_TRANSPORT_RC ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

/* ---- properties ---- */

/* Setters: before start. */
static doca_error_t settable(const struct doca_rdma *r)
{
	if (r == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return r->ctx.started ? DOCA_ERROR_BAD_STATE : DOCA_SUCCESS;
}

/* Getters: once a device was added. */
static doca_error_t gettable(const struct doca_rdma *r, const void *out)
{
	if (r == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return r->ctx.num_devs == 0 ? DOCA_ERROR_BAD_STATE : DOCA_SUCCESS;
}

static uint32_t pow2_up(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (send_queue_size == 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (send_queue_size > RDMA_MAX_QUEUE)
		return DOCA_ERROR_NOT_SUPPORTED;
	rdma->sq_size = pow2_up(send_queue_size);
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (recv_queue_size == 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (recv_queue_size > RDMA_MAX_QUEUE)
		return DOCA_ERROR_NOT_SUPPORTED;
	rdma->rq_size = pow2_up(recv_queue_size);
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (transport_type == DOCA_RDMA_TRANSPORT_DC) {
		DC_ERR("DOCA RDMA: the DC transport is not supported");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return transport_type == DOCA_RDMA_TRANSPORT_RC ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (mtu == DOCA_MTU_SIZE_RAW_ETHERNET)
		return DOCA_ERROR_NOT_SUPPORTED;
	if ((unsigned int)mtu > DOCA_MTU_SIZE_4K_BYTES)
		return DOCA_ERROR_INVALID_VALUE;
	rdma->mtu = mtu;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions)
{
	if (rdma == NULL || (permissions & ~(uint32_t)RDMA_RIGHTS_MASK) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (rdma->ctx.started || rdma->ctx.num_devs == 0)
		return DOCA_ERROR_BAD_STATE;
	rdma->permissions = permissions;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, bool grh_enabled)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (rdma->ctx.num_devs == 0)
		return DOCA_ERROR_BAD_STATE;
	/* An Ethernet port addresses every peer by GID. */
	if (!grh_enabled && dc_dev_fn(rdma->ctx.devs[0])->link == HW_LINK_ETH)
		return DOCA_ERROR_NOT_SUPPORTED;
	rdma->grh = grh_enabled;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (rdma->ctx.num_devs == 0)
		return DOCA_ERROR_BAD_STATE;
	if (gid_index >= hw_gid_tbl_len(dc_dev_fn(rdma->ctx.devs[0])))
		return DOCA_ERROR_INVALID_VALUE;
	rdma->gid_index = gid_index;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_recv_buf_chain_len(struct doca_rdma *rdma, uint32_t recv_buf_chain_len)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (recv_buf_chain_len == 0 || recv_buf_chain_len > RDMA_MAX_RECV_CHAIN)
		return DOCA_ERROR_INVALID_VALUE;
	/* Whole receive WQEs: a power of two of data segments, one of them the end mark when short. */
	rdma->recv_chain = recv_buf_chain_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl)
{
	doca_error_t ret = settable(rdma);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (sl > 15)
		return DOCA_ERROR_INVALID_VALUE;
	rdma->sl = sl;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size)
{
	doca_error_t ret = gettable(rdma, send_queue_size);

	if (ret == DOCA_SUCCESS)
		*send_queue_size = rdma->sq_size;
	return ret;
}

doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size)
{
	doca_error_t ret = gettable(rdma, recv_queue_size);

	if (ret == DOCA_SUCCESS)
		*recv_queue_size = rdma->rq_size;
	return ret;
}

doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type)
{
	doca_error_t ret = gettable(rdma, transport_type);

	if (ret == DOCA_SUCCESS)
		*transport_type = DOCA_RDMA_TRANSPORT_RC;
	return ret;
}

doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu)
{
	doca_error_t ret = gettable(rdma, mtu);

	if (ret == DOCA_SUCCESS)
		*mtu = rdma->mtu;
	return ret;
}

doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions)
{
	doca_error_t ret = gettable(rdma, permissions);

	if (ret == DOCA_SUCCESS)
		*permissions = rdma->permissions;
	return ret;
}

doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, bool *grh_enabled)
{
	doca_error_t ret = gettable(rdma, grh_enabled);

	if (ret == DOCA_SUCCESS)
		*grh_enabled = rdma->grh;
	return ret;
}

doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index)
{
	doca_error_t ret = gettable(rdma, gid_index);

	if (ret == DOCA_SUCCESS)
		*gid_index = rdma->gid_index;
	return ret;
}

doca_error_t doca_rdma_get_recv_buf_chain_len(const struct doca_rdma *rdma, uint32_t *recv_buf_chain_len)
{
	doca_error_t ret = gettable(rdma, recv_buf_chain_len);

	if (ret == DOCA_SUCCESS)
		*recv_buf_chain_len = rdma->recv_chain;
	return ret;
}

doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl)
{
	doca_error_t ret = gettable(rdma, sl);

	if (ret == DOCA_SUCCESS)
		*sl = rdma->sl;
	return ret;
}

doca_error_t doca_rdma_get_state(const struct doca_rdma *rdma, enum doca_rdma_state *state)
{
	doca_error_t ret = gettable(rdma, state);

	if (ret != DOCA_SUCCESS)
		return ret;
	*state = rdma->state;
	/* A QP a peer or an error moved to ERR. */
	if (rdma->qp != NULL && rdma->state == DOCA_RDMA_STATE_CONNECTED && hw_qp_state(rdma->qp) == HW_QP_ERR)
		*state = DOCA_RDMA_STATE_ERROR;
	return DOCA_SUCCESS;
}

uint32_t rdma_rights(uint32_t permissions)
{
	return ((permissions & DOCA_ACCESS_RDMA_READ) ? HW_ACCESS_REMOTE_READ : 0) |
	       ((permissions & DOCA_ACCESS_RDMA_WRITE) ? HW_ACCESS_REMOTE_WRITE : 0) |
	       ((permissions & DOCA_ACCESS_RDMA_ATOMIC) ? HW_ACCESS_REMOTE_ATOMIC : 0);
}
