/*
 * mlx5dv_create_cq (rdma-core v44 mlx5dv_create_cq(3)): the refusals and
 * their errno as mlx5 and the kernel give them, the capabilities
 * mlx5dv_query_device reports for them, and CQEs of 64 and 128 bytes as the
 * device writes them: polled through the extended CQ API and read raw
 * through mlx5dv_init_obj (the 64-byte CQE in the entry's last 64 bytes, as
 * mlx5's get_cqe reads it), in one process and from a sender in another,
 * after a resize and in a ring a parent domain's allocators gave. The
 * receiving QPs are made with scatter to CQE off (MLX5_SCATTER_TO_CQE=0), so
 * every byte goes to the buffers and the CQEs compare across sizes;
 * test_verbs_scatter covers scatter to CQE.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_qp_fixture.h"

#define NWR 4	     /* completions per round */
#define RING_CQE 7   /* an 8-entry ring: three rounds wrap it */
#define BUF 4096
#define RAW_TRIES 100000000L
#define IMM1 0x12345678u
#define IMM2 0xa5a5a5a5u

static void destroy_cqx_cb(void *arg)
{
	ibv_destroy_cq(ibv_cq_ex_to_cq(arg));
}

/* A parent domain whose allocators the next dv_cq takes its ring from (NULL: none). */
static struct ibv_pd *dv_parent;

/* An mlx5dv CQ: size 0 leaves the CQE size unasked; comp 0 asks no compression. */
static struct ibv_cq_ex *dv_cq(struct ibv_context *c, int cqe, uint16_t size, uint32_t flags, uint8_t comp)
{
	struct ibv_cq_init_attr_ex a = { .cqe = (uint32_t)cqe, .wc_flags = IBV_WC_STANDARD_FLAGS,
					 .comp_mask = dv_parent != NULL ? IBV_CQ_INIT_ATTR_MASK_PD : 0,
					 .parent_domain = dv_parent };
	struct mlx5dv_cq_init_attr dv = { 0 };
	struct ibv_cq_ex *cq;

	if (size != 0) {
		dv.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
		dv.cqe_size = size;
	}
	if (flags != 0) {
		dv.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_FLAGS;
		dv.flags = flags;
	}
	if (comp != 0) {
		dv.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
		dv.cqe_comp_res_format = comp;
	}
	cq = mlx5dv_create_cq(c, &a, &dv);
	if (cq != NULL)
		th_defer(destroy_cqx_cb, cq);
	return cq;
}

/* The errno of a refused mlx5dv_create_cq (0 when it was created: then destroyed). */
static int dv_refusal(struct ibv_context *c, struct ibv_cq_init_attr_ex *a, struct mlx5dv_cq_init_attr *dv)
{
	struct ibv_cq_ex *cq;

	errno = 0;
	cq = mlx5dv_create_cq(c, a, dv);
	if (cq != NULL) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
		return 0;
	}
	return errno;
}

static void test_refusals(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct mlx5dv_cq_init_attr dv;

	CHECK(c != NULL);
	/* A vendor comp_mask bit mlx5 does not know. */
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE << 1, .cqe_size = 64 };
	CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	/* CQE sizes other than 64 and 128. */
	for (unsigned i = 0; i < 4; i++) {
		static const uint16_t bad[] = { 0, 32, 100, 256 };

		dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = bad[i] };
		CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	}
	/* Padding is of 128-byte CQEs only: 64 asked, or the default 64. */
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE | MLX5DV_CQ_INIT_ATTR_MASK_FLAGS,
					   .cqe_size = 64, .flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD };
	CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS,
					   .flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD };
	CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	/* A flag past the known ones. */
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS,
					   .flags = MLX5DV_CQ_INIT_ATTR_FLAGS_RESERVED };
	CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	/* Compression: no format, two formats at once, a format nobody lists. */
	for (unsigned i = 0; i < 3; i++) {
		static const uint8_t bad[] = { 0, MLX5DV_CQE_RES_FORMAT_HASH | MLX5DV_CQE_RES_FORMAT_CSUM, 8 };

		dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE,
						   .cqe_comp_res_format = bad[i] };
		CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	}
	/* The generic checks come first: an unsupported wc flag is EOPNOTSUPP even with a bad vendor mask. */
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = 1u << 7 };
	a.wc_flags = IBV_WC_STANDARD_FLAGS | (1ull << 20);
	CHECK(dv_refusal(c, &a, &dv) == EOPNOTSUPP);
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.cqe = 0;
	dv = (struct mlx5dv_cq_init_attr){ 0 };
	CHECK(dv_refusal(c, &a, &dv) == EINVAL);
	a.cqe = 16;
	/* Each valid combination is created; no vendor attributes at all is an ordinary CQ. */
	CHECK(dv_refusal(c, &a, NULL) == 0);
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE | MLX5DV_CQ_INIT_ATTR_MASK_FLAGS |
							MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE,
					   .cqe_size = 128, .flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD,
					   .cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX };
	CHECK(dv_refusal(c, &a, &dv) == 0);
	errno = 0;
	CHECK(mlx5dv_create_cq(NULL, &a, &dv) == NULL && errno == EINVAL);
}

