/*
 * fxd_queue — the queue-access helpers of libflexio-dev that only read or
 * write queue memory: CQE and EQE fields, doorbell records, receive WQE
 * addresses, and the send WQE segments in the mlx5 PRM layout, which the
 * emulated device's queue engine executes as it executes a verbs WQE.
 */
#include <string.h>

#include <libflexio-dev/flexio_dev_queue_access.h>

#define FXD_INLINE_SEG 0x80000000u /* byte_count's bit for inline data */

/*
 * The device stores op_own last, with release order: read with acquire, a
 * poller that finds the owner bit it expects may read the rest of the CQE.
 */
uint8_t flexio_dev_cqe_get_opcode(struct flexio_dev_cqe64 *cqe)
{
	return __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE) >> 4;
}

uint8_t flexio_dev_cqe_get_owner(struct flexio_dev_cqe64 *cqe)
{
	return __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE) & 1;
}

uint32_t flexio_dev_cqe_get_qpn(struct flexio_dev_cqe64 *cqe)
{
	return be32_to_cpu(cqe->qpn) & 0xffffffu;
}

uint16_t flexio_dev_cqe_get_wqe_counter(struct flexio_dev_cqe64 *cqe)
{
	return be16_to_cpu(cqe->wqe_counter);
}

uint32_t flexio_dev_cqe_get_byte_cnt(struct flexio_dev_cqe64 *cqe)
{
	return be32_to_cpu(cqe->byte_cnt);
}

uint32_t flexio_dev_eqe_get_cqn(struct flexio_dev_eqe *eqe)
{
	return be32_to_cpu(eqe->event_data.cqn) & 0xffffffu;
}

uint8_t flexio_dev_eqe_get_owner(struct flexio_dev_eqe *eqe)
{
	return __atomic_load_n(&eqe->owner, __ATOMIC_ACQUIRE) & 1;
}

void *flexio_dev_rwqe_get_addr(struct flexio_dev_wqe_rcv_data_seg *rwqe)
{
	return (void *)(uintptr_t)be64_to_cpu(rwqe->addr);
}

