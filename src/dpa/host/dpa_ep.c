/*
 * dpa_ep — workers and endpoints: an endpoint is an RC QP of the device on
 * the context's PD, its worker's CQ shared by the worker's endpoints, so an
 * endpoint reaches any RC QP of the device (another context's endpoint, a
 * host program's QP) by its number and GID, in this process or another.
 * Device code posts RDMA WRITEs through the record doca_dpa_ep_dev_export
 * hands out (dpa_abi.h): DPA threads are host threads, so the post is a
 * call of a host function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dpa_int.h"

#define DPA_EP_DEPTH 256
#define DPA_CQ_DEPTH 4096

struct doca_dpa_worker {
	struct doca_dpa *dpa;
	struct ibv_cq *cq;
	pthread_mutex_t mu; /* polling the CQ */
	uint32_t eps;
};

struct doca_dpa_ep_addr {
	uint32_t qpn;
	uint8_t gid[16];
};

struct doca_dpa_ep {
	struct doca_dpa_worker *w;
	struct ibv_qp *qp;
	pthread_mutex_t mu; /* posting */
	_Atomic uint64_t posted, done;
	_Atomic int failed;
	struct dpa_dev_ep dev;
	uint64_t scratch; /* the old value of a signal's atomic */
	struct ibv_mr *scratch_mr;
};

