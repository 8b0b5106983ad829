/*
 * FlexIO windows, outboxes and device MKeys with a real device image
 * (tests/flexio/fx_window_dev.c): device code reading and writing host
 * memory through a window under an MR's key, and every refusal (unknown
 * window, a key of another domain, out of bounds, no write right) leaving
 * host memory as it was; outbox ids; a host RC QP writing and reading DPA
 * memory through a device MKey; bad arguments of every host call; and a
 * process destroyed with objects left (clean under ASan).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio-dev/flexio_dev.h>
#include <libflexio/flexio.h>

#include "verbs_qp_fixture.h"

extern struct flexio_app *fx_window_dev;
flexio_func_t fxw_acquire, fxw_sum, fxw_fill, fxw_rekey, fxw_copy_to, fxw_copy_from, fxw_bad_args, fxw_outbox,
	fxw_dev_sum;

/* What the device RPCs return (fx_window_dev.c). */
#define FXW_NULL_PTR 0x100u
#define FXW_REFUSED UINT64_MAX
#define OK FLEXIO_DEV_STATUS_SUCCESS
#define REFUSED (FLEXIO_DEV_STATUS_FAILED | FXW_NULL_PTR) /* a failed acquire, its pointer NULL */

#define BUF_LEN 4096

static struct ibv_context *ctx;

static void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
}

static void proc_destroy_cb(void *p)
{
	flexio_process_destroy(p);
}

static struct flexio_process *proc_new(void)
{
	struct flexio_process *p = NULL;

	if (flexio_process_create(ctx, fx_window_dev, NULL, &p) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	th_defer(proc_destroy_cb, p);
	return p;
}

static void window_destroy_cb(void *w)
{
	flexio_window_destroy(w);
}

static struct flexio_window *window_new(struct flexio_process *p, struct ibv_pd *pd)
{
	struct flexio_window *w = NULL;

