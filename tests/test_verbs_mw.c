/*
 * Memory windows, from ibv_alloc_mw(3), ibv_bind_mw(3), ibv_post_send(3)
 * (IBV_WR_BIND_MW, IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV) and the IB
 * specification: a window bound to a range of an MR registered with
 * IBV_ACCESS_MW_BIND grants remote access to exactly that range with its own
 * rights under its own rkey; a type 1 window is bound with ibv_bind_mw and
 * unbound by a zero-length bind, a type 2 window by a bind WR and
 * invalidated by LOCAL_INV or SEND with invalidate; a bind that breaks a
 * rule completes with IBV_WC_MW_BIND_ERR; deallocating the window or
 * deregistering its MR ends every access through it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define MW_LEN 8192

static uint8_t mw_mem[2][MW_LEN] __attribute__((aligned(4096)));

static void mw_dealloc_cb(void *arg)
{
	(void)ibv_dealloc_mw(arg);
}

/* Two RC QPs; buffer 1 an MR windows may be bound to (local write, MW_BIND, no remote rights of its own). */
static void mw_pair(struct vq_pair *p, int mr1_access)
{
	const struct vq_pair_spec s = { .buf = { mw_mem[0], mw_mem[1] }, .len = MW_LEN, .fill = { 0x5c, 0xe1 },
					.access = { VQ_ACCESS_ALL, mr1_access }, .type = IBV_QPT_RC };

	vq_pair_open(p, &s);
	vq_pair_up(p);
}

static struct ibv_mw *mw_new(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	if (mw != NULL)
		th_defer(mw_dealloc_cb, mw);
	return mw;
}

static int mw_wait(struct ibv_cq *cq, uint64_t id)
{
	struct ibv_wc wc;

	if (vq_poll1(cq, &wc) != 1 || wc.wr_id != id)
		return -1;
	return (int)wc.status;
}

/* A 64-byte op of qp 0 (RDMA WRITE or READ) at raddr through rkey: its completion status. */
static int mw_rdma(struct vq_pair *p, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p->buf[0], .length = 64, .lkey = p->mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->qp[0], &wr, &bad) != 0)
		return -1;
	return mw_wait(p->cq[0], 7);
}

/* Binds a type 2 window from qp 1 (the window's QP): its completion status; *rkey the key it asked for. */
static int mw_bind2(struct vq_pair *p, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr, uint64_t len,
		    unsigned int access, uint32_t *rkey)
{
	struct ibv_send_wr wr = { .wr_id = 100, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED },
			   *bad = NULL;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(*rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = addr, .length = len,
							  .mw_access_flags = access };
	if (ibv_post_send(p->qp[1], &wr, &bad) != 0)
		return -1;
	*rkey = wr.bind_mw.rkey;
	return mw_wait(p->cq[1], 100);
}

