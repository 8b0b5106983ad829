/*
 * ibv_init_ah_from_wc(3) / ibv_create_ah_from_wc(3): from a UD receive and
 * the network header in its first 40 bytes, the address back to the sender.
 * On RoCE the header's kind follows the sender's GID type (an IB GRH for
 * v1, an IPv6 header or, between IPv4 addresses, an IPv4 header for v2):
 * the address's destination is the sender's GID, its source index the
 * receiving GID's entry of that type, its hop limit, traffic class and flow
 * label the header's. A reply through the new AH reaches the sender.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define AW_QKEY 0x11111111u

static uint8_t mem[3][256];

struct aw {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
};

static void aw_open(struct aw *s)
{
	s->c = vf_open();
	CHECK(s->c != NULL);
	s->pd = vf_pd(s->c);
	CHECK(s->pd != NULL);
	s->mr = vq_mr(s->pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE);
	CHECK(s->mr != NULL);
	for (int i = 0; i < 2; i++) {
		s->cq[i] = vq_cq(s->c, 8);
		CHECK(s->cq[i] != NULL);
		s->qp[i] = vq_qp(s->pd, IBV_QPT_UD, s->cq[i], s->cq[i], 4);
		CHECK(s->qp[i] != NULL);
		CHECK_OK(vq_up(s->qp[i], 0, 0, 0));
	}
}

/* qp[from] sends msg to qp[to] (remote QPN dqpn) through ah; the receive at qp[to] in *wc, its bytes in mem[to]. */
static void aw_send(struct aw *s, int from, int to, struct ibv_ah *ah, uint32_t dqpn, const char *msg,
		    struct ibv_wc *wc)
{
	size_t n = strlen(msg);
	struct ibv_sge rs = {.addr = (uintptr_t)mem[to], .length = 256, .lkey = s->mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)mem[2], .length = (uint32_t)n, .lkey = s->mr->lkey};
	struct ibv_send_wr sw = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.ud = {.ah = ah, .remote_qpn = dqpn, .remote_qkey = AW_QKEY}}, *sbad;
	struct ibv_wc sent;

	memset(mem[to], 0xee, 256);
	memcpy(mem[2], msg, n);
	CHECK_OK(ibv_post_recv(s->qp[to], &rw, &rbad));
	CHECK_OK(ibv_post_send(s->qp[from], &sw, &sbad));
	CHECK(vq_poll1(s->cq[from], &sent) == 1 && sent.status == IBV_WC_SUCCESS && sent.wr_id == 2);
	CHECK(vq_poll1(s->cq[to], wc) == 1 && wc->status == IBV_WC_SUCCESS && wc->wr_id == 1);
	CHECK(wc->byte_len == 40 + n && memcmp(mem[to] + 40, msg, n) == 0);
}

static struct ibv_ah *aw_ah(struct ibv_pd *pd, const struct ibv_ah_attr *a)
{
	struct ibv_ah *ah = ibv_create_ah(pd, (struct ibv_ah_attr *)a);

	if (ah != NULL)
		th_defer(vq_destroy_ah_cb, ah);
	return ah;
}

