/*
 * vb_pd — protection domains and memory regions on the device's mkey table.
 *
 * An MR is one direct entry of hw_mem's table: lkey == rkey == the hw key,
 * the program's address as the base and the iova as the address the key is
 * used with. Access flags are checked as the kernel does before anything is
 * registered, so a refused registration changes nothing.
 *
 * A registration is also shared with the other processes of the device
 * (fab_mr_share): the range's pages move onto shared memory in place, so a
 * peer QP in another process reaches it by key, as a card would. Memory that
 * cannot be moved (file mappings, read-only memory) stays process-local: the
 * key works here, and fails elsewhere as a bad key does; so does a range
 * overlapping only part of one an earlier registration moved (a warning
 * says so: one record names one memfd). Memory that could be moved but for
 * want of a descriptor (each distinct range's memfd holds one) is refused
 * (ENOMEM, logged), never silently local.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "base_log.h"
#include "fab_mr.h"
#include "vb_export.h"
#include "vb_int.h"

VB_EXPORT struct ibv_pd *vb_alloc_pd(struct ibv_context *context);
VB_EXPORT struct ibv_pd *vb_alloc_pd(struct ibv_context *context)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct vb_pd *pd;

	if (ctx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->hw = hw_pd_alloc(ctx->dev->func_id);
	if (pd->hw == NULL) {
		free(pd);
		errno = ENOMEM;
		return NULL;
	}
	hw_pd_set_owner(pd->hw, ctx); /* DevX commands of other contexts do not reach it */
	pd->pd.context = context;
	pd->pd.handle = hw_pd_id(pd->hw);
	return &pd->pd;
}
VB_SYMVER(vb_alloc_pd, ibv_alloc_pd, "IBVERBS_1.1");

VB_EXPORT int vb_dealloc_pd(struct ibv_pd *ibpd);
VB_EXPORT int vb_dealloc_pd(struct ibv_pd *ibpd)
{
	struct vb_pd *pd = vb_pd_of(ibpd);

	if (ibpd == NULL)
		return EINVAL;
	if (pd->doca_owned) {
		BASE_ERR("the domain belongs to a DOCA device (doca_dev_get_pd): doca_dev_close frees it");
		return EBUSY;
	}
	if (pd->parent_of != NULL)
		return vb_parent_free(pd);
	if (pd->imported)
		return vb_pd_unimport(pd); /* the domain lives on with its allocator's handle */
	/* As the kernel: a domain with registrations or queues on it stays (a DOCA device's among them). */
	if (atomic_load(&pd->users) != 0 || hw_pd_shared(pd->hw))
		return EBUSY;
	hw_pd_free(pd->hw);
	free(pd);
	return 0;
}
VB_SYMVER(vb_dealloc_pd, ibv_dealloc_pd, "IBVERBS_1.1");

#define VB_ACCESS_KNOWN                                                                           \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |              \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |                  \
	 IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB)

/*
 * The hw rights of verbs access flags, or an errno value: unknown flags and
 * remote write/atomic without local write are EINVAL (the kernel's rule);
 * optional-range flags are hints a device may ignore; on-demand paging
 * makes an ordinary registration here (vb_odp.c); zero-based addressing is
 * for memory windows, which it does not have.
 */
