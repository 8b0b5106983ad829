/*
 * mlx5dv_devx_general_cmd's QUERY_HCA_CAP of the general device page
 * (type 0) and of the NIC flow-table page (type 7), read field by field at
 * the PRM's bit offsets (mlx5_ifc.h cmd_hca_cap, flow_table_nic_cap,
 * flow_table_prop_layout): the sizes agree with what ibv_query_device and
 * ibv_query_port report, the port is Ethernet with RoCE and NIC steering,
 * and the steering offers what mlx5dv_dr does here (VLAN pop on receive,
 * push on transmit, the outer fields) and not what it does not (reformat,
 * which rdma-core's suite checks at bytes 20, 21, 80 and 272 of out).
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
	}
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
	return th_summary("test_verbs_devx_caps");
}
