/*
 * libmlx5.so.1: indirect mkeys (mlx5dv_create_mkey) registered by UMR work
 * requests (mlx5dv_wr_mr_interleaved, mlx5dv_wr_mr_list, and
 * mlx5dv_wr_mkey_configure with its setters) on an RC QP of mlx5dv_create_qp,
 * and RDMA WRITE, READ and SEND through them, as mlx5dv_create_mkey(3),
 * mlx5dv_wr_post(3) and mlx5dv_wr_mkey_configure(3) describe them: the refusals
 * with their errno, the completions with their status and opcode, and the
 * bytes moved compared with a reference computed here from the pattern.
 * SOFTDPU_UMR_SEED picks the random cases' seed (printed).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define UM_LEN 65536
#define UM_PLAIN 32768 /* plain (non-pattern) data lives from here in each buffer */
#define UM_REGION 1024 /* each pattern entry's memory: entry i at i * UM_REGION of buffer 1 */
#define UM_ITER 400

static uint8_t um_mem[2][UM_LEN] __attribute__((aligned(4096)));
static uint8_t um_shadow[UM_LEN];

struct um_pair {
	struct vq_pair p;
	struct ibv_qp_ex *x;
	struct mlx5dv_qp_ex *dx;
};

static void um_destroy_mkey_cb(void *arg)
{
	mlx5dv_destroy_mkey(arg);
}

/* An RC QP with the UMR builders (dv_ops 0: mlx5dv_create_qp without mlx5 send ops). */
static struct ibv_qp *um_qp(struct vq_pair *p, struct ibv_cq *cq, uint32_t max_inline, uint64_t dv_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 1, .max_recv_sge = 4,
			.max_inline_data = max_inline},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = p->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV,
	};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					 .send_ops_flags = dv_ops};
	struct ibv_qp *qp = mlx5dv_create_qp(p->c, &a, &dv);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

/* Two connected RC QPs with the UMR builders; QP 0's send queue is the one the cases post on. */
static void um_pair_ops(struct um_pair *u, uint32_t max_inline, uint64_t dv_ops)
{
	struct vq_pair *p = &u->p;

	memset(u, 0, sizeof(*u));
	p->c = vf_open();
	CHECK(p->c != NULL);
	p->pd = vf_pd(p->c);
	CHECK(p->pd != NULL);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = vq_cq(p->c, 128);
		CHECK(p->cq[i] != NULL);
		p->buf[i] = um_mem[i];
		memset(p->buf[i], 0, UM_LEN);
		p->mr[i] = vq_mr(p->pd, p->buf[i], UM_LEN, VQ_ACCESS_ALL);
		CHECK(p->mr[i] != NULL);
	}
	for (int i = 0; i < 2; i++) {
		p->qp[i] = um_qp(p, p->cq[i], max_inline, dv_ops);
		CHECK(p->qp[i] != NULL);
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(p->qp[i], p->qp[1 - i]->qp_num, 0, 0));
	u->x = ibv_qp_to_qp_ex(p->qp[0]);
	CHECK(u->x != NULL);
	u->dx = mlx5dv_qp_ex_from_ibv_qp_ex(u->x);
	CHECK(u->dx != NULL);
}

static void um_pair(struct um_pair *u, uint32_t max_inline)
{
	um_pair_ops(u, max_inline, MLX5DV_QP_EX_WITH_MR_INTERLEAVED | MLX5DV_QP_EX_WITH_MR_LIST);
}

static struct mlx5dv_mkey *um_mkey(struct ibv_pd *pd, uint16_t entries, uint32_t flags)
{
	struct mlx5dv_mkey_init_attr a = {.pd = pd, .create_flags = flags, .max_entries = entries};
	struct mlx5dv_mkey *m = mlx5dv_create_mkey(&a);

	if (m != NULL)
		th_defer(um_destroy_mkey_cb, m);
	return m;
}

static int um_interleaved(struct um_pair *u, uint64_t id, unsigned int flags, struct mlx5dv_mkey *m, uint32_t access,
			  uint32_t repeat, uint16_t n, struct mlx5dv_mr_interleaved *d)
{
	ibv_wr_start(u->x);
	u->x->wr_id = id;
	u->x->wr_flags = flags;
	mlx5dv_wr_mr_interleaved(u->dx, m, access, repeat, n, d);
	return ibv_wr_complete(u->x);
}

static int um_list(struct um_pair *u, uint64_t id, unsigned int flags, struct mlx5dv_mkey *m, uint32_t access,
		   uint16_t n, struct ibv_sge *s)
{
	ibv_wr_start(u->x);
	u->x->wr_id = id;
	u->x->wr_flags = flags;
	mlx5dv_wr_mr_list(u->dx, m, access, n, s);
	return ibv_wr_complete(u->x);
}

static int um_local_inv(struct um_pair *u, uint64_t id, uint32_t key)
{
	ibv_wr_start(u->x);
	u->x->wr_id = id;
	u->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(u->x, key);
	return ibv_wr_complete(u->x);
}

