/*
 * The engine queue of the DOCA DMA and SHA contexts: the WQEs it posts are
 * read back at their PRM byte offsets, CQEs are polled by owner bit as a
 * provider polls them, and forged WQEs written by hand complete in error
 * without touching memory.
 */
#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "harness.h"
#include "hw_jobq.h"

struct jfx {
	struct hw_pd *pd;
	struct hw_cq *cq;
	struct hw_jobq *q;
	uint8_t src[256], dst[256];
	uint32_t ks, kd;
	uint32_t ci; /* the consumer's CQ index */
};

static int jfx_setup(struct jfx *f, uint32_t dst_access)
{
	struct hw_cq_attr ca = { .log_size = 4 };
	struct hw_jobq_attr qa = { .qpn = 7 };

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 256; i++)
		f->src[i] = (uint8_t)(i * 7 + 1);
	f->pd = hw_pd_alloc(3);
	if (f->pd == NULL || hw_cq_create(&ca, &f->cq) != HW_OK)
		return -1;
	if (hw_mkey_reg(f->pd, f->src, (uint64_t)(uintptr_t)f->src, sizeof(f->src), 0, &f->ks) != HW_OK ||
	    hw_mkey_reg(f->pd, f->dst, (uint64_t)(uintptr_t)f->dst, sizeof(f->dst), dst_access, &f->kd) != HW_OK)
		return -1;
	qa.pd_id = hw_pd_id(f->pd);
	qa.cq = f->cq;
	return hw_jobq_create(&qa, &f->q) == HW_OK ? 0 : -1;
}

static void jfx_teardown(struct jfx *f)
{
	hw_jobq_destroy(f->q);
	hw_mkey_dereg(f->ks);
	hw_mkey_dereg(f->kd);
	hw_cq_destroy(f->cq);
	hw_pd_free(f->pd);
}

static struct hw_sge sge(uint32_t key, const void *p, uint64_t len, uint32_t access)
{
	return (struct hw_sge){ .key = key, .access = access, .addr = (uint64_t)(uintptr_t)p, .len = len };
}

/* The next CQE, by the mlx5 rule, released at once. */
static const struct hw_cqe64 *next_cqe(struct jfx *f)
{
	const struct hw_cqe64 *c = hw_cqe_poll(hw_cq_ring(f->cq), hw_cq_log_size(f->cq), f->ci);

	if (c != NULL)
		hw_cq_set_ci(hw_cq_dbrec(f->cq), ++f->ci);
	return c;
}

static uint32_t be32_at(const void *p, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)p + off, 4);
	return be32toh(v);
}

static uint64_t be64_at(const void *p, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)p + off, 8);
	return be64toh(v);
}

static void test_dma1_wqe_format_and_cqe(void)
{
	struct jfx f;
	struct hw_sge s, d;
	const uint8_t *w;
	const struct hw_cqe64 *c;

	CHECK(jfx_setup(&f, HW_ACCESS_LOCAL_WRITE) == 0);
	s = sge(f.ks, f.src + 3, 64, HW_ACCESS_LOCAL_READ);
	d = sge(f.kd, f.dst + 5, 100, HW_ACCESS_LOCAL_WRITE);
	CHECK_OK(hw_jobq_post_dma1(f.q, &s, &d));
	w = hw_jobq_seg(f.q, 0, 0);
	CHECK(be32_at(w, 0) == ((uint32_t)HW_MMO_OPMOD_DMA << 24 | 0 << 8 | HW_WQE_MMO)); /* opmod, index 0, opcode */
	CHECK(be32_at(w, 4) == (7u << 8 | 4));						   /* qpn 7, 4 units */
	CHECK(w[11] == HW_WQE_CTRL_CQ_UPDATE);
	CHECK(w[16] == 1 && w[17] == 1 && w[18] == HW_ACCESS_LOCAL_READ && w[19] == HW_ACCESS_LOCAL_WRITE);
	CHECK(be32_at(w, 32) == 64 && be32_at(w, 36) == f.ks && be64_at(w, 40) == (uint64_t)(uintptr_t)(f.src + 3));
	CHECK(be32_at(w, 48) == 100 && be32_at(w, 52) == f.kd && be64_at(w, 56) == (uint64_t)(uintptr_t)(f.dst + 5));
	CHECK(next_cqe(&f) == NULL); /* nothing runs before the doorbell */
	CHECK_OK(hw_jobq_ring(f.q));
	CHECK(memcmp(f.dst + 5, f.src + 3, 64) == 0);
	c = next_cqe(&f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ && hw_cqe_byte_cnt(c) == 64);
	CHECK(hw_cqe_wqe_counter(c) == 0 && hw_cqe_qpn(c) == 7 && be32_at(c, 56) >> 24 == HW_WQE_MMO);
	CHECK(next_cqe(&f) == NULL);
	jfx_teardown(&f);
}

