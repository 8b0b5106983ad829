/*
 * cc_event — the event handles an application waits on. Each is an epoll
 * instance (itself pollable) over the endpoint's sockets:
 *  - receive: level-triggered EPOLLIN on the listening socket and every live
 *    peer, so it is readable exactly while recvfrom has something to do;
 *    arming it is therefore a no-op, and a wake-up is never lost.
 *  - send: one-shot EPOLLOUT per live peer, re-armed by arm_send, so it turns
 *    readable once a queue has room instead of staying readable for ever.
 *  - service: one-shot new-connection / hang-up events, re-armed by
 *    doca_comm_channel_ep_update_service_state_info().
 */
#include <sys/epoll.h>
#include <unistd.h>

#include "cc_priv.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void dcc_events_close(struct doca_comm_channel_ep_t *ep)
{
	close_fd(&ep->recv_epfd);
	close_fd(&ep->send_epfd);
	close_fd(&ep->svc_epfd);
}

static int ctl(int epfd, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(epfd, op, fd, &ev);
}

doca_error_t dcc_events_open(struct doca_comm_channel_ep_t *ep)
{
	if (ep->recv_epfd >= 0)
		return DOCA_SUCCESS; /* a client reconnecting keeps its handles */
	ep->recv_epfd = epoll_create1(EPOLL_CLOEXEC);
	ep->send_epfd = epoll_create1(EPOLL_CLOEXEC);
	ep->svc_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ep->recv_epfd < 0 || ep->send_epfd < 0 || ep->svc_epfd < 0)
		goto err;
	/* The listening socket is tagged NULL: it is no peer. */
	if (ep->listen_fd >= 0 && (ctl(ep->recv_epfd, EPOLL_CTL_ADD, ep->listen_fd, EPOLLIN, NULL) < 0 ||
				   ctl(ep->svc_epfd, EPOLL_CTL_ADD, ep->listen_fd, EPOLLIN | EPOLLONESHOT, NULL) < 0))
		goto err;
	return DOCA_SUCCESS;

err:
	DC_ERR("cannot create the event handles");
	dcc_events_close(ep);
	return DOCA_ERROR_INITIALIZATION;
}

int dcc_events_add_peer(struct doca_comm_channel_ep_t *ep, struct doca_comm_channel_addr_t *peer)
{
	/* One-shot with no events is a disarmed registration. */
	if (ctl(ep->recv_epfd, EPOLL_CTL_ADD, peer->fd, EPOLLIN, peer) < 0)
		return -1;
	if (ctl(ep->send_epfd, EPOLL_CTL_ADD, peer->fd, EPOLLONESHOT, peer) < 0 ||
	    ctl(ep->svc_epfd, EPOLL_CTL_ADD, peer->fd, EPOLLRDHUP | EPOLLONESHOT, peer) < 0) {
		dcc_events_del_fd(ep, peer->fd);
		return -1;
	}
	return 0;
}

void dcc_events_del_fd(struct doca_comm_channel_ep_t *ep, int fd)
{
	/* Failures are harmless: a socket not in a set has nothing to remove. */
	ctl(ep->recv_epfd, EPOLL_CTL_DEL, fd, 0, NULL);
	ctl(ep->send_epfd, EPOLL_CTL_DEL, fd, 0, NULL);
	ctl(ep->svc_epfd, EPOLL_CTL_DEL, fd, 0, NULL);
}

/* Consumes reported one-shot events so the handle stops being readable. */
void dcc_events_drain(int epfd)
{
	struct epoll_event ev[32];

	while (epoll_wait(epfd, ev, 32, 0) == 32)
		;
}

static doca_error_t check_active(const struct doca_comm_channel_ep_t *ep)
{
	if (ep->role == DCC_ROLE_NONE || ep->recv_epfd < 0) {
		DC_ERR("endpoint neither listens nor is connected");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_event_channel(struct doca_comm_channel_ep_t *local_ep,
						    doca_event_channel_t *send_event_channel,
						    doca_event_channel_t *recv_event_channel)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(local_ep != NULL && (send_event_channel != NULL || recv_event_channel != NULL));
	ret = check_active(local_ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (send_event_channel != NULL)
		*send_event_channel = local_ep->send_epfd;
	if (recv_event_channel != NULL)
		*recv_event_channel = local_ep->recv_epfd;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_service_event_channel(struct doca_comm_channel_ep_t *local_ep,
							    doca_event_channel_t *service_event_channel)
{
	DCC_CHECK_ARGS(local_ep != NULL && service_event_channel != NULL);
	if (local_ep->role == DCC_ROLE_CLIENT) {
		DC_ERR("the service event channel exists on the service side only");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (local_ep->role != DCC_ROLE_SERVICE) {
		DC_ERR("endpoint does not listen");
		return DOCA_ERROR_BAD_STATE;
	}
	*service_event_channel = local_ep->svc_epfd;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_event_handle_arm_send(struct doca_comm_channel_ep_t *local_ep)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(local_ep != NULL);
	ret = check_active(local_ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	dcc_events_drain(local_ep->send_epfd);
	/* Re-arming checks the queue at once: a send queue with room reports right away. */
	for (struct doca_comm_channel_addr_t *p = local_ep->peers; p != NULL; p = p->next)
		if (p->fd >= 0 && ctl(local_ep->send_epfd, EPOLL_CTL_MOD, p->fd, EPOLLOUT | EPOLLONESHOT, p) < 0)
			DC_WARN("cannot arm the send event of a peer");
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_event_handle_arm_recv(struct doca_comm_channel_ep_t *local_ep)
{
	DCC_CHECK_ARGS(local_ep != NULL);
	/* Level-triggered: readable whenever a message, a new client or a hang-up waits. */
	return check_active(local_ep);
}
