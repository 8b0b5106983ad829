/*
 * hw_jobq — posting DMA and SHA WQEs and executing them at the doorbell.
 */
#include "hw_jobq.h"

#include <stdlib.h>
#include <string.h>

#define JQ_RING_BYTES ((size_t)HW_SEND_WQE_BB << HW_JOBQ_LOG_BBS)

const struct hw_mkey hw_jobq_nokey = { .state = HW_MKEY_FREE };

enum hw_status hw_jobq_create(const struct hw_jobq_attr *attr, struct hw_jobq **out)
{
	struct hw_jobq *q;

	/* Its CQ's CQEs are 64 bytes: the inline writes (hw_cq_sp_push_req) and the DOCA poll index by them. */
	if (attr == NULL || out == NULL || attr->cq == NULL || attr->qpn > 0xffffffu ||
	    hw_cq_cqe_size(attr->cq) != sizeof(struct hw_cqe64))
		return HW_ERR_INVAL;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return HW_ERR_NOMEM;
	q->ring = aligned_alloc(HW_SEND_WQE_BB, JQ_RING_BYTES);
	if (q->ring == NULL) {
		free(q);
		return HW_ERR_NOMEM;
	}
	memset(q->ring, 0, JQ_RING_BYTES);
	q->qpn = attr->qpn;
	q->pd_id = attr->pd_id;
	q->cq = attr->cq;
	q->cqes = hw_cq_ring(attr->cq);
	q->cq_log = hw_cq_log_size(attr->cq);
	q->sha = attr->sha;
	q->sessions = attr->sessions;
	q->nsessions = attr->sessions != NULL ? attr->nsessions : 0;
	q->kc[0].mk = &hw_jobq_nokey;
	q->kc[1].mk = &hw_jobq_nokey;
	q->cqe_qpn_top = htobe32((uint32_t)HW_WQE_MMO << 24 | q->qpn);
	hw_cq_sp_open(attr->cq, &q->cqp);
	hw_ctrl_seg_set((struct hw_wqe_ctrl_seg *)(void *)q->dma1_ctrl, 0, HW_WQE_MMO, HW_MMO_OPMOD_DMA, q->qpn,
			HW_WQE_CTRL_CQ_UPDATE, 4, 0);
	*out = q;
	return HW_OK;
}

void hw_jobq_destroy(struct hw_jobq *q)
{
	if (q == NULL)
		return;
	free(q->ring);
	free(q);
}

/* ---- producer ---- */

static enum hw_status side_access(const struct hw_sge *s, uint32_t n, uint8_t *access)
{
	for (uint32_t i = 0; i < n; i++)
		if (s[i].access != s[0].access || s[i].len > HW_JOBQ_MAX_LEN || s[i].access > HW_ACCESS_ALL_MASK)
			return HW_ERR_INVAL;
	*access = (uint8_t)s[0].access;
	return HW_OK;
}

static enum hw_status post_mmo(struct hw_jobq *q, enum hw_mmo_opmod opmod, const struct hw_wqe_mmo_seg *proto,
			       const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst, uint32_t ndst)
{
	uint32_t ds = 2 + nsrc + ndst, nbb = (ds + HW_JOBQ_SEGS_PER_BB - 1) / HW_JOBQ_SEGS_PER_BB;
	struct hw_wqe_mmo_seg m = *proto;

	m.nsrc = (uint8_t)nsrc;
	m.ndst = (uint8_t)ndst;
	if (nsrc == 0 || nsrc + ndst > HW_JOBQ_MAX_SEGS || side_access(src, nsrc, &m.src_access) != HW_OK ||
	    (ndst != 0 && side_access(dst, ndst, &m.dst_access) != HW_OK))
		return HW_ERR_INVAL;
	if (hw_jobq_room(q) < nbb)
		return HW_ERR_FULL;
	hw_jobq_ctrl_mmo(q, opmod, ds);
	memcpy(hw_jobq_seg(q, q->pi, 1), &m, sizeof(m));
	for (uint32_t i = 0; i < nsrc; i++)
		hw_data_seg_set(hw_jobq_seg(q, q->pi, 2 + i), (uint32_t)src[i].len, src[i].key, src[i].addr);
	for (uint32_t i = 0; i < ndst; i++)
		hw_data_seg_set(hw_jobq_seg(q, q->pi, 2 + nsrc + i), (uint32_t)dst[i].len, dst[i].key, dst[i].addr);
	q->pi += nbb;
	return HW_OK;
}

