/*
 * hw_prm — the in-memory formats of the mlx5 programming reference (PRM)
 * that the emulated device reads and writes: completion queue entries and
 * send work-queue segments.
 *
 * They are the card's formats, not ours, because programs see them: an
 * mlx5dv program (and later FlexIO device code) builds WQEs and polls CQEs
 * in these rings itself. So every field sits at the card's offset and
 * multi-byte fields are big-endian in memory; the static asserts below pin
 * the layout, and the device touches the fields only through the small
 * accessors here, which convert to and from host order.
 */
#ifndef HW_PRM_H_
#define HW_PRM_H_

#include <assert.h>
#include <endian.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* CQE opcodes: the high nibble of op_own. */
enum hw_cqe_opcode {
	HW_CQE_REQ = 0x0,	    /* requester completion */
	HW_CQE_RESP_WR_IMM = 0x1,   /* responder: RDMA write with immediate */
	HW_CQE_RESP_SEND = 0x2,
	HW_CQE_RESP_SEND_IMM = 0x3,
	HW_CQE_RESP_SEND_INV = 0x4,
	HW_CQE_NO_PACKET = 0x6,	    /* a completion of no message: a tag list operation (hw_tm.h) */
	HW_CQE_REQ_ERR = 0xd,
	HW_CQE_RESP_ERR = 0xe,
	HW_CQE_INVALID = 0xf,	    /* never written by the device: an empty slot */
};

/* op_own: opcode in bits 7..4, CQE format in 3..2, solicited event in 1, owner in 0. */
#define HW_CQE_OWNER_MASK 0x01u
#define HW_CQE_SE_MASK 0x02u
#define HW_CQE_OPCODE_SHIFT 4
/* The CQE format bits of a receive scattered into the CQE (hw_qp_set_scatter): its data where. */
#define HW_CQE_INLINE_SCATTER_32 0x04u /* the 64-byte CQE's first 32 bytes */
#define HW_CQE_INLINE_SCATTER_64 0x08u /* a 128-byte CQE's first 64 bytes (before the 64-byte CQE) */
#define HW_CQE_FORMAT_MASK 0x0cu

/* Error CQE syndromes. */
enum hw_cqe_syndrome {
	HW_CQE_SYNDROME_LOCAL_LENGTH_ERR = 0x01,
	HW_CQE_SYNDROME_LOCAL_QP_OP_ERR = 0x02,
	HW_CQE_SYNDROME_LOCAL_PROT_ERR = 0x04,
	HW_CQE_SYNDROME_WR_FLUSH_ERR = 0x05,
	HW_CQE_SYNDROME_MW_BIND_ERR = 0x06,
	HW_CQE_SYNDROME_BAD_RESP_ERR = 0x10,
	HW_CQE_SYNDROME_LOCAL_ACCESS_ERR = 0x11,
	HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR = 0x12,
	HW_CQE_SYNDROME_REMOTE_ACCESS_ERR = 0x13,
	HW_CQE_SYNDROME_REMOTE_OP_ERR = 0x14,
	HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR = 0x15,
	HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR = 0x16,
	HW_CQE_SYNDROME_REMOTE_ABORTED_ERR = 0x22,
};

/* The CQ doorbell record: two big-endian words the consumer writes. */
enum {
	HW_CQ_DBR_SET_CI = 0, /* consumer index, low 24 bits */
	HW_CQ_DBR_ARM = 1,    /* last arm word, as written to the doorbell register */
};

/* Arm word: sequence number in bits 29..28, command in bit 24, consumer index in 23..0. */
#define HW_CQ_ARM_SN_SHIFT 28
#define HW_CQ_ARM_SN_MASK 0x3u
#define HW_CQ_ARM_CMD_NEXT 0u	      /* next CQE of any kind */
#define HW_CQ_ARM_CMD_SOLICITED (1u << 24) /* next solicited (or error) CQE */
#define HW_CQ_CI_MASK 0xffffffu
/* Offset of the CQ arm doorbell in a UAR page. */
#define HW_CQ_DOORBELL_OFFSET 0x20