/* MLX5_CQE_SIZE sizes every CQ the attributes do not size, ibv_create_cq's too, as mlx5's get_cqe_size. */
static void unset_env_cb(void *arg)
{
	unsetenv(arg);
}

static void test_env_size(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct mlx5dv_cq_init_attr dv = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = 64 };
	struct mlx5dv_obj o;
	struct mlx5dv_cq m;
	struct ibv_cq *cq;

	CHECK(c != NULL);
	th_defer(unset_env_cb, "MLX5_CQE_SIZE");
	CHECK(setenv("MLX5_CQE_SIZE", "100", 1) == 0);
	errno = 0;
	CHECK(ibv_create_cq(c, 16, NULL, NULL, 0) == NULL && errno == EINVAL);
	CHECK(dv_refusal(c, &a, NULL) == EINVAL);
	/* The attribute wins over the variable. */
	CHECK(dv_refusal(c, &a, &dv) == 0);
	CHECK(setenv("MLX5_CQE_SIZE", "128", 1) == 0);
	cq = vq_cq(c, 16);
	CHECK(cq != NULL);
	o = (struct mlx5dv_obj){ .cq = { .in = cq, .out = &m } };
	CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ) == 0);
	CHECK(m.cqe_size == 128 && m.cqe_cnt == 32);
}

static void test_caps(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context d = { .comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION };

	CHECK(c != NULL);
	CHECK(mlx5dv_query_device(c, &d) == 0);
	CHECK(d.comp_mask & MLX5DV_CONTEXT_MASK_CQE_COMPRESION);
	CHECK((d.flags & (MLX5DV_CONTEXT_FLAGS_CQE_V1 | MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP |
			  MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD)) ==
	      (MLX5DV_CONTEXT_FLAGS_CQE_V1 | MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP | MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD));
	CHECK(d.cqe_comp_caps.max_num == 64);
	CHECK(d.cqe_comp_caps.supported_format ==
	      (MLX5DV_CQE_RES_FORMAT_HASH | MLX5DV_CQE_RES_FORMAT_CSUM | MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX));
}

/* ---- the CQEs themselves ---- */

/* The receiving side: a QP whose receives complete into an mlx5dv CQ, and its buffers. */
struct rx {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_cq *scq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct mlx5dv_cq dv;
	uint32_t ci;		   /* the raw reader's index (it polls nothing: the API poll does) */
	uint8_t raw[3][NWR][64];   /* each round's 64-byte CQEs, as read raw */
};

static uint8_t rx_buf[NWR][BUF] __attribute__((aligned(4096)));
static uint8_t tx_buf[BUF] __attribute__((aligned(4096)));

static void rx_open(struct rx *r, uint16_t size, uint32_t flags, uint8_t comp)
{
	struct mlx5dv_obj o;

	if (r->c == NULL) /* else the caller's context (a parent domain's) */
		r->c = vf_open();
	CHECK(r->c != NULL);
	r->pd = vf_pd(r->c);
	r->cq = dv_cq(r->c, RING_CQE, size, flags, comp);
	r->scq = vq_cq(r->c, 16);
	CHECK(r->pd != NULL && r->cq != NULL && r->scq != NULL);
	r->qp = vq_qp(r->pd, IBV_QPT_RC, r->scq, ibv_cq_ex_to_cq(r->cq), 16);
	r->mr = vq_mr(r->pd, rx_buf, sizeof(rx_buf), VQ_ACCESS_ALL);
	CHECK(r->qp != NULL && r->mr != NULL);
	o = (struct mlx5dv_obj){ .cq = { .in = ibv_cq_ex_to_cq(r->cq), .out = &r->dv } };
	CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ) == 0);
	CHECK(r->dv.cqe_size == (size != 0 ? size : 64u) && r->dv.cqe_cnt == RING_CQE + 1);
	CHECK(r->dv.buf != NULL);
}

