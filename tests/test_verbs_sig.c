/*
 * libmlx5.so.1: signature mkeys as mlx5dv_create_mkey(3),
 * mlx5dv_wr_set_mkey_sig_block(3), mlx5dv_mkey_check(3),
 * mlx5dv_qp_cancel_posted_send_wrs(3) and mlx5dv_create_qp(3)
 * (MLX5DV_QP_CREATE_SIG_PIPELINING) describe them: the signature caps, the
 * fields a key inserts on the wire (T10-DIF with CRC and IP-checksum guards,
 * CRC32, CRC32C, CRC64) for every block size, the fields it strips and checks
 * on receive, a memory domain converted to another wire domain, each failed
 * check reported by mlx5dv_mkey_check with its type, values and offset,
 * the escapes, the stop of a pipelining QP and the cancel of what waits,
 * and the refusals with their errno.
 *
 * The expected fields are computed here, bit by bit, from the standards'
 * polynomials (checked first against their published check values): CRC16
 * T10-DIF 0x8BB7, CRC32 0x04C11DB7 and CRC32C 0x1EDC6F41 (reflected, the
 * result inverted), CRC64 ECMA-182 (reflected, inverted); the IP checksum
 * of 16-bit big-endian words. Fields are big-endian after each block.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define SG_LEN (64 * 1024)
#define SG_INLINE 512

static uint8_t sg_mem[2][SG_LEN] __attribute__((aligned(4096)));

struct sg_pair {
	struct vq_pair p;
	struct ibv_qp_ex *x[2];
	struct mlx5dv_qp_ex *dx[2];
};

/* ---- the reference arithmetic ---- */

static uint16_t ref_crc16(uint16_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x8BB7) : (uint16_t)(crc << 1);
	}
	return crc;
}

static uint16_t ref_ipcs(uint16_t seed, const uint8_t *p, size_t n)
{
	uint32_t s = seed;

	for (size_t i = 0; i < n; i += 2) {
		s += (uint32_t)(p[i] << 8) | (i + 1 < n ? p[i + 1] : 0);
		s = (s & 0xffff) + (s >> 16);
	}
	return (uint16_t)~s;
}

/* Reflected CRC32 of poly (bit-reversed form), from seed, inverted at the end. */
static uint32_t ref_crc32(uint32_t poly_rev, uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (crc >> 1) ^ poly_rev : crc >> 1;
	}
	return ~crc;
}

static uint64_t ref_crc64(uint64_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xC96C5795D7870F42ull : crc >> 1;
	}
	return ~crc;
}

#define CRC32_REV 0xEDB88320u
#define CRC32C_REV 0x82F63B78u

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* The T10-DIF field of a block: guard, application tag, reference tag. */
static void ref_dif(uint8_t f[8], const struct mlx5dv_sig_t10dif *d, uint32_t blk, const uint8_t *data, size_t n)
{
	put16(f, d->bg_type == MLX5DV_SIG_T10DIF_CRC ? ref_crc16(d->bg, data, n) : ref_ipcs(d->bg, data, n));
	put16(f + 2, d->app_tag);
	put32(f + 4, d->ref_tag + ((d->flags & MLX5DV_SIG_T10DIF_FLAG_REF_REMAP) ? blk : 0));
}

/* A CRC field; its length. */
static uint32_t ref_crc(uint8_t f[8], const struct mlx5dv_sig_crc *c, const uint8_t *data, size_t n)
{
	if (c->type == MLX5DV_SIG_CRC_TYPE_CRC64_XP10) {
		put64(f, ref_crc64(c->seed, data, n));
		return 8;
	}
	put32(f, ref_crc32(c->type == MLX5DV_SIG_CRC_TYPE_CRC32 ? CRC32_REV : CRC32C_REV, (uint32_t)c->seed, data, n));
	return 4;
}

static const uint32_t sg_bs[] = {512, 520, 4048, 4096, 4160};

static void fill_data(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ 0x5a);
}

/* ---- the fixture ---- */

static void sg_destroy_mkey_cb(void *arg)
{
	mlx5dv_destroy_mkey(arg);
}

static struct ibv_qp *sg_qp(struct vq_pair *p, struct ibv_cq *cq, uint32_t create_flags)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = SG_INLINE},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = p->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		.create_flags = create_flags,
		.send_ops_flags = MLX5DV_QP_EX_WITH_MKEY_CONFIGURE,
	};
	struct ibv_qp *qp = mlx5dv_create_qp(p->c, &a, &dv);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

/* Two connected RC QPs with mkey configuration; QP 0's create flags are flags0. */
static void sg_pair(struct sg_pair *u, uint32_t flags0)
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
		p->buf[i] = sg_mem[i];
		memset(p->buf[i], 0, SG_LEN);
		p->mr[i] = vq_mr(p->pd, p->buf[i], SG_LEN, VQ_ACCESS_ALL);
		CHECK(p->mr[i] != NULL);
	}
	for (int i = 0; i < 2; i++) {
		p->qp[i] = sg_qp(p, p->cq[i], i == 0 ? flags0 : 0);
		CHECK(p->qp[i] != NULL);
	}
	for (int i = 0; i < 2; i++) {
		CHECK_OK(vq_up(p->qp[i], p->qp[1 - i]->qp_num, 0, 0));
		u->x[i] = ibv_qp_to_qp_ex(p->qp[i]);
		CHECK(u->x[i] != NULL);
		u->dx[i] = mlx5dv_qp_ex_from_ibv_qp_ex(u->x[i]);
		CHECK(u->dx[i] != NULL);
	}
}

