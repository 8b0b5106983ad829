/*
 * Thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)): a parent domain stands for its PD wherever a
 * PD is taken, holds it (and its thread domain) while it lives, and is held
 * by what is made on it; its allocators are asked for each queue's buffer
 * and doorbell record, and may leave them to the provider — memory they hand
 * over is where the queue lives (its rings and record, in this process and
 * for the other processes that reach it), given back through their free when
 * the queue is destroyed.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "kid_fixture.h"
#include "verbs_qp_fixture.h"

static uint8_t pa_mem[2][4096] __attribute__((aligned(4096)));

struct pa_calls {
	int alloc, free, dbr;
};

static struct pa_calls pa;

/* Leaves every buffer and record to the provider, counting the calls. */
static void *pa_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	(void)pd, (void)size, (void)align;
	if (ctx != &pa)
		return NULL; /* not the context the domain was given: the creation fails, the test with it */
	pa.alloc++;
	pa.dbr += type == MLX5DV_RES_TYPE_DBR;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void pa_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	(void)pd, (void)ctx, (void)ptr, (void)type;
	pa.free++;
}

/*
 * An allocator that hands over memory of its own and records every call:
 * the arguments, what it gave, and whether free gave it back with the same
 * resource type. fail_at makes that call (counted from 0) return NULL;
 * file makes it give pages of a file mapping instead of the heap. Memory is
 * aligned as asked and, below a page, not more.
 */
#define PR_MAX 16

struct pr_call {
	struct ibv_pd *pd;
	void *ctx;
	size_t size, align;
	uint64_t type;
	uint8_t *p;
	uint8_t *base; /* what p was carved from */
	size_t len;
	int freed;
};

static struct {
	struct pr_call call[PR_MAX];
	int n, fail_at, bad_free;
	uint64_t defer_type; /* this resource type is left to the provider (0: none) */
	struct ibv_pd *par;
	FILE *file;
	off_t file_off;
} pr;

static void pr_reset(struct ibv_pd *par)
{
	memset(&pr, 0, sizeof(pr));
	pr.fail_at = -1;
	pr.par = par;
}

static void *pr_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	struct pr_call *c;

	if (pr.n == PR_MAX)
		return NULL;
	c = &pr.call[pr.n];
	*c = (struct pr_call){ .pd = pd, .ctx = ctx, .size = size, .align = align, .type = type };
	if (pr.n++ == pr.fail_at || align == 0 || (align & (align - 1)) != 0)
		return NULL;
	if (type == pr.defer_type)
		return IBV_ALLOCATOR_USE_DEFAULT;
	c->len = (size + 4095) & ~(size_t)4095;
	if (pr.file != NULL) {
		/* A page of a file per call: memory the device cannot move where other processes map it. */
		void *m;

		if (ftruncate(fileno(pr.file), pr.file_off + (off_t)c->len) != 0)
			return NULL;
		m = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(pr.file), pr.file_off);
		if (m == MAP_FAILED)
			return NULL;
		pr.file_off += (off_t)c->len;
		c->p = m;
	} else {
		/* Aligned as asked and no more: below a page, deliberately not on a page boundary. */
		c->base = aligned_alloc(align < 4096 ? 4096 : align, c->len + 4096);
		c->p = c->base != NULL && align < 4096 ? c->base + align : c->base;
	}
	return c->p;
}

static void pr_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	for (int i = 0; i < pr.n && i < PR_MAX; i++) {
		struct pr_call *c = &pr.call[i];

		if (c->p != ptr || c->freed)
			continue;
		if (c->type != type || pd != pr.par || ctx != &pr)
			pr.bad_free++;
		c->freed++;
		if (pr.file != NULL)
			munmap(ptr, c->len);
		else
			free(c->base);
		return;
	}
	pr.bad_free++; /* never given, or given back twice */
}

/* Calls given memory not yet given back. */
static int pr_live(void)
{
	int live = 0;

	for (int i = 0; i < pr.n && i < PR_MAX; i++)
		live += pr.call[i].p != NULL && !pr.call[i].freed;
	return live;
}

