/*
 * vb_cq_resize — ibv_resize_cq, as mlx5 does it: the ring becomes cqe + 1
 * rounded up to a power of two (the program sees one less), the unpolled
 * CQEs stay, in order, and a size the ring already has changes nothing.
 * The device moves the CQ to a new block as a fence for every producer
 * (hw_cq_resize); the consumer's view (ring, record, overrun flag) is read
 * again under the CQ's lock, and an armed watch of its event moves to the
 * new bell. Errors: cqe below 1 or above the device's max_cqe, or fewer than
 * the CQEs not yet polled, EINVAL (as the kernel and firmware answer); a CQ
 * whose ring a parent domain's allocators gave, EOPNOTSUPP.
 */
#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_cq.h"
#include "vb_export.h"
#include "vb_int.h"

/*
 * The watch of the CQ's event as it was armed (n == 0: none), disarmed. Its
 * count is read first: a disarm empties the set, and only an arm, the
 * consumer's, writes the count (the engine firing it only unlinks it, and
 * then there is nothing to move).
 */
static struct hw_watch_set vb_cq_watch_take(struct vb_cq *cq)
{
	struct hw_watch_set set = {.n = 0};
	uint32_t seen = cq->waiter.set.seen[0];

	if (cq->cqx.channel != NULL && hw_waiter_disarm(&cq->waiter)) {
		set.n = 1;
		set.seen[0] = seen;
	}
	return set;
}

/* The same watch again, on the bell the CQ has now; the count it had seen carries over. */
static void vb_cq_watch_restore(struct vb_cq *cq, const struct hw_watch_set *was)
{
	struct hw_watch_set set = {.n = 0};
	uint64_t one = 1;

	if (was->n == 0)
		return;
	if (hw_watch_set_add(&set, hw_cq_event_bell(cq->hw), was->seen[0], NULL, NULL) == HW_OK &&
	    hw_waiter_arm(&cq->waiter, &set) == HW_OK)
		return;
	/* No watch to be had: an event now, as vb_req_notify_cq does (the program polls and finds what there is). */
	atomic_fetch_add_explicit(&cq->waiter.fired, 1, memory_order_release);
	if (write(cq->cqx.channel->fd, &one, sizeof(one)) != sizeof(one))
		BASE_ERR("CQ %u: the event of its resize could not be signalled", cq->cqn);
}

VB_EXPORT int vb_resize_cq(struct ibv_cq *ibcq, int cqe);
VB_EXPORT int vb_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct vb_cq *cq = vb_cq_of(ibcq);
	struct hw_watch_set was;
	uint32_t log_size;
	enum hw_status st;

	if (ibcq == NULL || vb_ctx_checked(ibcq->context) == NULL || cqe < 1 || cqe > VB_MAX_CQE)
		return EINVAL;
	/* A ring in a parent domain's allocators' memory would need a new one from them: not done. */
	if (cq->qmem.buf != NULL)
		return EOPNOTSUPP;
	log_size = vb_log2_up((uint32_t)cqe + 1);
	pthread_spin_lock(&cq->lock);
	if (log_size == cq->log_size) {
		pthread_spin_unlock(&cq->lock);
		return 0;
	}
	pthread_spin_unlock(&cq->lock);
	was = vb_cq_watch_take(cq);
	pthread_spin_lock(&cq->lock);
	st = hw_cq_resize(cq->hw, log_size, cq->cons_index, (uint32_t)cqe);
	if (st == HW_OK) {
		cq->ring = (uint8_t *)hw_cq_ring(cq->hw);
		cq->dbrec = hw_cq_dbrec(cq->hw);
		cq->overrun = hw_cq_overrun_flag(cq->hw);
		cq->log_size = log_size;
		cq->cqx.cqe = (int)((1u << log_size) - 1);
	}
	pthread_spin_unlock(&cq->lock);
	vb_cq_watch_restore(cq, &was);
	return st == HW_OK ? 0 : st == HW_ERR_NOMEM ? ENOMEM : EINVAL;
}
VB_SYMVER(vb_resize_cq, ibv_resize_cq, "IBVERBS_1.1");