/* One data work request on QP 0: op WRITE / READ / SEND (with invalidate when inv != 0). */
static int um_post(struct um_pair *u, enum ibv_wr_opcode op, uint64_t id, uint32_t lkey, uint64_t laddr, uint32_t len,
		   uint32_t rkey, uint64_t raddr)
{
	ibv_wr_start(u->x);
	u->x->wr_id = id;
	u->x->wr_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_RDMA_WRITE)
		ibv_wr_rdma_write(u->x, rkey, raddr);
	else if (op == IBV_WR_RDMA_READ)
		ibv_wr_rdma_read(u->x, rkey, raddr);
	else if (op == IBV_WR_SEND_WITH_INV)
		ibv_wr_send_inv(u->x, rkey);
	else
		ibv_wr_send(u->x);
	ibv_wr_set_sge(u->x, lkey, laddr, len);
	return ibv_wr_complete(u->x);
}

static int um_recv(struct ibv_qp *qp, uint64_t id, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static void um_expect(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st, int op)
{
	struct ibv_wc wc;

	memset(&wc, 0xee, sizeof(wc));
	CHECK(vq_poll1(cq, &wc) == 1);
	if (wc.wr_id != id || wc.status != st)
		TH_FAIL("wr_id %llu status %s, expected %llu %s", (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), (unsigned long long)id, ibv_wc_status_str(st));
	CHECK(wc.wr_id == id && wc.status == st);
	if (st == IBV_WC_SUCCESS)
		CHECK((int)wc.opcode == op);
}

static void um_no_cqe(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
}

/* ---- creation ---- */

static void test_create_mkey(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd, *pd2;
	struct mlx5dv_mkey_init_attr a;
	struct mlx5dv_mkey *m;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	errno = 0;
	CHECK(mlx5dv_create_mkey(NULL) == NULL && errno == EINVAL);
	a = (struct mlx5dv_mkey_init_attr){.pd = pd, .create_flags = 0, .max_entries = 4};
	CHECK(mlx5dv_create_mkey(&a) == NULL && errno == EOPNOTSUPP);
	a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | (1u << 9);
	CHECK(mlx5dv_create_mkey(&a) == NULL && errno == EOPNOTSUPP);
	a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE;
	CHECK(mlx5dv_create_mkey(&a) == NULL && errno == EINVAL);
	a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
	a.max_entries = 0;
	CHECK(mlx5dv_create_mkey(&a) == NULL && errno == EINVAL);
	a.max_entries = 5;
	m = mlx5dv_create_mkey(&a);
	CHECK(m != NULL);
	CHECK(a.max_entries == 8); /* rounded up to a multiple of 4 and written back */
	CHECK(m->lkey == m->rkey && m->lkey != 0);
	/* The PD holds while the mkey lives; a second PD is free to go. */
	pd2 = ibv_alloc_pd(c);
	CHECK(pd2 != NULL);
	CHECK_OK(ibv_dealloc_pd(pd2));
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	CHECK_OK(mlx5dv_destroy_mkey(m));
	CHECK(mlx5dv_destroy_mkey(NULL) == EINVAL);
}

static void test_create_qp(void)
{
	struct vq_pair p;
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					 .send_ops_flags = 1ull << 20}; /* no mlx5 send op */
	struct mlx5dv_mkey *m;
	struct ibv_qp *qp;
	struct ibv_qp_ex *x;

	memset(&p, 0, sizeof(p));
	p.c = vf_open();
	CHECK(p.c != NULL);
	p.pd = vf_pd(p.c);
	CHECK(p.pd != NULL);
	p.cq[0] = vq_cq(p.c, 16);
	CHECK(p.cq[0] != NULL);
	a = (struct ibv_qp_init_attr_ex){.send_cq = p.cq[0], .recv_cq = p.cq[0], .qp_type = IBV_QPT_RC,
					  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = p.pd,
					  .send_ops_flags = IBV_QP_EX_WITH_SEND};
	errno = 0;
	CHECK(mlx5dv_create_qp(p.c, &a, &dv) == NULL && errno == EOPNOTSUPP);
	a.qp_type = IBV_QPT_UD;
	dv.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST;
	CHECK(mlx5dv_create_qp(p.c, &a, &dv) == NULL && errno == EOPNOTSUPP);
	CHECK(mlx5dv_create_qp(NULL, &a, &dv) == NULL && errno == EINVAL);
	/* ibv_create_qp_ex cannot ask for the mlx5 builders: they refuse. */
	a.qp_type = IBV_QPT_RC;
	qp = ibv_create_qp_ex(p.c, &a);
	CHECK(qp != NULL);
	th_defer(vq_destroy_qp_cb, qp);
	CHECK_OK(vq_up(qp, qp->qp_num, 0, 0)); /* in RESET every session fails EINVAL, as mlx5's */
	x = ibv_qp_to_qp_ex(qp);
	CHECK(x != NULL);
	m = um_mkey(p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	{
		struct ibv_sge s = {.addr = 0, .length = 8, .lkey = 1};

		ibv_wr_start(x);
		x->wr_flags = IBV_SEND_INLINE;
		mlx5dv_wr_mr_list(mlx5dv_qp_ex_from_ibv_qp_ex(x), m, 0, 1, &s);
		CHECK(ibv_wr_complete(x) == EOPNOTSUPP);
	}
	um_no_cqe(p.cq[0]);
}

/* ---- builder refusals: ibv_wr_complete returns the error, nothing is posted ---- */

static void test_builder_errors(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct mlx5dv_mr_interleaved d[5];
	struct ibv_sge s[5];

	um_pair(&u, 0);
	m = um_mkey(u.p.pd, 16, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	for (int i = 0; i < 5; i++) {
		d[i] = (struct mlx5dv_mr_interleaved){.addr = (uintptr_t)u.p.buf[1] + i * UM_REGION, .bytes_count = 8,
						      .bytes_skip = 8, .lkey = u.p.mr[1]->lkey};
		s[i] = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1] + i * UM_REGION, .length = 8,
					.lkey = u.p.mr[1]->lkey};
	}
	/* IBV_SEND_INLINE is required (mlx5 records EOPNOTSUPP). */
	CHECK(um_interleaved(&u, 1, IBV_SEND_SIGNALED, m, 0, 2, 1, d) == EOPNOTSUPP);
	CHECK(um_list(&u, 1, IBV_SEND_SIGNALED, m, 0, 1, s) == EOPNOTSUPP);
	/* Access flags beyond local write, remote read/write/atomic. */
	CHECK(um_list(&u, 1, IBV_SEND_INLINE, m, IBV_ACCESS_MW_BIND, 1, s) == EINVAL);
	CHECK(um_list(&u, 1, IBV_SEND_INLINE, NULL, 0, 1, s) == EINVAL);
	/* The default WQE holds 3 interleaved entries, 4 list entries. */
	CHECK(um_interleaved(&u, 1, IBV_SEND_INLINE, m, 0, 2, 4, d) == ENOMEM);
	CHECK(um_list(&u, 1, IBV_SEND_INLINE, m, 0, 5, s) == ENOMEM);
	/* A block or stride beyond the entry's 16-bit fields. */
	d[0].bytes_count = 70000;
	CHECK(um_interleaved(&u, 1, IBV_SEND_INLINE, m, 0, 2, 1, d) == EINVAL);
	d[0].bytes_count = 8;
	um_no_cqe(u.p.cq[0]);
	/* At the limits they go through. */
	CHECK_OK(um_interleaved(&u, 2, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, 0, 2, 3, d));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	CHECK_OK(um_local_inv(&u, 3, m->lkey));
	um_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	CHECK_OK(um_list(&u, 4, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, 0, 4, s));
	um_expect(u.p.cq[0], 4, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
}

/* A larger max_inline_data makes room for more entries; the mkey's entries still bound them. */
static void test_entry_limits(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct mlx5dv_mr_interleaved d[16];
	struct ibv_sge s[16];

	um_pair(&u, 256);
	m = um_mkey(u.p.pd, 8, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	for (int i = 0; i < 16; i++) {
		d[i] = (struct mlx5dv_mr_interleaved){.addr = (uintptr_t)u.p.buf[1] + i * 64, .bytes_count = 4,
						      .bytes_skip = 4, .lkey = u.p.mr[1]->lkey};
		s[i] = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1] + i * 64, .length = 4, .lkey = u.p.mr[1]->lkey};
	}
	CHECK(um_list(&u, 1, IBV_SEND_INLINE, m, 0, 9, s) == ENOMEM); /* the mkey has 8 */
	CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, 0, 8, s));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	CHECK_OK(um_local_inv(&u, 2, m->lkey));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	CHECK_OK(um_interleaved(&u, 3, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, 0, 2, 7, d));
	um_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	CHECK_OK(um_local_inv(&u, 4, m->lkey));
	um_expect(u.p.cq[0], 4, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	/* 8 interleaved entries need 9 translations: the device refuses the UMR. */
	CHECK_OK(um_interleaved(&u, 5, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, 0, 2, 8, d));
	um_expect(u.p.cq[0], 5, IBV_WC_MW_BIND_ERR, 0);
}

