/*
 * softdpu — the mlx5 direct-verbs API (rdma-core v44, libmlx5.so.1).
 *
 * Layouts, values, macros and inline functions equal rdma-core v44's (see
 * tools/check-verbs-abi.py). Besides the mlx5dv_ calls it describes the
 * device's own formats — WQE segments, CQEs, doorbells — which programs
 * using mlx5dv_init_obj write and read directly; softdpu's emulated device
 * uses the same formats.
 */
#ifndef _MLX5DV_H_
#define _MLX5DV_H_

#include <endian.h>
#include <linux/types.h> /* __be64 and friends */
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#if defined(__SSE3__)
#include <emmintrin.h>
#include <limits.h>
#include <tmmintrin.h>
#endif

/*
 * Strict ISO C (-std=c11) makes glibc's <endian.h> hide the byte-order
 * names the segment writers below use; the compiler's byte-swap builtins stand in.
 */
#if !defined(htobe32) && defined(__BYTE_ORDER) && __BYTE_ORDER == __LITTLE_ENDIAN
#define htobe16(x) __builtin_bswap16(x)
#define htobe32(x) __builtin_bswap32(x)
#define htobe64(x) __builtin_bswap64(x)
#define be32toh(x) __builtin_bswap32(x)
#define be64toh(x) __builtin_bswap64(x)
#elif !defined(htobe32) && defined(__BYTE_ORDER) && __BYTE_ORDER == __BIG_ENDIAN
#define htobe16(x) ((uint16_t)(x))
#define htobe32(x) ((uint32_t)(x))
#define htobe64(x) ((uint64_t)(x))
#define be32toh(x) ((uint32_t)(x))
#define be64toh(x) ((uint64_t)(x))
#endif

#include <infiniband/verbs.h>
#include <infiniband/tm_types.h>
#include <infiniband/mlx5_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The segment writers must be inlined into the program's send path. */
#ifdef __GNUC__
#define MLX5DV_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MLX5DV_ALWAYS_INLINE inline
#endif

/* Resource types of the mlx5 driver, as rdma tooling names them. */
#define MLX5DV_RES_TYPE_QP ((uint64_t)RDMA_DRIVER_MLX5 << 32 | 1)
#define MLX5DV_RES_TYPE_RWQ ((uint64_t)RDMA_DRIVER_MLX5 << 32 | 2)
#define MLX5DV_RES_TYPE_DBR ((uint64_t)RDMA_DRIVER_MLX5 << 32 | 3)
#define MLX5DV_RES_TYPE_SRQ ((uint64_t)RDMA_DRIVER_MLX5 << 32 | 4)
#define MLX5DV_RES_TYPE_CQ ((uint64_t)RDMA_DRIVER_MLX5 << 32 | 5)
/* Doorbell record slots of a QP: receive counter, send counter. */
enum {
	MLX5_RCV_DBR = 0,
	MLX5_SND_DBR = 1,
};

/* The device: what mlx5dv_query_device reports. */
enum mlx5dv_context_comp_mask {
	MLX5DV_CONTEXT_MASK_CQE_COMPRESION = 1 << 0,
	MLX5DV_CONTEXT_MASK_SWP = 1 << 1,
	MLX5DV_CONTEXT_MASK_STRIDING_RQ = 1 << 2,
	MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS = 1 << 3,
	MLX5DV_CONTEXT_MASK_DYN_BFREGS = 1 << 4,
	MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE = 1 << 5,
	MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS = 1 << 6,
	MLX5DV_CONTEXT_MASK_DC_ODP_CAPS = 1 << 7,
	MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK = 1 << 8,
	MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS = 1 << 9,
	MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD = 1 << 10,
	MLX5DV_CONTEXT_MASK_DCI_STREAMS = 1 << 11,
	MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH = 1 << 12,
	MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD = 1 << 13,
};

struct mlx5dv_cqe_comp_caps {
	uint32_t max_num;
	uint32_t supported_format;
};

struct mlx5dv_sw_parsing_caps {
	uint32_t sw_parsing_offloads;
	uint32_t supported_qpts;
};

struct mlx5dv_striding_rq_caps {
	uint32_t min_single_stride_log_num_of_bytes;
	uint32_t max_single_stride_log_num_of_bytes;
	uint32_t min_single_wqe_log_num_of_strides;
	uint32_t max_single_wqe_log_num_of_strides;
	uint32_t supported_qpts;
};

struct mlx5dv_dci_streams_caps {
	uint8_t max_log_num_concurent;
	uint8_t max_log_num_errored;
};

enum mlx5dv_tunnel_offloads {
	MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_VXLAN = 1 << 0,
	MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_GRE = 1 << 1,
	MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_GENEVE = 1 << 2,
	MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_CW_MPLS_OVER_GRE = 1 << 3,
	MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_CW_MPLS_OVER_UDP = 1 << 4,
};

enum mlx5dv_flow_action_cap_flags {
	MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM = 1 << 0,
	MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_REQ_METADATA = 1 << 1,
	MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_SPI_STEERING = 1 << 2,
	MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_FULL_OFFLOAD = 1 << 3,
	MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_TX_IV_IS_ESN = 1 << 4,
};

enum mlx5dv_sig_type {
	MLX5DV_SIG_TYPE_T10DIF = 0,
	MLX5DV_SIG_TYPE_CRC = 1,
};

enum mlx5dv_sig_prot_caps {
	MLX5DV_SIG_PROT_CAP_T10DIF = 1,
	MLX5DV_SIG_PROT_CAP_CRC = 2,
};

enum mlx5dv_sig_t10dif_bg_type {
	MLX5DV_SIG_T10DIF_CRC = 0,
	MLX5DV_SIG_T10DIF_CSUM = 1,
};

enum mlx5dv_sig_t10dif_bg_caps {
	MLX5DV_SIG_T10DIF_BG_CAP_CRC = 1,
	MLX5DV_SIG_T10DIF_BG_CAP_CSUM = 2,
};

enum mlx5dv_sig_crc_type {
	MLX5DV_SIG_CRC_TYPE_CRC32 = 0,
	MLX5DV_SIG_CRC_TYPE_CRC32C = 1,
	MLX5DV_SIG_CRC_TYPE_CRC64_XP10 = 2,
};

enum mlx5dv_sig_crc_type_caps {
	MLX5DV_SIG_CRC_TYPE_CAP_CRC32 = 1 << 0,
	MLX5DV_SIG_CRC_TYPE_CAP_CRC32C = 1 << 1,
	MLX5DV_SIG_CRC_TYPE_CAP_CRC64_XP10 = 1 << 2,
};

enum mlx5dv_block_size {
	MLX5DV_BLOCK_SIZE_512 = 0,
	MLX5DV_BLOCK_SIZE_520 = 1,
	MLX5DV_BLOCK_SIZE_4048 = 2,
	MLX5DV_BLOCK_SIZE_4096 = 3,
	MLX5DV_BLOCK_SIZE_4160 = 4,
};

enum mlx5dv_block_size_caps {
	MLX5DV_BLOCK_SIZE_CAP_512 = 1 << 0,
	MLX5DV_BLOCK_SIZE_CAP_520 = 1 << 1,
	MLX5DV_BLOCK_SIZE_CAP_4048 = 1 << 2,
	MLX5DV_BLOCK_SIZE_CAP_4096 = 1 << 3,
	MLX5DV_BLOCK_SIZE_CAP_4160 = 1 << 4,
};

struct mlx5dv_sig_caps {
	uint64_t block_size;
	uint32_t block_prot;
	uint16_t t10dif_bg;
	uint16_t crc_type;
};

enum mlx5dv_crypto_engines_caps {
	MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS = 1 << 0,
	MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_SINGLE_BLOCK = 1 << 1,
	MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK = 1 << 2,
};

enum mlx5dv_crypto_wrapped_import_method_caps {
	MLX5DV_CRYPTO_WRAPPED_IMPORT_METHOD_CAP_AES_XTS = 1,
};

enum mlx5dv_crypto_caps_flags {
	MLX5DV_CRYPTO_CAPS_CRYPTO = 1 << 0,
	MLX5DV_CRYPTO_CAPS_WRAPPED_CRYPTO_OPERATIONAL = 1 << 1,
	MLX5DV_CRYPTO_CAPS_WRAPPED_CRYPTO_GOING_TO_COMMISSIONING = 1 << 2,
};

struct mlx5dv_crypto_caps {
	uint16_t failed_selftests;
	uint8_t crypto_engines;
	uint8_t wrapped_import_method;
	uint8_t log_max_num_deks;
	uint32_t flags;
};