enum hw_status hw_jobq_post_dma(struct hw_jobq *q, const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst,
				uint32_t ndst)
{
	struct hw_wqe_mmo_seg m = { 0 };

	if (ndst == 0)
		return HW_ERR_INVAL;
	return post_mmo(q, HW_MMO_OPMOD_DMA, &m, src, nsrc, dst, ndst);
}

enum hw_status hw_jobq_post_sha(struct hw_jobq *q, enum hw_sha_alg alg, const struct hw_sge *src, uint32_t nsrc,
				const struct hw_sge *dst)
{
	struct hw_wqe_mmo_seg m = { .alg = (uint8_t)alg };

	if ((unsigned int)alg >= HW_SHA_NUM_ALGS || dst == NULL)
		return HW_ERR_INVAL;
	return post_mmo(q, HW_MMO_OPMOD_SHA, &m, src, nsrc, dst, 1);
}

enum hw_status hw_jobq_post_sha_partial(struct hw_jobq *q, enum hw_sha_alg alg, uint32_t session, uint32_t flags,
					const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst)
{
	struct hw_wqe_mmo_seg m = { .alg = (uint8_t)alg, .flags = (uint8_t)(HW_MMO_SHA_PARTIAL | flags),
				    .session = htobe32(session) };

	if ((unsigned int)alg >= HW_SHA_NUM_ALGS || (flags & ~(uint32_t)(HW_MMO_SHA_START | HW_MMO_SHA_FINAL)) ||
	    (dst != NULL) != ((flags & HW_MMO_SHA_FINAL) != 0))
		return HW_ERR_INVAL;
	return post_mmo(q, HW_MMO_OPMOD_SHA, &m, src, nsrc, dst, dst != NULL ? 1 : 0);
}

/* ---- engine ---- */

const struct hw_mkey *hw_jobq_key_miss(struct hw_jobq_kc *kc, uint32_t key)
{
	const struct hw_mkey *mk = hw_mkey_lookup(key);

	/* An implicit key has no base for the local path's pointer: DMA jobs do not take it. */
	if (mk == NULL || mk->implicit)
		mk = &hw_jobq_nokey;
	kc->key = key;
	kc->mk = mk;
	return mk;
}

enum hw_status hw_jobq_dma1_remote(struct hw_jobq *q, struct hw_jobq_dma1 j)
{
	struct hw_sge s = { .key = j.skey, .access = j.sacc, .addr = j.saddr, .len = j.len };
	struct hw_sge d = { .key = j.dkey, .access = j.dacc, .addr = j.daddr, .len = j.room };
	uint64_t copied = 0;

	return hw_dma_copy(q->pd_id, &s, 1, &d, 1, &copied);
}

/* An error CQE: REQ_ERR with the syndrome of st, the engine's status in vendor_err_synd. */
enum hw_status hw_jobq_complete_err(struct hw_jobq *q, uint16_t idx, enum hw_status st)
{
	struct hw_cqe_fields f = { .opcode = HW_CQE_REQ_ERR, .wqe_counter = idx, .qpn = q->qpn,
				   .wqe_opcode = HW_WQE_MMO, .syndrome = hw_jobq_syndrome(st),
				   .vendor_err_synd = (uint8_t)st };

	return hw_cq_push_sp(q->cq, &f);
}

static void read_segs(const struct hw_jobq *q, uint32_t bb, uint32_t first, uint32_t n, uint32_t access,
		      struct hw_sge *out)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct hw_wqe_data_seg *d = hw_jobq_seg(q, bb, first + i);

		out[i] = (struct hw_sge){ .key = hw_data_seg_lkey(d), .access = access, .addr = hw_data_seg_addr(d),
					  .len = hw_data_seg_len(d) };
	}
}

