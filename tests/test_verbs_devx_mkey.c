/*
 * DevX mkeys (CREATE_MKEY, QUERY_MKEY, DESTROY_MKEY) as mlx5_ifc.h lays
 * them out and rdma-core's DevX tests and UCX's DevX memory domain send
 * them: an MTT key over a umem used by RDMA WRITE and READ from an ibv QP
 * of another process, KLM and KSM keys spanning two MRs, the rights of the
 * key's context enforced with the completion status IB gives a remote
 * access error, DESTROY as a fence, and UCX's atomic key (a KSM key of
 * 2 GiB entries over a second, strict-order registration, at an offset)
 * used by another process for RDMA and atomics. Bytes compared.
 */
#include <unistd.h>

#include "devx_fixture.h"
#include "kid_fixture.h"

#define UMEM_LEN 8192u
#define IOVA 0x7a0000000000ull /* an address the keys are used at, unlike the memory's */
#define TAG 0x5a

/* Byte i of a pattern: differs at every offset of a page and per seed. */
static uint8_t pat(uint8_t seed, uint32_t i)
{
	return (uint8_t)(seed + i * 7 + (i >> 8));
}

static void fill_pat(uint8_t *b, uint32_t len, uint8_t seed, uint32_t from)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = pat(seed, from + i);
}

static bool is_pat(const uint8_t *b, uint32_t len, uint8_t seed, uint32_t from)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != pat(seed, from + i))
			return false;
	return true;
}

/* One RDMA WRITE or READ, signaled; the completion's status (-1: none came). */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op, void *laddr, uint32_t len, uint32_t lkey,
		uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = {.addr = (uintptr_t)laddr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 5, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED, .wr = {.rdma = {.remote_addr = raddr, .rkey = rkey}}},
			   *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(cq, &wc) != 1)
		return -1;
	return (int)wc.status;
}

/* A DevX context with a PD, two connected RC QPs (0 requests, 1 answers) and a registered source buffer. */
struct lp {
	struct dx *d; /* context, PD, pdn */
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	uint8_t *src;
	struct ibv_mr *src_mr;
};