struct mlx5dv_context {
	uint8_t version;
	uint64_t flags;
	uint64_t comp_mask;
	struct mlx5dv_cqe_comp_caps cqe_comp_caps;
	struct mlx5dv_sw_parsing_caps sw_parsing_caps;
	struct mlx5dv_striding_rq_caps striding_rq_caps;
	uint32_t tunnel_offloads_caps;
	uint32_t max_dynamic_bfregs;
	uint64_t max_clock_info_update_nsec;
	uint32_t flow_action_flags;
	uint32_t dc_odp_caps;
	void *hca_core_clock;
	uint8_t num_lag_ports;
	struct mlx5dv_sig_caps sig_caps;
	struct mlx5dv_dci_streams_caps dci_streams_caps;
	size_t max_wr_memcpy_length;
	struct mlx5dv_crypto_caps crypto_caps;
};

enum mlx5dv_context_flags {
	MLX5DV_CONTEXT_FLAGS_CQE_V1 = 1 << 0,
	MLX5DV_CONTEXT_FLAGS_OBSOLETE = 1 << 1,
	MLX5DV_CONTEXT_FLAGS_MPW_ALLOWED = 1 << 2,
	MLX5DV_CONTEXT_FLAGS_ENHANCED_MPW = 1 << 3,
	MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP = 1 << 4,
	MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD = 1 << 5,
	MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE = 1 << 6,
	MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS = 1 << 7,
};

/* mlx5-specific creation attributes (CQs, QPs, DCs, memory keys, signatures, crypto). */
enum mlx5dv_cq_init_attr_mask {
	MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE = 1 << 0,
	MLX5DV_CQ_INIT_ATTR_MASK_FLAGS = 1 << 1,
	MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE = 1 << 2,
};

enum mlx5dv_cq_init_attr_flags {
	MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD = 1,
	MLX5DV_CQ_INIT_ATTR_FLAGS_RESERVED = 2,
};

struct mlx5dv_cq_init_attr {
	uint64_t comp_mask;
	uint8_t cqe_comp_res_format;
	uint32_t flags;
	uint16_t cqe_size;
};

struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr,
				   struct mlx5dv_cq_init_attr *mlx5_cq_attr);
enum mlx5dv_qp_create_flags {
	MLX5DV_QP_CREATE_TUNNEL_OFFLOADS = 1 << 0,
	MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC = 1 << 1,
	MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC = 1 << 2,
	MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE = 1 << 3,
	MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE = 1 << 4,
	MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE = 1 << 5,
	MLX5DV_QP_CREATE_SIG_PIPELINING = 1 << 6,
};

enum mlx5dv_mkey_init_attr_flags {
	MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT = 1 << 0,
	MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE = 1 << 1,
	MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO = 1 << 2,
	MLX5DV_MKEY_INIT_ATTR_FLAGS_UPDATE_TAG = 1 << 3,
	MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE = 1 << 4,
};

struct mlx5dv_mkey_init_attr {
	struct ibv_pd *pd;
	uint32_t create_flags;
	uint16_t max_entries;
};

struct mlx5dv_mkey {
	uint32_t lkey;
	uint32_t rkey;
};

struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr);
int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey);
enum mlx5dv_qp_init_attr_mask {
	MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS = 1 << 0,
	MLX5DV_QP_INIT_ATTR_MASK_DC = 1 << 1,
	MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS = 1 << 2,
	MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS = 1 << 3,
};

enum mlx5dv_dc_type {
	MLX5DV_DCTYPE_DCT = 1,
	MLX5DV_DCTYPE_DCI = 2,
};

struct mlx5dv_dci_streams {
	uint8_t log_num_concurent;
	uint8_t log_num_errored;
};

struct mlx5dv_dc_init_attr {
	enum mlx5dv_dc_type dc_type;
	union {
		uint64_t dct_access_key;
		struct mlx5dv_dci_streams dci_streams;
	};
};

enum mlx5dv_qp_create_send_ops_flags {
	MLX5DV_QP_EX_WITH_MR_INTERLEAVED = 1 << 0,
	MLX5DV_QP_EX_WITH_MR_LIST = 1 << 1,
	MLX5DV_QP_EX_WITH_MKEY_CONFIGURE = 1 << 2,
	MLX5DV_QP_EX_WITH_RAW_WQE = 1 << 3,
	MLX5DV_QP_EX_WITH_MEMCPY = 1 << 4,
};

struct mlx5dv_qp_init_attr {
	uint64_t comp_mask;
	uint32_t create_flags;
	struct mlx5dv_dc_init_attr dc_init_attr;
	uint64_t send_ops_flags;
};

struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
				struct mlx5dv_qp_init_attr *mlx5_qp_attr);
struct mlx5dv_mr_interleaved {
	uint64_t addr;
	uint32_t bytes_count;
	uint32_t bytes_skip;
	uint32_t lkey;
};

enum mlx5dv_sig_t10dif_flags {
	MLX5DV_SIG_T10DIF_FLAG_REF_REMAP = 1 << 0,
	MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE = 1 << 1,
	MLX5DV_SIG_T10DIF_FLAG_APP_REF_ESCAPE = 1 << 2,
};

struct mlx5dv_sig_t10dif {
	enum mlx5dv_sig_t10dif_bg_type bg_type;
	uint16_t bg;
	uint16_t app_tag;
	uint32_t ref_tag;
	uint16_t flags;
};

struct mlx5dv_sig_crc {
	enum mlx5dv_sig_crc_type type;
	uint64_t seed;
};

struct mlx5dv_sig_block_domain {
	enum mlx5dv_sig_type sig_type;
	union {
		const struct mlx5dv_sig_t10dif *dif;
		const struct mlx5dv_sig_crc *crc;
	} sig;
	enum mlx5dv_block_size block_size;
	uint64_t comp_mask;
};

enum mlx5dv_sig_mask {
	MLX5DV_SIG_MASK_T10DIF_GUARD = 192,
	MLX5DV_SIG_MASK_T10DIF_APPTAG = 48,
	MLX5DV_SIG_MASK_T10DIF_REFTAG = 15,
	MLX5DV_SIG_MASK_CRC32 = 240,
	MLX5DV_SIG_MASK_CRC32C = 240,
	MLX5DV_SIG_MASK_CRC64_XP10 = 255,
};

enum mlx5dv_sig_block_attr_flags {
	MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK = 1,
};

struct mlx5dv_sig_block_attr {
	const struct mlx5dv_sig_block_domain *mem;
	const struct mlx5dv_sig_block_domain *wire;
	uint32_t flags;
	uint8_t check_mask;
	uint8_t copy_mask;
	uint64_t comp_mask;
};

enum mlx5dv_crypto_standard {
	MLX5DV_CRYPTO_STANDARD_AES_XTS = 0,
};

enum mlx5dv_signature_crypto_order {
	MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX = 0,
	MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX = 1,
};

struct mlx5dv_crypto_attr {
	enum mlx5dv_crypto_standard crypto_standard;
	bool encrypt_on_tx;
	enum mlx5dv_signature_crypto_order signature_crypto_order;
	enum mlx5dv_block_size data_unit_size;
	char initial_tweak[16];
	struct mlx5dv_dek *dek;
	char keytag[8];
	uint64_t comp_mask;
};

enum mlx5dv_mkey_conf_flags {
	MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR = 1,
};

struct mlx5dv_mkey_conf_attr {
	uint32_t conf_flags;
	uint64_t comp_mask;
};

enum mlx5dv_wc_opcode {
	MLX5DV_WC_UMR = 135,
	MLX5DV_WC_RAW_WQE = 136,
	MLX5DV_WC_MEMCPY = 137,
};

/* The mlx5 part of an extended QP: builders for DC addressing, memory keys, memcpy. */
struct mlx5dv_qp_ex {
	uint64_t comp_mask;
	void (*wr_set_dc_addr)(struct mlx5dv_qp_ex *, struct ibv_ah *, uint32_t, uint64_t);
	void (*wr_mr_interleaved)(struct mlx5dv_qp_ex *, struct mlx5dv_mkey *, uint32_t, uint32_t,
				  uint16_t, struct mlx5dv_mr_interleaved *);
	void (*wr_mr_list)(struct mlx5dv_qp_ex *, struct mlx5dv_mkey *, uint32_t, uint16_t,
			   struct ibv_sge *);
	void (*wr_mkey_configure)(struct mlx5dv_qp_ex *, struct mlx5dv_mkey *, uint8_t,
				  struct mlx5dv_mkey_conf_attr *);
	void (*wr_set_mkey_access_flags)(struct mlx5dv_qp_ex *, uint32_t);
	void (*wr_set_mkey_layout_list)(struct mlx5dv_qp_ex *, uint16_t, const struct ibv_sge *);
	void (*wr_set_mkey_layout_interleaved)(struct mlx5dv_qp_ex *, uint32_t, uint16_t,
					       const struct mlx5dv_mr_interleaved *);
	void (*wr_set_mkey_sig_block)(struct mlx5dv_qp_ex *, const struct mlx5dv_sig_block_attr *);
	void (*wr_raw_wqe)(struct mlx5dv_qp_ex *, const void *);
	void (*wr_set_dc_addr_stream)(struct mlx5dv_qp_ex *, struct ibv_ah *, uint32_t, uint64_t,
				      uint16_t);
	void (*wr_memcpy)(struct mlx5dv_qp_ex *, uint32_t, uint64_t, uint32_t, uint64_t, size_t);
	void (*wr_set_mkey_crypto)(struct mlx5dv_qp_ex *, const struct mlx5dv_crypto_attr *);
};

struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp);
/*
 * mlx5-specific work-request builders of an extended QP (mlx5dv_qp_ex, from
 * mlx5dv_qp_ex_from_ibv_qp_ex), used between ibv_wr_start and
 * ibv_wr_complete like the ibv_wr_* ones.
 */
static inline void mlx5dv_wr_set_dc_addr(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
					 uint32_t remote_dctn, uint64_t remote_dc_key)
{
	mqp->wr_set_dc_addr(mqp, ah, remote_dctn, remote_dc_key);
}

static inline void mlx5dv_wr_set_dc_addr_stream(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
						uint32_t remote_dctn, uint64_t remote_dc_key,
						uint16_t stream_id)
{
	mqp->wr_set_dc_addr_stream(mqp, ah, remote_dctn, remote_dc_key, stream_id);
}

static inline void mlx5dv_wr_mr_interleaved(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
					    uint32_t access_flags, uint32_t repeat_count,
					    uint16_t num_interleaved, struct mlx5dv_mr_interleaved *data)
{
	mqp->wr_mr_interleaved(mqp, mkey, access_flags, repeat_count, num_interleaved, data);
}

static inline void mlx5dv_wr_mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
				     uint32_t access_flags, uint16_t num_sges, struct ibv_sge *sge)
{
	mqp->wr_mr_list(mqp, mkey, access_flags, num_sges, sge);
}

static inline void mlx5dv_wr_mkey_configure(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
					    uint8_t num_setters, struct mlx5dv_mkey_conf_attr *attr)
{
	mqp->wr_mkey_configure(mqp, mkey, num_setters, attr);
}

static inline void mlx5dv_wr_set_mkey_access_flags(struct mlx5dv_qp_ex *mqp, uint32_t access_flags)
{
	mqp->wr_set_mkey_access_flags(mqp, access_flags);
}

static inline void mlx5dv_wr_set_mkey_layout_list(struct mlx5dv_qp_ex *mqp, uint16_t num_sges,
						  const struct ibv_sge *sge)
{
	mqp->wr_set_mkey_layout_list(mqp, num_sges, sge);
}

static inline void mlx5dv_wr_set_mkey_layout_interleaved(struct mlx5dv_qp_ex *mqp,
							 uint32_t repeat_count,
							 uint16_t num_interleaved,
							 const struct mlx5dv_mr_interleaved *data)
{
	mqp->wr_set_mkey_layout_interleaved(mqp, repeat_count, num_interleaved, data);
}

static inline void mlx5dv_wr_set_mkey_sig_block(struct mlx5dv_qp_ex *mqp,
						const struct mlx5dv_sig_block_attr *attr)
{
	mqp->wr_set_mkey_sig_block(mqp, attr);
}

static inline void mlx5dv_wr_set_mkey_crypto(struct mlx5dv_qp_ex *mqp,
					     const struct mlx5dv_crypto_attr *attr)
{
	mqp->wr_set_mkey_crypto(mqp, attr);
}

static inline void mlx5dv_wr_memcpy(struct mlx5dv_qp_ex *mqp, uint32_t dest_lkey, uint64_t dest_addr,
				    uint32_t src_lkey, uint64_t src_addr, size_t length)
{
	mqp->wr_memcpy(mqp, dest_lkey, dest_addr, src_lkey, src_addr, length);
}

/* Memory-key errors (mlx5dv_mkey_check), crypto login and data encryption keys. */
enum mlx5dv_mkey_err_type {
	MLX5DV_MKEY_NO_ERR = 0,
	MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD = 1,
	MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG = 2,
	MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG = 3,
};

struct mlx5dv_sig_err {
	uint64_t actual_value;
	uint64_t expected_value;
	uint64_t offset;
};

struct mlx5dv_mkey_err {
	enum mlx5dv_mkey_err_type err_type;
	union {
		struct mlx5dv_sig_err sig;
	} err;
};

int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info,
		       size_t err_info_size);
static inline int mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info)
{
	return _mlx5dv_mkey_check(mkey, err_info, sizeof(*err_info));
}

int mlx5dv_qp_cancel_posted_send_wrs(struct mlx5dv_qp_ex *mqp, uint64_t wr_id);
static inline void mlx5dv_wr_raw_wqe(struct mlx5dv_qp_ex *mqp, const void *wqe)
{
	mqp->wr_raw_wqe(mqp, wqe);
}

struct mlx5dv_crypto_login_obj;
struct mlx5dv_crypto_login_attr {
	uint32_t credential_id;
	uint32_t import_kek_id;
	char credential[48];
	uint64_t comp_mask;
};

struct mlx5dv_crypto_login_attr_ex {
	uint32_t credential_id;
	uint32_t import_kek_id;
	const void *credential;
	size_t credential_len;
	uint64_t comp_mask;
};

enum mlx5dv_crypto_login_state {
	MLX5DV_CRYPTO_LOGIN_STATE_VALID = 0,
	MLX5DV_CRYPTO_LOGIN_STATE_NO_LOGIN = 1,
	MLX5DV_CRYPTO_LOGIN_STATE_INVALID = 2,
};

struct mlx5dv_crypto_login_query_attr {
	enum mlx5dv_crypto_login_state state;
	uint64_t comp_mask;
};

int mlx5dv_crypto_login(struct ibv_context *context, struct mlx5dv_crypto_login_attr *login_attr);
int mlx5dv_crypto_login_query_state(struct ibv_context *context,
				    enum mlx5dv_crypto_login_state *state);
int mlx5dv_crypto_logout(struct ibv_context *context);
struct mlx5dv_crypto_login_obj *mlx5dv_crypto_login_create(struct ibv_context *context,
							   struct mlx5dv_crypto_login_attr_ex *login_attr);
int mlx5dv_crypto_login_query(struct mlx5dv_crypto_login_obj *crypto_login,
			      struct mlx5dv_crypto_login_query_attr *query_attr);
int mlx5dv_crypto_login_destroy(struct mlx5dv_crypto_login_obj *crypto_login);
enum mlx5dv_crypto_key_size {
	MLX5DV_CRYPTO_KEY_SIZE_128 = 0,
	MLX5DV_CRYPTO_KEY_SIZE_256 = 1,
};

enum mlx5dv_crypto_key_purpose {
	MLX5DV_CRYPTO_KEY_PURPOSE_AES_XTS = 0,
};

enum mlx5dv_dek_state {
	MLX5DV_DEK_STATE_READY = 0,
	MLX5DV_DEK_STATE_ERROR = 1,
};

enum mlx5dv_dek_init_attr_mask {
	MLX5DV_DEK_INIT_ATTR_CRYPTO_LOGIN = 1,
};

struct mlx5dv_dek_init_attr {
	enum mlx5dv_crypto_key_size key_size;
	bool has_keytag;
	enum mlx5dv_crypto_key_purpose key_purpose;
	struct ibv_pd *pd;
	char opaque[8];
	char key[128];
	uint64_t comp_mask;
	struct mlx5dv_crypto_login_obj *crypto_login;
};

struct mlx5dv_dek_attr {
	enum mlx5dv_dek_state state;
	char opaque[8];
	uint64_t comp_mask;
};

struct mlx5dv_dek;
struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
				     struct mlx5dv_dek_init_attr *init_attr);
int mlx5dv_dek_query(struct mlx5dv_dek *dek, struct mlx5dv_dek_attr *attr);
int mlx5dv_dek_destroy(struct mlx5dv_dek *dek);
/* Flow steering, IPsec actions and steering anchors. */
enum mlx5dv_flow_action_esp_mask {
	MLX5DV_FLOW_ACTION_ESP_MASK_FLAGS = 1,
};

struct mlx5dv_flow_action_esp {
	uint64_t comp_mask;
	uint32_t action_flags;
};

struct mlx5dv_flow_match_parameters {
	size_t match_sz;
	uint64_t match_buf[];
};

enum mlx5dv_flow_matcher_attr_mask {
	MLX5DV_FLOW_MATCHER_MASK_FT_TYPE = 1,
};

struct mlx5dv_flow_matcher_attr {
	enum ibv_flow_attr_type type;
	uint32_t flags;
	uint16_t priority;
	uint8_t match_criteria_enable;
	struct mlx5dv_flow_match_parameters *match_mask;
	uint64_t comp_mask;
	enum mlx5_ib_uapi_flow_table_type ft_type;
};

struct mlx5dv_flow_matcher;
struct mlx5dv_flow_matcher *mlx5dv_create_flow_matcher(struct ibv_context *context,
						       struct mlx5dv_flow_matcher_attr *matcher_attr);
int mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher *matcher);
struct mlx5dv_steering_anchor_attr {
	enum mlx5_ib_uapi_flow_table_type ft_type;
	uint16_t priority;
	uint64_t comp_mask;
};

