/*
 * cm_channel — event channels and their queues.
 *
 * The channel's fd is an eventfd kept readable exactly while events are
 * queued: the first queued event writes it, taking the last one reads it
 * back to zero (both under cm_lock, so the count is known to be non-zero and
 * the read never blocks whatever flags the application set on the fd). A
 * program may poll() the fd or block in rdma_get_cm_event(); with O_NONBLOCK
 * set on the fd, an empty channel answers EAGAIN as the kernel's does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base_log.h"
#include "cm_int.h"

static void cm_fd_signal(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		BASE_ERR("event channel %d: cannot signal (%d)", fd, errno);
}

static void cm_fd_drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		BASE_ERR("event channel %d: cannot drain (%d)", fd, errno);
}

struct cm_channel *cm_channel_alloc(bool sync)
{
	struct cm_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = eventfd(0, EFD_CLOEXEC);
	if (ch->ch.fd < 0) {
		free(ch);
		return NULL;
	}
	cm_list_init(&ch->events);
	ch->sync = sync;
	return ch;
}

static void cm_channel_drop_all(struct cm_channel *ch)
{
	while (!cm_list_empty(&ch->events)) {
		struct cm_event *e = cm_container_of(ch->events.next, struct cm_event, link);

		cm_list_del(&e->link);
		free(e);
	}
}

/* Channels destroyed while threads still wait on them (cm_lock): kept, and reachable, until those leave. */
static struct cm_list cm_dead_channels = { &cm_dead_channels, &cm_dead_channels };

/*
 * cm_lock held. A thread may still wait in rdma_get_cm_event (rping's CM
 * thread does while its main thread tears down): then the channel is only
 * marked dead, its fd kept open under the waiter, and the last waiter to
 * leave frees it. Nothing wakes the waiter, as closing the kernel CM's fd
 * does not wake a read blocked on it.
 */
void cm_channel_free(struct cm_channel *ch)
{
	cm_channel_drop_all(ch);
	if (ch->waiters != 0) {
		ch->dead = true;
		cm_list_add_tail(&cm_dead_channels, &ch->dead_link);
		return;
	}
	close(ch->ch.fd);
	free(ch);
}

CM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cm_channel *ch = cm_channel_alloc(false);

	return ch == NULL ? NULL : &ch->ch;
}

CM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel == NULL)
		return;
	pthread_mutex_lock(&cm_lock);
	cm_channel_free((struct cm_channel *)channel);
	pthread_mutex_unlock(&cm_lock);
}

/* A new event for id (not queued); NULL without memory. */
struct cm_event *cm_event_new(struct cm_id *id, enum rdma_cm_event_type type, int status)
{
	struct cm_event *e = calloc(1, sizeof(*e));

	if (e == NULL) {
		BASE_ERR("no memory for a CM event: %s dropped", rdma_event_str(type));
		return NULL;
	}
	cm_list_init(&e->link);
	e->owner = id;
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	return e;
}

/*
 * Private data as the kernel reports it: the transport's whole field (full
 * bytes), the sender's len bytes first and zeros after them.
 */
void cm_event_pdata(struct cm_event *e, const void *data, uint8_t len, uint8_t full)
{
	if (len > 0)
		memcpy(e->pdata, data, len);
	e->ev.param.conn.private_data = full ? e->pdata : NULL;
	e->ev.param.conn.private_data_len = full;
}

void cm_event_queue(struct cm_channel *ch, struct cm_event *e)
{
	if (e == NULL)
		return;
	if (cm_list_empty(&ch->events))
		cm_fd_signal(ch->ch.fd);
	cm_list_add_tail(&ch->events, &e->link);
}

/* Moves an event already unlinked from from's queue to the end of to's. */
void cm_event_requeue(struct cm_channel *from, struct cm_channel *to, struct cm_event *e)
{
	if (cm_list_empty(&from->events))
		cm_fd_drain(from->ch.fd);
	cm_event_queue(to, e);
}

