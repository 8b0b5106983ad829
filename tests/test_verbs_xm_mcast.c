/*
 * Datagrams between machines beyond one QP: multicast groups spanning two
 * machines, and UD between machines on InfiniBand ports.
 *
 * This process is machine 127.0.0.2, a role it starts is machine 127.0.0.3
 * (SOFTDPU_MACHINE), both told the network's machines (SOFTDPU_MACHINES),
 * talking over UCX's TCP transport on loopback.
 *
 * Multicast (RoCE, the built-in topology): a datagram to a group reaches
 * the members of both machines (payload byte for byte, the sender's QPN,
 * the network header's destination the group), not a member the other
 * machine detached, not one of another Q_Key; the other machine killed, a
 * send to the group still completes and this machine's member still gets
 * it (ibv_attach_mcast(3): every QP attached to the group receives it).
 *
 * InfiniBand ("ib": both machines' ports link=ib): a UD SEND by LID alone
 * and by GID (a GRH) to the other machine's UD QP: the payload byte for
 * byte, IBV_WC_GRH only with a GRH (ibv_poll_cq(3)), the sender's LID as
 * slid; and a multicast by LID to a member there.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_qp_fixture.h"

#define MEM_LEN (1u << 20)
#define QKEY 0x11111111u /* vq_to_init's */
#define OTHER_QKEY 0x22222222u
#define MCAST_QPN 0xffffffu
#define MLID 0xc011u
/* Machine a.b.c.d's function of id n has LID d * 128 + n + 1; the topology's first function has id 1 (docs/TOPOLOGY.md). */
#define LID_HERE (2u * 128u + 2u)  /* machine 127.0.0.2's */
#define LID_THERE (3u * 128u + 2u) /* machine 127.0.0.3's */

static uint8_t *mem;

/* A group: ff0e::5344:1 */
static const union ibv_gid group = {.raw = {0xff, 0x0e, [12] = 0x53, [13] = 0x44, [15] = 1}};

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u) >> 13 ^ seed);
}

/* ---- the other machine -------------------------------------------------------------------------------- */

struct peer {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *ud;
};

static int peer_up(struct peer *p)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	union ibv_gid g;
	char hex[40];

	p->c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
	p->pd = p->c != NULL ? ibv_alloc_pd(p->c) : NULL;
	p->cq = p->c != NULL ? ibv_create_cq(p->c, 64, NULL, NULL, 0) : NULL;
	p->mr = p->pd != NULL ? ibv_reg_mr(p->pd, mem, MEM_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (p->mr == NULL || p->cq == NULL || ibv_query_gid(p->c, 1, 0, &g) != 0 || ibv_query_port(p->c, 1, &pa) != 0)
		return -1;
	p->ud = vq_qp(p->pd, IBV_QPT_UD, p->cq, p->cq, 16);
	if (p->ud == NULL || vq_to_init(p->ud) != 0 || vq_to_rtr(p->ud, 0, 0) != 0 || vq_to_rts(p->ud, 0) != 0)
		return -1;
	th_hex_encode(g.raw, 16, hex);
	printf("PEER %u %u %s\n", p->ud->qp_num, pa.lid, hex);
	return 0;
}

/* POLL: the next completion (bounded wait); POLL0: one poll only (after the sender completed, all is there). */
static void peer_poll(struct peer *p, bool wait)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
	int n = wait ? vq_poll1(p->cq, &wc) : ibv_poll_cq(p->cq, 1, &wc);

	printf("WC %d %d %d %u %u %u %u %u %llu\n", n, (int)wc.status, (int)wc.opcode, wc.byte_len, wc.qp_num,
	       wc.src_qp, wc.wc_flags, wc.slid, (unsigned long long)wc.wr_id);
}

/* ATTACH gid lid, DETACH gid lid: the verb's return. */
static int peer_group(struct peer *p, const char *line)
{
	unsigned int lid;
	char hex[40], op[8];
	union ibv_gid g;

	if (sscanf(line, "%7s %32s %u", op, hex, &lid) != 3 || th_hex_decode(hex, g.raw, 16) != 16)
		return -1;
	printf("OK %d\n", strcmp(op, "ATTACH") == 0 ? ibv_attach_mcast(p->ud, &g, (uint16_t)lid)
						    : ibv_detach_mcast(p->ud, &g, (uint16_t)lid));
	return 0;
}