struct mlx5dv_steering_anchor {
	uint32_t id;
};

struct mlx5dv_steering_anchor *mlx5dv_create_steering_anchor(struct ibv_context *context,
							     struct mlx5dv_steering_anchor_attr *attr);
int mlx5dv_destroy_steering_anchor(struct mlx5dv_steering_anchor *sa);
enum mlx5dv_flow_action_type {
	MLX5DV_FLOW_ACTION_DEST_IBV_QP = 0,
	MLX5DV_FLOW_ACTION_DROP = 1,
	MLX5DV_FLOW_ACTION_IBV_COUNTER = 2,
	MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION = 3,
	MLX5DV_FLOW_ACTION_TAG = 4,
	MLX5DV_FLOW_ACTION_DEST_DEVX = 5,
	MLX5DV_FLOW_ACTION_COUNTERS_DEVX = 6,
	MLX5DV_FLOW_ACTION_DEFAULT_MISS = 7,
};

struct mlx5dv_flow_action_attr {
	enum mlx5dv_flow_action_type type;
	union {
		struct ibv_qp *qp;
		struct ibv_counters *counter;
		struct ibv_flow_action *action;
		uint32_t tag_value;
		struct mlx5dv_devx_obj *obj;
	};
};

struct ibv_flow *mlx5dv_create_flow(struct mlx5dv_flow_matcher *matcher,
				    struct mlx5dv_flow_match_parameters *match_value,
				    size_t num_actions,
				    struct mlx5dv_flow_action_attr *actions_attr);
struct ibv_flow_action *mlx5dv_create_flow_action_esp(struct ibv_context *ctx,
						      struct ibv_flow_action_esp_attr *esp,
						      struct mlx5dv_flow_action_esp *mlx5_attr);
struct ibv_flow_action *mlx5dv_create_flow_action_modify_header(struct ibv_context *ctx,
								size_t actions_sz,
								uint64_t *actions,
								enum mlx5_ib_uapi_flow_table_type ft_type);
struct ibv_flow_action *mlx5dv_create_flow_action_packet_reformat(struct ibv_context *ctx,
								  size_t data_sz, void *data,
								  enum mlx5_ib_uapi_flow_action_packet_reformat_type reformat_type,
								  enum mlx5_ib_uapi_flow_table_type ft_type);
int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out);
int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num);
/* mlx5dv_init_obj: the queue memory, doorbells and UARs behind verbs objects. */
enum mlx5dv_qp_comp_mask {
	MLX5DV_QP_MASK_UAR_MMAP_OFFSET = 1 << 0,
	MLX5DV_QP_MASK_RAW_QP_HANDLES = 1 << 1,
	MLX5DV_QP_MASK_RAW_QP_TIR_ADDR = 1 << 2,
};

struct mlx5dv_qp {
	__be32 *dbrec;
	struct {
		void *buf;
		uint32_t wqe_cnt;
		uint32_t stride;
	} sq;
	struct {
		void *buf;
		uint32_t wqe_cnt;
		uint32_t stride;
	} rq;
	struct {
		void *reg;
		uint32_t size;
	} bf;
	uint64_t comp_mask;
	off_t uar_mmap_offset;
	uint32_t tirn;
	uint32_t tisn;
	uint32_t rqn;
	uint32_t sqn;
	uint64_t tir_icm_addr;
};

struct mlx5dv_cq {
	void *buf;
	__be32 *dbrec;
	uint32_t cqe_cnt;
	uint32_t cqe_size;
	void *cq_uar;
	uint32_t cqn;
	uint64_t comp_mask;
};

enum mlx5dv_srq_comp_mask {
	MLX5DV_SRQ_MASK_SRQN = 1,
};

struct mlx5dv_srq {
	void *buf;
	__be32 *dbrec;
	uint32_t stride;
	uint32_t head;
	uint32_t tail;
	uint64_t comp_mask;
	uint32_t srqn;
};

struct mlx5dv_rwq {
	void *buf;
	__be32 *dbrec;
	uint32_t wqe_cnt;
	uint32_t stride;
	uint64_t comp_mask;
};

struct mlx5dv_alloc_dm_attr {
	enum mlx5_ib_uapi_dm_type type;
	uint64_t comp_mask;
};

enum mlx5dv_dm_comp_mask {
	MLX5DV_DM_MASK_REMOTE_VA = 1,
};

struct mlx5dv_dm {
	void *buf;
	uint64_t length;
	uint64_t comp_mask;
	uint64_t remote_va;
};

struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *dm_attr,
			       struct mlx5dv_alloc_dm_attr *mlx5_dm_attr);
void *mlx5dv_dm_map_op_addr(struct ibv_dm *dm, uint8_t op);
struct mlx5_wqe_av;
struct mlx5dv_ah {
	struct mlx5_wqe_av *av;
	uint64_t comp_mask;
};

struct mlx5dv_pd {
	uint32_t pdn;
	uint64_t comp_mask;
};

struct mlx5dv_obj {
	struct {
		struct ibv_qp *in;
		struct mlx5dv_qp *out;
	} qp;
	struct {
		struct ibv_cq *in;
		struct mlx5dv_cq *out;
	} cq;
	struct {
		struct ibv_srq *in;
		struct mlx5dv_srq *out;
	} srq;
	struct {
		struct ibv_wq *in;
		struct mlx5dv_rwq *out;
	} rwq;
	struct {
		struct ibv_dm *in;
		struct mlx5dv_dm *out;
	} dm;
	struct {
		struct ibv_ah *in;
		struct mlx5dv_ah *out;
	} ah;
	struct {
		struct ibv_pd *in;
		struct mlx5dv_pd *out;
	} pd;
};

enum mlx5dv_obj_type {
	MLX5DV_OBJ_QP = 1 << 0,
	MLX5DV_OBJ_CQ = 1 << 1,
	MLX5DV_OBJ_SRQ = 1 << 2,
	MLX5DV_OBJ_RWQ = 1 << 3,
	MLX5DV_OBJ_DM = 1 << 4,
	MLX5DV_OBJ_AH = 1 << 5,
	MLX5DV_OBJ_PD = 1 << 6,
};

enum mlx5dv_wq_init_attr_mask {
	MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ = 1,
};

struct mlx5dv_striding_rq_init_attr {
	uint32_t single_stride_log_num_of_bytes;
	uint32_t single_wqe_log_num_of_strides;
	uint8_t two_byte_shift_en;
};

struct mlx5dv_wq_init_attr {
	uint64_t comp_mask;
	struct mlx5dv_striding_rq_init_attr striding_rq_attrs;
};

struct ibv_wq *mlx5dv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
				struct mlx5dv_wq_init_attr *mlx5_wq_attr);
int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type);
/* The device's formats: opcodes, CQE and WQE constants. */
enum {
	MLX5_OPCODE_NOP = 0,
	MLX5_OPCODE_SEND_INVAL = 1,
	MLX5_OPCODE_RDMA_WRITE = 8,
	MLX5_OPCODE_RDMA_WRITE_IMM = 9,
	MLX5_OPCODE_SEND = 10,
	MLX5_OPCODE_SEND_IMM = 11,
	MLX5_OPCODE_TSO = 14,
	MLX5_OPCODE_RDMA_READ = 16,
	MLX5_OPCODE_ATOMIC_CS = 17,
	MLX5_OPCODE_ATOMIC_FA = 18,
	MLX5_OPCODE_ATOMIC_MASKED_CS = 20,
	MLX5_OPCODE_ATOMIC_MASKED_FA = 21,
	MLX5_OPCODE_FMR = 25,
	MLX5_OPCODE_LOCAL_INVAL = 27,
	MLX5_OPCODE_CONFIG_CMD = 31,
	MLX5_OPCODE_SET_PSV = 32,
	MLX5_OPCODE_UMR = 37,
	MLX5_OPCODE_TAG_MATCHING = 40,
	MLX5_OPCODE_FLOW_TBL_ACCESS = 44,
	MLX5_OPCODE_MMO = 47,
};

enum {
	MLX5_INLINE_SCATTER_32 = 4,
	MLX5_INLINE_SCATTER_64 = 8,
};

enum {
	MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR = 1,
	MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR = 2,
	MLX5_CQE_SYNDROME_LOCAL_PROT_ERR = 4,
	MLX5_CQE_SYNDROME_WR_FLUSH_ERR = 5,
	MLX5_CQE_SYNDROME_MW_BIND_ERR = 6,
	MLX5_CQE_SYNDROME_BAD_RESP_ERR = 16,
	MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR = 17,
	MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR = 18,
	MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR = 19,
	MLX5_CQE_SYNDROME_REMOTE_OP_ERR = 20,
	MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR = 21,
	MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR = 22,
	MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR = 34,
};

enum {
	MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT = 147,
};

enum {
	MLX5_CQE_L2_OK = 1 << 0,
	MLX5_CQE_L3_OK = 1 << 1,
	MLX5_CQE_L4_OK = 1 << 2,
};

