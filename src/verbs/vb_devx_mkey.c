/*
 * vb_devx_mkey — CREATE_MKEY, QUERY_MKEY and DESTROY_MKEY sent as DevX
 * commands: memory keys of the device's one key table (hw_mem.h), made as
 * the verbs keys are.
 *
 *  - PA or MTT over a umem (mkey_umem_valid): a plain key over the umem's
 *    bytes from mkey_umem_offset, used at [start_addr, start_addr + len),
 *    shared with the device's other processes as an MR is (fab_mr.h), so a
 *    QP of another process or machine reaches it by key. The umem is held:
 *    its deregistration is EBUSY while the key lives.
 *  - KLM and KSM: an indirect key whose translations name other keys of the
 *    same domain (KLM: byte_count, mkey, address; KSM: entries of
 *    2^log_entity_size bytes), the pattern a UMR would register
 *    (hw_umr.h), used from start_addr on. A KLM entry must lie inside its
 *    key when the command runs; a KSM entry may reach past it (the card
 *    checks KSM entries at access), and the key keeps the bytes the keys
 *    cover (vb_mk_clip). Shared by description (hw_mkey_share_umr)
 *    when its entries fit a record; else this process's QPs only.
 *
 * The key is the returned mkey_index << 8 | mkey_7_0, the tag the command
 * named. DESTROY is a fence (hw_mkey_dereg): the key is refused
 * everywhere, and accesses already past the check ended, before it returns.
 *
 * PRM layouts, big-endian: create_mkey_in has mkey_umem_valid (bit 6 of
 * byte 0xc), the mkey context at 0x10 (0x40 bytes),
 * translations_octword_actual_size at 0x60, mkey_umem_id at 0x64,
 * mkey_umem_offset at 0x68, the translations at 0x110. The context: free
 * (bit 6 of byte 0) and access_mode_4_2 (bits 4..2 of byte 0); umr_en, a,
 * rw, rr, lw, lr and access_mode_1_0 in byte 2 (bit 7 down to bits 1..0);
 * qpn and mkey_7_0 at 4; length64 (top bit of byte 0xc) and pd (low 24
 * bits) at 0xc; start_addr at 0x10; len at 0x18;
 * translations_octword_size at 0x34; log_entity_size (low 5 bits of byte
 * 0x3b). create_mkey_out: mkey_index at 8 (low 24 bits). query_mkey_in and
 * destroy_mkey_in: mkey_index at 8; query_mkey_out: the context at 0x10.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "fab_mr.h"
#include "hw_prm.h"
#include "hw_umr.h"
#include "vb_devx_prm.h"

#define VB_MK_IN_SZ 0x110	/* through the header and context; the translations follow */
#define VB_MK_OUT_SZ 0x10
#define VB_MK_QUERY_OUT_SZ 0x50 /* the header and the context */
#define VB_MK_UMEM_VALID 0xc
#define VB_MKC 0x10
#define VB_MK_ACTUAL 0x60
#define VB_MK_UMEM_ID 0x64
#define VB_MK_UMEM_OFF 0x68
#define VB_MK_TRANS 0x110
#define VB_MK_ENT 16u
#define VB_MK_ENTS_MAX 0xfffcu	/* as mlx5dv_create_mkey's largest key */
#define VB_MKC_ACCESS 0x78	/* a, rw, rr, lw of byte 2: the UMR context's access bits */
#define VB_MKC_LR 0x04

enum { VB_MK_PA = 0, VB_MK_MTT = 1, VB_MK_KLM = 2, VB_MK_KSM = 3 };

struct vb_devx_mkey {
	uint32_t key;
	struct hw_pd *pd;		/* held: the domain's number stays while the key lives */
	struct vb_umem *um;		/* PA, MTT: the umem, held */
	struct fab_shared backing;	/* PA, MTT shared with other processes */
	bool shared;
	struct hw_umr *umr;		/* KLM, KSM: the pattern */
	uint8_t mkc[0x40];		/* the context as created, for QUERY_MKEY */
};

