/*
 * RoCE ports, as a BlueField-2's mlx5 driver shows them: the GID table
 * (ibv_query_gid(3), ibv_query_gid_ex(3), ibv_query_gid_table(3)) holds the
 * link-local fe80::<EUI-64 of the MAC> as RoCE v1 then v2, then each
 * configured address (::ffff:<IPv4>, the IPv6) as v1 then v2; an address
 * must carry a GRH (ibv_create_ah(3) and ibv_modify_qp(3) to RTR fail with
 * EINVAL without one, as the kernel refuses them); mlx5dv_init_obj(3) of an
 * AH gives the mlx5 address vector with the destination MAC; a destination
 * GID routes to the port whose table holds it, in another process too.
 * The built-in topology's pf0 is mlx5_0 (MAC 02:53:44:0b:00:00,
 * 192.168.100.1, fd00:100::1) and pf0vf0 mlx5_2 (02:53:44:0b:00:02,
 * 192.168.100.2, fd00:100::2); docs/TOPOLOGY.md.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define RC_LEN 4096

/* rdma-core's, outside its public headers (ibv_devinfo calls it): 0 RoCE v1 (or IB), 1 RoCE v2. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index, unsigned int *type);

static uint8_t rc_mem[2][RC_LEN];

static const uint8_t gid_ll[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x53, 0x44, 0xff, 0xfe, 0x0b, 0x00, 0x00};
static const uint8_t gid_v4[16] = {[10] = 0xff, [11] = 0xff, [12] = 192, [13] = 168, [14] = 100, [15] = 1};
static const uint8_t gid_v6[16] = {0xfd, 0x00, 0x01, 0x00, [15] = 0x01};

/* Device n of the list, opened for the case. */
static struct ibv_context *open_nth(int n)
{
	int cnt = 0;
	struct ibv_device **l = vf_list(&cnt);
	struct ibv_context *c;

	if (l == NULL || n >= cnt)
		return NULL;
	c = ibv_open_device(l[n]);
	if (c != NULL)
		th_defer(vf_close_cb, c);
	return c;
}

/* The six entries of mlx5_0, byte for byte, each with its type, through every query. */
static void test_gid_table_entries(void)
{
	static const uint8_t *const want[6] = {gid_ll, gid_ll, gid_v4, gid_v4, gid_v6, gid_v6};
	static const uint32_t types[6] = {IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2, IBV_GID_TYPE_ROCE_V1,
					  IBV_GID_TYPE_ROCE_V2, IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2};
	struct ibv_context *c = vf_open();
	struct ibv_gid_entry tbl[8], e;
	union ibv_gid g;

	CHECK(c != NULL);
	memset(tbl, 0xa5, sizeof(tbl));
	CHECK(ibv_query_gid_table(c, tbl, 8, 0) == 6);
	for (int i = 0; i < 6; i++) {
		unsigned int sysfs = 99;

		CHECK(memcmp(tbl[i].gid.raw, want[i], 16) == 0);
		CHECK(tbl[i].gid_index == (uint32_t)i && tbl[i].port_num == 1 && tbl[i].gid_type == types[i]);
		CHECK(tbl[i].ndev_ifindex == 0);
		memset(&e, 0, sizeof(e));
		CHECK_OK(ibv_query_gid_ex(c, 1, (uint32_t)i, &e, 0));
		CHECK(memcmp(&e, &tbl[i], sizeof(e)) == 0);
		CHECK_OK(ibv_query_gid(c, 1, i, &g));
		CHECK(memcmp(g.raw, want[i], 16) == 0);
		CHECK_OK(ibv_query_gid_type(c, 1, (unsigned int)i, &sysfs));
		CHECK(sysfs == (i % 2 == 0 ? 0u : 1u)); /* IBV_GID_TYPE_SYSFS_IB_ROCE_V1, _ROCE_V2 */
	}
	CHECK(tbl[6].gid_index == 0xa5a5a5a5); /* nothing written past the valid entries */
	CHECK(ibv_query_gid_ex(c, 1, 6, &e, 0) == ENODATA);
	/* Another function: its own MAC and address. */
	c = open_nth(2);
	CHECK(c != NULL);
	CHECK_OK(ibv_query_gid_ex(c, 1, 1, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2 && e.gid.raw[0] == 0xfe && e.gid.raw[8] == 0x00 && e.gid.raw[15] == 0x02);
	CHECK_OK(ibv_query_gid_ex(c, 1, 3, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2 && e.gid.raw[11] == 0xff && e.gid.raw[15] == 2 && e.gid.raw[14] == 100);
}

static struct ibv_qp *init_rc(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);

	return qp != NULL && vq_to_init(qp) == 0 ? qp : NULL;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 ? a.qp_state : (enum ibv_qp_state)-1;
}

/* INIT -> RTR on a RoCE port without a GRH is EINVAL (the kernel's rdma_check_ah_attr); so is an empty source GID. */
static void test_rtr_needs_grh(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 8) : NULL;
	struct ibv_qp *qp = pd != NULL && cq != NULL ? init_rc(pd, cq) : NULL;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = 1,
				.max_dest_rd_atomic = 1, .min_rnr_timer = 12, .ah_attr = {.dlid = 2, .port_num = 1}};
	const int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

	CHECK(qp != NULL);
	a.dest_qp_num = qp->qp_num;
	CHECK(ibv_modify_qp(qp, &a, mask) == EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_INIT);
	CHECK_OK(vq_grh_self(c, &a.ah_attr));
	a.ah_attr.grh.sgid_index = 6; /* empty */
	CHECK(ibv_modify_qp(qp, &a, mask) == EINVAL);
	a.ah_attr.grh.sgid_index = 255; /* the table's last, empty */
	CHECK(ibv_modify_qp(qp, &a, mask) == EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_INIT);
	a.ah_attr.grh.sgid_index = 3;
	CHECK_OK(ibv_modify_qp(qp, &a, mask));
	CHECK(qp_state(qp) == IBV_QPS_RTR);
}