enum {
	MLX5_CQE_L3_HDR_TYPE_NONE = 0,
	MLX5_CQE_L3_HDR_TYPE_IPV6 = 1,
	MLX5_CQE_L3_HDR_TYPE_IPV4 = 2,
};

enum {
	MLX5_CQE_OWNER_MASK = 1,
	MLX5_CQE_REQ = 0,
	MLX5_CQE_RESP_WR_IMM = 1,
	MLX5_CQE_RESP_SEND = 2,
	MLX5_CQE_RESP_SEND_IMM = 3,
	MLX5_CQE_RESP_SEND_INV = 4,
	MLX5_CQE_RESIZE_CQ = 5,
	MLX5_CQE_NO_PACKET = 6,
	MLX5_CQE_SIG_ERR = 12,
	MLX5_CQE_REQ_ERR = 13,
	MLX5_CQE_RESP_ERR = 14,
	MLX5_CQE_INVALID = 15,
};

enum {
	MLX5_CQ_DOORBELL = 32,
};

enum {
	MLX5_CQ_DB_REQ_NOT_SOL = 0x1000000,
	MLX5_CQ_DB_REQ_NOT = 0,
};

/* Completion entries as the device writes them (64 bytes, big-endian). */
struct mlx5_err_cqe {
	uint8_t rsvd0[32];
	uint32_t srqn;
	uint8_t rsvd1[18];
	uint8_t vendor_err_synd;
	uint8_t syndrome;
	uint32_t s_wqe_opcode_qpn;
	uint16_t wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

struct mlx5_tm_cqe {
	__be32 success;
	__be16 hw_phase_cnt;
	uint8_t rsvd0[12];
};

struct mlx5_cqe64 {
	union {
		struct {
			uint8_t rsvd0[2];
			__be16 wqe_id;
			uint8_t rsvd4[13];
			uint8_t ml_path;
			uint8_t rsvd20[4];
			__be16 slid;
			__be32 flags_rqpn;
			uint8_t hds_ip_ext;
			uint8_t l4_hdr_type_etc;
			__be16 vlan_info;
		};
		struct mlx5_tm_cqe tm_cqe;
		struct ibv_tmh tmh;
	};
	__be32 srqn_uidx;
	__be32 imm_inval_pkey;
	uint8_t app;
	uint8_t app_op;
	__be16 app_info;
	__be32 byte_cnt;
	__be64 timestamp;
	__be32 sop_drop_qpn;
	__be16 wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

enum {
	MLX5_TMC_SUCCESS = 0x80000000,
};

enum mlx5dv_cqe_comp_res_format {
	MLX5DV_CQE_RES_FORMAT_HASH = 1 << 0,
	MLX5DV_CQE_RES_FORMAT_CSUM = 1 << 1,
	MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX = 1 << 2,
};

enum mlx5dv_sw_parsing_offloads {
	MLX5DV_SW_PARSING = 1 << 0,
	MLX5DV_SW_PARSING_CSUM = 1 << 1,
	MLX5DV_SW_PARSING_LSO = 1 << 2,
};

/* op_own of a CQE: bit 0 owner, bit 1 solicited event, bits 2-3 format, bits 4-7 opcode. */
static MLX5DV_ALWAYS_INLINE uint8_t mlx5dv_get_cqe_owner(struct mlx5_cqe64 *cqe)
{
	return cqe->op_own & 0x1;
}

static MLX5DV_ALWAYS_INLINE void mlx5dv_set_cqe_owner(struct mlx5_cqe64 *cqe, uint8_t val)
{
	cqe->op_own = (cqe->op_own & ~0x1) | (val & 0x1);
}

static MLX5DV_ALWAYS_INLINE uint8_t mlx5dv_get_cqe_se(struct mlx5_cqe64 *cqe)
{
	return (cqe->op_own >> 1) & 0x1;
}

static MLX5DV_ALWAYS_INLINE uint8_t mlx5dv_get_cqe_format(struct mlx5_cqe64 *cqe)
{
	return (cqe->op_own >> 2) & 0x3;
}

static MLX5DV_ALWAYS_INLINE uint8_t mlx5dv_get_cqe_opcode(struct mlx5_cqe64 *cqe)
{
	return cqe->op_own >> 4;
}

enum {
	MLX5_INVALID_LKEY = 256,
};

enum {
	MLX5_EXTENDED_UD_AV = 0x80000000,
};

enum {
	MLX5_WQE_CTRL_CQ_UPDATE = 1 << 3,
	MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	MLX5_WQE_CTRL_FENCE = 1 << 7,
	MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5,
};

enum {
	MLX5_SEND_WQE_BB = 64,
	MLX5_SEND_WQE_SHIFT = 6,
};

enum {
	MLX5_INLINE_SEG = 0x80000000,
};

enum {
	MLX5_ETH_WQE_L3_CSUM = 64,
	MLX5_ETH_WQE_L4_CSUM = 128,
};

/* WQE segments, big-endian as the device reads them. */
struct mlx5_wqe_srq_next_seg {
	uint8_t rsvd0[2];
	__be16 next_wqe_index;
	uint8_t signature;
	uint8_t rsvd1[11];
};

struct mlx5_wqe_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};

struct mlx5_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	uint8_t signature;
	__be16 dci_stream_channel_id;
	uint8_t fm_ce_se;
	__be32 imm;
} __attribute__((packed)) __attribute__((aligned(4)));

struct mlx5_mprq_wqe {
	struct mlx5_wqe_srq_next_seg nseg;
	struct mlx5_wqe_data_seg dseg;
};

struct mlx5_wqe_av {
	union {
		struct {
			__be32 qkey;
			__be32 reserved;
		} qkey;
		__be64 dc_key;
	} key;
	__be32 dqp_dct;
	uint8_t stat_rate_sl;
	uint8_t fl_mlid;
	__be16 rlid;
	uint8_t reserved0[4];
	uint8_t rmac[6];
	uint8_t tclass;
	uint8_t hop_limit;
	__be32 grh_gid_fl;
	uint8_t rgid[16];
};

struct mlx5_wqe_datagram_seg {
	struct mlx5_wqe_av av;
};

struct mlx5_wqe_raddr_seg {
	__be64 raddr;
	__be32 rkey;
	__be32 reserved;
};

struct mlx5_wqe_atomic_seg {
	__be64 swap_add;
	__be64 compare;
};

struct mlx5_wqe_inl_data_seg {
	uint32_t byte_count;
};

struct mlx5_wqe_eth_seg {
	__be32 rsvd0;
	uint8_t cs_flags;
	uint8_t rsvd1;
	__be16 mss;
	__be32 rsvd2;
	__be16 inline_hdr_sz;
	uint8_t inline_hdr_start[2];
	uint8_t inline_hdr[16];
};

struct mlx5_wqe_tm_seg {
	uint8_t opcode;
	uint8_t flags;
	__be16 index;
	uint8_t rsvd0[2];
	__be16 sw_cnt;
	uint8_t rsvd1[8];
	__be64 append_tag;
	__be64 append_mask;
};

enum {
	MLX5_WQE_UMR_CTRL_FLAG_INLINE = 1 << 7,
	MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE = 1 << 5,
	MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET = 1 << 4,
	MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN = 1 << 3,
};

enum {
	MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN = 1 << 0,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR = 1 << 6,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_SIG_ERR = 1 << 9,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE = 1 << 12,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY = 1 << 13,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN = 1 << 14,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE = 1 << 18,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ = 1 << 19,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE = 1 << 20,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC = 1 << 21,
	MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE = 1 << 29,
};

struct mlx5_wqe_umr_ctrl_seg {
	uint8_t flags;
	uint8_t rsvd0[3];
	__be16 klm_octowords;
	union {
		__be16 translation_offset;
		__be16 bsf_octowords;
	};
	__be64 mkey_mask;
	uint8_t rsvd1[32];
};

struct mlx5_wqe_umr_klm_seg {
	__be32 byte_count;
	__be32 mkey;
	__be64 address;
};

union mlx5_wqe_umr_inline_seg {
	struct mlx5_wqe_umr_klm_seg klm;
};

struct mlx5_wqe_umr_repeat_ent_seg {
	__be16 stride;
	__be16 byte_count;
	__be32 memkey;
	__be64 va;
};

struct mlx5_wqe_umr_repeat_block_seg {
	__be32 byte_count;
	__be32 op;
	__be32 repeat_count;
	__be16 reserved;
	__be16 num_ent;
	struct mlx5_wqe_umr_repeat_ent_seg entries[0];
};

enum {
	MLX5_WQE_MKEY_CONTEXT_FREE = 64,
};

enum {
	MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC = 1 << 6,
	MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE = 1 << 5,
	MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ = 1 << 4,
	MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE = 1 << 3,
	MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_READ = 1 << 2,
};

