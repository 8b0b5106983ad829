/*
 * mlx5dv_devx_general_cmd's QUERY_HCA_CAP of the general device page
 * (type 0) and of the NIC flow-table page (type 7), read field by field at
 * the PRM's bit offsets (mlx5_ifc.h cmd_hca_cap, flow_table_nic_cap,
 * flow_table_prop_layout): the sizes agree with what ibv_query_device and
 * ibv_query_port report, the port is Ethernet with RoCE and NIC steering,
 * and the steering offers what mlx5dv_dr does here (VLAN pop on receive,
 * push on transmit, the outer fields) and not what it does not (reformat,
 * which rdma-core's suite checks at bytes 20, 21, 80 and 272 of out).
 * The general page also says what UCX 1.13.1 reads (ib_mlx5dv_md.c): DC
 * (dct, log_max_ra_req_dc), atomics and ODP with their pages (types 3 and
 * 2), log_max_msg 30, KSM mkeys but no atomic UMR ones, the relaxed-ordering
 * bits of an mkey context taken; QUERY_NIC_VPORT_CONTEXT,
 * QUERY_HCA_VPORT_CONTEXT and QUERY_LAG answer, and bad commands get the kernel's and the card's
 * refusals (EINVAL with out untouched; EREMOTEIO or EOPNOTSUPP with status
 * and syndrome in out).
 */
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "verbs_fixture.h"

#define OP_QUERY_HCA_CAP 0x100
#define CAP_IN_SZ 0x10
#define CAP_OUT_SZ 0x1010
#define HDR 0x10

static uint8_t out[CAP_OUT_SZ];

/* The field of width n at bit offset off of the page (bit 0: the top bit of the page's byte 0). */
static uint32_t field(unsigned off, unsigned n)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned bit = off + i;

		v = v << 1 | ((out[HDR + bit / 8] >> (7 - bit % 8)) & 1u);
	}
	return v;
}

static uint32_t lg(uint64_t v)
{
	uint32_t l = 0;

	while (v > 1) {
		v >>= 1;
		l++;
	}
	return l;
}

static int query(struct ibv_context *c, uint16_t op_mod)
{
	uint8_t in[CAP_IN_SZ] = {0};

	in[0] = OP_QUERY_HCA_CAP >> 8;
	in[1] = OP_QUERY_HCA_CAP & 0xff;
	in[6] = (uint8_t)(op_mod >> 8);
	in[7] = (uint8_t)op_mod;
	memset(out, 0xee, sizeof(out));
	return mlx5dv_devx_general_cmd(c, in, sizeof(in), out, sizeof(out));
}

static void check_header(void)
{
	for (int i = 0; i < HDR; i++)
		CHECK(out[i] == 0); /* status 0, syndrome 0 */
}