/* ibv_create_ah on RoCE: EINVAL without a GRH or with a source GID index that holds no entry. */
static void test_ah_needs_grh(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_ah_attr aa = {.dlid = 2, .port_num = 1};
	struct ibv_ah *ah;

	CHECK(pd != NULL);
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EINVAL);
	CHECK_OK(vq_grh_self(c, &aa));
	aa.grh.sgid_index = 6;
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EINVAL);
	aa.grh.sgid_index = 255;
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EINVAL);
	aa.grh.sgid_index = 5;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	CHECK_OK(ibv_destroy_ah(ah));
}

/* The address vector mlx5dv_init_obj hands out for an AH of aa (0xee bytes when there is none). */
static void ah_av(struct ibv_pd *pd, struct ibv_ah_attr *aa, struct mlx5_wqe_av *av)
{
	struct ibv_ah *ah = ibv_create_ah(pd, aa);
	struct mlx5dv_obj o = {.ah = {.in = ah}};
	struct mlx5dv_ah dv = {0};

	memset(av, 0xee, sizeof(*av));
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	o.ah.out = &dv;
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_AH));
	CHECK(dv.av != NULL);
	*av = *dv.av;
}

/*
 * mlx5dv_init_obj(MLX5DV_OBJ_AH): the AV as mlx5_create_ah builds it on
 * Ethernet: the GRH bit clear (reserved on RoCE), SL << 1, the flow label
 * and source index, the destination GID and MAC, and for a RoCE v2 source
 * the UDP source port the flow label gives (ibv_flow_label_to_udp_sport).
 */