/* One local buffer to one local buffer: hw_dma_copy1's checks, keys through the cache. */
static enum hw_status dma_one(struct hw_jobq *q, const struct hw_sge *s, const struct hw_sge *d, uint64_t *copied)
{
	const struct hw_mkey *smk = hw_jobq_key(&q->kc[0], s->key), *dmk = hw_jobq_key(&q->kc[1], d->key);
	enum hw_status st;

	if (smk == NULL || dmk == NULL)
		return HW_ERR_KEY;
	if (smk->rops != NULL || dmk->rops != NULL)
		return hw_dma_copy(q->pd_id, s, 1, d, 1, copied);
	st = hw_dma_copy1(q->pd_id, smk, s->key, s->addr, s->len, s->access, dmk, d->key, d->addr, d->len, d->access);
	if (st == HW_OK)
		*copied = s->len;
	return st;
}

static enum hw_status exec_dma(struct hw_jobq *q, uint32_t bb, const struct hw_wqe_mmo_seg *m, uint32_t *bytes)
{
	struct hw_sge src[HW_JOBQ_MAX_SEGS], dst[HW_JOBQ_MAX_SEGS];
	uint64_t copied = 0;
	enum hw_status st;

	read_segs(q, bb, 2, m->nsrc, m->src_access, src);
	read_segs(q, bb, 2 + m->nsrc, m->ndst, m->dst_access, dst);
	if (m->nsrc == 1 && m->ndst == 1)
		st = dma_one(q, src, dst, &copied);
	else
		st = hw_dma_copy(q->pd_id, src, m->nsrc, dst, m->ndst, &copied);
	*bytes = (uint32_t)copied;
	return st;
}

/* The session a partial WQE names, or NULL. */
static struct hw_sha_state *sha_session(const struct hw_jobq *q, const struct hw_wqe_mmo_seg *m)
{
	uint32_t idx = be32toh(m->session);

	return idx < q->nsessions ? q->sessions[idx] : NULL;
}

/*
 * One segment of a session's message: START begins it with the WQE's
 * algorithm; a later segment must name the algorithm the session hashes.
 */
static enum hw_status exec_sha_partial(struct hw_jobq *q, const struct hw_wqe_mmo_seg *m, const struct hw_sge *src,
				       const struct hw_sge *dst)
{
	struct hw_sha_state *st = sha_session(q, m);
	enum hw_status rs;

	if (st == NULL || (m->ndst != 0) != ((m->flags & HW_MMO_SHA_FINAL) != 0))
		return HW_ERR_INVAL;
	if (m->flags & HW_MMO_SHA_START) {
		rs = hw_sha_start(st, (enum hw_sha_alg)m->alg);
		if (rs != HW_OK)
			return rs;
	} else if (hw_sha_state_alg(st) != (enum hw_sha_alg)m->alg) {
		return HW_ERR_INVAL;
	}
	return hw_sha_step(st, q->pd_id, src, m->nsrc, m->ndst != 0 ? dst : NULL);
}

static enum hw_status exec_sha(struct hw_jobq *q, uint32_t bb, const struct hw_wqe_mmo_seg *m, uint32_t *bytes)
{
	struct hw_sge src[HW_JOBQ_MAX_SEGS], dst = { 0 };
	enum hw_status st;

	if (q->sha == NULL || m->ndst > 1 || m->alg >= HW_SHA_NUM_ALGS || (m->flags & ~HW_MMO_SHA_FLAGS_MASK))
		return HW_ERR_INVAL;
	read_segs(q, bb, 2, m->nsrc, m->src_access, src);
	read_segs(q, bb, 2 + m->nsrc, m->ndst, m->dst_access, &dst);
	if (m->flags & HW_MMO_SHA_PARTIAL)
		st = exec_sha_partial(q, m, src, &dst);
	else if (m->ndst != 1 || m->flags != 0)
		st = HW_ERR_INVAL;
	else
		st = hw_sha_oneshot(q->sha, (enum hw_sha_alg)m->alg, q->pd_id, src, m->nsrc, &dst);
	*bytes = st == HW_OK && m->ndst != 0 ? hw_sha_digest_size((enum hw_sha_alg)m->alg) : 0;
	return st;
}

/*
 * The WQE at ci, checked as the card checks what a program wrote: *nbb is how
 * many basic blocks to take (1 when the WQE is too malformed to size).
 */