/*
 * The vouched one-block path: the producer hands the keys' table entries
 * with the WQE. The WQE still lands in the ring in PRM form and the REQ CQE
 * is the doorbell's; an entry whose key was deregistered, or whose slot
 * now holds another key, no longer stands for the WQE's key, so the job
 * completes in error (LOCAL_PROT_ERR, HW_ERR_KEY) without touching memory,
 * as do a job longer than its room and overlapping sides.
 */
static void test_vouched_dma1(void)
{
	static const uint8_t zero[256];
	const struct hw_mkey *smk, *dmk;
	const struct hw_cqe64 *c;
	struct hw_sge s, d;
	uint32_t bytes = 0, kd_old;
	const uint8_t *w;
	struct jfx f;

	CHECK(jfx_setup(&f, HW_ACCESS_LOCAL_WRITE) == 0);
	CHECK((smk = hw_mkey_lookup(f.ks)) != NULL && (dmk = hw_mkey_lookup(f.kd)) != NULL);
	s = sge(f.ks, f.src + 3, 64, HW_ACCESS_LOCAL_READ);
	d = sge(f.kd, f.dst + 5, 100, HW_ACCESS_LOCAL_WRITE);
	CHECK(hw_jobq_post_bf_dma1_vouched(f.q, &s, smk, &d, dmk, &bytes) == HW_JOBQ_BF_DONE && bytes == 64);
	CHECK(memcmp(f.dst + 5, f.src + 3, 64) == 0);
	w = hw_jobq_seg(f.q, 0, 0);
	CHECK(be32_at(w, 0) == ((uint32_t)HW_MMO_OPMOD_DMA << 24 | 0 << 8 | HW_WQE_MMO));
	CHECK(be32_at(w, 4) == (7u << 8 | 4) && w[11] == HW_WQE_CTRL_CQ_UPDATE);
	CHECK(w[16] == 1 && w[17] == 1 && w[18] == HW_ACCESS_LOCAL_READ && w[19] == HW_ACCESS_LOCAL_WRITE);
	CHECK(be32_at(w, 32) == 64 && be32_at(w, 36) == f.ks && be64_at(w, 40) == (uint64_t)(uintptr_t)(f.src + 3));
	CHECK(be32_at(w, 48) == 100 && be32_at(w, 52) == f.kd && be64_at(w, 56) == (uint64_t)(uintptr_t)(f.dst + 5));
	c = next_cqe(&f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ && hw_cqe_byte_cnt(c) == 64);
	CHECK(hw_cqe_wqe_counter(c) == 0 && hw_cqe_qpn(c) == 7 && be32_at(c, 56) >> 24 == HW_WQE_MMO);
	memset(f.dst, 0, sizeof(f.dst));

	/* Longer than its room, then overlapping: refused by the doorbell's general path. */
	d.len = 32;
	CHECK(hw_jobq_post_bf_dma1_vouched(f.q, &s, smk, &d, dmk, &bytes) == HW_JOBQ_BF_POSTED);
	c = next_cqe(&f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ_ERR && hw_err_cqe_vendor_synd(c) == HW_ERR_LENGTH);
	CHECK(hw_err_cqe_syndrome(c) == HW_CQE_SYNDROME_LOCAL_LENGTH_ERR && hw_cqe_wqe_counter(c) == 1);
	{
		struct hw_sge o = sge(f.kd, f.dst + 16, 64, HW_ACCESS_LOCAL_READ);

		d = sge(f.kd, f.dst, 100, HW_ACCESS_LOCAL_WRITE);
		CHECK(hw_jobq_post_bf_dma1_vouched(f.q, &o, dmk, &d, dmk, &bytes) == HW_JOBQ_BF_POSTED);
		c = next_cqe(&f);
		CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ_ERR && hw_err_cqe_vendor_synd(c) == HW_ERR_OVERLAP);
	}
	CHECK(memcmp(f.dst, zero, sizeof(zero)) == 0);

	/* The destination's key deregistered: its entry is kept by the producer, the job is refused. */
	kd_old = f.kd;
	CHECK_OK(hw_mkey_dereg(f.kd));
	d = sge(kd_old, f.dst, 100, HW_ACCESS_LOCAL_WRITE);
	CHECK(hw_jobq_post_bf_dma1_vouched(f.q, &s, smk, &d, dmk, &bytes) == HW_JOBQ_BF_POSTED);
	c = next_cqe(&f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ_ERR && hw_err_cqe_vendor_synd(c) == HW_ERR_KEY);
	CHECK(hw_err_cqe_syndrome(c) == HW_CQE_SYNDROME_LOCAL_PROT_ERR && hw_cqe_wqe_counter(c) == 3);
	CHECK(memcmp(f.dst, zero, sizeof(zero)) == 0);

	/* A new registration of the same memory: the old number stays refused, whatever slot the new key has. */
	CHECK_OK(hw_mkey_reg(f.pd, f.dst, (uint64_t)(uintptr_t)f.dst, sizeof(f.dst), HW_ACCESS_LOCAL_WRITE, &f.kd));
	CHECK(f.kd != kd_old);
	CHECK(hw_jobq_post_bf_dma1_vouched(f.q, &s, smk, &d, hw_mkey_lookup(f.kd), &bytes) == HW_JOBQ_BF_POSTED);
	c = next_cqe(&f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ_ERR && hw_err_cqe_vendor_synd(c) == HW_ERR_KEY);
	CHECK(memcmp(f.dst, zero, sizeof(zero)) == 0);
	d.key = f.kd;
	CHECK(hw_jobq_post_bf_dma1_vouched(f.q, &s, smk, &d, hw_mkey_lookup(f.kd), &bytes) == HW_JOBQ_BF_DONE);
	CHECK(memcmp(f.dst, f.src + 3, 64) == 0);
	c = next_cqe(&f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ && hw_cqe_byte_cnt(c) == 64 && hw_cqe_wqe_counter(c) == 5);
	CHECK(next_cqe(&f) == NULL);
	jfx_teardown(&f);
}