static void lp_open(struct lp *l)
{
	dx_open(&l->d, 4096);
	for (int i = 0; i < 2; i++) {
		l->cq[i] = vq_cq(l->d->c, 16);
		CHECK(l->cq[i] != NULL);
		l->qp[i] = vq_qp(l->d->pd, IBV_QPT_RC, l->cq[i], l->cq[i], 8);
		CHECK(l->qp[i] != NULL);
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(l->qp[i], l->qp[1 - i]->qp_num, 0, 0));
	CHECK(posix_memalign((void **)&l->src, 4096, UMEM_LEN) == 0);
	th_defer(free, l->src);
	l->src_mr = vq_mr(l->d->pd, l->src, UMEM_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(l->src_mr != NULL);
}

/* Both QPs back to RTS after a remote access error took them to ERR. */
static void lp_restate(struct lp *l)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
	struct ibv_wc wc;

	for (int i = 0; i < 2; i++) {
		CHECK_OK(ibv_modify_qp(l->qp[i], &a, IBV_QP_STATE));
		while (ibv_poll_cq(l->cq[i], 1, &wc) > 0)
			;
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(vq_up(l->qp[i], l->qp[1 - i]->qp_num, 0, 0));
}

static int lp_rdma(struct lp *l, enum ibv_wr_opcode op, uint32_t soff, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	return rdma(l->qp[0], l->cq[0], op, l->src + soff, len, l->src_mr->lkey, raddr, rkey);
}

static void obj_destroy_cb(void *arg)
{
	mlx5dv_devx_obj_destroy(arg);
}

/* CREATE_MKEY of in (inlen bytes): the object (destroyed when the case ends unless taken back) and its key. */
static void mkey_make(struct dx *d, uint8_t *in, size_t inlen, struct mlx5dv_devx_obj **op, uint32_t *key)
{
	uint8_t out[OUT_SZ];
	struct mlx5dv_devx_obj *o;

	memset(out, 0xff, sizeof(out));
	o = mlx5dv_devx_obj_create(d->c, in, inlen, out, sizeof(out));
	CHECK(o != NULL);
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	*key = mkey_of(out, (uint8_t)prm_get(in, MKC + 0x38, 8));
	th_defer(obj_destroy_cb, o);
	*op = o;
}

static void umem_dereg_cb(void *arg)
{
	mlx5dv_devx_umem_dereg(arg);
}

/* A page-aligned buffer of len bytes and its umem. */
static void umem_buf(struct dx *d, size_t len, uint8_t **bp, struct mlx5dv_devx_umem **um)
{
	uint8_t *b;

	CHECK(posix_memalign((void **)&b, 4096, len) == 0);
	th_defer(free, b);
	*um = mlx5dv_devx_umem_reg(d->c, b, len, IBV_ACCESS_LOCAL_WRITE);
	CHECK(*um != NULL);
	th_defer(umem_dereg_cb, *um);
	*bp = b;
}

/* The other process: an ibv RC QP writing and reading through the key it is told, then again after its destroy. */
struct plan {
	uint32_t qpn, key;
	uint64_t iova;
	uint32_t qpn2, klm; /* a second QP, and a KLM key over the MTT key's first 4096 bytes at iova */
};

static int child_rdma(int in, int out)
{
	struct ibv_context *c = open_devx();
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = pd != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				     .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = cq != NULL ? ibv_create_qp(pd, &a) : NULL;
	struct ibv_qp *qp2 = qp != NULL ? ibv_create_qp(pd, &a) : NULL;
	static uint8_t buf[UMEM_LEN];
	struct ibv_mr *mr = qp2 != NULL ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	uint32_t qpns[2];
	struct plan p;
	char ok;

	if (mr == NULL)
		return 2;
	qpns[0] = qp->qp_num;
	qpns[1] = qp2->qp_num;
	if (write(out, qpns, sizeof(qpns)) != sizeof(qpns) || read(in, &p, sizeof(p)) != sizeof(p))
		return 2;
	if (vq_up(qp, p.qpn, 12, 7) != 0 || vq_up(qp2, p.qpn2, 12, 7) != 0)
		return 3;
	fill_pat(buf, 4096, 0x33, 0);
	if (rdma(qp, cq, IBV_WR_RDMA_WRITE, buf, 4096, mr->lkey, p.iova + 512, p.key) != IBV_WC_SUCCESS)
		return 4;
	memset(buf + 4096, 0, 2048);
	if (rdma(qp, cq, IBV_WR_RDMA_READ, buf + 4096, 2048, mr->lkey, p.iova + 5000, p.key) != IBV_WC_SUCCESS)
		return 5;
	if (!is_pat(buf + 4096, 2048, 0x40, 5000))
		return 6;
	/* The KLM key over the MTT key: rebuilt here over this process's view of it. */
	fill_pat(buf, 16, 0x99, 0);
	if (rdma(qp2, cq, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, p.iova, p.klm) != IBV_WC_SUCCESS)
		return 10;
	ok = 'w';
	if (write(out, &ok, 1) != 1 || read(in, &ok, 1) != 1 || ok != 'd')
		return 7;
	/* The key was destroyed: the responder refuses it. */
	if (rdma(qp, cq, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, p.iova + 512, p.key) != IBV_WC_REM_ACCESS_ERR)
		return 8;
	/* The KLM key lives, the key its entry names does not: refused too. */
	if (rdma(qp2, cq, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, p.iova, p.klm) != IBV_WC_REM_ACCESS_ERR)
		return 11;
	ok = 'f';
	return write(out, &ok, 1) == 1 ? 0 : 9;
}

/*
 * An MTT key over a umem, at an address other than the memory's, with a
 * tag of the program's: an ibv QP of another process writes and reads
 * through it; after DESTROY_MKEY the same key is a remote access error
 * there and the memory is not written. A KLM key over the MTT key is
 * reached from there too, and refused once the MTT key went.
 */
static void test_mtt_other_process(void)
{
	struct mlx5dv_devx_umem *um;
	struct mlx5dv_devx_obj *mk;
	uint8_t in[MKEY_IN];
	int a[2], b[2];
	struct mlx5dv_devx_obj *klm;
	uint32_t cqpn[2] = {0, 0};
	struct plan p;
	struct dx *d = NULL;
	char ok = 0;
	uint8_t *m;

	kid_fork(a, b);
	if (kid == 0)
		_exit(child_rdma(a[0], b[1]));
	dx_open(&d, 4096);
	struct ibv_cq *cq = vq_cq(d->c, 16);
	CHECK(cq != NULL);
	struct ibv_qp *qp = vq_qp(d->pd, IBV_QPT_RC, cq, cq, 8);
	CHECK(qp != NULL);
	struct ibv_qp *qp2 = vq_qp(d->pd, IBV_QPT_RC, cq, cq, 8);
	CHECK(qp2 != NULL);
	umem_buf(d, UMEM_LEN, &m, &um);
	fill_pat(m, UMEM_LEN, 0x40, 0);
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, TAG, IOVA, UMEM_LEN);
	mkey_cmd_umem(in, um->umem_id, 0);
	mkey_make(d, in, sizeof(in), &mk, &p.key);
	CHECK((p.key & 0xff) == TAG);
	p.iova = IOVA;
	p.qpn = qp->qp_num;
	p.qpn2 = qp2->qp_num;
	{
		uint8_t kin[MKEY_IN + 16];
		uint32_t cnt = 4096;
		uint64_t at = IOVA;

		mkey_cmd(kin, MK_KLM, MK_ALL, d->pdn, (uint8_t)(TAG + 1), IOVA, 4096);
		mkey_cmd_list(kin, 1, &cnt, &p.key, &at, 0);
		mkey_make(d, kin, sizeof(kin), &klm, &p.klm);
	}
	CHECK(read(b[0], cqpn, 8) == 8);
	CHECK_OK(vq_up(qp, cqpn[0], 12, 7));
	CHECK_OK(vq_up(qp2, cqpn[1], 12, 7));
	CHECK(write(a[1], &p, sizeof(p)) == sizeof(p));
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'w');
	/* The child's bytes at 0..16 (through the KLM key) and 512..4608, the rest as filled. */
	CHECK(is_pat(m, 16, 0x99, 0));
	CHECK(is_pat(m + 16, 512 - 16, 0x40, 16));
	CHECK(is_pat(m + 512, 4096, 0x33, 0));
	CHECK(is_pat(m + 4608, UMEM_LEN - 4608, 0x40, 4608));
	CHECK(th_undefer(obj_destroy_cb, mk) == 1); /* the KLM key over it stays */
	CHECK_OK(mlx5dv_devx_obj_destroy(mk));
	CHECK(write(a[1], "d", 1) == 1);
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'f');
	kid_wait_ok();
	CHECK(is_pat(m + 512, 4096, 0x33, 0));
	CHECK(is_pat(m, 16, 0x99, 0));
}

