/*
 * softdpu — FlexIO SDK device queue access (libflexio-dev).
 *
 * The rings device code works on directly — CQEs, EQEs, receive WQEs and
 * the 16-byte segments of send WQEs — in the mlx5 PRM's byte layout (the
 * one softdpu's emulated device reads and writes, src/hw/hw_prm.h): every
 * field at the card's offset, multi-byte fields big-endian. The calls below
 * read and fill those fields and ring doorbells through the thread's outbox.
 */
#ifndef SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_QUEUE_ACCESS_H_
#define SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_QUEUE_ACCESS_H_

#include <linux/types.h> /* __be16, __be32, __be64 */
#include <stddef.h>
#include <stdint.h>

#include <libflexio-dev/flexio_dev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A send WQE basic block (64 bytes) is 2^LOG_SQE_NUM_SEGS segments of 16 bytes. */
#ifndef LOG_SQE_NUM_SEGS
#define LOG_SQE_NUM_SEGS 2
#endif

/* Byte order of the ring formats (big-endian) against the CPU's. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FLEXIO_DEV_BE_(bits, x) ((uint##bits##_t)(x))
#else
#define FLEXIO_DEV_BE_(bits, x) __builtin_bswap##bits((uint##bits##_t)(x))
#endif
#ifndef cpu_to_be16
#define cpu_to_be16(x) FLEXIO_DEV_BE_(16, x)
#endif
#ifndef be16_to_cpu
#define be16_to_cpu(x) FLEXIO_DEV_BE_(16, x)
#endif
#ifndef cpu_to_be32
#define cpu_to_be32(x) FLEXIO_DEV_BE_(32, x)
#endif
#ifndef be32_to_cpu
#define be32_to_cpu(x) FLEXIO_DEV_BE_(32, x)
#endif
#ifndef cpu_to_be64
#define cpu_to_be64(x) FLEXIO_DEV_BE_(64, x)
#endif
#ifndef be64_to_cpu
#define be64_to_cpu(x) FLEXIO_DEV_BE_(64, x)
#endif

/* ---- ring formats ---- */

/* An event queue entry (64 bytes); a completion event names its CQ in event_data.cqn. */
struct flexio_dev_eqe {
	uint8_t rsvd00;
	uint8_t type; /* event type (0: completion) */
	uint8_t rsvd02;
	uint8_t sub_type;
	uint8_t rsvd04[28];
	struct {
		__be32 rsvd00[6];
		__be32 cqn; /* CQ number in bits 23..0 */
	} event_data;
	__be16 rsvd3c;
	uint8_t signature;
	uint8_t owner; /* ownership in bit 0 */
};

/* A completion queue entry (64 bytes), as struct hw_cqe64 lays it out. */
struct flexio_dev_cqe64 {
	uint8_t rsvd00[2];
	__be16 wqe_id;
	uint8_t rsvd04[13];
	uint8_t ml_path;
	uint8_t rsvd12[4];
	__be16 slid;
	__be32 flags_rqpn; /* a UD receive's remote QP in bits 23..0 */
	uint8_t csum_ok;   /* L4/L3/L2 checksum-ok bits of a received packet */
	uint8_t l4_hdr_type_etc;
	__be16 vlan_info;
	__be32 srqn_uidx; /* SRQ number or user index in bits 23..0 */
	__be32 imm_inval_pkey;
	uint8_t app;
	uint8_t app_op;
	__be16 app_info;
	__be32 byte_cnt;
	__be32 rsvd48;	     /* timestamp, high word */
	__be32 err_syndrome; /* timestamp low word; an error CQE's vendor syndrome and syndrome */
	__be32 qpn;	     /* QP/SQ/RQ number in bits 23..0 */
	__be16 wqe_counter;
	uint8_t signature;
	volatile uint8_t op_own; /* opcode in bits 7..4, ownership in bit 0 */
};

/* A receive WQE (one scatter entry). */
struct flexio_dev_wqe_rcv_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};
/* The same receive WQE under the name the SDK reference gives it. */
#define flexio_dev_wqe_data_seg flexio_dev_wqe_rcv_data_seg

/* Send WQE segments, 16 bytes each; the first segment of a WQE is the control segment. */
struct flexio_dev_wqe_ctrl_seg {
	__be32 idx_opcode;	   /* opcode modifier 31..24, WQE index 23..8, opcode 7..0 */
	__be32 qpn_ds;		   /* SQ number 31..8, WQE size in 16-byte units 5..0 */
	__be32 signature_fm_ce_se; /* signature 31..24, fence 7..5, CQE mode (enum cq_ce_mode) 3..2, solicited 1 */
	__be32 general_id;	   /* immediate data, or the key to invalidate */
};

