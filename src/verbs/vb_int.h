/*
 * vb_int — what the files of libibverbs.so.1 share among themselves (never
 * exported, never seen by libmlx5.so.1).
 */
#ifndef VB_INT_H_
#define VB_INT_H_

#include <stddef.h>

#include "vb.h"

/* The devices of this side (vb_device.c): NULL when the topology was refused. */
struct vb_device *vb_devices(int *n);

/* The identity and limits every device reports (vb_query.c). */
void vb_device_attr(const struct vb_device *dev, struct ibv_device_attr *attr);
void vb_port_attr(const struct vb_device *dev, struct ibv_port_attr *attr);
int vb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr, size_t len);
int vb_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size);
int vb_query_device(struct ibv_context *c, struct ibv_device_attr *attr);
int vb_query_port_compat(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *attr);

/* Every ctx->ops and verbs_context slot points at a function (vb_ops.c). */
void vb_ops_fill(struct verbs_context *vctx);

/* The async event queue of a context (vb_async.c). */
int vb_async_init(struct vb_context *ctx);
void vb_async_fini(struct vb_context *ctx);

/* libmlx5's entries (vb_dv.c). */
extern const struct vb_dv_ops vb_dv_ops_impl;

/* Device limits, consistent with what hw enforces (see docs/STATUS.md). */
#define VB_MAX_QP 4096		  /* hw_ids: QPNs per device */
#define VB_MAX_CQ 4096		  /* hw_ids: CQNs per device */
#define VB_MAX_QP_WR 32768	  /* 1 << HW_QP_LOG_SQ_MAX basic blocks */
#define VB_MAX_SGE 30
#define VB_MAX_CQE 4194303	  /* (1 << HW_CQ_LOG_SIZE_MAX) - 1 */
#define VB_MAX_MR (256 * 4096)	  /* hw_mem: the mkey table's entries */
#define VB_GID_TBL_LEN 128
#define VB_PORT 1
#define VB_PKEY_DEFAULT 0xffff

#endif /* VB_INT_H_ */