static void test_ah_init_obj(void)
{
	static const uint8_t vf0_mac[6] = {0x02, 0x53, 0x44, 0x0b, 0x00, 0x02};
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_ah_attr aa = {.sl = 3, .port_num = 1, .is_global = 1,
				 .grh = {.sgid_index = 3, .flow_label = 0x12345, .traffic_class = 0x68, .hop_limit = 64}};
	struct mlx5_wqe_av av;

	CHECK(pd != NULL);
	memcpy(aa.grh.dgid.raw, gid_v4, 16);
	aa.grh.dgid.raw[15] = 2; /* ::ffff:192.168.100.2, pf0vf0's */
	ah_av(pd, &aa, &av);
	CHECK(memcmp(av.rmac, vf0_mac, 6) == 0);
	CHECK(memcmp(av.rgid, aa.grh.dgid.raw, 16) == 0);
	CHECK(av.grh_gid_fl == htobe32(3u << 20 | 0x12345));
	CHECK(av.tclass == 0x68 && av.hop_limit == 64);
	CHECK(av.stat_rate_sl == 3 << 1);
	CHECK(av.fl_mlid == 0);
	CHECK(av.rlid == htobe16(ibv_flow_label_to_udp_sport(0x12345)));
	CHECK(be16toh(av.rlid) >= 0xc000);
	/* A link-local destination from a RoCE v1 source: the MAC is the GID's EUI-64 undone, no UDP port. */
	aa = (struct ibv_ah_attr){.port_num = 1, .is_global = 1, .grh = {.sgid_index = 0, .hop_limit = 1}};
	memcpy(aa.grh.dgid.raw, gid_ll, 16);
	aa.grh.dgid.raw[15] = 0x02;
	ah_av(pd, &aa, &av);
	CHECK(memcmp(av.rmac, vf0_mac, 6) == 0);
	CHECK(av.rlid == 0 && av.grh_gid_fl == htobe32(0) && av.stat_rate_sl == 0);
	/* Without a flow label a v2 source still gets a port of RoCE's range. */
	aa.grh.sgid_index = 1;
	ah_av(pd, &aa, &av);
	CHECK(be16toh(av.rlid) >= 0xc000);
}

/* One UD datagram of "roce!" from a to b through an AH from source GID index sgid to dgid; the receive's 40 bytes. */
static void ud_grh(struct ibv_pd *pd, struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *cq, struct ibv_mr *mr,
		   uint8_t sgid, const uint8_t dgid[16], uint8_t out[40])
{
	struct ibv_ah_attr aa = {.port_num = 1, .is_global = 1, .grh = {.sgid_index = sgid, .hop_limit = 64}};
	struct ibv_sge rs = {.addr = (uintptr_t)rc_mem[1], .length = 256, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)rc_mem[0], .length = 5, .lkey = mr->lkey};
	struct ibv_send_wr sw = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *sbad;
	struct ibv_wc wc[2];
	struct ibv_ah *ah;
	int got = 0;

	memcpy(aa.grh.dgid.raw, dgid, 16);
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	memset(rc_mem[1], 0xee, 256);
	memcpy(rc_mem[0], "roce!", 5);
	CHECK_OK(ibv_post_recv(b, &rw, &rbad));
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = b->qp_num;
	sw.wr.ud.remote_qkey = 0x11111111;
	CHECK_OK(ibv_post_send(a, &sw, &sbad));
	for (long i = 0; i < VQ_POLL_TRIES && got < 2; i++)
		got += ibv_poll_cq(cq, 2 - got, wc + got);
	CHECK(got == 2);
	for (int i = 0; i < 2; i++) {
		CHECK(wc[i].status == IBV_WC_SUCCESS);
		if (wc[i].wr_id == 1)
			CHECK(wc[i].byte_len == 45 && (wc[i].wc_flags & IBV_WC_GRH) && memcmp(rc_mem[1] + 40, "roce!", 5) == 0);
	}
	memcpy(out, rc_mem[1], 40);
}

/* A datagram to dgid: the sender completes, and nothing arrives when b's port has not dgid. */
static void ud_grh_lost(struct ibv_pd *pd, struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *cq, struct ibv_mr *mr,
			const uint8_t dgid[16])
{
	struct ibv_ah_attr aa = {.port_num = 1, .is_global = 1, .grh = {.sgid_index = 3, .hop_limit = 64}};
	struct ibv_sge rs = {.addr = (uintptr_t)rc_mem[1], .length = 256, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)rc_mem[0], .length = 5, .lkey = mr->lkey};
	struct ibv_send_wr sw = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *sbad;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	memcpy(aa.grh.dgid.raw, dgid, 16);
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	CHECK_OK(ibv_post_recv(b, &rw, &rbad));
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = b->qp_num;
	sw.wr.ud.remote_qkey = 0x11111111;
	CHECK_OK(ibv_post_send(a, &sw, &sbad));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS);
	for (int i = 0; i < 1000; i++)
		CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
}

