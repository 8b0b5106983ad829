/*
 * Tag matching with the sender in another process, as MPI and UCX use it:
 * from ibv_create_srq_ex(3) (IBV_SRQT_TM), ibv_post_srq_ops(3),
 * ibv_wc_read_tm_info and rdma-core's tm_types.h (struct ibv_tmh, struct
 * ibv_rvh). The TM SRQ is this process's; the sender is a child process
 * with its own context, domain, memory and QP, connected by QP number. An
 * EAGER message matches the posted tag (its data after the TMH in the
 * tag's buffer); an unexpected one takes an ordinary receive and moves the
 * phase, so the next tagged one matches nothing until the sync; a NO_TAG
 * one is an ordinary receive with IBV_WC_TM_NO_TAG; a rendezvous reads the
 * child's memory into the tag's buffer and the child gets the FIN.
 * Run as "machines" (test_verbs_tm_xm), the child is another machine
 * (SOFTDPU_MACHINE) reached over UCX's TCP transport, and the same cases run.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define XP_LEN 8192
#define XP_ORD_WRID 0x0d0d

#define XP_NEED(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			TH_FAIL("%s", #cond);                                                      \
			th_stop();                                                                 \
		}                                                                                  \
	} while (0)

/* The parent: [0] tagged buffers, [1] ordinary receives. The child: [2] its message, [3] its FIN receive. */
static uint8_t xp_mem[4][XP_LEN] __attribute__((aligned(4096)));

/* The sender is another machine (SOFTDPU_MACHINE 127.0.0.3, this one 127.0.0.2), over UCX. */
static bool xp_machines;

struct xp_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr[2];
	struct th_proc *p;
};

struct xp_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	struct ibv_wc_tm_info ti;
};

/* ---- the child: a plain RC sender in its own process ---- */

struct xp_kid {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr[2];
};

/* A TMH (op, ctx, tag) and len bytes of fill after it (after the RVH for RNDV); the SEND's length. */
static uint32_t kid_msg(uint8_t op, uint32_t ctx, uint64_t tag, uint32_t len, uint8_t fill, uint32_t rkey)
{
	struct ibv_tmh *h = (struct ibv_tmh *)xp_mem[2];
	struct ibv_rvh *r = (struct ibv_rvh *)(xp_mem[2] + sizeof(*h));
	uint32_t at = op == IBV_TMH_RNDV ? 64 : (uint32_t)sizeof(*h);

	memset(xp_mem[2], 0, 64);
	h->opcode = op;
	h->app_ctx = htobe32(ctx);
	h->tag = htobe64(tag);
	for (uint32_t i = 0; i < len; i++)
		xp_mem[2][at + i] = (uint8_t)(fill + i);
	if (op != IBV_TMH_RNDV)
		return at + len;
	r->va = htobe64((uintptr_t)xp_mem[2] + 64);
	r->rkey = htobe32(rkey);
	r->len = htobe32(len);
	return 64; /* the headers only: the data is read from here */
}

static int kid_send(struct xp_kid *k, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)xp_mem[2], .length = len, .lkey = k->mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(k->qp, &wr, &bad) != 0 || vq_poll1(k->cq, &wc) != 1 || wc.wr_id != 77 ||
	    wc.opcode != IBV_WC_SEND)
		return -1;
	return (int)wc.status;
}

/* One command: "SEND op ctx tag len fill", "FINRECV", "POLLFIN", "BYE". */
static int kid_cmd(struct xp_kid *k, const char *line)
{
	unsigned int op, ctx, len, fill;
	unsigned long long tag;
	struct ibv_wc wc;

	if (sscanf(line, "SEND %u %u %llx %u %u", &op, &ctx, &tag, &len, &fill) == 5) {
		printf("SENT %d\n", kid_send(k, kid_msg((uint8_t)op, ctx, tag, len, (uint8_t)fill, k->mr[0]->rkey)));
	} else if (strncmp(line, "FINRECV", 7) == 0) {
		struct ibv_sge s = { .addr = (uintptr_t)xp_mem[3], .length = 64, .lkey = k->mr[1]->lkey };
		struct ibv_recv_wr wr = { .wr_id = 99, .sg_list = &s, .num_sge = 1 }, *bad;

		memset(xp_mem[3], 0xee, 64);
		printf("POSTED %d\n", ibv_post_recv(k->qp, &wr, &bad));
	} else if (strncmp(line, "POLLFIN", 7) == 0) {
		struct ibv_tmh *h = (struct ibv_tmh *)xp_mem[3];

		if (vq_poll1(k->cq, &wc) != 1)
			printf("FIN none\n");
		else
			printf("FIN %d %d %llu %u %u %u %llx\n", (int)wc.status, (int)wc.opcode,
			       (unsigned long long)wc.wr_id, wc.byte_len, h->opcode, be32toh(h->app_ctx),
			       (unsigned long long)be64toh(h->tag));
	} else {
		return 1;
	}
	fflush(stdout);
	return 0;
}

