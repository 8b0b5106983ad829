/*
 * Raw packet QPs (ibv_create_qp(3) with IBV_QPT_RAW_PACKET) and flows
 * (ibv_create_flow(3)) on the Ethernet port, whose cable is looped: a frame
 * one raw QP sends reaches the raw QP whose flow matches it, bytes intact;
 * a frame no flow matches reaches no QP; a destroyed flow delivers nothing
 * more; a flow's tag action spec reaches the receive completion
 * (ibv_wc_read_flow_tag). Creation is refused on an InfiniBand port (EINVAL) and with caps
 * beyond the device's; the modify to INIT needs the port and nothing else
 * (the kernel's raw packet masks).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_fixture.h"

#define FRAME_MAX 2048
#define RING 16

static const uint8_t mac_b[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0xbb};
static const uint8_t mac_c[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0xcc};
static const uint8_t mac_a[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0xaa};

struct raw_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t buf[4][FRAME_MAX];
	struct ibv_mr *mr;
};

static struct raw_env env;

static void destroy_qp_cb(void *qp)
{
	(void)ibv_destroy_qp(qp);
}

static void destroy_cq_cb(void *cq)
{
	(void)ibv_destroy_cq(cq);
}

static void destroy_flow_cb(void *f)
{
	(void)ibv_destroy_flow(f);
}

/* The context, PD, CQ and a registered buffer; released when the case ends. */
static int env_open(void)
{
	memset(&env, 0, sizeof(env));
	env.c = vf_open();
	if (env.c == NULL)
		return -1;
	env.pd = vf_pd(env.c);
	if (env.pd == NULL)
		return -1;
	env.cq = ibv_create_cq(env.c, 64, NULL, NULL, 0);
	if (env.cq == NULL)
		return -1;
	th_defer(destroy_cq_cb, env.cq);
	env.mr = ibv_reg_mr(env.pd, env.buf, sizeof(env.buf), IBV_ACCESS_LOCAL_WRITE);
	if (env.mr == NULL)
		return -1;
	th_defer(vf_dereg_cb, env.mr);
	return 0;
}

static struct ibv_qp_init_attr raw_attr(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = env.cq,
		.recv_cq = env.cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = {.max_send_wr = RING, .max_recv_wr = RING, .max_send_sge = 2, .max_recv_sge = 1},
	};

	return a;
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* A raw QP in RTS, destroyed when the case ends (after its flows: deferred first). */
static struct ibv_qp *raw_qp(void)
{
	struct ibv_qp_init_attr a = raw_attr();
	struct ibv_qp *qp = ibv_create_qp(env.pd, &a);

	if (qp == NULL)
		return NULL;
	th_defer(destroy_qp_cb, qp);
	return to_rts(qp) == 0 ? qp : NULL;
}