/* RECV off len, POLL, POLL0, ATTACH, DETACH, QKEY q (RTS to RTS), HEX off len, EXIT. */
static int peer_cmd(struct peer *p, const char *line)
{
	unsigned long long off, len;
	unsigned int q;

	if (sscanf(line, "RECV %llu %llu", &off, &len) == 2) {
		struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)(mem + off), .length = (uint32_t)len,
				      .lkey = p->mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = off, .sg_list = &sge, .num_sge = 1}, *bad;

		printf("OK %d\n", ibv_post_recv(p->ud, &wr, &bad));
	} else if (strncmp(line, "POLL0", 5) == 0) {
		peer_poll(p, false);
	} else if (strncmp(line, "POLL", 4) == 0) {
		peer_poll(p, true);
	} else if (strncmp(line, "ATTACH", 6) == 0 || strncmp(line, "DETACH", 6) == 0) {
		if (peer_group(p, line) != 0)
			return -1;
	} else if (sscanf(line, "QKEY %u", &q) == 1) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .qkey = q};

		printf("OK %d\n", ibv_modify_qp(p->ud, &a, IBV_QP_STATE | IBV_QP_QKEY));
	} else if (sscanf(line, "HEX %llu %llu", &off, &len) == 2 && len <= 4096) {
		char *hex = malloc(2 * len + 1);

		if (hex == NULL)
			return -1;
		th_hex_encode(mem + off, len, hex);
		printf("HEX %s\n", hex);
		free(hex);
	} else {
		return -1;
	}
	return 0;
}

static int role_peer(void)
{
	struct peer p = {0};
	char line[256];

	mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || peer_up(&p) != 0)
		return 2;
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL && strncmp(line, "EXIT", 4) != 0) {
		if (peer_cmd(&p, line) != 0)
			return 3;
		fflush(stdout);
	}
	th_undefer(vq_destroy_qp_cb, p.ud);
	ibv_destroy_qp(p.ud);
	ibv_dereg_mr(p.mr);
	ibv_destroy_cq(p.cq);
	ibv_dealloc_pd(p.pd);
	ibv_close_device(p.c);
	munmap(mem, MEM_LEN);
	return 0;
}

/* ---- this machine --------------------------------------------------------------------------------------- */

static struct {
	struct th_proc *p;
	unsigned int pqpn, plid;
	union ibv_gid pgid, gid;
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *scq; /* receives, sends */
	struct ibv_mr *mr;
} X;

static void close_cb(void *arg)
{
	ibv_close_device(arg);
}

static void dealloc_cb(void *arg)
{
	ibv_dealloc_pd(arg);
}

static void dereg_cb(void *arg)
{
	ibv_dereg_mr(arg);
}

/* The other machine's process (with topology file there_topo, NULL: the built-in one) and this device. */
static void up(const char *there_topo)
{
	struct ibv_device **l;
	const char *line, *here_topo = getenv("SOFTDPU_TOPOLOGY");
	char hex[40];

	memset(&X, 0, sizeof(X));
	setenv("SOFTDPU_MACHINE", "127.0.0.3", 1);
	if (there_topo != NULL)
		setenv("SOFTDPU_TOPOLOGY", there_topo, 1);
	X.p = th_proc_start(NULL, "peer", NULL);
	setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
	if (here_topo != NULL)
		setenv("SOFTDPU_TOPOLOGY", here_topo, 1);
	CHECK(X.p != NULL);
	line = th_proc_line(X.p);
	CHECK(line != NULL && sscanf(line, "PEER %u %u %32s", &X.pqpn, &X.plid, hex) == 3);
	CHECK(th_hex_decode(hex, X.pgid.raw, 16) == 16);
	l = ibv_get_device_list(NULL);
	X.c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
	CHECK(X.c != NULL);
	th_defer(close_cb, X.c);
	X.pd = ibv_alloc_pd(X.c);
	CHECK(X.pd != NULL);
	th_defer(dealloc_cb, X.pd);
	X.cq = vq_cq(X.c, 64);
	X.scq = vq_cq(X.c, 64);
	CHECK(X.cq != NULL && X.scq != NULL);
	X.mr = ibv_reg_mr(X.pd, mem, MEM_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(X.mr != NULL);
	th_defer(dereg_cb, X.mr);
	CHECK_OK(ibv_query_gid(X.c, 1, 0, &X.gid));
}

static void down(void)
{
	CHECK(th_proc_send(X.p, "EXIT") == 0);
	CHECK(th_proc_wait(X.p) == 0);
}

/* A command to the other machine and its answer line (NULL when none came). */
static const char *ask(const char *fmt, unsigned long long a, unsigned long long b)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return th_proc_send(X.p, "%s", cmd) == 0 ? th_proc_line(X.p) : NULL;
}