/* ---- device refusals ---- */

static void test_reregister_needs_local_inv(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s = {0};

	um_pair(&u, 0);
	m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, IBV_ACCESS_REMOTE_WRITE, 1, &s));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	/* Unsignaled: the error completes anyway, and the pattern stays as it was. */
	s.length = 8;
	CHECK_OK(um_list(&u, 2, IBV_SEND_INLINE, m, IBV_ACCESS_REMOTE_WRITE, 1, &s));
	um_expect(u.p.cq[0], 2, IBV_WC_MW_BIND_ERR, 0);
}

static void test_reregister_after_local_inv(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s;

	um_pair(&u, 0);
	m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	memset(u.p.buf[0] + UM_PLAIN, 0x5a, 64);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 16, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, IBV_ACCESS_REMOTE_WRITE, 1, &s));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	CHECK_OK(um_local_inv(&u, 2, m->lkey));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	s.addr = (uintptr_t)u.p.buf[1] + 100;
	s.length = 32;
	CHECK_OK(um_list(&u, 3, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, IBV_ACCESS_REMOTE_WRITE, 1, &s));
	um_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	/* The new pattern: 32 bytes at offset 100 of buffer 1. */
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 4, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0] + UM_PLAIN, 32, m->rkey, 0));
	um_expect(u.p.cq[0], 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(u.p.buf[1][99] == 0 && u.p.buf[1][100] == 0x5a && u.p.buf[1][131] == 0x5a && u.p.buf[1][132] == 0);
	CHECK(u.p.buf[1][0] == 0);
}

