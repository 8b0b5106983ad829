/*
 * vb_devx_caps — the QUERY_HCA_CAP pages mlx5dv_devx_general_cmd answers
 * beside the device-memory page: the general device capabilities (type 0),
 * ODP (type 2), atomics (type 3) and the NIC flow-table capabilities (type 7), laid out as the PRM's
 * cmd_hca_cap and flow_table_nic_cap (mlx5_ifc.h), big-endian, each field
 * at its bit offset. The values say what this device does, so a program
 * that reads them finds what it can use: the sizes ibv_query_device and
 * ibv_query_port report, as logarithms; the port's type (Ethernet or
 * InfiniBand); NIC receive and transmit steering with the fields hw_steer
 * matches (vb_dr.c), drop, VLAN pop and flow tags (receive) and push
 * (transmit), dest arrays of up to 16 destinations, flow counters, header
 * modify, and packet reformat: L2 tunnel decap (receive) and encap
 * (transmit) of headers up to 128 bytes (hw_reformat.h). What the steering
 * does not do stays 0: the L3 tunnel reformats, software-owned ICM.
 * Maximum and current values are the
 * same (nothing here is set by a program). DevX RMPs (vb_devx_rmp.c) are
 * SRQs of the engine: log_max_rmp is log_max_srq. The QoS page (type 0xc) says
 * what packet pacing and the schedule elements offer (vb_pace.c, vb_sched.c).
 */
#include <string.h>

#include "hw_modhdr.h"
#include "hw_pp.h"
#include "hw_reformat.h"
#include "hw_xatomic.h"
#include "vb_int.h"

#define CAP_TYPE_GENERAL 0x0
#define CAP_TYPE_ODP 0x2
#define CAP_TYPE_ATOMIC 0x3
#define CAP_TYPE_NIC_FLOW_TABLE 0x7
#define CAP_TYPE_QOS 0xc

/* cmd_hca_cap: bit offsets and widths (mlx5_ifc_cmd_hca_cap_bits). */
#define G_LOG_MAX_SRQ_SZ 128, 8
#define G_LOG_MAX_QP_SZ 136, 8
#define G_LOG_MAX_QP 155, 5
#define G_LOG_MAX_SRQ 171, 5
#define G_LOG_MAX_CQ_SZ 200, 8
#define G_LOG_MAX_CQ 219, 5
#define G_RELAXED_ORDERING_WRITE 232, 1
#define G_RELAXED_ORDERING_READ 233, 1
#define G_LOG_MAX_MKEY 234, 6
#define G_FIXED_BUFFER_SIZE 264, 1
#define G_QPC_EXTENSION 290, 1
#define G_LOG_MAX_RA_REQ_DC 298, 6
#define G_LOG_MAX_RA_RES_DC 314, 6
#define G_UMR_MODIFY_ATOMIC_DISABLED 520, 1
#define G_DCT 538, 1
#define G_ATOMIC 542, 1
#define G_PG 551, 1
#define G_LOG_MAX_RA_REQ_QP 330, 6
#define G_LOG_MAX_RA_RES_QP 346, 6
#define G_GID_TABLE_SIZE 368, 16
#define G_PKEY_TABLE_SIZE 400, 16
#define G_NIC_FLOW_TABLE 422, 1
#define G_PORT_TYPE 438, 2
#define G_NUM_PORTS 440, 8
#define G_LOG_MAX_MSG 451, 5
#define G_CQE_VERSION 508, 4
#define G_QOS 539, 1
#define G_ROCE 541, 1
#define G_LOG_PG_SZ 600, 8
#define G_LOG_MAX_PD 811, 5
#define G_LOG_MAX_XRCD 827, 5
#define G_LOG_MAX_RQ 867, 5
#define G_LOG_MAX_RMP 899, 5
#define G_LOG_MAX_SQ 875, 5
#define G_LOG_MAX_TIR 883, 5
#define G_LOG_MAX_WQ_SZ 987, 5

/*
 * qos_cap (the PRM's, of which rdma-core's mlx5_ifc.h names the NIC part):
 * packet pacing and the NIC scheduling elements, as a ConnectX-6 Dx
 * reports them (vb_pace.c, vb_sched.c).
 */