	if (flexio_window_create(p, pd, &w) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	th_defer(window_destroy_cb, w);
	return w;
}

static void mkey_destroy_cb(void *m)
{
	flexio_device_mkey_destroy(m);
}

/* A zeroed host buffer of len bytes, freed when the case ends. */
static uint8_t *host_buf(size_t len)
{
	uint8_t *b = calloc(1, len);

	if (b != NULL)
		th_defer(free, b);
	return b;
}

/* The sum the device RPCs compute: each byte weighted by its position from 1. */
static uint64_t wsum(const uint8_t *b, size_t len)
{
	uint64_t s = 0;

	for (size_t i = 0; i < len; i++)
		s += b[i] * (i + 1u);
	return s;
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void fill(uint8_t *b, size_t len, unsigned mul, unsigned add)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * mul + add);
}

/* An RPC's result, or UINT64_MAX - 1 when the call itself failed. */
static uint64_t call_ret;
#define CALL(p, fn, ...)                                                                                       \
	(flexio_process_call((p), (fn), &call_ret, __VA_ARGS__) == FLEXIO_STATUS_SUCCESS ? call_ret : UINT64_MAX - 1)

/* Device code reads and writes a host buffer through a window, by pointer and by copy. */
static void test_window_round_trip(void)
{
	struct flexio_process *p = proc_new();
	struct ibv_pd *pd = flexio_process_get_pd(p);
	uint8_t *buf = host_buf(BUF_LEN), src[256];
	struct flexio_window *w, *w2;
	flexio_uintptr_t d = 0, d2 = 0;
	struct ibv_mr *mr;
	uint32_t id;

	CHECK(p != NULL && pd != NULL && buf != NULL);
	fill(buf, BUF_LEN, 13, 5);
	mr = vq_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	w = window_new(p, pd);
	CHECK(w != NULL);
	id = flexio_window_get_id(w);
	CHECK(id != 0);
	w2 = window_new(p, pd);
	CHECK(w2 != NULL && flexio_window_get_id(w2) > id); /* ids are never reused in a process */

	/* Reads through the acquired pointer, from the start and from inside. */
	CHECK(CALL(p, fxw_sum, id, mr->lkey, addr(buf), (uint32_t)BUF_LEN) == wsum(buf, BUF_LEN));
	CHECK(CALL(p, fxw_sum, id, mr->lkey, addr(buf + 100), (uint32_t)50) == wsum(buf + 100, 50));
	CHECK(CALL(p, fxw_acquire, id, mr->lkey, addr(buf + BUF_LEN - 1)) == OK); /* the last byte */

	/* Writes through the pointer: exactly the bytes asked. */
	CHECK(CALL(p, fxw_fill, id, mr->lkey, addr(buf + 10), (uint32_t)200, (uint8_t)7) == OK);
	for (uint32_t i = 0; i < BUF_LEN; i++)
		CHECK(buf[i] == (i >= 10 && i < 210 ? (uint8_t)(7 + 3 * (i - 10)) : (uint8_t)(i * 13 + 5)));

	/* copy_to_host: DPA memory to the host buffer. */
	CHECK(flexio_buf_dev_alloc(p, sizeof(src), &d) == FLEXIO_STATUS_SUCCESS);
	fill(src, sizeof(src), 255, 9);
	CHECK(flexio_host2dev_memcpy(p, src, sizeof(src), d) == FLEXIO_STATUS_SUCCESS);
	CHECK(CALL(p, fxw_copy_to, id, mr->lkey, addr(buf + 1000), d, (uint32_t)sizeof(src)) == OK);
	CHECK(memcmp(buf + 1000, src, sizeof(src)) == 0);
	CHECK(buf[999] == (uint8_t)(999 * 13 + 5) && buf[1256] == (uint8_t)(1256 * 13 + 5));
	CHECK(CALL(p, fxw_copy_to, id, mr->lkey, addr(buf + BUF_LEN - 8), d, (uint32_t)8) == OK); /* to the end */
	CHECK(memcmp(buf + BUF_LEN - 8, src, 8) == 0);

	/* copy_from_host: the host buffer to DPA memory, read back by device code. */
	CHECK(flexio_buf_dev_alloc(p, 256, &d2) == FLEXIO_STATUS_SUCCESS);
	CHECK(CALL(p, fxw_copy_from, id, mr->lkey, d2, addr(buf + 2000), (uint32_t)256) == OK);
	CHECK(CALL(p, fxw_dev_sum, d2, (uint32_t)256) == wsum(buf + 2000, 256));

	/* A destroyed window's id names nothing. */
	CHECK(flexio_window_destroy(w) == FLEXIO_STATUS_SUCCESS);
	th_undefer(window_destroy_cb, w);
	CHECK(CALL(p, fxw_acquire, id, mr->lkey, addr(buf)) == REFUSED);
	CHECK(CALL(p, fxw_acquire, flexio_window_get_id(w2), mr->lkey, addr(buf)) == OK);
}

static void dealloc_pd_cb(void *pd)
{
	ibv_dealloc_pd(pd);
}

/* Every refused access leaves host memory as it was, and says FAILED. */
static void test_window_refusals(void)
{
	struct flexio_process *p = proc_new();
	struct ibv_pd *pd = flexio_process_get_pd(p), *pd2 = ibv_alloc_pd(ctx);
	uint8_t *buf = host_buf(BUF_LEN), *buf2 = host_buf(256), *ro = host_buf(256), *snap = host_buf(BUF_LEN);
	uint8_t src[64];
	struct ibv_mr *mr, *mr2, *mro, *gone;
	struct flexio_window *w, *w2;
	flexio_uintptr_t d = 0;
	uint32_t id;

	CHECK(p != NULL && pd2 != NULL && buf != NULL && buf2 != NULL && ro != NULL && snap != NULL);
	th_defer(dealloc_pd_cb, pd2);
	fill(buf, BUF_LEN, 7, 1);
	fill(buf2, 256, 5, 2);
	fill(ro, 256, 3, 3);
	mr = vq_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	mr2 = vq_mr(pd2, buf2, 256, IBV_ACCESS_LOCAL_WRITE);
	mro = vq_mr(pd, ro, 256, 0); /* local read only */
	w = window_new(p, pd);
	w2 = window_new(p, pd2);
	CHECK(mr != NULL && mr2 != NULL && mro != NULL && w != NULL && w2 != NULL);
	id = flexio_window_get_id(w);
	CHECK(flexio_buf_dev_alloc(p, sizeof(src), &d) == FLEXIO_STATUS_SUCCESS);
	fill(src, sizeof(src), 11, 0xa0);
	CHECK(flexio_host2dev_memcpy(p, src, sizeof(src), d) == FLEXIO_STATUS_SUCCESS);
	memcpy(snap, buf, BUF_LEN);

	/* Unknown windows: an id never handed out, and 0. */
	CHECK(CALL(p, fxw_acquire, id + 1000, mr->lkey, addr(buf)) == REFUSED);
	CHECK(CALL(p, fxw_acquire, (uint32_t)0, mr->lkey, addr(buf)) == REFUSED);
	CHECK(CALL(p, fxw_copy_to, id + 1000, mr->lkey, addr(buf), d, (uint32_t)16) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_sum, id + 1000, mr->lkey, addr(buf), (uint32_t)4) == FXW_REFUSED);