/* Entries must be valid keys of the QP's domain, writable locally when the UMR grants a write. */
static void test_entry_key_errors(void)
{
	for (int k = 0; k < 4; k++) {
		struct um_pair u;
		struct mlx5dv_mkey *m;
		struct ibv_sge s;
		struct ibv_mr *ro;
		struct ibv_pd *pd2;
		uint32_t access = IBV_ACCESS_REMOTE_WRITE;

		um_pair(&u, 0);
		m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
		CHECK(m != NULL);
		s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
		if (k == 0) {
			s.lkey = 0x7fff0101u; /* no such key */
		} else if (k == 1) {
			ro = vq_mr(u.p.pd, u.p.buf[1], 4096, 0); /* read-only: no write of any kind through it */
			CHECK(ro != NULL);
			s.lkey = ro->lkey;
		} else if (k == 2) {
			pd2 = vf_pd(u.p.c);
			CHECK(pd2 != NULL);
			ro = vq_mr(pd2, u.p.buf[1], 4096, VQ_ACCESS_ALL);
			CHECK(ro != NULL);
			s.lkey = ro->lkey;
		} else {
			s.addr = (uintptr_t)u.p.buf[1] + UM_LEN - 32; /* past the registration's end */
		}
		CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, access, 1, &s));
		um_expect(u.p.cq[0], 1, IBV_WC_LOC_PROT_ERR, 0);
	}
}

/* ---- data movement ---- */

struct um_pattern {
	bool list;
	uint16_t n;
	uint32_t repeat;
	struct mlx5dv_mr_interleaved d[8];
	struct ibv_sge s[8];
	uint64_t total;
	uint8_t **map; /* data offset -> byte of buffer 1 */
};

static uint32_t um_rand(uint32_t n)
{
	return (uint32_t)(rand() % (int)n);
}

/* A random pattern over buffer 1 (entry i within its own UM_REGION) and its reference map. */
static void um_random_pattern(struct um_pattern *pt, uint8_t *base, uint32_t lkey, uint16_t max_n)
{
	uint64_t o = 0;

	pt->list = um_rand(2) == 0;
	pt->n = (uint16_t)(1 + um_rand(max_n));
	pt->repeat = pt->list ? 1 : 1 + um_rand(8);
	pt->total = 0;
	for (uint16_t i = 0; i < pt->n; i++) {
		uint32_t cnt = pt->list ? 1 + um_rand(UM_REGION) : 1 + um_rand(64);
		uint32_t skip = um_rand(64);

		pt->d[i] = (struct mlx5dv_mr_interleaved){.addr = (uintptr_t)base + i * UM_REGION, .bytes_count = cnt,
							  .bytes_skip = skip, .lkey = lkey};
		pt->s[i] = (struct ibv_sge){.addr = (uintptr_t)base + i * UM_REGION, .length = cnt, .lkey = lkey};
		pt->total += cnt;
	}
	pt->total *= pt->repeat;
	pt->map = malloc(pt->total * sizeof(*pt->map));
	for (uint32_t r = 0; r < pt->repeat; r++)
		for (uint16_t i = 0; i < pt->n; i++)
			for (uint32_t b = 0; b < pt->d[i].bytes_count; b++)
				pt->map[o++] = base + i * UM_REGION + (uint64_t)r * (pt->d[i].bytes_count + pt->d[i].bytes_skip) + b;
}

static int um_register(struct um_pair *u, uint64_t id, struct mlx5dv_mkey *m, uint32_t access,
		       struct um_pattern *pt)
{
	unsigned int f = IBV_SEND_INLINE | IBV_SEND_SIGNALED;

	if (pt->list)
		return um_list(u, id, f, m, access, pt->n, pt->s);
	return um_interleaved(u, id, f, m, access, pt->repeat, pt->n, pt->d);
}

/*
 * Random patterns, offsets and lengths; WRITE and READ with the mkey as rkey
 * and as lkey, SEND into a receive through the mkey; every byte of both
 * buffers compared with the reference after each.
 */
