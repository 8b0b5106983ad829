/*
 * vb_cq — completion queues and their completion events.
 *
 * A CQ is a shared hw CQ (its number device-wide, from hw_ids) whose ring and
 * doorbell record the library polls as an mlx5 driver does (vb_poll.c).
 * Events: a completion channel is one eventfd (a semaphore) that the
 * device's watch engine writes when an armed CQ on it fires its event bell,
 * so the channel's descriptor is readable while any has an event; the watch
 * counts its fires, and get_cq_event takes a count from the descriptor, then
 * the CQ whose fires it has not all taken. So a CQ costs no descriptor,
 * on a channel or not.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_ids.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_CQ_WC_FLAGS                                                                            \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_CVLAN | IBV_WC_EX_WITH_FLOW_TAG | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK | IBV_WC_EX_WITH_TM_INFO)
#define VB_CQ_COMP_MASK (IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)
/*
 * IGNORE_OVERRUN (a CQ that writes on over unpolled entries) is a flag mlx5
 * knows but a card without the capability refuses with EOPNOTSUPP: this CQ
 * always stops and latches its overrun. Bits mlx5 does not know are EINVAL.
 */
#define VB_CQ_FLAGS (IBV_CREATE_CQ_ATTR_SINGLE_THREADED)


static void vb_cq_channel_add(struct vb_cq *cq, struct ibv_comp_channel *ch)
{
	struct vb_channel *vch = vb_channel_of(ch);

	pthread_mutex_lock(&vch->lock);
	cq->ch_next = vch->cqs;
	vch->cqs = cq;
	pthread_mutex_unlock(&vch->lock);
	pthread_mutex_lock(&cq->ctx->lock);
	ch->refcnt++;
	pthread_mutex_unlock(&cq->ctx->lock);
}

static void vb_cq_channel_del(struct vb_cq *cq, struct ibv_comp_channel *ch)
{
	struct vb_channel *vch = vb_channel_of(ch);

	pthread_mutex_lock(&vch->lock);
	for (struct vb_cq **pp = &vch->cqs; *pp != NULL; pp = &(*pp)->ch_next)
		if (*pp == cq) {
			*pp = cq->ch_next;
			break;
		}
	pthread_mutex_unlock(&vch->lock);
	pthread_mutex_lock(&cq->ctx->lock);
	ch->refcnt--;
	pthread_mutex_unlock(&cq->ctx->lock);
}

static void vb_cq_free(struct vb_cq *cq)
{
	if (cq->hw != NULL)
		hw_cq_destroy(cq->hw);
	vb_async_forget(cq->ctx, ibv_cq_ex_to_cq(&cq->cqx)); /* after the fence: no event raised for it since */
	vb_qmem_put(&cq->qmem); /* the device is done with it: hw_cq_destroy was its fence */
	if (cq->cqn != 0)
		(void)hw_id_free(HW_ID_CQN, cq->cqn);
	pthread_spin_destroy(&cq->lock);
	pthread_mutex_destroy(&cq->cqx.mutex);
	pthread_cond_destroy(&cq->cqx.cond);
	free(cq);
}

/* 0 or an errno value: the mlx5 provider's checks of what a CQ is asked to be. */
static int vb_cq_attr_ok(struct vb_context *ctx, const struct ibv_cq_init_attr_ex *a)
{
	if (a->cqe == 0 || a->cqe > VB_MAX_CQE)
		return EINVAL;
	if (a->comp_vector >= (uint32_t)ctx->vctx.context.num_comp_vectors)
		return EINVAL;
	if (a->comp_mask & ~(uint32_t)VB_CQ_COMP_MASK)
		return EINVAL;
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (a->flags & ~(uint32_t)VB_CQ_FLAGS))
		return (a->flags & ~(uint32_t)(VB_CQ_FLAGS | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)) ? EINVAL : EOPNOTSUPP;
	if (a->wc_flags & ~(uint64_t)VB_CQ_WC_FLAGS)
		return EOPNOTSUPP; /* fields mlx5 has no value for here (tag matching, ...) */
	if (a->channel != NULL && a->channel->context != &ctx->vctx.context)
		return EINVAL;
	/* As mlx5: the PD a CQ may name is a parent domain of this context. */
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (a->parent_domain == NULL || a->parent_domain->context != &ctx->vctx.context ||
	     vb_pd_of(a->parent_domain)->parent_of == NULL))
		return EINVAL;
	return 0;
}

