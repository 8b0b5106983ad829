/*
 * cc_caps — comm channel limits a device offers. They are the transport's,
 * the same for every function of the emulated card.
 */
#include "cc_priv.h"
#include "hw_topology.h"

doca_error_t doca_comm_channel_get_max_service_name_len(uint32_t *max_service_name_len)
{
	DCC_CHECK_ARGS(max_service_name_len != NULL);
	*max_service_name_len = DCC_MAX_SERVICE_NAME_LEN;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_get_max_message_size(struct doca_devinfo *devinfo, uint32_t *max_message_size)
{
	DCC_CHECK_ARGS(devinfo != NULL && max_message_size != NULL);
	*max_message_size = DCC_MAX_MSG_SIZE;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_get_max_send_queue_size(struct doca_devinfo *devinfo, uint32_t *max_send_queue_size)
{
	DCC_CHECK_ARGS(devinfo != NULL && max_send_queue_size != NULL);
	*max_send_queue_size = DCC_MAX_QUEUE_SIZE;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_get_max_recv_queue_size(struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size)
{
	DCC_CHECK_ARGS(devinfo != NULL && max_recv_queue_size != NULL);
	*max_recv_queue_size = DCC_MAX_QUEUE_SIZE;
	return DOCA_SUCCESS;
}

doca_error_t doca_comm_channel_get_service_max_num_connections(struct doca_devinfo *devinfo,
							       uint32_t *max_num_connections)
{
	DCC_CHECK_ARGS(devinfo != NULL && max_num_connections != NULL);
	/* A process lists only its own side's functions, so the process side is the device's. */
	if (hw_topo_side() != HW_SIDE_DPU) {
		DC_ERR("the number of service connections is a DPU-side capability");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	*max_num_connections = DCC_MAX_CONNECTIONS;
	return DOCA_SUCCESS;
}