static int vb_access_to_hw(unsigned int access, uint32_t *hw)
{
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if (access & ~(unsigned int)VB_ACCESS_KNOWN)
		return EINVAL;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (access & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	*hw = 0;
	if (access & IBV_ACCESS_LOCAL_WRITE)
		*hw |= HW_ACCESS_LOCAL_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		*hw |= HW_ACCESS_REMOTE_READ;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		*hw |= HW_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		*hw |= HW_ACCESS_REMOTE_ATOMIC;
	if (access & IBV_ACCESS_MW_BIND)
		*hw |= HW_ACCESS_MW_BIND;
	return 0;
}

/* The MR with what its sharing holds (fab_mr.h keeps out of vb.h, which libmlx5 sees). */
struct vb_mr_priv {
	struct vb_mr m;
	struct fab_shared backing;
	bool shared;
	bool imported; /* ibv_import_mr: another handle of a registration of this process */
	_Atomic uint32_t *dm_mrs; /* an MR on device memory: that memory's count of registrations */
};

/*
 * 0, or ENOMEM when the memory could have been shared but the system refused
 * what it takes (a descriptor for the memfd its pages move onto): then the
 * registration fails, for a key that only worked here would look like any
 * other and fail at its peers.
 */
static int vb_mr_share(struct vb_mr_priv *p, void *addr, size_t length)
{
	int rc;

	fab_mr_init();
	rc = fab_mr_share(p->m.key, addr, length, &p->backing);
	p->shared = rc == 0;
	if (rc == FAB_SHARE_NO_RESOURCES) {
		BASE_ERR("MR of %zu bytes refused: its memory cannot be made reachable by the device's other processes",
			 length);
		return ENOMEM;
	}
	if (rc == FAB_SHARE_OVERLAP)
		BASE_WARN("MR %#x spans more than %u ranges moved for other registrations: other processes cannot reach it",
			  p->m.key, FAB_SHARE_SEGS_MAX);
	else if (!p->shared)
		BASE_DBG("MR %#x: memory that cannot be moved stays local to this process", p->m.key);
	return 0;
}

/* empty_ok: a registration of no bytes is valid (device memory's, as the kernel takes it). */
static struct ibv_mr *vb_reg_any(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
				 unsigned int access, bool empty_ok)
{
	struct vb_pd *pd = vb_pd_of(ibpd);
	struct vb_mr_priv *p;
	enum hw_status st;
	struct vb_mr *mr;
	uint32_t hw_access;
	int rc;

	/* Implicit ODP, as mlx5: a NULL address over SIZE_MAX with ON_DEMAND, at iova 0 (vb_odp.c). */
	bool implicit = addr == NULL && length == SIZE_MAX && (access & IBV_ACCESS_ON_DEMAND) != 0;

	if (ibpd == NULL || (addr == NULL && !implicit) || (length == 0 && !empty_ok) || (implicit && iova != 0)) {
		errno = EINVAL;
		return NULL;
	}
	rc = vb_access_to_hw(access, &hw_access);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr = &p->m;
	st = implicit ? hw_mkey_reg_implicit(pd->hw, hw_access, &mr->key)
		      : hw_mkey_reg(pd->hw, addr, iova, length, hw_access, &mr->key);
	if (st != HW_OK) {
		BASE_DBG("hw_mkey_reg: %s", hw_status_str(st));
		free(p);
		errno = st == HW_ERR_NOMEM ? ENOMEM : EINVAL;
		return NULL;
	}
	/*
	 * The whole address space cannot move onto shareable memory: an implicit
	 * key stays this process's; an empty one has nothing to share.
	 */
	rc = implicit || length == 0 ? 0 : vb_mr_share(p, addr, length);
	if (rc != 0) {
		(void)hw_mkey_dereg(mr->key);
		free(p);
		errno = rc;
		return NULL;
	}
	atomic_fetch_add(&pd->users, 1);
	mr->mr.context = ibpd->context;
	mr->mr.pd = ibpd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = mr->key;
	mr->mr.lkey = mr->key;
	mr->mr.rkey = mr->key;
	return &mr->mr;
}

static struct ibv_mr *vb_reg(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	return vb_reg_any(ibpd, addr, length, iova, access, false);
}

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

VB_EXPORT struct ibv_mr *vb_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
VB_EXPORT struct ibv_mr *vb_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return vb_reg(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}
VB_SYMVER(vb_reg_mr, ibv_reg_mr, "IBVERBS_1.1");

VB_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
					  int access)
{
	return vb_reg(pd, addr, length, iova, (unsigned int)access);
}

VB_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
					   unsigned int access)
{
	return vb_reg(pd, addr, length, iova, access);
}

struct ibv_mr *vb_mr_import(struct ibv_pd *ibpd, uint32_t key, uint64_t len)
{
	struct vb_mr_priv *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->imported = true;
	p->m.key = key;
	atomic_fetch_add(&vb_pd_of(ibpd)->users, 1);
	/* As the kernel reports an imported registration: no address, its length and keys. */
	p->m.mr = (struct ibv_mr){ .context = ibpd->context, .pd = ibpd, .length = len, .handle = key,
				   .lkey = key, .rkey = key };
	return &p->m.mr;
}

VB_EXPORT void ibv_unimport_mr(struct ibv_mr *ibmr)
{
	struct vb_mr_priv *p = (struct vb_mr_priv *)ibmr;

	if (ibmr == NULL || !p->imported) {
		BASE_WARN("ibv_unimport_mr: not an imported registration");
		return;
	}
	atomic_fetch_sub(&vb_pd_of(ibmr->pd)->users, 1);
	free(p);
}