static void test_general_page(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr a;
	struct ibv_port_attr p;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_device(c, &a));
	CHECK_OK(ibv_query_port(c, 1, &p));
	CHECK(p.link_layer == IBV_LINK_LAYER_ETHERNET);
	for (uint16_t cur = 0; cur < 2; cur++) {
		CHECK_OK(query(c, cur)); /* type 0: maximum, then current */
		check_header();
		CHECK(field(128, 8) == lg((uint64_t)a.max_srq_wr));  /* log_max_srq_sz */
		CHECK(field(136, 8) == lg((uint64_t)a.max_qp_wr));   /* log_max_qp_sz */
		CHECK(field(155, 5) == lg((uint64_t)a.max_qp));      /* log_max_qp */
		CHECK(field(171, 5) == lg((uint64_t)a.max_srq));     /* log_max_srq */
		CHECK(field(200, 8) == lg((uint64_t)a.max_cqe));     /* log_max_cq_sz */
		CHECK(field(219, 5) == lg((uint64_t)a.max_cq));      /* log_max_cq */
		CHECK(field(234, 6) == lg((uint64_t)a.max_mr));      /* log_max_mkey */
		CHECK(field(330, 6) == lg((uint64_t)a.max_qp_init_rd_atom));
		CHECK(field(346, 6) == lg((uint64_t)a.max_qp_rd_atom));
		CHECK(field(368, 16) == (uint32_t)p.gid_tbl_len);
		CHECK(field(400, 16) == p.pkey_tbl_len);
		CHECK(field(422, 1) == 1);			      /* nic_flow_table */
		CHECK(field(438, 2) == 1);			      /* port_type: Ethernet */
		CHECK(field(440, 8) == a.phys_port_cnt);	      /* num_ports */
		CHECK(field(451, 5) == lg(p.max_msg_sz));	      /* log_max_msg */
		CHECK(field(508, 4) == 1);			      /* cqe_version */
		CHECK(field(541, 1) == 1);			      /* roce */
		CHECK(field(600, 8) == 12);			      /* log_pg_sz */
		CHECK(field(811, 5) == lg((uint64_t)a.max_pd));      /* log_max_pd */
		CHECK(field(987, 5) == 15);			      /* log_max_wq_sz: the Ethernet port's WQs */
		CHECK(field(1566, 1) == 0);			      /* sw_owner_id: no software-owned ICM */
		/* What UCX reads. */
		CHECK(field(451, 5) == 30);			      /* log_max_msg: UCX requires 30 (1 GiB) */
		CHECK(field(538, 1) == 1);			      /* dct */
		CHECK(field(630, 2) == 0);			      /* lag_dct: no LAG */
		CHECK(field(298, 6) == lg((uint64_t)a.max_qp_init_rd_atom)); /* log_max_ra_req_dc */
		CHECK(field(314, 6) == lg((uint64_t)a.max_qp_rd_atom));      /* log_max_ra_res_dc */
		CHECK(field(542, 1) == (a.atomic_cap != IBV_ATOMIC_NONE));    /* atomic */
		CHECK(field(551, 1) == 1);			      /* pg: ODP */
		CHECK(field(264, 1) == 1);			      /* fixed_buffer_size: KSM mkeys */
		CHECK(field(232, 2) == 3);			      /* relaxed_ordering_write, _read: taken, no effect */
		CHECK(field(280, 2) == 0);			      /* umr_extended_translation_offset, null_mkey */
		CHECK(field(520, 1) == 1);			      /* umr_modify_atomic_disabled */
		CHECK(field(899, 5) == lg((uint64_t)a.max_srq));    /* log_max_rmp: DevX RMPs, counted as SRQs */
		CHECK(field(312, 1) == 0);			      /* ooo_sl_mask */
		CHECK(field(504, 1) == 0);			      /* init2_lag_tx_port_affinity */
		CHECK(field(1470, 2) == 0);			      /* cqe_compression (128 and 64 bytes) */
	}
}

/*
 * atomic_caps (type 3): what the kernel turns into IBV_ATOMIC_HCA, 8-byte compare-swap and fetch-add, and
 * the masked (extended) forms in 4 and 8 bytes on RC and DC (test_verbs_extatomic runs them).
 */
static void test_atomic_page(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex ax;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	CHECK(ax.orig_attr.atomic_cap == IBV_ATOMIC_HCA);
	for (uint16_t cur = 0; cur < 2; cur++) {
		CHECK_OK(query(c, (uint16_t)(0x3 << 1 | cur)));
		check_header();
		CHECK(field(64, 2) == 1);	/* atomic_req_8B_endianness_mode: host (IBV_ATOMIC_HCA) */
		CHECK(field(144, 16) == 0xf);	/* atomic_operations: compare-swap, fetch-add, their masked forms */
		CHECK(field(176, 16) == 0xc);	/* atomic_size_qp: 4 and 8 bytes */
		CHECK(field(208, 16) == 0xc);	/* atomic_size_dc */
		/* No PCI atomics, as ibv_query_device_ex's pci_atomic_caps. */
		CHECK(ax.pci_atomic_caps.fetch_add == 0 && ax.pci_atomic_caps.compare_swap == 0);
		CHECK(field(640, 16) == 0 && field(672, 16) == 0);
		for (unsigned b = 0; b < 0x1000; b++) /* nothing else */
			CHECK(b == 8 || b == 18 || b == 19 || b == 22 || b == 23 || b == 26 || b == 27 ||
			      out[HDR + b] == 0);
	}
}