#define Q_PACKET_PACING 0, 1
#define Q_PP_BURST_BOUND 5, 1
#define Q_PP_TYPICAL_SIZE 6, 1
#define Q_NIC_SQ_SCHEDULING 8, 1
#define Q_NIC_BW_SHARE 9, 1
#define Q_NIC_RATE_LIMIT 10, 1
#define Q_PP_UID 11, 1
#define Q_NIC_QP_SCHEDULING 33, 1
#define Q_PP_MAX_RATE 64, 32
#define Q_PP_MIN_RATE 96, 32
#define Q_PP_RATE_TABLE_SIZE 144, 16
#define Q_MAX_TSAR_BW_SHARE 224, 32
#define Q_NIC_ELEMENT_TYPE 256, 16
#define Q_NIC_TSAR_TYPE 272, 16

#define ELEMENT_TYPE_TSAR (1u << 0)
#define ELEMENT_TYPE_QUEUE_GROUP (1u << 4)
#define TSAR_TYPE_DWRR (1u << 0)
#define QOS_MAX_TSAR_BW_SHARE 100u /* vb_sched.c's bound */

/* atomic_caps (PRM): IBV_ATOMIC_HCA's 8-byte forms and the masked ones the engine runs (hw_xatomic.h). */
#define A_REQ_8B_ENDIANNESS_MODE 64, 2
#define A_OPERATIONS 144, 16
#define A_SIZE_QP 176, 16
#define A_SIZE_DC 208, 16
/* The values: the engine's (hw_xatomic.h); mode 1 (host order) is also the kernel's condition for IB_ATOMIC_HCA. */

/* odp_cap: per transport one odp_per_transport_service_cap (send, receive, write, read, atomic, srq_receive). */
#define O_RC 128
#define O_UC 160
#define O_UD 192
#define O_XRC 224
#define O_DC 256

#define PORT_TYPE_IB 0
#define PORT_TYPE_ETH 1
#define CQE_VERSION_1 1
#define LOG_PAGE 12
#define LOG_ETH_WQ_MAX 15 /* the Ethernet port's largest WQ (hw_eth.h) */
#define LOG_TIR_MAX 24	  /* TIR numbers are 24 bits */

/* flow_table_nic_cap: the receive and transmit flow_table_prop_layout, and fields in each. */
#define FT_NIC_RECEIVE 512
#define FT_NIC_TRANSMIT 2048
#define P_FT_SUPPORT 0, 1
#define P_FLOW_TAG 1, 1
#define P_FLOW_COUNTER 2, 1
#define P_REFORMAT 7, 1
#define P_DECAP 8, 1
#define P_LOG_MAX_MODIFY_HDR 40, 8
#define P_MAX_MODIFY_HDR_ACTIONS 48, 8
#define P_LOG_MAX_FLOW_COUNTER 136, 8
#define P_FLOW_MODIFY_EN 3, 1
#define P_MODIFY_ROOT 4, 1
#define P_POP_VLAN 10, 1
#define P_PUSH_VLAN 11, 1
#define P_LOG_MAX_FT_SIZE 34, 6
#define P_MAX_FT_LEVEL 56, 8
#define P_LOG_MAX_FT_NUM 120, 8
#define P_LOG_MAX_DESTINATION 152, 8
#define P_LOG_MAX_FLOW 184, 8
#define N_ENCAP_GENERAL_HEADER 32, 1
#define N_LOG_MAX_PACKET_REFORMAT 43, 5
#define N_MAX_ENCAP_HEADER_SIZE 54, 10
#define P_FIELD_SUPPORT 256 /* flow_table_fields_supported: one bit a field, from bit 0 */

/* The outer fields hw_steer matches, as flow_table_fields_supported numbers them. */
static const unsigned steer_fields[] = {
	0,  /* outer_dmac */
	1,  /* outer_smac */
	2,  /* outer_ether_type */
	3,  /* outer_ip_version */
	4,  /* outer_first_prio */
	5,  /* outer_first_cfi */
	6,  /* outer_first_vid */
	7,  /* outer_ipv4_ttl */
	12, /* outer_sip */
	13, /* outer_dip */
	14, /* outer_frag */
	15, /* outer_ip_protocol */
	16, /* outer_ip_ecn */
	17, /* outer_ip_dscp */
	18, /* outer_udp_sport */
	19, /* outer_udp_dport */
	20, /* outer_tcp_sport */
	21, /* outer_tcp_dport */
	22, /* outer_tcp_flags */
};

