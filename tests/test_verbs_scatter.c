/*
 * Responder scatter to CQE (rdma-core v44: mlx5dv_create_qp(3)'s
 * MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE / _ALLOW_, MLX5_SCATTER_TO_CQE,
 * mlx5's poll): on an RC or UC QP, a SEND of at most 32 bytes into a
 * receive CQ of 64-byte CQEs, or 64 bytes into one of 128-byte CQEs, is
 * written into the CQE (op_own's INLINE_SCATTER_32 / _64: the 64-byte
 * CQE's first 32 bytes, or the 128-byte entry's first 64) and not into the
 * receive buffer; the poll (ibv_poll_cq, the extended poll) copies it to
 * the receive's entries. Larger SENDs, disabled scatter and UD receives go
 * to the buffer as ever.
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
#include "verbs_qp_fixture.h"

#define BUF 256
#define RAW_TRIES 100000000L
#define FILL 0xee
#define IMM 0x5a5a1234u

static uint8_t rx_buf[BUF] __attribute__((aligned(4096)));
static uint8_t tx_buf[BUF] __attribute__((aligned(4096)));

static void destroy_cqx_cb(void *arg)
{
	ibv_destroy_cq(ibv_cq_ex_to_cq(arg));
}

/* A receive CQ of cqe_size-byte CQEs (mlx5dv_create_cq) and its raw view. */
static void rcq_open(struct ibv_context *c, uint32_t cqe_size, struct mlx5dv_cq *dv, struct ibv_cq_ex **out)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 15, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct mlx5dv_cq_init_attr d = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = (uint16_t)cqe_size };
	struct ibv_cq_ex *cq = mlx5dv_create_cq(c, &a, &d);
	struct mlx5dv_obj o;

	*out = cq;
	CHECK(cq != NULL);
	th_defer(destroy_cqx_cb, cq);
	o = (struct mlx5dv_obj){ .cq = { .in = ibv_cq_ex_to_cq(cq), .out = dv } };
	CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ) == 0);
	CHECK(dv->cqe_size == cqe_size);
}

/* What one case sets up: a receiver (rx) whose receive CQ is rcq, a sender (tx). */
struct sc {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_cq_ex *rcqx; /* rcq as an extended CQ */
	struct mlx5dv_cq dv;
	struct ibv_qp *rx, *tx;
	struct ibv_srq *srq;
	struct ibv_mr *rmr, *tmr;
	uint32_t ci;
};

/* How the receiver's QP is made: 0 ibv_create_qp; else mlx5dv_create_qp with these create flags. */
static void rx_qp(struct sc *s, enum ibv_qp_type type, uint32_t dv_flags, bool use_dv)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = s->scq, .recv_cq = s->rcq, .srq = s->srq, .qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 4, .max_recv_sge = 4 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = s->pd,
	};
	struct mlx5dv_qp_init_attr d = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
					 .create_flags = dv_flags };
	struct ibv_qp *qp = use_dv ? mlx5dv_create_qp(s->c, &a, &d) : ibv_create_qp_ex(s->c, &a);

	s->rx = qp;
	CHECK(qp != NULL);
	th_defer(vq_destroy_qp_cb, qp);
}

/* UC to RTS: no RNR, retry or read attributes (IB's UC modify masks). */
static int uc_up(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
				 .ah_attr = { .is_global = 1, .grh = { .hop_limit = 1 }, .port_num = 1 } };
	struct ibv_qp_attr t = { .qp_state = IBV_QPS_RTS };
	int rc = vq_to_init(qp);

	if (rc == 0)
		rc = ibv_query_gid(qp->context, 1, 0, &r.ah_attr.grh.dgid);
	if (rc == 0)
		rc = ibv_modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	return rc == 0 ? ibv_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN) : rc;
}

