/*
 * vb_bell — the doorbell pages a program writes itself: the page of the
 * bf.reg mlx5dv_init_obj gives for a QP (one per context, apart from the
 * CQs' cq_uar page, which no QP's doorbell shares) and DevX UAR pages
 * (mlx5dv_devx_alloc_uar). Each is a mapping of its own, trapped (hw_trap.h)
 * while a QP may be rung through it: a verbs QP from its first
 * mlx5dv_init_obj to its destroy, a DevX UAR from its allocation to its
 * free. The library's own post path never writes these pages.
 * The cq_uar page is trapped from its first view to the context's close:
 * a store to its CQ doorbell is the program's own arm of a CQ (vb_cq.c); a
 * store to a DevX UAR's CQ doorbell is the arm of a DevX CQ (vb_devx_evch.c),
 * its other stores ring QPs.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "hw_trap.h"
#include "vb_int.h"

static void *vb_bell_map(void)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void vb_bell_unmap(void *page)
{
	if (page == NULL)
		return;
	hw_trap_forget(page);
	munmap(page, (size_t)sysconf(_SC_PAGESIZE));
}

void *vb_bell_ctx_page(struct vb_context *ctx)
{
	void *p;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->bell == NULL)
		ctx->bell = vb_bell_map();
	p = ctx->bell;
	pthread_mutex_unlock(&ctx->lock);
	return p;
}

void vb_bell_ctx_fini(struct vb_context *ctx)
{
	vb_bell_unmap(ctx->bell);
	ctx->bell = NULL;
}

void *vb_bell_cq_page(struct vb_context *ctx)
{
	void *p;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->uar == NULL && (ctx->uar = vb_bell_map()) != NULL)
		(void)hw_trap_arm_store(ctx->uar, vb_cq_uar_store, ctx); /* traps off: raw arms are not seen */
	p = ctx->uar;
	pthread_mutex_unlock(&ctx->lock);
	return p;
}

void vb_bell_cq_fini(struct vb_context *ctx)
{
	vb_bell_unmap(ctx->uar);
	ctx->uar = NULL;
}

void vb_bell_qp_arm(struct vb_qp *qp, void *page)
{
	/* Once per QP: its destroy disarms once. Traps off: the engine thread's polling serves it. */
	if (!atomic_exchange(&qp->bell_armed, true) && hw_trap_arm(page) != 0)
		atomic_store(&qp->bell_armed, false);
}

void vb_bell_qp_disarm(struct vb_qp *qp)
{
	if (atomic_exchange(&qp->bell_armed, false))
		hw_trap_disarm(qp->ctx->bell);
}

void *vb_bell_uar_page(void)
{
	void *p = vb_bell_map();

	/* Traps off or full: QPs served by polling, and DevX CQ arms looked for in the records every period. */
	if (p != NULL && hw_trap_arm_side(p, VB_CQ_DOORBELL, vb_devx_uar_store, NULL) != 0)
		vb_devx_evch_unseen();
	return p;
}

void vb_bell_uar_free(void *page)
{
	vb_bell_unmap(page);
}