struct vb_cq *vb_cq_create(struct vb_context *ctx, struct ibv_cq_init_attr_ex *a, struct mlx5dv_cq_init_attr *dv)
{
	struct hw_cq_attr ha = {.shared = true, .timestamp = (a->wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
							    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) != 0};
	struct vb_cq *cq;
	enum hw_status st;
	uint32_t cqe_log = 6;
	int rc = vb_cq_attr_ok(ctx, a);

	if (rc == 0)
		rc = vb_dvcq_attr_ok(dv, &cqe_log);
	if (rc == 0)
		rc = vb_alloc_type_errno("MLX_CQ");
	if (rc != 0)
		goto err;
	rc = ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		goto err;
	if (a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		rc = vb_qmem_get(&cq->qmem, a->parent_domain, (size_t)1 << (cqe_log + vb_log2_up(a->cqe + 1)), VB_QMEM_ALIGN,
				 MLX5DV_RES_TYPE_CQ);
		if (rc != 0) {
			free(cq);
			goto err;
		}
		ha.ring = cq->qmem.buf;
		ha.dbrec = cq->qmem.dbrec;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&cq->cqx.mutex, NULL);
	pthread_cond_init(&cq->cqx.cond, NULL);
	cq->ctx = ctx;
	/* mlx5: the ring holds cqe + 1 rounded up to a power of two; the program sees one less. */
	cq->log_size = vb_log2_up(a->cqe + 1);
	st = hw_id_alloc(HW_ID_CQN, &cq->cqn);
	if (st != HW_OK) {
		rc = vb_id_errno(st);
		goto err_free;
	}
	ha.cqn = cq->cqn;
	ha.log_size = cq->log_size;
	ha.cqe_size = 1u << cqe_log;
	cq->cqe_log = cqe_log;
	st = hw_cq_create(&ha, &cq->hw);
	if (st != HW_OK) {
		cq->hw = NULL;
		rc = vb_qmem_errno(st);
		goto err_free;
	}
	cq->ring = (uint8_t *)hw_cq_ring(cq->hw);
	cq->dbrec = hw_cq_dbrec(cq->hw);
	cq->overrun = hw_cq_overrun_flag(cq->hw);
	/* Its events go to the channel's descriptor (none without a channel: nobody could read them). */
	hw_waiter_init(&cq->waiter, a->channel != NULL ? a->channel->fd : -1);
	if (a->channel != NULL)
		vb_cq_channel_add(cq, a->channel);
	cq->cqx.context = &ctx->vctx.context;
	cq->cqx.channel = a->channel;
	cq->cqx.cq_context = a->cq_context;
	cq->cqx.handle = cq->cqn;
	cq->cqx.cqe = (int)((1u << cq->log_size) - 1);
	cq->cqx.comp_mask = 0;
	cq->wc_flags = a->wc_flags;
	if (a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->parent = vb_pd_of(a->parent_domain);
		atomic_fetch_add(&cq->parent->users, 1);
	}
	vb_cq_ex_fill(cq);
	vb_named_cq_add(cq);
	return cq;

err_free:
	vb_cq_free(cq);
err:
	errno = rc;
	return NULL;
}

VB_EXPORT struct ibv_cq *vb_create_cq(struct ibv_context *context, int cqe, void *cq_context,
				      struct ibv_comp_channel *channel, int comp_vector);
VB_EXPORT struct ibv_cq *vb_create_cq(struct ibv_context *context, int cqe, void *cq_context,
				      struct ibv_comp_channel *channel, int comp_vector)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct ibv_cq_init_attr_ex a = {
		.cqe = (uint32_t)cqe,
		.cq_context = cq_context,
		.channel = channel,
		.comp_vector = (uint32_t)comp_vector,
	};
	struct vb_cq *cq;

	if (ctx == NULL || cqe <= 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = vb_cq_create(ctx, &a, NULL);
	return cq != NULL ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
}
VB_SYMVER(vb_create_cq, ibv_create_cq, "IBVERBS_1.1");