/* The six ODP bits of one transport, in IBV_ODP_SUPPORT_* form. */
static uint32_t odp_bits(unsigned base)
{
	static const uint32_t bits[] = {IBV_ODP_SUPPORT_SEND, IBV_ODP_SUPPORT_RECV, IBV_ODP_SUPPORT_WRITE,
					IBV_ODP_SUPPORT_READ, IBV_ODP_SUPPORT_ATOMIC, IBV_ODP_SUPPORT_SRQ_RECV};
	uint32_t v = 0;

	for (unsigned i = 0; i < 6; i++)
		if (field(base + i, 1))
			v |= bits[i];
	return v;
}

/* odp_cap (type 2): per transport what ibv_query_device_ex and mlx5dv_query_device report. */
static void test_odp_page(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context dv = {.comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS};
	struct ibv_device_attr_ex ax;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	CHECK_OK(mlx5dv_query_device(c, &dv));
	CHECK((dv.comp_mask & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS) != 0);
	CHECK((ax.odp_caps.general_caps & IBV_ODP_SUPPORT) != 0);
	for (uint16_t cur = 0; cur < 2; cur++) {
		CHECK_OK(query(c, (uint16_t)(0x2 << 1 | cur)));
		check_header();
		CHECK(odp_bits(128) == ax.odp_caps.per_transport_caps.rc_odp_caps);
		CHECK(odp_bits(160) == ax.odp_caps.per_transport_caps.uc_odp_caps);
		CHECK(odp_bits(192) == ax.odp_caps.per_transport_caps.ud_odp_caps);
		CHECK(odp_bits(224) == ax.xrc_odp_caps);
		CHECK(odp_bits(256) == dv.dc_odp_caps);
		/* What UCX's uct_ib_mlx5_devx_check_odp requires. */
		CHECK(field(192, 1) == 1 && field(128, 1) == 1 && field(130, 1) == 1 && field(131, 1) == 1);
		CHECK(field(256, 1) == 1 && field(258, 1) == 1 && field(259, 1) == 1);
	}
}

#define OP_QUERY_NIC_VPORT 0x754
#define OP_QUERY_LAG 0x842
#define NVC_OUT_SZ 0x110

/* A command of in's 16 bytes: byte 8 (other_vport, other_function at its top bit), byte 9 (port_num), vport_number. */
static int cmd9(struct ibv_context *c, uint16_t op, uint8_t in8, uint8_t in9, uint16_t vport, size_t inlen,
		size_t outlen)
{
	uint8_t in[CAP_IN_SZ] = {0};

	in[0] = (uint8_t)(op >> 8);
	in[1] = (uint8_t)op;
	in[8] = in8;
	in[9] = in9;
	in[10] = (uint8_t)(vport >> 8);
	in[11] = (uint8_t)vport;
	memset(out, 0xee, sizeof(out));
	return mlx5dv_devx_general_cmd(c, in, inlen, out, outlen);
}

