/*
 * hw_sha — checked hashing of scatter lists, local and remote, over OpenSSL.
 */
#include "hw_sha.h"

#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Remote memory is hashed through this much local memory at a time. */
#define HW_SHA_BOUNCE_SIZE (64u << 10)
/* One-shot hashes running at once on one engine without allocating (one per work queue thread). */
#define HW_SHA_LANES 16

struct hw_sha_state {
	EVP_MD_CTX *md;
	const struct hw_sha_engine *eng;
	enum hw_sha_alg alg;
	uint8_t *bounce; /* allocated on the first remote read, then kept */
};

struct hw_sha_engine {
	/*
	 * Explicitly fetched: with the same fetched algorithm, re-initialising a
	 * context reuses its provider state, where EVP_sha256() and friends
	 * would look the algorithm up again on every message.
	 */
	EVP_MD *alg[HW_SHA_NUM_ALGS];
	struct hw_sha_state *lane[HW_SHA_LANES];
	atomic_bool busy[HW_SHA_LANES];
};

struct seg {
	uint8_t *p;		  /* local address, or NULL for remote memory */
	const struct hw_mkey *mk; /* the key's entry (its rops for remote memory) */
	uint64_t addr;
	uint64_t len;
};

static const char *const alg_name[HW_SHA_NUM_ALGS] = { "SHA1", "SHA256", "SHA512" };

/* ---- states and engines ---- */

struct hw_sha_state *hw_sha_state_new(struct hw_sha_engine *eng)
{
	struct hw_sha_state *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	st->md = EVP_MD_CTX_new();
	if (st->md == NULL) {
		free(st);
		return NULL;
	}
	st->eng = eng;
	return st;
}

void hw_sha_state_free(struct hw_sha_state *st)
{
	if (st == NULL)
		return;
	EVP_MD_CTX_free(st->md);
	free(st->bounce);
	free(st);
}

struct hw_sha_engine *hw_sha_engine_new(void)
{
	struct hw_sha_engine *eng = calloc(1, sizeof(*eng));
	int i;

	if (eng == NULL)
		return NULL;
	for (i = 0; i < HW_SHA_NUM_ALGS; i++) {
		eng->alg[i] = EVP_MD_fetch(NULL, alg_name[i], NULL);
		if (eng->alg[i] == NULL)
			goto err_free;
	}
	for (i = 0; i < HW_SHA_LANES; i++) {
		eng->lane[i] = hw_sha_state_new(eng);
		if (eng->lane[i] == NULL)
			goto err_free;
		atomic_init(&eng->busy[i], false);
	}
	return eng;

err_free:
	hw_sha_engine_free(eng);
	return NULL;
}

void hw_sha_engine_free(struct hw_sha_engine *eng)
{
	if (eng == NULL)
		return;
	for (int i = 0; i < HW_SHA_LANES; i++)
		hw_sha_state_free(eng->lane[i]);
	for (int i = 0; i < HW_SHA_NUM_ALGS; i++)
		EVP_MD_free(eng->alg[i]);
	free(eng);
}

enum hw_sha_alg hw_sha_state_alg(const struct hw_sha_state *st)
{
	return st->alg;
}

enum hw_status hw_sha_start(struct hw_sha_state *st, enum hw_sha_alg alg)
{
	if ((unsigned int)alg >= HW_SHA_NUM_ALGS)
		return HW_ERR_INVAL;
	if (EVP_DigestInit_ex2(st->md, st->eng->alg[alg], NULL) != 1)
		return HW_ERR_NOMEM; /* a provider context could not be allocated */
	st->alg = alg;
	return HW_OK;
}

enum hw_status hw_sha_copy(struct hw_sha_state *dst, const struct hw_sha_state *src)
{
	if (EVP_MD_CTX_copy_ex(dst->md, src->md) != 1)
		return HW_ERR_NOMEM;
	dst->alg = src->alg;
	return HW_OK;
}

/* ---- checks ---- */

static enum hw_status translate(uint32_t pd_id, const struct hw_sge *sge, uint32_t access, struct seg *out)
{
	const struct hw_mkey *mk = hw_mkey_lookup(sge->key);
	uint8_t *p;
	enum hw_status st;

	if (mk == NULL)
		return HW_ERR_KEY;
	st = hw_mkey_check(mk, pd_id, sge->addr, sge->len, access, &p);
	if (st != HW_OK)
		return st;
	*out = (struct seg){ .p = p, .mk = mk, .addr = sge->addr, .len = sge->len };
	return HW_OK;
}