static bool mw_all(const uint8_t *b, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static void test_mw_alloc(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_device_attr a;
	struct ibv_mw *m1, *m2;

	CHECK(c != NULL && pd != NULL);
	CHECK_OK(ibv_query_device(c, &a));
	CHECK((a.device_cap_flags & IBV_DEVICE_MEM_WINDOW) && (a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	CHECK(a.max_mw > 0);
	m1 = mw_new(pd, IBV_MW_TYPE_1);
	m2 = mw_new(pd, IBV_MW_TYPE_2);
	CHECK(m1 != NULL && m2 != NULL && m1->type == IBV_MW_TYPE_1 && m2->type == IBV_MW_TYPE_2);
	CHECK(m1->pd == pd && m1->context == c && m1->rkey != m2->rkey);
	errno = 0;
	CHECK(ibv_alloc_mw(pd, (enum ibv_mw_type)3) == NULL && errno == EINVAL);
	/* A window holds its PD. */
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
}

static void test_mw_type1(void)
{
	struct ibv_mw_bind bind = { .wr_id = 101, .send_flags = IBV_SEND_SIGNALED };
	struct vq_pair p;
	struct ibv_mw *mw;
	uint32_t old;

	mw_pair(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = mw_new(p.pd, IBV_MW_TYPE_1);
	CHECK(mw != NULL);
	/* Unbound: nothing reaches the MR through the window; the MR's own key grants no remote right. */
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1], mw->rkey) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	old = mw->rkey;
	bind.bind_info = (struct ibv_mw_bind_info){ .mr = p.mr[1], .addr = (uintptr_t)p.buf[1] + 1024, .length = 512,
						    .mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	CHECK_OK(ibv_bind_mw(p.qp[1], mw, &bind));
	CHECK(mw->rkey != old && (mw->rkey >> 8) == (old >> 8) && (mw->rkey & 0xff) == ((old + 1) & 0xff));
	CHECK(mw_wait(p.cq[1], 101) == IBV_WC_SUCCESS);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1] + 1024 + 448, mw->rkey) == IBV_WC_SUCCESS);
	CHECK(mw_all(p.buf[1] + 1024 + 448, 64, 0x5c) && p.buf[1][1024 + 447] == 0xe1 && p.buf[1][1536] == 0xe1);
	/* The old key is gone; so is the range's outside. */
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1] + 1024, old) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1] + 1024 + 480, mw->rkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(mw_all(p.buf[1] + 1536, 64, 0xe1));
	/* A zero-length bind unbinds it. */
	vq_pair_restate(&p);
	bind.bind_info.length = 0;
	CHECK_OK(ibv_bind_mw(p.qp[1], mw, &bind));
	CHECK(mw_wait(p.cq[1], 101) == IBV_WC_SUCCESS);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)p.buf[1] + 1024, mw->rkey) == IBV_WC_REM_ACCESS_ERR);
	/* The inline wrapper's and mlx5's refusals: a type 2 window, another PD's MR, ZERO_BASED. */
	{
		struct ibv_mw *m2 = mw_new(p.pd, IBV_MW_TYPE_2);
		struct ibv_pd *other = ibv_alloc_pd(p.c);
		struct ibv_mr *omr;

		CHECK(m2 != NULL && other != NULL);
		CHECK(ibv_bind_mw(p.qp[1], m2, &bind) == EINVAL);
		omr = ibv_reg_mr(other, mw_mem[1], 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		CHECK(omr != NULL);
		bind.bind_info = (struct ibv_mw_bind_info){ .mr = omr, .addr = (uintptr_t)mw_mem[1], .length = 64 };
		CHECK(ibv_bind_mw(p.qp[1], mw, &bind) == EPERM);
		bind.bind_info = (struct ibv_mw_bind_info){ .mr = p.mr[1], .addr = (uintptr_t)p.buf[1], .length = 64,
							    .mw_access_flags = IBV_ACCESS_ZERO_BASED };
		CHECK(ibv_bind_mw(p.qp[1], mw, &bind) == EINVAL);
		CHECK_OK(ibv_dereg_mr(omr));
		CHECK_OK(ibv_dealloc_pd(other));
	}
}

/* Each rule a bind must keep, broken once: IBV_WC_MW_BIND_ERR, the window as it was. */
static void test_mw_bind_refused(void)
{
	struct vq_pair p;
	struct ibv_mw *mw;
	struct ibv_mr *nobind, *ro;
	uint32_t rkey;

	mw_pair(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = mw_new(p.pd, IBV_MW_TYPE_2);
	nobind = vq_mr(p.pd, p.buf[1], 4096, IBV_ACCESS_LOCAL_WRITE);
	ro = vq_mr(p.pd, p.buf[1], 4096, IBV_ACCESS_MW_BIND);
	CHECK(mw != NULL && nobind != NULL && ro != NULL);
	rkey = mw->rkey;
	CHECK(mw_bind2(&p, mw, nobind, (uintptr_t)p.buf[1], 64, IBV_ACCESS_REMOTE_READ, &rkey) == IBV_WC_MW_BIND_ERR);
	vq_pair_restate(&p);
	rkey = mw->rkey;
	/* Remote write over an MR without local write. */
	CHECK(mw_bind2(&p, mw, ro, (uintptr_t)p.buf[1], 64, IBV_ACCESS_REMOTE_WRITE, &rkey) == IBV_WC_MW_BIND_ERR);
	vq_pair_restate(&p);
	/* A range leaving the MR. */
	rkey = mw->rkey;
	CHECK(mw_bind2(&p, mw, p.mr[1], (uintptr_t)p.buf[1] + MW_LEN - 32, 64, IBV_ACCESS_REMOTE_READ, &rkey) ==
	      IBV_WC_MW_BIND_ERR);
}

static void test_mw_type2(void)
{
	struct vq_pair p;
	struct ibv_mw *mw;
	uint32_t rkey, bound;
	struct ibv_send_wr inv = { .wr_id = 102, .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED },
			   *bad = NULL;

	mw_pair(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = mw_new(p.pd, IBV_MW_TYPE_2);
	CHECK(mw != NULL);
	rkey = mw->rkey;
	CHECK(mw_bind2(&p, mw, p.mr[1], (uintptr_t)p.buf[1] + 4096, 256, IBV_ACCESS_REMOTE_READ, &rkey) ==
	      IBV_WC_SUCCESS);
	bound = rkey;
	memset(p.buf[1] + 4096, 0x42, 64);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)p.buf[1] + 4096, bound) == IBV_WC_SUCCESS);
	CHECK(mw_all(p.buf[0], 64, 0x42));
	/* Read only: a WRITE through it is refused. */
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1] + 4096, bound) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	/* A bound type 2 window is invalidated before it is bound again. */
	CHECK(mw_bind2(&p, mw, p.mr[1], (uintptr_t)p.buf[1], 64, IBV_ACCESS_REMOTE_READ, &rkey) == IBV_WC_MW_BIND_ERR);
	vq_pair_restate(&p);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)p.buf[1] + 4096, bound) == IBV_WC_SUCCESS);
	inv.invalidate_rkey = bound;
	CHECK_OK(ibv_post_send(p.qp[1], &inv, &bad));
	CHECK(mw_wait(p.cq[1], 102) == IBV_WC_SUCCESS);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)p.buf[1] + 4096, bound) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	/* Zero-based: the window's addresses count from 0. */
	rkey = bound;
	CHECK(mw_bind2(&p, mw, p.mr[1], (uintptr_t)p.buf[1] + 2048, 128,
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED, &rkey) == IBV_WC_SUCCESS);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, 64, rkey) == IBV_WC_SUCCESS);
	CHECK(memcmp(p.buf[1] + 2048 + 64, p.buf[0], 64) == 0);
	CHECK(p.buf[1][2048 + 63] == 0xe1 && p.buf[1][2048 + 128] == 0xe1 && mw_all(p.buf[1] + 64, 64, 0xe1));
	/* A SEND with invalidate from the peer frees it too. */
	{
		struct ibv_sge rs = { .addr = (uintptr_t)p.buf[1], .length = 64, .lkey = p.mr[1]->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 103, .sg_list = &rs, .num_sge = 1 }, *rbad = NULL;
		struct ibv_send_wr s = { .wr_id = 104, .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED },
				   *sbad = NULL;
		struct ibv_wc wc;

		CHECK_OK(ibv_post_recv(p.qp[1], &rwr, &rbad));
		s.invalidate_rkey = rkey;
		CHECK_OK(ibv_post_send(p.qp[0], &s, &sbad));
		CHECK(vq_poll1(p.cq[0], &wc) == 1 && wc.wr_id == 104 && wc.status == IBV_WC_SUCCESS);
		CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.wr_id == 103 && wc.status == IBV_WC_SUCCESS &&
		      (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey);
	}
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, 64, rkey) == IBV_WC_REM_ACCESS_ERR);
}