static void sc_open(struct sc *s, enum ibv_qp_type type, uint32_t cqe_size, bool srq, uint32_t dv_flags, bool use_dv)
{
	memset(s, 0, sizeof(*s));
	s->c = vf_open();
	CHECK(s->c != NULL);
	s->pd = vf_pd(s->c);
	s->scq = vq_cq(s->c, 16);
	rcq_open(s->c, cqe_size, &s->dv, &s->rcqx);
	CHECK(s->rcqx != NULL);
	s->rcq = ibv_cq_ex_to_cq(s->rcqx);
	if (srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 4 } };

		s->srq = ibv_create_srq(s->pd, &sa);
		CHECK(s->srq != NULL);
		th_defer(vq_destroy_srq_cb, s->srq);
	}
	rx_qp(s, type, dv_flags, use_dv);
	CHECK(s->rx != NULL);
	s->tx = vq_qp(s->pd, type, s->scq, s->scq, 8);
	s->rmr = vq_mr(s->pd, rx_buf, sizeof(rx_buf), VQ_ACCESS_ALL);
	s->tmr = vq_mr(s->pd, tx_buf, sizeof(tx_buf), VQ_ACCESS_ALL);
	CHECK(s->tx != NULL && s->rmr != NULL && s->tmr != NULL);
	if (type == IBV_QPT_UD) {
		CHECK(vq_up(s->rx, 0, 1, 7) == 0 && vq_up(s->tx, 0, 1, 7) == 0);
	} else if (type == IBV_QPT_UC) {
		CHECK(uc_up(s->tx, s->rx->qp_num) == 0 && uc_up(s->rx, s->tx->qp_num) == 0);
	} else {
		CHECK(vq_up(s->tx, s->rx->qp_num, 1, 7) == 0 && vq_up(s->rx, s->tx->qp_num, 1, 7) == 0);
	}
}

/* One receive of the given entries (lengths; 0 ends the list) over rx_buf, filled with FILL. */
static void sc_post_recv(struct sc *s, const uint32_t *lens, uint32_t n)
{
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = sge, .num_sge = (int)n }, *bad;
	uint64_t at = 0;

	memset(rx_buf, FILL, sizeof(rx_buf));
	for (uint32_t i = 0; i < n; i++) {
		/* 16 bytes apart, so a copy spilling past an entry shows */
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)rx_buf + at, .length = lens[i], .lkey = s->rmr->lkey };
		at += lens[i] + 16;
	}
	if (s->srq != NULL)
		CHECK(ibv_post_srq_recv(s->srq, &wr, &bad) == 0);
	else
		CHECK(ibv_post_recv(s->rx, &wr, &bad) == 0);
}