/* Call i was (type, size at least min, alignment align) on the parent domain with its context. */
static int pr_was(int i, uint64_t type, size_t min, size_t align)
{
	const struct pr_call *c = &pr.call[i];

	return i < pr.n && c->pd == pr.par && c->ctx == &pr && c->type == type && c->size >= min && c->align == align;
}

/* [p, p + len) lies in what call i gave. */
static int pr_holds(int i, const void *p, size_t len)
{
	const uint8_t *b = pr.call[i].p, *q = p;

	return b != NULL && q >= b && q + len <= b + pr.call[i].size;
}

static struct ibv_pd *pr_parent(struct ibv_context *c, struct ibv_pd *pd)
{
	struct ibv_parent_domain_init_attr pda = {
		.pd = pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pr_alloc,
		.free = pr_free,
		.pd_context = &pr,
	};
	struct ibv_pd *par = ibv_alloc_parent_domain(c, &pda);

	if (par != NULL)
		th_defer(vf_dealloc_pd_cb, par);
	pr_reset(par);
	return par;
}

static struct ibv_cq *pr_cq(struct ibv_context *c, struct ibv_pd *par, uint32_t cqe)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = cqe, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = par };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(c, &ca);

	return cqx != NULL ? ibv_cq_ex_to_cq(cqx) : NULL;
}

static struct ibv_srq *pr_srq(struct ibv_pd *par, uint32_t wr)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = wr, .max_sge = 1 } };

	return ibv_create_srq(par, &sa);
}

static struct ibv_qp *pr_qp(struct ibv_pd *par, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(par, &a);
}

/* The CQE for qpn of opcode op (MLX5_CQE_*) in the first n of ring. */
static const struct mlx5_cqe64 *pr_cqe(const void *ring, uint32_t n, uint32_t qpn, uint8_t op)
{
	const struct mlx5_cqe64 *e = ring;

	for (uint32_t i = 0; i < n; i++)
		if ((be32toh(e[i].sop_drop_qpn) & 0xffffffu) == qpn && (e[i].op_own >> 4) == op)
			return &e[i];
	return NULL;
}

static int post_recv1(struct ibv_qp *qp, struct ibv_srq *srq, struct ibv_mr *mr, void *p, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	return srq != NULL ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);
}