	/* A key of another domain: refused by this window; the window of its own domain takes it. */
	CHECK(CALL(p, fxw_acquire, id, mr2->lkey, addr(buf2)) == REFUSED);
	CHECK(CALL(p, fxw_copy_to, id, mr2->lkey, addr(buf2), d, (uint32_t)16) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_acquire, flexio_window_get_id(w2), mr->lkey, addr(buf)) == REFUSED);
	CHECK(CALL(p, fxw_sum, flexio_window_get_id(w2), mr2->lkey, addr(buf2), (uint32_t)256) == wsum(buf2, 256));

	/* Outside the MR: before it, one past its end, straddling its end, another buffer; a key that is gone. */
	CHECK(CALL(p, fxw_acquire, id, mr->lkey, addr(buf) - 1) == REFUSED);
	CHECK(CALL(p, fxw_acquire, id, mr->lkey, addr(buf + BUF_LEN)) == REFUSED);
	CHECK(CALL(p, fxw_acquire, id, mr->lkey, addr(buf2)) == REFUSED);
	CHECK(CALL(p, fxw_copy_to, id, mr->lkey, addr(buf + BUF_LEN - 4), d, (uint32_t)8) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_copy_to, id, mr->lkey, addr(buf) - 4, d, (uint32_t)8) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_copy_from, id, mr->lkey, d, addr(buf + BUF_LEN - 4), (uint32_t)8) ==
	      FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_dev_sum, d, (uint32_t)sizeof(src)) == wsum(src, sizeof(src))); /* DPA memory unchanged */
	gone = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(gone != NULL && CALL(p, fxw_acquire, id, gone->lkey, addr(buf)) == OK);
	{
		uint32_t stale = gone->lkey;

		CHECK(ibv_dereg_mr(gone) == 0);
		CHECK(CALL(p, fxw_acquire, id, stale, addr(buf)) == REFUSED);
		CHECK(CALL(p, fxw_copy_to, id, stale, addr(buf), d, (uint32_t)16) == FLEXIO_DEV_STATUS_FAILED);
	}

	/* A read-only MR: read by pointer and by copy, never written by copy. */
	CHECK(CALL(p, fxw_acquire, id, mro->lkey, addr(ro)) == OK);
	CHECK(CALL(p, fxw_sum, id, mro->lkey, addr(ro), (uint32_t)256) == wsum(ro, 256));
	CHECK(CALL(p, fxw_copy_to, id, mro->lkey, addr(ro), d, (uint32_t)64) == FLEXIO_DEV_STATUS_FAILED);
	for (uint32_t i = 0; i < 256; i++)
		CHECK(ro[i] == (uint8_t)(i * 3 + 3));
	CHECK(CALL(p, fxw_copy_from, id, mro->lkey, d, addr(ro + 8), (uint32_t)64) == OK);
	CHECK(CALL(p, fxw_dev_sum, d, (uint32_t)64) == wsum(ro + 8, 64));

	/* The key alone changed: a wrong one refused, then the right one taken. */
	CHECK(CALL(p, fxw_rekey, id, mr2->lkey, mr->lkey, addr(buf)) == (FLEXIO_DEV_STATUS_FAILED << 8 | OK));
	/* NULL context, pointer or size: each device call fails. */
	CHECK(CALL(p, fxw_bad_args, addr(buf)) == 0);

	CHECK(memcmp(buf, snap, BUF_LEN) == 0);
	for (uint32_t i = 0; i < 256; i++)
		CHECK(buf2[i] == (uint8_t)(i * 5 + 2));

	/* A window keeps its domain: the PD cannot go before the window does. */
	CHECK(flexio_window_destroy(w2) == FLEXIO_STATUS_SUCCESS);
	th_undefer(window_destroy_cb, w2);
	CHECK(ibv_dereg_mr(mr2) == 0);
	th_undefer(vf_dereg_cb, mr2);
	w2 = window_new(p, pd2);
	CHECK(w2 != NULL);
	CHECK(ibv_dealloc_pd(pd2) == EBUSY);
	CHECK(flexio_window_destroy(w2) == FLEXIO_STATUS_SUCCESS);
	th_undefer(window_destroy_cb, w2);
	CHECK(ibv_dealloc_pd(pd2) == 0);
	th_undefer(dealloc_pd_cb, pd2);
}