#define LOG_FT_SIZE VB_DR_LOG_RULES_MAX /* a table's rules: a list, limited by memory only */
#define MAX_FT_LEVEL 0xff   /* the field's largest value: levels are unbounded here */
#define LOG_FT_NUM 24
#define LOG_DESTINATION 4   /* a dest array's 16 destinations (VB_DR_DESTS_MAX) */
#define LOG_FLOW 24
#define LOG_MODIFY_HDR 24   /* header modify lists: limited by memory only */
#define LOG_REFORMAT 24	    /* reformat contexts: the same */
#define LOG_FLOW_COUNTER 3  /* counters of one rule: its 8 actions */

/* Sets the field of width n at bit offset off (PRM numbering: bit 0 is the top bit of byte 0). */
static void cap_set(uint8_t *page, unsigned off, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned bit = off + n - 1 - i; /* v's bit i */
		uint8_t m = (uint8_t)(0x80u >> (bit % 8));

		if ((v >> i) & 1)
			page[bit / 8] |= m;
		else
			page[bit / 8] &= (uint8_t)~m;
	}
}

#define SET(page, field, v) cap_set(page, field, (uint32_t)(v))
#define SET_AT(page, base, field, v) cap_set_at(page, base, field, (uint32_t)(v))

static void cap_set_at(uint8_t *page, unsigned base, unsigned off, unsigned n, uint32_t v)
{
	cap_set(page, base + off, n, v);
}

/* floor(log2(v)), 0 for 0 and 1. */
static uint32_t cap_log(uint64_t v)
{
	uint32_t l = 0;

	while (v > 1) {
		v >>= 1;
		l++;
	}
	return l;
}

static int cap_general(struct ibv_context *c, uint8_t *page)
{
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	bool eth;

	if (ibv_query_device(c, &a) != 0 || ibv_query_port(c, VB_PORT, &p) != 0)
		return EIO;
	eth = p.link_layer == IBV_LINK_LAYER_ETHERNET;
	SET(page, G_LOG_MAX_SRQ_SZ, cap_log((uint64_t)a.max_srq_wr));
	SET(page, G_LOG_MAX_QP_SZ, cap_log((uint64_t)a.max_qp_wr));
	SET(page, G_LOG_MAX_QP, cap_log((uint64_t)a.max_qp));
	SET(page, G_LOG_MAX_SRQ, cap_log((uint64_t)a.max_srq));
	SET(page, G_LOG_MAX_CQ_SZ, cap_log((uint64_t)a.max_cqe));
	SET(page, G_LOG_MAX_CQ, cap_log((uint64_t)a.max_cq));
	SET(page, G_LOG_MAX_MKEY, cap_log((uint64_t)a.max_mr));
	SET(page, G_LOG_MAX_RA_REQ_QP, cap_log((uint64_t)a.max_qp_init_rd_atom));
	SET(page, G_LOG_MAX_RA_RES_QP, cap_log((uint64_t)a.max_qp_rd_atom));
	/* DC as mlx5dv_query_device reports it: DCIs read as RC QPs do. */
	SET(page, G_DCT, 1);
	SET(page, G_LOG_MAX_RA_REQ_DC, cap_log((uint64_t)a.max_qp_init_rd_atom));
	SET(page, G_LOG_MAX_RA_RES_DC, cap_log((uint64_t)a.max_qp_rd_atom));
	SET(page, G_ATOMIC, a.atomic_cap != IBV_ATOMIC_NONE); /* the atomic page (type 3) is there */
	SET(page, G_PG, 1);				     /* ODP, the ODP page (type 2) */
	/*
	 * KSM keys (vb_devx_mkey.c). UCX's DevX domain gives its peers an atomic
	 * key at an offset of 8 * (pid % 256) bytes whenever it has a second,
	 * strict-order registration (relaxed ordering on, the default on AMD
	 * CPUs), and they add the offset to every address they use with it: a
	 * KSM key built to take it. Without KSM it hands out the strict MR's
	 * own key, at which the offset lands the peers' writes and atomics
	 * beside their targets.
	 */
	SET(page, G_FIXED_BUFFER_SIZE, 1);
	/* UMR WQEs that change a key's atomic rights are not emulated. */
	SET(page, G_UMR_MODIFY_ATOMIC_DISABLED, 1);
	/* The mkey context's relaxed-ordering bits are taken: a hint with nothing to order here. */
	SET(page, G_RELAXED_ORDERING_WRITE, 1);
	SET(page, G_RELAXED_ORDERING_READ, 1);
	SET(page, G_GID_TABLE_SIZE, p.gid_tbl_len);
	SET(page, G_PKEY_TABLE_SIZE, p.pkey_tbl_len);
	SET(page, G_NIC_FLOW_TABLE, eth);
	SET(page, G_PORT_TYPE, eth ? PORT_TYPE_ETH : PORT_TYPE_IB);
	SET(page, G_NUM_PORTS, a.phys_port_cnt);
	SET(page, G_LOG_MAX_MSG, cap_log(p.max_msg_sz));
	SET(page, G_CQE_VERSION, CQE_VERSION_1);
	SET(page, G_ROCE, eth);
	SET(page, G_QOS, 1); /* the QoS page (type 0xc) is there */
	SET(page, G_QPC_EXTENSION, 1); /* a QP's queue group (mlx5dv_modify_qp_sched_elem) */
	SET(page, G_LOG_PG_SZ, LOG_PAGE);
	SET(page, G_LOG_MAX_PD, cap_log((uint64_t)a.max_pd));
	SET(page, G_LOG_MAX_XRCD, cap_log((uint64_t)a.max_pd)); /* one XRC domain a PD at most */
	SET(page, G_LOG_MAX_RMP, cap_log((uint64_t)a.max_srq)); /* DevX RMPs are SRQs (vb_devx_rmp.c) */
	if (eth) {
		SET(page, G_LOG_MAX_RQ, cap_log((uint64_t)a.max_qp));
		SET(page, G_LOG_MAX_SQ, cap_log((uint64_t)a.max_qp));
		SET(page, G_LOG_MAX_TIR, LOG_TIR_MAX);
		SET(page, G_LOG_MAX_WQ_SZ, LOG_ETH_WQ_MAX);
	}
	return 0;
}