static int post_send1(struct ibv_qp *qp, struct ibv_mr *mr, void *p, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/*
 * ibv_alloc_parent_domain(3): alloc is asked, with the domain and its
 * pd_context, for each queue's buffer and doorbell record; memory it gives
 * is what the queue uses (mlx5dv_init_obj hands out the very rings and
 * records: a posted WQE, a receive's record and a CQE are there), and free
 * gets each back, with its resource type, when the queue is destroyed.
 */
static void test_allocator_memory_holds_queues(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c), *par = pr_parent(c, pd);
	static uint8_t buf[2][64] __attribute__((aligned(64)));
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mr;
	struct mlx5dv_cq dcq;
	struct mlx5dv_qp da, db;
	struct mlx5dv_srq dsrq;
	struct mlx5dv_obj o;
	struct ibv_wc wc;

	CHECK(par != NULL);
	cq = pr_cq(c, par, 8);
	CHECK(cq != NULL);
	/* mlx5: 64-byte CQEs for cqe + 1 rounded up to a power of two, on a page; then the record, 8 bytes at 8. */
	CHECK(pr.n == 2 && pr_was(0, MLX5DV_RES_TYPE_CQ, 64 * 16, 4096) && pr_was(1, MLX5DV_RES_TYPE_DBR, 8, 8));
	o = (struct mlx5dv_obj){ .cq = { .in = cq, .out = &dcq } };
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ));
	CHECK(dcq.buf == pr.call[0].p && (void *)dcq.dbrec == pr.call[1].p && dcq.cqe_size == 64 &&
	      pr_holds(0, dcq.buf, (size_t)dcq.cqe_cnt * 64));
	srq = pr_srq(par, 4);
	CHECK(srq != NULL);
	CHECK(pr.n == 4 && pr_was(2, MLX5DV_RES_TYPE_SRQ, 5 * 16, 4096) && pr_was(3, MLX5DV_RES_TYPE_DBR, 8, 8));
	o = (struct mlx5dv_obj){ .srq = { .in = srq, .out = &dsrq } };
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ));
	CHECK(dsrq.buf == pr.call[2].p && (void *)dsrq.dbrec == pr.call[3].p);
	qa = pr_qp(par, cq, NULL);
	qb = pr_qp(par, cq, srq);
	CHECK(qa != NULL && qb != NULL);
	/* mlx5 aligns a small QP's buffer to its larger WQE stride, 64 here (mlx5_set_custom_qp_alignment). */
	CHECK(pr.n == 8 && pr_was(4, MLX5DV_RES_TYPE_QP, 8 * 64 + 8 * 16, 64) && pr_was(5, MLX5DV_RES_TYPE_DBR, 8, 8));
	CHECK(pr_was(6, MLX5DV_RES_TYPE_QP, 8 * 64, 64) && pr_was(7, MLX5DV_RES_TYPE_DBR, 8, 8));
	o = (struct mlx5dv_obj){ .qp = { .in = qa, .out = &da } };
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP));
	CHECK((void *)da.dbrec == pr.call[5].p && pr_holds(4, da.sq.buf, (size_t)da.sq.wqe_cnt * da.sq.stride) &&
	      pr_holds(4, da.rq.buf, (size_t)da.rq.wqe_cnt * da.rq.stride));
	/* The send ring on pages of its own, apart from the receive ring other processes map. */
	CHECK((uintptr_t)da.sq.buf % 4096 == 0 && (uint8_t *)da.sq.buf >= (uint8_t *)da.rq.buf + da.rq.wqe_cnt * da.rq.stride);
	o = (struct mlx5dv_obj){ .qp = { .in = qb, .out = &db } };
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP));
	CHECK((void *)db.dbrec == pr.call[7].p && pr_holds(6, db.sq.buf, (size_t)db.sq.wqe_cnt * db.sq.stride));
	mr = ibv_reg_mr(par, buf, sizeof(buf), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	CHECK_OK(vq_up(qa, qb->qp_num, 0, 0));
	CHECK_OK(vq_up(qb, qa->qp_num, 0, 0));
	/* A receive: its counter in the allocator's record; a send: its WQE in the allocator's ring. */
	CHECK_OK(post_recv1(qa, NULL, mr, buf[1], 64, 1));
	CHECK(((uint32_t *)pr.call[5].p)[0] == htobe32(1));
	CHECK_OK(post_recv1(qb, srq, mr, buf[1] + 32, 32, 2));
	CHECK(((uint32_t *)pr.call[3].p)[0] == htobe32(1));
	memset(buf[0], 0x5a, 16);
	CHECK_OK(post_send1(qb, mr, buf[0], 16, 3));
	CHECK((be32toh(((struct mlx5_wqe_ctrl_seg *)db.sq.buf)->opmod_idx_opcode) & 0xff) == MLX5_OPCODE_SEND &&
	      be32toh(((struct mlx5_wqe_ctrl_seg *)db.sq.buf)->qpn_ds) >> 8 == qb->qp_num);
	for (int i = 0; i < 2; i++) {
		CHECK(vq_poll1(cq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS);
	}
	CHECK(memcmp(buf[1], buf[0], 16) == 0);
	/* Both completions were written into the allocator's CQ memory. */
	CHECK(pr_cqe(pr.call[0].p, 16, qa->qp_num, MLX5_CQE_RESP_SEND) != NULL &&
	      pr_cqe(pr.call[0].p, 16, qb->qp_num, MLX5_CQE_REQ) != NULL);
	/* Destroys give each back, with its type, and nothing before. */
	CHECK(pr_live() == 8);
	CHECK_OK(ibv_destroy_qp(qa));
	CHECK(pr.call[4].freed == 1 && pr.call[5].freed == 1 && pr_live() == 6);
	CHECK_OK(ibv_destroy_qp(qb));
	CHECK_OK(ibv_destroy_srq(srq));
	CHECK(pr.call[2].freed == 1 && pr.call[3].freed == 1 && pr_live() == 2);
	CHECK_OK(ibv_destroy_cq(cq));
	CHECK(pr_live() == 0 && pr.bad_free == 0 && pr.n == 8);
	CHECK_OK(ibv_dereg_mr(mr));
}

/* The buffer given, the record left to the provider: the queue is in the given buffer, and only that goes back. */
static void test_allocator_gives_buffer_only(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c), *par = pr_parent(c, pd);
	struct mlx5dv_cq dcq;
	struct mlx5dv_obj o;
	struct ibv_cq *cq;

	CHECK(par != NULL);
	pr.defer_type = MLX5DV_RES_TYPE_DBR;
	cq = pr_cq(c, par, 8);
	CHECK(cq != NULL);
	CHECK(pr.n == 2 && pr_was(0, MLX5DV_RES_TYPE_CQ, 64 * 16, 4096) && pr_was(1, MLX5DV_RES_TYPE_DBR, 8, 8));
	o = (struct mlx5dv_obj){ .cq = { .in = cq, .out = &dcq } };
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ));
	CHECK(dcq.buf == pr.call[0].p && dcq.dbrec != NULL && pr.call[1].p == NULL);
	CHECK_OK(ibv_destroy_cq(cq));
	CHECK(pr.call[0].freed == 1 && pr_live() == 0 && pr.bad_free == 0);
}