/* Checksum and software-parser flags of the Ethernet segment (cs_swp_flags). */
typedef enum {
	FLEXIO_ETH_SEG_L4CS = 0x8000,
	FLEXIO_ETH_SEG_L3CS = 0x4000,
	FLEXIO_ETH_SEG_L4CS_INNER = 0x2000,
	FLEXIO_ETH_SEG_L3CS_INNER = 0x1000,
	FLEXIO_ETH_SEG_TRAILER_ALIGN = 0x0200,
	FLEXIO_ETH_SEG_SWP_OUTER_L4_TYPE = 0x0040,
	FLEXIO_ETH_SEG_SWP_OUTER_L3_TYPE = 0x0020,
	FLEXIO_ETH_SEG_SWP_INNER_L4_TYPE = 0x0002,
	FLEXIO_ETH_SEG_SWP_INNER_L3_TYPE = 0x0001,
} flexio_dev_wqe_eth_seg_cs_swp_flags_t;

struct flexio_dev_wqe_eth_seg {
	__be32 rsvd0;
	__be16 cs_swp_flags;
	__be16 mss; /* LSO only */
	__be32 rsvd2;
	__be16 inline_hdr_bsz;
	uint8_t inline_hdrs[2]; /* the first two bytes of the inlined headers */
};

struct flexio_dev_wqe_inline_data_seg {
	uint8_t inline_data[16];
};

/* The remote side of an RDMA operation. */
struct flexio_dev_wqe_rdma_seg {
	__be64 raddr;
	__be32 rkey;
	__be32 rsvd0;
};

struct flexio_dev_wqe_atomic_seg {
	__be64 swap_or_add_data;
	__be64 compare_data;
};

/* A gather entry. */
struct flexio_dev_wqe_mem_ptr_send_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};

/* Up to 12 bytes of data inline. */
struct flexio_dev_wqe_inline_send_data_seg {
	__be32 byte_count;
	__be32 data_and_padding[3];
};

/* One 16-byte segment of a send WQE, whichever kind it is. */
union flexio_dev_sqe_seg {
	struct flexio_dev_wqe_ctrl_seg ctrl;
	struct flexio_dev_wqe_eth_seg eth;
	struct flexio_dev_wqe_inline_data_seg inline_data;
	struct flexio_dev_wqe_rdma_seg rdma;
	struct flexio_dev_wqe_mem_ptr_send_data_seg mem_ptr_send_data;
	struct flexio_dev_wqe_inline_send_data_seg inline_send_data;
	struct flexio_dev_wqe_atomic_seg atomic;
};

#ifdef __cplusplus
#define FLEXIO_DEV_LAYOUT_ static_assert
#else
#define FLEXIO_DEV_LAYOUT_ _Static_assert
#endif
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_eqe) == 64, "EQE is 64 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_eqe, event_data) == 0x20, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_eqe, event_data.cqn) == 0x38, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_eqe, owner) == 0x3f, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_cqe64) == 64, "CQE is 64 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, wqe_id) == 2, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, slid) == 22, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, flags_rqpn) == 24, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, csum_ok) == 28, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, srqn_uidx) == 32, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, imm_inval_pkey) == 36, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, byte_cnt) == 44, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, err_syndrome) == 52, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, qpn) == 56, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, wqe_counter) == 60, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, signature) == 62, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_cqe64, op_own) == 63, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_rcv_data_seg) == 16, "receive WQE is 16 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_rcv_data_seg, addr) == 8, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_ctrl_seg) == 16, "control segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_ctrl_seg, qpn_ds) == 4, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_ctrl_seg, signature_fm_ce_se) == 8, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_ctrl_seg, general_id) == 12, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_eth_seg) == 16, "Ethernet segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_eth_seg, cs_swp_flags) == 4, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_eth_seg, mss) == 6, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_eth_seg, inline_hdr_bsz) == 12, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_eth_seg, inline_hdrs) == 14, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_inline_data_seg) == 16, "inline data segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_rdma_seg) == 16, "RDMA segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_rdma_seg, rkey) == 8, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_atomic_seg) == 16, "atomic segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_atomic_seg, compare_data) == 8, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_mem_ptr_send_data_seg) == 16, "data segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_mem_ptr_send_data_seg, lkey) == 4, "PRM offset");
FLEXIO_DEV_LAYOUT_(offsetof(struct flexio_dev_wqe_mem_ptr_send_data_seg, addr) == 8, "PRM offset");
FLEXIO_DEV_LAYOUT_(sizeof(struct flexio_dev_wqe_inline_send_data_seg) == 16, "inline send segment is 16 bytes");
FLEXIO_DEV_LAYOUT_(sizeof(union flexio_dev_sqe_seg) == 16, "a send WQE segment is 16 bytes");
#undef FLEXIO_DEV_LAYOUT_

/* ---- send WQE kinds and opcodes ---- */