static bool ask_ok(const char *fmt, unsigned long long a, unsigned long long b)
{
	const char *l = ask(fmt, a, b);

	return l != NULL && strcmp(l, "OK 0") == 0;
}

/* ATTACH or DETACH the other machine's UD QP to gid / lid. */
static bool group_there(const char *op, const union ibv_gid *g, unsigned int lid)
{
	char hex[40];
	const char *l;

	th_hex_encode(g->raw, 16, hex);
	if (th_proc_send(X.p, "%s %s %u", op, hex, lid) != 0)
		return false;
	l = th_proc_line(X.p);
	return l != NULL && strcmp(l, "OK 0") == 0;
}

/* A receive completion there, as the role prints it. */
struct rwc {
	int n, status, opcode;
	unsigned int byte_len, qp_num, src_qp, wc_flags, slid;
	unsigned long long wr_id;
};

static bool poll_there(const char *cmd, struct rwc *w)
{
	const char *l = ask(cmd, 0, 0);

	memset(w, 0, sizeof(*w));
	return l != NULL && sscanf(l, "WC %d %d %d %u %u %u %u %u %llu", &w->n, &w->status, &w->opcode,
				   &w->byte_len, &w->qp_num, &w->src_qp, &w->wc_flags, &w->slid, &w->wr_id) == 9;
}

/* len bytes of the other machine's memory at off. */
static bool bytes_there(uint64_t off, uint32_t len, uint8_t *out)
{
	const char *l = ask("HEX %llu %llu", off, len);

	return l != NULL && strncmp(l, "HEX ", 4) == 0 && th_hex_decode(l + 4, out, len) == (int)len;
}

static struct ibv_qp *ud_here(void)
{
	struct ibv_qp *qp = vq_qp(X.pd, IBV_QPT_UD, X.scq, X.cq, 16);

	if (qp == NULL || vq_to_init(qp) != 0 || vq_to_rtr(qp, 0, 0) != 0 || vq_to_rts(qp, 0) != 0)
		return NULL;
	return qp;
}

static void detach_cb(void *arg)
{
	(void)ibv_detach_mcast(arg, &group, 0);
}

/* qp joins the group here, and leaves it when the case ends however it ends (an attached QP cannot be destroyed). */
static bool attach_here(struct ibv_qp *qp)
{
	if (ibv_attach_mcast(qp, &group, 0) != 0)
		return false;
	th_defer(detach_cb, qp);
	return true;
}

static int recv_here(struct ibv_qp *qp, uint64_t off, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)(mem + off), .length = len, .lkey = X.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = off, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* One datagram of len bytes at off from qp by the address aa to dqpn; the sender's completion status. */
static enum ibv_wc_status send_by(struct ibv_qp *qp, struct ibv_ah_attr *aa, unsigned int dqpn, uint64_t off,
				  uint32_t len)
{
	struct ibv_ah *ah = ibv_create_ah(X.pd, aa);
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)(mem + off), .length = len, .lkey = X.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = off, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.ud = {.ah = ah, .remote_qpn = dqpn, .remote_qkey = QKEY}};
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
	struct ibv_send_wr *bad;

	if (ah == NULL)
		return IBV_WC_GENERAL_ERR;
	if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(X.scq, &wc) != 1 || wc.opcode != IBV_WC_SEND ||
	    wc.wr_id != off)
		wc.status = IBV_WC_GENERAL_ERR;
	ibv_destroy_ah(ah);
	return wc.status;
}