/* A signalled SEND (with immediate when imm) of len bytes of the pattern, completed at the sender. */
static void sc_send(struct sc *s, uint32_t len, bool imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)tx_buf, .length = len, .lkey = s->tmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_ah_attr ah = { .port_num = 1 };
	struct ibv_ah *a = NULL;
	struct ibv_wc wc;

	for (uint32_t b = 0; b < BUF; b++)
		tx_buf[b] = (uint8_t)(b * 7 + 3);
	wr.imm_data = htobe32(IMM);
	if (s->rx->qp_type == IBV_QPT_UD) {
		struct ibv_port_attr pa;

		CHECK(ibv_query_port(s->c, 1, &pa) == 0);
		ah.dlid = pa.lid;
		if (vq_grh_self(s->c, &ah) != 0 || (a = ibv_create_ah(s->pd, &ah)) == NULL) {
			CHECK(0);
			return;
		}
		wr.wr.ud.ah = a;
		wr.wr.ud.remote_qpn = s->rx->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	CHECK(ibv_post_send(s->tx, &wr, &bad) == 0);
	CHECK(vq_poll1(s->scq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	if (a != NULL)
		ibv_destroy_ah(a);
}

/* The next receive CQE read raw (by owner bit): a copy of the whole entry. */
static void sc_raw(struct sc *s, uint8_t *entry)
{
	uint32_t sz = s->dv.cqe_size;
	volatile uint8_t *e = (uint8_t *)s->dv.buf + (size_t)(s->ci & (s->dv.cqe_cnt - 1)) * sz;
	volatile struct mlx5_cqe64 *c = (volatile struct mlx5_cqe64 *)(e + sz - 64);
	uint8_t owner = (s->ci / s->dv.cqe_cnt) & 1;
	long t;

	for (t = 0; t < RAW_TRIES; t++) {
		uint8_t oo = __atomic_load_n(&c->op_own, __ATOMIC_ACQUIRE);

		if ((oo >> 4) != MLX5_CQE_INVALID && (oo & MLX5_CQE_OWNER_MASK) == owner)
			break;
	}
	CHECK(t < RAW_TRIES);
	memcpy(entry, (const void *)e, sz);
	s->ci++;
}

static const struct mlx5_cqe64 *cqe64(const struct sc *s, const uint8_t *entry)
{
	return (const struct mlx5_cqe64 *)(entry + s->dv.cqe_size - 64);
}

/* The pattern's first len bytes at p. */
static bool is_pattern(const uint8_t *p, uint32_t len)
{
	for (uint32_t b = 0; b < len; b++)
		if (p[b] != (uint8_t)(b * 7 + 3))
			return false;
	return true;
}

static bool is_fill(const uint8_t *p, uint32_t len)
{
	for (uint32_t b = 0; b < len; b++)
		if (p[b] != FILL)
			return false;
	return true;
}

/* ibv_poll_cq of the receive: success, len bytes, wr_id 77. */
static void sc_poll(struct sc *s, uint32_t len, bool imm)
{
	struct ibv_wc wc;

	CHECK(vq_poll1(s->rcq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 77 && wc.byte_len == len);
	CHECK(wc.qp_num == s->rx->qp_num);
	CHECK(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm && (!imm || wc.imm_data == htobe32(IMM)));
	if (s->rx->qp_type != IBV_QPT_UD)
		CHECK(wc.src_qp == 0 && wc.slid == 0 && wc.sl == 0 && !(wc.wc_flags & IBV_WC_GRH));
}

/* A SEND of len bytes scattered into the CQE (fmt), the buffer untouched until the poll copies it there. */
static void expect_scattered(struct sc *s, uint32_t len, bool imm, uint8_t fmt)
{
	uint8_t entry[128];
	const struct mlx5_cqe64 *c;
	const uint8_t *area;
	uint32_t room = fmt == MLX5_INLINE_SCATTER_64 ? 64 : 32;
	uint32_t one = len;

	sc_post_recv(s, &one, 1);
	sc_send(s, len, imm);
	sc_raw(s, entry);
	c = cqe64(s, entry);
	area = fmt == MLX5_INLINE_SCATTER_64 ? entry : (const uint8_t *)c;
	CHECK((c->op_own >> 4) == (imm ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND));
	CHECK((c->op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)) == fmt);
	CHECK(be32toh(c->byte_cnt) == len);
	CHECK((be32toh(c->sop_drop_qpn) & 0xffffffu) == s->rx->qp_num);
	CHECK(!imm || c->imm_inval_pkey == htobe32(IMM));
	CHECK(is_pattern(area, len));
	for (uint32_t b = len; b < room; b++)
		CHECK(area[b] == 0);
	CHECK(is_fill(rx_buf, BUF)); /* the device wrote nothing there */
	sc_poll(s, len, imm);
	CHECK(is_pattern(rx_buf, len) && is_fill(rx_buf + len, BUF - len));
}

/* A SEND of len bytes into the buffer, the CQE without format bits (128-byte: its first half zero). */
static void expect_buffer(struct sc *s, uint32_t len)
{
	uint8_t entry[128];
	const struct mlx5_cqe64 *c;
	uint32_t one = len + (s->rx->qp_type == IBV_QPT_UD ? 40u : 0u); /* UD: room for the GRH area */

	sc_post_recv(s, &one, 1);
	sc_send(s, len, false);
	sc_raw(s, entry);
	c = cqe64(s, entry);
	CHECK((c->op_own >> 4) == MLX5_CQE_RESP_SEND);
	CHECK((c->op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)) == 0);
	CHECK(be32toh(c->byte_cnt) == len + (s->rx->qp_type == IBV_QPT_UD ? 40u : 0u));
	if (s->dv.cqe_size == 128)
		for (int b = 0; b < 64; b++)
			CHECK(entry[b] == 0);
	/* UD: the 40-byte GRH area first */
	{
		uint32_t at = s->rx->qp_type == IBV_QPT_UD ? 40 : 0;

		CHECK(is_pattern(rx_buf + at, len)); /* there before any poll */
	}
	{
		struct ibv_wc wc;

		CHECK(vq_poll1(s->rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 77);
	}
}

/* 128-byte CQEs: 1 and 64 bytes in the CQE's first half; 65 to the buffer. */
static void test_cqe128(void)
{
	struct sc s;

	sc_open(&s, IBV_QPT_RC, 128, false, 0, false);
	expect_scattered(&s, 1, false, MLX5_INLINE_SCATTER_64);
	expect_scattered(&s, 64, false, MLX5_INLINE_SCATTER_64);
	expect_scattered(&s, 40, true, MLX5_INLINE_SCATTER_64);
	expect_buffer(&s, 65);
	expect_buffer(&s, 200);
}

/* 64-byte CQEs: up to 32 bytes over the CQE's first 32; 33 to the buffer. */
static void test_cqe64(void)
{
	struct sc s;

	sc_open(&s, IBV_QPT_RC, 64, false, 0, false);
	expect_scattered(&s, 32, false, MLX5_INLINE_SCATTER_32);
	expect_scattered(&s, 5, true, MLX5_INLINE_SCATTER_32);
	expect_buffer(&s, 33);
	expect_buffer(&s, 64);
}

/* UC scatters as RC; a QP on an SRQ too (the SRQ's WQE is the one filled). */
static void test_uc_and_srq(void)
{
	struct sc s;

	sc_open(&s, IBV_QPT_UC, 128, false, 0, false);
	expect_scattered(&s, 17, false, MLX5_INLINE_SCATTER_64);
	sc_open(&s, IBV_QPT_RC, 64, true, 0, false);
	expect_scattered(&s, 30, false, MLX5_INLINE_SCATTER_32);
	expect_buffer(&s, 40);
}

/* The poll spreads the bytes over several entries of the receive, in order. */
static void test_entries(void)
{
	static const uint32_t lens[3] = { 10, 7, 100 };
	uint8_t entry[128];
	struct sc s;
	struct ibv_wc wc;
	const uint8_t *p;

	sc_open(&s, IBV_QPT_RC, 128, false, 0, false);
	sc_post_recv(&s, lens, 3);
	sc_send(&s, 50, false);
	sc_raw(&s, entry);
	CHECK((cqe64(&s, entry)->op_own & MLX5_INLINE_SCATTER_64) != 0);
	CHECK(is_fill(rx_buf, BUF));
	CHECK(vq_poll1(s.rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 50);
	p = rx_buf;
	CHECK(is_pattern(p, 10) && is_fill(p + 10, 16));
	p += 26;
	for (uint32_t b = 0; b < 7; b++)
		CHECK(p[b] == (uint8_t)((10 + b) * 7 + 3));
	CHECK(is_fill(p + 7, 16));
	p += 23;
	for (uint32_t b = 0; b < 33; b++)
		CHECK(p[b] == (uint8_t)((17 + b) * 7 + 3));
	CHECK(is_fill(p + 33, BUF - (size_t)(p + 33 - rx_buf)));
}

/* The extended poll copies as ibv_poll_cq does. */
static void test_ex_poll(void)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint32_t one = 20;
	uint8_t entry[128];
	struct sc s;
	int rc;
	long t;

	sc_open(&s, IBV_QPT_RC, 128, false, 0, false);
	sc_post_recv(&s, &one, 1);
	sc_send(&s, 20, false);
	sc_raw(&s, entry);
	CHECK(is_fill(rx_buf, BUF));
	for (t = 0; (rc = ibv_start_poll(s.rcqx, &pa)) == ENOENT && t < VQ_POLL_TRIES; t++)
		;
	CHECK(rc == 0);
	CHECK(s.rcqx->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_byte_len(s.rcqx) == 20);
	ibv_end_poll(s.rcqx);
	CHECK(is_pattern(rx_buf, 20) && is_fill(rx_buf + 20, BUF - 20));
}

static void unset_env_cb(void *arg)
{
	(void)arg;
	unsetenv("MLX5_SCATTER_TO_CQE");
}

/* Off: MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE, or MLX5_SCATTER_TO_CQE=0 (which _ALLOW_ overrides); UD never. */
static void test_disabled(void)
{
	struct sc s;

	sc_open(&s, IBV_QPT_RC, 128, false, MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE, true);
	expect_buffer(&s, 16);
	sc_open(&s, IBV_QPT_RC, 64, false, MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE, true);
	expect_buffer(&s, 16);
	th_defer(unset_env_cb, NULL);
	setenv("MLX5_SCATTER_TO_CQE", "0", 1);
	sc_open(&s, IBV_QPT_RC, 128, false, 0, false);
	expect_buffer(&s, 16);
	sc_open(&s, IBV_QPT_RC, 128, false, MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, true);
	expect_scattered(&s, 16, false, MLX5_INLINE_SCATTER_64);
	unsetenv("MLX5_SCATTER_TO_CQE");
	sc_open(&s, IBV_QPT_UD, 128, false, 0, false);
	expect_buffer(&s, 8);
}

int main(void)
{
	RUN(test_cqe128);
	RUN(test_cqe64);
	RUN(test_uc_and_srq);
	RUN(test_entries);
	RUN(test_ex_poll);
	RUN(test_disabled);
	return th_summary("test_verbs_scatter");
}