static void test_list_wqe_spans_blocks_and_wraps(void)
{
	struct jfx f;
	struct hw_sge s[5], d[3];
	const struct hw_cqe64 *c;

	CHECK(jfx_setup(&f, HW_ACCESS_LOCAL_WRITE) == 0);
	for (int i = 0; i < 5; i++)
		s[i] = sge(f.ks, f.src + 20 * i, 20, HW_ACCESS_LOCAL_READ);
	d[0] = sge(f.kd, f.dst, 30, HW_ACCESS_LOCAL_WRITE);
	d[1] = sge(f.kd, f.dst + 100, 30, HW_ACCESS_LOCAL_WRITE);
	d[2] = sge(f.kd, f.dst + 200, 50, HW_ACCESS_LOCAL_WRITE);
	/* 10 units = 3 blocks each: 30 WQEs go round the 64-block ring, WQEs straddle its end. */
	for (int n = 0; n < 30; n++) {
		uint32_t at = f.q->pi;

		memset(f.dst, 0, sizeof(f.dst));
		CHECK_OK(hw_jobq_post_dma(f.q, s, 5, d, 3));
		CHECK(f.q->pi == at + 3 && hw_ctrl_ds(hw_jobq_seg(f.q, at, 0)) == 10);
		CHECK_OK(hw_jobq_ring(f.q));
		CHECK(memcmp(f.dst, f.src, 30) == 0 && memcmp(f.dst + 100, f.src + 30, 30) == 0 &&
		      memcmp(f.dst + 200, f.src + 60, 40) == 0);
		c = next_cqe(&f);
		CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ && hw_cqe_byte_cnt(c) == 100);
		CHECK(hw_cqe_wqe_counter(c) == (uint16_t)at);
	}
	/* More segments than a WQE holds, or mixed rights on one side: refused, nothing written. */
	{
		struct hw_sge many[HW_JOBQ_MAX_SEGS];
		uint32_t pi = f.q->pi;

		for (int i = 0; i < HW_JOBQ_MAX_SEGS; i++)
			many[i] = s[0];
		CHECK_ERR(hw_jobq_post_dma(f.q, many, HW_JOBQ_MAX_SEGS, d, 1), HW_ERR_INVAL);
		s[1].access = HW_ACCESS_PEER_READ;
		CHECK_ERR(hw_jobq_post_dma(f.q, s, 5, d, 3), HW_ERR_INVAL);
		CHECK(f.q->pi == pi);
	}
	jfx_teardown(&f);
}