static struct mlx5dv_mkey *sg_mkey(struct ibv_pd *pd, uint32_t flags)
{
	struct mlx5dv_mkey_init_attr a = {.pd = pd, .create_flags = flags, .max_entries = 4};
	struct mlx5dv_mkey *m = mlx5dv_create_mkey(&a);

	if (m != NULL)
		th_defer(sg_destroy_mkey_cb, m);
	return m;
}

static struct mlx5dv_mkey *sg_sig_mkey(struct ibv_pd *pd)
{
	return sg_mkey(pd, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE);
}

static void sg_expect(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st, int op, uint32_t byte_len)
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
	if (byte_len != UINT32_MAX)
		CHECK(wc.byte_len == byte_len);
}

static void sg_no_cqe(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
}

/*
 * Configures m on QP 0 over len bytes of buffer 1 at off (access LOCAL and
 * REMOTE write/read) with signature attribute sa (NULL: none, reset when
 * reset). Returns wr_complete's value; on 0 the UMR's completion is taken.
 */
static int sg_conf(struct sg_pair *u, struct mlx5dv_mkey *m, uint32_t off, uint32_t len,
		   const struct mlx5dv_sig_block_attr *sa, bool reset)
{
	struct mlx5dv_mkey_conf_attr ca = {.conf_flags = reset ? MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR : 0};
	struct ibv_sge s = {.addr = (uintptr_t)u->p.buf[1] + off, .length = len, .lkey = u->p.mr[1]->lkey};
	int rc;

	ibv_wr_start(u->x[0]);
	u->x[0]->wr_id = 100;
	u->x[0]->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(u->dx[0], m, sa != NULL ? 3 : 2, &ca);
	mlx5dv_wr_set_mkey_access_flags(u->dx[0], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							  IBV_ACCESS_REMOTE_READ);
	mlx5dv_wr_set_mkey_layout_list(u->dx[0], 1, &s);
	if (sa != NULL)
		mlx5dv_wr_set_mkey_sig_block(u->dx[0], sa);
	rc = ibv_wr_complete(u->x[0]);
	if (rc == 0)
		sg_expect(u->p.cq[0], 100, IBV_WC_SUCCESS, MLX5DV_WC_UMR, UINT32_MAX);
	return rc;
}

static void sg_local_inv(struct sg_pair *u, struct mlx5dv_mkey *m)
{
	ibv_wr_start(u->x[0]);
	u->x[0]->wr_id = 101;
	u->x[0]->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(u->x[0], m->lkey);
	CHECK_OK(ibv_wr_complete(u->x[0]));
	sg_expect(u->p.cq[0], 101, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, UINT32_MAX);
}

/* One SEND of len bytes at laddr through lkey on QP qi, signaled, wr_id id. */
static int sg_send(struct sg_pair *u, int qi, uint64_t id, unsigned int flags, uint32_t lkey, uint64_t laddr,
		   uint32_t len)
{
	ibv_wr_start(u->x[qi]);
	u->x[qi]->wr_id = id;
	u->x[qi]->wr_flags = flags;
	ibv_wr_send(u->x[qi]);
	ibv_wr_set_sge(u->x[qi], lkey, laddr, len);
	return ibv_wr_complete(u->x[qi]);
}

