/*
 * vb_dm — device memory: ibv_alloc_dm / ibv_free_dm, the copies in and out
 * of it (ibv_memcpy_to_dm / _from_dm call the dm's own functions), its
 * registration (ibv_reg_dm_mr), mlx5dv_alloc_dm of the MEMIC type and its
 * operation addresses (mlx5dv_dm_map_op_addr, vb_memic.c).
 *
 * The memory and its device-wide capacity are hw_dm's. What is checked here
 * is what rdma-core v44's mlx5 provider and the kernel check: no comp_mask
 * bits, a length of 1 .. max_dm_size and an alignment the device grants
 * (EINVAL), the device full (ENOMEM); copies of 4-byte multiples at 4-byte
 * offsets (EINVAL) within the allocation (EFAULT); a registration zero-based
 * with the rights MEMIC allows, within the allocation (EINVAL); a free while
 * a registration holds it (EBUSY). ibv_import_dm gives another context of
 * this process a handle on the same memory (the dm's handle names it, as a
 * domain's number does for ibv_import_pd): the import holds the allocation,
 * whose free is EBUSY until it is let go.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "fab_share.h"
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
	struct fab_backing share; /* an allocation: the memfd its memory lives on (see vb_dm_share) */
	_Atomic uint32_t mrs; /* registrations on it: free is EBUSY while non-zero */
	struct vb_dm *of;     /* an import: the allocation it is a handle of (hw is that one's) */
	uint32_t imports;     /* an allocation: imports holding it (under dms_lock) */
	struct vb_dm *next;   /* the allocations of this process (under dms_lock) */
};

static pthread_mutex_t dms_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vb_dm *dms;

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

/*
 * The card's memory is one memory for every process that reaches it: a
 * fork's child shares it with its parent (MEMIC operations are atomic
 * between them, vb_memic.c). The pages move onto a shared memory file at
 * once, which registrations on them use too.
 */
static int vb_dm_share(struct vb_dm *d)
{
	int rc = fab_share_get(d->hw->base, d->hw->map_len, &d->share);

	if (rc != 0) {
		BASE_WARN("device memory of %zu bytes: cannot be shared (%d)", d->hw->map_len, rc);
		return ENOMEM;
	}
	fab_share_keep_shared(&d->share);
	return 0;
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
	rc = vb_dm_share(d);
	if (rc != 0) {
		hw_dm_free(d->hw);
		free(d);
		errno = rc;
		return NULL;
	}
	d->magic = VB_MAGIC_DM;
	d->dm.context = c;
	d->dm.memcpy_to_dm = vb_memcpy_to_dm;
	d->dm.memcpy_from_dm = vb_memcpy_from_dm;
	d->dm.handle = d->hw->page[0];
	pthread_mutex_lock(&dms_lock);
	d->next = dms;
	dms = d;
	pthread_mutex_unlock(&dms_lock);
	return &d->dm;
}

/* Takes d out of the list, unless an import holds it: EBUSY then. Lock held. */
static int vb_dm_unlist(struct vb_dm *d)
{
	if (d->imports != 0)
		return EBUSY;
	for (struct vb_dm **pp = &dms; *pp != NULL; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	return 0;
}

/* Lets go of an import: 0, or EBUSY while registrations on it live. */
static int vb_dm_unimport(struct vb_dm *d)
{
	if (atomic_load(&d->mrs) != 0)
		return EBUSY;
	pthread_mutex_lock(&dms_lock);
	d->of->imports--;
	pthread_mutex_unlock(&dms_lock);
	d->magic = 0;
	free(d);
	return 0;
}

VB_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	struct vb_dm *d, *orig;

	if (vb_ctx_checked(context) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dms_lock);
	for (orig = dms; orig != NULL; orig = orig->next)
		if (orig->dm.handle == dm_handle && orig->dm.context->device == context->device)
			break;
	if (orig != NULL)
		orig->imports++;
	pthread_mutex_unlock(&dms_lock);
	if (orig == NULL) {
		free(d);
		errno = EINVAL; /* no such allocation on this device */
		return NULL;
	}
	*d = (struct vb_dm){ .magic = VB_MAGIC_DM, .hw = orig->hw, .of = orig };
	d->dm = (struct ibv_dm){ .context = context, .memcpy_to_dm = vb_memcpy_to_dm,
				 .memcpy_from_dm = vb_memcpy_from_dm, .handle = dm_handle };
	return &d->dm;
}

VB_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	struct vb_dm *d = vb_dm_of(dm);

	if (d == NULL || d->of == NULL) {
		BASE_WARN("ibv_unimport_dm: not an imported allocation");
		return;
	}
	if (vb_dm_unimport(d) != 0)
		BASE_WARN("ibv_unimport_dm: registrations on the imported allocation still use it: kept");
}

struct ibv_dm *vb_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr)
{
	return vb_dm_alloc(c, attr);
}

int vb_free_dm(struct ibv_dm *dm)
{
	struct vb_dm *d = vb_dm_of(dm);
	int rc;

	if (d == NULL)
		return EINVAL;
	if (d->of != NULL)
		return vb_dm_unimport(d); /* the allocation lives on with its allocator's handle */
	/* As the kernel: the memory stays while a registration can still reach it. */
	if (atomic_load(&d->mrs) != 0)
		return EBUSY;
	pthread_mutex_lock(&dms_lock);
	rc = vb_dm_unlist(d);
	pthread_mutex_unlock(&dms_lock);
	if (rc != 0)
		return rc;
	d->magic = 0;
	vb_memic_drop(d); /* its op addresses fault as any unmapped memory would from now on */
	fab_share_put(&d->share);
	hw_dm_free(d->hw);
	free(d);
	return 0;
}

/* The op address of the allocation's memory (an import's is its allocation's), as long as the allocation. */
void *vb_dm_map_op_addr(struct ibv_dm *dm, uint8_t op)
{
	struct vb_dm *d = vb_dm_of(dm);

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return vb_memic_map(d->of != NULL ? d->of : d, d->hw->base, d->hw->map_len, op);
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