/* An allocator that gives nothing (NULL): the creation fails with ENOMEM, and what it did give goes back. */
static void test_allocator_null(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c), *par = pr_parent(c, pd);
	struct ibv_cq *cq, *pcq = vq_cq(c, 8);

	CHECK(par != NULL && pcq != NULL);
	for (int at = 0; at < 2; at++) {
		pr_reset(par);
		pr.fail_at = at; /* the buffer, then the record */
		errno = 0;
		CHECK(pr_cq(c, par, 8) == NULL && errno == ENOMEM);
		CHECK(pr.n == at + 1 && pr_live() == 0 && pr.bad_free == 0);
		pr_reset(par);
		pr.fail_at = at;
		errno = 0;
		CHECK(pr_qp(par, pcq, NULL) == NULL && errno == ENOMEM);
		CHECK(pr.n == at + 1 && pr_live() == 0 && pr.bad_free == 0);
		pr_reset(par);
		pr.fail_at = at;
		errno = 0;
		CHECK(pr_srq(par, 4) == NULL && errno == ENOMEM);
		CHECK(pr.n == at + 1 && pr_live() == 0 && pr.bad_free == 0);
	}
	/* Nothing was left behind: the same domain makes queues after. */
	pr_reset(par);
	cq = pr_cq(c, par, 8);
	CHECK(cq != NULL && pr_live() == 2);
	CHECK_OK(ibv_destroy_cq(cq));
	CHECK(pr_live() == 0 && pr.bad_free == 0);
}

/*
 * Memory the device cannot share with its other processes where it is (a
 * file mapping): the queue is refused with EOPNOTSUPP rather than made
 * unreachable to them, and the memory is given back.
 */
static void test_allocator_unsharable_memory(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c), *par = pr_parent(c, pd);
	struct ibv_cq *pcq = vq_cq(c, 8);
	FILE *f = tmpfile();

	CHECK(par != NULL && pcq != NULL && f != NULL);
	pr.file = f;
	errno = 0;
	CHECK(pr_cq(c, par, 8) == NULL && errno == EOPNOTSUPP);
	CHECK(pr.n == 2 && pr_live() == 0 && pr.bad_free == 0);
	pr_reset(par);
	pr.file = f;
	errno = 0;
	CHECK(pr_qp(par, pcq, NULL) == NULL && errno == EOPNOTSUPP);
	CHECK(pr.n == 2 && pr_live() == 0 && pr.bad_free == 0);
	pr_reset(par);
	fclose(f);
}