static int cmd(struct ibv_context *c, uint16_t op, uint8_t in8, uint16_t vport, size_t inlen, size_t outlen)
{
	return cmd9(c, op, in8, 0, vport, inlen, outlen);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* QUERY_NIC_VPORT_CONTEXT of the own vport: roce_en, the MTU of 1500-byte frames, the MAC of GID 0's link-local. */
static void test_nic_vport(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_port_attr p;
	union ibv_gid gid;
	uint8_t mac[6];

	CHECK(c != NULL);
	CHECK_OK(ibv_query_port(c, 1, &p));
	CHECK_OK(ibv_query_gid(c, 1, 0, &gid));
	CHECK(p.active_mtu == IBV_MTU_1024); /* RoCE's MTU over 1500-byte Ethernet frames */
	CHECK(gid.raw[0] == 0xfe && gid.raw[1] == 0x80 && gid.raw[11] == 0xff && gid.raw[12] == 0xfe);
	mac[0] = gid.raw[8] ^ 0x02, mac[1] = gid.raw[9], mac[2] = gid.raw[10];
	mac[3] = gid.raw[13], mac[4] = gid.raw[14], mac[5] = gid.raw[15];
	CHECK_OK(cmd(c, OP_QUERY_NIC_VPORT, 0, 0, CAP_IN_SZ, NVC_OUT_SZ));
	check_header();
	CHECK(out[HDR + 3] == 0x01);			  /* roce_en, alone in its word */
	CHECK(out[HDR + 0x26] == 0x05 && out[HDR + 0x27] == 0xf2); /* mtu 1522: 1500 + Ethernet, VLAN, FCS */
	CHECK(out[HDR + 0xf4] == 0 && out[HDR + 0xf5] == 0);	  /* permanent_address: reserved, then the MAC */
	CHECK(memcmp(out + HDR + 0xf6, mac, 6) == 0);
	CHECK(out[NVC_OUT_SZ] == 0xee); /* nothing past the out length */
	/* A shorter out gets what fits, as QUERY_HCA_CAP's. */
	CHECK_OK(cmd(c, OP_QUERY_NIC_VPORT, 0, 0, CAP_IN_SZ, 0x40));
	CHECK(out[HDR + 3] == 0x01 && out[0x3f] == 0 && out[0x40] == 0xee);
	/* Vport 1 without other_vport: the card's bad parameter. */
	CHECK_ERR(cmd(c, OP_QUERY_NIC_VPORT, 0, 1, CAP_IN_SZ, NVC_OUT_SZ), EREMOTEIO);
	CHECK(out[0] == 0x3 && be32(out + 4) == 0x5d0c0041u);
	/* other_vport: another function's vport, which this one does not manage here. */
	CHECK_ERR(cmd(c, OP_QUERY_NIC_VPORT, 0x80, 1, CAP_IN_SZ, NVC_OUT_SZ), EOPNOTSUPP);
	CHECK(out[0] == 0x3 && be32(out + 4) == 0x5d0c0042u);
}

#define OP_QUERY_HCA_VPORT 0x762
#define HVC_OUT_SZ 0x210

/* QUERY_HCA_VPORT_CONTEXT: the port as ibv_query_port and ibv_query_device say it (port_num 0 or 1: the one port). */
static void test_hca_vport(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	union ibv_gid gid;
	const uint8_t *x = out + HDR;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_device(c, &a));
	CHECK_OK(ibv_query_port(c, 1, &p));
	CHECK_OK(ibv_query_gid(c, 1, 0, &gid));
	for (uint8_t port = 0; port < 2; port++) {
		CHECK_OK(cmd9(c, OP_QUERY_HCA_VPORT, 0, port, 0, CAP_IN_SZ, HVC_OUT_SZ));
		check_header();
		CHECK(x[0x22] >> 4 == p.phys_state);			 /* port_physical_state */
		CHECK(x[0x23] >> 4 == p.state && (x[0x23] & 0xf) == p.state); /* port_state, vport_state */
		CHECK(p.state == IBV_PORT_ACTIVE);
		CHECK(memcmp(x + 0x28, &a.sys_image_guid, 8) == 0);	 /* system_image_guid */
		CHECK(memcmp(x + 0x30, gid.raw + 8, 8) == 0);		 /* port_guid */
		CHECK(memcmp(x + 0x38, &a.node_guid, 8) == 0);		 /* node_guid */
		CHECK(be32(x + 0x40) == p.port_cap_flags);		 /* cap_mask1 */
		CHECK((x[0x60] << 8 | x[0x61]) == p.lid);
		CHECK(x[0x63] >> 5 == p.lmc && (x[0x63] & 0x1f) == p.subnet_timeout);
		CHECK((x[0x64] << 8 | x[0x65]) == p.sm_lid);
		CHECK(x[0x66] >> 4 == p.sm_sl);
		CHECK(out[HVC_OUT_SZ] == 0xee);
	}
	/* Port 2 of this one-port device, vport 1 without other_vport: the card's bad parameter. */
	CHECK_ERR(cmd9(c, OP_QUERY_HCA_VPORT, 0, 2, 0, CAP_IN_SZ, HVC_OUT_SZ), EREMOTEIO);
	CHECK(out[0] == 0x3 && be32(out + 4) == 0x5d0c0043u);
	CHECK_ERR(cmd(c, OP_QUERY_HCA_VPORT, 0, 1, CAP_IN_SZ, HVC_OUT_SZ), EREMOTEIO);
	CHECK(out[0] == 0x3 && be32(out + 4) == 0x5d0c0041u);
}