/* n MRs of 4096 bytes, page-aligned, registered with access, filled with pattern seed from their own offset 0. */
static void mrs(struct lp *l, int n, int access, uint8_t **b, struct ibv_mr **mr, uint8_t seed)
{
	for (int i = 0; i < n; i++) {
		CHECK(posix_memalign((void **)&b[i], 4096, 4096) == 0);
		th_defer(free, b[i]);
		fill_pat(b[i], 4096, (uint8_t)(seed + i), 0);
		mr[i] = vq_mr(l->d->pd, b[i], 4096, access);
		CHECK(mr[i] != NULL);
	}
}

/*
 * A KLM key over two MRs: 1000 bytes of the first from its byte 96, 3000
 * of the second from its byte 0, used from IOVA. A WRITE of all 4000
 * bytes lands in both, a READ across the seam returns both, bytes compared.
 */
static void test_klm_two_mrs(void)
{
	uint8_t in[MKEY_IN + 32], *b[2];
	struct ibv_mr *mr[2];
	struct mlx5dv_devx_obj *mk;
	uint32_t key, cnt[2] = {1000, 3000}, keys[2];
	uint64_t addr[2];
	struct lp l;

	lp_open(&l);
	mrs(&l, 2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, b, mr, 0x10);
	keys[0] = mr[0]->lkey;
	keys[1] = mr[1]->lkey;
	addr[0] = (uintptr_t)b[0] + 96;
	addr[1] = (uintptr_t)b[1];
	mkey_cmd(in, MK_KLM, MK_LR | MK_LW | MK_RR | MK_RW, l.d->pdn, TAG, IOVA, 4000);
	mkey_cmd_list(in, 2, cnt, keys, addr, 0);
	mkey_make(l.d, in, sizeof(in), &mk, &key);
	fill_pat(l.src, 4000, 0x77, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 4000, IOVA, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(b[0], 96, 0x10, 0));
	CHECK(is_pat(b[0] + 96, 1000, 0x77, 0));
	CHECK(is_pat(b[0] + 1096, 4096 - 1096, 0x10, 1096));
	CHECK(is_pat(b[1], 3000, 0x77, 1000));
	CHECK(is_pat(b[1] + 3000, 1096, 0x11, 3000));
	b[0][96 + 999] = 0xa5;
	b[1][0] = 0x5a;
	memset(l.src + 4096, 0, 64);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_READ, 4096, 64, IOVA + 968, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(l.src + 4096, 31, 0x77, 968) && l.src[4096 + 31] == 0xa5 && l.src[4096 + 32] == 0x5a);
	CHECK(is_pat(l.src + 4096 + 33, 31, 0x77, 1001));
	/* Past the key's 4000 bytes: the responder refuses. */
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 8, IOVA + 3996, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(is_pat(b[1] + 3000, 1096, 0x11, 3000));
}

