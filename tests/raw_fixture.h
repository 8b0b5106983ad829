/*
 * Raw packet QPs on the looped Ethernet port for tests of steering: a
 * context with a PD, a CQ and a registered buffer of four frame slots
 * (env), QPs in RTS, an Ethernet/IPv4/UDP frame from mac_src to mac_dst
 * (optionally 802.1Q-tagged), and one frame sent and its receive polled.
 * Objects are released when the case ends (harness.h).
 */
#ifndef SOFTDPU_TEST_RAW_FIXTURE_H_
#define SOFTDPU_TEST_RAW_FIXTURE_H_

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"

#define FRAME_MAX 2048
#define RING 16
#define VLAN_LEN 4

static const uint8_t mac_src[6] = {0x02, 0x00, 0x00, 0x00, 0x5a, 0x01};
static const uint8_t mac_dst[6] = {0x02, 0x00, 0x00, 0x00, 0xd5, 0x02};
/* TPID 0x8100, priority 5, CFI 0, VLAN 0x123: network order, as push_vlan takes it. */
static const uint8_t vlan_hdr[VLAN_LEN] = {0x81, 0x00, 0xa1, 0x23};

struct env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t buf[4][FRAME_MAX];
	struct ibv_mr *mr;
};

static struct env env;

static inline void qp_cb(void *qp)
{
	(void)ibv_destroy_qp(qp);
}

static inline void cq_cb(void *cq)
{
	(void)ibv_destroy_cq(cq);
}

static inline void flow_cb(void *f)
{
	(void)ibv_destroy_flow(f);
}






static inline void *kept(void *obj, th_cleanup_fn fn)
{
	if (obj != NULL)
		th_defer(fn, obj);
	return obj;
}

static inline int env_open(void)
{
	memset(&env, 0, sizeof(env));
	env.c = vf_open();
	if (env.c == NULL)
		return -1;
	env.pd = vf_pd(env.c);
	if (env.pd == NULL)
		return -1;
	env.cq = kept(ibv_create_cq(env.c, 64, NULL, NULL, 0), cq_cb);
	if (env.cq == NULL)
		return -1;
	env.mr = kept(ibv_reg_mr(env.pd, env.buf, sizeof(env.buf), IBV_ACCESS_LOCAL_WRITE), vf_dereg_cb);
	return env.mr != NULL ? 0 : -1;
}

/* A raw packet QP in RTS, destroyed when the case ends (after the actions naming it: deferred first). */
static inline struct ibv_qp *raw_qp(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = env.cq,
		.recv_cq = env.cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = {.max_send_wr = RING, .max_recv_wr = RING, .max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	struct ibv_qp *qp = kept(ibv_create_qp(env.pd, &a), qp_cb);

	if (qp == NULL || ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT) != 0)
		return NULL;
	m.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &m, IBV_QP_STATE) != 0)
		return NULL;
	m.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 ? qp : NULL;
}

/* An Ethernet/IPv4/UDP frame from mac_src to mac_dst, tagged with vlan_hdr when asked; len bytes. */
static inline uint32_t make_frame(uint8_t *f, uint32_t len, bool tagged)
{
	uint32_t l3 = tagged ? 18 : 14;

	memset(f, 0, len);
	memcpy(f, mac_dst, 6);
	memcpy(f + 6, mac_src, 6);
	if (tagged)
		memcpy(f + 12, vlan_hdr, VLAN_LEN);
	f[l3 - 2] = 0x08; /* IPv4 */
	f[l3] = 0x45;
	f[l3 + 2] = (uint8_t)((len - l3) >> 8);
	f[l3 + 3] = (uint8_t)(len - l3);
	f[l3 + 8] = 64;
	f[l3 + 9] = 17; /* UDP */
	for (uint32_t i = l3 + 28; i < len; i++)
		f[i] = (uint8_t)((i - l3) * 13 + 1); /* the same payload tagged or not */
	return len;
}

static inline int post_recv(struct ibv_qp *qp, int slot, uint64_t id)
{
	struct ibv_sge s = {.addr = (uintptr_t)env.buf[slot], .length = FRAME_MAX, .lkey = env.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad = NULL;

	memset(env.buf[slot], 0, FRAME_MAX);
	return ibv_post_recv(qp, &wr, &bad);
}

static inline int post_frame(struct ibv_qp *qp, int slot, uint32_t len, uint64_t id)
{
	struct ibv_sge s = {.addr = (uintptr_t)env.buf[slot], .length = len, .lkey = env.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;

	return ibv_post_send(qp, &wr, &bad);
}

/* Every completion the CQ holds, sorted by wr_id (sender 0xa., receivers 0xb.). */
static inline int poll_all(struct ibv_wc *wc, int max)
{
	int n = ibv_poll_cq(env.cq, max, wc);

	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && wc[j].wr_id < wc[j - 1].wr_id; j--) {
			struct ibv_wc t = wc[j];

			wc[j] = wc[j - 1];
			wc[j - 1] = t;
		}
	return n;
}

/* Sends buf[0] (len bytes) from qa; 1 with the received frame's length in *got when it reached qb's buf[1]. */
static inline int send_one(struct ibv_qp *qa, struct ibv_qp *qb, uint32_t len, uint32_t *got)
{
	struct ibv_wc wc[4];
	int n;

	if (post_recv(qb, 1, 0xb1) != 0 || post_frame(qa, 0, len, 0xa1) != 0)
		return -1;
	n = poll_all(wc, 4);
	if (n < 1 || wc[0].wr_id != 0xa1 || wc[0].status != IBV_WC_SUCCESS || wc[0].opcode != IBV_WC_SEND)
		return -1;
	if (n == 1)
		return 0;
	if (n != 2 || wc[1].wr_id != 0xb1 || wc[1].status != IBV_WC_SUCCESS || wc[1].opcode != IBV_WC_RECV ||
	    wc[1].qp_num != qb->qp_num)
		return -1;
	*got = wc[1].byte_len;
	return 1;
}

static inline void cqx_cb(void *cq)
{
	(void)ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* A raw packet QP in RTR (it only receives) receiving into cq (an extended CQ), sending into env.cq. */
static inline struct ibv_qp *raw_qp_on(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = env.cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = {.max_send_wr = RING, .max_recv_wr = RING, .max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	struct ibv_qp *qp = kept(ibv_create_qp(env.pd, &a), qp_cb);

	if (qp == NULL || ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT) != 0)
		return NULL;
	m.qp_state = IBV_QPS_RTR;
	return ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 ? qp : NULL;
}

#endif /* SOFTDPU_TEST_RAW_FIXTURE_H_ */