static enum hw_status parse(const struct hw_jobq *q, const struct hw_wqe_ctrl_seg *c, const struct hw_wqe_mmo_seg *m,
			    uint32_t *nbb)
{
	uint32_t ds = hw_ctrl_ds(c), posted = q->pi - q->ci;

	*nbb = 1;
	if (hw_ctrl_opcode(c) != HW_WQE_MMO || hw_ctrl_wqe_index(c) != (uint16_t)q->ci || hw_ctrl_qpn(c) != q->qpn ||
	    ds < 2)
		return HW_ERR_INVAL;
	*nbb = (ds + HW_JOBQ_SEGS_PER_BB - 1) / HW_JOBQ_SEGS_PER_BB;
	if (*nbb > posted) {
		*nbb = posted;
		return HW_ERR_INVAL; /* the WQE claims more than was posted */
	}
	/* Only a partial SHA segment that does not end its message has no destination. */
	if (m->ndst == 0 && (hw_ctrl_opmod(c) != HW_MMO_OPMOD_SHA ||
			     (m->flags & (HW_MMO_SHA_PARTIAL | HW_MMO_SHA_FINAL)) != HW_MMO_SHA_PARTIAL))
		return HW_ERR_INVAL;
	if (m->nsrc == 0 || 2u + m->nsrc + m->ndst != ds || (m->src_access & ~HW_ACCESS_ALL_MASK) ||
	    (m->dst_access & ~HW_ACCESS_ALL_MASK))
		return HW_ERR_INVAL;
	return HW_OK;
}

/* Executes the WQE at ci; *nbb is the basic blocks it took. */
static void exec_one(struct hw_jobq *q, struct hw_cqe_fields *f, uint32_t *nbb)
{
	const struct hw_wqe_ctrl_seg *c = hw_jobq_seg(q, q->ci, 0);
	const struct hw_wqe_mmo_seg *m = hw_jobq_seg(q, q->ci, 1);
	enum hw_status st = parse(q, c, m, nbb);
	uint32_t bytes = 0;

	if (st == HW_OK) {
		if (hw_ctrl_opmod(c) == HW_MMO_OPMOD_DMA)
			st = exec_dma(q, q->ci, m, &bytes);
		else if (hw_ctrl_opmod(c) == HW_MMO_OPMOD_SHA)
			st = exec_sha(q, q->ci, m, &bytes);
		else
			st = HW_ERR_INVAL;
	}
	f->wqe_counter = (uint16_t)q->ci;
	f->qpn = q->qpn;
	f->wqe_opcode = HW_WQE_MMO;
	if (__builtin_expect(st == HW_OK, 1)) {
		f->opcode = HW_CQE_REQ;
		f->byte_cnt = bytes;
		return;
	}
	f->opcode = HW_CQE_REQ_ERR;
	f->syndrome = hw_jobq_syndrome(st);
	f->vendor_err_synd = (uint8_t)st;
}

enum hw_status hw_jobq_run(struct hw_jobq *q)
{
	enum hw_status ret = HW_OK;

	while (q->ci != q->pi) {
		struct hw_jobq_dma1 j;
		struct hw_cqe_fields f = { 0 };
		uint32_t nbb = 1;

		if (hw_jobq_parse_dma1(q, &j)) {
			if (hw_jobq_complete(q, hw_jobq_exec_dma1(q, &j), j.len) != HW_OK)
				ret = HW_ERR_FULL;
			continue;
		}
		exec_one(q, &f, &nbb);
		/* A full CQ loses the CQE and latches its overrun, as the card's (where it is fatal). */
		if (hw_cq_push_sp(q->cq, &f) != HW_OK)
			ret = HW_ERR_FULL;
		q->ci += nbb;
	}
	return ret;
}

bool hw_jobq_take_cqe(struct hw_jobq *q, struct hw_cqe64 *out)
{
	const struct hw_cqe64 *c = hw_cqe_poll(q->cqes, q->cq_log, q->own_ci);

	if (c == NULL)
		return false;
	*out = *c;
	hw_cq_set_ci(hw_cq_dbrec(q->cq), ++q->own_ci);
	return true;
}