static int sg_recv(struct ibv_qp *qp, uint64_t id, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

static void sg_check_none(struct mlx5dv_mkey *m)
{
	struct mlx5dv_mkey_err e;

	memset(&e, 0xee, sizeof(e));
	CHECK_OK(mlx5dv_mkey_check(m, &e));
	CHECK(e.err_type == MLX5DV_MKEY_NO_ERR);
}

static void sg_check_err(struct mlx5dv_mkey *m, enum mlx5dv_mkey_err_type t, uint64_t expected, uint64_t actual,
			 uint64_t offset)
{
	struct mlx5dv_mkey_err e;

	memset(&e, 0xee, sizeof(e));
	CHECK_OK(mlx5dv_mkey_check(m, &e));
	if (e.err_type != t || e.err.sig.expected_value != expected || e.err.sig.actual_value != actual ||
	    e.err.sig.offset != offset)
		TH_FAIL("mkey_check: type %d expected 0x%llx actual 0x%llx offset %llu; wanted %d 0x%llx 0x%llx %llu",
			(int)e.err_type, (unsigned long long)e.err.sig.expected_value,
			(unsigned long long)e.err.sig.actual_value, (unsigned long long)e.err.sig.offset, (int)t,
			(unsigned long long)expected, (unsigned long long)actual, (unsigned long long)offset);
	sg_check_none(m); /* reported once */
}

/* ---- cases ---- */

/* The reference arithmetic against the standards' check values ("123456789"). */
static void test_reference_vectors(void)
{
	const uint8_t *v = (const uint8_t *)"123456789";

	CHECK(ref_crc16(0, v, 9) == 0xD0DB);
	CHECK(ref_crc32(CRC32_REV, 0xffffffffu, v, 9) == 0xCBF43926u);
	CHECK(ref_crc32(CRC32C_REV, 0xffffffffu, v, 9) == 0xE3069283u);
	CHECK(ref_crc64(~0ull, v, 9) == 0x995DC9BBDF1939FAull);
}

/* mlx5dv_query_device: the signature caps of a ConnectX-6 Dx. */
static void test_caps(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context a;

	CHECK(c != NULL);
	memset(&a, 0, sizeof(a));
	a.comp_mask = MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD;
	CHECK_OK(mlx5dv_query_device(c, &a));
	CHECK(a.comp_mask & MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD);
	CHECK(a.sig_caps.block_size == (MLX5DV_BLOCK_SIZE_CAP_512 | MLX5DV_BLOCK_SIZE_CAP_520 |
					MLX5DV_BLOCK_SIZE_CAP_4048 | MLX5DV_BLOCK_SIZE_CAP_4096 |
					MLX5DV_BLOCK_SIZE_CAP_4160));
	CHECK(a.sig_caps.block_prot == (MLX5DV_SIG_PROT_CAP_T10DIF | MLX5DV_SIG_PROT_CAP_CRC));
	CHECK(a.sig_caps.t10dif_bg == (MLX5DV_SIG_T10DIF_BG_CAP_CRC | MLX5DV_SIG_T10DIF_BG_CAP_CSUM));
	CHECK(a.sig_caps.crc_type == (MLX5DV_SIG_CRC_TYPE_CAP_CRC32 | MLX5DV_SIG_CRC_TYPE_CAP_CRC32C |
				      MLX5DV_SIG_CRC_TYPE_CAP_CRC64_XP10));
}

/*
 * Insert on transmit: memory without signature, wire T10-DIF (both guards)
 * for every block size: a SEND through the key carries each block's data
 * and its field, the reference tag incremented per block (REF_REMAP).
 */
static void test_insert_t10dif(void)
{
	for (int g = 0; g < 2; g++) {
		for (size_t k = 0; k < sizeof(sg_bs) / sizeof(sg_bs[0]); k++) {
			uint32_t bs = sg_bs[k], wire = 2 * (bs + 8);
			struct mlx5dv_sig_t10dif dif = {.bg_type = g == 0 ? MLX5DV_SIG_T10DIF_CRC : MLX5DV_SIG_T10DIF_CSUM,
							.bg = g == 0 ? 0xffff : 0, .app_tag = 0x1234,
							.ref_tag = 0x100 + (uint32_t)k,
							.flags = MLX5DV_SIG_T10DIF_FLAG_REF_REMAP};
			struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif,
							     .block_size = (enum mlx5dv_block_size)k};
			struct mlx5dv_sig_block_attr sa = {.wire = &wd, .check_mask = 0xff};
			struct sg_pair u;
			struct mlx5dv_mkey *m;
			uint8_t *out, f[8];

			sg_pair(&u, 0);
			m = sg_sig_mkey(u.p.pd);
			CHECK(m != NULL);
			fill_data(u.p.buf[1], 2 * bs, (uint32_t)k);
			CHECK_OK(sg_conf(&u, m, 0, 2 * bs, &sa, false));
			out = u.p.buf[1] + 32768;
			CHECK_OK(sg_recv(u.p.qp[1], 7, u.p.mr[1]->lkey, (uintptr_t)out, 16384));
			CHECK_OK(sg_send(&u, 0, 8, IBV_SEND_SIGNALED, m->lkey, 0, wire));
			sg_expect(u.p.cq[0], 8, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
			sg_expect(u.p.cq[1], 7, IBV_WC_SUCCESS, IBV_WC_RECV, wire);
			for (uint32_t b = 0; b < 2; b++) {
				CHECK(memcmp(out + b * (bs + 8), u.p.buf[1] + b * bs, bs) == 0);
				ref_dif(f, &dif, b, u.p.buf[1] + b * bs, bs);
				CHECK(memcmp(out + b * (bs + 8) + bs, f, 8) == 0);
			}
			sg_check_none(m);
		}
	}
}

/* Insert on transmit, CRC32 / CRC32C / CRC64 with each seed, through an RDMA WRITE from the key. */
static void test_insert_crc(void)
{
	static const struct {
		enum mlx5dv_sig_crc_type t;
		uint64_t seed;
	} cs[] = {{MLX5DV_SIG_CRC_TYPE_CRC32, 0xffffffffu}, {MLX5DV_SIG_CRC_TYPE_CRC32, 0},
		  {MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffffu}, {MLX5DV_SIG_CRC_TYPE_CRC32C, 0},
		  {MLX5DV_SIG_CRC_TYPE_CRC64_XP10, ~0ull}, {MLX5DV_SIG_CRC_TYPE_CRC64_XP10, 0}};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct mlx5dv_sig_crc crc = {.type = cs[i].t, .seed = cs[i].seed};
		struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
						     .block_size = MLX5DV_BLOCK_SIZE_4096};
		struct mlx5dv_sig_block_attr sa = {.wire = &wd, .check_mask = 0xff};
		uint32_t pl = cs[i].t == MLX5DV_SIG_CRC_TYPE_CRC64_XP10 ? 8 : 4, wire = 3 * (4096 + pl);
		struct sg_pair u;
		struct mlx5dv_mkey *m;
		uint8_t *out, f[8];

		sg_pair(&u, 0);
		m = sg_sig_mkey(u.p.pd);
		CHECK(m != NULL);
		fill_data(u.p.buf[1], 3 * 4096, (uint32_t)i);
		CHECK_OK(sg_conf(&u, m, 0, 3 * 4096, &sa, false));
		out = u.p.buf[0] + 16384;
		ibv_wr_start(u.x[0]);
		u.x[0]->wr_id = 9;
		u.x[0]->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(u.x[0], u.p.mr[0]->rkey, (uintptr_t)out);
		ibv_wr_set_sge(u.x[0], m->lkey, 0, wire);
		CHECK_OK(ibv_wr_complete(u.x[0]));
		sg_expect(u.p.cq[0], 9, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, UINT32_MAX);
		for (uint32_t b = 0; b < 3; b++) {
			CHECK(memcmp(out + b * (4096 + pl), u.p.buf[1] + b * 4096, 4096) == 0);
			CHECK(ref_crc(f, &crc, u.p.buf[1] + b * 4096, 4096) == pl);
			CHECK(memcmp(out + b * (4096 + pl) + 4096, f, pl) == 0);
		}
	}
}