/* The ones' complement sum of the 20-byte IPv4 header, which a valid checksum makes 0xffff. */
static uint16_t ip4_sum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * A UD receive on RoCE gets the datagram's network header in its 40-byte
 * GRH area, by the source GID's type: RoCE v1 an IB GRH (next header BTH,
 * 0x1b), RoCE v2 between IPv4 addresses the IPv4 header in the last 20
 * bytes (protocol UDP, a valid checksum), RoCE v2 otherwise the IPv6 header
 * (next header UDP, 0x11). Payload lengths: UDP 8, BTH and DETH 20, "roce!"
 * padded to 8, ICRC 4.
 */
static void test_ud_network_header(void)
{
	static const uint8_t v1[8] = {0x60, 0, 0, 0, 0x00, 0x20, 0x1b, 64};
	static const uint8_t v2_6[8] = {0x60, 0, 0, 0, 0x00, 0x28, 0x11, 64};
	static const uint8_t v2_4[12] = {0x45, 0, 0x00, 0x3c, 0, 0, 0x40, 0x00, 64, 0x11};
	static const uint8_t zero[20];
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 8) : NULL;
	struct ibv_mr *mr = pd != NULL ? vq_mr(pd, rc_mem, sizeof(rc_mem), VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *a = mr != NULL ? vq_qp(pd, IBV_QPT_UD, cq, cq, 4) : NULL;
	struct ibv_qp *b = mr != NULL ? vq_qp(pd, IBV_QPT_UD, cq, cq, 4) : NULL;
	uint8_t g[40];

	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, 0, 0, 0));
	CHECK_OK(vq_up(b, 0, 0, 0));
	ud_grh(pd, a, b, cq, mr, 0, gid_ll, g);
	CHECK(memcmp(g, v1, 8) == 0 && memcmp(g + 8, gid_ll, 16) == 0 && memcmp(g + 24, gid_ll, 16) == 0);
	ud_grh(pd, a, b, cq, mr, 1, gid_ll, g);
	CHECK(memcmp(g, v2_6, 8) == 0 && memcmp(g + 8, gid_ll, 16) == 0 && memcmp(g + 24, gid_ll, 16) == 0);
	ud_grh(pd, a, b, cq, mr, 3, gid_v4, g);
	CHECK(memcmp(g, zero, 20) == 0);
	CHECK(memcmp(g + 20, v2_4, 10) == 0);
	CHECK(memcmp(g + 32, gid_v4 + 12, 4) == 0 && memcmp(g + 36, gid_v4 + 12, 4) == 0);
	CHECK(ip4_sum(g + 20) == 0xffff);
	/* The receiver's port must have the destination GID: pf0vf0's address reaches nothing on mlx5_0. */
	memcpy(g, gid_v4, 16);
	g[15] = 2;
	ud_grh_lost(pd, a, b, cq, mr, g);
}

/* A SEND of len bytes from a to b: the sender's completion status into st, the receiver's byte_len (0: none). */
static void ud_len(struct ibv_pd *pd, struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *cq, struct ibv_mr *mr,
		   uint32_t len, enum ibv_wc_status *st, uint32_t *got_len)
{
	struct ibv_ah_attr aa = {.port_num = 1, .is_global = 1, .grh = {.sgid_index = 3, .hop_limit = 64}};
	struct ibv_sge rs = {.addr = (uintptr_t)rc_mem[1], .length = RC_LEN, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)rc_mem[0], .length = len, .lkey = mr->lkey};
	struct ibv_send_wr sw = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *sbad;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	*st = IBV_WC_GENERAL_ERR;
	*got_len = 0;
	memcpy(aa.grh.dgid.raw, gid_v4, 16);
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	CHECK_OK(ibv_post_recv(b, &rw, &rbad));
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = b->qp_num;
	sw.wr.ud.remote_qkey = 0x11111111;
	CHECK_OK(ibv_post_send(a, &sw, &sbad));
	for (int n = 0; n < 2 && vq_poll1(cq, &wc) == 1; n++) {
		if (wc.wr_id == 2)
			*st = wc.status;
		else
			*got_len = wc.byte_len;
		if (wc.wr_id == 2 && *st != IBV_WC_SUCCESS)
			break;
	}
}