/* The 64-byte completion queue entry (a successful completion). */
struct hw_cqe64 {
	uint8_t rsvd0[2];
	uint16_t wqe_id;
	uint8_t rsvd4[13];
	uint8_t ml_path;
	uint8_t rsvd18[4];
	uint16_t slid;
	uint32_t flags_rqpn;	  /* remote QP of a UD receive, low 24 bits */
	uint8_t hds_ip_ext;
	uint8_t l4_hdr_type_etc;
	uint16_t vlan_info;
	uint32_t srqn_uidx;
	uint32_t imm_inval_pkey; /* immediate, invalidated rkey or pkey */
	uint8_t app;
	uint8_t app_op;
	uint16_t app_info;
	uint32_t byte_cnt;
	uint64_t timestamp;
	uint32_t sop_drop_qpn;	  /* QP number in the low 24 bits */
	uint16_t wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

/*
 * A CQE of tag matching has app HW_CQE_APP_TM and one of these app_ops
 * (mlx5's MLX5_CQE_APP_OP_TM_*); app_info is the tag's list index.
 */
#define HW_CQE_APP_TM 1
enum hw_cqe_tm_op {
	HW_TM_OP_CONSUMED = 0x1,     /* a rendezvous matched: the data follows (EXPECTED) */
	HW_TM_OP_EXPECTED = 0x2,     /* the rendezvous data is in the tag's buffer */
	HW_TM_OP_UNEXPECTED = 0x3,   /* no tag matched: an ordinary receive took it, TMH and all */
	HW_TM_OP_NO_TAG = 0x4,	     /* a message without a tag: an ordinary receive took it */
	HW_TM_OP_APPEND = 0x5,	     /* list operations */
	HW_TM_OP_REMOVE = 0x6,
	HW_TM_OP_NOOP = 0x7,
	HW_TM_OP_CONSUMED_MSG = 0xa, /* an eager message matched: its data is in the tag's buffer */
};
#define HW_TM_SUCCESS 0x80000000u /* a list operation's CQE: the first word, big-endian */

/* The same 64 bytes when the opcode is REQ_ERR or RESP_ERR. */
struct hw_err_cqe {
	uint8_t rsvd0[32];
	uint32_t srqn;
	uint8_t rsvd36[18];
	uint8_t vendor_err_synd;
	uint8_t syndrome;
	uint32_t s_wqe_opcode_qpn; /* send WQE opcode in the top byte, QP number below */
	uint16_t wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

static_assert(sizeof(struct hw_cqe64) == 64, "CQE is 64 bytes");
static_assert(offsetof(struct hw_cqe64, wqe_id) == 2, "PRM offset");
static_assert(offsetof(struct hw_cqe64, slid) == 22, "PRM offset");
static_assert(offsetof(struct hw_cqe64, flags_rqpn) == 24, "PRM offset");
static_assert(offsetof(struct hw_cqe64, srqn_uidx) == 32, "PRM offset");
static_assert(offsetof(struct hw_cqe64, imm_inval_pkey) == 36, "PRM offset");
static_assert(offsetof(struct hw_cqe64, byte_cnt) == 44, "PRM offset");
static_assert(offsetof(struct hw_cqe64, timestamp) == 48, "PRM offset");
static_assert(offsetof(struct hw_cqe64, sop_drop_qpn) == 56, "PRM offset");
static_assert(offsetof(struct hw_cqe64, wqe_counter) == 60, "PRM offset");
static_assert(offsetof(struct hw_cqe64, signature) == 62, "PRM offset");
static_assert(offsetof(struct hw_cqe64, op_own) == 63, "PRM offset");
static_assert(sizeof(struct hw_err_cqe) == 64, "error CQE is 64 bytes");
static_assert(offsetof(struct hw_err_cqe, srqn) == 32, "PRM offset");
static_assert(offsetof(struct hw_err_cqe, vendor_err_synd) == 54, "PRM offset");
static_assert(offsetof(struct hw_err_cqe, syndrome) == 55, "PRM offset");
static_assert(offsetof(struct hw_err_cqe, s_wqe_opcode_qpn) == 56, "PRM offset");
static_assert(offsetof(struct hw_err_cqe, wqe_counter) == 60, "PRM offset");
static_assert(offsetof(struct hw_err_cqe, op_own) == 63, "PRM offset");

static inline uint8_t hw_cqe_opcode(const struct hw_cqe64 *c)
{
	return c->op_own >> HW_CQE_OPCODE_SHIFT;
}

static inline uint8_t hw_cqe_owner(const struct hw_cqe64 *c)
{
	return c->op_own & HW_CQE_OWNER_MASK;
}

static inline uint8_t hw_cqe_se(const struct hw_cqe64 *c)
{
	return (c->op_own & HW_CQE_SE_MASK) ? 1 : 0;
}

static inline uint16_t hw_cqe_wqe_counter(const struct hw_cqe64 *c)
{
	return be16toh(c->wqe_counter);
}

static inline uint32_t hw_cqe_byte_cnt(const struct hw_cqe64 *c)
{
	return be32toh(c->byte_cnt);
}

/*
 * A receive CQE of an Ethernet RQ that a steering rule tagged carries the
 * flow tag where the QP number goes (mlx5's flow_tag, sop_drop_qpn's low 24
 * bits) and the RQ's number as its user index (srqn_uidx), as mlx5 with CQE
 * version 1 finds its queue; the HW_CQE_TAGGED bit of srqn_uidx's reserved
 * top byte says so (not in the CQE's first 32 bytes: a receive scattered
 * into the CQE fills those).
 */
#define HW_CQE_TAGGED 0x1u

static inline bool hw_cqe_tagged(const struct hw_cqe64 *c)
{
	return ((const uint8_t *)&c->srqn_uidx)[0] & HW_CQE_TAGGED;
}

static inline uint32_t hw_cqe_flow_tag(const struct hw_cqe64 *c)
{
	return hw_cqe_tagged(c) ? be32toh(c->sop_drop_qpn) & 0xffffffu : 0;
}

static inline uint32_t hw_cqe_qpn(const struct hw_cqe64 *c)
{
	if (hw_cqe_tagged(c))
		return be32toh(c->srqn_uidx) & 0xffffffu;
	return be32toh(c->sop_drop_qpn) & 0xffffffu;
}

static inline uint32_t hw_cqe_imm(const struct hw_cqe64 *c)
{
	return be32toh(c->imm_inval_pkey);
}

static inline uint8_t hw_err_cqe_syndrome(const struct hw_cqe64 *c)
{
	return ((const struct hw_err_cqe *)(const void *)c)->syndrome;
}

static inline uint8_t hw_err_cqe_vendor_synd(const struct hw_cqe64 *c)
{
	return ((const struct hw_err_cqe *)(const void *)c)->vendor_err_synd;
}

/* The opcode of the send WQE an error CQE reports. */
static inline uint8_t hw_err_cqe_wqe_opcode(const struct hw_cqe64 *c)
{
	return be32toh(((const struct hw_err_cqe *)(const void *)c)->s_wqe_opcode_qpn) >> 24;
}

/* Send WQE opcodes (the low byte of opmod_idx_opcode). */
enum hw_wqe_opcode {
	HW_WQE_NOP = 0x00,
	HW_WQE_SEND_INVAL = 0x01,
	HW_WQE_RDMA_WRITE = 0x08,
	HW_WQE_RDMA_WRITE_IMM = 0x09,
	HW_WQE_SEND = 0x0a,
	HW_WQE_SEND_IMM = 0x0b,
	HW_WQE_RDMA_READ = 0x10,
	HW_WQE_ATOMIC_CS = 0x11,
	HW_WQE_ATOMIC_FA = 0x12,
	HW_WQE_ATOMIC_MASKED_CS = 0x14, /* extended atomics: opmod HW_WQE_OPMOD_EXT_ATOMIC */
	HW_WQE_ATOMIC_MASKED_FA = 0x15,
	HW_WQE_LOCAL_INVAL = 0x1b,
	HW_WQE_UMR = 0x25,
};

/* opmod of a masked atomic: extended, operand size 2^log_size bytes. */
#define HW_WQE_OPMOD_EXT_ATOMIC(log_size) (8u | ((log_size) - 2u))

/* fm_ce_se of the control segment. */
#define HW_WQE_CTRL_SOLICITED (1u << 1)
#define HW_WQE_CTRL_CQ_UPDATE (2u << 2) /* write a CQE for this WQE */
#define HW_WQE_CTRL_SMALL_FENCE (1u << 5)
#define HW_WQE_CTRL_FENCE (4u << 5)

#define HW_SEND_WQE_BB 64 /* a send WQE is made of 64-byte basic blocks */
#define HW_SEND_WQE_SHIFT 6
#define HW_WQE_DS_BYTES 16 /* qpn_ds counts 16-byte units */
#define HW_INLINE_SEG_FLAG 0x80000000u

/* Every send WQE starts with this 16-byte segment. */
struct hw_wqe_ctrl_seg {
	uint32_t opmod_idx_opcode; /* opmod 31..24, WQE index 23..8, opcode 7..0 */
	uint32_t qpn_ds;	   /* QP number 31..8, size in 16-byte units 5..0 */
	uint8_t signature;
	uint8_t stream_id[2];	   /* big-endian, unaligned in the PRM */
	uint8_t fm_ce_se;
	uint32_t imm;		   /* immediate (as sent), rkey to invalidate or UMR mkey */
};

/* A scatter/gather entry. */
struct hw_wqe_data_seg {
	uint32_t byte_count;
	uint32_t lkey;
	uint64_t addr;
};

/* The remote side of an RDMA or atomic operation. */
struct hw_wqe_raddr_seg {
	uint64_t raddr;
	uint32_t rkey;
	uint32_t reserved;
};

struct hw_wqe_atomic_seg {
	uint64_t swap_add;
	uint64_t compare;
};

/* Inline data follows this header, padded to 16 bytes together with it. */
struct hw_wqe_inl_seg {
	uint32_t byte_count; /* HW_INLINE_SEG_FLAG | length */
};

static_assert(sizeof(struct hw_wqe_ctrl_seg) == 16, "ctrl segment is 16 bytes");
static_assert(offsetof(struct hw_wqe_ctrl_seg, qpn_ds) == 4, "PRM offset");
static_assert(offsetof(struct hw_wqe_ctrl_seg, signature) == 8, "PRM offset");
static_assert(offsetof(struct hw_wqe_ctrl_seg, fm_ce_se) == 11, "PRM offset");
static_assert(offsetof(struct hw_wqe_ctrl_seg, imm) == 12, "PRM offset");
static_assert(sizeof(struct hw_wqe_data_seg) == 16, "data segment is 16 bytes");
static_assert(offsetof(struct hw_wqe_data_seg, lkey) == 4, "PRM offset");
static_assert(offsetof(struct hw_wqe_data_seg, addr) == 8, "PRM offset");
static_assert(sizeof(struct hw_wqe_raddr_seg) == 16, "raddr segment is 16 bytes");
static_assert(offsetof(struct hw_wqe_raddr_seg, rkey) == 8, "PRM offset");
static_assert(sizeof(struct hw_wqe_atomic_seg) == 16, "atomic segment is 16 bytes");
static_assert(offsetof(struct hw_wqe_atomic_seg, compare) == 8, "PRM offset");
static_assert(sizeof(struct hw_wqe_inl_seg) == 4, "inline header is 4 bytes");

static inline void hw_ctrl_seg_set(struct hw_wqe_ctrl_seg *s, uint16_t idx, uint8_t opcode, uint8_t opmod,
				   uint32_t qpn, uint8_t fm_ce_se, uint8_t ds, uint32_t imm_be)
{
	s->opmod_idx_opcode = htobe32((uint32_t)opmod << 24 | (uint32_t)idx << 8 | opcode);
	s->qpn_ds = htobe32(qpn << 8 | ds);
	s->signature = 0;
	s->stream_id[0] = 0;
	s->stream_id[1] = 0;
	s->fm_ce_se = fm_ce_se;
	s->imm = imm_be;
}

static inline uint8_t hw_ctrl_opcode(const struct hw_wqe_ctrl_seg *s)
{
	return be32toh(s->opmod_idx_opcode) & 0xff;
}

static inline uint8_t hw_ctrl_opmod(const struct hw_wqe_ctrl_seg *s)
{
	return be32toh(s->opmod_idx_opcode) >> 24;
}

static inline uint16_t hw_ctrl_wqe_index(const struct hw_wqe_ctrl_seg *s)
{
	return (be32toh(s->opmod_idx_opcode) >> 8) & 0xffff;
}

static inline uint32_t hw_ctrl_qpn(const struct hw_wqe_ctrl_seg *s)
{
	return be32toh(s->qpn_ds) >> 8;
}

static inline uint8_t hw_ctrl_ds(const struct hw_wqe_ctrl_seg *s)
{
	return be32toh(s->qpn_ds) & 0x3f;
}

/*
 * A data segment's byte count is 31 bits and its top bit marks an inline
 * segment; the top bit alone (an empty inline segment, which mlx5 never
 * writes) is a pointer to 2 GiB. A gather entry of 2 GiB or more is written
 * so: any of them is beyond the port's max_msg_sz and fails as such, where
 * its low 31 bits would be read as inline data.
 */
#define HW_DATA_SEG_2G 0x80000000u

static inline uint32_t hw_data_seg_len_of(uint64_t len)
{
	return len < HW_DATA_SEG_2G ? (uint32_t)len : HW_DATA_SEG_2G;
}

static inline void hw_data_seg_set(struct hw_wqe_data_seg *s, uint32_t len, uint32_t lkey, uint64_t addr)
{
	s->byte_count = htobe32(len);
	s->lkey = htobe32(lkey);
	s->addr = htobe64(addr);
}

static inline uint32_t hw_data_seg_len(const struct hw_wqe_data_seg *s)
{
	return be32toh(s->byte_count);
}

static inline uint32_t hw_data_seg_lkey(const struct hw_wqe_data_seg *s)
{
	return be32toh(s->lkey);
}

static inline uint64_t hw_data_seg_addr(const struct hw_wqe_data_seg *s)
{
	return be64toh(s->addr);
}

static inline void hw_raddr_seg_set(struct hw_wqe_raddr_seg *s, uint64_t raddr, uint32_t rkey)
{
	s->raddr = htobe64(raddr);
	s->rkey = htobe32(rkey);
	s->reserved = 0;
}

static inline uint64_t hw_raddr_seg_addr(const struct hw_wqe_raddr_seg *s)
{
	return be64toh(s->raddr);
}

static inline uint32_t hw_raddr_seg_rkey(const struct hw_wqe_raddr_seg *s)
{
	return be32toh(s->rkey);
}

static inline void hw_atomic_seg_set(struct hw_wqe_atomic_seg *s, uint64_t swap_add, uint64_t compare)
{
	s->swap_add = htobe64(swap_add);
	s->compare = htobe64(compare);
}

static inline uint64_t hw_atomic_seg_swap_add(const struct hw_wqe_atomic_seg *s)
{
	return be64toh(s->swap_add);
}

static inline uint64_t hw_atomic_seg_compare(const struct hw_wqe_atomic_seg *s)
{
	return be64toh(s->compare);
}

static inline void hw_inl_seg_set(struct hw_wqe_inl_seg *s, uint32_t len)
{
	s->byte_count = htobe32(HW_INLINE_SEG_FLAG | len);
}

/* Length of an inline segment; 0 with *is_inline false when it is a data segment. */
static inline uint32_t hw_inl_seg_len(const struct hw_wqe_inl_seg *s, int *is_inline)
{
	uint32_t v = be32toh(s->byte_count);

	*is_inline = (v & HW_INLINE_SEG_FLAG) != 0;
	return *is_inline ? v & ~HW_INLINE_SEG_FLAG : 0;
}

/* The address vector of a UD send: the datagram segment after the ctrl segment (48 bytes). */
struct hw_wqe_datagram_seg {
	uint32_t qkey;	     /* with the MSB set the device uses the QP's own qkey */
	uint32_t rsvd4;
	uint32_t dqp_dct;    /* extended-AV flag in bit 31, destination QPN below */
	uint8_t stat_rate_sl;
	uint8_t fl_mlid;
	uint16_t rlid;
	uint8_t rsvd16[4];
	uint8_t rmac[6];
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t grh_gid_fl; /* GRH present in bit 30, flow label in 19..0 */
	uint8_t rgid[16];
};

/* An XRC send WQE's segment after ctrl (mlx5_wqe_xrc_seg): the SRQ at the target, big-endian. */
struct hw_wqe_xrc_seg {
	uint32_t xrc_srqn;
	uint8_t rsvd[12];
};

#define HW_AV_GRH (1u << 30)
#define HW_AV_FLOW_LABEL_MASK 0xfffffu
#define HW_QKEY_USE_QP 0x80000000u /* a send qkey with this bit takes the QP's qkey */
#define HW_UD_GRH_BYTES 40	   /* the GRH area at the head of every UD receive */

/* flags_rqpn of a UD receive CQE: GRH kind in 29..28 (1: an IB GRH), SL in 27..24, source QPN below. */
#define HW_CQE_RQPN_GRH_SHIFT 28
#define HW_CQE_RQPN_SL_SHIFT 24

/* The UMR control segment (48 bytes) after the ctrl segment of a UMR WQE. */
struct hw_wqe_umr_ctrl_seg {
	uint8_t flags;
	uint8_t rsvd1[3];
	uint16_t klm_octowords;
	uint16_t translation_offset;
	uint64_t mkey_mask;
	uint16_t bsf_octowords; /* the signature segment after the translations (HW_UMR_MASK_BSF_EN) */
	uint8_t rsvd18[30];
};

#define HW_UMR_CTRL_INLINE (1u << 7)
#define HW_UMR_CTRL_CHECK_FREE (1u << 5)
#define HW_UMR_CTRL_TRANSLATION_OFFSET (1u << 4)
#define HW_UMR_CTRL_CHECK_QPN (1u << 3)
#define HW_UMR_MASK_MKEY (1ull << 13)
#define HW_UMR_MASK_QPN (1ull << 14)
#define HW_UMR_MASK_FREE (1ull << 29)
#define HW_UMR_MASK_LEN (1ull << 0)
#define HW_UMR_MASK_BSF_EN (1ull << 12) /* the WQE carries a signature segment: the key's new signature */
#define HW_UMR_MASK_START_ADDR (1ull << 6)
#define HW_UMR_MASK_ACCESS_LOCAL_WRITE (1ull << 18)
#define HW_UMR_MASK_ACCESS_REMOTE_READ (1ull << 19)
#define HW_UMR_MASK_ACCESS_REMOTE_WRITE (1ull << 20)
#define HW_UMR_MASK_ACCESS_ATOMIC (1ull << 21)

/* The mkey context segment (64 bytes) of a UMR WQE. */
struct hw_wqe_mkey_ctx_seg {
	uint8_t free;	  /* HW_MKEY_CTX_FREE: the mkey is to be freed */
	uint8_t rsvd1;
	uint8_t access_flags;
	uint8_t sf;
	uint32_t qpn_mkey;
	uint32_t rsvd8;
	uint32_t flags_pd;
	uint64_t start_addr;
	uint64_t len;	  /* bytes the registered pattern covers */
	uint8_t rsvd32[32];
};

#define HW_MKEY_CTX_FREE (1u << 6)
/* access_flags of the mkey context. */
#define HW_MKC_ACCESS_ATOMIC (1u << 6)
#define HW_MKC_ACCESS_REMOTE_WRITE (1u << 5)
#define HW_MKC_ACCESS_REMOTE_READ (1u << 4)
#define HW_MKC_ACCESS_LOCAL_WRITE (1u << 3)

/* Inline translations of a strided (interleaved) UMR: this header, then its entries. */
struct hw_umr_repeat_block_seg {
	uint32_t byte_count;   /* data bytes of one repetition */
	uint32_t op;	       /* HW_UMR_REPEAT_BLOCK_OP */
	uint32_t repeat_count;
	uint16_t rsvd12;
	uint16_t num_ent;
};

struct hw_umr_repeat_ent_seg {
	uint16_t stride;       /* bytes_count + bytes_skip */
	uint16_t byte_count;
	uint32_t memkey;
	uint64_t va;
};

#define HW_UMR_REPEAT_BLOCK_OP 0x400u

/* An SRQ WQE starts with this 16-byte segment; data segments follow. */
struct hw_wqe_srq_next_seg {
	uint8_t rsvd0[2];
	uint16_t next_wqe_index;
	uint8_t signature;
	uint8_t rsvd5[11];
};

static_assert(sizeof(struct hw_wqe_datagram_seg) == 48, "datagram segment is 48 bytes");
static_assert(offsetof(struct hw_wqe_datagram_seg, dqp_dct) == 8, "PRM offset");
static_assert(offsetof(struct hw_wqe_datagram_seg, rlid) == 14, "PRM offset");
static_assert(offsetof(struct hw_wqe_datagram_seg, tclass) == 26, "PRM offset");
static_assert(offsetof(struct hw_wqe_datagram_seg, grh_gid_fl) == 28, "PRM offset");
static_assert(offsetof(struct hw_wqe_datagram_seg, rgid) == 32, "PRM offset");
static_assert(sizeof(struct hw_wqe_umr_ctrl_seg) == 48, "UMR ctrl segment is 48 bytes");
static_assert(sizeof(struct hw_wqe_mkey_ctx_seg) == 64, "mkey context segment is 64 bytes");
static_assert(offsetof(struct hw_wqe_mkey_ctx_seg, len) == 24, "PRM offset");
static_assert(sizeof(struct hw_umr_repeat_block_seg) == 16, "repeat block header is 16 bytes");
static_assert(sizeof(struct hw_umr_repeat_ent_seg) == 16, "repeat entry is 16 bytes");
static_assert(offsetof(struct hw_wqe_umr_ctrl_seg, klm_octowords) == 4, "PRM offset");
static_assert(offsetof(struct hw_wqe_umr_ctrl_seg, mkey_mask) == 8, "PRM offset");
static_assert(sizeof(struct hw_wqe_mkey_ctx_seg) == 64, "mkey context segment is 64 bytes");
static_assert(offsetof(struct hw_wqe_mkey_ctx_seg, qpn_mkey) == 4, "PRM offset");
static_assert(sizeof(struct hw_wqe_srq_next_seg) == 16, "SRQ next segment is 16 bytes");
static_assert(offsetof(struct hw_wqe_srq_next_seg, next_wqe_index) == 2, "PRM offset");

/*
 * The Ethernet segment of a raw Ethernet send WQE (mlx5_wqe_eth_seg), right
 * after the control segment. The frame's first inline_hdr_sz bytes are
 * inline: two in inline_hdr_start, the rest running on into the following
 * 16-byte segments; data segments start at the next 16-byte boundary. So
 * the inline part takes hw_eth_seg_inline_ds(sz) segments after this one:
 * ceil((sz - 2) / 16) for sz > 2, else none. rdma-core's set_tso_eth_seg
 * advances by align(sz - 2, 16) past the segment, the same rule; its
 * (16 + sz) & ~0xf for the non-TSO path agrees for the sizes it uses (0, 18).
 */
struct hw_eth_seg {
	uint32_t rsvd0;
	uint8_t cs_flags;
	uint8_t rsvd1;
	uint16_t mss;
	uint32_t flow_table_metadata;
	uint16_t inline_hdr_sz;
	uint8_t inline_hdr_start[2];
};

#define HW_ETH_SEG_INLINE_START 2 /* inline bytes inside the segment itself */

#define HW_ETH_SEG_INLINE_START 2 /* inline bytes inside the segment itself */

static_assert(sizeof(struct hw_eth_seg) == 16, "eth segment is 16 bytes");
static_assert(offsetof(struct hw_eth_seg, cs_flags) == 4, "PRM offset");
static_assert(offsetof(struct hw_eth_seg, mss) == 6, "PRM offset");
static_assert(offsetof(struct hw_eth_seg, flow_table_metadata) == 8, "PRM offset");
static_assert(offsetof(struct hw_eth_seg, inline_hdr_sz) == 12, "PRM offset");
static_assert(offsetof(struct hw_eth_seg, inline_hdr_start) == 14, "PRM offset");

static inline uint16_t hw_eth_seg_inline_sz(const struct hw_eth_seg *s)
{
	return be16toh(s->inline_hdr_sz);
}

/* The 16-byte segments the inline header occupies after the Ethernet segment. */
static inline uint32_t hw_eth_seg_inline_ds(uint32_t sz)
{
	if (sz <= HW_ETH_SEG_INLINE_START)
		return 0;
	return (sz - HW_ETH_SEG_INLINE_START + HW_WQE_DS_BYTES - 1) / HW_WQE_DS_BYTES;
}

/*
 * Engine jobs of the DOCA DMA and SHA contexts (src/hw/hw_jobq.c). They use
 * the mlx5 MMO opcode, which the verbs opcodes above never take, told apart
 * by the opmod in bits 31..24 of opmod_idx_opcode. After the ctrl segment
 * comes one MMO segment, then nsrc source data segments, then ndst
 * destination data segments (a destination's byte_count is its room). A data
 * segment's byte_count is the exact length here (at most 2^31, never 0 for
 * 2 GiB as in RDMA work).
 */
#define HW_WQE_MMO 0x2f

enum hw_mmo_opmod {
	HW_MMO_OPMOD_DMA = 0x01, /* copy the sources into the destinations */
	HW_MMO_OPMOD_SHA = 0x02, /* hash the sources, digest into the one destination (none: a partial segment) */
};

/*
 * SHA flags. PARTIAL: one segment of a message hashed in several WQEs, whose
 * running hash is the engine's session named in the MMO segment; START
 * begins the message, FINAL ends it and writes the digest (the only WQE of
 * the message with a destination).
 */
#define HW_MMO_SHA_PARTIAL 0x01
#define HW_MMO_SHA_START 0x02
#define HW_MMO_SHA_FINAL 0x04
#define HW_MMO_SHA_FLAGS_MASK 0x07

struct hw_wqe_mmo_seg {
	uint8_t nsrc;
	uint8_t ndst;
	uint8_t src_access; /* enum hw_access right every source needs */
	uint8_t dst_access; /* ... every destination */
	uint8_t alg;	    /* SHA: enum hw_sha_alg */
	uint8_t flags;	    /* SHA: HW_MMO_SHA_* */
	uint8_t rsvd6[2];
	uint32_t session;   /* SHA with PARTIAL: the session's index (big-endian) */
	uint8_t rsvd12[4];
};

static_assert(sizeof(struct hw_wqe_mmo_seg) == 16, "MMO segment is 16 bytes");
static_assert(offsetof(struct hw_wqe_mmo_seg, alg) == 4, "MMO segment layout");
static_assert(offsetof(struct hw_wqe_mmo_seg, session) == 8, "MMO segment layout");

/*
 * The signature segment of a UMR WQE (bsf_octowords 4), this device's form
 * of the card's BSF: each domain's signature, the check and copy masks.
 * Both kinds NONE: the key carries plain data again.
 */
struct hw_umr_sig_dom_seg {
	uint8_t kind;	    /* enum hw_sig_kind */
	uint8_t flags;	    /* HW_SIG_REF_REMAP / _APP_ESCAPE / _APPREF_ESCAPE */
	uint16_t block;	    /* data bytes per block */
	uint16_t bg;	    /* T10-DIF guard seed */
	uint16_t app_tag;
	uint32_t ref_tag;
	uint32_t rsvd12;
	uint64_t seed;	    /* CRC seed */
};

struct hw_umr_sig_seg {
	struct hw_umr_sig_dom_seg mem;
	struct hw_umr_sig_dom_seg wire;
	uint8_t check_mask;
	uint8_t copy_mask;
	uint8_t rsvd50[14];
};

static_assert(sizeof(struct hw_umr_sig_seg) == 64, "the signature segment is 4 octowords");

#endif /* HW_PRM_H_ */