static void rx_post(struct rx *r)
{
	for (int i = 0; i < NWR; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)rx_buf[i], .length = BUF, .lkey = r->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100u + (unsigned)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		CHECK(ibv_post_recv(r->qp, &wr, &bad) == 0);
	}
}

/*
 * The sender's four operations: SEND 60 bytes, SEND with immediate 140,
 * WRITE with immediate 70 (into the first receive buffer), SEND of nothing.
 */
static const uint32_t op_len[NWR] = { 60, 140, 70, 0 };

static int send_four(struct ibv_qp *qp, struct ibv_cq *cq, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	static const enum ibv_wr_opcode ops[NWR] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM,
						     IBV_WR_SEND };
	struct ibv_wc wc;

	for (int i = 0; i < NWR; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)tx_buf, .length = op_len[i], .lkey = lkey };
		struct ibv_send_wr wr = { .wr_id = (unsigned)i, .sg_list = &sge, .num_sge = op_len[i] ? 1 : 0,
					  .opcode = ops[i], .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.imm_data = htobe32(i == 1 ? IMM1 : IMM2);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
			return -1;
	}
	return 0;
}

/* CQE i's 64-byte part, where mlx5's get_cqe finds it. */
static volatile struct mlx5_cqe64 *rx_cqe(const struct rx *r, uint32_t i)
{
	uint8_t *e = (uint8_t *)r->dv.buf + (size_t)(i & (r->dv.cqe_cnt - 1)) * r->dv.cqe_size;

	return (volatile struct mlx5_cqe64 *)(e + r->dv.cqe_size - 64);
}

/* Reads the round's CQEs raw by owner bit, checks their fields against what was sent, and keeps them. */
static void rx_read_raw(struct rx *r, int round, uint32_t peer_qpn)
{
	for (int k = 0; k < NWR; k++, r->ci++) {
		static const uint8_t op[NWR] = { MLX5_CQE_RESP_SEND, MLX5_CQE_RESP_SEND_IMM, MLX5_CQE_RESP_WR_IMM,
						 MLX5_CQE_RESP_SEND };
		volatile struct mlx5_cqe64 *e = rx_cqe(r, r->ci);
		uint8_t owner = (r->ci / r->dv.cqe_cnt) & 1, *keep = r->raw[round][k];
		struct mlx5_cqe64 v;
		long t;

		for (t = 0; t < RAW_TRIES; t++) {
			uint8_t oo = __atomic_load_n(&e->op_own, __ATOMIC_ACQUIRE);

			if ((oo >> 4) != MLX5_CQE_INVALID && (oo & MLX5_CQE_OWNER_MASK) == owner)
				break;
		}
		CHECK(t < RAW_TRIES);
		memcpy(&v, (const void *)e, sizeof(v));
		if (r->dv.cqe_size == 128) {
			const volatile uint8_t *pad = (const volatile uint8_t *)e - 64;

			for (int b = 0; b < 64; b++)
				CHECK(pad[b] == 0); /* no inline scatter: the first half stays as created */
		}
		CHECK(v.op_own >> 4 == op[k] && (v.op_own & MLX5_CQE_OWNER_MASK) == owner);
		CHECK(be32toh(v.byte_cnt) == op_len[k]);
		CHECK((be32toh(v.sop_drop_qpn) & 0xffffffu) == r->qp->qp_num);
		CHECK(be16toh(v.wqe_counter) == (uint16_t)(round * NWR + k));
		CHECK(k == 0 || k == 3 || v.imm_inval_pkey == htobe32(k == 1 ? IMM1 : IMM2));
		CHECK(v.timestamp == 0);
		/* What names this QP pair is checked; the rest must equal any other run's, byte for byte. */
		CHECK((be32toh(v.flags_rqpn) & 0xffffffu) == 0 || (be32toh(v.flags_rqpn) & 0xffffffu) == peer_qpn);
		v.sop_drop_qpn = 0;
		v.flags_rqpn &= htobe32(0xff000000u);
		v.op_own &= (uint8_t)~MLX5_CQE_OWNER_MASK;
		memcpy(keep, &v, sizeof(v));
	}
}

