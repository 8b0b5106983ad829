/*
 * hw_umr — UMR pattern registration and the pattern cursor.
 */
#include "hw_umr.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "hw_prm.h"
#include "hw_sig.h"

#define UMR_OCTO 16u /* one translation entry: a KLM, a repeat block header or entry */

struct hw_umr *hw_umr_alloc(uint32_t cap)
{
	struct hw_umr *u = calloc(1, sizeof(*u) + (size_t)cap * sizeof(struct hw_umr_ent));

	if (u != NULL)
		u->cap = cap;
	return u;
}

struct hw_umr *hw_umr_alloc_sig(uint32_t cap)
{
	struct hw_umr *u = hw_umr_alloc(cap);

	if (u == NULL)
		return NULL;
	u->sig = hw_sig_new();
	if (u->sig == NULL) {
		free(u);
		return NULL;
	}
	return u;
}

void hw_umr_free(struct hw_umr *u)
{
	if (u != NULL)
		hw_sig_free(u->sig);
	free(u);
}

/* Both directions of a pattern copy: the pieces from off on, in order. */
static void umr_copy(const struct hw_umr *u, uint64_t off, uint8_t *buf, uint64_t n, bool out)
{
	struct hw_umr_cur c;

	if (n == 0)
		return;
	hw_umr_cur_init(&c, u, off);
	for (;;) {
		uint32_t k;
		uint8_t *p = hw_umr_cur_piece(&c, &k);

		if (k > n)
			k = (uint32_t)n;
		if (out)
			memcpy(buf, p, k);
		else
			memcpy(p, buf, k);
		n -= k;
		if (n == 0)
			return;
		buf += k;
		hw_umr_cur_advance(&c, k);
	}
}

void hw_umr_read(const struct hw_umr *u, uint64_t off, uint8_t *buf, uint64_t n)
{
	umr_copy(u, off, buf, n, true);
}

void hw_umr_write(const struct hw_umr *u, uint64_t off, const uint8_t *buf, uint64_t n)
{
	umr_copy(u, off, (uint8_t *)buf, n, false);
}

bool hw_umr_live(const struct hw_umr *u)
{
	for (uint32_t i = 0; i < u->n; i++)
		if (hw_mkey_find(u->e[i].key) == NULL)
			return false;
	return true;
}

struct umr_desc_ent {
	uint32_t key;
	uint32_t count;
	uint32_t stride;
	uint32_t rsvd;
	uint64_t off; /* from the key's first byte */
};

struct umr_desc {
	uint32_t n;
	uint32_t rsvd;
	uint64_t repeat;
	struct umr_desc_ent e[];
};

uint32_t hw_umr_describe(const struct hw_umr *u, void *buf, uint32_t cap)
{
	struct umr_desc *d = buf;
	uint32_t need = (uint32_t)(sizeof(*d) + (size_t)u->n * sizeof(d->e[0]));

	if (u->n == 0 || need > cap)
		return 0;
	d->n = u->n;
	d->rsvd = 0;
	d->repeat = u->repeat;
	for (uint32_t i = 0; i < u->n; i++) {
		const struct hw_mkey *mk = hw_mkey_lookup(u->e[i].key);

		if (mk == NULL || !mk->device_wide || mk->base == NULL || u->e[i].base < mk->base)
			return 0;
		d->e[i] = (struct umr_desc_ent){ .key = u->e[i].key, .count = u->e[i].count, .stride = u->e[i].stride,
						 .off = (uint64_t)(u->e[i].base - mk->base) };
	}
	return need;
}

struct hw_umr *hw_umr_from_desc(const void *buf, uint32_t len, const struct hw_mkey *(*inner)(uint32_t key))
{
	const struct umr_desc *d = buf;
	struct hw_umr *u;
	uint64_t unit = 0;

	if (len < sizeof(*d) || d->n == 0 || d->n > (len - sizeof(*d)) / sizeof(d->e[0]) || d->repeat == 0)
		return NULL;
	u = hw_umr_alloc(d->n);
	if (u == NULL)
		return NULL;
	for (uint32_t i = 0; i < d->n; i++) {
		const struct umr_desc_ent *e = &d->e[i];
		const struct hw_mkey *mk = inner(e->key);
		uint64_t span = e->count == 0 ? 0 : (d->repeat - 1) * (uint64_t)e->stride + e->count;

		/* The whole span inside the key (no overflow: repeat and stride are bounded below). */
		if (mk == NULL || mk->umr != NULL || mk->base == NULL || d->repeat > UINT32_MAX ||
		    e->off > mk->len || span > mk->len - e->off)
			goto bad;
		u->e[i] = (struct hw_umr_ent){ .base = mk->base + e->off, .count = e->count, .stride = e->stride,
					       .prefix = unit, .key = e->key };
		unit += e->count;
	}
	if (unit == 0 || unit > UINT64_MAX / d->repeat)
		goto bad;
	u->n = d->n;
	u->unit = unit;
	u->repeat = d->repeat;
	u->total = unit * d->repeat;
	return u;
bad:
	hw_umr_free(u);
	return NULL;
}