/* An Ethernet/IPv4/UDP frame to dmac with UDP destination port dport, len bytes, payload bytes from seed. */
static uint32_t make_frame(uint8_t *f, const uint8_t *dmac, uint16_t dport, uint32_t len, uint8_t seed)
{
	uint16_t ip_len = (uint16_t)(len - 14), udp_len = (uint16_t)(len - 34);

	memset(f, 0, 42);
	memcpy(f, dmac, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08; /* IPv4 */
	f[14] = 0x45;
	f[16] = (uint8_t)(ip_len >> 8);
	f[17] = (uint8_t)ip_len;
	f[22] = 64;
	f[23] = 17; /* UDP */
	f[26] = 10, f[29] = 1;		  /* 10.0.0.1 */
	f[30] = 10, f[33] = 2;		  /* 10.0.0.2 */
	f[34] = 0x30, f[35] = 0x39;	  /* source port 12345 */
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	f[38] = (uint8_t)(udp_len >> 8);
	f[39] = (uint8_t)udp_len;
	for (uint32_t i = 42; i < len; i++)
		f[i] = (uint8_t)(seed + i * 7);
	return len;
}

/* A flow of one ETH spec (destination MAC) and optionally a UDP destination port. */
struct eth_udp_flow {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec_tcp_udp udp;
};

static struct ibv_flow *flow_to(struct ibv_qp *qp, const uint8_t *dmac, uint16_t dport, uint16_t prio)
{
	struct eth_udp_flow f;
	struct ibv_flow *fl;

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = dport != 0 ? sizeof(f) : sizeof(f.attr) + sizeof(f.eth);
	f.attr.priority = prio;
	f.attr.num_of_specs = dport != 0 ? 2 : 1;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	f.udp.type = IBV_FLOW_SPEC_UDP;
	f.udp.size = sizeof(f.udp);
	f.udp.val.dst_port = htons(dport);
	f.udp.mask.dst_port = 0xffff;
	fl = ibv_create_flow(qp, &f.attr);
	return fl;
}

static int post_recv(struct ibv_qp *qp, int slot, uint64_t id)
{
	struct ibv_sge s = {.addr = (uintptr_t)env.buf[slot], .length = FRAME_MAX, .lkey = env.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad = NULL;

	memset(env.buf[slot], 0, FRAME_MAX);
	return ibv_post_recv(qp, &wr, &bad);
}

/* Sends len bytes of buf[slot] as two gather entries (header, rest), signaled. */
static int post_frame(struct ibv_qp *qp, int slot, uint32_t len, uint64_t id)
{
	struct ibv_sge s[2] = {
		{.addr = (uintptr_t)env.buf[slot], .length = 14, .lkey = env.mr->lkey},
		{.addr = (uintptr_t)env.buf[slot] + 14, .length = len - 14, .lkey = env.mr->lkey},
	};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = s, .num_sge = 2, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;

	return ibv_post_send(qp, &wr, &bad);
}

/*
 * Every completion the CQ holds (the device runs at the doorbell: nothing is
 * late), sorted by wr_id so that the sender's (0xa.) comes before the
 * receiver's (0xb., 0xc.): the two queues' completions have no order.
 */
static int poll_all(struct ibv_wc *wc, int max)
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

static void test_create_caps_and_states(void)
{
	struct ibv_qp_init_attr a, qa;
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 7};
	struct ibv_qp *qp;

	CHECK(env_open() == 0);
	a = raw_attr();
	a.cap.max_inline_data = 64;
	qp = ibv_create_qp(env.pd, &a);
	CHECK(qp != NULL);
	th_defer(destroy_qp_cb, qp);
	CHECK(qp->qp_type == IBV_QPT_RAW_PACKET && qp->state == IBV_QPS_RESET);
	CHECK(a.cap.max_send_wr >= RING && a.cap.max_recv_wr >= RING && a.cap.max_inline_data >= 64);
	CHECK(a.cap.max_send_sge == 2 && a.cap.max_recv_sge >= 1);
	/* INIT needs the port and takes nothing else. */
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX), EINVAL);
	m.port_num = 2;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
	m.port_num = 1;
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT));
	m.qp_state = IBV_QPS_RTS;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL); /* INIT to RTS is no transition */
	m.qp_state = IBV_QPS_RTR;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE));
	m.qp_state = IBV_QPS_RTS;
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE));
	CHECK_OK(ibv_query_qp(qp, &m, IBV_QP_STATE, &qa));
	CHECK(m.qp_state == IBV_QPS_RTS && qa.qp_type == IBV_QPT_RAW_PACKET);
	m.qp_state = IBV_QPS_RESET;
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE));
	CHECK(qp->state == IBV_QPS_RESET);
}

static void test_create_refusals(void)
{
	struct ibv_qp_init_attr a;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq;

	CHECK(env_open() == 0);
	a = raw_attr();
	a.cap.max_send_sge = 1000;
	errno = 0;
	CHECK(ibv_create_qp(env.pd, &a) == NULL && errno == EINVAL);
	a = raw_attr();
	a.cap.max_recv_sge = 1000;
	errno = 0;
	CHECK(ibv_create_qp(env.pd, &a) == NULL && errno == EINVAL);
	a = raw_attr();
	a.cap.max_send_wr = 1u << 20;
	errno = 0;
	CHECK(ibv_create_qp(env.pd, &a) == NULL && errno == EINVAL);
	srq = ibv_create_srq(env.pd, &sa);
	CHECK(srq != NULL);
	a = raw_attr();
	a.srq = srq;
	errno = 0;
	CHECK(ibv_create_qp(env.pd, &a) == NULL && errno == EINVAL);
	CHECK_OK(ibv_destroy_srq(srq));
}