/* Doorbell records are big-endian counters the device reads (release: the ring's contents first). */
flexio_dev_status_t flexio_dev_dbr_cq_set_ci(uint32_t *cq_dbr, uint32_t ci)
{
	__atomic_store_n(cq_dbr, cpu_to_be32(ci & 0xffffffu), __ATOMIC_RELEASE);
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_dbr_rq_inc_pi(uint32_t *rq_dbr)
{
	uint32_t pi = be32_to_cpu(__atomic_load_n(rq_dbr, __ATOMIC_RELAXED));

	__atomic_store_n(rq_dbr, cpu_to_be32((pi + 1) & 0xffffu), __ATOMIC_RELEASE);
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_dbr_sq_set_pi(uint32_t *sq_dbr, uint32_t pi)
{
	__atomic_store_n(sq_dbr, cpu_to_be32(pi & 0xffffu), __ATOMIC_RELEASE);
	return FLEXIO_DEV_STATUS_SUCCESS;
}

/* The opcode, its modifier and the WQE's size in 16-byte segments of each control-segment type. */
static int fxd_ctrl_shape(flexio_ctrl_seg_t t, uint8_t *op, uint8_t *mod, uint8_t *ds)
{
	static const struct {
		uint8_t op, mod, ds;
	} shape[] = {
		[FLEXIO_CTRL_SEG_SEND_EN] = { MLX5_CTRL_SEG_OPCODE_SEND, 0, 3 },
		[FLEXIO_CTRL_SEG_SEND_RC] = { MLX5_CTRL_SEG_OPCODE_SEND, 0, 2 },
		[FLEXIO_CTRL_SEG_LDMA] = { MLX5_CTRL_SEG_OPCODE_LOCAL_MMO, MLX5_CTRL_SEGMENT_OPC_MOD_LOCAL_MMO_LOCAL_DMA, 4 },
		[FLEXIO_CTRL_SEG_RDMA_WRITE] = { MLX5_CTRL_SEG_OPCODE_RDMA_WRITE, 0, 3 },
		[FLEXIO_CTRL_SEG_RDMA_READ] = { MLX5_CTRL_SEG_OPCODE_RDMA_READ, 0, 3 },
		[FLEXIO_CTRL_SEG_ATOMIC_COMPARE_AND_SWAP] = { MLX5_CTRL_SEG_OPCODE_ATOMIC_COMPARE_AND_SWAP, 0, 4 },
		[FLEXIO_CTRL_SEG_LSO] = { MLX5_CTRL_SEG_OPCODE_LSO, 0, 4 },
		[FLEXIO_CTRL_SEG_NOP] = { MLX5_CTRL_SEG_OPCODE_NOP, 0, 1 },
		[FLEXIO_CTRL_SEG_RDMA_WRITE_IMM] = { MLX5_CTRL_SEG_OPCODE_RDMA_WRITE_WITH_IMMEDIATE, 0, 3 },
		[FLEXIO_CTRL_SEG_TRANSPOSE] = { MLX5_CTRL_SEG_OPCODE_LOCAL_MMO, MLX5_CTRL_SEGMENT_OPC_MOD_LOCAL_MMO_TRANSPOSE,
						 4 },
	};

	if ((unsigned)t >= sizeof(shape) / sizeof(shape[0]) || shape[t].ds == 0)
		return -1;
	*op = shape[t].op;
	*mod = shape[t].mod;
	*ds = shape[t].ds;
	return 0;
}

flexio_dev_status_t flexio_dev_swqe_seg_ctrl_set(union flexio_dev_sqe_seg *swqe, uint32_t sq_pi, uint32_t sq_number,
						 uint32_t ce, flexio_ctrl_seg_t ctrl_seg_type)
{
	uint8_t op, mod, ds;

	if (swqe == NULL || ce > MLX5_CTRL_SEG_CE_CQE_AND_EQE || fxd_ctrl_shape(ctrl_seg_type, &op, &mod, &ds) != 0)
		return FLEXIO_DEV_STATUS_FAILED;
	swqe->ctrl.idx_opcode = cpu_to_be32(((uint32_t)mod << 24) | ((sq_pi & 0xffffu) << 8) | op);
	swqe->ctrl.qpn_ds = cpu_to_be32((sq_number << 8) | ds);
	swqe->ctrl.signature_fm_ce_se = cpu_to_be32(ce << 2);
	swqe->ctrl.general_id = 0;
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_swqe_seg_eth_set(union flexio_dev_sqe_seg *swqe, uint16_t cs_swp_flags, uint16_t mss,
						uint16_t inline_hdr_bsz, uint8_t inline_hdrs[2])
{
	if (swqe == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	memset(&swqe->eth, 0, sizeof(swqe->eth));
	swqe->eth.cs_swp_flags = cpu_to_be16(cs_swp_flags);
	swqe->eth.mss = cpu_to_be16(mss);
	swqe->eth.inline_hdr_bsz = cpu_to_be16(inline_hdr_bsz);
	if (inline_hdrs != NULL)
		memcpy(swqe->eth.inline_hdrs, inline_hdrs, sizeof(swqe->eth.inline_hdrs));
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_swqe_seg_rdma_set(union flexio_dev_sqe_seg *swqe, uint32_t rkey, uint64_t data_addr)
{
	if (swqe == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	swqe->rdma.raddr = cpu_to_be64(data_addr);
	swqe->rdma.rkey = cpu_to_be32(rkey);
	swqe->rdma.rsvd0 = 0;
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_swqe_seg_atomic_set(union flexio_dev_sqe_seg *swqe, uint64_t swap_or_add_data,
						   uint64_t compare_data)
{
	if (swqe == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	swqe->atomic.swap_or_add_data = cpu_to_be64(swap_or_add_data);
	swqe->atomic.compare_data = cpu_to_be64(compare_data);
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_swqe_seg_mem_ptr_data_set(union flexio_dev_sqe_seg *swqe, uint32_t data_sz,
							 uint32_t lkey, uint64_t data_addr)
{
	if (swqe == NULL || (data_sz & FXD_INLINE_SEG) != 0)
		return FLEXIO_DEV_STATUS_FAILED;
	swqe->mem_ptr_send_data.byte_count = cpu_to_be32(data_sz);
	swqe->mem_ptr_send_data.lkey = cpu_to_be32(lkey);
	swqe->mem_ptr_send_data.addr = cpu_to_be64(data_addr);
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_swqe_seg_data_set(union flexio_dev_sqe_seg *swqe, uint32_t data_sz, uint32_t lkey,
						 uint64_t data_addr)
{
	return flexio_dev_swqe_seg_mem_ptr_data_set(swqe, data_sz, lkey, data_addr);
}

/* Inline data: the byte count (with the inline bit), then the bytes, running on into the next segments. */
flexio_dev_status_t flexio_dev_swqe_seg_inline_data_set(union flexio_dev_sqe_seg *swqe, uint32_t data_sz,
							uint32_t *data)
{
	if (swqe == NULL || (data == NULL && data_sz != 0) || (data_sz & FXD_INLINE_SEG) != 0)
		return FLEXIO_DEV_STATUS_FAILED;
	swqe->inline_send_data.byte_count = cpu_to_be32(data_sz | FXD_INLINE_SEG);
	if (data_sz != 0)
		memcpy(swqe->inline_send_data.data_and_padding, data, data_sz);
	return FLEXIO_DEV_STATUS_SUCCESS;
}
