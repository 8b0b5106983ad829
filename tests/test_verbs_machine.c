/*
 * Machines (SOFTDPU_MACHINE): a process standing for another machine has
 * its own device-wide tables and addresses of its own, which its port GIDs
 * carry (docs/TOPOLOGY.md: the MAC 06:a:b:c:d:<n> under the link-local GID,
 * ::ffff:<machine address>); traffic addressed to another machine's GID
 * never reaches a QP of this machine that happens to have the same number:
 * an RC QP aimed at a machine nobody stands for ends in retries exceeded, a
 * UD datagram is dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_qp_fixture.h"

#define MC_LEN 4096

static uint8_t mc_mem[2][MC_LEN];

static void mc_close_cb(void *arg)
{
	ibv_close_device(arg);
}

static void mc_dealloc_cb(void *arg)
{
	ibv_dealloc_pd(arg);
}

struct mc_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr[2];
	union ibv_gid gid;
};

static void mc_up(struct mc_env *e)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	e->c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
	CHECK(e->c != NULL);
	th_defer(mc_close_cb, e->c);
	e->pd = ibv_alloc_pd(e->c);
	CHECK(e->pd != NULL);
	th_defer(mc_dealloc_cb, e->pd);
	e->cq = vq_cq(e->c, 32);
	CHECK(e->cq != NULL);
	memset(mc_mem, 0, sizeof(mc_mem));
	e->mr[0] = vq_mr(e->pd, mc_mem[0], MC_LEN, VQ_ACCESS_ALL);
	e->mr[1] = vq_mr(e->pd, mc_mem[1], MC_LEN, VQ_ACCESS_ALL);
	CHECK(e->mr[0] != NULL && e->mr[1] != NULL);
	CHECK_OK(ibv_query_gid(e->c, 1, 0, &e->gid));
}


static enum ibv_wc_status mc_write(struct mc_env *e, struct ibv_qp *qp, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)mc_mem[0], .length = len, .lkey = e->mr[0]->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = (uint64_t)(uintptr_t)mc_mem[1], .rkey = e->mr[1]->rkey}};
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(e->cq, &wc) != 1)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

/* A GID of another machine (its IPv4-mapped address) is not a port here: the QP with that number is not reached. */
static void test_other_subnet_not_reached(void)
{
	struct mc_env e;
	struct ibv_qp *q0, *q1;
	union ibv_gid far;

	mc_up(&e);
	q0 = vq_qp(e.pd, IBV_QPT_RC, e.cq, e.cq, 8);
	q1 = vq_qp(e.pd, IBV_QPT_RC, e.cq, e.cq, 8);
	CHECK(q0 != NULL && q1 != NULL);
	memset(&far, 0, sizeof(far));
	far.raw[10] = 0xff, far.raw[11] = 0xff;
	far.raw[12] = 127, far.raw[13] = 0, far.raw[14] = 0, far.raw[15] = 9;
	CHECK_OK(vq_up_grh(q0, q1->qp_num, &far, 1));
	CHECK_OK(vq_up_grh(q1, q0->qp_num, &e.gid, 1));
	/* This machine's own GID connects... */
	memset(mc_mem[0], 0xab, MC_LEN);
	CHECK(mc_write(&e, q1, 64) == IBV_WC_SUCCESS);
	CHECK(mc_mem[1][0] == 0xab && mc_mem[1][63] == 0xab && mc_mem[1][64] == 0);
	/* ...another machine's does not reach q1, whose number it names. */
	memset(mc_mem[0], 0xcd, MC_LEN);
	CHECK(mc_write(&e, q0, 64) == IBV_WC_RETRY_EXC_ERR);
	CHECK(mc_mem[1][0] == 0xab && mc_mem[1][63] == 0xab);
}

/* The role: prints its port GID and a QP number, then tries to reach the QP number it is given. */
static int role_machine(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 8, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = pd != NULL ? ibv_reg_mr(pd, mc_mem[0], MC_LEN, VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *qp = cq != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 8) : NULL;
	int rc;
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)mc_mem[0], .length = 8};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
	unsigned int qpn, rkey;
	unsigned long long addr;
	union ibv_gid gid, gid2;
	char hex[40], hex2[40], line[128];

	if (qp == NULL || mr == NULL || ibv_query_gid(c, 1, 0, &gid) != 0 || ibv_query_gid(c, 1, 2, &gid2) != 0)
		return 2;
	th_hex_encode(gid.raw, 16, hex);
	th_hex_encode(gid2.raw, 16, hex2);
	printf("GID %s %s %u\n", hex, hex2, qp->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "TARGET %u %u %llu", &qpn, &rkey, &addr) != 3)
		return 3;
	/* Its own port's GID: the number is looked up on this machine, where it is not the parent's QP. */
	if (vq_up_grh(qp, qpn, &gid, 1) != 0)
		return 4;
	sge.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad) != 0)
		return 5;
	for (long i = 0; i < VQ_POLL_TRIES && ibv_poll_cq(cq, 1, &wc) == 0; i++)
		;
	printf("STATUS %d\n", (int)wc.status);
	fflush(stdout);
	rc = fgets(line, sizeof(line), stdin) == NULL ? 6 : 0;
	th_undefer(vq_destroy_qp_cb, qp);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return rc;
}