static void test_random_io(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	unsigned int seed = getenv("SOFTDPU_UMR_SEED") ? (unsigned int)strtoul(getenv("SOFTDPU_UMR_SEED"), NULL, 0) : 12345u;
	uint32_t access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	static uint8_t shadow0[UM_LEN];
	uint64_t id = 1;

	printf("test_random_io seed %u\n", seed);
	srand(seed);
	um_pair(&u, 128);
	m = um_mkey(u.p.pd, 9, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT); /* 8 interleaved entries and the header */
	CHECK(m != NULL);
	for (int it = 0; it < UM_ITER; it++) {
		struct um_pattern pt;
		uint32_t op = um_rand(4), len, off;
		uint8_t *plain = u.p.buf[0] + UM_PLAIN + um_rand(1024);
		int bad = 0;

		um_random_pattern(&pt, u.p.buf[1], u.p.mr[1]->lkey, 8);
		CHECK(pt.map != NULL);
		for (uint32_t i = 0; i < UM_LEN; i++) {
			u.p.buf[0][i] = (uint8_t)rand();
			u.p.buf[1][i] = (uint8_t)rand();
		}
		memcpy(um_shadow, u.p.buf[1], UM_LEN);
		memcpy(shadow0, u.p.buf[0], UM_LEN);
		CHECK_OK(um_register(&u, id, m, access, &pt));
		um_expect(u.p.cq[0], id++, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
		off = um_rand((uint32_t)pt.total);
		len = 1 + um_rand((uint32_t)(pt.total - off));
		if (op == 0) { /* WRITE: plain -> pattern (rkey) */
			CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, id, u.p.mr[0]->lkey, (uintptr_t)plain, len, m->rkey, off));
			um_expect(u.p.cq[0], id++, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
			for (uint32_t i = 0; i < len; i++)
				*(um_shadow + (pt.map[off + i] - u.p.buf[1])) = plain[i];
		} else if (op == 1) { /* READ: pattern (rkey) -> plain */
			CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, id, u.p.mr[0]->lkey, (uintptr_t)plain, len, m->rkey, off));
			um_expect(u.p.cq[0], id++, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
			for (uint32_t i = 0; i < len; i++)
				shadow0[plain - u.p.buf[0] + i] = *pt.map[off + i];
		} else if (op == 2) { /* SEND: plain -> a receive through the pattern (lkey) */
			CHECK_OK(um_recv(u.p.qp[1], id + 1000000, m->lkey, off, len));
			CHECK_OK(um_post(&u, IBV_WR_SEND, id, u.p.mr[0]->lkey, (uintptr_t)plain, len, 0, 0));
			um_expect(u.p.cq[0], id, IBV_WC_SUCCESS, IBV_WC_SEND);
			um_expect(u.p.cq[1], id + 1000000, IBV_WC_SUCCESS, IBV_WC_RECV);
			id++;
			for (uint32_t i = 0; i < len; i++)
				*(um_shadow + (pt.map[off + i] - u.p.buf[1])) = plain[i];
		} else { /* WRITE gathering from the pattern (lkey) -> plain */
			CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, id, m->lkey, off, len, u.p.mr[0]->rkey, (uintptr_t)plain));
			um_expect(u.p.cq[0], id++, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
			for (uint32_t i = 0; i < len; i++)
				shadow0[plain - u.p.buf[0] + i] = *pt.map[off + i];
		}
		bad = memcmp(um_shadow, u.p.buf[1], UM_LEN) != 0 || memcmp(shadow0, u.p.buf[0], UM_LEN) != 0;
		if (bad)
			TH_FAIL("iteration %d: op %u %s n %u repeat %u off %u len %u: bytes differ", it, op,
				pt.list ? "list" : "interleaved", pt.n, pt.repeat, off, len);
		free(pt.map);
		CHECK(!bad);
		CHECK_OK(um_local_inv(&u, id, m->lkey));
		um_expect(u.p.cq[0], id++, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	}
}

/* An access past the pattern's data fails and leaves memory untouched. */
static void test_beyond_extent(void)
{
	for (int k = 0; k < 2; k++) {
		struct um_pair u;
		struct mlx5dv_mkey *m;
		struct mlx5dv_mr_interleaved d = {0};

		um_pair(&u, 0);
		m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
		CHECK(m != NULL);
		d = (struct mlx5dv_mr_interleaved){.addr = (uintptr_t)u.p.buf[1], .bytes_count = 16, .bytes_skip = 48,
						   .lkey = u.p.mr[1]->lkey};
		memset(u.p.buf[0], 0x33, UM_LEN);
		/* 4 x 16 = 64 data bytes; 60 + 8 runs past them. */
		CHECK_OK(um_interleaved(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 4, 1, &d));
		um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
		if (k == 0) {
			CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 60));
			um_expect(u.p.cq[0], 2, IBV_WC_REM_ACCESS_ERR, 0);
		} else {
			CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 2, m->lkey, 60, 8, u.p.mr[1]->rkey, (uintptr_t)u.p.buf[1]));
			um_expect(u.p.cq[0], 2, IBV_WC_LOC_PROT_ERR, 0);
		}
		for (uint32_t i = 0; i < UM_LEN; i++)
			CHECK(u.p.buf[1][i] == 0);
	}
}