/* Each refusal: an error CQE with its syndrome and the engine's status, destination untouched. */
static void expect_err(struct jfx *f, uint8_t syndrome, enum hw_status st)
{
	const struct hw_cqe64 *c;
	static const uint8_t zero[256];

	CHECK_OK(hw_jobq_ring(f->q));
	c = next_cqe(f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ_ERR);
	CHECK(hw_err_cqe_syndrome(c) == syndrome && hw_err_cqe_vendor_synd(c) == st);
	CHECK(hw_err_cqe_wqe_opcode(c) == HW_WQE_MMO && hw_cqe_qpn(c) == 7);
	CHECK(memcmp(f->dst, zero, sizeof(zero)) == 0);
}

static void test_error_syndromes(void)
{
	struct jfx f, g;
	struct hw_sge s, d;

	CHECK(jfx_setup(&f, HW_ACCESS_LOCAL_WRITE) == 0);
	s = sge(f.ks, f.src, 64, HW_ACCESS_LOCAL_READ);
	d = sge(f.kd, f.dst, 64, HW_ACCESS_LOCAL_WRITE);
	struct hw_sge bad = s;

	bad.key ^= 0x1; /* another tag: a stale key */
	CHECK_OK(hw_jobq_post_dma1(f.q, &bad, &d));
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_ERR_KEY);
	bad = s;
	bad.len = 300; /* past the registration */
	CHECK_OK(hw_jobq_post_dma(f.q, &bad, 1, &d, 1));
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_ERR_BOUNDS);
	bad = d;
	bad.access = HW_ACCESS_REMOTE_WRITE; /* a right the key lacks */
	CHECK_OK(hw_jobq_post_dma1(f.q, &s, &bad));
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_ERR_ACCESS);
	bad = d;
	bad.len = 32; /* room smaller than the source */
	CHECK_OK(hw_jobq_post_dma1(f.q, &s, &bad));
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, HW_ERR_LENGTH);
	bad = sge(f.kd, f.dst + 16, 64, HW_ACCESS_LOCAL_READ); /* source overlapping the destination */
	CHECK_OK(hw_jobq_post_dma1(f.q, &bad, &d));
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_OVERLAP);
	/* A key of another domain. */
	CHECK(jfx_setup(&g, HW_ACCESS_LOCAL_WRITE) == 0);
	bad = sge(g.ks, g.src, 64, HW_ACCESS_LOCAL_READ);
	CHECK_OK(hw_jobq_post_dma1(f.q, &bad, &d));
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_ERR_PD);
	/* The queue goes on after errors. */
	CHECK_OK(hw_jobq_post_dma1(f.q, &s, &d));
	CHECK_OK(hw_jobq_ring(f.q));
	CHECK(hw_cqe_opcode(next_cqe(&f)) == HW_CQE_REQ && memcmp(f.dst, f.src, 64) == 0);
	jfx_teardown(&g);
	jfx_teardown(&f);
}