static uint32_t vb_mk_hw_access(uint8_t b)
{
	return ((b & 0x08) ? HW_ACCESS_LOCAL_WRITE : 0) | ((b & 0x10) ? HW_ACCESS_REMOTE_READ : 0) |
	       ((b & 0x20) ? HW_ACCESS_REMOTE_WRITE : 0) | ((b & 0x40) ? HW_ACCESS_REMOTE_ATOMIC : 0);
}

/* PA / MTT: a plain key over the umem's bytes, then shared as an MR's. */
static int vb_mk_direct(struct vb_context *ctx, const uint8_t *in, struct vb_devx_mkey *mk, uint8_t *out,
			size_t outlen)
{
	const uint8_t *mkc = in + VB_MKC;
	uint64_t off = vb_prm_be64(in + VB_MK_UMEM_OFF), len = vb_prm_be64(mkc + 0x18);
	uint8_t *base;
	int rc;

	if (!(in[VB_MK_UMEM_VALID] & 0x40)) /* translations of physical pages: no such memory here */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_UMEM);
	if (len == 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_LEN);
	rc = vb_devx_umem_take(ctx, vb_prm_be32(in + VB_MK_UMEM_ID), off, len, &mk->um, out, outlen);
	if (rc != 0)
		return rc;
	base = (uint8_t *)mk->um->addr + off;
	if (hw_mkey_reg(mk->pd, base, vb_prm_be64(mkc + 0x10), len, vb_mk_hw_access(mkc[2]), &mk->key) != HW_OK)
		return ENOMEM;
	if (hw_mkey_retag(mk->key, mkc[7], &mk->key) != HW_OK)
		return ENOMEM;
	fab_mr_init();
	rc = fab_mr_share(mk->key, base, len, &mk->backing);
	mk->shared = rc == 0;
	return rc == FAB_SHARE_NO_RESOURCES ? ENOMEM : 0; /* memory that cannot move stays this process's */
}

/*
 * The command's translations as the list a UMR WQE carries (data segments:
 * byte count, key, address), cut at len bytes. The count of entries, or 0
 * when they cover less than len or an entry is larger than a segment takes.
 */
static uint32_t vb_mk_list(const uint8_t *t, uint32_t n, unsigned mode, uint8_t log_ent, uint64_t len,
			   struct hw_wqe_data_seg *ds)
{
	uint64_t at = 0;
	uint32_t k;

	for (k = 0; k < n && at < len; k++) {
		const uint8_t *e = t + (size_t)k * VB_MK_ENT;
		uint64_t cnt = mode == VB_MK_KSM ? (uint64_t)1 << log_ent : vb_prm_be32(e);

		if (cnt == 0 || cnt > HW_DATA_SEG_2G)
			return 0;
		if (cnt > len - at)
			cnt = len - at;
		hw_data_seg_set(&ds[k], (uint32_t)cnt, vb_prm_be32(e + 4), vb_prm_be64(e + 8));
		at += cnt;
	}
	return at == len ? k : 0;
}

/*
 * The bytes of entry d its key covers, [*lo, *hi) in the key's addresses:
 * empty when none. A key that is not a plain registration (none, a UMR
 * key, a window, ...) is left whole for hw_umr_register to judge.
 */
static void vb_mk_reach(const struct hw_wqe_data_seg *d, uint64_t *lo, uint64_t *hi)
{
	const struct hw_mkey *mk = hw_mkey_lookup(hw_data_seg_lkey(d));
	uint64_t a = hw_data_seg_addr(d), e = a + hw_data_seg_len(d);

	*lo = a;
	*hi = e;
	if (mk == NULL || mk->umr != NULL || mk->chunks != NULL || mk->rops != NULL || mk->implicit ||
	    mk->mw_type != 0)
		return;
	if (*lo < mk->addr)
		*lo = mk->addr;
	if (*hi > mk->addr + mk->len)
		*hi = mk->addr + mk->len;
	if (*lo > *hi)
		*lo = *hi;
}