static void uar_free_cb(void *u)
{
	mlx5dv_devx_free_uar(u);
}

static void flexio_uar_destroy_cb(void *u)
{
	flexio_uar_destroy(u);
}

static void outbox_destroy_cb(void *o)
{
	flexio_outbox_destroy(o);
}

static void test_outbox(void)
{
	struct flexio_process *p = proc_new();
	struct mlx5dv_devx_uar *du = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct flexio_outbox *o = NULL, *o2 = NULL;
	struct flexio_window *w;
	struct flexio_uar *u = NULL;
	uint32_t id, id2;

	CHECK(p != NULL && du != NULL);
	th_defer(uar_free_cb, du);
	CHECK(flexio_uar_create(p, du, &u) == FLEXIO_STATUS_SUCCESS);
	th_defer(flexio_uar_destroy_cb, u);
	CHECK(flexio_outbox_create(p, NULL, u, &o) == FLEXIO_STATUS_SUCCESS && o != NULL);
	th_defer(outbox_destroy_cb, o);
	CHECK(flexio_outbox_create(p, ctx, u, &o2) == FLEXIO_STATUS_SUCCESS && o2 != NULL);
	th_defer(outbox_destroy_cb, o2);
	w = window_new(p, flexio_process_get_pd(p));
	CHECK(w != NULL);
	id = flexio_outbox_get_id(o);
	id2 = flexio_outbox_get_id(o2);
	CHECK(id != 0 && id2 != 0 && id != id2 && flexio_window_get_id(w) != id && flexio_window_get_id(w) != id2);

	CHECK(CALL(p, fxw_outbox, id) == FLEXIO_DEV_STATUS_SUCCESS);
	CHECK(CALL(p, fxw_outbox, id2) == FLEXIO_DEV_STATUS_SUCCESS);
	CHECK(CALL(p, fxw_outbox, id + 1000) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_outbox, (uint32_t)0) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_outbox, flexio_window_get_id(w)) == FLEXIO_DEV_STATUS_FAILED); /* a window is no outbox */
	CHECK(flexio_outbox_destroy(o) == FLEXIO_STATUS_SUCCESS);
	th_undefer(outbox_destroy_cb, o);
	CHECK(CALL(p, fxw_outbox, id) == FLEXIO_DEV_STATUS_FAILED);
	CHECK(CALL(p, fxw_outbox, id2) == FLEXIO_DEV_STATUS_SUCCESS);
	{
		/* Another process's outbox is not this one's. */
		struct flexio_process *q = proc_new();

		CHECK(q != NULL && CALL(q, fxw_outbox, id2) == FLEXIO_DEV_STATUS_FAILED);
	}
}

/* A connected RC pair on pd: qp[0] the requester, qp[1] the responder. */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
};

static int pair_up(struct ibv_pd *pd, struct pair *pr)
{
	for (int i = 0; i < 2; i++) {
		pr->cq[i] = vq_cq(ctx, 16);
		pr->qp[i] = pr->cq[i] != NULL ? vq_qp(pd, IBV_QPT_RC, pr->cq[i], pr->cq[i], 16) : NULL;
		if (pr->qp[i] == NULL)
			return -1;
	}
	if (vq_up(pr->qp[0], pr->qp[1]->qp_num, 0, 7) != 0 || vq_up(pr->qp[1], pr->qp[0]->qp_num, 0, 7) != 0)
		return -1;
	return 0;
}