static int role_sender(void)
{
	struct xp_kid k = { 0 };
	char line[128], hex[40] = "-";
	unsigned int qpn;
	union ibv_gid g;

	k.c = vf_open();
	k.pd = k.c != NULL ? vf_pd(k.c) : NULL;
	k.cq = k.c != NULL ? vq_cq(k.c, 16) : NULL;
	if (k.pd == NULL || k.cq == NULL)
		return 2;
	for (int i = 0; i < 2; i++)
		k.mr[i] = vq_mr(k.pd, xp_mem[2 + i], XP_LEN, VQ_ACCESS_ALL);
	k.qp = vq_qp(k.pd, IBV_QPT_RC, k.cq, k.cq, 16);
	if (k.mr[0] == NULL || k.mr[1] == NULL || k.qp == NULL)
		return 3;
	if (xp_machines && ibv_query_gid(k.c, 1, 0, &g) == 0)
		th_hex_encode(g.raw, 16, hex);
	printf("PEER %u %s\n", k.qp->qp_num, hex);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "CONNECT %u %39s", &qpn, hex) != 2)
		return 4;
	if (!xp_machines)
		printf("OK %d\n", vq_up(k.qp, qpn, 0, 0));
	else if (th_hex_decode(hex, g.raw, 16) == 16)
		printf("OK %d\n", vq_up_grh(k.qp, qpn, &g, 0));
	else
		return 5;
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL)
		if (kid_cmd(&k, line) != 0)
			break;
	th_unwind(0, 1); /* outside a case: its objects, before exit */
	return 0;
}

/* ---- the parent: the TM SRQ's owner ---- */

static struct ibv_srq *xp_srq(struct xp_env *e)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = e->pd,
		.cq = ibv_cq_ex_to_cq(e->cq),
		.tm_cap = { .max_num_tags = 16, .max_ops = 16 },
	};
	struct ibv_srq *srq = ibv_create_srq_ex(e->c, &a);

	if (srq != NULL)
		th_defer(vq_destroy_srq_cb, srq);
	return srq;
}

static void xp_open(struct xp_env *e)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO };
	unsigned int qpn = 0;
	char hex[40] = "-";
	union ibv_gid g;
	const char *l;

	memset(e, 0, sizeof(*e));
	memset(xp_mem, 0, sizeof(xp_mem));
	e->c = vf_open();
	XP_NEED(e->c != NULL);
	e->pd = vf_pd(e->c);
	e->cq = ibv_create_cq_ex(e->c, &ca);
	XP_NEED(e->pd != NULL && e->cq != NULL);
	th_defer(vq_destroy_cq_cb, ibv_cq_ex_to_cq(e->cq));
	e->srq = xp_srq(e);
	XP_NEED(e->srq != NULL);
	for (int i = 0; i < 2; i++) {
		e->mr[i] = vq_mr(e->pd, xp_mem[i], XP_LEN, VQ_ACCESS_ALL);
		XP_NEED(e->mr[i] != NULL);
	}
	e->qp = vq_qp_srq(e->pd, IBV_QPT_RC, ibv_cq_ex_to_cq(e->cq), ibv_cq_ex_to_cq(e->cq), e->srq, 16);
	XP_NEED(e->qp != NULL);
	if (xp_machines)
		setenv("SOFTDPU_MACHINE", "127.0.0.3", 1);
	e->p = th_proc_start(NULL, xp_machines ? "msender" : "sender", NULL);
	if (xp_machines)
		setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
	XP_NEED(e->p != NULL);
	l = th_proc_line(e->p);
	XP_NEED(l != NULL && sscanf(l, "PEER %u %39s", &qpn, hex) == 2);
	if (xp_machines) {
		XP_NEED(th_hex_decode(hex, g.raw, 16) == 16 && vq_up_grh(e->qp, qpn, &g, 0) == 0);
		XP_NEED(ibv_query_gid(e->c, 1, 0, &g) == 0);
		th_hex_encode(g.raw, 16, hex);
	} else {
		XP_NEED(vq_up(e->qp, qpn, 0, 0) == 0);
	}
	XP_NEED(th_proc_send(e->p, "CONNECT %u %s", e->qp->qp_num, hex) == 0);
	l = th_proc_line(e->p);
	XP_NEED(l != NULL && strcmp(l, "OK 0") == 0);
}