struct ibv_cq_ex *vb_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct vb_cq *cq;

	if (ctx == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	cq = vb_cq_create(ctx, attr, NULL);
	if (cq == NULL)
		return NULL;
	cq->ext = true;
	return &cq->cqx;
}

VB_EXPORT int vb_destroy_cq(struct ibv_cq *cq);
VB_EXPORT int vb_destroy_cq(struct ibv_cq *ibcq)
{
	struct vb_cq *cq = vb_cq_of(ibcq);
	struct ibv_comp_channel *ch;

	if (ibcq == NULL)
		return EINVAL;
	/* As the kernel: a CQ that queues still complete into stays. */
	if (vb_named_cq_del(cq) != 0)
		return EBUSY;
	(void)hw_waiter_disarm(&cq->waiter);
	ch = cq->cqx.channel;
	/* An event it fired and nobody took stays counted on the channel: get_cq_event passes over it. */
	if (ch != NULL)
		vb_cq_channel_del(cq, ch);
	if (cq->parent != NULL)
		atomic_fetch_sub(&cq->parent->users, 1);
	vb_cq_free(cq);
	return 0;
}
VB_SYMVER(vb_destroy_cq, ibv_destroy_cq, "IBVERBS_1.1");

/*
 * An arm word (sequence number, command, consumer index) to the device's
 * CQ, and the channel's watch of its event. The bell's sequence is read
 * first, so an event fired by this arm is never missed.
 */
static int vb_cq_arm_word(struct vb_cq *cq, uint32_t word)
{
	struct hw_watch_set set = {.n = 0};
	struct hw_bell *bell = hw_cq_event_bell(cq->hw);
	uint32_t seen = hw_bell_seq(bell);
	uint64_t one = 1;
	bool fired;

	if (hw_cq_arm_report(cq->hw, word, &fired) != HW_OK)
		return EINVAL;
	/*
	 * An arm again before the event of this one was taken (a poll between,
	 * no ibv_get_cq_event): the watch armed with it delivers that event; a
	 * new watch from the bell's sequence now would replace it and lose a
	 * ring the engine thread had not yet passed on.
	 */
	if (cq->cqx.channel == NULL || fired)
		return 0;
	if (hw_watch_set_add(&set, bell, seen, NULL, NULL) != HW_OK || hw_waiter_arm(&cq->waiter, &set) != HW_OK) {
		/* No watch to be had: the program gets an event at once and polls an empty CQ. */
		atomic_fetch_add_explicit(&cq->waiter.fired, 1, memory_order_release);
		if (write(cq->cqx.channel->fd, &one, sizeof(one)) != sizeof(one))
			return EIO;
	}
	return 0;
}

/* The consumer's arm, as mlx5's: the arm word to the record, then to the CQ's doorbell. */
int vb_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct vb_cq *cq = vb_cq_of(ibcq);
	uint32_t word;

	if (ibcq == NULL)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	word = (cq->arm_sn & HW_CQ_ARM_SN_MASK) << HW_CQ_ARM_SN_SHIFT |
	       (solicited_only ? HW_CQ_ARM_CMD_SOLICITED : HW_CQ_ARM_CMD_NEXT) | (cq->cons_index & HW_CQ_CI_MASK);
	pthread_spin_unlock(&cq->lock);
	__atomic_store_n(&cq->dbrec[HW_CQ_DBR_ARM], htobe32(word), __ATOMIC_RELEASE);
	return vb_cq_arm_word(cq, word);
}

/*
 * A program that arms a CQ itself (mlx5dv: the arm word to the record, then
 * the 8-byte doorbell, big-endian arm word << 32 | CQ number, to cq_uar's
 * CQ doorbell register): its store traps here, on its own thread, and arms
 * the context's CQ of that number as ibv_req_notify_cq would, its event
 * raised on the CQ's channel. The context's lock keeps the CQ from its
 * destroy meanwhile. Other stores to the page do nothing, as on a card.
 */