/* An XRC send QP has no receive side for other processes to reach; in an allocator's memory it is refused. */
static void test_allocator_xrc_send_refused(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c), *par = pr_parent(c, pd);
	struct ibv_cq *cq = vq_cq(c, 8);
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = par,
	};

	CHECK(par != NULL && cq != NULL);
	errno = 0;
	CHECK(ibv_create_qp_ex(c, &a) == NULL && errno == EOPNOTSUPP);
	CHECK(pr.n == 2 && pr_was(0, MLX5DV_RES_TYPE_QP, 4 * 64, 64) && pr_live() == 0 && pr.bad_free == 0);
}

/*
 * Two processes: the child's requesters SEND to a QP with its own receive
 * ring and to one on an SRQ, both of the parent, whose rings, records and
 * CQ are the parent's allocator's memory. The child consumes those receives
 * and completes into that CQ, as it would on the card; once the parent
 * destroyed the QP, the child's request is not answered
 * (IBV_WC_RETRY_EXC_ERR).
 */
/* The child: two RC QPs, connected to the parent's two; one SEND on each. Exits 0 when both succeed. */
static int kid_run(int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	static uint8_t msg[2][32];
	struct ibv_mr *mr = pd != NULL ? ibv_reg_mr(pd, msg, sizeof(msg), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp[2] = { NULL, NULL };
	uint32_t mine[2], theirs[2];
	struct ibv_wc wc;
	char cmd;

	if (mr == NULL || cq == NULL)
		return 1;
	for (int i = 0; i < 2; i++) {
		qp[i] = vq_qp_srq(pd, IBV_QPT_RC, cq, cq, NULL, 4);
		if (qp[i] == NULL)
			return 2;
		mine[i] = qp[i]->qp_num;
		memset(msg[i], 0xa0 + i, sizeof(msg[i]));
	}
	if (write(out, mine, sizeof(mine)) != sizeof(mine) || read(in, theirs, sizeof(theirs)) != sizeof(theirs))
		return 3;
	for (int i = 0; i < 2; i++)
		if (vq_up(qp[i], theirs[i], 0, 0) != 0 || post_send1(qp[i], mr, msg[i], 32, (uint64_t)i) != 0)
			return 4;
	for (int i = 0; i < 2; i++)
		if (vq_poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
			return 5;
	if (write(out, "y", 1) != 1 || read(in, &cmd, 1) != 1)
		return 6;
	/* The parent destroyed its first QP and freed its memory: nothing reaches it any more. */
	if (cmd != 'd' || post_send1(qp[0], mr, msg[0], 32, 2) != 0 || vq_poll1(cq, &wc) != 1 ||
	    wc.status != IBV_WC_RETRY_EXC_ERR)
		return 7;
	if (write(out, "y", 1) != 1 || read(in, &cmd, 1) != 1)
		return 8;
	return 0;
}

static void test_allocator_queues_between_processes(void)
{
	static uint8_t rbuf[2][32] __attribute__((aligned(64)));
	int a[2], b[2];
	struct ibv_context *c;
	struct ibv_pd *pd, *par;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint32_t mine[2], theirs[2];
	struct ibv_wc wc[2];
	char ok = 0;

	kid_fork(a, b);
	if (kid == 0)
		_exit(kid_run(a[0], b[1]));
	c = vf_open();
	pd = vf_pd(c);
	par = pr_parent(c, pd);
	CHECK(par != NULL);
	cq = pr_cq(c, par, 8);
	CHECK(cq != NULL);
	th_defer(vq_destroy_cq_cb, cq);
	srq = pr_srq(par, 4);
	CHECK(srq != NULL);
	th_defer(vq_destroy_srq_cb, srq);
	qp[0] = pr_qp(par, cq, NULL);
	qp[1] = pr_qp(par, cq, srq);
	CHECK(qp[0] != NULL && qp[1] != NULL);
	th_defer(vq_destroy_qp_cb, qp[0]);
	th_defer(vq_destroy_qp_cb, qp[1]);
	CHECK(pr.n == 8 && pr_live() == 8);
	mr = vq_mr(par, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK(read(from_kid, theirs, sizeof(theirs)) == sizeof(theirs));
	for (int i = 0; i < 2; i++) {
		CHECK_OK(vq_up(qp[i], theirs[i], 0, 0));
		mine[i] = qp[i]->qp_num;
	}
	CHECK_OK(post_recv1(qp[0], NULL, mr, rbuf[0], 32, 10));
	CHECK_OK(post_recv1(qp[1], srq, mr, rbuf[1], 32, 11));
	CHECK(write(to_kid, mine, sizeof(mine)) == sizeof(mine));
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
	for (int i = 0; i < 2; i++) {
		CHECK(vq_poll1(cq, &wc[i]) == 1);
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RECV && wc[i].byte_len == 32);
	}
	CHECK(wc[0].wr_id + wc[1].wr_id == 21 && wc[0].qp_num + wc[1].qp_num == mine[0] + mine[1]);
	for (int i = 0; i < 2; i++) {
		CHECK(rbuf[i][0] == 0xa0 + i && rbuf[i][31] == 0xa0 + i);
		/* The child wrote the CQE into the allocator's ring. */
		CHECK(pr_cqe(pr.call[0].p, 16, mine[i], MLX5_CQE_RESP_SEND) != NULL);
	}
	/*
	 * A destroy is a fence for the other processes too: once it returned
	 * (the memory given back), the child's next request to the QP finds
	 * it gone and is not answered.
	 */
	CHECK(th_undefer(vq_destroy_qp_cb, qp[0]));
	CHECK_OK(ibv_destroy_qp(qp[0]));
	CHECK(pr.call[4].freed == 1 && pr.call[5].freed == 1 && pr_live() == 6 && pr.bad_free == 0);
	CHECK(write(to_kid, "d", 1) == 1);
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
	CHECK(write(to_kid, "q", 1) == 1);
	kid_wait_ok();
}

static void test_td(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_td *td;
	struct ibv_pd *pd, *par;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	ta.comp_mask = 1;
	errno = 0;
	CHECK(ibv_alloc_td(c, &ta) == NULL && errno == EINVAL);
	ta.comp_mask = 0;
	td = ibv_alloc_td(c, &ta);
	CHECK(td != NULL && td->context == c);
	pda.pd = pd;
	pda.td = td;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	CHECK(ibv_dealloc_td(td) == EBUSY);
	CHECK_OK(ibv_dealloc_pd(par));
	CHECK_OK(ibv_dealloc_td(td));
}

static void test_parent_refusals_and_lifetimes(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_pd *pd, *par;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	CHECK(c != NULL);
	pd = ibv_alloc_pd(c);
	CHECK(pd != NULL);
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL); /* no PD */
	pda.pd = pd;
	pda.comp_mask = 1u << 5;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL);
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS; /* without the functions */
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL);
	pda.comp_mask = 0;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL && par->context == c);
	pda.pd = par; /* a parent domain of a parent domain */
	errno = 0;
	CHECK(ibv_alloc_parent_domain(c, &pda) == NULL && errno == EINVAL);
	/* The PD is held by its parent domain, which is held by what is made on it. */
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	cq = ibv_create_cq(c, 8, NULL, NULL, 0);
	CHECK(cq != NULL);
	qp = vq_qp(par, IBV_QPT_RC, cq, cq, 4);
	mr = ibv_reg_mr(par, pa_mem[0], 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(qp != NULL && mr != NULL && mr->pd == par);
	CHECK(ibv_dealloc_pd(par) == EBUSY);
	CHECK(th_undefer(vq_destroy_qp_cb, qp));
	CHECK_OK(ibv_destroy_qp(qp));
	CHECK(ibv_dealloc_pd(par) == EBUSY);
	CHECK_OK(ibv_dereg_mr(mr));
	CHECK_OK(ibv_dealloc_pd(par));
	CHECK_OK(ibv_dealloc_pd(pd));
	CHECK_OK(ibv_destroy_cq(cq));
}

