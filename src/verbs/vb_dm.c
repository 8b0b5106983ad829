/*
 * vb_dm — device memory: ibv_alloc_dm / ibv_free_dm, the copies in and out
 * of it (ibv_memcpy_to_dm / _from_dm call the dm's own functions), its
 * registration (ibv_reg_dm_mr) and mlx5dv_alloc_dm of the MEMIC type.
 *
 * The memory and its device-wide capacity are hw_dm's. What is checked here
 * is what rdma-core v44's mlx5 provider and the kernel check: no comp_mask
 * bits, a length of 1 .. max_dm_size and an alignment the device grants
 * (EINVAL), the device full (ENOMEM); copies of 4-byte multiples at 4-byte
 * offsets (EINVAL) within the allocation (EFAULT); a registration zero-based
 * with the rights MEMIC allows, within the allocation (EINVAL); a free while
 * a registration holds it (EBUSY).
 */
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "hw_dm.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_MAGIC_DM 0x76624d44u

/* The rights mlx5 lets a MEMIC registration have (mlx5_reg_dm_mr; the kernel's MEMIC mask). */
#define VB_DM_ACCESS_OK                                                                                             \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |       \
	 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE)

struct vb_dm {
	struct ibv_dm dm;
	uint32_t magic;
	struct hw_dm *hw;
	_Atomic uint32_t mrs; /* registrations on it: free is EBUSY while non-zero */
};

static struct vb_dm *vb_dm_of(struct ibv_dm *dm)
{
	struct vb_dm *d = (struct vb_dm *)dm;

	return d != NULL && d->magic == VB_MAGIC_DM ? d : NULL;
}

/* Bounds first, then the word alignment, as mlx5_access_dm checks them. */
static int vb_dm_range(const struct vb_dm *d, uint64_t off, size_t len)
{
	if (off > d->hw->len || len > d->hw->len - off)
		return EFAULT;
	if ((off & 3) != 0 || (len & 3) != 0)
		return EINVAL;
	return 0;
}

/* The device's memory is reached in 32-bit words, which another process may be writing. */
static int vb_memcpy_to_dm(struct ibv_dm *dm, uint64_t off, const void *host, size_t len)
{
	struct vb_dm *d = vb_dm_of(dm);
	_Atomic uint32_t *w;
	int rc;

	if (d == NULL || (host == NULL && len != 0))
		return EINVAL;
	rc = vb_dm_range(d, off, len);
	if (rc != 0)
		return rc;
	w = (_Atomic uint32_t *)(d->hw->base + off);
	for (size_t i = 0; i < len / 4; i++) {
		uint32_t v;

		memcpy(&v, (const uint8_t *)host + 4 * i, 4);
		atomic_store_explicit(&w[i], v, memory_order_relaxed);
	}
	return 0;
}

static int vb_memcpy_from_dm(void *host, struct ibv_dm *dm, uint64_t off, size_t len)
{
	struct vb_dm *d = vb_dm_of(dm);
	_Atomic uint32_t *w;
	int rc;

	if (d == NULL || (host == NULL && len != 0))
		return EINVAL;
	rc = vb_dm_range(d, off, len);
	if (rc != 0)
		return rc;
	w = (_Atomic uint32_t *)(d->hw->base + off);
	for (size_t i = 0; i < len / 4; i++) {
		uint32_t v = atomic_load_explicit(&w[i], memory_order_relaxed);

		memcpy((uint8_t *)host + 4 * i, &v, 4);
	}
	return 0;
}

/* The kernel's checks of a MEMIC request: a length the device has, an alignment it grants. */
static int vb_dm_attr_ok(const struct ibv_alloc_dm_attr *a)
{
	uint32_t align = a->log_align_req < HW_DM_LOG_BASE_ALIGN ? 0 : a->log_align_req - HW_DM_LOG_BASE_ALIGN;

	if (a->comp_mask != 0 || a->length == 0 || a->length > HW_DM_SIZE)
		return EINVAL;
	return align > HW_DM_LOG_MAX_ALIGN ? EINVAL : 0;
}

static struct ibv_dm *vb_dm_alloc(struct ibv_context *c, struct ibv_alloc_dm_attr *attr)
{
	struct vb_dm *d;
	enum hw_status st;
	int rc;

	if (vb_ctx_checked(c) == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = vb_dm_attr_ok(attr);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	st = hw_dm_alloc(attr->length, &d->hw);
	if (st != HW_OK) {
		BASE_DBG("device memory of %llu bytes: %s", (unsigned long long)attr->length, hw_status_str(st));
		free(d);
		errno = st == HW_ERR_LAYOUT ? EACCES : st == HW_ERR_NOMEM ? ENOMEM : EINVAL;
		return NULL;
	}
	d->magic = VB_MAGIC_DM;
	d->dm.context = c;
	d->dm.memcpy_to_dm = vb_memcpy_to_dm;
	d->dm.memcpy_from_dm = vb_memcpy_from_dm;
	d->dm.handle = d->hw->page[0];
	return &d->dm;
}

struct ibv_dm *vb_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr)
{
	return vb_dm_alloc(c, attr);
}

int vb_free_dm(struct ibv_dm *dm)
{
	struct vb_dm *d = vb_dm_of(dm);

	if (d == NULL)
		return EINVAL;
	/* As the kernel: the memory stays while a registration can still reach it. */
	if (atomic_load(&d->mrs) != 0)
		return EBUSY;
	d->magic = 0;
	hw_dm_free(d->hw);
	free(d);
	return 0;
}

struct ibv_mr *vb_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len, unsigned int access)
{
	struct vb_dm *d = vb_dm_of(dm);
	struct ibv_mr *mr;

	if (pd == NULL || d == NULL || pd->context != dm->context || (access & ~(unsigned int)VB_DM_ACCESS_OK) ||
	    !(access & IBV_ACCESS_ZERO_BASED) || off > d->hw->len || len > d->hw->len - off) {
		errno = EINVAL;
		return NULL;
	}
	/* Counted first, so a free racing with the registration never takes the memory from under it. */
	atomic_fetch_add(&d->mrs, 1);
	mr = vb_reg_dm_range(pd, d->hw->base + off, len, access & ~(unsigned int)IBV_ACCESS_ZERO_BASED, &d->mrs);
	if (mr == NULL)
		atomic_fetch_sub(&d->mrs, 1);
	return mr;
}

/*
 * mlx5dv_init_obj's view: the memory itself, which a program then reads and
 * writes with plain loads and stores as it would the card's mapped MEMIC.
 * MEMIC has no remote address (that is software-owned ICM's).
 */
int vb_dm_view(struct ibv_dm *dm, struct mlx5dv_dm *out)
{
	struct vb_dm *d = vb_dm_of(dm);

	if (d == NULL)
		return EINVAL;
	out->buf = d->hw->base;
	out->length = d->hw->len;
	if (out->comp_mask & MLX5DV_DM_MASK_REMOTE_VA)
		out->remote_va = 0;
	out->comp_mask &= MLX5DV_DM_MASK_REMOTE_VA;
	return 0;
}

/* mlx5dv_alloc_dm: MEMIC only; the device has no software-owned ICM (the caps page says so). */
struct ibv_dm *vb_dv_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr,
			      struct mlx5dv_alloc_dm_attr *mattr)
{
	if (vb_ctx_checked(c) == NULL || attr == NULL || mattr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (mattr->type != MLX5DV_DM_TYPE_MEMIC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (mattr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	return vb_dm_alloc(c, attr);
}