struct mlx5_wqe_mkey_context_seg {
	uint8_t free;
	uint8_t reserved1;
	uint8_t access_flags;
	uint8_t sf;
	__be32 qpn_mkey;
	__be32 reserved2;
	__be32 flags_pd;
	__be64 start_addr;
	__be64 len;
	__be32 bsf_octword_size;
	__be32 reserved3[4];
	__be32 translations_octword_size;
	uint8_t reserved4[3];
	uint8_t log_page_size;
	__be32 reserved;
	union mlx5_wqe_umr_inline_seg inseg[0];
};

/*
 * WQE segment writers: fill one segment in the device's big-endian layout.
 * The ctrl segment: WQE index (pi), opcode and modifier, QPN with the size
 * in 16-byte units (ds), fence/completion/solicited bits, signature and
 * immediate (already in wire order).
 */
static MLX5DV_ALWAYS_INLINE void mlx5dv_set_ctrl_seg(struct mlx5_wqe_ctrl_seg *seg, uint16_t pi,
						     uint8_t opcode, uint8_t opmod, uint32_t qp_num,
						     uint8_t fm_ce_se, uint8_t ds, uint8_t signature,
						     uint32_t imm)
{
	seg->opmod_idx_opcode = htobe32(((uint32_t)opmod << 24) | ((uint32_t)pi << 8) | opcode);
	seg->qpn_ds = htobe32((qp_num << 8) | ds);
	seg->fm_ce_se = fm_ce_se;
	seg->signature = signature;
	seg->imm = imm;
}

#if defined(__SSE3__)
/*
 * The same ctrl segment built in one SSE register: the fields are packed in
 * host order, then one byte shuffle puts each byte where the big-endian
 * segment wants it (-128/0x80 selects a zero byte).
 */
static MLX5DV_ALWAYS_INLINE void mlx5dv_x86_set_ctrl_seg(struct mlx5_wqe_ctrl_seg *seg, uint16_t pi,
							 uint8_t opcode, uint8_t opmod,
							 uint32_t qp_num, uint8_t fm_ce_se,
							 uint8_t ds, uint8_t signature, uint32_t imm)
{
	__m128i packed = _mm_set_epi32(imm, qp_num, (ds << 16) | pi,
				       (signature << 24) | (opcode << 16) | (opmod << 8) | fm_ce_se);
	__m128i order = _mm_set_epi8(15, 14, 13, 12, 0,
#if CHAR_MIN
				     -128, -128,
#else
				     0x80, 0x80,
#endif
				     3, 6, 8, 9, 10, 2, 4, 5, 1);

	*(__m128i *)seg = _mm_shuffle_epi8(packed, order);
}
#endif

/* The address vector of a UD or DC send; rmac is 6 bytes, rgid 16. */
static MLX5DV_ALWAYS_INLINE void mlx5dv_set_dgram_seg(struct mlx5_wqe_datagram_seg *seg, uint64_t key,
						      uint32_t dqp_dct, uint8_t ext,
						      uint8_t stat_rate_sl, uint8_t fl_mlid,
						      uint16_t rlid, uint8_t *rmac, uint8_t tclass,
						      uint8_t hop_limit, uint32_t grh_gid_fi,
						      uint8_t *rgid)
{
	seg->av.key.dc_key = htobe64(key);
	seg->av.dqp_dct = htobe32(((uint32_t)ext << 31) | dqp_dct);
	seg->av.stat_rate_sl = stat_rate_sl;
	seg->av.fl_mlid = fl_mlid;
	seg->av.rlid = htobe16(rlid);
	memcpy(seg->av.rmac, rmac, 6);
	seg->av.tclass = tclass;
	seg->av.hop_limit = hop_limit;
	seg->av.grh_gid_fl = htobe32(grh_gid_fi);
	memcpy(seg->av.rgid, rgid, 16);
}

static MLX5DV_ALWAYS_INLINE void mlx5dv_set_data_seg(struct mlx5_wqe_data_seg *seg, uint32_t length,
						     uint32_t lkey, uintptr_t address)
{
	seg->byte_count = htobe32(length);
	seg->lkey = htobe32(lkey);
	seg->addr = htobe64(address);
}

#if defined(__SSE3__)
/* The data segment with one byte shuffle: length, lkey, address high and low words, each byte-swapped. */
static MLX5DV_ALWAYS_INLINE void mlx5dv_x86_set_data_seg(struct mlx5_wqe_data_seg *seg, uint32_t length,
							 uint32_t lkey, uintptr_t address)
{
	uint64_t addr = address;
	__m128i packed = _mm_set_epi32((uint32_t)addr, (uint32_t)(addr >> 32), lkey, length);
	__m128i order = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);

	*(__m128i *)seg = _mm_shuffle_epi8(packed, order);
}
#endif

static MLX5DV_ALWAYS_INLINE void mlx5dv_set_eth_seg(struct mlx5_wqe_eth_seg *seg, uint8_t cs_flags,
						    uint16_t mss, uint16_t inline_hdr_sz,
						    uint8_t *inline_hdr_start)
{
	seg->cs_flags = cs_flags;
	seg->mss = htobe16(mss);
	seg->inline_hdr_sz = htobe16(inline_hdr_sz);
	memcpy(seg->inline_hdr_start, inline_hdr_start, inline_hdr_sz);
}

enum mlx5dv_set_ctx_attr_type {
	MLX5DV_CTX_ATTR_BUF_ALLOCATORS = 1,
};

enum {
	MLX5_MMAP_GET_REGULAR_PAGES_CMD = 0,
	MLX5_MMAP_GET_NC_PAGES_CMD = 3,
};

struct mlx5dv_ctx_allocators {
	void *(*alloc)(size_t, void *);
	void (*free)(void *, void *);
	void *data;
};

int mlx5dv_set_context_attr(struct ibv_context *context, enum mlx5dv_set_ctx_attr_type type,
			    void *attr);
struct mlx5dv_clock_info {
	uint64_t nsec;
	uint64_t last_cycles;
	uint64_t frac;
	uint32_t mult;
	uint32_t shift;
	uint64_t mask;
};

int mlx5dv_get_clock_info(struct ibv_context *context, struct mlx5dv_clock_info *clock_info);
/*
 * A device timestamp in nanoseconds of real time, from the clock snapshot
 * mlx5dv_get_clock_info returned; timestamps before the snapshot (more than
 * half the counter's range "ahead") are counted backwards.
 */
static inline uint64_t mlx5dv_ts_to_ns(struct mlx5dv_clock_info *clock_info, uint64_t device_timestamp)
{
	uint64_t delta = (device_timestamp - clock_info->last_cycles) & clock_info->mask;
	uint64_t nsec = clock_info->nsec;

	if (delta > clock_info->mask / 2) {
		delta = (clock_info->last_cycles - device_timestamp) & clock_info->mask;
		nsec -= ((delta * clock_info->mult) - clock_info->frac) >> clock_info->shift;
	} else {
		nsec += ((delta * clock_info->mult) + clock_info->frac) >> clock_info->shift;
	}
	return nsec;
}

enum mlx5dv_context_attr_flags {
	MLX5DV_CONTEXT_FLAGS_DEVX = 1,
};

struct mlx5dv_context_attr {
	uint32_t flags;
	uint64_t comp_mask;
};

bool mlx5dv_is_supported(struct ibv_device *device);
enum mlx5dv_vfio_context_attr_flags {
	MLX5DV_VFIO_CTX_FLAGS_INIT_LINK_DOWN = 1,
};

struct mlx5dv_vfio_context_attr {
	const char *pci_name;
	uint32_t flags;
	uint64_t comp_mask;
};

struct ibv_device **mlx5dv_get_vfio_device_list(struct mlx5dv_vfio_context_attr *attr);
int mlx5dv_vfio_get_events_fd(struct ibv_context *ibctx);
int mlx5dv_vfio_process_events(struct ibv_context *context);
struct ibv_context *mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr);
struct mlx5dv_devx_obj;
struct mlx5dv_devx_obj *mlx5dv_devx_obj_create(struct ibv_context *context, const void *in,
					       size_t inlen, void *out, size_t outlen);
int mlx5dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
			  size_t outlen);
int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
			   size_t outlen);
int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj);
int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen, void *out,
			    size_t outlen);
int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
		       struct mlx5_ib_uapi_query_port *info, size_t info_len);
static inline int mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
				    struct mlx5dv_port *info)
{
	return _mlx5dv_query_port(context, port_num, info, sizeof(*info));
}

struct mlx5dv_devx_umem {
	uint32_t umem_id;
};

struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg(struct ibv_context *ctx, void *addr, size_t size,
					      uint32_t access);
enum mlx5dv_devx_umem_in_mask {
	MLX5DV_UMEM_MASK_DMABUF = 1,
};

struct mlx5dv_devx_umem_in {
	void *addr;
	size_t size;
	uint32_t access;
	uint64_t pgsz_bitmap;
	uint64_t comp_mask;
	int dmabuf_fd;
};

struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
						 struct mlx5dv_devx_umem_in *umem_in);
int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *umem);
struct mlx5dv_devx_uar {
	void *reg_addr;
	void *base_addr;
	uint32_t page_id;
	off_t mmap_off;
	uint64_t comp_mask;
};