/* Dealloc and the MR's deregistration end the window's accesses; its key is no lkey either. */
static void test_mw_lifetime(void)
{
	struct vq_pair p;
	struct ibv_mw *mw;
	struct ibv_mr *mr;
	uint32_t rkey;

	mw_pair(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mr = ibv_reg_mr(p.pd, p.buf[1], 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(mr != NULL);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	CHECK(mw != NULL);
	rkey = mw->rkey;
	CHECK(mw_bind2(&p, mw, mr, (uintptr_t)p.buf[1], 4096, IBV_ACCESS_REMOTE_WRITE, &rkey) == IBV_WC_SUCCESS);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1], rkey) == IBV_WC_SUCCESS);
	/* The window's key as a local key: refused (windows are for remote access). */
	{
		struct ibv_sge sg = { .addr = (uintptr_t)p.buf[1], .length = 64, .lkey = rkey };
		struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
		struct ibv_wc wc;

		wr.wr.rdma.remote_addr = (uintptr_t)p.buf[0];
		wr.wr.rdma.rkey = p.mr[0]->rkey;
		CHECK_OK(ibv_post_send(p.qp[1], &wr, &bad));
		CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.wr_id == 9 && wc.status == IBV_WC_LOC_PROT_ERR);
	}
	vq_pair_restate(&p);
	/* The MR goes: the window reaches nothing. */
	CHECK_OK(ibv_dereg_mr(mr));
	memset(p.buf[1], 0xe1, 64);
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1], rkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(mw_all(p.buf[1], 64, 0xe1));
	CHECK_OK(ibv_dealloc_mw(mw));
}