/* The rights the UMR gave are the ones checked on use. */
static void test_access_rights(void)
{
	for (int k = 0; k < 3; k++) {
		struct um_pair u;
		struct mlx5dv_mkey *m;
		struct ibv_sge s;
		uint32_t access = k == 0 ? IBV_ACCESS_REMOTE_READ : k == 1 ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;

		um_pair(&u, 0);
		m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
		CHECK(m != NULL);
		memset(u.p.buf[1], 0x44, 128);
		s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 128, .lkey = u.p.mr[1]->lkey};
		CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, access, 1, &s));
		um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
		if (k == 0) { /* read-only: READ works, WRITE is a remote access error */
			CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 128, m->rkey, 0));
			um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
			CHECK(u.p.buf[0][0] == 0x44 && u.p.buf[0][127] == 0x44);
			CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0] + 1024, 8,
					 m->rkey, 0));
			um_expect(u.p.cq[0], 3, IBV_WC_REM_ACCESS_ERR, 0);
			CHECK(u.p.buf[1][0] == 0x44);
		} else if (k == 1) { /* write-only: READ is a remote access error */
			CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
			um_expect(u.p.cq[0], 2, IBV_WC_REM_ACCESS_ERR, 0);
			CHECK(u.p.buf[0][0] == 0);
		} else { /* no local write: a READ landing through it is a local protection error */
			CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 2, m->lkey, 0, 8, u.p.mr[0]->rkey, (uintptr_t)u.p.buf[0]));
			um_expect(u.p.cq[0], 2, IBV_WC_LOC_PROT_ERR, 0);
			CHECK(u.p.buf[1][0] == 0x44);
		}
	}
}

/* After LOCAL_INV the mkey answers nothing until a new UMR. */
static void test_use_after_local_inv(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s;

	um_pair(&u, 0);
	m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	/* Created free: unusable before any UMR. */
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 1, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
	um_expect(u.p.cq[0], 1, IBV_WC_REM_ACCESS_ERR, 0);
	um_pair(&u, 0);
	m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, IBV_ACCESS_REMOTE_WRITE, 1, &s));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	CHECK_OK(um_local_inv(&u, 2, m->lkey));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	memset(u.p.buf[0], 0x11, 8);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
	um_expect(u.p.cq[0], 3, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(u.p.buf[1][0] == 0);
}

/* SEND with invalidate frees the mkey only when it was created with remote invalidation. */
static void test_remote_invalidate(void)
{
	for (int k = 0; k < 2; k++) {
		struct um_pair u;
		struct mlx5dv_mkey *m;
		struct ibv_sge s;
		uint32_t flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
				 (k == 1 ? MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE : 0);

		um_pair(&u, 0);
		m = um_mkey(u.p.pd, 4, flags);
		CHECK(m != NULL);
		s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
		CHECK_OK(um_list(&u, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, IBV_ACCESS_REMOTE_WRITE, 1, &s));
		um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
		CHECK_OK(um_recv(u.p.qp[1], 50, u.p.mr[1]->lkey, (uintptr_t)u.p.buf[1] + UM_PLAIN, 64));
		CHECK_OK(um_post(&u, IBV_WR_SEND_WITH_INV, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
		if (k == 0) {
			um_expect(u.p.cq[0], 2, IBV_WC_REM_INV_REQ_ERR, 0);
			continue;
		}
		um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND);
		um_expect(u.p.cq[1], 50, IBV_WC_SUCCESS, IBV_WC_RECV);
		CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
		um_expect(u.p.cq[0], 3, IBV_WC_REM_ACCESS_ERR, 0);
	}
}

/* The completion opcode read through an extended CQ. */
static void test_cq_ex_opcode(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s;
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct ibv_cq_ex *cq;
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_qp *q[2];
	int rc = ENOENT;

	memset(&u, 0, sizeof(u));
	u.p.c = vf_open();
	CHECK(u.p.c != NULL);
	u.p.pd = vf_pd(u.p.c);
	CHECK(u.p.pd != NULL);
	cq = ibv_create_cq_ex(u.p.c, &ca);
	CHECK(cq != NULL);
	th_defer(vq_destroy_cq_cb, ibv_cq_ex_to_cq(cq));
	u.p.buf[1] = um_mem[1];
	u.p.mr[1] = vq_mr(u.p.pd, u.p.buf[1], UM_LEN, VQ_ACCESS_ALL);
	CHECK(u.p.mr[1] != NULL);
	for (int i = 0; i < 2; i++) {
		q[i] = um_qp(&u.p, ibv_cq_ex_to_cq(cq), 0, MLX5DV_QP_EX_WITH_MR_LIST);
		CHECK(q[i] != NULL);
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(q[i], q[1 - i]->qp_num, 0, 0));
	u.x = ibv_qp_to_qp_ex(q[0]);
	u.dx = mlx5dv_qp_ex_from_ibv_qp_ex(u.x);
	m = um_mkey(u.p.pd, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(m != NULL);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_list(&u, 7, IBV_SEND_INLINE | IBV_SEND_SIGNALED, m, 0, 1, &s));
	for (long i = 0; i < VQ_POLL_TRIES && rc == ENOENT; i++)
		rc = ibv_start_poll(cq, &pa);
	CHECK_OK(rc);
	CHECK(cq->wr_id == 7 && cq->status == IBV_WC_SUCCESS);
	CHECK((int)ibv_wc_read_opcode(cq) == MLX5DV_WC_UMR);
	ibv_end_poll(cq);
}

/* ---- mlx5dv_wr_mkey_configure (mlx5dv_wr_mkey_configure(3)) ---- */

/* One configuration: access flags (when access != UM_NO_ACCESS) then a list or interleaved layout. */
#define UM_NO_ACCESS 0xffffffffu

static int um_conf(struct um_pair *u, uint64_t id, struct mlx5dv_mkey *m, uint8_t nset, uint32_t access,
		   uint16_t nl, const struct ibv_sge *sl, uint32_t repeat, uint16_t ni,
		   const struct mlx5dv_mr_interleaved *il)
{
	struct mlx5dv_mkey_conf_attr ca = {0};

	ibv_wr_start(u->x);
	u->x->wr_id = id;
	u->x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u->dx, m, nset, &ca);
	if (access != UM_NO_ACCESS)
		mlx5dv_wr_set_mkey_access_flags(u->dx, access);
	if (nl != 0)
		mlx5dv_wr_set_mkey_layout_list(u->dx, nl, sl);
	if (ni != 0)
		mlx5dv_wr_set_mkey_layout_interleaved(u->dx, repeat, ni, il);
	return ibv_wr_complete(u->x);
}