/* In a process whose port is InfiniBand: the errno of a raw QP's creation. */
static int role_ib(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				     .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp;

	if (pd == NULL || cq == NULL)
		return 2;
	errno = 0;
	qp = ibv_create_qp(pd, &a);
	printf("RAW %d %d\n", qp == NULL, errno);
	fflush(stdout);
	if (qp != NULL)
		(void)ibv_destroy_qp(qp);
	(void)ibv_destroy_cq(cq);
	(void)ibv_dealloc_pd(pd);
	(void)ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}

static void test_refused_on_ib_port(void)
{
	static const char topo[] = "function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0"
				   " mac=02:53:44:0b:00:00 ipv4=10.0.0.1 link=ib\n";
	char path[] = "/tmp/softdpu-raw-topoXXXXXX";
	int fd = mkstemp(path), null = -1, err = -1;
	struct th_proc *p;
	const char *l;

	CHECK(fd >= 0 && write(fd, topo, sizeof(topo) - 1) == (ssize_t)(sizeof(topo) - 1));
	close(fd);
	setenv("SOFTDPU_TOPOLOGY", path, 1);
	p = th_proc_start(NULL, "ib", NULL);
	unsetenv("SOFTDPU_TOPOLOGY");
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "RAW %d %d", &null, &err) == 2);
	CHECK(null == 1 && err == EINVAL);
	CHECK(th_proc_wait(p) == 0);
	unlink(path);
}