void vb_cq_uar_store(void *arg, uint32_t off, uint64_t val, bool has_val)
{
	struct vb_context *ctx = arg;
	uint64_t db = be64toh(val);
	uint32_t cqn = (uint32_t)db & HW_CQ_CI_MASK;
	struct vb_cq *cq;

	if (!has_val || off != VB_CQ_DOORBELL)
		return;
	pthread_mutex_lock(&ctx->lock);
	for (cq = ctx->named_cqs; cq != NULL; cq = cq->named_next)
		if (cq->cqn == cqn) {
			(void)vb_cq_arm_word(cq, (uint32_t)(db >> 32));
			break;
		}
	pthread_mutex_unlock(&ctx->lock);
	if (cq == NULL)
		vb_devx_evch_kick(); /* a DevX CQ's, armed through this UAR */
}

VB_EXPORT int vb_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);
/* The CQ of the channel with a fired event not yet taken (taking it), or NULL. */
static struct vb_cq *vb_channel_take(struct vb_channel *vch)
{
	struct vb_cq *cq;

	pthread_mutex_lock(&vch->lock);
	for (cq = vch->cqs; cq != NULL; cq = cq->ch_next)
		if (atomic_load_explicit(&cq->waiter.fired, memory_order_acquire) != cq->ev_taken) {
			cq->ev_taken++;
			break;
		}
	pthread_mutex_unlock(&vch->lock);
	return cq;
}

VB_EXPORT int vb_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **out, void **cq_context)
{
	struct vb_cq *cq = NULL;
	uint64_t n;

	if (channel == NULL || out == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * One count per event fired (a watch counts its fire before it writes):
	 * a count taken always finds its CQ, unless that CQ was destroyed with
	 * the event untaken; then wait for the next. The read blocks unless the
	 * program made the descriptor non-blocking (EAGAIN), as rdma-core's does.
	 */
	while (cq == NULL) {
		if (read(channel->fd, &n, sizeof(n)) != sizeof(n)) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		cq = vb_channel_take(vb_channel_of(channel));
	}
	pthread_spin_lock(&cq->lock);
	cq->arm_sn++; /* as mlx5's cq_event: the next arm is a new one */
	pthread_spin_unlock(&cq->lock);
	*out = ibv_cq_ex_to_cq(&cq->cqx);
	*cq_context = cq->cqx.cq_context;
	return 0;
}
VB_SYMVER(vb_get_cq_event, ibv_get_cq_event, "IBVERBS_1.1");

VB_EXPORT void vb_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);
VB_EXPORT void vb_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq == NULL)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
VB_SYMVER(vb_ack_cq_events, ibv_ack_cq_events, "IBVERBS_1.1");

/* A CQE the device refused for lack of room: IBV_EVENT_CQ_ERR, once per CQ. */
void vb_cq_tell_overrun(struct vb_cq *cq)
{
	struct ibv_async_event ev = {.event_type = IBV_EVENT_CQ_ERR};

	if (atomic_exchange(&cq->overrun_told, 1) != 0)
		return;
	ev.element.cq = ibv_cq_ex_to_cq(&cq->cqx);
	if (vb_async_post(cq->ctx, &ev) != 0)
		BASE_ERR("CQ %u overrun: the async event could not be queued", cq->cqn);
}

void vb_cq_add_qp(struct vb_cq *cq, struct vb_qp *qp, bool send)
{
	atomic_fetch_add(&cq->users, 1);
	pthread_spin_lock(&cq->lock);
	if (send) {
		qp->s_next = cq->sqps;
		cq->sqps = qp;
	} else {
		qp->r_next = cq->rqps;
		cq->rqps = qp;
	}
	pthread_spin_unlock(&cq->lock);
}

void vb_cq_del_qp(struct vb_cq *cq, struct vb_qp *qp, bool send)
{
	struct vb_qp **p;

	pthread_spin_lock(&cq->lock);
	for (p = send ? &cq->sqps : &cq->rqps; *p != NULL; p = send ? &(*p)->s_next : &(*p)->r_next) {
		if (*p == qp) {
			*p = send ? qp->s_next : qp->r_next;
			break;
		}
	}
	if (cq->last == qp)
		cq->last = NULL;
	pthread_spin_unlock(&cq->lock);
	atomic_fetch_sub(&cq->users, 1);
}
