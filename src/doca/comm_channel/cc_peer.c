/*
 * cc_peer — peer addresses: one per connection, owned by the endpoint, freed
 * by doca_comm_channel_ep_disconnect() or the endpoint's destroy.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cc_priv.h"

struct doca_comm_channel_addr_t *dcc_peer_new(struct doca_comm_channel_ep_t *ep, int fd)
{
	struct doca_comm_channel_addr_t *p = calloc(1, sizeof(*p));

	if (p == NULL)
		goto err_close;
	p->ep = ep;
	p->fd = fd;
	p->state = DCC_PEER_HANDSHAKE;
	if (dcc_events_add_peer(ep, p) < 0)
		goto err_free;
	p->next = ep->peers;
	ep->peers = p;
	ep->nlive++;
	return p;

err_free:
	free(p);
err_close:
	close(fd);
	return NULL;
}

/* Peers are compared by address before anything is read through the pointer. */
bool dcc_peer_is_member(const struct doca_comm_channel_ep_t *ep, const struct doca_comm_channel_addr_t *peer)
{
	for (const struct doca_comm_channel_addr_t *p = ep->peers; p != NULL; p = p->next)
		if (p == peer)
			return true;
	return false;
}

static void peer_close(struct doca_comm_channel_addr_t *peer)
{
	if (peer->fd < 0)
		return;
	dcc_events_del_fd(peer->ep, peer->fd);
	close(peer->fd);
	peer->fd = -1;
	peer->ep->nlive--;
}

/* The socket goes at once, so a dead peer never keeps an event handle readable. */
void dcc_peer_fail(struct doca_comm_channel_addr_t *peer, const char *why)
{
	if (peer->state == DCC_PEER_FAILED)
		return;
	DC_WARN("comm channel peer (pid %u): %s; connection dropped", peer->pid, why);
	peer_close(peer);
	peer->state = DCC_PEER_FAILED;
}

void dcc_peer_unlink(struct doca_comm_channel_addr_t *peer)
{
	struct doca_comm_channel_addr_t **pp = &peer->ep->peers;

	while (*pp != NULL && *pp != peer)
		pp = &(*pp)->next;
	if (*pp != NULL)
		*pp = peer->next;
	/* The service snapshot may name this peer: it ends here. */
	peer->ep->peer_list_len = 0;
}

void dcc_peer_free(struct doca_comm_channel_addr_t *peer)
{
	peer_close(peer);
	free(peer);
}

doca_error_t doca_comm_channel_peer_addr_get_user_data(struct doca_comm_channel_addr_t *peer_addr, uint64_t *user_data)
{
	DCC_CHECK_ARGS(peer_addr != NULL && user_data != NULL);
	*user_data = peer_addr->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_peer_addr_set_user_data(struct doca_comm_channel_addr_t *peer_addr,
						       uint64_t user_context)
{
	DCC_CHECK_ARGS(peer_addr != NULL);
	peer_addr->user_data = user_context;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_peer_addr_update_info(struct doca_comm_channel_addr_t *peer_addr)
{
	DCC_CHECK_ARGS(peer_addr != NULL);
	if (peer_addr->state == DCC_PEER_HANDSHAKE && peer_addr->ep->role == DCC_ROLE_CLIENT)
		dcc_client_handshake(peer_addr);
	if (peer_addr->state == DCC_PEER_CONNECTED && fab_cc_peer_gone(peer_addr->fd))
		dcc_peer_fail(peer_addr, "peer closed the connection");
	peer_addr->snap = peer_addr->live;
	switch (peer_addr->state) {
	case DCC_PEER_HANDSHAKE:
		return DOCA_ERROR_CONNECTION_INPROGRESS;
	case DCC_PEER_FAILED:
		return DOCA_ERROR_CONNECTION_ABORTED;
	default:
		return DOCA_SUCCESS;
	}
}

doca_error_t doca_comm_channel_peer_addr_get_send_messages(const struct doca_comm_channel_addr_t *peer_addr,
							   uint64_t *send_messages)
{
	DCC_CHECK_ARGS(peer_addr != NULL && send_messages != NULL);
	*send_messages = peer_addr->snap.send_msgs;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_peer_addr_get_send_bytes(const struct doca_comm_channel_addr_t *peer_addr,
							uint64_t *send_bytes)
{
	DCC_CHECK_ARGS(peer_addr != NULL && send_bytes != NULL);
	*send_bytes = peer_addr->snap.send_bytes;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_peer_addr_get_recv_messages(const struct doca_comm_channel_addr_t *peer_addr,
							   uint64_t *recv_messages)
{
	DCC_CHECK_ARGS(peer_addr != NULL && recv_messages != NULL);
	*recv_messages = peer_addr->snap.recv_msgs;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_peer_addr_get_recv_bytes(const struct doca_comm_channel_addr_t *peer_addr,
							uint64_t *recv_bytes)
{
	DCC_CHECK_ARGS(peer_addr != NULL && recv_bytes != NULL);
	*recv_bytes = peer_addr->snap.recv_bytes;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_peer_addr_get_send_in_flight_messages(const struct doca_comm_channel_addr_t *peer_addr,
								     uint64_t *send_in_flight_messages)
{
	DCC_CHECK_ARGS(peer_addr != NULL && send_in_flight_messages != NULL);
	/* A successful send has already put the message in the peer's queue. */
	*send_in_flight_messages = 0;
	return DOCA_SUCCESS;
}
