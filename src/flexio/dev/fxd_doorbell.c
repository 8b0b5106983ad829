/*
 * fxd_doorbell — the doorbells device code rings through its thread's
 * outbox: an SQ's producer index and a CQ's arm. On the card they are
 * writes to the outbox page; here each is one call into the host's device
 * model (fx_dev_abi.h), which checks the outbox and that the queue is the
 * process's, and runs the queue at once.
 */
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_queue_access.h>

#include "fxd_int.h"

flexio_dev_status_t flexio_dev_qp_sq_ring_db(struct flexio_dev_thread_ctx *dtctx, uint16_t pi, uint32_t qnum)
{
	const struct fx_dev_ops *h = fxd_host();
	struct fxd_ctx *c = (struct fxd_ctx *)(void *)dtctx;

	if (c == NULL || h == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	return h->sq_ring_db(h->proc, c->outbox_id, qnum, pi) == 0 ? FLEXIO_DEV_STATUS_SUCCESS
								     : FLEXIO_DEV_STATUS_FAILED;
}

flexio_dev_status_t flexio_dev_cq_arm(struct flexio_dev_thread_ctx *dtctx, uint32_t ci, uint32_t qnum)
{
	const struct fx_dev_ops *h = fxd_host();
	struct fxd_ctx *c = (struct fxd_ctx *)(void *)dtctx;

	if (c == NULL || h == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	return h->cq_arm(h->proc, c->outbox_id, qnum, ci) == 0 ? FLEXIO_DEV_STATUS_SUCCESS : FLEXIO_DEV_STATUS_FAILED;
}