struct ibv_mr *vb_reg_dm_range(struct ibv_pd *pd, void *base, size_t len, unsigned int access,
			       _Atomic uint32_t *dm_mrs)
{
	struct ibv_mr *mr = vb_reg_any(pd, base, len, 0, access, true);

	if (mr == NULL)
		return NULL;
	((struct vb_mr_priv *)mr)->dm_mrs = dm_mrs;
	mr->addr = NULL; /* as rdma-core's ibv_cmd_reg_dm_mr: the MR names offsets, no address of the process */
	return mr;
}

VB_EXPORT int vb_dereg_mr(struct ibv_mr *ibmr);
VB_EXPORT int vb_dereg_mr(struct ibv_mr *ibmr)
{
	struct vb_mr_priv *p = (struct vb_mr_priv *)ibmr;
	enum hw_status st;

	if (ibmr == NULL)
		return EINVAL;
	if (p->imported) {
		/* The registration lives on with its registrant's handle, as an imported domain does. */
		ibv_unimport_mr(ibmr);
		return 0;
	}
	st = hw_mkey_dereg(p->m.key);
	if (st != HW_OK)
		return EINVAL;
	/* The key is gone everywhere first; then the sharing it needed. */
	if (p->shared)
		fab_mr_unshare(&p->backing);
	atomic_fetch_sub(&vb_pd_of(ibmr->pd)->users, 1);
	if (p->dm_mrs != NULL)
		atomic_fetch_sub(p->dm_mrs, 1);
	free(p);
	return 0;
}
VB_SYMVER(vb_dereg_mr, ibv_dereg_mr, "IBVERBS_1.1");

/* ibv_rereg_mr's checks of its arguments alone (rdma-core's own, before the device sees them). */
static int vb_rereg_input_ok(const struct ibv_mr *mr, int flags, const void *addr, size_t length, int access)
{
	if (mr == NULL || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) != 0)
		return 0;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0))
		return 0;
	return access == 0 || (flags & IBV_REREG_MR_CHANGE_ACCESS);
}

/* What the device is asked (the kernel's checks: some change, a domain of the MR's context, valid rights). */
static int vb_rereg_change(const struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
			   int access, struct hw_mkey_change *c)
{
	*c = (struct hw_mkey_change){ 0 };
	if (flags == 0)
		return EINVAL;
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (pd == NULL || pd->context != mr->context)
			return EINVAL;
		c->pd = vb_pd_of(pd)->hw;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		int rc = vb_access_to_hw((unsigned int)access, &c->access);

		if (rc != 0)
			return rc;
		c->access_set = true;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		c->base = addr;
		c->addr = (uintptr_t)addr;
		c->len = length;
	}
	return 0;
}

/*
 * The new range's sharing is taken before the old one is let go, so a range
 * registered again over the same pages keeps them where they are. When the
 * system refuses it, the key goes back to its old range (a second fence)
 * with its old memory published again: the MR is as it was.
 */
static int vb_rereg_share(struct vb_mr_priv *p, const struct hw_mkey_change *c)
{
	struct fab_shared old = p->backing;
	bool was_shared = p->shared;
	struct hw_mkey_change back = { .base = p->m.mr.addr, .addr = (uintptr_t)p->m.mr.addr,
				       .len = p->m.mr.length };
	int rc = vb_mr_share(p, c->base, c->len);

	if (rc == 0) {
		if (was_shared)
			fab_mr_unshare(&old);
		return 0;
	}
	(void)hw_mkey_rereg(p->m.key, &back);
	p->shared = was_shared && fab_mr_share(p->m.key, back.base, back.len, &p->backing) == 0;
	if (was_shared)
		fab_mr_unshare(&old); /* the reference the line above took again, or the last one */
	return rc;
}

VB_EXPORT int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct vb_mr_priv *p = (struct vb_mr_priv *)ibmr;
	struct hw_mkey_change c;
	int rc;

	if (!vb_rereg_input_ok(ibmr, flags, addr, length, access)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	/* The kernel refuses to re-register an MR on device memory. */
	rc = p->dm_mrs != NULL ? EINVAL : vb_rereg_change(ibmr, flags, pd, addr, length, access, &c);
	if (rc == 0 && hw_mkey_rereg(p->m.key, &c) != HW_OK)
		rc = EINVAL;
	if (rc == 0 && c.base != NULL)
		rc = vb_rereg_share(p, &c);
	if (rc != 0) {
		errno = rc;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (c.pd != NULL) {
		atomic_fetch_sub(&vb_pd_of(ibmr->pd)->users, 1);
		atomic_fetch_add(&vb_pd_of(pd)->users, 1);
		ibmr->pd = pd;
	}
	if (c.base != NULL) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	return 0;
}