static void xp_close(struct xp_env *e)
{
	CHECK(th_proc_send(e->p, "BYE") == 0);
	CHECK(th_proc_wait(e->p) == 0);
}

static bool xp_poll(struct xp_env *e, struct xp_wc *w)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int rc = ENOENT;

	for (long i = 0; i < VQ_POLL_TRIES && rc == ENOENT; i++)
		rc = ibv_start_poll(e->cq, &pa);
	if (rc != 0)
		return false;
	w->wr_id = e->cq->wr_id;
	w->status = e->cq->status;
	w->opcode = ibv_wc_read_opcode(e->cq);
	w->flags = ibv_wc_read_wc_flags(e->cq);
	w->byte_len = ibv_wc_read_byte_len(e->cq);
	ibv_wc_read_tm_info(e->cq, &w->ti);
	ibv_end_poll(e->cq);
	return true;
}

static void xp_ops(struct xp_env *e, struct ibv_ops_wr *wr, enum ibv_wc_opcode want)
{
	struct ibv_ops_wr *bad = NULL;
	struct xp_wc w;

	XP_NEED(ibv_post_srq_ops(e->srq, wr, &bad) == 0);
	XP_NEED(xp_poll(e, &w));
	XP_NEED(w.status == IBV_WC_SUCCESS && w.opcode == want && w.wr_id == wr->wr_id);
}

static void xp_add(struct xp_env *e, uint64_t tag, uint32_t off, uint32_t len, uint64_t recv_wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)xp_mem[0] + off, .length = len, .lkey = e->mr[0]->lkey };
	struct ibv_ops_wr wr = { .wr_id = 0x1000 + recv_wr_id, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED };

	wr.tm.add.recv_wr_id = recv_wr_id;
	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = ~0ull;
	xp_ops(e, &wr, IBV_WC_TM_ADD);
}

static void xp_ordinary(struct xp_env *e)
{
	struct ibv_sge sge = { .addr = (uintptr_t)xp_mem[1], .length = XP_LEN, .lkey = e->mr[1]->lkey };
	struct ibv_recv_wr wr = { .wr_id = XP_ORD_WRID, .sg_list = &sge, .num_sge = 1 }, *bad;

	XP_NEED(ibv_post_srq_recv(e->srq, &wr, &bad) == 0);
}

/* The child SENDs; its completion's status. */
static int xp_send(struct xp_env *e, uint8_t op, uint32_t ctx, uint64_t tag, uint32_t len, uint8_t fill)
{
	const char *l;
	int st = -100;

	XP_NEED(th_proc_send(e->p, "SEND %u %u %llx %u %u", op, ctx, (unsigned long long)tag, len, fill) == 0);
	l = th_proc_line(e->p);
	XP_NEED(l != NULL && sscanf(l, "SENT %d", &st) == 1);
	return st;
}

static bool xp_filled(const uint8_t *p, uint32_t len, uint8_t fill)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(fill + i))
			return false;
	return true;
}

/* EAGER: the data after the TMH lands in the tag's buffer, one CQE with the TMH's tag and context. */
static void test_xp_eager(void)
{
	struct xp_env e;
	struct xp_wc w;

	xp_open(&e);
	xp_add(&e, 0x77, 0, 4096, 7);
	CHECK(xp_send(&e, IBV_TMH_EAGER, 0xabcd, 0x77, 3000, 0x31) == IBV_WC_SUCCESS);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == 7);
	CHECK(w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) && w.byte_len == 3000);
	CHECK(w.ti.tag == 0x77 && w.ti.priv == 0xabcd);
	CHECK(xp_filled(xp_mem[0], 3000, 0x31));
	CHECK(xp_mem[0][3000] == 0);
	xp_close(&e);
}

/*
 * Unexpected: no tag listed, the message (TMH and all) takes the ordinary
 * receive; then a listed tag matches nothing until the program syncs with
 * the count of unexpected messages it handled; NO_TAG is an ordinary receive too.
 */
