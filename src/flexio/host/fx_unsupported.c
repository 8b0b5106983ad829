/*
 * fx_unsupported — the FlexIO host calls softdpu does not run yet: each
 * says so in the log (once) and fails as the SDK fails, so a program links
 * and learns at run time (docs/STATUS.md lists them).
 */
#include <stdatomic.h>

#include "fx_int.h"

/* Logs name as not supported, once per function. */
#define FX_UNSUPPORTED(name)                                                                                   \
	do {                                                                                                   \
		static atomic_flag said = ATOMIC_FLAG_INIT;                                                    \
		if (!atomic_flag_test_and_set(&said))                                                          \
			BASE_WARN("%s: not supported by softdpu yet (FLEXIO_STATUS_FAILED)", name);            \
	} while (0)

uint32_t flexio_emu_db_to_cq_ctx_get_id(struct flexio_emu_db_to_cq_ctx *emu_db_to_cq_ctx)
{
	(void)emu_db_to_cq_ctx;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_emu_db_to_cq_map(struct ibv_context *ibv_ctx, uint32_t emu_dev_vhca_id,
                                      uint32_t emu_dev_queue_id, struct flexio_cq *cq,
                                      struct flexio_emu_db_to_cq_ctx **emu_db_to_cq_ctx)
{
	(void)cq;
	(void)emu_dev_queue_id;
	(void)emu_dev_vhca_id;
	(void)ibv_ctx;
	if (emu_db_to_cq_ctx != NULL)
		*emu_db_to_cq_ctx = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_emu_db_to_cq_unmap(struct flexio_emu_db_to_cq_ctx *emu_db_to_cq_ctx)
{
	(void)emu_db_to_cq_ctx;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_emulated_device_msix_create(struct flexio_process *process, struct ibv_context *target_ibv_ctx,
                                                 uint8_t direct_mode, uint32_t target_uar_id, uint16_t msix_id,
                                                 struct flexio_emu_device_msix_map *map, struct flexio_msix **msix)
{
	(void)map;
	(void)msix_id;
	(void)target_uar_id;
	(void)direct_mode;
	(void)target_ibv_ctx;
	(void)process;
	if (msix != NULL)
		*msix = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_emulated_device_msix_destroy(struct flexio_msix *msix)
{
	(void)msix;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_emulated_device_msix_map_create(struct flexio_process *process, uint32_t device_emulation_id,
                                                     uint16_t max_msix, struct flexio_emu_device_msix_map **map)
{
	(void)max_msix;
	(void)device_emulation_id;
	(void)process;
	if (map != NULL)
		*map = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_emulated_device_msix_map_free(struct flexio_emu_device_msix_map *map)
{
	(void)map;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