/* A WQE written by hand at the producer index, then posted by moving the counter. */
static void forge(struct jfx *f, uint8_t opcode, uint8_t opmod, uint16_t idx, uint32_t qpn, uint8_t ds, uint8_t nsrc,
		  uint8_t ndst)
{
	struct hw_wqe_mmo_seg *m = hw_jobq_seg(f->q, f->q->pi, 1);

	hw_ctrl_seg_set(hw_jobq_seg(f->q, f->q->pi, 0), idx, opcode, opmod, qpn, HW_WQE_CTRL_CQ_UPDATE, ds, 0);
	*m = (struct hw_wqe_mmo_seg){ .nsrc = nsrc, .ndst = ndst };
	hw_data_seg_set(hw_jobq_seg(f->q, f->q->pi, 2), 64, f->ks, (uint64_t)(uintptr_t)f->src);
	hw_data_seg_set(hw_jobq_seg(f->q, f->q->pi, 3), 64, f->kd, (uint64_t)(uintptr_t)f->dst);
	m->dst_access = HW_ACCESS_LOCAL_WRITE;
	f->q->pi++;
}

static void test_forged_wqes_refused(void)
{
	struct jfx f;
	struct hw_wqe_mmo_seg *m;

	CHECK(jfx_setup(&f, HW_ACCESS_LOCAL_WRITE) == 0);
	forge(&f, HW_WQE_RDMA_WRITE, HW_MMO_OPMOD_DMA, 0, 7, 4, 1, 1); /* a verbs opcode */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, 0x7, 1, 7, 4, 1, 1); /* unknown opmod */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_DMA, 9, 7, 4, 1, 1); /* wrong WQE index */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_DMA, 3, 8, 4, 1, 1); /* another QP's number */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_DMA, 4, 7, 4, 2, 1); /* counts disagree with ds */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_DMA, 5, 7, 12, 5, 5); /* claims 3 blocks, 1 posted */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_DMA, 6, 7, 4, 1, 1);
	m = hw_jobq_seg(f.q, 6, 1);
	m->src_access = 0x80; /* a right the device does not have */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_SHA, 7, 7, 4, 1, 1); /* SHA on a queue without a SHA engine */
	expect_err(&f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	/* A well-formed hand-written WQE runs. */
	forge(&f, HW_WQE_MMO, HW_MMO_OPMOD_DMA, 8, 7, 4, 1, 1);
	CHECK_OK(hw_jobq_ring(f.q));
	CHECK(hw_cqe_opcode(next_cqe(&f)) == HW_CQE_REQ && memcmp(f.dst, f.src, 64) == 0);
	jfx_teardown(&f);
}

static void test_cq_owner_bit_wraps_and_overrun(void)
{
	struct jfx f;
	struct hw_sge s, d;

	CHECK(jfx_setup(&f, HW_ACCESS_LOCAL_WRITE) == 0);
	s = sge(f.ks, f.src, 8, HW_ACCESS_LOCAL_READ);
	d = sge(f.kd, f.dst, 8, HW_ACCESS_LOCAL_WRITE);
	/* Three passes over the 16-CQE ring: the owner bit alternates. */
	for (int i = 0; i < 48; i++) {
		const struct hw_cqe64 *c;

		CHECK_OK(hw_jobq_post_dma1(f.q, &s, &d));
		CHECK_OK(hw_jobq_ring(f.q));
		c = next_cqe(&f);
		CHECK(c != NULL && hw_cqe_owner(c) == ((i >> 4) & 1) && hw_cqe_wqe_counter(c) == i);
	}
	/* Nobody consumes: the 17th CQE finds the CQ full, is lost, the overrun latched. */
	for (int i = 0; i < 16; i++) {
		CHECK_OK(hw_jobq_post_dma1(f.q, &s, &d));
		CHECK_OK(hw_jobq_ring(f.q));
	}
	CHECK_OK(hw_jobq_post_dma1(f.q, &s, &d));
	CHECK_ERR(hw_jobq_ring(f.q), HW_ERR_FULL);
	CHECK(hw_cq_overrun(f.cq));
	jfx_teardown(&f);
}

