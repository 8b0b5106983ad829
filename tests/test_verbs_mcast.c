/*
 * Multicast on UD QPs (ibv_attach_mcast(3), ibv_detach_mcast(3)): a send to
 * a multicast address (a multicast GID, remote QPN 0xffffff) reaches every
 * UD QP attached to the group, in this process and in others; a QP not
 * attached, or detached, gets nothing; the sender gets its own datagram
 * only when attached and not created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
 * the Q_Key is checked as for unicast. Errors as the kernel answers them.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define MC_QPS 5
#define MC_SLOT 256
#define MC_QKEY 0x11111111u
#define MC_MSG "multicast datagram!"
#define MC_LEN ((uint32_t)sizeof(MC_MSG) - 1)

static const union ibv_gid mgid = {.raw = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34}};
static const union ibv_gid mgid_v4 = {.raw = {[10] = 0xff, [11] = 0xff, [12] = 239, [13] = 1, [14] = 2, [15] = 3}};

static uint8_t mem[MC_QPS + 1][MC_SLOT] __attribute__((aligned(4096)));

struct mc {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq[MC_QPS];
	struct ibv_qp *qp[MC_QPS];
};

static void mc_detach_cb(void *arg)
{
	struct ibv_qp *qp = arg;

	(void)ibv_detach_mcast(qp, &mgid, 0);
}

static struct ibv_qp *mc_ud_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t flags)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd,
		.create_flags = flags,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(pd->context, &a);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

/* n UD QPs up (RTS, Q_Key MC_QKEY), each with its own CQ; qp[0] with flags. */
static void mc_open(struct mc *m, int n, uint32_t flags)
{
	memset(m, 0, sizeof(*m));
	m->c = vf_open();
	CHECK(m->c != NULL);
	m->pd = vf_pd(m->c);
	CHECK(m->pd != NULL);
	m->mr = vq_mr(m->pd, mem, sizeof(mem), VQ_ACCESS_ALL);
	CHECK(m->mr != NULL);
	for (int i = 0; i < n; i++) {
		m->cq[i] = vq_cq(m->c, 16);
		CHECK(m->cq[i] != NULL);
		m->qp[i] = mc_ud_qp(m->pd, m->cq[i], i == 0 ? flags : 0);
		CHECK(m->qp[i] != NULL);
		CHECK_OK(vq_up(m->qp[i], 0, 0, 0));
	}
}

static int mc_attach(struct ibv_qp *qp)
{
	int rc = ibv_attach_mcast(qp, &mgid, 0);

	if (rc == 0)
		th_defer(mc_detach_cb, qp); /* before the QP's own destroy runs */
	return rc;
}

static void mc_post_recv(struct mc *m, int i)
{
	struct ibv_sge s = {.addr = (uintptr_t)mem[i], .length = MC_SLOT, .lkey = m->mr->lkey};
	struct ibv_recv_wr w = {.wr_id = 100u + (unsigned)i, .sg_list = &s, .num_sge = 1}, *bad;

	memset(mem[i], 0xee, MC_SLOT);
	CHECK_OK(ibv_post_recv(m->qp[i], &w, &bad));
}

/* An address of group g from the port's GID sgid (index). */
static struct ibv_ah *mc_ah(struct ibv_pd *pd, const union ibv_gid *g, uint8_t sgid)
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1, .grh = {.dgid = *g, .sgid_index = sgid, .hop_limit = 1}};
	struct ibv_ah *ah = ibv_create_ah(pd, &a);

	if (ah != NULL)
		th_defer(vq_destroy_ah_cb, ah);
	return ah;
}