/* Builds n blocks of wire data with T10-DIF fields into w (data from seed); returns its length. */
static uint32_t wire_dif(uint8_t *w, uint32_t bs, uint32_t n, const struct mlx5dv_sig_t10dif *dif, uint32_t seed)
{
	for (uint32_t b = 0; b < n; b++) {
		uint8_t *blk = w + b * (bs + 8);

		fill_data(blk, bs, seed + b);
		ref_dif(blk + bs, dif, b, blk, bs);
	}
	return n * (bs + 8);
}

/*
 * Strip on receive: wire T10-DIF, memory without: a SEND of good blocks
 * lands as data only and checks clean; and convert: the same wire into a
 * memory domain of CRC32C, whose fields are generated after each block.
 */
static void test_strip_and_convert(void)
{
	struct mlx5dv_sig_t10dif dif = {.bg_type = MLX5DV_SIG_T10DIF_CRC, .bg = 0xffff, .app_tag = 0xbeef,
					.ref_tag = 77, .flags = MLX5DV_SIG_T10DIF_FLAG_REF_REMAP};
	struct mlx5dv_sig_crc crc = {.type = MLX5DV_SIG_CRC_TYPE_CRC32C, .seed = 0xffffffffu};
	struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif,
					     .block_size = MLX5DV_BLOCK_SIZE_520};
	struct mlx5dv_sig_block_domain md = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
					     .block_size = MLX5DV_BLOCK_SIZE_520};
	struct mlx5dv_sig_block_attr sa = {.wire = &wd, .check_mask = 0xff};
	struct sg_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *src, f[8];
	uint32_t len;

	sg_pair(&u, 0);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	memset(u.p.buf[1], 0xcc, 8192);
	CHECK_OK(sg_conf(&u, m, 0, 3 * 520, &sa, false));
	src = u.p.buf[0];
	len = wire_dif(src, 520, 3, &dif, 5);
	CHECK_OK(sg_recv(u.p.qp[1], 1, m->lkey, 0, len));
	CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, u.p.mr[0]->lkey, (uintptr_t)src, len));
	sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, len);
	for (uint32_t b = 0; b < 3; b++)
		CHECK(memcmp(u.p.buf[1] + b * 520, src + b * 528, 520) == 0);
	CHECK(u.p.buf[1][3 * 520] == 0xcc); /* nothing past the data */
	sg_check_none(m);

	/* Convert: the key again, memory CRC32C now (the pattern holds 3 blocks and their fields). */
	sg_local_inv(&u, m);
	sa.mem = &md;
	memset(u.p.buf[1], 0xcc, 8192);
	CHECK_OK(sg_conf(&u, m, 0, 3 * 524, &sa, false));
	CHECK_OK(sg_recv(u.p.qp[1], 3, m->lkey, 0, len));
	CHECK_OK(sg_send(&u, 0, 4, IBV_SEND_SIGNALED, u.p.mr[0]->lkey, (uintptr_t)src, len));
	sg_expect(u.p.cq[0], 4, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 3, IBV_WC_SUCCESS, IBV_WC_RECV, len);
	for (uint32_t b = 0; b < 3; b++) {
		CHECK(memcmp(u.p.buf[1] + b * 524, src + b * 528, 520) == 0);
		ref_crc(f, &crc, src + b * 528, 520);
		CHECK(memcmp(u.p.buf[1] + b * 524 + 520, f, 4) == 0);
	}
	sg_check_none(m);
}

/*
 * A bad field received: the data still lands and the receive completes
 * successfully; mlx5dv_mkey_check reports the first failed part with the
 * field's value (expected), the computed one (actual) and the block's
 * offset, once. Guard, then application tag, then reference tag.
 */
static void test_receive_errors(void)
{
	for (int k = 0; k < 4; k++) {
		struct mlx5dv_sig_t10dif dif = {.bg_type = MLX5DV_SIG_T10DIF_CRC, .bg = 0, .app_tag = 0x4242,
						.ref_tag = 1000, .flags = MLX5DV_SIG_T10DIF_FLAG_REF_REMAP};
		struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif,
						     .block_size = MLX5DV_BLOCK_SIZE_512};
		struct mlx5dv_sig_block_attr sa = {.wire = &wd,
						   .check_mask = MLX5DV_SIG_MASK_T10DIF_GUARD |
								 MLX5DV_SIG_MASK_T10DIF_APPTAG |
								 MLX5DV_SIG_MASK_T10DIF_REFTAG};
		struct sg_pair u;
		struct mlx5dv_mkey *m;
		uint8_t *src, *fld;
		uint16_t good;
		uint32_t len;

		sg_pair(&u, 0);
		m = sg_sig_mkey(u.p.pd);
		CHECK(m != NULL);
		CHECK_OK(sg_conf(&u, m, 0, 4 * 512, &sa, false));
		src = u.p.buf[0];
		len = wire_dif(src, 512, 4, &dif, 9);
		fld = src + 2 * 520 + 512; /* block 2's field */
		good = (uint16_t)(fld[0] << 8 | fld[1]);
		if (k == 0) {
			fld[1] ^= 0x01; /* guard */
		} else if (k == 1) {
			put16(fld + 2, 0x4243); /* application tag */
		} else if (k == 2) {
			put32(fld + 4, 5); /* reference tag */
		} else {
			fld[0] ^= 0x80;
			put16(fld + 2, 0x1111); /* guard and application tag: the guard is reported */
		}
		CHECK_OK(sg_recv(u.p.qp[1], 1, m->lkey, 0, len));
		CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, u.p.mr[0]->lkey, (uintptr_t)src, len));
		sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
		sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, len);
		CHECK(memcmp(u.p.buf[1] + 2 * 512, src + 2 * 520, 512) == 0);
		if (k == 0)
			sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, good ^ 0x01u, good, 2 * 520);
		else if (k == 1)
			sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG, 0x4243, 0x4242, 2 * 520);
		else if (k == 2)
			sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG, 5, 1002, 2 * 520);
		else
			sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, good ^ 0x8000u, good, 2 * 520);
	}
}