struct mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(struct ibv_context *context, uint32_t flags);
void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *devx_uar);
struct mlx5dv_var {
	uint32_t page_id;
	uint32_t length;
	off_t mmap_off;
	uint64_t comp_mask;
};

struct mlx5dv_var *mlx5dv_alloc_var(struct ibv_context *context, uint32_t flags);
void mlx5dv_free_var(struct mlx5dv_var *dv_var);
int mlx5dv_devx_query_eqn(struct ibv_context *context, uint32_t vector, uint32_t *eqn);
int mlx5dv_devx_cq_query(struct ibv_cq *cq, const void *in, size_t inlen, void *out, size_t outlen);
int mlx5dv_devx_cq_modify(struct ibv_cq *cq, const void *in, size_t inlen, void *out,
			  size_t outlen);
int mlx5dv_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen, void *out, size_t outlen);
int mlx5dv_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen, void *out,
			  size_t outlen);
int mlx5dv_devx_srq_query(struct ibv_srq *srq, const void *in, size_t inlen, void *out,
			  size_t outlen);
int mlx5dv_devx_srq_modify(struct ibv_srq *srq, const void *in, size_t inlen, void *out,
			   size_t outlen);
int mlx5dv_devx_wq_query(struct ibv_wq *wq, const void *in, size_t inlen, void *out, size_t outlen);
int mlx5dv_devx_wq_modify(struct ibv_wq *wq, const void *in, size_t inlen, void *out,
			  size_t outlen);
int mlx5dv_devx_ind_tbl_query(struct ibv_rwq_ind_table *ind_tbl, const void *in, size_t inlen,
			      void *out, size_t outlen);
int mlx5dv_devx_ind_tbl_modify(struct ibv_rwq_ind_table *ind_tbl, const void *in, size_t inlen,
			       void *out, size_t outlen);
struct mlx5dv_devx_cmd_comp {
	int fd;
};

struct mlx5dv_devx_cmd_comp *mlx5dv_devx_create_cmd_comp(struct ibv_context *context);
void mlx5dv_devx_destroy_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp);
int mlx5dv_devx_obj_query_async(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen,
				size_t outlen, uint64_t wr_id,
				struct mlx5dv_devx_cmd_comp *cmd_comp);
int mlx5dv_devx_get_async_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp,
				   struct mlx5_ib_uapi_devx_async_cmd_hdr *cmd_resp,
				   size_t cmd_resp_len);
struct mlx5dv_devx_event_channel {
	int fd;
};

struct mlx5dv_devx_event_channel *mlx5dv_devx_create_event_channel(struct ibv_context *context,
								   enum mlx5_ib_uapi_devx_create_event_channel_flags flags);
void mlx5dv_devx_destroy_event_channel(struct mlx5dv_devx_event_channel *event_channel);
int mlx5dv_devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *event_channel,
				     struct mlx5dv_devx_obj *obj, uint16_t events_sz,
				     uint16_t *events_num, uint64_t cookie);
int mlx5dv_devx_subscribe_devx_event_fd(struct mlx5dv_devx_event_channel *event_channel, int fd,
					struct mlx5dv_devx_obj *obj, uint16_t event_num);
ssize_t mlx5dv_devx_get_event(struct mlx5dv_devx_event_channel *event_channel,
			      struct mlx5_ib_uapi_devx_async_event_hdr *event_data,
			      size_t event_resp_len);
/*
 * DEVX command layouts: a program describes a PRM structure as
 * struct mlx5_ifc_<name>_bits with one byte per bit, so sizeof and offsetof
 * of it give sizes and offsets in bits; these read and write such fields in
 * a big-endian command buffer.
 */
#define __devx_nullp(typ) ((struct mlx5_ifc_##typ##_bits *)NULL)

#define __devx_st_sz_bits(typ) sizeof(struct mlx5_ifc_##typ##_bits)

#define __devx_bit_sz(typ, fld) sizeof(__devx_nullp(typ)->fld)

#define __devx_bit_off(typ, fld) offsetof(struct mlx5_ifc_##typ##_bits, fld)

#define __devx_dw_off(bit_off) ((bit_off) / 32)

#define __devx_64_off(bit_off) ((bit_off) / 64)

#define __devx_dw_bit_off(bit_sz, bit_off) (32 - (bit_sz) - ((bit_off) & 0x1f))

#define __devx_mask(bit_sz) ((uint32_t)((1ull << (bit_sz)) - 1))

#define __devx_dw_mask(bit_sz, bit_off) (__devx_mask(bit_sz) << __devx_dw_bit_off(bit_sz, bit_off))

#define DEVX_FLD_SZ_BYTES(typ, fld) (__devx_bit_sz(typ, fld) / 8)

#define DEVX_ST_SZ_BYTES(typ) (sizeof(struct mlx5_ifc_##typ##_bits) / 8)

#define DEVX_ST_SZ_DW(typ) (sizeof(struct mlx5_ifc_##typ##_bits) / 32)

#define DEVX_ST_SZ_QW(typ) (sizeof(struct mlx5_ifc_##typ##_bits) / 64)

#define DEVX_UN_SZ_BYTES(typ) (sizeof(union mlx5_ifc_##typ##_bits) / 8)

#define DEVX_UN_SZ_DW(typ) (sizeof(union mlx5_ifc_##typ##_bits) / 32)

#define DEVX_BYTE_OFF(typ, fld) (__devx_bit_off(typ, fld) / 8)

#define DEVX_ADDR_OF(typ, p, fld) ((unsigned char *)(p) + DEVX_BYTE_OFF(typ, fld))

/* Writes the low bit_sz bits of value at bit bit_off (counted from the MSB of dword 0). */
static inline void _devx_set(void *p, uint32_t value, size_t bit_off, size_t bit_sz)
{
	__be32 *dw = (__be32 *)(p) + __devx_dw_off(bit_off);
	uint32_t keep = be32toh(*dw) & ~__devx_dw_mask(bit_sz, bit_off);
	uint32_t field = (value & __devx_mask(bit_sz)) << __devx_dw_bit_off(bit_sz, bit_off);

	*dw = htobe32(keep | field);
}

#define DEVX_SET(typ, p, fld, v) _devx_set(p, v, __devx_bit_off(typ, fld), __devx_bit_sz(typ, fld))

static inline uint32_t _devx_get(const void *p, size_t bit_off, size_t bit_sz)
{
	uint32_t dw = be32toh(*((const __be32 *)(p) + __devx_dw_off(bit_off)));

	return (dw >> __devx_dw_bit_off(bit_sz, bit_off)) & __devx_mask(bit_sz);
}

#define DEVX_GET(typ, p, fld) _devx_get(p, __devx_bit_off(typ, fld), __devx_bit_sz(typ, fld))

/* 64-bit fields are 64-bit aligned: written whole. */
static inline void _devx_set64(void *p, uint64_t v, size_t bit_off)
{
	*((__be64 *)(p) + __devx_64_off(bit_off)) = htobe64(v);
}

#define DEVX_SET64(typ, p, fld, v) _devx_set64(p, v, __devx_bit_off(typ, fld))

static inline uint64_t _devx_get64(const void *p, size_t bit_off)
{
	return be64toh(*((const __be64 *)(p) + __devx_64_off(bit_off)));
}

#define DEVX_GET64(typ, p, fld) _devx_get64(p, __devx_bit_off(typ, fld))

#define DEVX_ARRAY_SET64(typ, p, fld, idx, v)                                                      \
	do {                                                                                       \
		DEVX_SET64(typ, p, fld[idx], v);                                                   \
	} while (0)

struct mlx5dv_dr_domain;
struct mlx5dv_dr_table;
struct mlx5dv_dr_matcher;
struct mlx5dv_dr_rule;
struct mlx5dv_dr_action;
enum mlx5dv_dr_domain_type {
	MLX5DV_DR_DOMAIN_TYPE_NIC_RX = 0,
	MLX5DV_DR_DOMAIN_TYPE_NIC_TX = 1,
	MLX5DV_DR_DOMAIN_TYPE_FDB = 2,
};

enum mlx5dv_dr_domain_sync_flags {
	MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW = 1 << 0,
	MLX5DV_DR_DOMAIN_SYNC_FLAGS_HW = 1 << 1,
	MLX5DV_DR_DOMAIN_SYNC_FLAGS_MEM = 1 << 2,
};

struct mlx5dv_dr_flow_meter_attr {
	struct mlx5dv_dr_table *next_table;
	uint8_t active;
	uint8_t reg_c_index;
	size_t flow_meter_parameter_sz;
	void *flow_meter_parameter;
};

struct mlx5dv_dr_flow_sampler_attr {
	uint32_t sample_ratio;
	struct mlx5dv_dr_table *default_next_table;
	uint32_t num_sample_actions;
	struct mlx5dv_dr_action **sample_actions;
	__be64 action;
};

struct mlx5dv_dr_domain *mlx5dv_dr_domain_create(struct ibv_context *ctx,
						 enum mlx5dv_dr_domain_type type);