static void um_conf_pair(struct um_pair *u, struct mlx5dv_mkey **m, uint32_t flags)
{
	um_pair_ops(u, 0, MLX5DV_QP_EX_WITH_MKEY_CONFIGURE);
	*m = um_mkey(u->p.pd, 4, flags);
	CHECK(*m != NULL);
}

#define UM_RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* A list layout: a WRITE through the key lands in both pieces, a READ brings them back. */
static void test_conf_list(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *b1;
	struct ibv_sge s[2];

	um_conf_pair(&u, &m, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	b1 = u.p.buf[1];
	s[0] = (struct ibv_sge){.addr = (uintptr_t)b1 + 100, .length = 40, .lkey = u.p.mr[1]->lkey};
	s[1] = (struct ibv_sge){.addr = (uintptr_t)b1 + 4000, .length = 60, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_conf(&u, 1, m, 2, UM_RW, 2, s, 0, 0, NULL));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	for (int i = 0; i < 100; i++)
		u.p.buf[0][i] = (uint8_t)(i + 1);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 100, m->rkey, 0));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(memcmp(b1 + 100, u.p.buf[0], 40) == 0);
	CHECK(memcmp(b1 + 4000, u.p.buf[0] + 40, 60) == 0);
	CHECK(b1[99] == 0 && b1[140] == 0 && b1[3999] == 0 && b1[4060] == 0);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0] + 1000, 100, m->rkey, 0));
	um_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK(memcmp(u.p.buf[0] + 1000, u.p.buf[0], 100) == 0);
}

/* An interleaved layout: 2 repetitions of (16 bytes, skip 16) + (8 bytes). */
static void test_conf_interleaved(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *b1, want[UM_LEN / 16];
	struct mlx5dv_mr_interleaved il[2];

	um_conf_pair(&u, &m, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	b1 = u.p.buf[1];
	il[0] = (struct mlx5dv_mr_interleaved){.addr = (uintptr_t)b1, .bytes_count = 16, .bytes_skip = 16,
					       .lkey = u.p.mr[1]->lkey};
	il[1] = (struct mlx5dv_mr_interleaved){.addr = (uintptr_t)b1 + 1024, .bytes_count = 8, .bytes_skip = 0,
					       .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_conf(&u, 1, m, 2, UM_RW, 0, NULL, 2, 2, il));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	for (int i = 0; i < 48; i++)
		u.p.buf[0][i] = (uint8_t)(0x80 + i);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 48, m->rkey, 0));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	memset(want, 0, sizeof(want));
	memcpy(want, u.p.buf[0], 16);	   /* repetition 0, entry 0 */
	memcpy(want + 32, u.p.buf[0] + 24, 16); /* repetition 1, entry 0: one stride on */
	CHECK(memcmp(b1, want, 64) == 0);
	CHECK(memcmp(b1 + 1024, u.p.buf[0] + 16, 8) == 0);
	CHECK(memcmp(b1 + 1032, u.p.buf[0] + 40, 8) == 0);
	CHECK(b1[1040] == 0);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0] + 1000, 48, m->rkey, 0));
	um_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK(memcmp(u.p.buf[0] + 1000, u.p.buf[0], 48) == 0);
}

/* The access setter's rights are the key's: read-only refuses a WRITE. */
static void test_conf_access(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s;

	um_conf_pair(&u, &m, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	memset(u.p.buf[1], 0x44, 128);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 128, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_conf(&u, 1, m, 2, IBV_ACCESS_REMOTE_READ, 1, &s, 0, 0, NULL));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_READ, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 128, m->rkey, 0));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK(memcmp(u.p.buf[0], u.p.buf[1], 128) == 0);
	memset(u.p.buf[0] + 1024, 0x55, 8);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0] + 1024, 8, m->rkey, 0));
	um_expect(u.p.cq[0], 3, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(u.p.buf[1][0] == 0x44 && u.p.buf[1][7] == 0x44);
}