/* What flexio_dev_swqe_seg_ctrl_set builds the control segment for (its opcode and size). */
typedef enum flexio_ctrl_seg {
	FLEXIO_CTRL_SEG_SEND_EN = 0, /* Ethernet send: ctrl, eth, data */
	FLEXIO_CTRL_SEG_SEND_RC = 1, /* RC send: ctrl, data */
	FLEXIO_CTRL_SEG_LDMA = 2,
	FLEXIO_CTRL_SEG_RDMA_WRITE = 3,
	FLEXIO_CTRL_SEG_RDMA_READ = 4,
	FLEXIO_CTRL_SEG_ATOMIC_COMPARE_AND_SWAP = 5,
	FLEXIO_CTRL_SEG_LSO = 6,
	FLEXIO_CTRL_SEG_NOP = 7,
	FLEXIO_CTRL_SEG_RDMA_WRITE_IMM = 8,
	FLEXIO_CTRL_SEG_TRANSPOSE = 9,
} flexio_ctrl_seg_t;

/* Opcode modifiers of the local MMO opcode. */
enum {
	MLX5_CTRL_SEGMENT_OPC_MOD_LOCAL_MMO_TRANSPOSE = 0x0,
	MLX5_CTRL_SEGMENT_OPC_MOD_LOCAL_MMO_LOCAL_DMA = 0x1,
};

/* Send WQE opcodes (bits 7..0 of idx_opcode). */
enum {
	MLX5_CTRL_SEG_OPCODE_NOP = 0x0,
	MLX5_CTRL_SEG_OPCODE_SND_INV = 0x1,
	MLX5_CTRL_SEG_OPCODE_RDMA_WRITE = 0x8,
	MLX5_CTRL_SEG_OPCODE_RDMA_WRITE_WITH_IMMEDIATE = 0x9,
	MLX5_CTRL_SEG_OPCODE_SEND = 0xa,
	MLX5_CTRL_SEG_OPCODE_SEND_WITH_IMMEDIATE = 0xb,
	MLX5_CTRL_SEG_OPCODE_LSO = 0xe,
	MLX5_CTRL_SEG_OPCODE_WAIT = 0xf,
	MLX5_CTRL_SEG_OPCODE_RDMA_READ = 0x10,
	MLX5_CTRL_SEG_OPCODE_ATOMIC_COMPARE_AND_SWAP = 0x11,
	MLX5_CTRL_SEG_OPCODE_ATOMIC_FETCH_AND_ADD = 0x12,
	MLX5_CTRL_SEG_OPCODE_ATOMIC_MASKED_COMPARE_AND_SWAP = 0x14,
	MLX5_CTRL_SEG_OPCODE_ATOMIC_MASKED_FETCH_AND_ADD = 0x15,
	MLX5_CTRL_SEG_OPCODE_RECEIVE_EN = 0x16,
	MLX5_CTRL_SEG_OPCODE_SEND_EN = 0x17,
	MLX5_CTRL_SEG_OPCODE_SET_PSV = 0x20,
	MLX5_CTRL_SEG_OPCODE_GET_PSV = 0x21,
	MLX5_CTRL_SEG_OPCODE_CHECK_PSV = 0x22,
	MLX5_CTRL_SEG_OPCODE_DUMP = 0x23,
	MLX5_CTRL_SEG_OPCODE_UMR = 0x25,
	MLX5_CTRL_SEG_OPCODE_RGET_PSV = 0x26,
	MLX5_CTRL_SEG_OPCODE_RCHECK_PSV = 0x27,
	MLX5_CTRL_SEG_OPCODE_TAG_MATCHING = 0x28,
	MLX5_CTRL_SEG_OPCODE_ENHANCED_MPSW = 0x29,
	MLX5_CTRL_SEG_OPCODE_QOS_REMAP = 0x2a,
	MLX5_CTRL_SEG_OPCODE_FLOW_TABLE_ACCESS = 0x2c,
	MLX5_CTRL_SEG_OPCODE_ACCESS_ASO = 0x2d,
	MLX5_CTRL_SEG_OPCODE_MMO = 0x2f,
	MLX5_CTRL_SEG_OPCODE_LOAD_REMOTE_MICRO_APP = 0x30,
	MLX5_CTRL_SEG_OPCODE_STORE_REMOTE_MICRO_APP = 0x31,
	MLX5_CTRL_SEG_OPCODE_LOCAL_MMO = 0x32,
};

/* ---- doorbells (through the thread's outbox) ---- */