int mlx5dv_dr_domain_destroy(struct mlx5dv_dr_domain *domain);
int mlx5dv_dr_domain_sync(struct mlx5dv_dr_domain *domain, uint32_t flags);
void mlx5dv_dr_domain_set_reclaim_device_memory(struct mlx5dv_dr_domain *dmn, bool enable);
void mlx5dv_dr_domain_allow_duplicate_rules(struct mlx5dv_dr_domain *domain, bool allow);
struct mlx5dv_dr_table *mlx5dv_dr_table_create(struct mlx5dv_dr_domain *domain, uint32_t level);
int mlx5dv_dr_table_destroy(struct mlx5dv_dr_table *table);
struct mlx5dv_dr_matcher *mlx5dv_dr_matcher_create(struct mlx5dv_dr_table *table, uint16_t priority,
						   uint8_t match_criteria_enable,
						   struct mlx5dv_flow_match_parameters *mask);
int mlx5dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *matcher);
enum mlx5dv_dr_matcher_layout_flags {
	MLX5DV_DR_MATCHER_LAYOUT_RESIZABLE = 1,
	MLX5DV_DR_MATCHER_LAYOUT_NUM_RULE = 2,
};

struct mlx5dv_dr_matcher_layout {
	uint32_t flags;
	uint32_t log_num_of_rules_hint;
};

int mlx5dv_dr_matcher_set_layout(struct mlx5dv_dr_matcher *matcher,
				 struct mlx5dv_dr_matcher_layout *layout);
struct mlx5dv_dr_rule *mlx5dv_dr_rule_create(struct mlx5dv_dr_matcher *matcher,
					     struct mlx5dv_flow_match_parameters *value,
					     size_t num_actions, struct mlx5dv_dr_action **actions);
int mlx5dv_dr_rule_destroy(struct mlx5dv_dr_rule *rule);
enum mlx5dv_dr_action_flags {
	MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL = 1,
};

struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp *ibqp);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_table(struct mlx5dv_dr_table *table);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_vport(struct mlx5dv_dr_domain *domain,
							    uint32_t vport);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ib_port(struct mlx5dv_dr_domain *domain,
							      uint32_t ib_port);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_devx_tir(struct mlx5dv_devx_obj *devx_obj);
enum mlx5dv_dr_action_dest_type {
	MLX5DV_DR_ACTION_DEST = 0,
	MLX5DV_DR_ACTION_DEST_REFORMAT = 1,
};

struct mlx5dv_dr_action_dest_reformat {
	struct mlx5dv_dr_action *reformat;
	struct mlx5dv_dr_action *dest;
};

struct mlx5dv_dr_action_dest_attr {
	enum mlx5dv_dr_action_dest_type type;
	union {
		struct mlx5dv_dr_action *dest;
		struct mlx5dv_dr_action_dest_reformat *dest_reformat;
	};
};

struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_array(struct mlx5dv_dr_domain *domain,
							    size_t num_dest,
							    struct mlx5dv_dr_action_dest_attr **dests);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_default_miss(void);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_tag(uint32_t tag_value);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_flow_counter(struct mlx5dv_devx_obj *devx_obj,
							      uint32_t offset);
enum mlx5dv_dr_action_aso_first_hit_flags {
	MLX5DV_DR_ACTION_FLAGS_ASO_FIRST_HIT_SET = 1,
};

enum mlx5dv_dr_action_aso_flow_meter_flags {
	MLX5DV_DR_ACTION_FLAGS_ASO_FLOW_METER_RED = 1 << 0,
	MLX5DV_DR_ACTION_FLAGS_ASO_FLOW_METER_YELLOW = 1 << 1,
	MLX5DV_DR_ACTION_FLAGS_ASO_FLOW_METER_GREEN = 1 << 2,
	MLX5DV_DR_ACTION_FLAGS_ASO_FLOW_METER_UNDEFINED = 1 << 3,
};

enum mlx5dv_dr_action_aso_ct_flags {
	MLX5DV_DR_ACTION_FLAGS_ASO_CT_DIRECTION_INITIATOR = 1,
	MLX5DV_DR_ACTION_FLAGS_ASO_CT_DIRECTION_RESPONDER = 2,
};

struct mlx5dv_dr_action *mlx5dv_dr_action_create_aso(struct mlx5dv_dr_domain *domain,
						     struct mlx5dv_devx_obj *devx_obj,
						     uint32_t offset, uint32_t flags,
						     uint8_t return_reg_c);
int mlx5dv_dr_action_modify_aso(struct mlx5dv_dr_action *action, uint32_t offset, uint32_t flags,
				uint8_t return_reg_c);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_packet_reformat(struct mlx5dv_dr_domain *domain,
								 uint32_t flags,
								 enum mlx5_ib_uapi_flow_action_packet_reformat_type reformat_type,
								 size_t data_sz, void *data);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_modify_header(struct mlx5dv_dr_domain *domain,
							       uint32_t flags, size_t actions_sz,
							       __be64 *actions);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_flow_meter(struct mlx5dv_dr_flow_meter_attr *attr);
int mlx5dv_dr_action_modify_flow_meter(struct mlx5dv_dr_action *action,
				       struct mlx5dv_dr_flow_meter_attr *attr,
				       __be64 modify_field_select);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_flow_sampler(struct mlx5dv_dr_flow_sampler_attr *attr);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_push_vlan(struct mlx5dv_dr_domain *domain,
							   __be32 vlan_hdr);
struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_root_table(struct mlx5dv_dr_table *table,
								 uint16_t priority);
int mlx5dv_dr_action_destroy(struct mlx5dv_dr_action *action);
int mlx5dv_dump_dr_domain(FILE *fout, struct mlx5dv_dr_domain *domain);
int mlx5dv_dump_dr_table(FILE *fout, struct mlx5dv_dr_table *table);
int mlx5dv_dump_dr_matcher(FILE *fout, struct mlx5dv_dr_matcher *matcher);
int mlx5dv_dump_dr_rule(FILE *fout, struct mlx5dv_dr_rule *rule);
struct mlx5dv_pp {
	uint16_t index;
};

struct mlx5dv_pp *mlx5dv_pp_alloc(struct ibv_context *context, size_t pp_context_sz,
				  const void *pp_context, uint32_t flags);
void mlx5dv_pp_free(struct mlx5dv_pp *pp);
int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num, uint8_t *active_port_num);
int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num);
int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport);
int mlx5dv_dci_stream_id_reset(struct ibv_qp *qp, uint16_t stream_id);
enum mlx5dv_sched_elem_attr_flags {
	MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE = 1,
	MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW = 2,
};

struct mlx5dv_sched_attr {
	struct mlx5dv_sched_node *parent;
	uint32_t flags;
	uint32_t bw_share;
	uint32_t max_avg_bw;
	uint64_t comp_mask;
};

struct mlx5dv_sched_node;
struct mlx5dv_sched_leaf;
struct mlx5dv_sched_node *mlx5dv_sched_node_create(struct ibv_context *context,
						   const struct mlx5dv_sched_attr *sched_attr);
struct mlx5dv_sched_leaf *mlx5dv_sched_leaf_create(struct ibv_context *context,
						   const struct mlx5dv_sched_attr *sched_attr);
int mlx5dv_sched_node_modify(struct mlx5dv_sched_node *node,
			     const struct mlx5dv_sched_attr *sched_attr);
int mlx5dv_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf,
			     const struct mlx5dv_sched_attr *sched_attr);
int mlx5dv_sched_node_destroy(struct mlx5dv_sched_node *node);
int mlx5dv_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf);
int mlx5dv_modify_qp_sched_elem(struct ibv_qp *qp, const struct mlx5dv_sched_leaf *requestor,
				const struct mlx5dv_sched_leaf *responder);
int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn);
int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn);
int mlx5dv_dr_aso_other_domain_link(struct mlx5dv_devx_obj *devx_obj,
				    struct mlx5dv_dr_domain *peer_dmn, struct mlx5dv_dr_domain *dmn,
				    uint32_t flags, uint8_t return_reg_c);
int mlx5dv_dr_aso_other_domain_unlink(struct mlx5dv_devx_obj *devx_obj,
				      struct mlx5dv_dr_domain *dmn);
struct mlx5dv_devx_msi_vector {
	int vector;
	int fd;
};

struct mlx5dv_devx_msi_vector *mlx5dv_devx_alloc_msi_vector(struct ibv_context *ibctx);
int mlx5dv_devx_free_msi_vector(struct mlx5dv_devx_msi_vector *msi);
struct mlx5dv_devx_eq {
	void *vaddr;
};

struct mlx5dv_devx_eq *mlx5dv_devx_create_eq(struct ibv_context *ibctx, const void *in,
					     size_t inlen, void *out, size_t outlen);
int mlx5dv_devx_destroy_eq(struct mlx5dv_devx_eq *eq);

#ifdef __cplusplus
}
#endif

#endif /* _MLX5DV_H_ */