static void test_xp_unexpected_and_sync(void)
{
	struct ibv_ops_wr sync = { .wr_id = 27, .opcode = IBV_WR_TAG_SYNC, .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC };
	struct xp_env e;
	struct xp_wc w;

	xp_open(&e);
	xp_ordinary(&e);
	xp_ordinary(&e);
	xp_ordinary(&e);
	CHECK(xp_send(&e, IBV_TMH_EAGER, 5, 0x50, 100, 0x40) == IBV_WC_SUCCESS);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == XP_ORD_WRID);
	CHECK(w.flags == 0 && w.byte_len == 116);
	CHECK(xp_mem[1][0] == IBV_TMH_EAGER && be64toh(((struct ibv_tmh *)xp_mem[1])->tag) == 0x50);
	CHECK(xp_filled(xp_mem[1] + 16, 100, 0x40));
	/* the device counted one unexpected message: a tag listed before the sync does not match */
	xp_add(&e, 0x51, 0, 4096, 51);
	CHECK(xp_send(&e, IBV_TMH_EAGER, 6, 0x51, 10, 0x50) == IBV_WC_SUCCESS);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.wr_id == XP_ORD_WRID && w.flags == 0 && w.byte_len == 26);
	sync.tm.unexpected_cnt = 2;
	xp_ops(&e, &sync, IBV_WC_TM_SYNC);
	CHECK(xp_send(&e, IBV_TMH_EAGER, 7, 0x51, 10, 0x60) == IBV_WC_SUCCESS);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.wr_id == 51 && w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID));
	CHECK(w.byte_len == 10 && w.ti.tag == 0x51 && w.ti.priv == 7 && xp_filled(xp_mem[0], 10, 0x60));
	CHECK(xp_send(&e, IBV_TMH_NO_TAG, 0, 0, 20, 0x70) == IBV_WC_SUCCESS);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_NO_TAG && w.wr_id == XP_ORD_WRID);
	CHECK(w.byte_len == 36 && xp_filled(xp_mem[1] + 16, 20, 0x70));
	xp_close(&e);
}

/* Rendezvous: the RVH's range is read from the child's memory; the child's receive gets the FIN. */
static void test_xp_rndv(void)
{
	unsigned int op = 0, ctx = 0, len = 0;
	unsigned long long wrid = 0, tag = 0;
	int st = -1, opc = -1;
	struct xp_env e;
	struct xp_wc w;
	const char *l;

	xp_open(&e);
	XP_NEED(th_proc_send(e.p, "FINRECV") == 0);
	l = th_proc_line(e.p);
	XP_NEED(l != NULL && strcmp(l, "POSTED 0") == 0);
	xp_add(&e, 0x99, 0, XP_LEN, 9);
	CHECK(xp_send(&e, IBV_TMH_RNDV, 0x2222, 0x99, 6000, 0x13) == IBV_WC_SUCCESS);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == 9);
	CHECK(w.flags == IBV_WC_TM_MATCH && w.ti.tag == 0x99 && w.ti.priv == 0x2222);
	CHECK(xp_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == 9);
	CHECK(w.flags == IBV_WC_TM_DATA_VALID && w.byte_len == 6000);
	CHECK(xp_filled(xp_mem[0], 6000, 0x13));
	XP_NEED(th_proc_send(e.p, "POLLFIN") == 0);
	l = th_proc_line(e.p);
	CHECK(l != NULL && sscanf(l, "FIN %d %d %llu %u %u %u %llx", &st, &opc, &wrid, &len, &op, &ctx, &tag) == 7);
	CHECK(st == IBV_WC_SUCCESS && opc == IBV_WC_RECV && wrid == 99 && len == 16);
	CHECK(op == IBV_TMH_FIN && ctx == 0x2222 && tag == 0x99);
	xp_close(&e);
}

int main(int argc, char **argv)
{
	xp_machines = argc == 2 && (strcmp(argv[1], "machines") == 0 || strcmp(argv[1], "msender") == 0);
	if (xp_machines) {
		setenv("UCX_TLS", "tcp", 1);
		setenv("UCX_NET_DEVICES", "lo", 1);
		/* UCX logs to stdout by default, which is the peer role's answer channel. */
		setenv("UCX_LOG_FILE", "/dev/stderr", 0);
		setenv("SOFTDPU_FABRIC_TIMEOUT_MS", "10000", 1);
	}
	if (argc == 2 && (strcmp(argv[1], "sender") == 0 || strcmp(argv[1], "msender") == 0))
		return role_sender();
	if (xp_machines) {
		setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
		RUN(test_xp_eager);
		RUN(test_xp_unexpected_and_sync);
		RUN(test_xp_rndv);
		return th_summary("test_verbs_tm_xm");
	}
	RUN(test_xp_eager);
	RUN(test_xp_unexpected_and_sync);
	RUN(test_xp_rndv);
	return th_summary("test_verbs_tm_xp");
}