static int dpa_ibv_access(unsigned int access)
{
	return ((access & DOCA_ACCESS_LOCAL_READ_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       ((access & DOCA_ACCESS_RDMA_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
	       ((access & DOCA_ACCESS_RDMA_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       ((access & DOCA_ACCESS_RDMA_ATOMIC) ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

doca_error_t doca_dpa_worker_create(struct doca_dpa *dpa, struct doca_dpa_worker **worker, unsigned int flags)
{
	struct doca_dpa_worker *w;

	if (dpa == NULL || worker == NULL || flags != 0) {
		BASE_ERR("invalid argument (dpa, worker, flags must be 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return DOCA_ERROR_NO_MEMORY;
	w->cq = ibv_create_cq(dpa->pd->context, DPA_CQ_DEPTH, NULL, NULL, 0);
	if (w->cq == NULL) {
		free(w);
		return DOCA_ERROR_DRIVER;
	}
	pthread_mutex_init(&w->mu, NULL);
	w->dpa = dpa;
	*worker = w;
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_worker_destroy(struct doca_dpa_worker *worker)
{
	if (worker == NULL) {
		BASE_ERR("worker must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (worker->eps != 0) {
		BASE_ERR("the worker has %u endpoints: destroy them first", worker->eps);
		return DOCA_ERROR_IN_USE;
	}
	ibv_destroy_cq(worker->cq);
	pthread_mutex_destroy(&worker->mu);
	free(worker);
	return DOCA_SUCCESS;
}

/* Takes the worker's completions, counting each for its endpoint; 0, or -1 when none was there. */
static int dpa_worker_poll(struct doca_dpa_worker *w)
{
	struct ibv_wc wc[16];
	int n;

	pthread_mutex_lock(&w->mu);
	n = ibv_poll_cq(w->cq, 16, wc);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < n; i++) {
		struct doca_dpa_ep *ep = (struct doca_dpa_ep *)(uintptr_t)wc[i].wr_id;

		if (wc[i].status != IBV_WC_SUCCESS) {
			BASE_ERR("endpoint operation failed: %s", ibv_wc_status_str(wc[i].status));
			atomic_store(&ep->failed, 1);
		}
		atomic_fetch_add(&ep->done, 1);
	}
	return n > 0 ? 0 : -1;
}

static int dpa_ep_sync(void *arg)
{
	struct doca_dpa_ep *ep = arg;

	while (atomic_load(&ep->done) < atomic_load(&ep->posted))
		if (dpa_worker_poll(ep->w) != 0)
			sched_yield();
	return atomic_load(&ep->failed) ? -1 : 0;
}

/* Posts one signalled work request, waiting while the send queue is full. */
static int dpa_ep_post(struct doca_dpa_ep *ep, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc;

	wr->wr_id = (uint64_t)(uintptr_t)ep;
	wr->send_flags |= IBV_SEND_SIGNALED;
	while (atomic_load(&ep->posted) - atomic_load(&ep->done) >= DPA_EP_DEPTH) /* the send queue is full */
		if (dpa_worker_poll(ep->w) != 0)
			sched_yield();
	pthread_mutex_lock(&ep->mu);
	rc = ibv_post_send(ep->qp, wr, &bad);
	if (rc == 0)
		atomic_fetch_add(&ep->posted, 1);
	pthread_mutex_unlock(&ep->mu);
	return rc == 0 && !atomic_load(&ep->failed) ? 0 : -1;
}

static int dpa_ep_put(void *arg, uint64_t laddr, uint64_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = (uint32_t)len, .lkey = lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };

	return dpa_ep_post(arg, &wr);
}

/* Posts an 8-byte atomic on the peer's word and waits for it: the word's old value. -1 when it failed. */
static int dpa_ep_atomic(struct doca_dpa_ep *ep, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
			 uint64_t swap, uint64_t *old)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&ep->scratch, .length = sizeof(ep->scratch),
			       .lkey = ep->scratch_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op };

	wr.wr.atomic = (__typeof__(wr.wr.atomic)){ .remote_addr = raddr, .compare_add = cmp_add, .swap = swap,
						   .rkey = rkey };
	if (dpa_ep_post(ep, &wr) != 0 || dpa_ep_sync(ep) != 0)
		return -1;
	*old = __atomic_load_n(&ep->scratch, __ATOMIC_ACQUIRE);
	return 0;
}

/*
 * The signal of a put, after it on the same QP (so after its data): the
 * counter increased by a FETCH_ADD, or set by COMPARE_SWAP until the value
 * compared is the one there. Atomics, not a WRITE, so a host polling the
 * counter reads it whole, as a card's PCIe write of 8 aligned bytes lands
 * (the engine copies a WRITE's bytes as data). The old values land in the
 * endpoint's scratch word; the call waits for them.
 */
static int dpa_ep_signal(void *arg, uint64_t raddr, uint32_t rkey, uint64_t value, bool add)
{
	struct doca_dpa_ep *ep = arg;
	uint64_t seen = 0, old;

	if (add)
		return dpa_ep_atomic(ep, IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, rkey, value, 0, &old);
	for (;;) {
		if (dpa_ep_atomic(ep, IBV_WR_ATOMIC_CMP_AND_SWP, raddr, rkey, seen, value, &old) != 0)
			return -1;
		if (old == seen)
			return 0;
		seen = old;
	}
}

doca_error_t doca_dpa_ep_create(struct doca_dpa_worker *worker, unsigned int access_flags, struct doca_dpa_ep **ep)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = DPA_EP_DEPTH, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct doca_dpa_ep *e;

	if (worker == NULL || ep == NULL) {
		BASE_ERR("worker and ep must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return DOCA_ERROR_NO_MEMORY;
	qa.send_cq = qa.recv_cq = worker->cq;
	a.qp_access_flags = (unsigned int)dpa_ibv_access(access_flags);
	e->qp = ibv_create_qp(worker->dpa->pd, &qa);
	e->scratch_mr = ibv_reg_mr(worker->dpa->pd, &e->scratch, sizeof(e->scratch), IBV_ACCESS_LOCAL_WRITE);
	if (e->qp == NULL || e->scratch_mr == NULL ||
	    ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
		BASE_ERR("cannot create the endpoint's QP");
		if (e->qp != NULL)
			ibv_destroy_qp(e->qp);
		if (e->scratch_mr != NULL)
			ibv_dereg_mr(e->scratch_mr);
		free(e);
		return DOCA_ERROR_DRIVER;
	}
	pthread_mutex_init(&e->mu, NULL);
	e->w = worker;
	e->dev = (struct dpa_dev_ep){ .magic = DPA_EP_MAGIC, .ep = e, .put = dpa_ep_put, .sync = dpa_ep_sync,
				    .signal = dpa_ep_signal };
	worker->eps++;
	*ep = e;
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_ep_destroy(struct doca_dpa_ep *ep)
{
	if (ep == NULL) {
		BASE_ERR("ep must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ibv_destroy_qp(ep->qp) != 0)
		return DOCA_ERROR_DRIVER;
	ibv_dereg_mr(ep->scratch_mr);
	ep->w->eps--;
	ep->dev.magic = 0;
	pthread_mutex_destroy(&ep->mu);
	free(ep);
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_ep_addr_get(struct doca_dpa_ep *ep, struct doca_dpa_ep_addr **addr, size_t *addr_length)
{
	struct doca_dpa_ep_addr *a;
	union ibv_gid gid;

	if (ep == NULL || addr == NULL || addr_length == NULL) {
		BASE_ERR("invalid argument (ep, addr, addr_length)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ibv_query_gid(ep->qp->context, 1, 0, &gid) != 0)
		return DOCA_ERROR_DRIVER;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return DOCA_ERROR_NO_MEMORY;
	a->qpn = ep->qp->qp_num;
	memcpy(a->gid, gid.raw, sizeof(a->gid));
	*addr = a;
	*addr_length = sizeof(*a);
	return DOCA_SUCCESS;
}

/*
 * NULL is nothing to free, as free's: DOCA 2.2's dpa_endpoint_copy sample
 * frees a pointer it never set and counts a refusal as its failure.
 */
doca_error_t doca_dpa_ep_addr_free(struct doca_dpa_ep_addr *addr)
{
	free(addr);
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_ep_connect(struct doca_dpa_ep *ep, struct doca_dpa_ep_addr *addr)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .max_dest_rd_atomic = 16,
				 .min_rnr_timer = 12, .ah_attr = { .is_global = 1, .port_num = 1 } };
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 16 };

	if (ep == NULL || addr == NULL) {
		BASE_ERR("ep and addr must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	a.dest_qp_num = addr->qpn;
	memcpy(a.ah_attr.grh.dgid.raw, addr->gid, sizeof(addr->gid));
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0 ||
	    ibv_modify_qp(ep->qp, &r, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
		BASE_ERR("cannot connect the endpoint (connected already, or an address of no QP)");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_ep_dev_export(struct doca_dpa_ep *ep, doca_dpa_dev_ep_t *handle)
{
	if (ep == NULL || handle == NULL) {
		BASE_ERR("ep and handle must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*handle = (doca_dpa_dev_ep_t)(uintptr_t)&ep->dev;
	return DOCA_SUCCESS;
}
