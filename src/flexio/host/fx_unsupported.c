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

flexio_status flexio_cq_create(struct flexio_process *process, struct ibv_context *ibv_ctx,
                               const struct flexio_cq_attr *fattr, struct flexio_cq **cq)
{
	(void)fattr;
	(void)ibv_ctx;
	(void)process;
	if (cq != NULL)
		*cq = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_cq_destroy(struct flexio_cq *cq)
{
	(void)cq;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_cq_get_cq_num(struct flexio_cq *cq)
{
	(void)cq;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_cq_modify_moderation(struct flexio_cq *cq, uint16_t max_count, uint16_t period, uint16_t mode)
{
	(void)mode;
	(void)period;
	(void)max_count;
	(void)cq;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_cq_query_moderation(struct flexio_cq *cq, uint16_t *max_count, uint16_t *period, uint16_t *mode)
{
	(void)mode;
	(void)period;
	(void)max_count;
	(void)cq;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_device_mkey_create(struct flexio_process *process, struct flexio_mkey_attr *fattr,
                                        struct flexio_mkey **mkey)
{
	(void)fattr;
	(void)process;
	if (mkey != NULL)
		*mkey = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_device_mkey_destroy(struct flexio_mkey *mkey)
{
	(void)mkey;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

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

flexio_status flexio_event_handler_create(struct flexio_process *process, struct flexio_event_handler_attr *fattr,
                                          const struct flexio_window *window, const struct flexio_outbox *outbox,
                                          struct flexio_event_handler **event_handler_ptr)
{
	(void)outbox;
	(void)window;
	(void)fattr;
	(void)process;
	if (event_handler_ptr != NULL)
		*event_handler_ptr = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_event_handler_destroy(struct flexio_event_handler *event_handler)
{
	(void)event_handler;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_event_handler_get_id(struct flexio_event_handler *event_handler)
{
	(void)event_handler;
	FX_UNSUPPORTED(__func__);
	return 0;
}

struct flexio_thread *flexio_event_handler_get_thread(struct flexio_event_handler *event_handler)
{
	(void)event_handler;
	FX_UNSUPPORTED(__func__);
	return NULL;
}

flexio_status flexio_event_handler_run(struct flexio_event_handler *event_handler, uint64_t user_arg)
{
	(void)user_arg;
	(void)event_handler;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_mkey_get_id(struct flexio_mkey *mkey)
{
	(void)mkey;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_outbox_create(struct flexio_process *process, struct ibv_context *other_ctx,
                                   struct flexio_uar *uar, struct flexio_outbox **outbox)
{
	(void)uar;
	(void)other_ctx;
	(void)process;
	if (outbox != NULL)
		*outbox = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_outbox_destroy(struct flexio_outbox *outbox)
{
	(void)outbox;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_outbox_get_id(struct flexio_outbox *outbox)
{
	(void)outbox;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_qp_create(struct flexio_process *process, struct ibv_context *ibv_ctx,
                               struct flexio_qp_attr *qp_fattr, struct flexio_qp **qp_ptr)
{
	(void)qp_fattr;
	(void)ibv_ctx;
	(void)process;
	if (qp_ptr != NULL)
		*qp_ptr = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_qp_destroy(struct flexio_qp *qp)
{
	(void)qp;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_qp_get_qp_num(struct flexio_qp *qp)
{
	(void)qp;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_qp_modify(struct flexio_qp *qp, struct flexio_qp_attr *fattr,
                               struct flexio_qp_attr_opt_param_mask *mask)
{
	(void)mask;
	(void)fattr;
	(void)qp;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_rq_create(struct flexio_process *process, struct ibv_context *ibv_ctx, uint32_t cq_num,
                               const struct flexio_wq_attr *fattr, struct flexio_rq **flexio_rq_ptr)
{
	(void)fattr;
	(void)cq_num;
	(void)ibv_ctx;
	(void)process;
	if (flexio_rq_ptr != NULL)
		*flexio_rq_ptr = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_rq_destroy(struct flexio_rq *flexio_rq)
{
	(void)flexio_rq;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

struct mlx5dv_devx_obj *flexio_rq_get_tir(struct flexio_rq *rq)
{
	(void)rq;
	FX_UNSUPPORTED(__func__);
	return NULL;
}

uint32_t flexio_rq_get_wq_num(struct flexio_rq *rq)
{
	(void)rq;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_sq_create(struct flexio_process *process, struct ibv_context *ibv_ctx, uint32_t cq_num,
                               const struct flexio_wq_attr *fattr, struct flexio_sq **flexio_sq_ptr)
{
	(void)fattr;
	(void)cq_num;
	(void)ibv_ctx;
	(void)process;
	if (flexio_sq_ptr != NULL)
		*flexio_sq_ptr = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_sq_destroy(struct flexio_sq *flexio_sq)
{
	(void)flexio_sq;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_sq_get_wq_num(struct flexio_sq *sq)
{
	(void)sq;
	FX_UNSUPPORTED(__func__);
	return 0;
}

flexio_status flexio_window_create(struct flexio_process *process, struct ibv_pd *pd, struct flexio_window **window)
{
	(void)pd;
	(void)process;
	if (window != NULL)
		*window = NULL;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_window_destroy(struct flexio_window *window)
{
	(void)window;
	FX_UNSUPPORTED(__func__);
	return FLEXIO_STATUS_FAILED;
}

uint32_t flexio_window_get_id(struct flexio_window *window)
{
	(void)window;
	FX_UNSUPPORTED(__func__);
	return 0;
}