/* Drops the queued events of id (and of the requests that came in on it). */
void cm_channel_drop_events(struct cm_channel *ch, struct cm_id *id)
{
	struct cm_list *l, *next;

	for (l = ch->events.next; l != &ch->events; l = next) {
		struct cm_event *e = cm_container_of(l, struct cm_event, link);

		next = l->next;
		if (e->owner != id && e->ev.listen_id != &id->id)
			continue;
		cm_list_del(&e->link);
		if (e->ev.listen_id == &id->id && e->owner != id)
			cm_id_drop_locked(e->owner); /* a request nobody saw */
		free(e);
		if (cm_list_empty(&ch->events))
			cm_fd_drain(ch->ch.fd);
	}
}

void cm_channel_drop_matching(struct cm_channel *ch, bool (*match)(const struct cm_event *, const void *),
			      const void *arg)
{
	struct cm_list *l, *next;

	for (l = ch->events.next; l != &ch->events; l = next) {
		struct cm_event *e = cm_container_of(l, struct cm_event, link);

		next = l->next;
		if (!match(e, arg))
			continue;
		cm_list_del(&e->link);
		free(e);
		if (cm_list_empty(&ch->events))
			cm_fd_drain(ch->ch.fd);
	}
}

/* Waits for the fd to be readable (cm_lock held, released meanwhile); -1 when the channel went. */
static int cm_wait_once(struct cm_channel *ch)
{
	struct pollfd p = { .fd = ch->ch.fd, .events = POLLIN };
	int rc, err;

	ch->waiters++;
	pthread_mutex_unlock(&cm_lock);
	rc = poll(&p, 1, -1);
	err = errno;
	pthread_mutex_lock(&cm_lock);
	if (--ch->waiters == 0 && ch->dead) {
		cm_list_del(&ch->dead_link);
		close(ch->ch.fd);
		free(ch);
		errno = EBADF;
		return -1;
	}
	if (ch->dead) {
		errno = EBADF;
		return -1;
	}
	errno = err;
	return rc < 0 && err != EINTR ? -1 : 0;
}

/* Waits until the channel has an event (cm_lock held, released while waiting). */
static int cm_wait_event(struct cm_channel *ch)
{
	while (cm_list_empty(&ch->events)) {
		int fl = fcntl(ch->ch.fd, F_GETFL);

		if (fl >= 0 && (fl & O_NONBLOCK)) {
			errno = EAGAIN;
			return -1;
		}
		if (cm_wait_once(ch) != 0)
			return -1;
	}
	return 0;
}

CM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	struct cm_event *e;

	if (channel == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (cm_wait_event(ch) != 0) {
		pthread_mutex_unlock(&cm_lock);
		return -1;
	}
	e = cm_container_of(ch->events.next, struct cm_event, link);
	cm_list_del(&e->link);
	if (cm_list_empty(&ch->events))
		cm_fd_drain(ch->ch.fd);
	e->owner->unacked++;
	cm_mcast_taken(e);
	pthread_mutex_unlock(&cm_lock);
	*event = &e->ev;
	return 0;
}

CM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_event *e = (struct cm_event *)event;

	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (--e->owner->unacked == 0)
		pthread_cond_broadcast(&e->owner->acked);
	pthread_mutex_unlock(&cm_lock);
	free(e);
	return 0;
}

/*
 * A synchronous id (created without a channel) waits for the outcome of its
 * call here; the event stays in id->event until the next call acks it.
 */
int cm_complete(struct cm_id *id)
{
	struct rdma_cm_event *ev;

	if (!id->sync)
		return 0;
	if (id->id.event != NULL) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &id->id.event) != 0)
		return -1;
	ev = id->id.event;
	if (ev->status == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		errno = ECONNREFUSED;
	else
		errno = ev->status < 0 ? -ev->status : ev->status;
	return -1;
}