/* A process of machine 127.0.0.2: its own addresses, its own numbers. */
static void test_machine_identity_and_tables(void)
{
	struct mc_env e;
	struct th_proc *p;
	struct ibv_qp *q;
	unsigned int qpn = 0;
	uint8_t gid[16], gid2[16];
	static const uint8_t ll[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x04, 127, 0, 0xff, 0xfe, 0, 2, 0};
	static const uint8_t v4[16] = {[10] = 0xff, [11] = 0xff, [12] = 127, [13] = 0, [14] = 0, [15] = 2};
	char hex[40], hex2[40];
	const char *l;
	int status = -1;

	mc_up(&e);
	q = vq_qp(e.pd, IBV_QPT_RC, e.cq, e.cq, 8);
	CHECK(q != NULL);
	CHECK(e.gid.raw[0] == 0xfe && e.gid.raw[1] == 0x80); /* this process: the host's one machine */
	setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
	p = th_proc_start(NULL, "machine", NULL);
	unsetenv("SOFTDPU_MACHINE");
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "GID %32s %32s %u", hex, hex2, &qpn) == 3);
	CHECK(th_hex_decode(hex, gid, sizeof(gid)) == 16 && th_hex_decode(hex2, gid2, sizeof(gid2)) == 16);
	/* Link-local of the MAC 06:7f:00:00:02:00 (the machine's, function 0), then its address IPv4-mapped. */
	CHECK(memcmp(gid, ll, 16) == 0);
	CHECK(memcmp(gid2, v4, 16) == 0);
	CHECK(memcmp(gid, e.gid.raw, 16) != 0);
	CHECK(th_proc_send(p, "TARGET %u %u %llu", q->qp_num, e.mr[1]->rkey,
			   (unsigned long long)(uintptr_t)mc_mem[1]) == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "STATUS %d", &status) == 1);
	CHECK(status == IBV_WC_RETRY_EXC_ERR);
	CHECK(mc_mem[1][0] == 0);
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
}

/* A UD datagram to another machine's GID is dropped, even where a UD QP of that number exists here. */
static void test_ud_other_subnet_dropped(void)
{
	struct mc_env e;
	struct ibv_qp *s, *r;
	struct ibv_ah *ah;
	union ibv_gid far;
	struct ibv_wc wc;
	struct ibv_sge rs = {.addr = (uint64_t)(uintptr_t)mc_mem[1], .length = 256};
	struct ibv_recv_wr rw = {.sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uint64_t)(uintptr_t)mc_mem[0], .length = 16};
	struct ibv_send_wr sw = {.sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	int got = 0;

	mc_up(&e);
	s = vq_qp(e.pd, IBV_QPT_UD, e.cq, e.cq, 8);
	r = vq_qp(e.pd, IBV_QPT_UD, e.cq, e.cq, 8);
	CHECK(s != NULL && r != NULL);
	CHECK_OK(vq_up(s, 0, 0, 0));
	CHECK_OK(vq_up(r, 0, 0, 0));
	rs.lkey = e.mr[1]->lkey;
	ss.lkey = e.mr[0]->lkey;
	CHECK_OK(ibv_post_recv(r, &rw, &rbad));
	memset(&far, 0, sizeof(far));
	far.raw[10] = 0xff, far.raw[11] = 0xff;
	far.raw[12] = 10, far.raw[13] = 1, far.raw[14] = 2, far.raw[15] = 3;
	{
		struct ibv_ah_attr aa = {.is_global = 1, .grh = {.dgid = far, .hop_limit = 1}, .port_num = 1};

		ah = ibv_create_ah(e.pd, &aa);
		CHECK(ah != NULL);
		th_defer(vq_destroy_ah_cb, ah);
	}
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = r->qp_num;
	sw.wr.ud.remote_qkey = 0x11111111;
	CHECK_OK(ibv_post_send(s, &sw, &sbad));
	CHECK(vq_poll1(e.cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.qp_num == s->qp_num); /* the datagram left */
	for (int i = 0; i < 1000; i++)
		got += ibv_poll_cq(e.cq, 1, &wc);
	CHECK(got == 0); /* and nothing arrived here */
}

int main(int argc, char **argv)
{
	struct ibv_device **l;

	if (argc == 2 && strcmp(argv[1], "machine") == 0)
		return role_machine();
	/* This process's machine is fixed at first use, before a case sets SOFTDPU_MACHINE for a role. */
	unsetenv("SOFTDPU_MACHINE");
	l = ibv_get_device_list(NULL);
	if (l != NULL && l[0] != NULL) {
		struct ibv_context *c = ibv_open_device(l[0]);
		union ibv_gid g;

		if (c != NULL) {
			(void)ibv_query_gid(c, 1, 0, &g);
			ibv_close_device(c);
		}
	}
	ibv_free_device_list(l);
	RUN(test_other_subnet_not_reached);
	RUN(test_machine_identity_and_tables);
	RUN(test_ud_other_subnet_dropped);
	return th_summary("test_verbs_machine");
}