/* The same round through the extended CQ API: each field as sent. */
static void rx_poll(struct rx *r)
{
	static const enum ibv_wc_opcode op[NWR] = { IBV_WC_RECV, IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV };
	struct ibv_poll_cq_attr pa = { 0 };
	int rc;
	long t;

	for (t = 0; (rc = ibv_start_poll(r->cq, &pa)) == ENOENT && t < VQ_POLL_TRIES; t++)
		;
	CHECK(rc == 0);
	for (int k = 0; k < NWR; k++) {
		if (k > 0) {
			for (t = 0; (rc = ibv_next_poll(r->cq)) == ENOENT && t < VQ_POLL_TRIES; t++)
				;
			CHECK(rc == 0);
		}
		CHECK(r->cq->status == IBV_WC_SUCCESS && r->cq->wr_id == 100u + (unsigned)k);
		CHECK(ibv_wc_read_opcode(r->cq) == op[k] && ibv_wc_read_byte_len(r->cq) == op_len[k]);
		CHECK(ibv_wc_read_qp_num(r->cq) == r->qp->qp_num);
		CHECK(k == 0 || k == 3 || ibv_wc_read_imm_data(r->cq) == htobe32(k == 1 ? IMM1 : IMM2));
		CHECK(!!(ibv_wc_read_wc_flags(r->cq) & IBV_WC_WITH_IMM) == (k == 1 || k == 2));
	}
	CHECK(ibv_next_poll(r->cq) == ENOENT);
	ibv_end_poll(r->cq);
}

/* The bytes received: the SENDs in their buffers, the WRITE in the first. */
static void rx_check_data(int round)
{
	for (int k = 0; k < NWR; k++)
		for (uint32_t b = 0; b < op_len[k]; b++)
			CHECK(rx_buf[k == 2 ? 0 : k][b] == (uint8_t)(round * 31 + b));
}

static void tx_fill(int round)
{
	for (uint32_t b = 0; b < BUF; b++)
		tx_buf[b] = (uint8_t)(round * 31 + b);
}

/* Three rounds from a QP of this process: they wrap the 8-entry ring (owner bit 1 in the third). */
static void run_local(struct rx *r, uint16_t size, uint32_t flags, uint8_t comp)
{
	struct ibv_qp *tx;
	struct ibv_mr *tmr;

	rx_open(r, size, flags, comp);
	tx = vq_qp(r->pd, IBV_QPT_RC, r->scq, r->scq, 16);
	tmr = vq_mr(r->pd, tx_buf, sizeof(tx_buf), VQ_ACCESS_ALL);
	CHECK(tx != NULL && tmr != NULL);
	CHECK(vq_up(tx, r->qp->qp_num, 1, 7) == 0 && vq_up(r->qp, tx->qp_num, 1, 7) == 0);
	for (int round = 0; round < 3; round++) {
		rx_post(r);
		tx_fill(round);
		/* The WRITE lands after the first SEND's bytes were delivered into the same buffer. */
		CHECK(send_four(tx, r->scq, tmr->lkey, (uintptr_t)rx_buf[0], r->mr->rkey) == 0);
		rx_read_raw(r, round, tx->qp_num);
		rx_poll(r);
		rx_check_data(round);
	}
}

static struct rx r64, r128;

static void test_cqe_64_and_128(void)
{
	memset(&r64, 0, sizeof(r64));
	memset(&r128, 0, sizeof(r128));
	run_local(&r64, 64, 0, 0);
	run_local(&r128, 128, 0, 0);
	/* The 128-byte entries hold, in their last 64 bytes, exactly the 64-byte CQEs. */
	CHECK(memcmp(r64.raw, r128.raw, sizeof(r64.raw)) == 0);
}