/* A KSM key of two 4096-byte entries over two MRs, 6000 bytes long from IOVA: both written, the end enforced. */
static void test_ksm_two_mrs(void)
{
	uint8_t in[MKEY_IN + 32], *b[2];
	struct ibv_mr *mr[2];
	struct mlx5dv_devx_obj *mk;
	uint32_t key, keys[2];
	uint64_t addr[2];
	struct lp l;

	lp_open(&l);
	mrs(&l, 2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, b, mr, 0x20);
	keys[0] = mr[0]->lkey;
	keys[1] = mr[1]->lkey;
	addr[0] = (uintptr_t)b[0];
	addr[1] = (uintptr_t)b[1];
	mkey_cmd(in, MK_KSM, MK_LR | MK_LW | MK_RR | MK_RW, l.d->pdn, TAG, IOVA, 6000);
	mkey_cmd_list(in, 2, NULL, keys, addr, 12);
	mkey_make(l.d, in, sizeof(in), &mk, &key);
	fill_pat(l.src, 6000, 0x66, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 6000, IOVA, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(b[0], 4096, 0x66, 0));
	CHECK(is_pat(b[1], 6000 - 4096, 0x66, 4096));
	CHECK(is_pat(b[1] + 6000 - 4096, 8192 - 6000, 0x21, 6000 - 4096));
	memset(l.src + 6000, 0, 200);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_READ, 6000, 200, IOVA + 4000, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(l.src + 6000, 200, 0x66, 4000));
	CHECK(lp_rdma(&l, IBV_WR_RDMA_READ, 6000, 8, IOVA + 5996, key) == IBV_WC_REM_ACCESS_ERR);
}

/*
 * The context's rights: a key without rw is a remote access error for a
 * WRITE (memory untouched) and serves a READ; one without rr the reverse;
 * a KLM key's rights are its own, not its MRs'.
 */