static enum hw_status translate_src(uint32_t pd_id, const struct hw_sge *src, uint32_t n, struct seg *out)
{
	for (uint32_t i = 0; i < n; i++) {
		enum hw_status st = translate(pd_id, &src[i], src[i].access, &out[i]);

		if (st != HW_OK)
			return st;
	}
	return HW_OK;
}

/* Only the digest's bytes of the destination are checked: that is all the engine writes. */
static enum hw_status translate_dst(uint32_t pd_id, const struct hw_sge *dst, uint32_t size, struct seg *out)
{
	struct hw_sge d = *dst;

	if (dst->len < size)
		return HW_ERR_LENGTH;
	d.len = size;
	return translate(pd_id, &d, dst->access, out);
}

/* ---- data ---- */

static enum hw_status absorb_remote(struct hw_sha_state *st, const struct seg *s)
{
	if (st->bounce == NULL) {
		st->bounce = malloc(HW_SHA_BOUNCE_SIZE);
		if (st->bounce == NULL)
			return HW_ERR_NOMEM;
	}
	for (uint64_t off = 0; off < s->len;) {
		uint64_t n = s->len - off < HW_SHA_BOUNCE_SIZE ? s->len - off : HW_SHA_BOUNCE_SIZE;
		enum hw_status rs = s->mk->rops->read(s->mk->rctx, s->addr + off, st->bounce, n);

		if (rs != HW_OK)
			return rs;
		if (EVP_DigestUpdate(st->md, st->bounce, n) != 1)
			return HW_ERR_INVAL;
		off += n;
	}
	return HW_OK;
}

static enum hw_status absorb(struct hw_sha_state *st, const struct seg *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		enum hw_status rs = HW_OK;

		if (s[i].len == 0)
			continue;
		if (s[i].p == NULL)
			rs = absorb_remote(st, &s[i]);
		else if (EVP_DigestUpdate(st->md, s[i].p, s[i].len) != 1)
			rs = HW_ERR_INVAL;
		if (rs != HW_OK)
			return rs;
	}
	return HW_OK;
}

static enum hw_status emit(struct hw_sha_state *st, const struct seg *d)
{
	uint8_t digest[HW_SHA_MAX_DIGEST];
	unsigned int len = 0;

	if (EVP_DigestFinal_ex(st->md, digest, &len) != 1 || len != d->len)
		return HW_ERR_INVAL;
	if (d->p == NULL)
		return d->mk->rops->write(d->mk->rctx, d->addr, digest, len);
	memcpy(d->p, digest, len);
	return HW_OK;
}

enum hw_status hw_sha_step(struct hw_sha_state *st, uint32_t pd_id, const struct hw_sge *src, uint32_t nsrc,
			   const struct hw_sge *dst)
{
	struct seg s[HW_SHA_MAX_SGE], d;
	enum hw_status rs;

	if (nsrc > HW_SHA_MAX_SGE)
		return HW_ERR_INVAL;
	rs = translate_src(pd_id, src, nsrc, s);
	if (rs == HW_OK && dst != NULL)
		rs = translate_dst(pd_id, dst, hw_sha_digest_size(st->alg), &d);
	if (rs == HW_OK)
		rs = absorb(st, s, nsrc);
	if (rs == HW_OK && dst != NULL)
		rs = emit(st, &d);
	return rs;
}

/* ---- lanes ---- */

static struct hw_sha_state *lane_take(struct hw_sha_engine *eng, int *idx)
{
	for (int i = 0; i < HW_SHA_LANES; i++) {
		if (!atomic_exchange_explicit(&eng->busy[i], true, memory_order_acquire)) {
			*idx = i;
			return eng->lane[i];
		}
	}
	*idx = -1;
	/* More threads than lanes hash at once: a state of its own, as rare as that is. */
	return hw_sha_state_new(eng);
}

static void lane_give(struct hw_sha_engine *eng, struct hw_sha_state *st, int idx)
{
	if (idx < 0)
		hw_sha_state_free(st);
	else
		atomic_store_explicit(&eng->busy[idx], false, memory_order_release);
}

enum hw_status hw_sha_oneshot(struct hw_sha_engine *eng, enum hw_sha_alg alg, uint32_t pd_id,
			      const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst)
{
	struct hw_sha_state *st;
	enum hw_status rs;
	int idx;

	if (dst == NULL)
		return HW_ERR_INVAL;
	st = lane_take(eng, &idx);
	if (st == NULL)
		return HW_ERR_NOMEM;
	rs = hw_sha_start(st, alg);
	if (rs == HW_OK)
		rs = hw_sha_step(st, pd_id, src, nsrc, dst);
	lane_give(eng, st, idx);
	return rs;
}
