/*
 * cm_backlog — rdma_listen's backlog: how many of a listener's requests may
 * wait on its channel unretrieved.
 *
 * As the kernel's (ucma), a request beyond it is not rejected: the kernel
 * drops it, so the requester's retransmissions may find room later, and a
 * requester that never finds any ends in UNREACHABLE (-ETIMEDOUT). Here the
 * request is held on its hidden id and delivered once the listener's queue
 * has room; a requester whose timer runs out first closes its connection,
 * and the held request goes unseen.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cm_int.h"

/* The kernel's net.rdma_ucm.max_backlog: a backlog of 0 or less, or above it, is this. */
#define CM_MAX_BACKLOG 1024

static int cm_backlog_of(const struct cm_id *l)
{
	return l->backlog > 0 && l->backlog < CM_MAX_BACKLOG ? l->backlog : CM_MAX_BACKLOG;
}

/* Whether l's channel holds as many of its unretrieved requests as its backlog allows. */
bool cm_backlog_full(const struct cm_id *l)
{
	const struct cm_list *q = &l->ch->events, *n;
	int queued = 0;

	for (n = q->next; n != q; n = n->next) {
		const struct cm_event *e = cm_container_of(n, struct cm_event, link);

		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->ev.listen_id == &l->id)
			queued++;
	}
	return queued >= cm_backlog_of(l);
}

/* Holds c's REQ m until its listener has room; false when it cannot be held. */
bool cm_backlog_hold(struct cm_id *c, const struct cm_msg *m)
{
	c->req = malloc(sizeof(*m));
	if (c->req == NULL)
		return false;
	memcpy(c->req, m, sizeof(*m));
	if (cm_loop_retry_start() != 0) {
		free(c->req);
		c->req = NULL;
		return false;
	}
	return true;
}

/* The CM thread's retry of a held REQ (cm_lock held); true while it still waits. c may be freed. */
bool cm_backlog_retry(struct cm_id *c)
{
	struct cm_msg *m = c->req;
	char b;

	if (c->state != CM_REQ_WAIT || m == NULL || c->sock < 0)
		return false;
	/* The requester gave up (its timer ran out): its EOF is behind the REQ. */
	if (recv(c->sock, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
		cm_proto_eof(c);
		return false;
	}
	if (c->listener != NULL && c->listener->state == CM_LISTEN && cm_backlog_full(c->listener))
		return true;
	c->req = NULL;
	cm_proto_recv(c, m); /* delivered now, or refused if the listener went */
	free(m);
	return false;
}
