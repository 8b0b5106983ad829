/*
 * cc_service — the service's view of its clients: a snapshot taken by
 * doca_comm_channel_ep_update_service_state_info(), which also re-arms the
 * service event handle.
 */
#include <stdlib.h>
#include <sys/epoll.h>

#include "cc_priv.h"

/* Until it listens an endpoint is no service: the headers list NOT_SUPPORTED only. */
static doca_error_t check_service(const struct doca_comm_channel_ep_t *ep)
{
	if (ep->role != DCC_ROLE_SERVICE) {
		DC_ERR("service state exists on a listening endpoint only");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

static void advance_handshakes(struct doca_comm_channel_ep_t *ep)
{
	struct doca_comm_channel_addr_t *p = ep->peers, *next;

	for (; p != NULL; p = next) {
		next = p->next; /* a failed handshake frees p */
		if (p->state == DCC_PEER_HANDSHAKE)
			dcc_service_handshake(p);
	}
}

static void rearm(struct doca_comm_channel_ep_t *ep)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = NULL };

	dcc_events_drain(ep->svc_epfd);
	epoll_ctl(ep->svc_epfd, EPOLL_CTL_MOD, ep->listen_fd, &ev);
	for (struct doca_comm_channel_addr_t *p = ep->peers; p != NULL; p = p->next) {
		if (p->fd < 0)
			continue;
		ev = (struct epoll_event){ .events = EPOLLRDHUP | EPOLLONESHOT, .data.ptr = p };
		epoll_ctl(ep->svc_epfd, EPOLL_CTL_MOD, p->fd, &ev);
	}
}

/* Connected clients that have not hung up (a hung-up one is reported by recvfrom). */
static doca_error_t snapshot(struct doca_comm_channel_ep_t *ep)
{
	struct doca_comm_channel_addr_t **list;
	uint32_t n = 0;

	list = realloc(ep->peer_list, (ep->nlive ? ep->nlive : 1) * sizeof(*list));
	if (list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ep->peer_list = list;
	ep->pending = 0;
	for (struct doca_comm_channel_addr_t *p = ep->peers; p != NULL; p = p->next) {
		if (p->state == DCC_PEER_HANDSHAKE)
			ep->pending++;
		else if (p->state == DCC_PEER_CONNECTED && n < ep->nlive && !fab_cc_peer_gone(p->fd))
			list[n++] = p;
	}
	ep->peer_list_len = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_update_service_state_info(struct doca_comm_channel_ep_t *local_ep)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(local_ep != NULL);
	ret = check_service(local_ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = dcc_service_accept_all(local_ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	advance_handshakes(local_ep);
	rearm(local_ep);
	return snapshot(local_ep);
}

doca_error_t doca_comm_channel_ep_get_peer_addr_list(const struct doca_comm_channel_ep_t *local_ep,
						     struct doca_comm_channel_addr_t ***peer_addr_array,
						     uint32_t *peer_addr_array_len)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(local_ep != NULL && peer_addr_array != NULL && peer_addr_array_len != NULL);
	ret = check_service(local_ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	*peer_addr_array = local_ep->peer_list;
	*peer_addr_array_len = local_ep->peer_list_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_pending_connections(const struct doca_comm_channel_ep_t *local_ep,
							  uint32_t *pending_connections)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(local_ep != NULL && pending_connections != NULL);
	ret = check_service(local_ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	*pending_connections = local_ep->pending;
	return DOCA_SUCCESS;
}