/* Padding and each compression format: the device writes the same CQEs (it never merges them). */
static void test_pad_and_compression(void)
{
	static const uint8_t fmt[] = { MLX5DV_CQE_RES_FORMAT_HASH, MLX5DV_CQE_RES_FORMAT_CSUM,
				       MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX };
	static struct rx r;

	memset(&r, 0, sizeof(r));
	run_local(&r, 128, MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD, 0);
	CHECK(memcmp(r64.raw, r.raw, sizeof(r.raw)) == 0);
	for (unsigned i = 0; i < sizeof(fmt); i++) {
		memset(&r, 0, sizeof(r));
		run_local(&r, i == 1 ? 64 : 128, 0, fmt[i]);
		CHECK(memcmp(r64.raw, r.raw, sizeof(r.raw)) == 0);
	}
}

/*
 * A resize keeps the CQE size: the ring grows to 32 entries of 128 bytes,
 * and the next rounds' CQEs are where mlx5 reads them in the new ring.
 */
static void test_cqe_128_resized(void)
{
	static struct rx r;
	struct ibv_qp *tx;
	struct ibv_mr *tmr;

	memset(&r, 0, sizeof(r));
	rx_open(&r, 128, 0, 0);
	tx = vq_qp(r.pd, IBV_QPT_RC, r.scq, r.scq, 16);
	tmr = vq_mr(r.pd, tx_buf, sizeof(tx_buf), VQ_ACCESS_ALL);
	CHECK(tx != NULL && tmr != NULL);
	CHECK(vq_up(tx, r.qp->qp_num, 1, 7) == 0 && vq_up(r.qp, tx->qp_num, 1, 7) == 0);
	CHECK(ibv_resize_cq(ibv_cq_ex_to_cq(r.cq), 31) == 0);
	{
		struct mlx5dv_obj o = { .cq = { .in = ibv_cq_ex_to_cq(r.cq), .out = &r.dv } };

		CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ) == 0);
		CHECK(r.dv.cqe_size == 128 && r.dv.cqe_cnt == 32);
	}
	for (int round = 0; round < 3; round++) {
		rx_post(&r);
		tx_fill(round);
		CHECK(send_four(tx, r.scq, tmr->lkey, (uintptr_t)rx_buf[0], r.mr->rkey) == 0);
		rx_read_raw(&r, round, tx->qp_num);
		rx_poll(&r);
		rx_check_data(round);
	}
	CHECK(memcmp(r64.raw, r.raw, sizeof(r.raw)) == 0);
}

/* ---- a ring from a parent domain's allocators ---- */

static struct {
	void *p[8];
	size_t size[8];
	uint64_t type[8];
	int n, freed;
} pa;

static void *pa_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	void *p;

	(void)pd, (void)ctx;
	if (pa.n == 8 || (p = aligned_alloc(align < 4096 ? 4096 : align, (size + 4095) & ~(size_t)4095)) == NULL)
		return NULL;
	pa.p[pa.n] = p;
	pa.size[pa.n] = size;
	pa.type[pa.n++] = type;
	return p;
}

static void pa_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	(void)pd, (void)ctx, (void)type;
	free(ptr);
	pa.freed++;
}

static void pa_forget_cb(void *arg)
{
	(void)arg;
	dv_parent = NULL;
}

/*
 * ibv_alloc_parent_domain(3)'s allocators give the ring of a CQ of 128-byte
 * CQEs: asked for 128 bytes per CQE, the device writes at that stride in
 * that memory, and it is given back when the CQ goes.
 */