/* From GID index idx (to the same GID, this port's): the attributes read back, and a reply through the AH. */
static void aw_round_trip(struct aw *s, uint8_t idx, uint32_t flow, uint32_t want_flow)
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1, .sl = 0,
				.grh = {.sgid_index = idx, .hop_limit = 33, .traffic_class = 0x28, .flow_label = flow}};
	struct ibv_ah_attr back;
	struct ibv_wc wc, reply;
	union ibv_gid g;
	struct ibv_ah *ah;

	CHECK_OK(ibv_query_gid(s->c, 1, idx, &g));
	a.grh.dgid = g;
	ah = aw_ah(s->pd, &a);
	CHECK(ah != NULL);
	aw_send(s, 0, 1, ah, s->qp[1]->qp_num, "hello", &wc);
	CHECK(wc.src_qp == s->qp[0]->qp_num && (wc.wc_flags & IBV_WC_GRH));
	memset(&back, 0x5a, sizeof(back));
	CHECK_OK(ibv_init_ah_from_wc(s->c, 1, &wc, (struct ibv_grh *)mem[1], &back));
	CHECK(back.is_global == 1 && back.port_num == 1 && back.dlid == wc.slid && back.sl == wc.sl);
	CHECK(back.src_path_bits == wc.dlid_path_bits && back.static_rate == 0);
	CHECK(memcmp(back.grh.dgid.raw, g.raw, 16) == 0 && back.grh.sgid_index == idx);
	CHECK(back.grh.hop_limit == 33 && back.grh.traffic_class == 0x28 && back.grh.flow_label == want_flow);
	ah = ibv_create_ah_from_wc(s->pd, &wc, (struct ibv_grh *)mem[1], 1);
	CHECK(ah != NULL);
	th_defer(vq_destroy_ah_cb, ah);
	aw_send(s, 1, 0, ah, wc.src_qp, "reply!", &reply);
	CHECK(reply.src_qp == s->qp[1]->qp_num);
}

/* RoCE v1 (index 0: an IB GRH), v2 by IPv6 (index 1), v2 by IPv4 (index 3: no flow label in an IPv4 header). */
static void test_round_trip(void)
{
	struct aw s;
	struct ibv_gid_entry e;

	aw_open(&s);
	CHECK_OK(ibv_query_gid_ex(s.c, 1, 0, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V1);
	CHECK_OK(ibv_query_gid_ex(s.c, 1, 1, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2);
	CHECK_OK(ibv_query_gid_ex(s.c, 1, 3, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2 && e.gid.raw[10] == 0xff && e.gid.raw[11] == 0xff);
	aw_round_trip(&s, 0, 0x12345, 0x12345);
	aw_round_trip(&s, 1, 0xabcde, 0xabcde);
	aw_round_trip(&s, 3, 0x12345, 0);
}

/* Without IBV_WC_GRH only the completion's fields count; a header of no known kind: EPROTONOSUPPORT. */
static void test_no_grh_and_bad_header(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_wc wc = {.slid = 7, .sl = 3, .dlid_path_bits = 1};
	struct ibv_grh grh;
	struct ibv_ah_attr a;

	CHECK(c != NULL);
	memset(&grh, 0, sizeof(grh));
	CHECK_OK(ibv_init_ah_from_wc(c, 1, &wc, &grh, &a));
	CHECK(a.is_global == 0 && a.dlid == 7 && a.sl == 3 && a.src_path_bits == 1 && a.port_num == 1);
	wc.wc_flags = IBV_WC_GRH;
	errno = 0;
	CHECK(ibv_init_ah_from_wc(c, 1, &wc, &grh, &a) == -1 && errno == EPROTONOSUPPORT);
	errno = 0;
	CHECK(ibv_create_ah_from_wc(vf_pd(c), &wc, &grh, 1) == NULL && errno == EPROTONOSUPPORT);
}

/* A datagram to a multicast group names no entry of the GID table to answer from: EINVAL. */
static void test_multicast_receive(void)
{
	static const union ibv_gid mg = {.raw = {0xff, 0x0e, [15] = 0x42}};
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1, .grh = {.dgid = mg, .sgid_index = 1, .hop_limit = 1}};
	struct ibv_ah_attr back;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct aw s;

	aw_open(&s);
	CHECK_OK(ibv_attach_mcast(s.qp[1], &mg, 0));
	ah = aw_ah(s.pd, &a);
	CHECK(ah != NULL);
	aw_send(&s, 0, 1, ah, 0xffffff, "group", &wc);
	CHECK_OK(ibv_detach_mcast(s.qp[1], &mg, 0));
	errno = 0;
	CHECK(ibv_init_ah_from_wc(s.c, 1, &wc, (struct ibv_grh *)mem[1], &back) == -1 && errno == EINVAL);
}

int main(void)
{
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_round_trip);
	RUN(test_no_grh_and_bad_header);
	RUN(test_multicast_receive);
	return th_summary("test_verbs_ah_wc");
}
