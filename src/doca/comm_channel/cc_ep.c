/*
 * cc_ep — endpoint life cycle and configuration.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cc_priv.h"
#include "dc_dev.h"

doca_error_t doca_comm_channel_ep_create(struct doca_comm_channel_ep_t **ep)
{
	struct doca_comm_channel_ep_t *e;

	DCC_CHECK_ARGS(ep != NULL);
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return DOCA_ERROR_NO_MEMORY;
	e->max_msg_size = DCC_MAX_MSG_SIZE;
	e->send_queue_size = DCC_DEFAULT_QUEUE_SIZE;
	e->recv_queue_size = DCC_DEFAULT_QUEUE_SIZE;
	e->listen_fd = -1;
	e->recv_epfd = e->send_epfd = e->svc_epfd = -1;
	*ep = e;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_destroy(struct doca_comm_channel_ep_t *local_ep)
{
	if (local_ep == NULL) {
		DC_ERR("no endpoint to destroy");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	while (local_ep->peers != NULL) {
		struct doca_comm_channel_addr_t *p = local_ep->peers;

		dcc_peer_unlink(p);
		dcc_peer_free(p);
	}
	if (local_ep->listen_fd >= 0)
		close(local_ep->listen_fd);
	dcc_events_close(local_ep);
	free(local_ep->peer_list);
	dc_dev_rep_put(local_ep->dev_rep);
	dc_dev_put(local_ep->dev);
	free(local_ep);
	return DOCA_SUCCESS;
}

/* Configuration is frozen once the endpoint listens or connects. */
static doca_error_t check_configurable(const struct doca_comm_channel_ep_t *ep)
{
	if (ep->role != DCC_ROLE_NONE) {
		DC_ERR("endpoint is already active");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_device(struct doca_comm_channel_ep_t *ep, struct doca_dev **device)
{
	DCC_CHECK_ARGS(ep != NULL && device != NULL);
	*device = ep->dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_device_rep(struct doca_comm_channel_ep_t *ep, struct doca_dev_rep **device_rep)
{
	DCC_CHECK_ARGS(ep != NULL && device_rep != NULL);
	*device_rep = ep->dev_rep;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_max_msg_size(struct doca_comm_channel_ep_t *ep, uint16_t *max_msg_size)
{
	DCC_CHECK_ARGS(ep != NULL && max_msg_size != NULL);
	*max_msg_size = ep->max_msg_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_send_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t *send_queue_size)
{
	DCC_CHECK_ARGS(ep != NULL && send_queue_size != NULL);
	*send_queue_size = ep->send_queue_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_get_recv_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t *recv_queue_size)
{
	DCC_CHECK_ARGS(ep != NULL && recv_queue_size != NULL);
	*recv_queue_size = ep->recv_queue_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_set_device(struct doca_comm_channel_ep_t *ep, struct doca_dev *device)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(ep != NULL && device != NULL);
	ret = check_configurable(ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* The reference keeps doca_dev_close() from pulling the device from under the endpoint. */
	dc_dev_get(device);
	dc_dev_put(ep->dev);
	ep->dev = device;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_set_device_rep(struct doca_comm_channel_ep_t *ep, struct doca_dev_rep *device_rep)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(ep != NULL && device_rep != NULL);
	ret = check_configurable(ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* Listen reads the representor's address: it must stay open while the endpoint has it. */
	dc_dev_rep_get(device_rep);
	dc_dev_rep_put(ep->dev_rep);
	ep->dev_rep = device_rep;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_set_max_msg_size(struct doca_comm_channel_ep_t *ep, uint16_t max_msg_size)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(ep != NULL);
	ret = check_configurable(ep);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (max_msg_size > DCC_MAX_MSG_SIZE) {
		DC_ERR("max_msg_size %u exceeds the channel's %u bytes", max_msg_size, DCC_MAX_MSG_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ep->max_msg_size = max_msg_size < DCC_MIN_MSG_SIZE ? DCC_MIN_MSG_SIZE : max_msg_size;
	return DOCA_SUCCESS;
}

/* Queue sizes are powers of two between the minimum and the maximum. */
static doca_error_t queue_size(uint16_t want, uint16_t *out)
{
	uint32_t q = DCC_MIN_QUEUE_SIZE;

	if (want > DCC_MAX_QUEUE_SIZE) {
		DC_ERR("queue size %u exceeds the channel's %u", want, DCC_MAX_QUEUE_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	while (q < want)
		q <<= 1;
	*out = (uint16_t)q;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_ep_set_send_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t send_queue_size)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(ep != NULL);
	ret = check_configurable(ep);
	return ret != DOCA_SUCCESS ? ret : queue_size(send_queue_size, &ep->send_queue_size);
}

doca_error_t doca_comm_channel_ep_set_recv_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t recv_queue_size)
{
	doca_error_t ret;

	DCC_CHECK_ARGS(ep != NULL);
	ret = check_configurable(ep);
	return ret != DOCA_SUCCESS ? ret : queue_size(recv_queue_size, &ep->recv_queue_size);
}