static void test_cqe_128_parent_domain(void)
{
	static struct rx r;
	struct ibv_context *c = vf_open();
	struct ibv_parent_domain_init_attr pda = { .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
						   .alloc = pa_alloc, .free = pa_free };
	struct ibv_qp *tx;
	struct ibv_mr *tmr;
	int ring = -1;

	CHECK(c != NULL);
	memset(&pa, 0, sizeof(pa));
	pda.pd = vf_pd(c);
	CHECK(pda.pd != NULL);
	dv_parent = ibv_alloc_parent_domain(c, &pda);
	CHECK(dv_parent != NULL);
	th_defer(vf_dealloc_pd_cb, dv_parent);
	th_defer(pa_forget_cb, NULL);
	memset(&r, 0, sizeof(r));
	r.c = c;
	rx_open(&r, 128, 0, 0);
	for (int i = 0; i < pa.n; i++)
		if (pa.type[i] == MLX5DV_RES_TYPE_CQ)
			ring = i;
	CHECK(ring >= 0 && pa.size[ring] >= 128u * (RING_CQE + 1) && r.dv.buf == pa.p[ring]);
	tx = vq_qp(r.pd, IBV_QPT_RC, r.scq, r.scq, 16);
	tmr = vq_mr(r.pd, tx_buf, sizeof(tx_buf), VQ_ACCESS_ALL);
	CHECK(tx != NULL && tmr != NULL);
	CHECK(vq_up(tx, r.qp->qp_num, 1, 7) == 0 && vq_up(r.qp, tx->qp_num, 1, 7) == 0);
	for (int round = 0; round < 3; round++) {
		rx_post(&r);
		tx_fill(round);
		CHECK(send_four(tx, r.scq, tmr->lkey, (uintptr_t)rx_buf[0], r.mr->rkey) == 0);
		rx_read_raw(&r, round, tx->qp_num);
		rx_poll(&r);
		rx_check_data(round);
	}
	CHECK(memcmp(r64.raw, r.raw, sizeof(r.raw)) == 0);
}

/* ---- from another process: its requester writes into this process's 128-byte CQ ---- */

static int sender_role(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = pd != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *qp = cq != NULL ? ibv_create_qp(pd, &qa) : NULL;
	struct ibv_mr *mr = qp != NULL ? ibv_reg_mr(pd, tx_buf, sizeof(tx_buf), VQ_ACCESS_ALL) : NULL;
	char line[256];
	unsigned dest = 0, rkey = 0;
	unsigned long long raddr = 0;
	int rc = 1, round = 0;

	if (mr == NULL)
		goto out;
	printf("QPN %u\n", qp->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "CONNECT %u %llx %x", &dest, &raddr, &rkey) != 3 ||
	    vq_up(qp, dest, 1, 7) != 0)
		goto out;
	printf("UP\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL && strncmp(line, "GO", 2) == 0) {
		tx_fill(round++);
		printf("DONE %d\n", send_four(qp, cq, mr->lkey, raddr, rkey));
		fflush(stdout);
	}
	rc = 0;
out:
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (qp != NULL)
		ibv_destroy_qp(qp);
	if (cq != NULL)
		ibv_destroy_cq(cq);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	if (c != NULL)
		ibv_close_device(c);
	if (l != NULL)
		ibv_free_device_list(l);
	return rc;
}

static void test_cqe_128_other_process(void)
{
	static struct rx r;
	struct th_proc *p = th_proc_start(NULL, "sender", NULL);
	unsigned peer = 0;
	const char *l;
	int done = -1;

	CHECK(p != NULL);
	memset(&r, 0, sizeof(r));
	rx_open(&r, 128, 0, 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "QPN %u", &peer) == 1);
	CHECK(vq_up(r.qp, peer, 1, 7) == 0);
	CHECK(th_proc_send(p, "CONNECT %u %llx %x", r.qp->qp_num, (unsigned long long)(uintptr_t)rx_buf[0],
			   r.mr->rkey) == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && strcmp(l, "UP") == 0);
	for (int round = 0; round < 3; round++) {
		rx_post(&r);
		CHECK(th_proc_send(p, "GO") == 0);
		l = th_proc_line(p);
		CHECK(l != NULL && sscanf(l, "DONE %d", &done) == 1 && done == 0);
		rx_read_raw(&r, round, peer);
		rx_poll(&r);
		rx_check_data(round);
	}
	/* Byte for byte the CQEs a QP of this process got (test_cqe_64_and_128). */
	CHECK(memcmp(r64.raw, r.raw, sizeof(r.raw)) == 0);
	th_proc_close_input(p);
	CHECK(th_proc_wait(p) == 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "sender") == 0)
		return sender_role();
	setenv("MLX5_SCATTER_TO_CQE", "0", 1);
	RUN(test_refusals);
	RUN(test_env_size);
	RUN(test_caps);
	RUN(test_cqe_64_and_128);
	RUN(test_pad_and_compression);
	RUN(test_cqe_128_resized);
	RUN(test_cqe_128_parent_domain);
	RUN(test_cqe_128_other_process);
	return th_summary("test_verbs_dvcq");
}