/* The engine's SHA: one-shot and partial segments against OpenSSL, digests and CQEs. */
static void sha_ref(const EVP_MD *md, const void *p, size_t len, uint8_t *out)
{
	unsigned int n = 0;

	CHECK(EVP_Digest(p, len, out, &n, md, NULL) == 1);
}

struct sfx {
	struct jfx j;
	struct hw_sha_engine *eng;
	struct hw_sha_state *sessions[2]; /* [1] stays NULL: no session there */
};

static int sfx_setup(struct sfx *f)
{
	struct hw_jobq_attr qa = { .qpn = 7 };

	if (jfx_setup(&f->j, HW_ACCESS_LOCAL_WRITE) != 0)
		return -1;
	hw_jobq_destroy(f->j.q);
	f->eng = hw_sha_engine_new();
	f->sessions[0] = f->eng != NULL ? hw_sha_state_new(f->eng) : NULL;
	f->sessions[1] = NULL;
	qa.pd_id = hw_pd_id(f->j.pd);
	qa.cq = f->j.cq;
	qa.sha = f->eng;
	qa.sessions = f->sessions;
	qa.nsessions = 2;
	return f->sessions[0] != NULL && hw_jobq_create(&qa, &f->j.q) == HW_OK ? 0 : -1;
}

static void sfx_teardown(struct sfx *f)
{
	hw_sha_state_free(f->sessions[0]);
	jfx_teardown(&f->j);
	hw_sha_engine_free(f->eng);
}

static void expect_req(struct jfx *f, uint32_t byte_cnt)
{
	const struct hw_cqe64 *c;

	CHECK_OK(hw_jobq_ring(f->q));
	c = next_cqe(f);
	CHECK(c != NULL && hw_cqe_opcode(c) == HW_CQE_REQ && hw_cqe_byte_cnt(c) == byte_cnt);
}

static void test_sha_oneshot_and_partial(void)
{
	struct sfx f;
	struct jfx *j = &f.j;
	uint8_t want[64];
	static const uint8_t zero[256];
	struct hw_sge s0, s1, s2, s100, d;

	CHECK(sfx_setup(&f) == 0);
	s0 = sge(j->ks, j->src, 64, HW_ACCESS_LOCAL_READ);
	s1 = sge(j->ks, j->src + 64, 64, HW_ACCESS_LOCAL_READ);
	s2 = sge(j->ks, j->src + 128, 72, HW_ACCESS_LOCAL_READ);
	s100 = sge(j->ks, j->src, 100, HW_ACCESS_LOCAL_READ);
	d = sge(j->kd, j->dst, 64, HW_ACCESS_LOCAL_WRITE);
	/* One-shot SHA-256 of 100 bytes. */

	CHECK_OK(hw_jobq_post_sha(j->q, HW_SHA_256, &s100, 1, &d));
	expect_req(j, 32);
	sha_ref(EVP_sha256(), j->src, 100, want);
	CHECK(memcmp(j->dst, want, 32) == 0 && memcmp(j->dst + 32, zero, 32) == 0);
	/* SHA-512 of 200 bytes in three segments on session 0: no digest until the final one. */
	memset(j->dst, 0, sizeof(j->dst));
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_512, 0, HW_MMO_SHA_START, &s0, 1, NULL));
	CHECK(((const struct hw_wqe_mmo_seg *)hw_jobq_seg(j->q, j->q->pi - 1, 1))->flags ==
	      (HW_MMO_SHA_PARTIAL | HW_MMO_SHA_START));
	CHECK(be32_at(hw_jobq_seg(j->q, j->q->pi - 1, 1), 8) == 0);
	expect_req(j, 0);
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_512, 0, 0, &s1, 1, NULL));
	expect_req(j, 0);
	CHECK(memcmp(j->dst, zero, sizeof(zero)) == 0);
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_512, 0, HW_MMO_SHA_FINAL, &s2, 1, &d));
	expect_req(j, 64);
	sha_ref(EVP_sha512(), j->src, 200, want);
	CHECK(memcmp(j->dst, want, 64) == 0);
	sfx_teardown(&f);
}