void hw_umr_cur_init(struct hw_umr_cur *c, const struct hw_umr *u, uint64_t off)
{
	uint64_t w = off % u->unit;
	uint32_t i = 0;

	c->u = u;
	c->r = off / u->unit;
	/* The entry whose data holds byte w of the repetition (zero-count entries hold none). */
	while (i + 1 < u->n && w >= u->e[i].prefix + u->e[i].count)
		i++;
	c->i = i;
	c->in = (uint32_t)(w - u->e[i].prefix);
}

/* UMR access bits of the mkey context to the table's rights. */
static uint32_t umr_access(uint8_t a)
{
	return ((a & HW_MKC_ACCESS_LOCAL_WRITE) ? HW_ACCESS_LOCAL_WRITE : 0) |
	       ((a & HW_MKC_ACCESS_REMOTE_READ) ? HW_ACCESS_REMOTE_READ : 0) |
	       ((a & HW_MKC_ACCESS_REMOTE_WRITE) ? HW_ACCESS_REMOTE_WRITE : 0) |
	       ((a & HW_MKC_ACCESS_ATOMIC) ? HW_ACCESS_REMOTE_ATOMIC : 0);
}

/*
 * One entry's memory [va, va + span) through lkey: a direct local key of the
 * same domain. The device reaches it locally on the indirect key's behalf:
 * the key must allow a local write when the indirect key allows any write
 * (its remote rights are the indirect key's, as on the card). Its local
 * address, or NULL.
 */
static uint8_t *umr_entry(uint32_t pd_id, uint32_t lkey, uint64_t va, uint64_t span, uint32_t access)
{
	const struct hw_mkey *mk = hw_mkey_lookup(lkey);
	uint8_t *p = NULL;

	access = (access & (HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC))
			 ? HW_ACCESS_LOCAL_WRITE
			 : HW_ACCESS_LOCAL_READ;

	if (mk == NULL || mk->umr != NULL || mk->chunks != NULL || mk->rops != NULL || mk->implicit)
		return NULL; /* entries name plain registrations: no nesting, no implicit key (checked per access) */
	if (hw_mkey_check(mk, pd_id, va, span, access, &p) != HW_OK)
		return NULL;
	return p != NULL ? p : (uint8_t *)mk->base; /* an empty span still names its key */
}

/* The strided form: a repeat block header, then num_ent entries. Fills u (entries, unit, repeat). */
static uint8_t umr_parse_strided(uint32_t pd_id, const uint8_t *t, uint32_t tlen, uint32_t access,
				 struct hw_umr *u)
{
	const struct hw_umr_repeat_block_seg *rb = (const void *)t;
	uint32_t n = be16toh(rb->num_ent), repeat = be32toh(rb->repeat_count);
	uint64_t unit = 0;

	if ((uint64_t)(n + 1) * UMR_OCTO > tlen)
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (n + 1 > u->cap)
		return HW_CQE_SYNDROME_MW_BIND_ERR; /* more translations than the key was created for */
	for (uint32_t i = 0; i < n; i++) {
		const struct hw_umr_repeat_ent_seg *e = (const void *)(t + (i + 1) * UMR_OCTO);
		uint32_t count = be16toh(e->byte_count), stride = be16toh(e->stride);
		uint64_t span = repeat == 0 || count == 0 ? 0 : (uint64_t)(repeat - 1) * stride + count;
		uint8_t *p = umr_entry(pd_id, be32toh(e->memkey), be64toh(e->va), span, access);

		if (p == NULL)
			return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
		u->e[i] = (struct hw_umr_ent){ .base = p, .count = count, .stride = stride, .prefix = unit,
					       .key = be32toh(e->memkey) };
		unit += count;
	}
	if (unit != be32toh(rb->byte_count))
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	u->n = n;
	u->unit = unit;
	u->repeat = repeat;
	return 0;
}

/* The list form: data segments (KLMs); trailing all-zero ones are the WQE's padding. */
static uint8_t umr_parse_list(uint32_t pd_id, const uint8_t *t, uint32_t tlen, uint32_t access, struct hw_umr *u)
{
	uint32_t n = tlen / UMR_OCTO;
	uint64_t unit = 0;

	while (n > 0) {
		const struct hw_wqe_data_seg *d = (const void *)(t + (n - 1) * UMR_OCTO);

		if (d->byte_count != 0 || d->lkey != 0 || d->addr != 0)
			break;
		n--;
	}
	if (n > u->cap)
		return HW_CQE_SYNDROME_MW_BIND_ERR;
	for (uint32_t i = 0; i < n; i++) {
		const struct hw_wqe_data_seg *d = (const void *)(t + i * UMR_OCTO);
		uint32_t len = hw_data_seg_len(d);
		uint8_t *p = umr_entry(pd_id, hw_data_seg_lkey(d), hw_data_seg_addr(d), len, access);

		if (p == NULL)
			return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
		u->e[i] = (struct hw_umr_ent){ .base = p, .count = len, .prefix = unit, .key = hw_data_seg_lkey(d) };
		unit += len;
	}
	u->n = n;
	u->unit = unit;
	u->repeat = 1;
	return 0;
}

