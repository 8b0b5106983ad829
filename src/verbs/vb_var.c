/*
 * vb_var — virtio access regions (mlx5dv_alloc_var / mlx5dv_free_var).
 *
 * A VAR is one doorbell page of the card's virtio emulation BAR. The pages
 * are a capacity of the whole device: each VAR holds a slot of the number
 * table's HW_ID_VAR kind among VB_VAR_MAX (softdpu's figure: a card's
 * follows from its virtio emulation BAR, not modelled), so every process of
 * the machine counts against the same total; the slot's number is the VAR's
 * page_id. When all are held: ENOSPC, as the kernel's VAR table answers.
 *
 * The page is mapped through the context's cmd_fd at mmap_off, as the
 * kernel's mmap entry is: here cmd_fd is a memory file of the context's own
 * (vb_import.c), and the VAR's page is the file's page (page_id + 1), so the
 * offset is unique on the device. The page is zeroed when the VAR is made.
 * Nothing in the device reads what is written there: softdpu has no virtio
 * emulation to ring.
 *
 * mlx5dv_free_var returns nothing; a VAR that is not live (freed already, or
 * its context closed, which frees the context's VARs as the kernel's context
 * teardown does) is refused without being touched: logged, errno EINVAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_ids.h"
#include "vb_int.h"

#define VB_VAR_PAGE 4096u /* a doorbell page: the card's doorbell stride */

struct vb_var {
	struct mlx5dv_var var;
	struct vb_context *ctx;
	struct vb_var *next; /* the live VARs of this process (under vars_lock) */
};

static pthread_mutex_t vars_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vb_var *vars;

/* The file offset of VAR page_id: page 0 of the file stays unused, so no VAR is at offset 0. */
static off_t vb_var_off(uint32_t page_id)
{
	return (off_t)(page_id + 1) * VB_VAR_PAGE;
}

/* Makes the VAR's page of the context's file exist, zeroed: errno value or 0. */
static int vb_var_page(int fd, off_t off)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return errno;
	if (st.st_size < off + VB_VAR_PAGE && ftruncate(fd, off + VB_VAR_PAGE) != 0)
		return errno;
	/* A previous holder's bytes go (the file outlives VARs). */
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, VB_VAR_PAGE) != 0)
		return errno;
	return 0;
}

static struct mlx5dv_var *vb_alloc_var(struct ibv_context *c, uint32_t flags)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct vb_var *v;
	enum hw_status st;
	uint32_t id;
	int rc;

	if (ctx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (flags != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (v == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	st = hw_id_alloc_within(HW_ID_VAR, VB_VAR_MAX, &id);
	if (st != HW_OK) {
		rc = st == HW_ERR_NOMEM ? ENOSPC : EACCES;
		goto err_free;
	}
	v->var = (struct mlx5dv_var){ .page_id = id - hw_id_base(HW_ID_VAR), .length = VB_VAR_PAGE };
	v->var.mmap_off = vb_var_off(v->var.page_id);
	rc = vb_var_page(c->cmd_fd, v->var.mmap_off);
	if (rc != 0)
		goto err_id;
	v->ctx = ctx;
	pthread_mutex_lock(&vars_lock);
	v->next = vars;
	vars = v;
	pthread_mutex_unlock(&vars_lock);
	return &v->var;
err_id:
	(void)hw_id_free(HW_ID_VAR, id);
err_free:
	free(v);
	errno = rc;
	return NULL;
}

/* Takes v out of the live list: whether it was there. Lock held. */
static bool vb_var_unlist(struct vb_var *v)
{
	for (struct vb_var **pp = &vars; *pp != NULL; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			return true;
		}
	return false;
}

static void vb_var_release(struct vb_var *v)
{
	(void)hw_id_free(HW_ID_VAR, v->var.page_id + hw_id_base(HW_ID_VAR));
	free(v);
}

static void vb_free_var(struct mlx5dv_var *dv_var)
{
	struct vb_var *v = (struct vb_var *)dv_var;
	bool live;

	/* Only compared, never read, until found live: a stale pointer is refused safely. */
	pthread_mutex_lock(&vars_lock);
	live = v != NULL && vb_var_unlist(v);
	pthread_mutex_unlock(&vars_lock);
	if (!live) {
		BASE_WARN("mlx5dv_free_var: not a live VAR (freed already, or its context closed)");
		errno = EINVAL;
		return;
	}
	vb_var_release(v);
}

void vb_var_ctx_fini(struct vb_context *ctx)
{
	struct vb_var *gone = NULL;

	pthread_mutex_lock(&vars_lock);
	for (struct vb_var **pp = &vars; *pp != NULL;) {
		struct vb_var *v = *pp;

		if (v->ctx != ctx) {
			pp = &v->next;
			continue;
		}
		*pp = v->next;
		v->next = gone;
		gone = v;
	}
	pthread_mutex_unlock(&vars_lock);
	while (gone != NULL) {
		struct vb_var *v = gone;

		gone = v->next;
		vb_var_release(v);
	}
}

const struct vb_dv_var_ops vb_dv_var_ops_impl = {
	.alloc_var = vb_alloc_var,
	.free_var = vb_free_var,
};