/* A RoCE port's active MTU is 1024 (a 1500-byte netdev): the largest UD payload, as on the card. */
static void test_ud_mtu(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 8) : NULL;
	struct ibv_mr *mr = pd != NULL ? vq_mr(pd, rc_mem, sizeof(rc_mem), VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *a = mr != NULL ? vq_qp(pd, IBV_QPT_UD, cq, cq, 4) : NULL;
	struct ibv_qp *b = mr != NULL ? vq_qp(pd, IBV_QPT_UD, cq, cq, 4) : NULL;
	struct ibv_port_attr pa;
	enum ibv_wc_status st;
	uint32_t got = 0;

	CHECK(a != NULL && b != NULL);
	CHECK_OK(ibv_query_port(c, 1, &pa));
	CHECK(pa.active_mtu == IBV_MTU_1024);
	CHECK_OK(vq_up(a, 0, 0, 0));
	CHECK_OK(vq_up(b, 0, 0, 0));
	ud_len(pd, a, b, cq, mr, 1024, &st, &got);
	CHECK(st == IBV_WC_SUCCESS && got == 40 + 1024);
	ud_len(pd, a, b, cq, mr, 1025, &st, &got);
	CHECK(st == IBV_WC_LOC_LEN_ERR && got == 0);
}

/*
 * The role: an RC QP on device dev (mlx5_2 unless told), connected to the
 * parent's QP by the GID the parent gives; prints its QP number, its buffer and key.
 */
static int role_peer(int dev)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	struct ibv_context *c = l != NULL && n > dev ? ibv_open_device(l[dev]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 8, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = pd != NULL ? ibv_reg_mr(pd, rc_mem[1], RC_LEN, VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *qp = cq != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 8) : NULL;
	char line[128], hex[40];
	unsigned int qpn;
	union ibv_gid g;

	if (qp == NULL || mr == NULL)
		return 2;
	memset(rc_mem[1], 0x11, RC_LEN);
	printf("PEER %u %u %llu\n", qp->qp_num, mr->rkey, (unsigned long long)(uintptr_t)rc_mem[1]);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "CONNECT %u %32s", &qpn, hex) != 2 ||
	    th_hex_decode(hex, g.raw, 16) != 16)
		return 3;
	printf("OK %d\n", vq_up_grh(qp, qpn, &g, 1));
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 4;
	th_undefer(vq_destroy_qp_cb, qp);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}

static enum ibv_wc_status rdma(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, enum ibv_wr_opcode op,
			       uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)rc_mem[0], .length = 256, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = raddr, .rkey = rkey}};
	struct ibv_send_wr *bad;
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(cq, &wc) != 1)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

/*
 * Two processes of this machine: the parent's QP on mlx5_0 reaches the
 * child's on mlx5_2 by ::ffff:192.168.100.2 (the child's address) and the
 * child's answers by ::ffff:192.168.100.1; the child's QP number under
 * another port's GID (mlx5_3's ::ffff:192.168.100.3) reaches nothing.
 */