/* Tells the device the SQ (or QP's SQ) qnum has WQEs up to producer index pi. */
flexio_dev_status_t flexio_dev_qp_sq_ring_db(struct flexio_dev_thread_ctx *dtctx, uint16_t pi, uint32_t qnum);
/* Arms CQ qnum at consumer index ci: its next CQE raises an event. */
flexio_dev_status_t flexio_dev_cq_arm(struct flexio_dev_thread_ctx *dtctx, uint32_t ci, uint32_t qnum);
/* Reports EQ qnum consumed up to ci. */
flexio_dev_status_t flexio_dev_eq_update_ci(struct flexio_dev_thread_ctx *dtctx, uint32_t ci, uint32_t qnum);
/* Raises the MSI-X vector of the EQ that CQ cqn reports to. */
flexio_dev_status_t flexio_dev_msix_send(struct flexio_dev_thread_ctx *dtctx, uint32_t cqn);
/* Arms an emulated-device doorbell mapping (flexio_emu_db_to_cq_ctx_get_id) on CQ cqn. */
flexio_dev_status_t flexio_dev_db_ctx_arm(struct flexio_dev_thread_ctx *dtctx, uint32_t cqn, uint32_t emu_ctx_id);
/* Makes the mapping write a CQE on cqn now, as a doorbell would. */
flexio_dev_status_t flexio_dev_db_ctx_force_trigger(struct flexio_dev_thread_ctx *dtctx, uint32_t cqn,
						    uint32_t emu_ctx_id);

/* ---- doorbell records (plain memory writes) ---- */

/* Writes consumer index ci (24 bits) to a CQ's doorbell record. */
flexio_dev_status_t flexio_dev_dbr_cq_set_ci(uint32_t *cq_dbr, uint32_t ci);
/* Adds one to an RQ's producer counter: the WQE at its head is posted again. */
flexio_dev_status_t flexio_dev_dbr_rq_inc_pi(uint32_t *rq_dbr);
/* Writes producer index pi to an SQ's doorbell record. */
flexio_dev_status_t flexio_dev_dbr_sq_set_pi(uint32_t *sq_dbr, uint32_t pi);

/* ---- reading entries ---- */

uint8_t flexio_dev_cqe_get_opcode(struct flexio_dev_cqe64 *cqe);
uint8_t flexio_dev_cqe_get_owner(struct flexio_dev_cqe64 *cqe);
uint32_t flexio_dev_cqe_get_qpn(struct flexio_dev_cqe64 *cqe);
uint16_t flexio_dev_cqe_get_wqe_counter(struct flexio_dev_cqe64 *cqe);
uint32_t flexio_dev_cqe_get_byte_cnt(struct flexio_dev_cqe64 *cqe);
uint32_t flexio_dev_eqe_get_cqn(struct flexio_dev_eqe *eqe);
uint8_t flexio_dev_eqe_get_owner(struct flexio_dev_eqe *eqe);
/* The buffer a receive WQE points at. */
void *flexio_dev_rwqe_get_addr(struct flexio_dev_wqe_data_seg *rwqe);

/* ---- filling send WQE segments ---- */

/* The control segment for WQE sq_pi of SQ sq_number; ce is an enum cq_ce_mode. */
flexio_dev_status_t flexio_dev_swqe_seg_ctrl_set(union flexio_dev_sqe_seg *swqe, uint32_t sq_pi, uint32_t sq_number,
						 uint32_t ce, flexio_ctrl_seg_t ctrl_seg_type);
/* inline_hdrs may be NULL (no inlined header bytes); mss is 0 unless LSO. */
flexio_dev_status_t flexio_dev_swqe_seg_eth_set(union flexio_dev_sqe_seg *swqe, uint16_t cs_swp_flags, uint16_t mss,
						uint16_t inline_hdr_bsz, uint8_t inline_hdrs[2]);
flexio_dev_status_t flexio_dev_swqe_seg_rdma_set(union flexio_dev_sqe_seg *swqe, uint32_t rkey, uint64_t data_addr);
flexio_dev_status_t flexio_dev_swqe_seg_atomic_set(union flexio_dev_sqe_seg *swqe, uint64_t swap_or_add_data,
						   uint64_t compare_data);
/* A gather entry: data_sz bytes at data_addr under lkey. */
flexio_dev_status_t flexio_dev_swqe_seg_data_set(union flexio_dev_sqe_seg *swqe, uint32_t data_sz, uint32_t lkey,
						 uint64_t data_addr);
/* The same gather entry, under the name later SDK releases use. */
flexio_dev_status_t flexio_dev_swqe_seg_mem_ptr_data_set(union flexio_dev_sqe_seg *swqe, uint32_t data_sz,
							 uint32_t lkey, uint64_t data_addr);
/* data_sz bytes (at most 12) of inline data from data[0..2]. */
flexio_dev_status_t flexio_dev_swqe_seg_inline_data_set(union flexio_dev_sqe_seg *swqe, uint32_t data_sz,
							uint32_t *data);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_QUEUE_ACCESS_H_ */