/* QUERY_LAG: no link aggregation, lag_state 0 (UCX then trusts the dct bit). */
static void test_lag(void)
{
	struct ibv_context *c = vf_open();

	CHECK(c != NULL);
	CHECK_OK(cmd(c, OP_QUERY_LAG, 0, 0, CAP_IN_SZ, 0x10));
	for (int i = 0; i < 0x10; i++)
		CHECK(out[i] == 0); /* status, syndrome, lag_state 0 */
	CHECK(out[0x10] == 0xee);
}

static int untouched(void)
{
	for (size_t i = 0; i < sizeof(out); i++)
		if (out[i] != 0xee)
			return 0;
	return 1;
}

/* The kernel's refusals (EINVAL, out untouched) and the card's (status and syndrome in out). */
static void test_refusals(void)
{
	struct ibv_context *c = vf_open();

	CHECK(c != NULL);
	/* In or out shorter than the 16-byte command headers. */
	CHECK_ERR(cmd(c, OP_QUERY_HCA_CAP, 0, 0, CAP_IN_SZ - 1, CAP_OUT_SZ), EINVAL);
	CHECK(untouched());
	CHECK_ERR(cmd(c, OP_QUERY_NIC_VPORT, 0, 0, CAP_IN_SZ, HDR - 1), EINVAL);
	CHECK(untouched());
	/* Not a general command: CREATE_CQ, QUERY_HCA_VPORT_GID (not in the kernel's list), an unknown opcode. */
	CHECK_ERR(cmd(c, 0x400, 0, 0, CAP_IN_SZ, CAP_OUT_SZ), EINVAL);
	CHECK(untouched());
	CHECK_ERR(cmd(c, 0x764, 0, 0, CAP_IN_SZ, CAP_OUT_SZ), EINVAL);
	CHECK(untouched());
	CHECK_ERR(cmd(c, 0x7fff, 0, 0, CAP_IN_SZ, CAP_OUT_SZ), EINVAL);
	CHECK(untouched());
	/* A general command not emulated: bad opcode 0x2; a page not emulated (ROCE, type 4): bad parameter 0x3. */
	CHECK_ERR(cmd(c, 0x760, 0, 0, CAP_IN_SZ, CAP_OUT_SZ), EOPNOTSUPP); /* QUERY_ROCE_ADDRESS */
	CHECK(out[0] == 0x2 && be32(out + 4) == 0x5d0c0011u);
	CHECK_ERR(query(c, 0x4 << 1 | 1), EOPNOTSUPP);
	CHECK(out[0] == 0x3 && be32(out + 4) == 0x5d0c0012u);
	/* QUERY_HCA_CAP of another function (other_function): not emulated. */
	CHECK_ERR(cmd(c, OP_QUERY_HCA_CAP, 0x80, 1, CAP_IN_SZ, CAP_OUT_SZ), EOPNOTSUPP);
	CHECK(out[0] == 0x3 && be32(out + 4) == 0x5d0c0013u);
}