/* A QP on the parent domain and one on its PD reach each other's keys: one protection domain. */
static void test_parent_is_its_pd(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_pd *pd = vf_pd(c), *par;
	struct ibv_cq *cq = vq_cq(c, 16);
	struct ibv_mr *m0, *m1;
	struct ibv_qp *a, *b;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct ibv_wc wc;

	CHECK(c != NULL && pd != NULL && cq != NULL);
	pda.pd = pd;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	m0 = vq_mr(par, pa_mem[0], 4096, VQ_ACCESS_ALL);
	m1 = vq_mr(pd, pa_mem[1], 4096, VQ_ACCESS_ALL);
	a = vq_qp(par, IBV_QPT_RC, cq, cq, 4);
	b = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(m0 != NULL && m1 != NULL && a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	memset(pa_mem[0], 0x6b, 64);
	memset(pa_mem[1], 0, 64);
	sg = (struct ibv_sge){ .addr = (uintptr_t)pa_mem[0], .length = 64, .lkey = m0->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)pa_mem[1];
	wr.wr.rdma.rkey = m1->rkey;
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	CHECK(vq_poll1(cq, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	CHECK(memcmp(pa_mem[0], pa_mem[1], 64) == 0);
	CHECK(th_undefer(vq_destroy_qp_cb, a));
	CHECK_OK(ibv_destroy_qp(a));
	CHECK(th_undefer(vf_dereg_cb, m0));
	CHECK_OK(ibv_dereg_mr(m0));
	CHECK_OK(ibv_dealloc_pd(par));
}

static void test_allocators(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_cq_init_attr_ex ca = { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct ibv_pd *pd = vf_pd(c), *par;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;

	CHECK(c != NULL && pd != NULL);
	pda.pd = pd;
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pda.alloc = pa_alloc;
	pda.free = pa_free;
	pda.pd_context = &pa;
	par = ibv_alloc_parent_domain(c, &pda);
	CHECK(par != NULL);
	/* A CQ on a parent domain: its allocators are asked for the ring and the record, and defer. */
	memset(&pa, 0, sizeof(pa));
	ca.parent_domain = par;
	cqx = ibv_create_cq_ex(c, &ca);
	CHECK(cqx != NULL);
	CHECK(pa.alloc == 2 && pa.dbr == 1 && pa.free == 0);
	memset(&pa, 0, sizeof(pa));
	qp = vq_qp(par, IBV_QPT_RC, ibv_cq_ex_to_cq(cqx), ibv_cq_ex_to_cq(cqx), 4);
	CHECK(qp != NULL);
	CHECK(pa.alloc == 2 && pa.dbr == 1);
	/* A CQ may name only a parent domain. */
	ca.parent_domain = pd;
	errno = 0;
	CHECK(ibv_create_cq_ex(c, &ca) == NULL && errno == EINVAL);
	CHECK(th_undefer(vq_destroy_qp_cb, qp));
	CHECK_OK(ibv_destroy_qp(qp));
	CHECK(ibv_dealloc_pd(par) == EBUSY); /* the CQ holds it */
	CHECK_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	CHECK_OK(ibv_dealloc_pd(par));
}

int main(void)
{
	RUN(test_td);
	RUN(test_parent_refusals_and_lifetimes);
	RUN(test_parent_is_its_pd);
	RUN(test_allocators);
	RUN(test_allocator_memory_holds_queues);
	RUN(test_allocator_gives_buffer_only);
	RUN(test_allocator_null);
	RUN(test_allocator_unsharable_memory);
	RUN(test_allocator_xrc_send_refused);
	RUN(test_allocator_queues_between_processes);
	return th_summary("test_verbs_parent");
}
