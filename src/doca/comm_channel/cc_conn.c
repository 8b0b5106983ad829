/*
 * cc_conn — listen (service, DPU side), connect (client, host side) and
 * disconnect. A service is named after the PCI address of the host function
 * its representor stands for, and a client after its own function's address,
 * so the two meet exactly when they are a function and its representor.
 */
#include <string.h>
#include <unistd.h>

#include "cc_priv.h"
#include "dc_dev.h"
#include "doca_dev.h"

static doca_error_t check_name(const char *name)
{
	size_t n = strnlen(name, DCC_MAX_SERVICE_NAME_LEN);

	if (n == 0 || n >= DCC_MAX_SERVICE_NAME_LEN) {
		DC_ERR("service name must have 1 to %d characters", DCC_MAX_SERVICE_NAME_LEN - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t check_service_config(const struct doca_comm_channel_ep_t *ep)
{
	if (ep->role == DCC_ROLE_SERVICE) {
		DC_ERR("endpoint already listens");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ep->role == DCC_ROLE_CLIENT) {
		DC_ERR("a client endpoint cannot listen");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (ep->dev == NULL) {
		DC_ERR("no device set on the endpoint");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!dc_dev_on_dpu(ep->dev)) {
		DC_ERR("a comm channel service runs on the DPU side only");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (ep->dev_rep == NULL) {
		DC_ERR("no device representor set on the endpoint");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

/* The name is taken: by another service of ours, or squatted by another user. */
static doca_error_t name_taken(const char *pci, const char *name)
{
	char sock[128] = "?";
	uint32_t uid;
	int ret;

	fab_cc_name(pci, name, sock, sizeof(sock));
	ret = fab_cc_holder(pci, name, &uid);
	if (ret == 0 && uid != (uint32_t)geteuid()) {
		DC_ERR("service \"%s\": its socket name %s is held by uid %u, another user: refused", name, sock,
		       (unsigned)uid);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ret == 0)
		DC_ERR("service \"%s\" is already served for function %s (socket name %s)", name, pci, sock);
	else /* bound without listening, or a full backlog: its owner does not answer */
		DC_ERR("service \"%s\": its socket name %s is taken by a socket that does not accept", name, sock);
	return DOCA_ERROR_CONNECTION_ABORTED;
}

static doca_error_t open_listener(struct doca_comm_channel_ep_t *ep, const char *pci, const char *name)
{
	int ret = fab_cc_listen(pci, name, &ep->listen_fd);

	if (ret == -EADDRINUSE)
		return name_taken(pci, name);
	if (ret < 0) {
		DC_ERR("cannot register service \"%s\" (errno %d)", name, -ret);
		return DOCA_ERROR_INITIALIZATION;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_listen(struct doca_comm_channel_ep_t *local_ep, const char *name)
{
	char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	doca_error_t ret;

	DCC_CHECK_ARGS(local_ep != NULL && name != NULL);
	ret = check_name(name);
	if (ret == DOCA_SUCCESS)
		ret = check_service_config(local_ep);
	if (ret == DOCA_SUCCESS)
		ret = doca_devinfo_rep_get_pci_addr_str(doca_dev_rep_as_devinfo(local_ep->dev_rep), pci);
	if (ret == DOCA_SUCCESS)
		ret = open_listener(local_ep, pci, name);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = dcc_events_open(local_ep);
	if (ret != DOCA_SUCCESS)
		goto err_close;
	strcpy(local_ep->name, name); /* length checked above */
	local_ep->role = DCC_ROLE_SERVICE;
	return DOCA_SUCCESS;

err_close:
	close(local_ep->listen_fd);
	local_ep->listen_fd = -1;
	return ret;
}

static doca_error_t check_client_config(const struct doca_comm_channel_ep_t *ep)
{
	if (ep->role == DCC_ROLE_SERVICE) {
		DC_ERR("a service endpoint cannot connect");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (ep->peers != NULL) {
		DC_ERR("endpoint is already connected");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ep->dev == NULL) {
		DC_ERR("no device set on the endpoint");
		return DOCA_ERROR_BAD_STATE;
	}
	if (dc_dev_on_dpu(ep->dev)) {
		DC_ERR("a comm channel client runs on the host side only");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

/* A service that refuses may answer and close before the HELLO is out; its answer is still readable. */
static void log_refusal(int fd, const char *name)
{
	struct fab_cc_hs hs;

	if (fab_cc_hs_recv(fd, &hs) == 0 && hs.type == FAB_CC_REJECT && hs.status == FAB_CC_REJ_FULL)
		DC_ERR("service \"%s\" has its maximum number of clients", name);
	else
		DC_ERR("service \"%s\" closed the connection", name);
}

/* The socket connection, then the HELLO; the answer is read later, without waiting. */
static doca_error_t open_connection(struct doca_comm_channel_ep_t *ep, const char *pci, const char *name, int *fd)
{
	struct fab_cc_hs hello = { .version = FAB_CC_VERSION, .type = FAB_CC_HELLO,
				   .max_msg_size = ep->max_msg_size, .pid = (uint32_t)getpid() };
	char sock[128] = "?";
	uint32_t holder = 0;
	int ret = fab_cc_connect(pci, name, fd, &holder);

	if (ret == -EPERM) {
		fab_cc_name(pci, name, sock, sizeof(sock));
		DC_ERR("service \"%s\" of function %s: its socket name %s is held by uid %u, another user: refused, "
		       "nothing sent", name, pci, sock, (unsigned)holder);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ret < 0) {
		DC_ERR("cannot connect to service \"%s\" of function %s: %s", name, pci,
		       ret == -ECONNREFUSED ? "nobody listens" : ret == -ETIMEDOUT ? "service does not accept" :
										     "socket error");
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (fab_cc_set_queue(*fd, ep->send_queue_size, ep->max_msg_size) < 0)
		DC_WARN("cannot size the send queue; kernel default kept");
	if (fab_cc_hs_send(*fd, &hello) < 0) {
		log_refusal(*fd, name);
		close(*fd);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_connect(struct doca_comm_channel_ep_t *local_ep, const char *name,
					  struct doca_comm_channel_addr_t **peer_addr)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct doca_comm_channel_addr_t *peer;
	doca_error_t ret;
	int fd;

	DCC_CHECK_ARGS(local_ep != NULL && name != NULL && peer_addr != NULL);
	ret = check_name(name);
	if (ret == DOCA_SUCCESS)
		ret = check_client_config(local_ep);
	if (ret == DOCA_SUCCESS)
		ret = doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(local_ep->dev), pci);
	if (ret == DOCA_SUCCESS)
		ret = dcc_events_open(local_ep);
	if (ret == DOCA_SUCCESS)
		ret = open_connection(local_ep, pci, name, &fd);
	if (ret != DOCA_SUCCESS)
		return ret;
	peer = dcc_peer_new(local_ep, fd);
	if (peer == NULL)
		return DOCA_ERROR_NO_MEMORY;
	strcpy(local_ep->name, name);
	local_ep->role = DCC_ROLE_CLIENT;
	*peer_addr = peer;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_disconnect(struct doca_comm_channel_ep_t *local_ep,
					     struct doca_comm_channel_addr_t *peer_addr)
{
	DCC_CHECK_ARGS(local_ep != NULL);
	if (peer_addr == NULL || !dcc_peer_is_member(local_ep, peer_addr)) {
		DC_ERR("no such connection on this endpoint");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	dcc_peer_unlink(peer_addr);
	dcc_peer_free(peer_addr);
	return DOCA_SUCCESS;
}