/* One signaled RDMA op of len bytes from/to mr at local, remote (raddr, rkey); the completion's status. */
static int rdma(struct pair *pr, enum ibv_wr_opcode op, struct ibv_mr *mr, void *local, uint32_t len,
		uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = addr(local), .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(pr->qp[0], &wr, &bad) != 0 || vq_poll1(pr->cq[0], &wc) != 1)
		return -1;
	return wc.status;
}

/* A host RC QP writes and reads DPA memory through a device MKey. */
static void test_device_mkey(void)
{
	struct flexio_process *p = proc_new();
	struct ibv_pd *pd = flexio_process_get_pd(p);
	uint8_t *src = host_buf(512), *dst = host_buf(512);
	struct flexio_mkey *m = NULL, *ro = NULL;
	struct ibv_mr *smr, *dmr;
	struct pair pr, pr2;
	flexio_uintptr_t d = 0;
	uint32_t key;

	CHECK(p != NULL && src != NULL && dst != NULL);
	CHECK(flexio_buf_dev_alloc(p, BUF_LEN, &d) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_buf_dev_memset(p, 0, BUF_LEN, d) == FLEXIO_STATUS_SUCCESS);
	{
		struct flexio_mkey_attr fa = { .pd = pd, .daddr = d, .len = BUF_LEN,
					       .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							 IBV_ACCESS_REMOTE_READ };

		CHECK(flexio_device_mkey_create(p, &fa, &m) == FLEXIO_STATUS_SUCCESS && m != NULL);
		th_defer(mkey_destroy_cb, m);
	}
	key = flexio_mkey_get_id(m);
	CHECK(key != 0);
	fill(src, 512, 29, 17);
	smr = vq_mr(pd, src, 512, IBV_ACCESS_LOCAL_WRITE);
	dmr = vq_mr(pd, dst, 512, IBV_ACCESS_LOCAL_WRITE);
	CHECK(smr != NULL && dmr != NULL && pair_up(pd, &pr) == 0);

	/* RDMA WRITE into DPA memory: device code sees exactly those bytes there, and nothing around them. */
	CHECK(rdma(&pr, IBV_WR_RDMA_WRITE, smr, src, 512, d + 1000, key) == IBV_WC_SUCCESS);
	CHECK(CALL(p, fxw_dev_sum, d + 1000, (uint32_t)512) == wsum(src, 512));
	CHECK(CALL(p, fxw_dev_sum, d, (uint32_t)1000) == 0);
	CHECK(CALL(p, fxw_dev_sum, d + 1512, (uint32_t)(BUF_LEN - 1512)) == 0);
	/* RDMA READ back out of it. */
	CHECK(rdma(&pr, IBV_WR_RDMA_READ, dmr, dst, 512, d + 1000, key) == IBV_WC_SUCCESS);
	CHECK(memcmp(dst, src, 512) == 0);
	/* Past the key's end: refused by the responder, DPA memory unchanged. */
	CHECK(pair_up(pd, &pr2) == 0);
	CHECK(rdma(&pr2, IBV_WR_RDMA_WRITE, smr, src, 512, d + BUF_LEN - 256, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(CALL(p, fxw_dev_sum, d + 1512, (uint32_t)(BUF_LEN - 1512)) == 0);

	/* A key over part of a buffer with local write only: remote writes are refused. */
	{
		struct flexio_mkey_attr fa = { .pd = pd, .daddr = d + 100, .len = 100,
					       .access = IBV_ACCESS_LOCAL_WRITE };

		CHECK(flexio_device_mkey_create(p, &fa, &ro) == FLEXIO_STATUS_SUCCESS);
		th_defer(mkey_destroy_cb, ro);
		CHECK(pair_up(pd, &pr2) == 0);
		CHECK(rdma(&pr2, IBV_WR_RDMA_WRITE, smr, src, 16, d + 100, flexio_mkey_get_id(ro)) ==
		      IBV_WC_REM_ACCESS_ERR);
		CHECK(CALL(p, fxw_dev_sum, d, (uint32_t)1000) == 0);
	}

	/* Destroyed, the key writes nothing more. */
	CHECK(flexio_device_mkey_destroy(m) == FLEXIO_STATUS_SUCCESS);
	th_undefer(mkey_destroy_cb, m);
	CHECK(rdma(&pr, IBV_WR_RDMA_WRITE, smr, src, 16, d, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(CALL(p, fxw_dev_sum, d, (uint32_t)1000) == 0);
	CHECK(flexio_device_mkey_destroy(NULL) == FLEXIO_STATUS_SUCCESS); /* the SDK: NULL is valid */
}

/* Device MKeys the SDK would refuse: each FAILED, no key made. */
static void test_device_mkey_refusals(void)
{
	struct flexio_process *p = proc_new();
	struct ibv_pd *pd = flexio_process_get_pd(p), *pd2 = ibv_alloc_pd(ctx), *other_pd = NULL;
	struct ibv_context *ctx2 = NULL;
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct flexio_mkey *m = (struct flexio_mkey *)1;
	flexio_uintptr_t d = 0, e = 0;
	uint8_t host[64];

	CHECK(p != NULL && pd2 != NULL);
	th_defer(dealloc_pd_cb, pd2);
	CHECK(flexio_buf_dev_alloc(p, 256, &d) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_buf_dev_alloc(p, 256, &e) == FLEXIO_STATUS_SUCCESS);
	{
		struct ibv_device **l = ibv_get_device_list(NULL);

		ctx2 = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
		ibv_free_device_list(l);
		CHECK(ctx2 != NULL);
		th_defer(vf_close_cb, ctx2);
		other_pd = ibv_alloc_pd(ctx2);
		CHECK(other_pd != NULL);
		th_defer(dealloc_pd_cb, other_pd);
	}
	{
		struct flexio_mkey_attr bad[] = {
			{ .pd = pd, .daddr = addr(host), .len = sizeof(host), .access = rw }, /* not DPA memory */
			{ .pd = pd, .daddr = d, .len = 257, .access = rw },		     /* past the buffer */
			{ .pd = pd, .daddr = d + 200, .len = 100, .access = rw },	     /* straddles its end */
			{ .pd = pd, .daddr = d, .len = 0, .access = rw },
			{ .pd = pd, .daddr = d - 8, .len = 16, .access = rw },
			{ .pd = NULL, .daddr = d, .len = 256, .access = rw },
			{ .pd = other_pd, .daddr = d, .len = 256, .access = rw }, /* a PD of another context */
			{ .pd = pd, .daddr = d, .len = 256, .access = IBV_ACCESS_REMOTE_WRITE },
			{ .pd = pd, .daddr = d, .len = 256, .access = IBV_ACCESS_REMOTE_ATOMIC },
			{ .pd = pd, .daddr = d, .len = 256, .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND },
			{ .pd = pd, .daddr = d, .len = 256, .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			m = (struct flexio_mkey *)1;
			CHECK(flexio_device_mkey_create(p, &bad[i], &m) == FLEXIO_STATUS_FAILED && m == NULL);
		}
	}
	/* Ordering hints are taken, as ibv_reg_mr takes them; a PD of the process's device other than its own too. */
	{
		struct flexio_mkey_attr fa = { .pd = pd2, .daddr = e, .len = 256,
					       .access = rw | IBV_ACCESS_RELAXED_ORDERING };

		CHECK(flexio_device_mkey_create(p, &fa, &m) == FLEXIO_STATUS_SUCCESS && m != NULL);
		/* The key holds its domain: the PD goes only after it. */
		CHECK(ibv_dealloc_pd(pd2) == EBUSY);
		CHECK(flexio_device_mkey_destroy(m) == FLEXIO_STATUS_SUCCESS);
		CHECK(ibv_dealloc_pd(pd2) == 0);
		th_undefer(dealloc_pd_cb, pd2);
	}
}

/* Bad arguments of every host call: FAILED (or 0), and nothing made. */
static void test_null_args(void)
{
	struct flexio_process *p = proc_new();
	struct mlx5dv_devx_uar *du = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct flexio_window *w = (struct flexio_window *)1;
	struct flexio_outbox *o = (struct flexio_outbox *)1;
	struct flexio_mkey *m = (struct flexio_mkey *)1;
	struct flexio_mkey_attr fa = { 0 };
	struct flexio_uar *u = NULL;
	struct ibv_pd *pd = flexio_process_get_pd(p);
	flexio_uintptr_t d = 0;

	CHECK(p != NULL && du != NULL);
	th_defer(uar_free_cb, du);
	CHECK(flexio_uar_create(p, du, &u) == FLEXIO_STATUS_SUCCESS);
	th_defer(flexio_uar_destroy_cb, u);
	CHECK(flexio_buf_dev_alloc(p, 64, &d) == FLEXIO_STATUS_SUCCESS);
	fa = (struct flexio_mkey_attr){ .pd = pd, .daddr = d, .len = 64, .access = IBV_ACCESS_LOCAL_WRITE };

	CHECK(flexio_window_create(NULL, pd, &w) == FLEXIO_STATUS_FAILED && w == NULL);
	w = (struct flexio_window *)1;
	CHECK(flexio_window_create(p, NULL, &w) == FLEXIO_STATUS_FAILED && w == NULL);
	CHECK(flexio_window_create(p, pd, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_window_destroy(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_window_get_id(NULL) == 0);

	CHECK(flexio_outbox_create(NULL, NULL, u, &o) == FLEXIO_STATUS_FAILED && o == NULL);
	o = (struct flexio_outbox *)1;
	CHECK(flexio_outbox_create(p, NULL, NULL, &o) == FLEXIO_STATUS_FAILED && o == NULL);
	CHECK(flexio_outbox_create(p, NULL, u, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_outbox_destroy(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_outbox_get_id(NULL) == 0);

	CHECK(flexio_device_mkey_create(NULL, &fa, &m) == FLEXIO_STATUS_FAILED && m == NULL);
	m = (struct flexio_mkey *)1;
	CHECK(flexio_device_mkey_create(p, NULL, &m) == FLEXIO_STATUS_FAILED && m == NULL);
	CHECK(flexio_device_mkey_create(p, &fa, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_mkey_get_id(NULL) == 0);

	/* Nothing was made: the first object of the process gets id 1. */
	w = window_new(p, pd);
	CHECK(w != NULL && flexio_window_get_id(w) == 1);
}

/* A process destroyed with windows, outboxes and device MKeys left: all released, their PDs free to go. */
static void test_leftovers(void)
{
	struct mlx5dv_devx_uar *du = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct flexio_process *p = NULL;
	struct flexio_uar *u = NULL;
	flexio_uintptr_t d = 0;

	CHECK(du != NULL && pd2 != NULL);
	th_defer(uar_free_cb, du);
	th_defer(dealloc_pd_cb, pd2);
	CHECK(flexio_process_create(ctx, fx_window_dev, NULL, &p) == FLEXIO_STATUS_SUCCESS);
	th_defer(proc_destroy_cb, p);
	CHECK(flexio_uar_create(p, du, &u) == FLEXIO_STATUS_SUCCESS);
	th_defer(flexio_uar_destroy_cb, u);
	CHECK(flexio_buf_dev_alloc(p, 1024, &d) == FLEXIO_STATUS_SUCCESS);
	for (int i = 0; i < 2; i++) {
		struct ibv_pd *pd = i == 0 ? flexio_process_get_pd(p) : pd2;
		struct flexio_mkey_attr fa = { .pd = pd, .daddr = d + 512u * i, .len = 512,
					       .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };
		struct flexio_window *w = NULL;
		struct flexio_outbox *o = NULL;
		struct flexio_mkey *m = NULL;

		CHECK(flexio_window_create(p, pd, &w) == FLEXIO_STATUS_SUCCESS);
		CHECK(flexio_outbox_create(p, NULL, u, &o) == FLEXIO_STATUS_SUCCESS);
		CHECK(flexio_device_mkey_create(p, &fa, &m) == FLEXIO_STATUS_SUCCESS);
	}
	CHECK(ibv_dealloc_pd(pd2) == EBUSY);
	CHECK(flexio_process_destroy(p) == FLEXIO_STATUS_SUCCESS); /* its own PD goes too: nothing holds it */
	th_undefer(proc_destroy_cb, p);
	CHECK(ibv_dealloc_pd(pd2) == 0);
	th_undefer(dealloc_pd_cb, pd2);
}

int main(void)
{
	open_dev();
	if (ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	RUN(test_window_round_trip);
	RUN(test_window_refusals);
	RUN(test_outbox);
	RUN(test_device_mkey);
	RUN(test_device_mkey_refusals);
	RUN(test_null_args);
	RUN(test_leftovers);
	ibv_close_device(ctx);
	return th_summary("test_flexio_window");
}
