/*
 * cc_io — sending and receiving messages. One message is one datagram on the
 * peer's socket, sent from and received into the caller's buffer.
 */
#include <sys/epoll.h>

#include "cc_priv.h"

/* One pass over every client (handshake or message) at most, then report AGAIN. */
#define SERVICE_RECV_ROUNDS (2 * DCC_MAX_CONNECTIONS + 2)

static doca_error_t send_error(struct doca_comm_channel_addr_t *peer, int err)
{
	if (err == -EAGAIN)
		return DOCA_ERROR_AGAIN;
	/*
	 * What the peer sent before it went is still queued on the socket:
	 * closing it now would lose that. recvfrom delivers it and then reads
	 * the close, which fails the peer.
	 */
	if (err == -ECONNRESET && fab_cc_pending(peer->fd))
		return DOCA_ERROR_CONNECTION_RESET;
	dcc_peer_fail(peer, err == -ECONNRESET ? "peer closed the connection" : "send failed");
	return DOCA_ERROR_CONNECTION_RESET;
}

static doca_error_t check_send(const struct doca_comm_channel_ep_t *ep, size_t len, int flags)
{
	if (len == 0 || len > ep->max_msg_size) {
		DC_ERR("message of %zu bytes; this endpoint sends 1 to %u bytes", len, ep->max_msg_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (flags != DOCA_CC_MSG_FLAG_NONE) {
		DC_ERR("unknown message flags 0x%x", (unsigned)flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_sendto(struct doca_comm_channel_ep_t *local_ep, const void *msg, size_t len,
					 int flags, struct doca_comm_channel_addr_t *peer_addr)
{
	doca_error_t ret;
	int err;

	DCC_CHECK_ARGS(local_ep != NULL && msg != NULL);
	if (peer_addr == NULL || !dcc_peer_is_member(local_ep, peer_addr)) {
		DC_ERR("no such connection on this endpoint");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	ret = check_send(local_ep, len, flags);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* A refused handshake is noticed here rather than after messages pile up. */
	if (peer_addr->state == DCC_PEER_HANDSHAKE && local_ep->role == DCC_ROLE_CLIENT)
		dcc_client_handshake(peer_addr);
	if (peer_addr->state == DCC_PEER_FAILED)
		return DOCA_ERROR_CONNECTION_RESET;
	err = fab_cc_send(peer_addr->fd, msg, len);
	if (err < 0)
		return send_error(peer_addr, err);
	peer_addr->live.send_msgs++;
	peer_addr->live.send_bytes += len;
	return DOCA_SUCCESS;
}

static doca_error_t recv_error(struct doca_comm_channel_addr_t *peer, int err, size_t need, size_t *len)
{
	switch (err) {
	case -EAGAIN:
		return DOCA_ERROR_AGAIN;
	case -EMSGSIZE:
		DC_ERR("receive buffer of %zu bytes; the next message has %zu (it stays queued)", *len, need);
		*len = need;
		return DOCA_ERROR_INVALID_VALUE;
	case -ECONNRESET:
		dcc_peer_fail(peer, "peer closed the connection");
		return DOCA_ERROR_CONNECTION_RESET;
	case -EPROTO:
		DC_ERR("peer (pid %u) sent a message over %u bytes: protocol violation", peer->pid, DCC_MAX_MSG_SIZE);
		dcc_peer_fail(peer, "malformed message");
		return DOCA_ERROR_CONNECTION_RESET;
	default:
		dcc_peer_fail(peer, "receive failed");
		return DOCA_ERROR_CONNECTION_RESET;
	}
}

static doca_error_t peer_recv(struct doca_comm_channel_addr_t *peer, void *msg, size_t *len,
			      struct doca_comm_channel_addr_t **peer_addr)
{
	size_t n = 0;
	int err;

	if (peer->state == DCC_PEER_HANDSHAKE)
		dcc_client_handshake(peer); /* the service's answer precedes its messages */
	if (peer->state == DCC_PEER_HANDSHAKE)
		return DOCA_ERROR_AGAIN;
	*peer_addr = peer;
	if (peer->state == DCC_PEER_FAILED)
		return DOCA_ERROR_CONNECTION_RESET;
	err = fab_cc_recv(peer->fd, msg, *len, &n);
	if (err < 0)
		return recv_error(peer, err, n, len);
	peer->live.recv_msgs++;
	peer->live.recv_bytes += n;
	*len = n;
	return DOCA_SUCCESS;
}

/* The receive handle's ready list rotates, so busy clients cannot starve the others. */
static doca_error_t service_recv(struct doca_comm_channel_ep_t *ep, void *msg, size_t *len,
				 struct doca_comm_channel_addr_t **peer_addr)
{
	for (int i = 0; i < SERVICE_RECV_ROUNDS; i++) {
		struct doca_comm_channel_addr_t *peer;
		struct epoll_event ev;
		doca_error_t ret;

		if (epoll_wait(ep->recv_epfd, &ev, 1, 0) != 1)
			return DOCA_ERROR_AGAIN;
		peer = ev.data.ptr;
		if (peer == NULL) {
			ret = dcc_service_accept_all(ep);
			/* recvfrom's list has no DRIVER: a failed accept is its UNKNOWN */
			if (ret != DOCA_SUCCESS)
				return ret == DOCA_ERROR_DRIVER ? DOCA_ERROR_UNKNOWN : ret;
			continue;
		}
		if (peer->state == DCC_PEER_HANDSHAKE) {
			dcc_service_handshake(peer);
			continue;
		}
		ret = peer_recv(peer, msg, len, peer_addr);
		if (ret != DOCA_ERROR_AGAIN)
			return ret;
	}
	return DOCA_ERROR_AGAIN;
}

doca_error_t doca_comm_channel_ep_recvfrom(struct doca_comm_channel_ep_t *local_ep, void *msg, size_t *len, int flags,
					   struct doca_comm_channel_addr_t **peer_addr)
{
	DCC_CHECK_ARGS(local_ep != NULL && msg != NULL && len != NULL && peer_addr != NULL);
	if (flags != DOCA_CC_MSG_FLAG_NONE) {
		DC_ERR("unknown message flags 0x%x", (unsigned)flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (local_ep->role == DCC_ROLE_SERVICE)
		return service_recv(local_ep, msg, len, peer_addr);
	if (local_ep->role == DCC_ROLE_NONE || local_ep->peers == NULL) {
		DC_ERR("endpoint neither listens nor is connected");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	return peer_recv(local_ep->peers, msg, len, peer_addr);
}
