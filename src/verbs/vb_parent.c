/*
 * vb_parent — thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)).
 *
 * A parent domain is a PD in its own right for every verbs call: its
 * objects are protected by the PD it wraps (the same device domain, so
 * keys and QPs of both meet), and it counts its own users, so it is freed
 * only when none is left and holds its PD meanwhile. A thread domain is the
 * program's promise that one thread uses the objects; this device's queues
 * take their locks uncontended anyway, so it changes nothing but lifetimes.
 * Custom allocators are asked, as mlx5 asks them, and may leave the memory
 * to the provider (IBV_ALLOCATOR_USE_DEFAULT); memory they hand over is
 * given back and the creation refused (EOPNOTSUPP): a queue's rings are the
 * device's shareable blocks, which the requesters of other processes map.
 */
#include <errno.h>
#include <stdlib.h>

#include "base_log.h"
#include <infiniband/mlx5dv.h>

#include "vb_int.h"

struct vb_td {
	struct ibv_td td;
	_Atomic uint32_t users; /* parent domains on it: dealloc is EBUSY while non-zero */
};

struct ibv_td *vb_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct vb_td *td;

	if (vb_ctx_checked(context) == NULL || attr == NULL || attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (td == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	td->td.context = context;
	return &td->td;
}

int vb_dealloc_td(struct ibv_td *ibtd)
{
	struct vb_td *td = (struct vb_td *)ibtd;

	if (ibtd == NULL)
		return EINVAL;
	if (atomic_load(&td->users) != 0)
		return EBUSY;
	free(td);
	return 0;
}

static int vb_parent_attr_ok(struct ibv_context *context, const struct ibv_parent_domain_init_attr *a)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;

	if (vb_ctx_checked(context) == NULL || a == NULL || a->pd == NULL || a->pd->context != context ||
	    (a->comp_mask & ~known) != 0)
		return EINVAL;
	if (vb_pd_of(a->pd)->parent_of != NULL || (a->td != NULL && a->td->context != context))
		return EINVAL; /* a parent domain of a parent domain, another context's thread domain */
	if ((a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) && (a->alloc == NULL || a->free == NULL))
		return EINVAL;
	return 0;
}

struct ibv_pd *vb_alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *a)
{
	struct vb_pd *pd, *base;
	int rc = vb_parent_attr_ok(context, a);

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	base = vb_pd_of(a->pd);
	pd->hw = base->hw;
	pd->parent_of = base;
	pd->td = a->td;
	if (a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = a->alloc;
		pd->free = a->free;
	}
	if (a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = a->pd_context;
	pd->pd.context = context;
	pd->pd.handle = a->pd->handle;
	atomic_fetch_add(&base->users, 1);
	if (a->td != NULL)
		atomic_fetch_add(&((struct vb_td *)a->td)->users, 1);
	return &pd->pd;
}

/*
 * What mlx5 asks a parent domain's allocators before it makes a queue's
 * buffer and its doorbell record: 0 when there are none or they leave the
 * memory to the provider (IBV_ALLOCATOR_USE_DEFAULT); EOPNOTSUPP, the memory
 * given back through their free, when they hand over memory of their own,
 * which a queue here cannot live in (its rings are the device's shareable
 * blocks, mapped by other processes' requesters).
 */
int vb_parent_alloc_check(struct ibv_pd *ibpd, size_t size, uint64_t type)
{
	struct vb_pd *pd = ibpd != NULL ? vb_pd_of(ibpd) : NULL;
	const uint64_t types[2] = { type, MLX5DV_RES_TYPE_DBR };
	const size_t sizes[2] = { size, 8 };

	if (pd == NULL || pd->parent_of == NULL || pd->alloc == NULL)
		return 0;
	for (int i = 0; i < 2; i++) {
		void *p = pd->alloc(ibpd, pd->pd_context, sizes[i], i == 0 ? 4096 : 8, types[i]);

		if (p == IBV_ALLOCATOR_USE_DEFAULT)
			continue;
		if (p != NULL && pd->free != NULL)
			pd->free(ibpd, pd->pd_context, p, types[i]);
		BASE_WARN("a parent domain's allocator gave memory of its own: queue rings here are the device's "
			  "shareable memory (EOPNOTSUPP)");
		return p == NULL ? ENOMEM : EOPNOTSUPP;
	}
	return 0;
}

int vb_parent_free(struct vb_pd *pd)
{
	if (atomic_load(&pd->users) != 0)
		return EBUSY;
	atomic_fetch_sub(&pd->parent_of->users, 1);
	if (pd->td != NULL)
		atomic_fetch_sub(&((struct vb_td *)pd->td)->users, 1);
	free(pd);
	return 0;
}