/* Sends MC_MSG from qp[from] to the group; the send completes successfully. */
static void mc_send(struct mc *m, int from, struct ibv_ah *ah, uint32_t qkey)
{
	struct ibv_sge s = {.addr = (uintptr_t)mem[MC_QPS], .length = MC_LEN, .lkey = m->mr->lkey};
	struct ibv_send_wr w = {.wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED, .wr.ud = {.ah = ah, .remote_qpn = 0xffffff,
									   .remote_qkey = qkey}}, *bad;
	struct ibv_wc wc;

	memcpy(mem[MC_QPS], MC_MSG, MC_LEN);
	CHECK_OK(ibv_post_send(m->qp[from], &w, &bad));
	CHECK(vq_poll1(m->cq[from], &wc) == 1);
	CHECK(wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
}

/* The same from an attached sender: its CQ gets its own datagram's receive first, then the send's completion. */
static void mc_send_self(struct mc *m, struct ibv_ah *ah)
{
	struct ibv_sge s = {.addr = (uintptr_t)mem[MC_QPS], .length = MC_LEN, .lkey = m->mr->lkey};
	struct ibv_send_wr w = {.wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED, .wr.ud = {.ah = ah, .remote_qpn = 0xffffff,
									   .remote_qkey = MC_QKEY}}, *bad;
	struct ibv_wc wc[2];

	memcpy(mem[MC_QPS], MC_MSG, MC_LEN);
	CHECK_OK(ibv_post_send(m->qp[0], &w, &bad));
	CHECK(vq_poll1(m->cq[0], &wc[0]) == 1 && vq_poll1(m->cq[0], &wc[1]) == 1);
	CHECK(wc[0].wr_id == 100 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RECV);
	CHECK(wc[0].byte_len == 40 + MC_LEN && wc[0].src_qp == m->qp[0]->qp_num);
	CHECK(memcmp(mem[0] + 40, MC_MSG, MC_LEN) == 0 && memcmp(mem[0] + 24, mgid.raw, 16) == 0);
	CHECK(wc[1].wr_id == 7 && wc[1].status == IBV_WC_SUCCESS && wc[1].opcode == IBV_WC_SEND);
}

/* qp[i] received MC_MSG from qp[from], behind a 40-byte network header to the group g. */
static void mc_got(struct mc *m, int i, int from, const union ibv_gid *g)
{
	struct ibv_wc wc;

	CHECK(vq_poll1(m->cq[i], &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 100u + (unsigned)i);
	CHECK(wc.byte_len == 40 + MC_LEN && (wc.wc_flags & IBV_WC_GRH) && wc.src_qp == m->qp[from]->qp_num);
	CHECK(memcmp(mem[i] + 40, MC_MSG, MC_LEN) == 0);
	if (g->raw[0] == 0xff)
		CHECK(memcmp(mem[i] + 24, g->raw, 16) == 0); /* the IPv6 header's destination: the group */
	else
		CHECK(memcmp(mem[i] + 36, g->raw + 12, 4) == 0); /* the IPv4 header's */
}

/* qp[i] received nothing (its posted receive is still there). */
static void mc_none(struct mc *m, int i)
{
	struct ibv_wc wc;

	for (int k = 0; k < 1000; k++)
		CHECK(ibv_poll_cq(m->cq[i], 1, &wc) == 0);
	CHECK(mem[i][40] == 0xee);
}

static void test_attach_errors(void)
{
	struct mc m;
	struct ibv_cq *cq;
	struct ibv_qp *rc;
	union ibv_gid uni = {.raw = {0xfe, 0x80, [15] = 1}};
	struct ibv_device_attr da;

	mc_open(&m, 1, 0);
	cq = vq_cq(m.c, 4);
	rc = vq_qp(m.pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(rc != NULL);
	CHECK_ERR(ibv_attach_mcast(rc, &mgid, 0), EINVAL);		 /* not UD */
	CHECK_ERR(ibv_attach_mcast(m.qp[0], &uni, 0), EINVAL);	 /* not a multicast GID */
	CHECK_ERR(ibv_detach_mcast(m.qp[0], &mgid, 0), EINVAL);	 /* not attached */
	CHECK_OK(ibv_attach_mcast(m.qp[0], &mgid, 0));
	CHECK_OK(ibv_attach_mcast(m.qp[0], &mgid, 0));		 /* again: nothing more to do */
	CHECK_OK(ibv_attach_mcast(m.qp[0], &mgid_v4, 0));	 /* an IPv4 class D address, mapped */
	CHECK_ERR(ibv_destroy_qp(m.qp[0]), EBUSY);		 /* still in a group */
	CHECK_OK(ibv_detach_mcast(m.qp[0], &mgid, 0));
	CHECK_ERR(ibv_detach_mcast(m.qp[0], &mgid, 0), EINVAL);
	CHECK_ERR(ibv_destroy_qp(m.qp[0]), EBUSY);
	CHECK_OK(ibv_detach_mcast(m.qp[0], &mgid_v4, 0));
	CHECK(th_undefer(vq_destroy_qp_cb, m.qp[0]));
	CHECK_OK(ibv_destroy_qp(m.qp[0]));
	CHECK_OK(ibv_query_device(m.c, &da));
	CHECK(da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 && da.max_total_mcast_qp_attach > 0);
}

/* Every attached QP gets the datagram, the others nothing; after a detach, that QP gets nothing. */
static void test_delivery_to_attached(void)
{
	struct mc m;
	struct ibv_ah *ah;

	mc_open(&m, 4, 0);
	ah = mc_ah(m.pd, &mgid, 1);
	CHECK(ah != NULL);
	CHECK_OK(mc_attach(m.qp[1]));
	CHECK_OK(mc_attach(m.qp[2]));
	for (int i = 0; i < 4; i++)
		mc_post_recv(&m, i);
	mc_send(&m, 0, ah, MC_QKEY);
	mc_got(&m, 1, 0, &mgid);
	mc_got(&m, 2, 0, &mgid);
	mc_none(&m, 3); /* not attached */
	mc_none(&m, 0); /* the sender, not attached */
	CHECK_OK(ibv_detach_mcast(m.qp[2], &mgid, 0));
	CHECK(th_undefer(mc_detach_cb, m.qp[2]));
	mc_post_recv(&m, 1);
	mem[2][40] = 0xee;
	mc_send(&m, 0, ah, MC_QKEY);
	mc_got(&m, 1, 0, &mgid);
	mc_none(&m, 2);
}

/* RoCE v2 between IPv4 addresses: an IPv4 multicast group (::ffff:239.1.2.3). */
static void test_delivery_ipv4_group(void)
{
	struct mc m;
	struct ibv_ah *ah;

	mc_open(&m, 2, 0);
	ah = mc_ah(m.pd, &mgid_v4, 3);
	CHECK(ah != NULL);
	CHECK_OK(ibv_attach_mcast(m.qp[1], &mgid_v4, 0));
	mc_post_recv(&m, 1);
	mc_send(&m, 0, ah, MC_QKEY);
	mc_got(&m, 1, 0, &mgid_v4);
	CHECK_OK(ibv_detach_mcast(m.qp[1], &mgid_v4, 0));
}

/* A member whose Q_Key differs drops the datagram, as for unicast. */
static void test_qkey_checked(void)
{
	struct mc m;
	struct ibv_ah *ah;

	mc_open(&m, 3, 0);
	ah = mc_ah(m.pd, &mgid, 1);
	CHECK(ah != NULL);
	CHECK_OK(mc_attach(m.qp[1]));
	CHECK_OK(mc_attach(m.qp[2]));
	mc_post_recv(&m, 1);
	mc_post_recv(&m, 2);
	mc_send(&m, 0, ah, 0x22222222);
	mc_none(&m, 1);
	mc_none(&m, 2);
}

/* The sender receives its own datagram when attached, unless created with BLOCK_SELF_MCAST_LB. */
static void test_self_loopback(void)
{
	struct mc m, b;
	struct ibv_ah *ah;

	mc_open(&m, 2, 0);
	ah = mc_ah(m.pd, &mgid, 1);
	CHECK(ah != NULL);
	CHECK_OK(mc_attach(m.qp[0]));
	CHECK_OK(mc_attach(m.qp[1]));
	mc_post_recv(&m, 0);
	mc_post_recv(&m, 1);
	mc_send_self(&m, ah);
	mc_got(&m, 1, 0, &mgid);

	mc_open(&b, 2, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	ah = mc_ah(b.pd, &mgid, 1);
	CHECK(ah != NULL);
	CHECK_OK(mc_attach(b.qp[0]));
	CHECK_OK(mc_attach(b.qp[1]));
	for (int i = 0; i < 2; i++) {
		CHECK_OK(ibv_detach_mcast(m.qp[i], &mgid, 0));
		CHECK(th_undefer(mc_detach_cb, m.qp[i]));
	}
	mc_post_recv(&b, 0);
	mc_post_recv(&b, 1);
	mc_send(&b, 0, ah, MC_QKEY);
	mc_none(&b, 0);
	mc_got(&b, 1, 0, &mgid);
}

/* The role: a UD QP attached to the group; prints its number, then what its receive got. */
static int role_member(void)
{
	struct mc m;
	char line[64], hex[2 * MC_SLOT + 1];
	struct ibv_wc wc;

	mc_open(&m, 1, 0);
	if (th_case_failed != 0 || mc_attach(m.qp[0]) != 0)
		return 2;
	mc_post_recv(&m, 0);
	printf("MEMBER %u\n", m.qp[0]->qp_num);
	fflush(stdout);
	if (vq_poll1(m.cq[0], &wc) != 1 || wc.status != IBV_WC_SUCCESS) {
		printf("NONE %d\n", (int)wc.status);
		return 3;
	}
	th_hex_encode(mem[0] + 40, wc.byte_len - 40, hex);
	printf("GOT %u %s\n", wc.src_qp, hex);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 4;
	th_unwind(0, 0);
	return 0;
}

/* A member in another process gets the datagram, as one of this process does. */
static void test_two_processes(void)
{
	struct mc m;
	struct ibv_ah *ah;
	struct th_proc *p;
	char hex[2 * MC_SLOT + 1];
	unsigned int qpn = 0, src = 0;
	const char *l;

	mc_open(&m, 2, 0);
	ah = mc_ah(m.pd, &mgid, 1);
	CHECK(ah != NULL);
	CHECK_OK(mc_attach(m.qp[1]));
	mc_post_recv(&m, 1);
	p = th_proc_start(NULL, "member", NULL);
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "MEMBER %u", &qpn) == 1);
	mc_send(&m, 0, ah, MC_QKEY);
	mc_got(&m, 1, 0, &mgid);
	l = th_proc_line(p);
	th_hex_encode((const uint8_t *)MC_MSG, MC_LEN, hex);
	CHECK(l != NULL && sscanf(l, "GOT %u", &src) == 1 && src == m.qp[0]->qp_num);
	CHECK(strstr(l, hex) != NULL && strlen(strchr(l + 4, ' ') + 1) == 2 * MC_LEN);
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
}

/*
 * The role on an InfiniBand port: the LID must be a multicast LID
 * (0xc000..0xfffe); an address without a GRH names the group by that LID.
 * Prints the attach results and what the member's receive got.
 */
static int role_ib(void)
{
	static const union ibv_gid ib_mgid = {.raw = {0xff, 0x12, 0x40, 0x1b, [15] = 0x77}};
	struct ibv_ah_attr aa = {.dlid = 0xc077, .port_num = 1};
	struct ibv_port_attr pa;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct mc m;

	mc_open(&m, 2, 0);
	if (th_case_failed != 0 || ibv_query_port(m.c, 1, &pa) != 0)
		return 2;
	printf("IB %d %d %d %d\n", (int)pa.link_layer, ibv_attach_mcast(m.qp[1], &ib_mgid, 0),
	       ibv_attach_mcast(m.qp[1], &ib_mgid, 0xffff), ibv_attach_mcast(m.qp[1], &ib_mgid, 0xc077));
	ah = ibv_create_ah(m.pd, &aa);
	if (ah == NULL)
		return 3;
	mc_post_recv(&m, 1);
	mc_send(&m, 0, ah, MC_QKEY);
	if (vq_poll1(m.cq[1], &wc) != 1)
		return 4;
	printf("GOT %d %u %u %d %d\n", (int)wc.status, wc.byte_len, wc.src_qp == m.qp[0]->qp_num,
	       memcmp(mem[1] + 40, MC_MSG, MC_LEN), ibv_detach_mcast(m.qp[1], &ib_mgid, 0xc077));
	fflush(stdout);
	ibv_destroy_ah(ah);
	th_unwind(0, 0);
	return 0;
}

/* On an InfiniBand port (a topology's link=ib): multicast LIDs only, and groups reached by LID. */
static void test_infiniband_port(void)
{
	static const char topo[] = "function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0"
				   " mac=02:53:44:0b:00:00 ipv4=10.0.0.1 link=ib\n";
	char path[] = "/tmp/softdpu-mcast-topoXXXXXX";
	int fd = mkstemp(path), ll = -1, a0 = -1, aperm = -1, a = -1, st = -1, same = -1, cmp = -1, det = -1;
	unsigned int len = 0;
	struct th_proc *p;
	const char *l;

	CHECK(fd >= 0 && write(fd, topo, sizeof(topo) - 1) == (ssize_t)(sizeof(topo) - 1));
	close(fd);
	setenv("SOFTDPU_TOPOLOGY", path, 1);
	p = th_proc_start(NULL, "ib", NULL);
	unsetenv("SOFTDPU_TOPOLOGY");
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "IB %d %d %d %d", &ll, &a0, &aperm, &a) == 4);
	CHECK(ll == IBV_LINK_LAYER_INFINIBAND && a0 == EINVAL && aperm == EINVAL && a == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "GOT %d %u %d %d %d", &st, &len, &same, &cmp, &det) == 5);
	CHECK(st == IBV_WC_SUCCESS && len == 40 + MC_LEN && same == 1 && cmp == 0 && det == 0);
	CHECK(th_proc_wait(p) == 0);
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "member") == 0)
		return role_member();
	if (argc == 2 && strcmp(argv[1], "ib") == 0)
		return role_ib();
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_attach_errors);
	RUN(test_delivery_to_attached);
	RUN(test_delivery_ipv4_group);
	RUN(test_qkey_checked);
	RUN(test_self_loopback);
	RUN(test_two_processes);
	RUN(test_infiniband_port);
	return th_summary("test_verbs_mcast");
}
