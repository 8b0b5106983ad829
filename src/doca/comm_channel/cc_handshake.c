/*
 * cc_handshake — admitting clients. A service accepts a connection, reads the
 * client's HELLO and answers WELCOME (or REJECT); the client reads the answer
 * whenever it next touches the connection. Nothing here blocks: a handshake
 * that is not complete is retried on the next call.
 */
#include <unistd.h>

#include "cc_priv.h"

#define ACCEPT_BATCH 64 /* bounds one call; the listening socket stays readable for the rest */

static struct fab_cc_hs hs_frame(enum fab_cc_hs_type type, enum fab_cc_reject_reason why, uint16_t max_msg)
{
	return (struct fab_cc_hs){ .version = FAB_CC_VERSION, .type = type, .status = why,
				   .max_msg_size = max_msg, .pid = (uint32_t)getpid() };
}

static void reject_full(struct doca_comm_channel_ep_t *ep, int fd)
{
	struct fab_cc_hs hs = hs_frame(FAB_CC_REJECT, FAB_CC_REJ_FULL, ep->max_msg_size);

	DC_WARN("service \"%s\" has %u clients already; new client refused", ep->name, ep->nlive);
	fab_cc_hs_send(fd, &hs);
	close(fd);
}

doca_error_t dcc_service_accept_all(struct doca_comm_channel_ep_t *ep)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd, ret = fab_cc_accept(ep->listen_fd, &fd);

		if (ret == -EAGAIN)
			break;
		if (ret == -EPERM) {
			DC_WARN("service \"%s\": refused a client of another user", ep->name);
			continue;
		}
		if (ret < 0) {
			DC_ERR("service \"%s\": accept failed (errno %d)", ep->name, -ret);
			return DOCA_ERROR_DRIVER;
		}
		if (ep->nlive >= DCC_MAX_CONNECTIONS) {
			reject_full(ep, fd);
			continue;
		}
		if (fab_cc_set_queue(fd, ep->send_queue_size, ep->max_msg_size) < 0)
			DC_WARN("cannot size the send queue of a client; kernel default kept");
		if (dcc_peer_new(ep, fd) == NULL)
			return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

/* A client that never completed its handshake was never shown to the user: it just goes. */
static void drop_unseen(struct doca_comm_channel_addr_t *peer, const char *why, int level)
{
	dc_log(level, __func__, "service \"%s\": client (pid %u) dropped: %s", peer->ep->name, peer->pid, why);
	dcc_peer_unlink(peer);
	dcc_peer_free(peer);
}

void dcc_service_handshake(struct doca_comm_channel_addr_t *peer)
{
	struct doca_comm_channel_ep_t *ep = peer->ep;
	struct fab_cc_hs hs, reply;
	int ret = fab_cc_hs_recv(peer->fd, &hs);

	if (ret == -EAGAIN)
		return;
	if (ret == -ECONNRESET) {
		drop_unseen(peer, "closed during the handshake", DC_LOG_WARNING);
		return;
	}
	if (ret < 0 || hs.type != FAB_CC_HELLO) {
		drop_unseen(peer, "malformed handshake frame", DC_LOG_ERROR);
		return;
	}
	peer->pid = hs.pid;
	if (hs.version != FAB_CC_VERSION) {
		reply = hs_frame(FAB_CC_REJECT, FAB_CC_REJ_VERSION, ep->max_msg_size);
		fab_cc_hs_send(peer->fd, &reply);
		drop_unseen(peer, "unsupported handshake version", DC_LOG_ERROR);
		return;
	}
	reply = hs_frame(FAB_CC_WELCOME, FAB_CC_REJ_NONE, ep->max_msg_size);
	ret = fab_cc_hs_send(peer->fd, &reply);
	/*
	 * A client that sent its messages and left before this answer is still
	 * a client: its messages are delivered, then its close is reported.
	 */
	if (ret < 0 && !(ret == -ECONNRESET && fab_cc_pending(peer->fd))) {
		drop_unseen(peer, ret == -ECONNRESET ? "left during the handshake" : "cannot answer the handshake",
			    DC_LOG_WARNING);
		return;
	}
	peer->state = DCC_PEER_CONNECTED;
}

void dcc_client_handshake(struct doca_comm_channel_addr_t *peer)
{
	struct fab_cc_hs hs;
	int ret = fab_cc_hs_recv(peer->fd, &hs);

	if (ret == -EAGAIN)
		return;
	if (ret == -ECONNRESET)
		dcc_peer_fail(peer, "service closed the connection during the handshake");
	else if (ret < 0 || hs.type == FAB_CC_HELLO)
		dcc_peer_fail(peer, "malformed handshake frame from the service");
	else if (hs.type == FAB_CC_REJECT)
		dcc_peer_fail(peer, hs.status == FAB_CC_REJ_FULL ? "service has its maximum number of clients"
								 : "service refused the handshake version");
	else
		peer->state = DCC_PEER_CONNECTED;
}
