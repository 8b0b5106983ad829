/*
 * vb_async — completion channels and the context's async event queue.
 *
 * Both are real descriptors (eventfds), so programs can poll() them as they
 * poll rdma-core's kernel descriptors. Each is a semaphore: it counts the
 * queued events (a channel's, those its CQs fired), so it is readable
 * exactly while one is pending, and ibv_get_async_event's or
 * ibv_get_cq_event's read of it blocks unless the program made the
 * descriptor non-blocking with fcntl (then EAGAIN), as with rdma-core.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vb_export.h"
#include "vb_int.h"

struct vb_async {
	struct vb_async *next;
	struct ibv_async_event ev;
	bool dropped; /* its object was destroyed before the program took it: passed over */
};

/* The object an affiliated event names (NULL: a port's or the device's). */
static const void *vb_async_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_WQ_FATAL:
		return ev->element.wq;
	default:
		return NULL;
	}
}

/*
 * The object goes (after the device's fence: nothing raises for it any
 * more): its events not yet taken are dropped, as the kernel drops them, so
 * no program is handed a pointer to freed memory. They stay queued, counted
 * on the descriptor, and ibv_get_async_event passes over them.
 */
void vb_async_forget(struct vb_context *ctx, const void *obj)
{
	if (!vb_ctx_live_hold(ctx))
		return; /* destroyed after its context's close: the queue went with the context */
	pthread_mutex_lock(&ctx->lock);
	for (struct vb_async *a = ctx->async; a != NULL; a = a->next)
		if (vb_async_obj(&a->ev) == obj)
			a->dropped = true;
	pthread_mutex_unlock(&ctx->lock);
	vb_ctx_live_release();
}

int vb_async_init(struct vb_context *ctx)
{
	ctx->async_efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ctx->async_efd < 0)
		return -1;
	ctx->vctx.context.async_fd = ctx->async_efd;
	return 0;
}

void vb_async_fini(struct vb_context *ctx)
{
	struct vb_async *a;

	while ((a = ctx->async) != NULL) {
		ctx->async = a->next;
		free(a);
	}
	if (ctx->async_efd >= 0)
		close(ctx->async_efd);
}

int vb_async_post(struct vb_context *ctx, const struct ibv_async_event *event)
{
	struct vb_async *a = calloc(1, sizeof(*a));
	uint64_t one = 1;

	if (a == NULL)
		return ENOMEM;
	a->ev = *event;
	/*
	 * Counted and linked under the lock: a reader that got the count takes
	 * the lock before the queue, so it always finds the event.
	 */
	pthread_mutex_lock(&ctx->lock);
	if (write(ctx->async_efd, &one, sizeof(one)) != sizeof(one)) {
		pthread_mutex_unlock(&ctx->lock);
		free(a);
		return EIO;
	}
	if (ctx->async_tail != NULL)
		ctx->async_tail->next = a;
	else
		ctx->async = a;
	ctx->async_tail = a;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

VB_EXPORT int vb_get_async_event(struct ibv_context *context, struct ibv_async_event *event);
VB_EXPORT int vb_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct vb_async *a;
	uint64_t one;

	if (ctx == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* One count per queued event: after the read, an event is ours to take (a dropped one: the next). */
	for (;;) {
		if (read(ctx->async_efd, &one, sizeof(one)) != sizeof(one))
			return -1;
		pthread_mutex_lock(&ctx->lock);
		a = ctx->async;
		ctx->async = a->next;
		if (ctx->async == NULL)
			ctx->async_tail = NULL;
		pthread_mutex_unlock(&ctx->lock);
		if (!a->dropped)
			break;
		free(a);
	}
	*event = a->ev;
	free(a);
	return 0;
}
VB_SYMVER(vb_get_async_event, ibv_get_async_event, "IBVERBS_1.1");

/*
 * rdma-core counts acknowledgements so that destroying a QP/CQ/SRQ waits for
 * the events of it the program took; objects here do not wait: the events
 * not yet taken are dropped at the destroy (vb_async_forget), and one taken
 * before is the program's to be done with before it destroys the object,
 * as rdma-core's documentation asks.
 */
VB_EXPORT void vb_ack_async_event(struct ibv_async_event *event);
VB_EXPORT void vb_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}
VB_SYMVER(vb_ack_async_event, ibv_ack_async_event, "IBVERBS_1.1");

VB_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct vb_channel *ch;

	if (vb_ctx_checked(context) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * One counter for all its CQs, one count per event: readable while one
	 * is pending, and get_cq_event's read blocks unless the program made
	 * the descriptor non-blocking, as on rdma-core's event file (vb_cq.c).
	 */
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ch.fd < 0) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->ch.context = context;
	return &ch->ch;
}

VB_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct vb_context *ctx;

	if (channel == NULL || (ctx = vb_ctx_checked(channel->context)) == NULL)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (channel->refcnt != 0) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&ctx->lock);
	close(channel->fd);
	pthread_mutex_destroy(&vb_channel_of(channel)->lock);
	free(vb_channel_of(channel));
	return 0;
}