/*
 * The signature segment after the translations (HW_UMR_MASK_BSF_EN): only
 * a key created for signatures takes one, and only one this device knows.
 */
static uint8_t umr_sig_seg(const struct hw_umr *u, const struct hw_wqe_umr_ctrl_seg *uc, const uint8_t *seg,
			   uint32_t left, struct hw_sig_cfg *cfg)
{
	if (be16toh(uc->bsf_octowords) * UMR_OCTO != sizeof(struct hw_umr_sig_seg) || left < sizeof(struct hw_umr_sig_seg))
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (u->sig == NULL)
		return HW_CQE_SYNDROME_MW_BIND_ERR;
	if (!hw_sig_parse((const struct hw_umr_sig_seg *)seg, cfg))
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	return 0;
}

/*
 * The key's new signature, if the WQE carried one (a key keeps its
 * signature from one registration to the next otherwise), and its length:
 * the wire length of the pattern's bytes.
 */
static uint64_t umr_sig_apply(struct hw_umr *u, const struct hw_wqe_umr_ctrl_seg *uc, const struct hw_sig_cfg *cfg)
{
	if (u->sig == NULL)
		return u->total;
	if (be64toh(uc->mkey_mask) & HW_UMR_MASK_BSF_EN)
		u->sig->cfg = *cfg;
	u->sig->mem_len = u->total;
	return hw_sig_wire_len(&u->sig->cfg, u->total);
}

/*
 * The pattern goes into a scratch copy first and into the key's only once
 * every entry checked out, so a refused UMR leaves the key as it was.
 */
uint8_t hw_umr_register(uint32_t pd_id, uint32_t mkey, const uint8_t *segs, uint32_t len)
{
	const struct hw_wqe_umr_ctrl_seg *uc = (const void *)segs;
	const struct hw_wqe_mkey_ctx_seg *mc = (const void *)(segs + sizeof(*uc));
	uint32_t hdr = sizeof(*uc) + sizeof(*mc), tlen;
	uint64_t need = HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY | HW_UMR_MASK_LEN;
	const struct hw_mkey *mk = hw_mkey_lookup(mkey);
	struct hw_umr *scratch;
	struct hw_sig_cfg cfg;
	uint32_t access;
	uint8_t synd;

	if (len < hdr || !(uc->flags & HW_UMR_CTRL_INLINE) || (be64toh(uc->mkey_mask) & need) != need)
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	tlen = (uint32_t)be16toh(uc->klm_octowords) * UMR_OCTO;
	if (tlen == 0 || tlen > len - hdr)
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	/* Not an indirect key of this domain, or one still holding a pattern (no LOCAL_INV first). */
	if (mk == NULL || mk->umr == NULL || mk->pd_id != pd_id ||
	    !(__atomic_load_n(&mk->state, __ATOMIC_ACQUIRE) & HW_MKEY_FREE))
		return HW_CQE_SYNDROME_MW_BIND_ERR;
	if (tlen / UMR_OCTO > mk->umr->cap)
		return HW_CQE_SYNDROME_MW_BIND_ERR; /* translations beyond the key's size */
	access = umr_access(mc->access_flags);
	scratch = hw_umr_alloc(mk->umr->cap);
	if (scratch == NULL)
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (be32toh(((const struct hw_umr_repeat_block_seg *)(segs + hdr))->op) == HW_UMR_REPEAT_BLOCK_OP)
		synd = umr_parse_strided(pd_id, segs + hdr, tlen, access, scratch);
	else
		synd = umr_parse_list(pd_id, segs + hdr, tlen, access, scratch);
	scratch->total = scratch->unit * scratch->repeat;
	if (synd == 0 && scratch->total != be64toh(mc->len))
		synd = HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (synd == 0 && (be64toh(uc->mkey_mask) & HW_UMR_MASK_BSF_EN))
		synd = umr_sig_seg(mk->umr, uc, segs + hdr + tlen, len - hdr - tlen, &cfg);
	if (synd == 0) {
		struct hw_umr *u = mk->umr;

		memcpy(u->e, scratch->e, (size_t)scratch->n * sizeof(u->e[0]));
		u->n = scratch->n;
		u->unit = scratch->unit != 0 ? scratch->unit : 1; /* an empty pattern: no offset is ever inside */
		u->repeat = scratch->repeat;
		u->total = scratch->total;
		if (hw_mkey_umr_set(mkey, access, umr_sig_apply(u, uc, &cfg)) != HW_OK)
			synd = HW_CQE_SYNDROME_MW_BIND_ERR;
	}
	hw_umr_free(scratch);
	return synd;
}