/*
 * check_mask and the escapes: an unchecked part is not compared; with
 * APP_ESCAPE a block whose application tag is 0xFFFF is not checked, with
 * APP_REF_ESCAPE only when the reference tag is 0xFFFFFFFF too.
 */
static void test_mask_and_escapes(void)
{
	for (int k = 0; k < 4; k++) {
		struct mlx5dv_sig_t10dif dif = {.bg_type = MLX5DV_SIG_T10DIF_CSUM, .bg = 0, .app_tag = 7, .ref_tag = 3};
		struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif,
						     .block_size = MLX5DV_BLOCK_SIZE_512};
		struct mlx5dv_sig_block_attr sa = {.wire = &wd, .check_mask = 0xff};
		struct sg_pair u;
		struct mlx5dv_mkey *m;
		uint8_t *src;
		uint16_t good;
		uint32_t len;

		if (k == 0)
			sa.check_mask = MLX5DV_SIG_MASK_T10DIF_APPTAG | MLX5DV_SIG_MASK_T10DIF_REFTAG;
		else if (k == 1)
			dif.flags = MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE;
		else
			dif.flags = MLX5DV_SIG_T10DIF_FLAG_APP_REF_ESCAPE;
		sg_pair(&u, 0);
		m = sg_sig_mkey(u.p.pd);
		CHECK(m != NULL);
		CHECK_OK(sg_conf(&u, m, 0, 512, &sa, false));
		src = u.p.buf[0];
		len = wire_dif(src, 512, 1, &dif, 1);
		good = (uint16_t)(src[512] << 8 | src[513]);
		src[512] ^= 0xff; /* a bad guard */
		if (k >= 1)
			put16(src + 514, 0xffff);
		if (k == 3)
			put32(src + 516, 0xffffffffu);
		CHECK_OK(sg_recv(u.p.qp[1], 1, m->lkey, 0, len));
		CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, u.p.mr[0]->lkey, (uintptr_t)src, len));
		sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
		sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, len);
		if (k == 2) /* APP_REF_ESCAPE with only the application tag escaped: checked */
			sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, good ^ 0xff00u, good, 0);
		else
			sg_check_none(m);
	}
}

/*
 * A memory domain checked on transmit (mlx5dv_wr_set_mkey_sig_block(3)'s
 * example 1): CRC32 after every 512 bytes, stripped; a bad one is the key's
 * error, the SEND still completes with the data alone.
 */
static void test_memory_check_on_send(void)
{
	struct mlx5dv_sig_crc crc = {.type = MLX5DV_SIG_CRC_TYPE_CRC32, .seed = 0xffffffffu};
	struct mlx5dv_sig_block_domain md = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_attr sa = {.mem = &md, .check_mask = MLX5DV_SIG_MASK_CRC32};
	struct sg_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *mem = NULL, f[8], *out;
	uint32_t good;

	sg_pair(&u, 0);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	mem = u.p.buf[1];
	for (uint32_t b = 0; b < 2; b++) {
		fill_data(mem + b * 516, 512, 20 + b);
		ref_crc(f, &crc, mem + b * 516, 512);
		memcpy(mem + b * 516 + 512, f, 4);
	}
	good = (uint32_t)mem[516 + 512] << 24 | (uint32_t)mem[516 + 513] << 16 | (uint32_t)mem[516 + 514] << 8 |
	       mem[516 + 515];
	CHECK_OK(sg_conf(&u, m, 0, 2 * 516, &sa, false));
	out = u.p.buf[0] + 8192;
	CHECK_OK(sg_recv(u.p.qp[1], 1, u.p.mr[0]->lkey, (uintptr_t)out, 4096));
	CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, m->lkey, 0, 1024));
	sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, 1024);
	CHECK(memcmp(out, mem, 512) == 0 && memcmp(out + 512, mem + 516, 512) == 0);
	sg_check_none(m);
	mem[516 + 515] ^= 0x10; /* block 1's CRC */
	CHECK_OK(sg_recv(u.p.qp[1], 3, u.p.mr[0]->lkey, (uintptr_t)out, 4096));
	CHECK_OK(sg_send(&u, 0, 4, IBV_SEND_SIGNALED, m->lkey, 0, 1024));
	sg_expect(u.p.cq[0], 4, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 3, IBV_WC_SUCCESS, IBV_WC_RECV, 1024);
	sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, good ^ 0x10u, good, 516);
}

/*
 * copy_mask (MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK) between domains of one
 * structure: on receive into T10-DIF memory from a T10-DIF wire, the
 * application tag is taken from the wire's field (not the memory domain's
 * configured one), the guard and reference tag are generated.
 */
