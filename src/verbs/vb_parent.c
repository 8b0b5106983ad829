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
 * Custom allocators are asked, as mlx5 asks them, for each queue's buffer
 * and doorbell record, and may leave them to the provider
 * (IBV_ALLOCATOR_USE_DEFAULT). Memory they hand over is where the queue
 * lives, as on the card: the device keeps its state of the queue apart and
 * shares the program's ring and record with its other processes in place
 * (hw_qblock_adopt). Their free gets it back when the queue is destroyed,
 * after the device's last access.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* The allocator's memory for one resource, as mlx5 asks it; USE_DEFAULT passed on. */
static void *vb_qmem_ask(struct vb_pd *pd, size_t size, size_t align, uint64_t type)
{
	return pd->alloc(&pd->pd, pd->pd_context, size, align, type);
}

static void vb_qmem_give_back(struct vb_pd *pd, void *p, bool ours, uint64_t type)
{
	if (ours)
		free(p);
	else
		pd->free(&pd->pd, pd->pd_context, p, type);
}

/*
 * Where the allocator left one of the two to the provider and gave the
 * other: ours, from the heap, shared with the device's other processes as
 * the allocator's is (a queue is one kind of memory or the other, never a
 * block of the device's and a ring of the program's).
 */
static int vb_qmem_fill(struct vb_qmem *m, size_t len)
{
	if (m->buf == IBV_ALLOCATOR_USE_DEFAULT) {
		m->buf = aligned_alloc(VB_QMEM_ALIGN, (len + VB_QMEM_ALIGN - 1) & ~(size_t)(VB_QMEM_ALIGN - 1));
		m->buf_ours = true;
	}
	if (m->dbrec == IBV_ALLOCATOR_USE_DEFAULT) {
		m->dbrec = aligned_alloc(VB_QMEM_ALIGN, VB_QMEM_ALIGN); /* a page: other processes map what holds it */
		m->dbrec_ours = true;
	}
	return m->buf != NULL && m->dbrec != NULL ? 0 : ENOMEM;
}

int vb_qmem_get(struct vb_qmem *m, struct ibv_pd *ibpd, size_t len, size_t align, uint64_t type)
{
	struct vb_pd *pd = ibpd != NULL ? vb_pd_of(ibpd) : NULL;

	memset(m, 0, sizeof(*m));
	if (pd == NULL || pd->parent_of == NULL || pd->alloc == NULL)
		return 0;
	m->pd = pd;
	m->type = type;
	/* As mlx5: the buffer, then the doorbell record, 8 bytes aligned to 8. */
	m->buf = vb_qmem_ask(pd, len, align, type);
	if (m->buf == NULL)
		goto err;
	m->dbrec = vb_qmem_ask(pd, VB_QMEM_DBREC_BYTES, VB_QMEM_DBREC_BYTES, MLX5DV_RES_TYPE_DBR);
	if (m->dbrec == NULL)
		goto err;
	if (m->buf == IBV_ALLOCATOR_USE_DEFAULT && m->dbrec == IBV_ALLOCATOR_USE_DEFAULT) {
		memset(m, 0, sizeof(*m)); /* the device's own blocks */
		return 0;
	}
	if (vb_qmem_fill(m, len) != 0)
		goto err;
	memset(m->buf, 0, len);
	memset(m->dbrec, 0, VB_QMEM_DBREC_BYTES);
	m->len = len;
	return 0;

err:
	vb_qmem_put(m);
	return ENOMEM;
}

void vb_qmem_put(struct vb_qmem *m)
{
	if (m->pd == NULL)
		return;
	if (m->buf != NULL && m->buf != IBV_ALLOCATOR_USE_DEFAULT)
		vb_qmem_give_back(m->pd, m->buf, m->buf_ours, m->type);
	if (m->dbrec != NULL && m->dbrec != IBV_ALLOCATOR_USE_DEFAULT)
		vb_qmem_give_back(m->pd, m->dbrec, m->dbrec_ours, MLX5DV_RES_TYPE_DBR);
	memset(m, 0, sizeof(*m));
}

int vb_qmem_errno(enum hw_status st)
{
	if (st == HW_ERR_NOTSUP)
		return EOPNOTSUPP;
	return st == HW_ERR_INVAL ? EINVAL : ENOMEM;
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