/* One direction's properties: steering, drop, and the VLAN edit of that direction. */
static void cap_ft_prop(uint8_t *page, unsigned base, bool receive)
{
	SET_AT(page, base, P_FT_SUPPORT, 1);
	SET_AT(page, base, P_FLOW_MODIFY_EN, 1);
	SET_AT(page, base, P_MODIFY_ROOT, 1);
	SET_AT(page, base, P_FLOW_COUNTER, 1);
	SET_AT(page, base, P_REFORMAT, 1); /* L2 decap on receive, encap on transmit */
	SET_AT(page, base, P_LOG_MAX_MODIFY_HDR, LOG_MODIFY_HDR);
	SET_AT(page, base, P_MAX_MODIFY_HDR_ACTIONS, HW_MODHDR_MAX);
	SET_AT(page, base, P_LOG_MAX_FLOW_COUNTER, LOG_FLOW_COUNTER);
	if (receive) {
		SET_AT(page, base, P_DECAP, 1);
		SET_AT(page, base, P_POP_VLAN, 1);
		SET_AT(page, base, P_FLOW_TAG, 1); /* tags reach the receive CQE */
	} else {
		SET_AT(page, base, P_PUSH_VLAN, 1);
	}
	SET_AT(page, base, P_LOG_MAX_FT_SIZE, LOG_FT_SIZE);
	SET_AT(page, base, P_MAX_FT_LEVEL, MAX_FT_LEVEL);
	SET_AT(page, base, P_LOG_MAX_FT_NUM, LOG_FT_NUM);
	SET_AT(page, base, P_LOG_MAX_DESTINATION, LOG_DESTINATION);
	SET_AT(page, base, P_LOG_MAX_FLOW, LOG_FLOW);
	for (size_t i = 0; i < sizeof(steer_fields) / sizeof(steer_fields[0]); i++)
		cap_set(page, base + P_FIELD_SUPPORT + steer_fields[i], 1, 1);
}

