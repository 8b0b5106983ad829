/*
 * fx_uar — FlexIO UARs: a DevX UAR of the process's device, which device
 * queues and printing name by its page id.
 */
#include <stdlib.h>

#include "fx_int.h"

struct flexio_uar {
	struct flexio_process *process;
	struct mlx5dv_devx_uar *devx;
	uint32_t id;
};

flexio_status flexio_uar_create(struct flexio_process *process, struct mlx5dv_devx_uar *devx_uar,
				struct flexio_uar **flexio_uar)
{
	struct flexio_uar *u;

	if (process == NULL || devx_uar == NULL || flexio_uar == NULL) {
		BASE_ERR("invalid argument (process, DevX UAR, UAR pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL)
		return FLEXIO_STATUS_FAILED;
	u->process = process;
	u->devx = devx_uar;
	u->id = devx_uar->page_id;
	*flexio_uar = u;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_uar_destroy(struct flexio_uar *uar)
{
	free(uar); /* the DevX UAR stays the caller's */
	return FLEXIO_STATUS_SUCCESS;
}

flexio_uar_device_id flexio_uar_get_id(struct flexio_uar *uar)
{
	return uar != NULL ? uar->id : 0;
}