static void test_copy_mask(void)
{
	struct mlx5dv_sig_t10dif wdif = {.bg_type = MLX5DV_SIG_T10DIF_CRC, .bg = 0xffff, .app_tag = 0x2222,
					 .ref_tag = 40, .flags = MLX5DV_SIG_T10DIF_FLAG_REF_REMAP};
	struct mlx5dv_sig_t10dif mdif = {.bg_type = MLX5DV_SIG_T10DIF_CRC, .bg = 0, .app_tag = 0x1111,
					 .ref_tag = 900, .flags = MLX5DV_SIG_T10DIF_FLAG_REF_REMAP};
	struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &wdif,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_domain md = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &mdif,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_attr sa = {.mem = &md, .wire = &wd, .check_mask = MLX5DV_SIG_MASK_T10DIF_GUARD,
					   .flags = MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK,
					   .copy_mask = MLX5DV_SIG_MASK_T10DIF_APPTAG};
	struct sg_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *src, f[8];
	uint32_t len;

	sg_pair(&u, 0);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	CHECK_OK(sg_conf(&u, m, 0, 2 * 520, &sa, false));
	src = u.p.buf[0];
	len = wire_dif(src, 512, 2, &wdif, 30);
	put16(src + 512 + 2, 0x3333); /* block 0's application tag on the wire: not checked, copied */
	CHECK_OK(sg_recv(u.p.qp[1], 1, m->lkey, 0, len));
	CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, u.p.mr[0]->lkey, (uintptr_t)src, len));
	sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, len);
	for (uint32_t b = 0; b < 2; b++) {
		CHECK(memcmp(u.p.buf[1] + b * 520, src + b * 520, 512) == 0);
		ref_dif(f, &mdif, b, src + b * 520, 512);
		put16(f + 2, b == 0 ? 0x3333 : 0x2222);
		CHECK(memcmp(u.p.buf[1] + b * 520 + 512, f, 8) == 0);
	}
	sg_check_none(m);
}

/* RESET_SIG_ATTR: the key carries plain data again, its length the pattern's. */
static void test_reset_sig_attr(void)
{
	struct mlx5dv_sig_crc crc = {.type = MLX5DV_SIG_CRC_TYPE_CRC32C, .seed = 0};
	struct mlx5dv_sig_block_domain wd = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_attr sa = {.wire = &wd, .check_mask = 0xf0};
	struct sg_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *out;

	sg_pair(&u, 0);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	fill_data(u.p.buf[1], 512, 3);
	CHECK_OK(sg_conf(&u, m, 0, 512, &sa, false));
	sg_local_inv(&u, m);
	CHECK_OK(sg_conf(&u, m, 0, 512, NULL, true));
	out = u.p.buf[0] + 4096;
	memset(out, 0, 1024);
	CHECK_OK(sg_recv(u.p.qp[1], 1, u.p.mr[0]->lkey, (uintptr_t)out, 1024));
	CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, m->lkey, 0, 512));
	sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, 512);
	CHECK(memcmp(out, u.p.buf[1], 512) == 0 && out[512] == 0);
	/* 516 bytes would be the signature's length: beyond the plain key now, a local protection error. */
	CHECK_OK(sg_recv(u.p.qp[1], 3, u.p.mr[0]->lkey, (uintptr_t)out, 1024));
	CHECK_OK(sg_send(&u, 0, 4, IBV_SEND_SIGNALED, m->lkey, 0, 516));
	sg_expect(u.p.cq[0], 4, IBV_WC_LOC_PROT_ERR, 0, UINT32_MAX);
}

static int sg_async(struct ibv_context *c, enum ibv_event_type *t)
{
	struct pollfd pfd = {.fd = c->async_fd, .events = POLLIN};
	struct ibv_async_event ev;

	if (poll(&pfd, 1, 10000) != 1)
		return -1;
	if (ibv_get_async_event(c, &ev) != 0)
		return -1;
	*t = ev.event_type;
	ibv_ack_async_event(&ev);
	return 0;
}

/*
 * SIG_PIPELINING: an RDMA WRITE from a key whose memory check fails, then
 * a fenced SEND: the WRITE completes, the QP stops in SQD (SQ_DRAINED, no
 * further completion, the SEND not sent), the SEND's wr_id is cancelled (a
 * NOP completing as a SEND), a new SEND posted and the move to RTS runs it.
 */