static int cap_nic_flow_table(struct ibv_context *c, uint8_t *page)
{
	struct ibv_port_attr p;

	if (ibv_query_port(c, VB_PORT, &p) != 0)
		return EIO;
	if (p.link_layer != IBV_LINK_LAYER_ETHERNET)
		return 0; /* no NIC steering on an InfiniBand port: the page says none */
	SET(page, N_ENCAP_GENERAL_HEADER, 1);
	SET(page, N_LOG_MAX_PACKET_REFORMAT, LOG_REFORMAT);
	SET(page, N_MAX_ENCAP_HEADER_SIZE, HW_REFORMAT_DATA_MAX);
	cap_ft_prop(page, FT_NIC_RECEIVE, true);
	cap_ft_prop(page, FT_NIC_TRANSMIT, false);
	return 0;
}

static int cap_qos(uint8_t *page)
{
	SET(page, Q_PACKET_PACING, 1);
	SET(page, Q_PP_BURST_BOUND, 1);
	SET(page, Q_PP_TYPICAL_SIZE, 1);
	SET(page, Q_NIC_SQ_SCHEDULING, 1);
	SET(page, Q_NIC_BW_SHARE, 1);
	SET(page, Q_NIC_RATE_LIMIT, 1);
	SET(page, Q_PP_UID, 1);
	SET(page, Q_NIC_QP_SCHEDULING, 1);
	SET(page, Q_PP_MAX_RATE, VB_PP_RATE_MAX);
	SET(page, Q_PP_MIN_RATE, VB_PP_RATE_MIN);
	SET(page, Q_PP_RATE_TABLE_SIZE, HW_PP_ENTRIES + 1); /* entry 0 is "no rate" */
	SET(page, Q_MAX_TSAR_BW_SHARE, QOS_MAX_TSAR_BW_SHARE);
	SET(page, Q_NIC_ELEMENT_TYPE, ELEMENT_TYPE_TSAR | ELEMENT_TYPE_QUEUE_GROUP);
	SET(page, Q_NIC_TSAR_TYPE, TSAR_TYPE_DWRR);
	return 0;
}

static int cap_atomic(struct ibv_context *c, uint8_t *page)
{
	struct ibv_device_attr a;

	if (ibv_query_device(c, &a) != 0)
		return EIO;
	if (a.atomic_cap == IBV_ATOMIC_NONE)
		return 0;
	SET(page, A_REQ_8B_ENDIANNESS_MODE, HW_XATOMIC_CAP_8B_MODE);
	SET(page, A_OPERATIONS, HW_XATOMIC_CAP_OPS);
	SET(page, A_SIZE_QP, HW_XATOMIC_CAP_SIZES);
	SET(page, A_SIZE_DC, HW_XATOMIC_CAP_SIZES);
	return 0;
}

/* One transport's ODP bits, from the verbs' IBV_ODP_SUPPORT_* (same order: send, receive, write, read, atomic, srq). */
static void cap_odp_transport(uint8_t *page, unsigned base, uint32_t caps)
{
	static const uint32_t bits[] = {IBV_ODP_SUPPORT_SEND, IBV_ODP_SUPPORT_RECV, IBV_ODP_SUPPORT_WRITE,
					IBV_ODP_SUPPORT_READ, IBV_ODP_SUPPORT_ATOMIC, IBV_ODP_SUPPORT_SRQ_RECV};

	for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		cap_set(page, base + i, 1, (caps & bits[i]) != 0);
}

static int cap_odp(uint8_t *page)
{
	struct ibv_device_attr_ex a = {0};

	vb_odp_caps(&a);
	cap_odp_transport(page, O_RC, a.odp_caps.per_transport_caps.rc_odp_caps);
	cap_odp_transport(page, O_UC, a.odp_caps.per_transport_caps.uc_odp_caps);
	cap_odp_transport(page, O_UD, a.odp_caps.per_transport_caps.ud_odp_caps);
	cap_odp_transport(page, O_XRC, a.xrc_odp_caps);
	cap_odp_transport(page, O_DC, vb_odp_dc_caps());
	return 0;
}

int vb_devx_cap_page(struct ibv_context *c, unsigned type, uint8_t *page)
{
	switch (type) {
	case CAP_TYPE_GENERAL:
		return cap_general(c, page);
	case CAP_TYPE_ODP:
		return cap_odp(page);
	case CAP_TYPE_ATOMIC:
		return cap_atomic(c, page);
	case CAP_TYPE_NIC_FLOW_TABLE:
		return cap_nic_flow_table(c, page);
	case CAP_TYPE_QOS:
		return cap_qos(page);
	default:
		return EOPNOTSUPP;
	}
}