/* SEND with invalidate of a key created with REMOTE_INVALIDATE: access fails afterwards. */
static void test_conf_remote_invalidate(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s;

	um_conf_pair(&u, &m, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
	CHECK_OK(um_conf(&u, 1, m, 2, UM_RW, 1, &s, 0, 0, NULL));
	um_expect(u.p.cq[0], 1, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
	memset(u.p.buf[0], 0x21, 8);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 2, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
	um_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(u.p.buf[1][0] == 0x21 && u.p.buf[1][7] == 0x21);
	CHECK_OK(um_recv(u.p.qp[1], 50, u.p.mr[1]->lkey, (uintptr_t)u.p.buf[1] + UM_PLAIN, 64));
	CHECK_OK(um_post(&u, IBV_WR_SEND_WITH_INV, 3, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
	um_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	um_expect(u.p.cq[1], 50, IBV_WC_SUCCESS, IBV_WC_RECV);
	memset(u.p.buf[0], 0x22, 8);
	CHECK_OK(um_post(&u, IBV_WR_RDMA_WRITE, 4, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 8, m->rkey, 0));
	um_expect(u.p.cq[0], 4, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(u.p.buf[1][0] == 0x21);
}

/* Refusals at wr_complete, nothing posted: setters fewer or more than announced, flags, signature. */
static void test_conf_errors(void)
{
	struct um_pair u;
	struct mlx5dv_mkey *m;
	struct ibv_sge s;
	struct mlx5dv_mkey_conf_attr ca = {0};
	struct mlx5dv_sig_block_attr sb = {0};

	um_conf_pair(&u, &m, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	s = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1], .length = 64, .lkey = u.p.mr[1]->lkey};
	CHECK_ERR(um_conf(&u, 1, m, 3, UM_RW, 1, &s, 0, 0, NULL), EINVAL); /* too few */
	ibv_wr_start(u.x); /* too many: the WQE closed with the layout */
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	mlx5dv_wr_set_mkey_access_flags(u.dx, UM_RW);
	CHECK_ERR(ibv_wr_complete(u.x), EINVAL);
	CHECK_ERR(um_conf(&u, 3, m, 2, UM_NO_ACCESS, 1, &s, 0, 0, NULL), EINVAL); /* still one short */
	ibv_wr_start(u.x); /* the access setter twice */
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 3, &ca);
	mlx5dv_wr_set_mkey_access_flags(u.dx, UM_RW);
	mlx5dv_wr_set_mkey_access_flags(u.dx, UM_RW);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_ERR(ibv_wr_complete(u.x), EINVAL);
	ibv_wr_start(u.x); /* two layouts */
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 2, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_ERR(ibv_wr_complete(u.x), EINVAL);
	ibv_wr_start(u.x); /* access flags alone: no layout */
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	mlx5dv_wr_set_mkey_access_flags(u.dx, UM_RW);
	CHECK_ERR(ibv_wr_complete(u.x), EOPNOTSUPP);
	ibv_wr_start(u.x); /* a verbs setter is not one of the configuration's */
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	ibv_wr_set_sge(u.x, s.lkey, s.addr, s.length);
	CHECK_ERR(ibv_wr_complete(u.x), EINVAL);
	ibv_wr_start(u.x); /* an mkey setter on a WRITE */
	u.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(u.x, m->rkey, 0);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_ERR(ibv_wr_complete(u.x), EINVAL);
	ca.conf_flags = 2; /* unknown */
	ibv_wr_start(u.x);
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_ERR(ibv_wr_complete(u.x), EOPNOTSUPP);
	ca.conf_flags = 0;
	ca.comp_mask = 1;
	ibv_wr_start(u.x);
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_ERR(ibv_wr_complete(u.x), EOPNOTSUPP);
	ca.comp_mask = 0;
	ibv_wr_start(u.x);
	u.x->wr_flags = IBV_SEND_SIGNALED; /* not inline */
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_ERR(ibv_wr_complete(u.x), EOPNOTSUPP);
	ibv_wr_start(u.x);
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 2, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	mlx5dv_wr_set_mkey_sig_block(u.dx, &sb); /* a key created without BLOCK_SIGNATURE: EINVAL, as mlx5 */
	CHECK_ERR(ibv_wr_complete(u.x), EINVAL);
	um_no_cqe(u.p.cq[0]);
	/* The queue is as it was: a good configuration still goes; RESET_SIG_ATTR on a key without signature resets nothing. */
	ca.conf_flags = MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR;
	ibv_wr_start(u.x);
	u.x->wr_id = 9;
	u.x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u.dx, m, 1, &ca);
	mlx5dv_wr_set_mkey_layout_list(u.dx, 1, &s);
	CHECK_OK(ibv_wr_complete(u.x));
	um_expect(u.p.cq[0], 9, IBV_WC_SUCCESS, MLX5DV_WC_UMR);
}

int main(void)
{
	RUN(test_create_mkey);
	RUN(test_create_qp);
	RUN(test_builder_errors);
	RUN(test_entry_limits);
	RUN(test_reregister_needs_local_inv);
	RUN(test_reregister_after_local_inv);
	RUN(test_entry_key_errors);
	RUN(test_random_io);
	RUN(test_beyond_extent);
	RUN(test_access_rights);
	RUN(test_use_after_local_inv);
	RUN(test_remote_invalidate);
	RUN(test_cq_ex_opcode);
	RUN(test_conf_list);
	RUN(test_conf_interleaved);
	RUN(test_conf_access);
	RUN(test_conf_remote_invalidate);
	RUN(test_conf_errors);
	return th_summary("test_verbs_umr");
}