static void test_pipelining(void)
{
	struct mlx5dv_sig_crc crc = {.type = MLX5DV_SIG_CRC_TYPE_CRC32, .seed = 0xffffffffu};
	struct mlx5dv_sig_block_domain md = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_attr sa = {.mem = &md, .check_mask = MLX5DV_SIG_MASK_CRC32};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	enum ibv_event_type ev;
	struct sg_pair u;
	struct mlx5dv_mkey *m;
	uint8_t *dst;

	sg_pair(&u, MLX5DV_QP_CREATE_SIG_PIPELINING);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	CHECK(mlx5dv_qp_cancel_posted_send_wrs(u.dx[0], 7) == -EINVAL); /* not in SQD */
	memset(u.p.buf[1], 'c', 516); /* no valid CRC */
	CHECK_OK(sg_conf(&u, m, 0, 516, &sa, false));
	dst = u.p.buf[0] + 8192;
	CHECK_OK(sg_recv(u.p.qp[1], 1, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 16));
	ibv_wr_start(u.x[0]);
	u.x[0]->wr_id = 7;
	u.x[0]->wr_flags = 0;
	ibv_wr_rdma_write(u.x[0], u.p.mr[0]->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(u.x[0], m->lkey, 0, 512);
	u.x[0]->wr_id = 7;
	u.x[0]->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_send(u.x[0]);
	ibv_wr_set_sge(u.x[0], u.p.mr[1]->lkey, (uintptr_t)u.p.buf[1] + 4096, 16);
	CHECK_OK(ibv_wr_complete(u.x[0]));
	CHECK_OK(sg_async(u.p.c, &ev));
	CHECK(ev == IBV_EVENT_SQ_DRAINED);
	sg_no_cqe(u.p.cq[0]);
	sg_no_cqe(u.p.cq[1]);
	CHECK(memcmp(dst, u.p.buf[1], 512) == 0); /* the WRITE's data went */
	CHECK_OK(ibv_query_qp(u.p.qp[0], &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == IBV_QPS_SQD);
	sg_check_err(m, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, 0x63636363u, ref_crc32(CRC32_REV, 0xffffffffu, u.p.buf[1], 512),
		     0);
	CHECK(mlx5dv_qp_cancel_posted_send_wrs(u.dx[0], 99) == 0);
	CHECK(mlx5dv_qp_cancel_posted_send_wrs(u.dx[0], 7) == 1);
	CHECK_OK(sg_send(&u, 0, 8, IBV_SEND_SIGNALED, u.p.mr[1]->lkey, (uintptr_t)u.p.buf[1] + 4096, 16));
	sg_no_cqe(u.p.cq[0]); /* still stopped */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	qa.cur_qp_state = IBV_QPS_SQD;
	CHECK_OK(ibv_modify_qp(u.p.qp[0], &qa, IBV_QP_STATE | IBV_QP_CUR_STATE));
	sg_expect(u.p.cq[0], 7, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[0], 8, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, 16);
	sg_no_cqe(u.p.cq[1]); /* the cancelled SEND sent nothing */
	CHECK_OK(ibv_query_qp(u.p.qp[0], &qa, IBV_QP_STATE, &qi));
	CHECK(qa.qp_state == IBV_QPS_RTS);
}

/* A pipelining QP whose transfers check clean does not stop. */
static void test_pipelining_good(void)
{
	struct mlx5dv_sig_crc crc = {.type = MLX5DV_SIG_CRC_TYPE_CRC32, .seed = 0xffffffffu};
	struct mlx5dv_sig_block_domain md = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_attr sa = {.mem = &md, .check_mask = MLX5DV_SIG_MASK_CRC32};
	struct sg_pair u;
	struct mlx5dv_mkey *m;
	uint8_t f[8];

	sg_pair(&u, MLX5DV_QP_CREATE_SIG_PIPELINING);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	fill_data(u.p.buf[1], 512, 4);
	ref_crc(f, &crc, u.p.buf[1], 512);
	memcpy(u.p.buf[1] + 512, f, 4);
	CHECK_OK(sg_conf(&u, m, 0, 516, &sa, false));
	CHECK_OK(sg_recv(u.p.qp[1], 1, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0], 1024));
	CHECK_OK(sg_recv(u.p.qp[1], 4, u.p.mr[0]->lkey, (uintptr_t)u.p.buf[0] + 2048, 1024));
	CHECK_OK(sg_send(&u, 0, 2, IBV_SEND_SIGNALED, m->lkey, 0, 512));
	CHECK_OK(sg_send(&u, 0, 3, IBV_SEND_SIGNALED | IBV_SEND_FENCE, u.p.mr[1]->lkey, (uintptr_t)u.p.buf[1], 16));
	sg_expect(u.p.cq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[0], 3, IBV_WC_SUCCESS, IBV_WC_SEND, UINT32_MAX);
	sg_expect(u.p.cq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV, 512);
	sg_expect(u.p.cq[1], 4, IBV_WC_SUCCESS, IBV_WC_RECV, 16);
	CHECK(memcmp(u.p.buf[0], u.p.buf[1], 512) == 0);
	sg_check_none(m);
}

/* The refusals, all at wr_complete as mlx5's: EINVAL, ENOMEM for a segment that does not fit. */
static void test_bad_input(void)
{
	struct mlx5dv_sig_t10dif dif = {.bg_type = MLX5DV_SIG_T10DIF_CRC, .bg = 0xffff};
	struct mlx5dv_sig_crc crc = {.type = MLX5DV_SIG_CRC_TYPE_CRC32, .seed = 0xffffffffu};
	struct mlx5dv_sig_block_domain dd = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_domain cd = {.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc,
					     .block_size = MLX5DV_BLOCK_SIZE_512};
	struct mlx5dv_sig_block_attr sa;
	struct mlx5dv_mkey_err e;
	struct sg_pair u;
	struct mlx5dv_mkey *m, *plain;

	sg_pair(&u, 0);
	m = sg_sig_mkey(u.p.pd);
	CHECK(m != NULL);
	plain = sg_mkey(u.p.pd, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	CHECK(plain != NULL);
	CHECK_ERR(mlx5dv_mkey_check(plain, &e), EINVAL); /* no signature context */
	CHECK(mlx5dv_qp_cancel_posted_send_wrs(u.dx[0], 1) == -EINVAL); /* not a pipelining QP */
	/* Neither domain. */
	sa = (struct mlx5dv_sig_block_attr){.check_mask = 0xff};
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	/* A block size beyond the enum. */
	dd.block_size = (enum mlx5dv_block_size)(MLX5DV_BLOCK_SIZE_4160 + 1);
	sa.wire = &dd;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	dd.block_size = MLX5DV_BLOCK_SIZE_512;
	/* A T10-DIF seed other than 0 / 0xFFFF, an unknown guard type, unknown flags. */
	dif.bg = 0x1234;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	dif.bg = 0;
	dif.bg_type = (enum mlx5dv_sig_t10dif_bg_type)2;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	dif.bg_type = MLX5DV_SIG_T10DIF_CRC;
	dif.flags = 1u << 3;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	dif.flags = 0;
	/* A CRC seed other than 0 / all ones, an unknown CRC type. */
	sa.wire = &cd;
	crc.seed = 5;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	crc.seed = 0;
	crc.type = (enum mlx5dv_sig_crc_type)3;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	crc.type = MLX5DV_SIG_CRC_TYPE_CRC32;
	/* A domain comp_mask, an attribute comp_mask, an unknown attribute flag. */
	cd.comp_mask = 1;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	cd.comp_mask = 0;
	sa.comp_mask = 1;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	sa.comp_mask = 0;
	sa.flags = 2;
	CHECK_ERR(sg_conf(&u, m, 0, 512, &sa, false), EINVAL);
	/* COPY_MASK across domains of different structures (CRC32 memory, T10-DIF wire; or other block sizes). */
	sa.flags = MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK;
	sa.copy_mask = 0xff;
	sa.mem = &cd;
	sa.wire = &dd;
	CHECK_ERR(sg_conf(&u, m, 0, 516, &sa, false), EINVAL);
	dd.block_size = MLX5DV_BLOCK_SIZE_4096;
	sa.mem = &dd;
	{
		struct mlx5dv_sig_block_domain d2 = dd;

		d2.block_size = MLX5DV_BLOCK_SIZE_512;
		sa.wire = &d2;
		CHECK_ERR(sg_conf(&u, m, 0, 4104, &sa, false), EINVAL);
		d2.block_size = MLX5DV_BLOCK_SIZE_4096; /* the same structure: taken */
		CHECK_OK(sg_conf(&u, m, 0, 4104, &sa, false));
		sg_local_inv(&u, m);
	}
	/* The setter on a key without signature, and twice in one WQE. */
	sa = (struct mlx5dv_sig_block_attr){.wire = &cd, .check_mask = 0xf0};
	CHECK_ERR(sg_conf(&u, plain, 0, 512, &sa, false), EINVAL);
	{
		struct mlx5dv_mkey_conf_attr ca = {0};
		struct ibv_sge s = {.addr = (uintptr_t)u.p.buf[1], .length = 512, .lkey = u.p.mr[1]->lkey};

		ibv_wr_start(u.x[0]);
		u.x[0]->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		mlx5dv_wr_mkey_configure(u.dx[0], m, 3, &ca);
		mlx5dv_wr_set_mkey_sig_block(u.dx[0], &sa);
		mlx5dv_wr_set_mkey_sig_block(u.dx[0], &sa);
		mlx5dv_wr_set_mkey_layout_list(u.dx[0], 1, &s);
		CHECK_ERR(ibv_wr_complete(u.x[0]), EINVAL);
	}
	sg_no_cqe(u.p.cq[0]);
	/* The key is as it was: a good configuration goes. */
	CHECK_OK(sg_conf(&u, m, 0, 512, &sa, false));
	/*
	 * As many translations as fit max_inline_data + 4 in whole 64-byte
	 * units: the layout alone fits, with the 64-byte segment it does not (ENOMEM).
	 */
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;
		struct mlx5dv_mkey_conf_attr ca = {0};
		struct mlx5dv_mkey_init_attr ma = {.pd = u.p.pd,
						   .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
								   MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE};
		struct mlx5dv_mkey *big;
		struct ibv_sge sl[256];
		uint32_t n;

		CHECK_OK(ibv_query_qp(u.p.qp[0], &qa, IBV_QP_CAP, &qi));
		n = (qa.cap.max_inline_data + 4) / 64 * 4;
		CHECK(n >= 4 && n <= 256);
		ma.max_entries = (uint16_t)n;
		big = mlx5dv_create_mkey(&ma);
		CHECK(big != NULL);
		th_defer(sg_destroy_mkey_cb, big);
		for (uint32_t i = 0; i < n; i++)
			sl[i] = (struct ibv_sge){.addr = (uintptr_t)u.p.buf[1] + 64 * i, .length = 8, .lkey = u.p.mr[1]->lkey};
		for (int with_sig = 1; with_sig >= 0; with_sig--) {
			ibv_wr_start(u.x[0]);
			u.x[0]->wr_id = 50;
			u.x[0]->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
			mlx5dv_wr_mkey_configure(u.dx[0], big, with_sig ? 2 : 1, &ca);
			mlx5dv_wr_set_mkey_layout_list(u.dx[0], (uint16_t)n, sl);
			if (with_sig)
				mlx5dv_wr_set_mkey_sig_block(u.dx[0], &sa);
			CHECK_ERR(ibv_wr_complete(u.x[0]), with_sig ? ENOMEM : 0);
		}
		sg_expect(u.p.cq[0], 50, IBV_WC_SUCCESS, MLX5DV_WC_UMR, UINT32_MAX);
	}
}

int main(void)
{
	RUN(test_reference_vectors);
	RUN(test_caps);
	RUN(test_insert_t10dif);
	RUN(test_insert_crc);
	RUN(test_strip_and_convert);
	RUN(test_receive_errors);
	RUN(test_mask_and_escapes);
	RUN(test_memory_check_on_send);
	RUN(test_copy_mask);
	RUN(test_reset_sig_attr);
	RUN(test_pipelining);
	RUN(test_pipelining_good);
	RUN(test_bad_input);
	return th_summary("test_verbs_sig");
}