static void test_two_processes_by_ipv4_gid(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 8) : NULL;
	struct ibv_mr *mr = pd != NULL ? vq_mr(pd, rc_mem[0], RC_LEN, VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *qp = pd != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 8) : NULL;
	struct ibv_qp *wrong = pd != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 8) : NULL;
	union ibv_gid peer_gid, own_gid, other_gid;
	unsigned int qpn = 0, rkey = 0;
	unsigned long long raddr = 0;
	struct th_proc *p;
	const char *l;
	char hex[40];

	CHECK(mr != NULL && qp != NULL && wrong != NULL);
	memcpy(own_gid.raw, gid_v4, 16);
	peer_gid = own_gid, peer_gid.raw[15] = 2;
	other_gid = own_gid, other_gid.raw[15] = 3;
	p = th_proc_start(NULL, "peer", NULL);
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "PEER %u %u %llu", &qpn, &rkey, &raddr) == 3);
	CHECK_OK(vq_up_grh(qp, qpn, &peer_gid, 1));
	CHECK_OK(vq_up_grh(wrong, qpn, &other_gid, 1));
	th_hex_encode(own_gid.raw, 16, hex);
	CHECK(th_proc_send(p, "CONNECT %u %s", qp->qp_num, hex) == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && strcmp(l, "OK 0") == 0);
	memset(rc_mem[0], 0x5c, 256);
	CHECK(rdma(qp, cq, mr, IBV_WR_RDMA_WRITE, raddr, rkey) == IBV_WC_SUCCESS);
	memset(rc_mem[0], 0, 256);
	CHECK(rdma(qp, cq, mr, IBV_WR_RDMA_READ, raddr, rkey) == IBV_WC_SUCCESS);
	CHECK(rc_mem[0][0] == 0x5c && rc_mem[0][255] == 0x5c);
	/* The same number under a GID of another port: that port has no such QP. */
	CHECK(rdma(wrong, cq, mr, IBV_WR_RDMA_WRITE, raddr, rkey) == IBV_WC_RETRY_EXC_ERR);
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
}

/* A topology may make a port InfiniBand (link=ib): LIDs, an SM, one GID of type IB. */
static int role_ib(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	char hex[40];

	if (c == NULL || ibv_query_port(c, 1, &pa) != 0 || ibv_query_gid_ex(c, 1, 0, &e, 0) != 0)
		return 2;
	th_hex_encode(e.gid.raw, 16, hex);
	printf("IB %d %u %u %u %u %s %d\n", (int)pa.link_layer, pa.lid, pa.sm_lid, pa.gid_tbl_len, e.gid_type, hex,
	       ibv_query_gid_ex(c, 1, 1, &e, 0));
	fflush(stdout);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}

static void test_link_ib_by_topology(void)
{
	static const char topo[] = "function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0"
				   " mac=02:53:44:0b:00:00 ipv4=10.0.0.1 link=ib\n";
	char path[] = "/tmp/softdpu-roce-topoXXXXXX", hex[40] = "";
	int fd = mkstemp(path), ll = -1, rc = -1;
	unsigned int lid = 0, sm = 0, len = 0, type = 9;
	struct th_proc *p;
	const char *l;

	CHECK(fd >= 0 && write(fd, topo, sizeof(topo) - 1) == (ssize_t)(sizeof(topo) - 1));
	close(fd);
	setenv("SOFTDPU_TOPOLOGY", path, 1);
	p = th_proc_start(NULL, "ib", NULL);
	unsetenv("SOFTDPU_TOPOLOGY");
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "IB %d %u %u %u %u %32s %d", &ll, &lid, &sm, &len, &type, hex, &rc) == 7);
	CHECK(ll == IBV_LINK_LAYER_INFINIBAND && lid == 2 && sm == 1 && len == 128 && type == IBV_GID_TYPE_IB);
	CHECK(strcmp(hex, "fe80000000000000005344fffe0b0000") == 0);
	CHECK(rc == ENODATA);
	CHECK(th_proc_wait(p) == 0);
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "peer") == 0)
		return role_peer(2);
	if (argc == 2 && strcmp(argv[1], "ib") == 0)
		return role_ib();
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_gid_table_entries);
	RUN(test_rtr_needs_grh);
	RUN(test_ah_needs_grh);
	RUN(test_ah_init_obj);
	RUN(test_ud_network_header);
	RUN(test_ud_mtu);
	RUN(test_two_processes_by_ipv4_gid);
	RUN(test_link_ib_by_topology);
	return th_summary("test_verbs_roce");
}