/* A RoCE datagram to the group (GID 0 as the source: RoCE v1, an IB GRH). */
static enum ibv_wc_status send_group(struct ibv_qp *qp, uint64_t off, uint32_t len)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1, .grh = {.dgid = group, .hop_limit = 64}};

	return send_by(qp, &aa, MCAST_QPN, off, len);
}

/* This machine's next receive completion (bounded wait): that of member, len bytes of payload at off. */
static bool got_here(struct ibv_qp *member, struct ibv_qp *sender, uint64_t off, uint32_t len)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	return vq_poll1(X.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	       wc.qp_num == member->qp_num && wc.src_qp == sender->qp_num && wc.byte_len == 40 + len &&
	       wc.wc_flags == IBV_WC_GRH && wc.wr_id == off;
}

/* The other machine's receive of the datagram sent from off: payload and the network header's GIDs. */
static void check_there(struct ibv_qp *sender, uint64_t at, uint64_t off, uint32_t len, const union ibv_gid *dgid)
{
	static uint8_t got[40 + 4096];
	struct rwc w;

	CHECK(poll_there("POLL", &w));
	CHECK(w.n == 1 && w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_RECV && w.byte_len == 40 + len &&
	      w.qp_num == X.pqpn && w.src_qp == sender->qp_num && w.wc_flags == IBV_WC_GRH && w.wr_id == at);
	CHECK(bytes_there(at, 40 + len, got));
	CHECK(got[0] >> 4 == 6);			 /* an IB GRH (RoCE v1) */
	CHECK(memcmp(got + 8, X.gid.raw, 16) == 0);	 /* from this port's GID 0 */
	CHECK(memcmp(got + 24, dgid->raw, 16) == 0);	 /* to the group */
	CHECK(memcmp(got + 40, mem + off, len) == 0);
}

/*
 * A member on each machine and a sender here that is not one: each member
 * gets the datagram, byte for byte, from the sender's QPN, the header's
 * destination the group.
 */
static void test_mcast_both_machines(void)
{
	struct ibv_qp *snd, *mem_here;

	up(NULL);
	CHECK((snd = ud_here()) != NULL && (mem_here = ud_here()) != NULL);
	CHECK(attach_here(mem_here));
	CHECK(group_there("ATTACH", &group, 0));
	fill(mem, 4096, 3);
	CHECK_OK(recv_here(mem_here, 8192, 2048));
	CHECK(ask_ok("RECV %llu %llu", 8192, 2048));
	CHECK(send_group(snd, 100, 777) == IBV_WC_SUCCESS);
	CHECK(got_here(mem_here, snd, 8192, 777));
	CHECK(memcmp(mem + 8192 + 24, group.raw, 16) == 0 && memcmp(mem + 8192 + 40, mem + 100, 777) == 0);
	check_there(snd, 8192, 100, 777, &group);
	CHECK(group_there("DETACH", &group, 0));
	down();
}

/* The other machine's member detaches, or has another Q_Key: it gets nothing; the member here does. */
static void test_mcast_detached_and_qkey(void)
{
	struct ibv_qp *snd, *mem_here;
	struct rwc w;

	up(NULL);
	CHECK((snd = ud_here()) != NULL && (mem_here = ud_here()) != NULL);
	CHECK(attach_here(mem_here));
	CHECK(group_there("ATTACH", &group, 0));
	CHECK(group_there("DETACH", &group, 0));
	fill(mem, 4096, 9);
	CHECK_OK(recv_here(mem_here, 8192, 2048));
	CHECK(ask_ok("RECV %llu %llu", 8192, 2048));
	CHECK(send_group(snd, 0, 64) == IBV_WC_SUCCESS);
	CHECK(got_here(mem_here, snd, 8192, 64));
	CHECK(poll_there("POLL0", &w) && w.n == 0);
	/* Attached again, with another Q_Key: dropped there. */
	CHECK(group_there("ATTACH", &group, 0));
	CHECK(ask_ok("QKEY %llu", OTHER_QKEY, 0));
	CHECK_OK(recv_here(mem_here, 8192, 2048));
	CHECK(send_group(snd, 0, 64) == IBV_WC_SUCCESS);
	CHECK(got_here(mem_here, snd, 8192, 64));
	CHECK(poll_there("POLL0", &w) && w.n == 0);
	/* Its Q_Key back: the receive posted all along takes the next one. */
	CHECK(ask_ok("QKEY %llu", QKEY, 0));
	CHECK_OK(recv_here(mem_here, 8192, 2048));
	CHECK(send_group(snd, 200, 64) == IBV_WC_SUCCESS);
	CHECK(got_here(mem_here, snd, 8192, 64));
	check_there(snd, 8192, 200, 64, &group);
	down();
}

