/*
 * vb_dvcq — mlx5dv_create_cq: the CQE size (64 or 128 bytes), 128-byte
 * padding and CQE compression, checked as rdma-core v44's mlx5 create_cq
 * and the kernel's mlx5_ib check them on a BlueField-2.
 *
 * A 128-byte CQE is written by the device with the 64-byte CQE in the
 * entry's last 64 bytes (hw_cq.h), so the poll and an mlx5dv_init_obj
 * program read it where mlx5 does. Padding (CQE_PAD) asks the card to write
 * 128-byte CQEs whole even when a cache line is 64 bytes: this device always
 * writes whole entries, so the flag changes nothing it writes.
 *
 * Compression is opportunistic on the card: it merges CQEs into mini-CQEs
 * only when a burst of them waits to be written. This device writes each CQE
 * as its work completes and never merges them, as a card under low load
 * does, so a CQ created with compression is read with the ordinary poll and
 * the caps reported are formats it accepts, not a promise of mini-CQEs.
 */
#include <errno.h>
#include <stdlib.h>

#include "vb_export.h"
#include "vb_int.h"

#define VB_DVCQ_COMP_MASK                                                                          \
	(MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE | MLX5DV_CQ_INIT_ATTR_MASK_FLAGS |                 \
	 MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE)
#define VB_DVCQ_FORMATS                                                                            \
	(MLX5DV_CQE_RES_FORMAT_HASH | MLX5DV_CQE_RES_FORMAT_CSUM | MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX)
#define VB_DVCQ_COMP_MAX_NUM 64 /* cqe_compression_max_num of a ConnectX-6 Dx / BlueField-2 */

uint64_t vb_dvcq_ctx_flags(void)
{
	return MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP | MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD;
}

struct mlx5dv_cqe_comp_caps vb_dvcq_comp_caps(void)
{
	return (struct mlx5dv_cqe_comp_caps){ .max_num = VB_DVCQ_COMP_MAX_NUM, .supported_format = VB_DVCQ_FORMATS };
}

/* mlx5's get_cqe_size: the attribute, else MLX5_CQE_SIZE, else 64; 0 for a size it refuses. */
static uint32_t vb_dvcq_size_log(const struct mlx5dv_cq_init_attr *dv)
{
	const char *env;
	long size = 64;

	if (dv != NULL && (dv->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE)) {
		size = dv->cqe_size;
	} else {
		env = getenv("MLX5_CQE_SIZE");
		if (env != NULL)
			size = atoi(env);
	}
	return size == 64 ? 6 : size == 128 ? 7 : 0;
}

/*
 * Compression: the provider wants a format the device lists (any bit of
 * it); the kernel then wants exactly one format it knows (a mix is EINVAL).
 */
static int vb_dvcq_comp_ok(const struct mlx5dv_cq_init_attr *dv)
{
	uint8_t f = dv->cqe_comp_res_format;

	if (!(f & VB_DVCQ_FORMATS))
		return EINVAL;
	if (f != MLX5DV_CQE_RES_FORMAT_HASH && f != MLX5DV_CQE_RES_FORMAT_CSUM &&
	    f != MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX)
		return EINVAL;
	return 0;
}

int vb_dvcq_attr_ok(const struct mlx5dv_cq_init_attr *dv, uint32_t *cqe_log)
{
	uint32_t cl;
	int rc;

	if (dv != NULL && (dv->comp_mask & ~(uint64_t)VB_DVCQ_COMP_MASK))
		return EINVAL;
	cl = vb_dvcq_size_log(dv);
	if (cl == 0)
		return EINVAL;
	if (dv != NULL && (dv->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE)) {
		rc = vb_dvcq_comp_ok(dv);
		if (rc != 0)
			return rc;
	}
	if (dv != NULL && (dv->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_FLAGS)) {
		if (dv->flags & ~(uint32_t)(MLX5DV_CQ_INIT_ATTR_FLAGS_RESERVED - 1))
			return EINVAL;
		/* Padding is of 128-byte CQEs only. */
		if ((dv->flags & MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD) && cl != 7)
			return EINVAL;
	}
	*cqe_log = cl;
	return 0;
}

struct ibv_cq_ex *vb_dv_create_cq(struct ibv_context *c, struct ibv_cq_init_attr_ex *a, struct mlx5dv_cq_init_attr *dv)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct vb_cq *cq;

	if (ctx == NULL || a == NULL) {
		errno = EINVAL;
		return NULL;
	}
	cq = vb_cq_create(ctx, a, dv);
	return cq != NULL ? &cq->cqx : NULL;
}