static void test_mw_dealloc_bound(void)
{
	struct vq_pair p;
	struct ibv_mw *mw;
	uint32_t rkey;

	mw_pair(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	CHECK(mw != NULL);
	rkey = mw->rkey;
	CHECK(mw_bind2(&p, mw, p.mr[1], (uintptr_t)p.buf[1], 4096, IBV_ACCESS_REMOTE_WRITE, &rkey) == IBV_WC_SUCCESS);
	/* Its owner still names it by the key ibv_alloc_mw gave: the window goes all the same. */
	CHECK_OK(ibv_dealloc_mw(mw));
	CHECK(mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1], rkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(mw_all(p.buf[1], 4096, 0xe1));
}

/* ibv_wr_bind_mw on an extended QP. */
static void test_wr_bind_mw(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 8);
	struct ibv_mr *mr = vq_mr(pd, mw_mem[1], 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_qp_init_attr_ex ax = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq, .pd = pd,
					  .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						   .max_recv_sge = 1 },
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_RDMA_WRITE };
	struct ibv_mw_bind_info bi = { .mr = mr, .addr = (uintptr_t)mw_mem[1], .length = 128,
				       .mw_access_flags = IBV_ACCESS_REMOTE_READ };
	struct ibv_qp *qp;
	struct ibv_qp_ex *x;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	CHECK(c != NULL && pd != NULL && cq != NULL && mr != NULL);
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL);
	th_defer(vq_destroy_qp_cb, qp);
	CHECK_OK(vq_up(qp, qp->qp_num, 0, 0));
	mw = mw_new(pd, IBV_MW_TYPE_2);
	CHECK(mw != NULL);
	x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	x->wr_id = 55;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, ibv_inc_rkey(mw->rkey), &bi);
	CHECK_OK(ibv_wr_complete(x));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 55 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW);
	/* A bind with no window refuses the batch. */
	ibv_wr_start(x);
	ibv_wr_bind_mw(x, NULL, 0, &bi);
	CHECK(ibv_wr_complete(x) == EINVAL);
}

struct mw_race {
	struct vq_pair *p;
	struct ibv_mw *mw;
	_Atomic int stop;
	_Atomic int binds;
	_Atomic uint32_t key; /* the window's key after the last bind (the binder's thread owns mw) */
};

/* Binds the window to [1024, 1536) and [3072, 3584) of the MR in turn, as fast as it completes. */
static void *mw_binder(void *arg)
{
	struct mw_race *r = arg;
	struct ibv_mw_bind bind = { .wr_id = 200, .send_flags = IBV_SEND_SIGNALED };

	while (!r->stop && r->binds < 2000) {
		uint64_t off = (r->binds & 1) ? 3072 : 1024;

		bind.bind_info = (struct ibv_mw_bind_info){ .mr = r->p->mr[1], .addr = (uintptr_t)r->p->buf[1] + off,
							    .length = 512, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		if (ibv_bind_mw(r->p->qp[1], r->mw, &bind) != 0 || mw_wait(r->p->cq[1], 200) != IBV_WC_SUCCESS)
			break;
		r->key = r->mw->rkey;
		r->binds++;
		for (volatile int k = 0; k < 2000; k++)
			; /* a little time for accesses under this key */
	}
	return NULL;
}

/*
 * Accesses racing binds: every WRITE through the window either lands inside
 * one of the ranges it was bound to or is refused; nothing outside them is
 * ever touched (the bind's sequence word, hw_mw.c).
 */
static void test_mw_bind_race(void)
{
	struct mw_race r = { 0 };
	struct vq_pair p;
	pthread_t t;
	int ok = 0;

	mw_pair(&p, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	r.p = &p;
	r.mw = mw_new(p.pd, IBV_MW_TYPE_1);
	CHECK(r.mw != NULL);
	r.key = r.mw->rkey;
	CHECK(pthread_create(&t, NULL, mw_binder, &r) == 0);
	for (long spin = 0; r.binds == 0 && spin < 100000000L; spin++)
		; /* the window's first bind (bounded) */
	for (int i = 0; i < 4000 && r.binds < 2000; i++) {
		uint32_t key = r.key;
		uint64_t off = (r.binds & 1) ? 1024 + 448 : 3072 + 448;
		int st = mw_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf[1] + off, key);
		struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };

		if (st == IBV_WC_SUCCESS) {
			ok++;
			continue;
		}
		/* Refused (a bind moved the key or the range meanwhile): the requester goes back up. */
		CHECK(st == IBV_WC_REM_ACCESS_ERR);
		CHECK_OK(ibv_modify_qp(p.qp[0], &reset, IBV_QP_STATE));
		CHECK_OK(vq_up(p.qp[0], p.qp[1]->qp_num, 0, 0));
	}
	r.stop = 1;
	pthread_join(t, NULL);
	CHECK(r.binds > 0);
	for (size_t i = 0; i < MW_LEN; i++) {
		bool inside = (i >= 1024 && i < 1536) || (i >= 3072 && i < 3584);

		if (!inside && p.buf[1][i] != 0xe1) {
			TH_FAIL("byte %zu outside the window's ranges changed (%d writes landed)", i, ok);
			break;
		}
	}
}

int main(void)
{
	RUN(test_mw_alloc);
	RUN(test_mw_type1);
	RUN(test_mw_bind_refused);
	RUN(test_mw_type2);
	RUN(test_mw_lifetime);
	RUN(test_mw_dealloc_bound);
	RUN(test_wr_bind_mw);
	RUN(test_mw_bind_race);
	return th_summary("test_verbs_mw");
}