/* The other machine dies with a member attached: sends to the group complete, the member here gets them. */
static void test_mcast_machine_gone(void)
{
	struct ibv_qp *snd, *mem_here;

	up(NULL);
	CHECK((snd = ud_here()) != NULL && (mem_here = ud_here()) != NULL);
	CHECK(attach_here(mem_here));
	CHECK(group_there("ATTACH", &group, 0));
	/* Both members get one first. */
	fill(mem, 4096, 13);
	CHECK_OK(recv_here(mem_here, 8192, 2048));
	CHECK(ask_ok("RECV %llu %llu", 8192, 2048));
	CHECK(send_group(snd, 300, 80) == IBV_WC_SUCCESS);
	CHECK(got_here(mem_here, snd, 8192, 80));
	check_there(snd, 8192, 300, 80, &group);
	th_proc_kill(X.p);
	CHECK(th_proc_wait(X.p) != 0);
	for (uint64_t i = 0; i < 3; i++) {
		CHECK_OK(recv_here(mem_here, 8192, 2048));
		CHECK(send_group(snd, 64 * i, 50) == IBV_WC_SUCCESS);
		CHECK(got_here(mem_here, snd, 8192, 50));
		CHECK(memcmp(mem + 8192 + 40, mem + 64 * i, 50) == 0);
	}
}

/* ---- InfiniBand ports ---------------------------------------------------------------------------------- */

/*
 * By LID alone: the receive there has no GRH flag, slid this port's LID;
 * by the other port's GID: IBV_WC_GRH and the IB GRH (source this port's
 * GID 0, destination that one). The LIDs are the machines' (docs/TOPOLOGY.md).
 */
static void test_ib_ud_between_machines(void)
{
	struct ibv_ah_attr by_lid = {.dlid = LID_THERE, .port_num = 1};
	struct ibv_ah_attr by_gid = {.dlid = LID_THERE, .is_global = 1, .port_num = 1};
	struct ibv_port_attr pa;
	uint8_t got[40 + 3000];
	struct ibv_qp *snd;
	struct rwc w;

	up(getenv("XM_TOPO_THERE"));
	CHECK_OK(ibv_query_port(X.c, 1, &pa));
	CHECK(pa.link_layer == IBV_LINK_LAYER_INFINIBAND && pa.lid == LID_HERE && X.plid == LID_THERE);
	CHECK((snd = ud_here()) != NULL);
	fill(mem, 8192, 21);
	CHECK(ask_ok("RECV %llu %llu", 16384, 4096));
	CHECK(send_by(snd, &by_lid, X.pqpn, 0, 3000) == IBV_WC_SUCCESS);
	CHECK(poll_there("POLL", &w));
	CHECK(w.n == 1 && w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_RECV && w.byte_len == 3040 &&
	      w.qp_num == X.pqpn && w.src_qp == snd->qp_num && w.wc_flags == 0 && w.slid == LID_HERE &&
	      w.wr_id == 16384);
	CHECK(bytes_there(16384 + 40, 3000, got));
	CHECK(memcmp(got, mem, 3000) == 0);
	by_gid.grh = (struct ibv_global_route){.dgid = X.pgid, .sgid_index = 0, .hop_limit = 64};
	CHECK(ask_ok("RECV %llu %llu", 32768, 4096));
	CHECK(send_by(snd, &by_gid, X.pqpn, 4000, 100) == IBV_WC_SUCCESS);
	CHECK(poll_there("POLL", &w));
	CHECK(w.n == 1 && w.status == IBV_WC_SUCCESS && w.byte_len == 140 && w.qp_num == X.pqpn &&
	      w.src_qp == snd->qp_num && w.wc_flags == IBV_WC_GRH && w.slid == LID_HERE && w.wr_id == 32768);
	CHECK(bytes_there(32768, 140, got));
	CHECK(got[0] >> 4 == 6 && memcmp(got + 8, X.gid.raw, 16) == 0 && memcmp(got + 24, X.pgid.raw, 16) == 0);
	CHECK(memcmp(got + 40, mem + 4000, 100) == 0);
	/* A LID neither machine has: nobody gets it, the sender completes. */
	by_lid.dlid = 5u * 128u + 2u;
	CHECK(send_by(snd, &by_lid, X.pqpn, 0, 10) == IBV_WC_SUCCESS);
	CHECK(poll_there("POLL0", &w) && w.n == 0);
	down();
}