static void test_sha_partial_refused(void)
{
	struct sfx f;
	struct jfx *j = &f.j;
	struct hw_wqe_mmo_seg *m;
	struct hw_sge s0, d;

	CHECK(sfx_setup(&f) == 0);
	s0 = sge(j->ks, j->src, 64, HW_ACCESS_LOCAL_READ);
	d = sge(j->kd, j->dst, 64, HW_ACCESS_LOCAL_WRITE);
	/* The destination agrees with FINAL, and only START and FINAL are flags to give. */
	CHECK_ERR(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, HW_MMO_SHA_FINAL, &s0, 1, NULL), HW_ERR_INVAL);
	CHECK_ERR(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, HW_MMO_SHA_START, &s0, 1, &d), HW_ERR_INVAL);
	CHECK_ERR(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, 0x40, &s0, 1, NULL), HW_ERR_INVAL);
	CHECK_ERR(hw_jobq_post_sha_partial(j->q, HW_SHA_NUM_ALGS, 0, 0, &s0, 1, NULL), HW_ERR_INVAL);
	CHECK(j->q->pi == 0);
	/* A session index past the table, and an empty entry. */
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 2, HW_MMO_SHA_START, &s0, 1, NULL));
	expect_err(j, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 1, HW_MMO_SHA_START | HW_MMO_SHA_FINAL, &s0, 1, &d));
	expect_err(j, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	/* A later segment must name the algorithm its session hashes. */
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, HW_MMO_SHA_START, &s0, 1, NULL));
	expect_req(j, 0);
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_1, 0, HW_MMO_SHA_FINAL, &s0, 1, &d));
	expect_err(j, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	/* Forged: no destination on a one-shot hash, or on a DMA; a final segment without one. */
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, HW_MMO_SHA_START, &s0, 1, NULL));
	m = hw_jobq_seg(j->q, j->q->pi - 1, 1);
	m->flags = 0;
	expect_err(j, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, HW_MMO_SHA_START, &s0, 1, NULL));
	m = hw_jobq_seg(j->q, j->q->pi - 1, 1);
	m->flags |= HW_MMO_SHA_FINAL;
	expect_err(j, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	CHECK_OK(hw_jobq_post_sha_partial(j->q, HW_SHA_256, 0, HW_MMO_SHA_START, &s0, 1, NULL));
	hw_ctrl_seg_set(hw_jobq_seg(j->q, j->q->pi - 1, 0), (uint16_t)(j->q->pi - 1), HW_WQE_MMO, HW_MMO_OPMOD_DMA, 7,
			HW_WQE_CTRL_CQ_UPDATE, 3, 0);
	expect_err(j, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, HW_ERR_INVAL);
	sfx_teardown(&f);
}

int main(void)
{
	RUN(test_dma1_wqe_format_and_cqe);
	RUN(test_list_wqe_spans_blocks_and_wraps);
	RUN(test_error_syndromes);
	RUN(test_vouched_dma1);
	RUN(test_forged_wqes_refused);
	RUN(test_cq_owner_bit_wraps_and_overrun);
	RUN(test_sha_oneshot_and_partial);
	RUN(test_sha_partial_refused);
	return th_summary("test_hw_jobq");
}
