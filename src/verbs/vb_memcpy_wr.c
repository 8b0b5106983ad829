/*
 * vb_memcpy_wr — mlx5dv_wr_memcpy: a DMA MMO WQE on an RC QP of
 * mlx5dv_create_qp with MLX5DV_QP_EX_WITH_MEMCPY, as rdma-core v44's mlx5
 * builds it: ctrl (MMO opcode, DMA opmod), the MMO segment, a source and a
 * destination data segment of one length (0 for 2 GiB). The device copies
 * between two keys of the QP's domain and completes with MLX5DV_WC_MEMCPY.
 */
#include <endian.h>
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

/* The largest copy: a BlueField-2's DMA MMO (log_dma_mmo_max_size 31), as the DOCA DMA context's. */
#define VB_MEMCPY_MAX (1ull << 31)

uint64_t vb_dv_memcpy_max(void)
{
	return VB_MEMCPY_MAX;
}

void vb_dv_wr_memcpy(struct mlx5dv_qp_ex *d, uint32_t dest_lkey, uint64_t dest_addr, uint32_t src_lkey,
		     uint64_t src_addr, size_t length)
{
	struct vb_qp *qp = (struct vb_qp *)((char *)d - offsetof(struct vb_qp, dv));
	struct hw_wqe_data_seg *seg;
	uint32_t len;

	if (qp->wr_err != 0)
		return;
	if (!qp->dv_memcpy) {
		vb_log_unsupported("mlx5dv_wr_memcpy without MLX5DV_QP_EX_WITH_MEMCPY at mlx5dv_create_qp");
		vb_wr_fail(qp, EOPNOTSUPP);
		return;
	}
	if (length == 0 || length > VB_MEMCPY_MAX) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	if (!vb_wr_open(qp, HW_WQE_MMO, MLX5DV_WC_MEMCPY, true))
		return;
	qp->wr_opmod = HW_MMO_OPMOD_DMA;
	len = length == VB_MEMCPY_MAX ? 0 : (uint32_t)length; /* 2 GiB is 0, as mlx5 writes it */
	/* The MMO segment: no control bits; the domain's opaque buffer it names is not read by a copy. */
	memset(qp->wr_p + qp->wr_off, 0, HW_WQE_DS_BYTES);
	qp->wr_off += HW_WQE_DS_BYTES;
	seg = (struct hw_wqe_data_seg *)(void *)(qp->wr_p + qp->wr_off);
	hw_data_seg_set(&seg[0], len, src_lkey, src_addr);
	hw_data_seg_set(&seg[1], len, dest_lkey, dest_addr);
	qp->wr_off += 2 * (uint32_t)sizeof(*seg);
	vb_wr_close(qp, 0);
}