/* A multicast LID without a GRH: the member on the other machine gets it, without the GRH flag. */
static void test_ib_mcast_by_lid(void)
{
	struct ibv_ah_attr aa = {.dlid = MLID, .port_num = 1};
	uint8_t got[200];
	struct ibv_qp *snd;
	struct rwc w;

	up(getenv("XM_TOPO_THERE"));
	CHECK((snd = ud_here()) != NULL);
	CHECK(group_there("ATTACH", &group, MLID));
	fill(mem, 4096, 33);
	CHECK(ask_ok("RECV %llu %llu", 16384, 4096));
	CHECK(send_by(snd, &aa, MCAST_QPN, 500, 200) == IBV_WC_SUCCESS);
	CHECK(poll_there("POLL", &w));
	CHECK(w.n == 1 && w.status == IBV_WC_SUCCESS && w.byte_len == 240 && w.qp_num == X.pqpn &&
	      w.src_qp == snd->qp_num && w.wc_flags == 0 && w.slid == LID_HERE && w.wr_id == 16384);
	CHECK(bytes_there(16384 + 40, 200, got));
	CHECK(memcmp(got, mem + 500, 200) == 0);
	CHECK(group_there("DETACH", &group, MLID));
	down();
}

/* Each machine's topology file: one host PF on InfiniBand. 0 or -1. */
static int write_topo(char *path, const char *mac)
{
	char topo[256];
	int fd = mkstemp(path), n;

	n = snprintf(topo, sizeof(topo),
		     "function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0 mac=%s link=ib\n", mac);
	if (fd < 0)
		return -1;
	if (write(fd, topo, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int run_ib(void)
{
	char here[] = "/tmp/softdpu-xmib-aXXXXXX", there[] = "/tmp/softdpu-xmib-bXXXXXX";

	if (write_topo(here, "02:53:44:0b:00:02") != 0 || write_topo(there, "02:53:44:0b:00:03") != 0)
		return 1;
	setenv("SOFTDPU_TOPOLOGY", here, 1);
	setenv("XM_TOPO_THERE", there, 1);
	RUN(test_ib_ud_between_machines);
	RUN(test_ib_mcast_by_lid);
	unlink(here);
	unlink(there);
	return th_summary("test_verbs_xm_ib");
}

int main(int argc, char **argv)
{
	int rc;

	setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", "lo", 1);
	/* UCX logs to stdout by default, which is the peer role's answer channel. */
	setenv("UCX_LOG_FILE", "/dev/stderr", 0);
	setenv("SOFTDPU_FABRIC_TIMEOUT_MS", "10000", 1);
	setenv("SOFTDPU_MACHINES", "127.0.0.2,127.0.0.3", 1);
	unsetenv("SOFTDPU_SIDE");
	if (argc == 2 && strcmp(argv[1], "peer") == 0)
		return role_peer();
	setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
	mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	if (argc == 2 && strcmp(argv[1], "ib") == 0) {
		rc = run_ib();
		munmap(mem, MEM_LEN);
		return rc;
	}
	unsetenv("SOFTDPU_TOPOLOGY");
	RUN(test_mcast_both_machines);
	RUN(test_mcast_detached_and_qkey);
	RUN(test_mcast_machine_gone);
	munmap(mem, MEM_LEN);
	return th_summary("test_verbs_xm_mcast");
}