/* One direction's flow_table_prop_layout at bit base of the page. */
static void check_prop(unsigned base, int receive)
{
	CHECK(field(base + 0, 1) == 1);		   /* ft_support */
	CHECK(field(base + 1, 1) == (receive ? 1u : 0u)); /* flow_tag: the receive CQE's */
	CHECK(field(base + 2, 1) == 1);		   /* flow_counter: DevX flow counters */
	CHECK(field(base + 7, 1) == 1);		   /* reformat: L2 decap on receive, encap on transmit */
	CHECK(field(base + 8, 1) == (receive ? 1u : 0u)); /* decap */
	CHECK(field(base + 18, 2) == 0);	   /* reformat_l3_tunnel_to_l2, reformat_l2_to_l3_tunnel: not done */
	CHECK(field(base + 10, 1) == (receive ? 1u : 0u)); /* pop_vlan */
	CHECK(field(base + 11, 1) == (receive ? 0u : 1u)); /* push_vlan */
	CHECK(field(base + 17, 1) == 0);	   /* sw_owner */
	CHECK(field(base + 30, 1) == 0);	   /* sw_owner_v2 */
	CHECK(field(base + 40, 8) == 24);	   /* log_max_modify_header_context */
	CHECK(field(base + 48, 8) == 32);	   /* max_modify_header_actions */
	CHECK(field(base + 136, 8) == 3);	   /* log_max_flow_counter: a rule's 8 actions */
	CHECK(field(base + 56, 8) == 0xff);	   /* max_ft_level */
	CHECK(field(base + 152, 8) == 4);	   /* log_max_destination: a dest array's 16 */
	/* ft_field_support: outer dmac, smac, ethertype, IP version, VLAN, TTL; not the second VLAN. */
	CHECK(field(base + 256, 8) == 0xff);
	CHECK(field(base + 256 + 8, 3) == 0);
	CHECK(field(base + 256 + 12, 11) == 0x7ff); /* sip .. tcp_flags */
	CHECK(field(base + 256 + 23, 9) == 0);	    /* tunnels */
	CHECK(field(base + 256 + 32, 32) == 0);	    /* inner headers */
}

static void test_nic_flow_table_page(void)
{
	struct ibv_context *c = vf_open();

	CHECK(c != NULL);
	CHECK_OK(query(c, 0x7 << 1 | 1));
	check_header();
	/* What rdma-core's requires_reformat_support reads: encap_general_header, log_max_packet_reformat, reformat. */
	CHECK((out[20] & 0x80) != 0 && (out[21] & 0x1f) != 0 && (out[80] & 1) != 0 && (out[272] & 1) != 0);
	CHECK(field(32, 1) == 1);    /* encap_general_header */
	CHECK(field(43, 5) == 24);   /* log_max_packet_reformat_context */
	CHECK(field(54, 10) == 128); /* max_encap_header_size */
	check_prop(512, 1);  /* flow_table_properties_nic_receive */
	check_prop(2048, 0); /* flow_table_properties_nic_transmit */
	CHECK(field(1024, 1) == 0); /* nic_receive_rdma: not steered here */
	CHECK(field(1536, 1) == 0); /* sniffer */
}

int main(void)
{
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_general_page);
	RUN(test_nic_flow_table_page);
	RUN(test_atomic_page);
	RUN(test_odp_page);
	RUN(test_nic_vport);
	RUN(test_hca_vport);
	RUN(test_lag);
	RUN(test_refusals);
	return th_summary("test_verbs_devx_caps");
}