static void test_rights(void)
{
	struct mlx5dv_devx_umem *um;
	struct mlx5dv_devx_obj *mk;
	uint8_t in[MKEY_IN + 16], *m, *b[1];
	struct ibv_mr *mr[1];
	uint32_t key, cnt = 4096, k1;
	uint64_t a1;
	struct lp l;

	lp_open(&l);
	umem_buf(l.d, 4096, &m, &um);
	fill_pat(m, 4096, 0x40, 0);
	fill_pat(l.src, 4096, 0x50, 0);
	mkey_cmd(in, MK_MTT, MK_LR | MK_LW | MK_RR, l.d->pdn, 1, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	mkey_make(l.d, in, MKEY_IN, &mk, &key);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(is_pat(m, 4096, 0x40, 0));
	lp_restate(&l); /* the error took both QPs to ERR */
	CHECK(lp_rdma(&l, IBV_WR_RDMA_READ, 0, 64, IOVA + 64, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(l.src, 64, 0x40, 64));
	/* Write but no read. */
	mkey_cmd(in, MK_MTT, MK_LR | MK_LW | MK_RW, l.d->pdn, 2, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	mkey_make(l.d, in, MKEY_IN, &mk, &key);
	fill_pat(l.src, 64, 0x51, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA + 128, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(m + 128, 64, 0x51, 0));
	CHECK(lp_rdma(&l, IBV_WR_RDMA_READ, 0, 64, IOVA, key) == IBV_WC_REM_ACCESS_ERR);
	/* A KLM key without rw over an MR that allows remote writes. */
	lp_restate(&l);
	mrs(&l, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, b, mr, 0x30);
	k1 = mr[0]->lkey;
	a1 = (uintptr_t)b[0];
	mkey_cmd(in, MK_KLM, MK_LR | MK_LW | MK_RR, l.d->pdn, 3, IOVA, 4096);
	mkey_cmd_list(in, 1, &cnt, &k1, &a1, 0);
	mkey_make(l.d, in, sizeof(in), &mk, &key);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(is_pat(b[0], 4096, 0x30, 0));
}

/*
 * An MR an indirect key names is deregistered (ibv_dereg_mr succeeds, as
 * the kernel's does): accesses through the KLM key are then remote access
 * errors, the memory is not written.
 */
static void test_klm_mr_gone(void)
{
	uint8_t in[MKEY_IN + 16], *b[1];
	struct ibv_mr *mr[1];
	struct mlx5dv_devx_obj *mk;
	uint32_t key, cnt = 4096, k;
	uint64_t a;
	struct lp l;

	lp_open(&l);
	mrs(&l, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, b, mr, 0x30);
	k = mr[0]->lkey;
	a = (uintptr_t)b[0];
	mkey_cmd(in, MK_KLM, MK_LR | MK_LW | MK_RW, l.d->pdn, 4, IOVA, 4096);
	mkey_cmd_list(in, 1, &cnt, &k, &a, 0);
	mkey_make(l.d, in, sizeof(in), &mk, &key);
	fill_pat(l.src, 64, 0x61, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(b[0], 64, 0x61, 0));
	CHECK(th_undefer(vf_dereg_cb, mr[0]) == 1);
	CHECK_OK(ibv_dereg_mr(mr[0]));
	fill_pat(l.src, 64, 0x62, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(is_pat(b[0], 64, 0x61, 0));
}

/*
 * DESTROY_MKEY in the process: the umem under the key is not deregistered
 * while it lives (EBUSY), the key is refused once it went (a tag other
 * than the command's never worked), and then the umem goes.
 */
static void test_destroy_local(void)
{
	struct mlx5dv_devx_umem *um;
	struct mlx5dv_devx_obj *mk;
	uint8_t in[MKEY_IN], *m;
	uint32_t key;
	struct lp l;

	lp_open(&l);
	umem_buf(l.d, 4096, &m, &um);
	fill_pat(m, 4096, 0x40, 0);
	mkey_cmd(in, MK_MTT, MK_ALL, l.d->pdn, 0xc3, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	mkey_make(l.d, in, MKEY_IN, &mk, &key);
	CHECK(mlx5dv_devx_umem_dereg(um) == EBUSY);
	fill_pat(l.src, 64, 0x71, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key ^ 0x01) == IBV_WC_REM_ACCESS_ERR);
	lp_restate(&l);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key) == IBV_WC_SUCCESS);
	CHECK(is_pat(m, 64, 0x71, 0));
	CHECK(th_undefer(obj_destroy_cb, mk) == 1);
	CHECK_OK(mlx5dv_devx_obj_destroy(mk));
	fill_pat(l.src, 64, 0x72, 0);
	CHECK(lp_rdma(&l, IBV_WR_RDMA_WRITE, 0, 64, IOVA, key) == IBV_WC_REM_ACCESS_ERR);
	CHECK(is_pat(m, 64, 0x71, 0));
	CHECK(th_undefer(umem_dereg_cb, um) == 1);
	CHECK_OK(mlx5dv_devx_umem_dereg(um));
}

/* QUERY_MKEY gives back the key's context: mode, rights, qpn, tag, pd, start_addr and len; another index EINVAL. */
static void test_query(void)
{
	struct mlx5dv_devx_umem *um;
	struct mlx5dv_devx_obj *mk;
	uint8_t in[MKEY_IN], out[MKEY_QUERY_OUT], *m;
	uint32_t key;
	struct dx *d = NULL;

	dx_open(&d, 4096);
	umem_buf(d, 8192, &m, &um);
	mkey_cmd(in, MK_MTT, MK_LR | MK_LW | MK_RR, d->pdn, 0x3c, IOVA + 8, 4000);
	mkey_cmd_umem(in, um->umem_id, 8);
	mkey_make(d, in, MKEY_IN, &mk, &key);
	memset(in, 0, 16);
	prm_set(in, 0, 16, OP_QUERY_MKEY);
	prm_set(in, 0x48, 24, key >> 8);
	memset(out, 0xee, sizeof(out));
	CHECK_OK(mlx5dv_devx_obj_query(mk, in, 16, out, sizeof(out)));
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	CHECK(prm_get(out, MKC + 0x1, 1) == 0);		/* free */
	CHECK(prm_get(out, MKC + 0x16, 2) == MK_MTT);
	CHECK(prm_get(out, MKC + 0x11, 5) == 0x07);	/* a 0, rw 0, rr, lw, lr */
	CHECK(prm_get(out, MKC + 0x20, 24) == 0xffffff);
	CHECK(prm_get(out, MKC + 0x38, 8) == 0x3c);
	CHECK(prm_get(out, MKC + 0x68, 24) == d->pdn);
	CHECK(prm_get(out, MKC + 0x80, 64) == IOVA + 8);
	CHECK(prm_get(out, MKC + 0xc0, 64) == 4000);
	/* The command names another key than the object's: the kernel's EINVAL, out untouched. */
	prm_set(in, 0x48, 24, (key >> 8) + 1);
	memset(out, 0xee, sizeof(out));
	CHECK(mlx5dv_devx_obj_query(mk, in, 16, out, sizeof(out)) == EINVAL);
	CHECK(out[0] == 0xee);
}

/*
 * The atomic key of a memory domain that registers its memory twice, with
 * and without relaxed ordering, as UCX does: a KSM key over the
 * strict-order MR whose 2 GiB entries start at the MR's address rounded
 * down to 2 GiB (PRM: a KSM entry is checked against its key at each
 * access), used from that address plus an offset, so that a peer reaches
 * byte x of the MR at x + offset. The context asks for relaxed ordering on
 * writes and reads, which the device takes as the hint it is.
 */
#define KSM_ENT (1ull << 31)
#define KSM_OFF (8u * 201) /* UCX: 8 * (pid % 256) */
#define AT_LEN 8192u	   /* the registered bytes, a page after a page left out */

struct aplan {
	uint32_t qpn, key;
	uint64_t addr; /* the MR's first byte in the registering process */
};

/* One atomic, signaled: fetch-and-add (swap unused) or compare-and-swap. The completion's status, -1 for none. */
static int atomic_op(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op, uint64_t *res, uint32_t lkey,
		     uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge s = {.addr = (uintptr_t)res, .length = 8, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 6, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr = {.atomic = {.remote_addr = raddr, .compare_add = cmp_add, .swap = swap,
						   .rkey = rkey}}},
			   *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(cq, &wc) != 1)
		return -1;
	return (int)wc.status;
}

/* The peer's operations through the key, every address offset by KSM_OFF; 0 or the failed step. */
static int child_ops(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, uint8_t *buf, const struct aplan *p)
{
	uint64_t at = p->addr + KSM_OFF, *res = (uint64_t *)(void *)(buf + 8192);

	fill_pat(buf, 4096, 0x33, 0);
	if (rdma(qp, cq, IBV_WR_RDMA_WRITE, buf, 4096, mr->lkey, at + 512, p->key) != IBV_WC_SUCCESS)
		return 4;
	memset(buf + 4096, 0, 1024);
	if (rdma(qp, cq, IBV_WR_RDMA_READ, buf + 4096, 1024, mr->lkey, at + 6000, p->key) != IBV_WC_SUCCESS ||
	    !is_pat(buf + 4096, 1024, 0x40, 6000))
		return 5;
	*res = 0;
	if (atomic_op(qp, cq, IBV_WR_ATOMIC_FETCH_AND_ADD, res, mr->lkey, at + 16, p->key, 5, 0) != IBV_WC_SUCCESS ||
	    *res != 0x1111)
		return 6;
	*res = 0;
	if (atomic_op(qp, cq, IBV_WR_ATOMIC_CMP_AND_SWP, res, mr->lkey, at + 24, p->key, 0x2222, 0x7777) !=
		    IBV_WC_SUCCESS ||
	    *res != 0x2222)
		return 7;
	/* The key's range starts before the MR: those bytes are no memory of the key's entries. */
	if (rdma(qp, cq, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, at - 8, p->key) != IBV_WC_REM_ACCESS_ERR)
		return 8;
	return 0;
}

static int child_atomic_key(int in, int out)
{
	struct ibv_context *c = open_devx();
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = pd != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				     .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = cq != NULL ? ibv_create_qp(pd, &a) : NULL;
	static uint8_t buf[8192 + 64];
	struct ibv_mr *mr = qp != NULL ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct aplan p;
	char ok;
	int rc;

	if (mr == NULL)
		return 2;
	if (write(out, &qp->qp_num, 4) != 4 || read(in, &p, sizeof(p)) != sizeof(p))
		return 2;
	if (vq_up(qp, p.qpn, 12, 7) != 0)
		return 3;
	rc = child_ops(qp, cq, mr, buf, &p);
	ok = rc == 0 ? 'w' : (char)('0' + rc);
	return write(out, &ok, 1) == 1 ? rc : 9;
}

/* CREATE_MKEY of UCX's atomic key over mr (at addr, len bytes): the key in *key; its context read back. */
static void atomic_key_make(struct dx *d, const struct ibv_mr *mr, uint64_t addr, uint64_t len, uint32_t *key)
{
	uint8_t in[MKEY_IN + 32], q[16] = {0}, out[MKEY_QUERY_OUT];
	uint64_t base = addr & ~(KSM_ENT - 1), klen = (addr + len - base + 7) & ~7ull, at[2];
	uint32_t n = (uint32_t)((klen + KSM_OFF + KSM_ENT - 1) / KSM_ENT), keys[2];
	struct mlx5dv_devx_obj *mk;

	for (uint32_t i = 0; i < n; i++) {
		keys[i] = mr->lkey;
		at[i] = base + i * KSM_ENT;
	}
	mkey_cmd(in, MK_KSM, MK_ALL, d->pdn, 0x21, base + KSM_OFF, klen);
	mkey_cmd_list(in, n, NULL, keys, at, 31);
	prm_set(in, MKC + 0xd, 1, 1);	/* relaxed_ordering_write */
	prm_set(in, MKC + 0x1d9, 1, 1); /* relaxed_ordering_read */
	mkey_make(d, in, MKEY_IN + 16 * n, &mk, key);
	/* The context as created, its relaxed-ordering bits among it. */
	prm_set(q, 0, 16, OP_QUERY_MKEY);
	prm_set(q, 0x48, 24, *key >> 8);
	CHECK_OK(mlx5dv_devx_obj_query(mk, q, sizeof(q), out, sizeof(out)));
	CHECK(prm_get(out, MKC + 0xd, 1) == 1 && prm_get(out, MKC + 0x1d9, 1) == 1);
	CHECK(prm_get(out, MKC + 0x16, 2) == MK_KSM && prm_get(out, MKC + 0x1db, 5) == 31);
}

/*
 * Another process's QP writes, reads, adds and compares-and-swaps through
 * the atomic key at the MR's addresses plus the offset; the registering
 * process sees its bytes where they were aimed, the page before the MR
 * untouched.
 */
static void test_ksm_atomic_key_other_process(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *relaxed, *strict;
	struct dx *d = NULL;
	uint64_t v[2] = {0x1111, 0x2222};
	struct aplan p;
	uint32_t cqpn = 0;
	int a[2], b[2];
	uint8_t *r, *m;
	char ok = 0;

	kid_fork(a, b);
	if (kid == 0)
		_exit(child_atomic_key(a[0], b[1]));
	dx_open(&d, 4096);
	struct ibv_cq *cq = vq_cq(d->c, 16);
	CHECK(cq != NULL);
	struct ibv_qp *qp = vq_qp(d->pd, IBV_QPT_RC, cq, cq, 8);
	CHECK(qp != NULL);
	CHECK(posix_memalign((void **)&r, 4096, 4096 + AT_LEN) == 0);
	th_defer(free, r);
	m = r + 4096;
	fill_pat(r, 4096, 0x55, 0);
	fill_pat(m, AT_LEN, 0x40, 0);
	memcpy(m + 16, v, sizeof(v));
	relaxed = vq_mr(d->pd, m, AT_LEN, acc | IBV_ACCESS_RELAXED_ORDERING);
	CHECK(relaxed != NULL);
	strict = vq_mr(d->pd, m, AT_LEN, acc);
	CHECK(strict != NULL);
	atomic_key_make(d, strict, (uintptr_t)m, AT_LEN, &p.key);
	p.addr = (uintptr_t)m;
	p.qpn = qp->qp_num;
	CHECK(read(b[0], &cqpn, 4) == 4);
	CHECK_OK(vq_up(qp, cqpn, 12, 7));
	CHECK(write(a[1], &p, sizeof(p)) == sizeof(p));
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'w');
	kid_wait_ok();
	memcpy(v, m + 16, sizeof(v));
	CHECK(is_pat(r, 4096, 0x55, 0));
	CHECK(is_pat(m, 16, 0x40, 0));
	CHECK(v[0] == 0x1116 && v[1] == 0x7777);
	CHECK(is_pat(m + 32, 512 - 32, 0x40, 32));
	CHECK(is_pat(m + 512, 4096, 0x33, 0));
	CHECK(is_pat(m + 4608, AT_LEN - 4608, 0x40, 4608));
}

int main(void)
{
	RUN(test_mtt_other_process);
	RUN(test_klm_two_mrs);
	RUN(test_ksm_two_mrs);
	RUN(test_rights);
	RUN(test_klm_mr_gone);
	RUN(test_destroy_local);
	RUN(test_query);
	RUN(test_ksm_atomic_key_other_process);
	return th_summary("test_verbs_devx_mkey");
}