/*
 * KSM entries cut to what their keys cover. The card checks a KSM entry
 * against its key at each access, not at creation, and UCX relies on it:
 * its atomic key has 2 GiB entries from an MR's address rounded down to
 * 2 GiB, of which the MR covers a part. The pattern here must name covered
 * memory, so it keeps the covered bytes, which must be one run of the key
 * (entries wholly outside it at either end dropped); the run starts *skip
 * bytes into the key and is *len long. An access outside the run fails the
 * key's bounds, as it fails the card's check. The entries left, or 0 when
 * nothing is covered or the covered bytes have a hole.
 */
static uint32_t vb_mk_clip(struct hw_wqe_data_seg *ds, uint32_t k, uint64_t *skip, uint64_t *len)
{
	uint64_t pos = 0, lo, hi;
	bool open = false, closed = false;
	uint32_t m = 0;

	*len = 0;
	for (uint32_t i = 0; i < k; i++) {
		uint64_t a = hw_data_seg_addr(&ds[i]), n = hw_data_seg_len(&ds[i]);
		uint32_t key = hw_data_seg_lkey(&ds[i]);

		vb_mk_reach(&ds[i], &lo, &hi);
		if (lo == hi) {
			closed = open;
		} else {
			if (closed || (open && lo != a))
				return 0; /* covered bytes, a gap, covered bytes again */
			if (!open)
				*skip = pos + (lo - a);
			open = true;
			closed = hi != a + n;
			hw_data_seg_set(&ds[m++], (uint32_t)(hi - lo), key, lo);
			*len += hi - lo;
		}
		pos += n;
	}
	memset(&ds[m], 0, (size_t)(k - m) * sizeof(ds[0])); /* the WQE's padding: no entry */
	return m;
}

/* KLM / KSM: the translations registered into a UMR key as a UMR WQE would (hw_umr_register). */
static int vb_mk_indirect(const uint8_t *in, size_t inlen, struct vb_devx_mkey *mk, uint8_t *out, size_t outlen)
{
	const uint8_t *mkc = in + VB_MKC;
	uint32_t n = vb_prm_be32(in + VB_MK_ACTUAL), cap = (n + 3) & ~3u, k;
	uint64_t len = vb_prm_be64(mkc + 0x18), skip = 0;
	struct hw_wqe_umr_ctrl_seg *uc;
	struct hw_wqe_mkey_ctx_seg *mc;
	size_t tbytes = ((size_t)cap * VB_MK_ENT + 63) & ~(size_t)63;
	uint8_t *w, synd;
	int rc = 0;

	if (inlen < VB_MK_TRANS + (size_t)n * VB_MK_ENT)
		return EINVAL; /* the command ends before its translations */
	if (n == 0 || n > VB_MK_ENTS_MAX || len == 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_LEN);
	w = calloc(1, sizeof(*uc) + sizeof(*mc) + tbytes);
	mk->umr = hw_umr_alloc(cap);
	if (w == NULL || mk->umr == NULL) {
		free(w);
		return ENOMEM;
	}
	uc = (void *)w;
	mc = (void *)(uc + 1);
	k = vb_mk_list(in + VB_MK_TRANS, n, mkc[2] & 3, mkc[0x3b] & 0x1f, len, (void *)(mc + 1));
	if (k == 0) {
		rc = vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_LEN);
		goto out;
	}
	if ((mkc[2] & 3) == VB_MK_KSM && vb_mk_clip((void *)(mc + 1), k, &skip, &len) == 0) {
		rc = vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_ENTRY);
		goto out;
	}
	uc->flags = HW_UMR_CTRL_INLINE;
	uc->klm_octowords = htobe16((uint16_t)(tbytes / VB_MK_ENT));
	uc->mkey_mask = htobe64(HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY | HW_UMR_MASK_LEN);
	mc->access_flags = mkc[2] & VB_MKC_ACCESS;
	mc->len = htobe64(len);
	if (hw_mkey_reg_umr(mk->pd, mk->umr, false, &mk->key) != HW_OK) {
		rc = ENOMEM;
		goto out;
	}
	(void)hw_mkey_umr_rebase(mk->key, vb_prm_be64(mkc + 0x10) + skip); /* a free UMR key just made */
	synd = hw_umr_register(hw_pd_id(mk->pd), mk->key, w, (uint32_t)(sizeof(*uc) + sizeof(*mc) + tbytes));
	if (synd != 0) /* an entry outside its key, or a key not of the domain: the card refuses the command */
		rc = vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_ENTRY);
	else if (hw_mkey_retag(mk->key, mkc[7], &mk->key) != HW_OK)
		rc = ENOMEM;
	else /* other processes rebuild it over their views of its entries' keys; else it stays this process's */
		(void)hw_mkey_share_umr(mk->key);