/* A frame A sends reaches B through B's flow: completions exact, bytes equal. */
static void test_flow_delivers(void)
{
	struct ibv_qp *qa, *qb;
	struct ibv_flow *fl;
	struct ibv_wc wc[4];
	uint32_t len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	fl = flow_to(qb, mac_b, 0, 0);
	CHECK(fl != NULL);
	th_defer(destroy_flow_cb, fl);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	len = make_frame(env.buf[0], mac_b, 4791, 300, 3);
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(poll_all(wc, 4) == 2);
	CHECK(wc[0].wr_id == 0xa1 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_SEND &&
	      wc[0].qp_num == qa->qp_num);
	CHECK(wc[1].wr_id == 0xb1 && wc[1].status == IBV_WC_SUCCESS && wc[1].opcode == IBV_WC_RECV &&
	      wc[1].qp_num == qb->qp_num && wc[1].byte_len == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	/* Destroying a QP a flow steers to is refused while the flow lives. */
	CHECK_ERR(ibv_destroy_qp(qb), EBUSY);
}

/* A frame no flow matches reaches no QP; the sender's completion is still a success. */
static void test_flow_no_match(void)
{
	struct ibv_qp *qa, *qb, *qc;
	struct ibv_flow *fl;
	struct ibv_wc wc[4];
	uint32_t len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	qc = raw_qp(); /* no flow: receives nothing */
	CHECK(qa != NULL && qb != NULL && qc != NULL);
	fl = flow_to(qb, mac_b, 0, 0);
	CHECK(fl != NULL);
	th_defer(destroy_flow_cb, fl);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	CHECK_OK(post_recv(qc, 2, 0xc1));
	len = make_frame(env.buf[0], mac_c, 4791, 100, 5);
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(poll_all(wc, 4) == 1);
	CHECK(wc[0].wr_id == 0xa1 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_SEND);
	CHECK(env.buf[1][0] == 0 && env.buf[2][0] == 0);
}

/* After ibv_destroy_flow, a frame that matched it reaches nothing. */
static void test_destroy_flow_stops(void)
{
	struct ibv_qp *qa, *qb;
	struct ibv_flow *fl;
	struct ibv_wc wc[4];
	uint32_t len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	fl = flow_to(qb, mac_b, 0, 0);
	CHECK(fl != NULL);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	CHECK_OK(post_recv(qb, 2, 0xb2));
	len = make_frame(env.buf[0], mac_b, 4791, 64, 9);
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(poll_all(wc, 4) == 2);
	CHECK(wc[1].wr_id == 0xb1 && wc[1].status == IBV_WC_SUCCESS && wc[1].byte_len == len);
	CHECK_OK(ibv_destroy_flow(fl));
	CHECK_OK(post_frame(qa, 0, len, 0xa2));
	CHECK(poll_all(wc, 4) == 1);
	CHECK(wc[0].wr_id == 0xa2 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(env.buf[2][0] == 0);
}

/* UDP ports and priorities: the lower priority value's flow takes a frame both match. */
static void test_flow_udp_priority(void)
{
	struct ibv_qp *qa, *qb, *qc;
	struct ibv_flow *fb, *fc;
	struct ibv_wc wc[4];
	uint32_t len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	qc = raw_qp();
	CHECK(qa != NULL && qb != NULL && qc != NULL);
	fb = flow_to(qb, mac_b, 0, 2);      /* any frame to mac_b */
	fc = flow_to(qc, mac_b, 4791, 1);   /* and port 4791 of it, first */
	CHECK(fb != NULL && fc != NULL);
	th_defer(destroy_flow_cb, fb);
	th_defer(destroy_flow_cb, fc);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	CHECK_OK(post_recv(qc, 2, 0xc1));
	len = make_frame(env.buf[0], mac_b, 4791, 80, 1);
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(poll_all(wc, 4) == 2);
	CHECK(wc[1].wr_id == 0xc1 && wc[1].qp_num == qc->qp_num && wc[1].byte_len == len);
	CHECK(memcmp(env.buf[2], env.buf[0], len) == 0);
	len = make_frame(env.buf[0], mac_b, 9999, 90, 2);
	CHECK_OK(post_frame(qa, 0, len, 0xa2));
	CHECK(poll_all(wc, 4) == 2);
	CHECK(wc[1].wr_id == 0xb1 && wc[1].qp_num == qb->qp_num && wc[1].byte_len == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
}

/* Flow refusals: a non-raw QP, a sniffer flow, an unknown spec, a bad port. */
static void test_flow_refusals(void)
{
	struct eth_udp_flow f;
	struct ibv_qp *qb;

	CHECK(env_open() == 0);
	qb = raw_qp();
	CHECK(qb != NULL);
	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f.attr) + sizeof(f.eth);
	f.attr.num_of_specs = 1;
	f.attr.port = 2;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	errno = 0;
	CHECK(ibv_create_flow(qb, &f.attr) == NULL && errno == EINVAL);
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_VXLAN_TUNNEL;
	errno = 0;
	CHECK(ibv_create_flow(qb, &f.attr) == NULL && errno == EOPNOTSUPP);
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = 8; /* shorter than the spec */
	errno = 0;
	CHECK(ibv_create_flow(qb, &f.attr) == NULL && errno == EINVAL);
}

/* Sends posted before RTS go out at the move to RTS; receives posted in INIT take frames from RTR on. */
static void test_posted_before_rts(void)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	struct ibv_qp *qa, *qb;
	struct ibv_flow *fl;
	struct ibv_wc wc[4];
	uint32_t len;

	CHECK(env_open() == 0);
	qb = raw_qp();
	CHECK(qb != NULL);
	a = raw_attr();
	qa = ibv_create_qp(env.pd, &a);
	CHECK(qa != NULL);
	th_defer(destroy_qp_cb, qa);
	fl = flow_to(qb, mac_b, 0, 0);
	CHECK(fl != NULL);
	th_defer(destroy_flow_cb, fl);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	len = make_frame(env.buf[0], mac_b, 1, 60, 4);
	CHECK_ERR(post_frame(qa, 0, len, 0xa1), ENOMEM); /* RESET: no queue to post to */
	CHECK_OK(ibv_modify_qp(qa, &m, IBV_QP_STATE | IBV_QP_PORT));
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(poll_all(wc, 4) == 0);
	m.qp_state = IBV_QPS_RTR;
	CHECK_OK(ibv_modify_qp(qa, &m, IBV_QP_STATE));
	CHECK(poll_all(wc, 4) == 0);
	m.qp_state = IBV_QPS_RTS;
	CHECK_OK(ibv_modify_qp(qa, &m, IBV_QP_STATE));
	CHECK(poll_all(wc, 4) == 2);
	CHECK(wc[0].wr_id == 0xa1 && wc[1].wr_id == 0xb1 && wc[1].byte_len == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
}

/* A send through a key the QP's PD cannot read completes in error; RESET gives the QP fresh queues. */
static void test_send_error_then_reset(void)
{
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_RESET};
	struct ibv_sge sg = {.length = 64, .lkey = 0x00abcdef};
	struct ibv_send_wr wr = {.wr_id = 0xa1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;
	struct ibv_qp *qa, *qb;
	struct ibv_flow *fl;
	struct ibv_wc wc[4];
	uint32_t len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	fl = flow_to(qb, mac_b, 0, 0);
	CHECK(fl != NULL);
	th_defer(destroy_flow_cb, fl);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	len = make_frame(env.buf[0], mac_b, 7, 64, 6);
	sg.addr = (uintptr_t)env.buf[0];
	CHECK_OK(ibv_post_send(qa, &wr, &bad));
	CHECK(poll_all(wc, 4) == 1);
	CHECK(wc[0].wr_id == 0xa1 && wc[0].status == IBV_WC_LOC_PROT_ERR && wc[0].qp_num == qa->qp_num);
	CHECK(env.buf[1][0] == 0);
	/* A frame shorter than the inline L2 header is refused at post. */
	sg.lkey = env.mr->lkey;
	sg.length = 17;
	CHECK_ERR(ibv_post_send(qa, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	CHECK_OK(ibv_modify_qp(qa, &m, IBV_QP_STATE));
	CHECK(to_rts(qa) == 0);
	CHECK_OK(post_frame(qa, 0, len, 0xa2));
	CHECK(poll_all(wc, 4) == 2);
	CHECK(wc[0].wr_id == 0xa2 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wc[1].wr_id == 0xb1 && wc[1].status == IBV_WC_SUCCESS && wc[1].byte_len == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
}

/* Receive WQs and an indirection table over them; an RSS QP without a 40-byte key is refused (test_verbs_rss has the rest). */
static void test_wq_and_ind_table(void)
{
	struct ibv_wq_init_attr wa = {.wq_type = IBV_WQT_RQ, .max_wr = 8, .max_sge = 1};
	struct ibv_wq_attr m = {.attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY};
	struct ibv_sge s = {0};
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &s, .num_sge = 1}, *bad = NULL;
	struct ibv_rwq_ind_table_init_attr ta = {.log_ind_tbl_size = 1};
	struct ibv_rx_hash_conf hc = {.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ};
	struct ibv_qp_init_attr_ex qa = {.qp_type = IBV_QPT_RAW_PACKET};
	struct ibv_rwq_ind_table *t;
	struct ibv_wq *w[2];

	CHECK(env_open() == 0);
	wa.pd = env.pd;
	wa.cq = env.cq;
	w[0] = ibv_create_wq(env.c, &wa);
	w[1] = ibv_create_wq(env.c, &wa);
	CHECK(w[0] != NULL && w[1] != NULL);
	CHECK(w[0]->wq_num != w[1]->wq_num && w[0]->state == IBV_WQS_RESET);
	s = (struct ibv_sge){.addr = (uintptr_t)env.buf[0], .length = 64, .lkey = env.mr->lkey};
	CHECK_OK(ibv_modify_wq(w[0], &m));
	CHECK(w[0]->state == IBV_WQS_RDY);
	CHECK_OK(ibv_post_wq_recv(w[0], &wr, &bad));
	wr.num_sge = 2; /* beyond max_sge */
	CHECK_ERR(ibv_post_wq_recv(w[0], &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	ta.ind_tbl = w;
	t = ibv_create_rwq_ind_table(env.c, &ta);
	CHECK(t != NULL);
	CHECK_ERR(ibv_destroy_wq(w[1]), EBUSY); /* the table lists it */
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
	qa.pd = env.pd;
	qa.rx_hash_conf = hc;
	qa.rwq_ind_tbl = t;
	errno = 0;
	CHECK(ibv_create_qp_ex(env.c, &qa) == NULL && errno == EINVAL);
	CHECK_OK(ibv_destroy_rwq_ind_table(t));
	CHECK_OK(ibv_destroy_wq(w[0]));
	CHECK_OK(ibv_destroy_wq(w[1]));
}

static void destroy_cqx_cb(void *cq)
{
	(void)ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* An ETH spec (destination MAC) and n tag action specs. */
struct eth_tag_flow {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec_action_tag tag[2];
};

static struct ibv_flow *tag_flow(struct ibv_qp *qp, const uint8_t *dmac, int n, uint32_t tag)
{
	struct eth_tag_flow f;

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = (uint16_t)(sizeof(f.attr) + sizeof(f.eth) + (size_t)n * sizeof(f.tag[0]));
	f.attr.num_of_specs = (uint8_t)(1 + n);
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	for (int i = 0; i < 2; i++) {
		f.tag[i].type = IBV_FLOW_SPEC_ACTION_TAG;
		f.tag[i].size = sizeof(f.tag[i]);
		f.tag[i].tag_id = tag + (uint32_t)i;
	}
	return ibv_create_flow(qp, &f.attr);
}

/*
 * A flow's tag action spec: the frames it steers complete with that flow
 * tag (an extended CQ with IBV_WC_EX_WITH_FLOW_TAG), a frame of an untagged
 * flow with 0. A tag of more than 24 bits or two tags in one flow: EINVAL.
 */
static void test_flow_tag(void)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG};
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_qp_init_attr a;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qa, *qb, *qc;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	uint32_t len;

	CHECK(env_open() == 0);
	cqx = ibv_create_cq_ex(env.c, &ca);
	CHECK(cqx != NULL);
	th_defer(destroy_cqx_cb, cqx);
	qa = raw_qp();
	a = raw_attr();
	a.recv_cq = ibv_cq_ex_to_cq(cqx);
	qb = ibv_create_qp(env.pd, &a);
	CHECK(qb != NULL);
	th_defer(destroy_qp_cb, qb);
	CHECK(qa != NULL && to_rts(qb) == 0);
	fl = tag_flow(qb, mac_b, 1, 0xabcdef);
	CHECK(fl != NULL);
	th_defer(destroy_flow_cb, fl);
	fl = flow_to(qb, mac_c, 0, 0);
	CHECK(fl != NULL);
	th_defer(destroy_flow_cb, fl);
	for (int i = 0; i < 2; i++) {
		CHECK_OK(post_recv(qb, 1, 0xb1));
		len = make_frame(env.buf[0], i == 0 ? mac_b : mac_c, 4791, 100 + 50 * (uint32_t)i, 5);
		CHECK_OK(post_frame(qa, 0, len, 0xa1));
		CHECK(ibv_poll_cq(env.cq, 1, &wc) == 1 && wc.wr_id == 0xa1 && wc.status == IBV_WC_SUCCESS);
		CHECK_OK(ibv_start_poll(cqx, &pa));
		CHECK(cqx->wr_id == 0xb1 && cqx->status == IBV_WC_SUCCESS);
		CHECK(ibv_wc_read_qp_num(cqx) == qb->qp_num);
		CHECK(ibv_wc_read_byte_len(cqx) == len);
		CHECK(ibv_wc_read_flow_tag(cqx) == (i == 0 ? 0xabcdefu : 0u));
		ibv_end_poll(cqx);
		CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	}
	qc = raw_qp();
	CHECK(qc != NULL);
	errno = 0;
	CHECK(tag_flow(qc, mac_c, 1, 1u << 24) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(tag_flow(qc, mac_c, 2, 7) == NULL && errno == EINVAL);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "ib") == 0)
		return role_ib();
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_create_caps_and_states);
	RUN(test_create_refusals);
	RUN(test_refused_on_ib_port);
	RUN(test_flow_delivers);
	RUN(test_flow_no_match);
	RUN(test_destroy_flow_stops);
	RUN(test_flow_udp_priority);
	RUN(test_flow_refusals);
	RUN(test_posted_before_rts);
	RUN(test_send_error_then_reset);
	RUN(test_wq_and_ind_table);
	RUN(test_flow_tag);
	return th_summary("test_verbs_raw");
}