out:
	free(w);
	return rc;
}

static void vb_mk_free(struct vb_devx_mkey *mk)
{
	if (mk->key != 0)
		(void)hw_mkey_dereg(mk->key); /* the fence: nobody reaches the memory after this */
	if (mk->shared)
		fab_mr_unshare(&mk->backing);
	hw_umr_free(mk->umr);
	vb_devx_umem_put(mk->um);
	if (mk->pd != NULL)
		hw_pd_free(mk->pd);
	free(mk);
}

/* The context's checks: a key of no other QP, a whole address space, a free key (a UMR's to set) are not here. */
static int vb_mk_check(const uint8_t *mkc, unsigned mode, uint8_t *out, size_t outlen)
{
	if (mode > VB_MK_KSM)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_MODE);
	if ((vb_prm_be32(mkc + 4) >> 8) != 0xffffffu || (mkc[0xc] & 0x80) || (mkc[0] & 0x40) || (mkc[2] & 0x80))
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_MKEY_MODE);
	return 0;
}

int vb_devx_mkey_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
			struct mlx5dv_devx_obj *obj)
{
	const uint8_t *mkc = in + VB_MKC;
	unsigned mode = (unsigned)((mkc[0] >> 2) & 7) << 2 | (mkc[2] & 3);
	struct vb_devx_mkey *mk;
	int rc;

	if (inlen < VB_MK_IN_SZ || out == NULL || outlen < VB_MK_OUT_SZ)
		return EINVAL;
	rc = vb_mk_check(mkc, mode, out, outlen);
	if (rc != 0)
		return rc;
	mk = calloc(1, sizeof(*mk));
	if (mk == NULL)
		return ENOMEM;
	mk->pd = vb_devx_pd_get(ctx, vb_prm_u24(mkc + 0xc));
	if (mk->pd == NULL)
		rc = vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_PD);
	else if (mode == VB_MK_PA || mode == VB_MK_MTT)
		rc = vb_mk_direct(ctx, in, mk, out, outlen);
	else
		rc = vb_mk_indirect(in, inlen, mk, out, outlen);
	if (rc != 0) {
		vb_mk_free(mk);
		return rc;
	}
	memcpy(mk->mkc, mkc, sizeof(mk->mkc));
	memset(out, 0, VB_MK_OUT_SZ);
	vb_prm_put32(out + 8, mk->key >> 8);
	obj->kind = VB_DEVX_MKEY;
	obj->object_id = mk->key >> 8;
	obj->priv = mk;
	return 0;
}

void vb_devx_mkey_destroy(struct mlx5dv_devx_obj *obj)
{
	vb_mk_free(obj->priv);
}

/* QUERY_MKEY of the object's own index (another index is the kernel's EINVAL): the context, what fits of it. */
int vb_devx_mkey_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	const struct vb_devx_mkey *mk = obj->priv;
	const struct hw_mkey *e = hw_mkey_lookup(mk->key);
	uint8_t a[VB_MK_QUERY_OUT_SZ] = {0};

	if (inlen < VB_MK_OUT_SZ || outlen < VB_MK_OUT_SZ || vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	memcpy(a + VB_MKC, mk->mkc, sizeof(mk->mkc));
	a[VB_MKC] &= (uint8_t)~0x40;
	if (e == NULL || (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) & HW_MKEY_FREE))
		a[VB_MKC] |= 0x40; /* free: invalidated */
	memcpy(out, a, outlen < sizeof(a) ? outlen : sizeof(a));
	return 0;
}
