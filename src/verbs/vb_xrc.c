/*
 * vb_xrc — XRC domains (ibv_open_xrcd, ibv_close_xrcd), XRC receive QPs
 * (created in a domain, opened by number with ibv_open_qp) and what the
 * other queue objects need of them.
 *
 * A domain is a 64-bit number the device's XRC SRQs and target QPs carry
 * (hw_xrc.h); a request through a target QP takes receives only from an
 * XRC SRQ of the same number. fd -1 makes a private domain: a number of
 * this process's own (its pid and start time, hw_ids_self_word, and a
 * counter, hashed). A file names a domain by (st_dev, st_ino): every
 * process of the user that opens the same file on the same function gets
 * the same number, so XRC SRQs and receive QPs of several processes meet
 * in it. The number also mixes in the effective uid: the objects it
 * reaches are in the user's own device tables anyway (hw_ids), and who may
 * open the file is the file's permissions' business, as with the kernel.
 *
 * Whether a file's domain is open anywhere (O_CREAT / O_EXCL need it) is
 * answered by a per-domain file in /dev/shm (base_private: mode 0600, the
 * user's): each process holding the domain holds a read lock on its byte
 * 0 (an open file description lock, which the kernel drops however the
 * process ends), and an opener tests for one while holding byte 1, which
 * serialises openers. The last holder to close removes the file.
 * As the kernel: no domain open and no O_CREAT is EAGAIN, a domain open
 * and O_EXCL is EINVAL, a descriptor that is no file EBADF.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_private.h"
#include "hw_ids.h"
#include "vb_int.h"

/* A domain as this process holds it: shared by the handles of every context that opened it. */
struct vb_xdom {
	uint64_t id;
	uint32_t refs;	/* handles open on it */
	int lock_fd;	/* a file's domain: the per-domain file whose byte 0 we hold read-locked; else -1 */
	char name[64];
	struct vb_xdom *next;
};

struct vb_xrcd {
	struct ibv_xrcd xrcd;	/* first, as rdma-core's verbs_xrcd */
	uint32_t comp_mask;
	uint32_t handle;
	struct vb_context *ctx;
	struct vb_xdom *dom;
	_Atomic uint32_t users; /* XRC SRQs and receive QPs made through this handle */
};

static pthread_mutex_t xdom_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vb_xdom *xdoms;
static uint64_t xdom_private_seq;
/* This process's XRC receive QPs, for ibv_open_qp (under xdom_lock). */
static struct vb_qp **xrecv;
static uint32_t nxrecv;

static uint64_t vb_mix64(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static struct vb_xdom *vb_xdom_find(uint64_t id)
{
	for (struct vb_xdom *d = xdoms; d != NULL; d = d->next)
		if (d->id == id)
			return d;
	return NULL;
}

static int vb_ofd_lock(int fd, short type, off_t at, int cmd)
{
	struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};

	return fcntl(fd, cmd, &l);
}

/* Whether a process other than this description holds byte 0 (the domain is open there). */
static bool vb_xdom_held_elsewhere(int fd)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};

	return fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

/* The per-domain file, opened with byte 1 held: the one its name still names (a last closer may remove it meanwhile). */
static int vb_xdom_file_lock(const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	for (int tries = 0; tries < 64; tries++) {
		struct stat a, b;
		int fd;

		if (base_priv_shm_open(name, 64, "XRC domain", &fd) != BASE_PRIV_OK) {
			errno = EACCES;
			return -1;
		}
		if (vb_ofd_lock(fd, F_WRLCK, 1, F_OFD_SETLKW) == 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			return fd;
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

/* A file's domain joined or made in this process: 0 or the kernel's errno for the flags. */
static int vb_xdom_file_open(struct vb_xdom *d, int oflags)
{
	int fd = vb_xdom_file_lock(d->name);
	bool there;

	if (fd < 0)
		return errno;
	there = vb_xdom_held_elsewhere(fd);
	if (!there && !(oflags & O_CREAT)) {
		(void)shm_unlink(d->name); /* nobody holds it, and openers wait for byte 1: the file goes as it came */
		close(fd);
		return EAGAIN;
	}
	if (there && (oflags & O_EXCL)) {
		close(fd);
		return EINVAL;
	}
	if (vb_ofd_lock(fd, F_RDLCK, 0, F_OFD_SETLK) != 0) {
		close(fd);
		return EAGAIN;
	}
	(void)vb_ofd_lock(fd, F_UNLCK, 1, F_OFD_SETLK);
	d->lock_fd = fd;
	return 0;
}

/* The last handle of this process closed: byte 0 let go; the file goes when nobody else holds it. */
static void vb_xdom_file_close(struct vb_xdom *d)
{
	if (vb_ofd_lock(d->lock_fd, F_WRLCK, 1, F_OFD_SETLKW) == 0) {
		(void)vb_ofd_lock(d->lock_fd, F_UNLCK, 0, F_OFD_SETLK);
		if (vb_ofd_lock(d->lock_fd, F_WRLCK, 0, F_OFD_SETLK) == 0)
			(void)shm_unlink(d->name);
	}
	close(d->lock_fd); /* every lock of the description goes with it */
}

/* The domain number of a file (and this user and function), never 0 and never a private one's. */
static uint64_t vb_xdom_file_id(const struct vb_context *ctx, const struct stat *st)
{
	uint64_t h = vb_mix64(vb_mix64(vb_mix64(0x58524344ull, (uint64_t)st->st_dev), (uint64_t)st->st_ino),
			      (uint64_t)geteuid() << 32 | ctx->dev->func_id);

	h &= ~(1ull << 63);
	return h != 0 ? h : 1;
}

static int vb_xdom_get(struct vb_context *ctx, const struct ibv_xrcd_init_attr *a, struct vb_xdom **out)
{
	struct vb_xdom *d;
	struct stat st;
	uint64_t id;
	int rc;

	if (a->fd == -1) {
		id = (1ull << 63) | vb_mix64(hw_ids_self_word(), ++xdom_private_seq);
	} else {
		if (fstat(a->fd, &st) != 0)
			return EBADF;
		id = vb_xdom_file_id(ctx, &st);
		d = vb_xdom_find(id);
		if (d != NULL) {
			if (a->oflags & O_EXCL)
				return EINVAL; /* open here already, as the kernel's tree would find it */
			d->refs++;
			*out = d;
			return 0;
		}
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return ENOMEM;
	d->id = id;
	d->refs = 1;
	d->lock_fd = -1;
	if (a->fd != -1) {
		snprintf(d->name, sizeof(d->name), "/softdpu-%u-xrcd-%016llx", (unsigned int)geteuid(),
			 (unsigned long long)id);
		rc = vb_xdom_file_open(d, a->oflags);
		if (rc != 0) {
			free(d);
			return rc;
		}
	}
	d->next = xdoms;
	xdoms = d;
	*out = d;
	return 0;
}

static void vb_xdom_put(struct vb_xdom *d)
{
	if (--d->refs != 0)
		return;
	for (struct vb_xdom **p = &xdoms; *p != NULL; p = &(*p)->next) {
		if (*p == d) {
			*p = d->next;
			break;
		}
	}
	if (d->lock_fd >= 0)
		vb_xdom_file_close(d);
	free(d);
}

struct ibv_xrcd *vb_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *a)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct vb_xrcd *x;
	int rc;

	if (ctx == NULL || a == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* libibverbs' ibv_cmd_open_xrcd: unknown bits EOPNOTSUPP, both the fd and the flags required. */
	if (a->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(a->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(a->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&xdom_lock);
	rc = vb_xdom_get(ctx, a, &x->dom);
	pthread_mutex_unlock(&xdom_lock);
	if (rc != 0) {
		free(x);
		errno = rc;
		return NULL;
	}
	x->ctx = ctx;
	x->xrcd.context = c;
	x->handle = (uint32_t)x->dom->id;
	return &x->xrcd;
}

int vb_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct vb_xrcd *x = (struct vb_xrcd *)xrcd;

	if (xrcd == NULL)
		return EINVAL;
	if (atomic_load(&x->users) != 0)
		return EBUSY; /* SRQs or receive QPs made through it still exist */
	pthread_mutex_lock(&xdom_lock);
	vb_xdom_put(x->dom);
	pthread_mutex_unlock(&xdom_lock);
	free(x);
	return 0;
}

int vb_xrcd_checked(struct vb_context *ctx, struct ibv_xrcd *xrcd, struct vb_xrcd **out)
{
	struct vb_xrcd *x = (struct vb_xrcd *)xrcd;

	if (xrcd == NULL || xrcd->context != &ctx->vctx.context)
		return EINVAL;
	*out = x;
	return 0;
}

uint64_t vb_xrcd_id(const struct vb_xrcd *x)
{
	return x->dom->id;
}

void vb_xrcd_use(struct vb_xrcd *x, int delta)
{
	atomic_fetch_add(&x->users, (uint32_t)delta);
}

/* ---- XRC SRQs on their CQ ---- */

void vb_xrc_srq_attach(struct vb_srq *srq)
{
	struct vb_cq *cq = srq->xcq;

	atomic_fetch_add(&cq->users, 1);
	pthread_spin_lock(&cq->lock);
	srq->x_next = cq->xsrqs;
	cq->xsrqs = srq;
	pthread_spin_unlock(&cq->lock);
	vb_xrcd_use(srq->xrcd, 1);
}

void vb_xrc_srq_detach(struct vb_srq *srq)
{
	struct vb_cq *cq = srq->xcq;

	pthread_spin_lock(&cq->lock);
	for (struct vb_srq **p = &cq->xsrqs; *p != NULL; p = &(*p)->x_next) {
		if (*p == srq) {
			*p = srq->x_next;
			break;
		}
	}
	pthread_spin_unlock(&cq->lock);
	atomic_fetch_sub(&cq->users, 1);
	vb_xrcd_use(srq->xrcd, -1);
}

struct vb_srq *vb_xrc_cq_srq(struct vb_cq *cq, uint32_t srqn)
{
	for (struct vb_srq *s = cq->xsrqs; s != NULL; s = s->x_next)
		if (s->srqn == srqn)
			return s;
	return NULL;
}

/* ---- XRC receive QPs ---- */

static bool vb_xrecv_add(struct vb_qp *qp)
{
	struct vb_qp **n;

	pthread_mutex_lock(&xdom_lock);
	n = realloc(xrecv, (nxrecv + 1) * sizeof(*n));
	if (n != NULL) {
		xrecv = n;
		xrecv[nxrecv++] = qp;
	}
	pthread_mutex_unlock(&xdom_lock);
	return n != NULL;
}

static void vb_xrecv_del(struct vb_qp *qp)
{
	pthread_mutex_lock(&xdom_lock);
	for (uint32_t i = 0; i < nxrecv; i++) {
		if (xrecv[i] == qp) {
			xrecv[i] = xrecv[--nxrecv];
			break;
		}
	}
	pthread_mutex_unlock(&xdom_lock);
}

static void vb_xrc_qp_fill(struct vb_qp *qp, struct vb_context *ctx, struct vb_xrcd *x, uint32_t qpn,
			   void *qp_context)
{
	struct ibv_qp *q = &qp->qpx.qp_base;

	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	qp->ctx = ctx;
	qp->xrcd = x;
	q->context = &ctx->vctx.context;
	q->qp_context = qp_context;
	q->qp_num = qpn;
	q->handle = qpn;
	q->state = IBV_QPS_RESET;
	q->qp_type = IBV_QPT_XRC_RECV;
	qp->init.qp_context = qp_context;
	qp->init.qp_type = IBV_QPT_XRC_RECV;
	qp->attr.port_num = VB_PORT;
	vb_qp_wr_fill(qp);
}

/* An XRC receive QP: a target of the domain with no queues of its own (hw_xrc.h). */
struct ibv_qp *vb_xrc_create_recv_qp(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct hw_qp_attr ha = {.type = HW_QPT_XRC_TGT, .lid = ctx->dev->lid, .roce = ctx->dev->roce, .shared = true,
				.log_rq_stride = HW_QP_LOG_RQ_STRIDE_MIN};
	struct hw_gid_entry g0;
	struct vb_xrcd *x;
	struct vb_qp *qp;
	enum hw_status st;
	uint32_t qpn = 0;
	int rc;

	if (!(a->comp_mask & IBV_QP_INIT_ATTR_XRCD) || vb_xrcd_checked(ctx, a->xrcd, &x) != 0) {
		errno = EINVAL;
		return NULL;
	}
	rc = ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		goto err;
	st = hw_id_alloc(HW_ID_QPN, &qpn);
	if (st != HW_OK) {
		rc = vb_id_errno(st);
		goto err_free;
	}
	ha.qpn = qpn;
	ha.xrcd = vb_xrcd_id(x);
	if (hw_gid_get(&ctx->dev->fn, 0, &g0))
		memcpy(ha.gid, g0.gid, sizeof(ha.gid));
	if (hw_qp_create(&ha, &qp->hw) != HW_OK)
		goto err_id;
	qp->dbrec = hw_qp_dbrec(qp->hw);
	qp->sq_wqe_cnt = 1;
	if (!vb_xrecv_add(qp))
		goto err_hw;
	vb_xrc_qp_fill(qp, ctx, x, qpn, a->qp_context);
	vb_xrcd_use(x, 1);
	memset(&a->cap, 0, sizeof(a->cap));
	return &qp->qpx.qp_base;

err_hw:
	hw_qp_destroy(qp->hw);
err_id:
	(void)hw_id_free(HW_ID_QPN, qpn);
err_free:
	free(qp);
err:
	errno = rc;
	return NULL;
}

/* A handle on an XRC receive QP of this process, or on one of another process (a view of it). */
static struct vb_qp *vb_xrc_find_recv(uint32_t qpn, uint64_t id)
{
	struct vb_qp *found = NULL;

	pthread_mutex_lock(&xdom_lock);
	for (uint32_t i = 0; i < nxrecv; i++) {
		if (xrecv[i]->qpx.qp_base.qp_num == qpn && vb_xrcd_id(xrecv[i]->xrcd) == id) {
			found = xrecv[i];
			atomic_fetch_add(&found->opens, 1);
			break;
		}
	}
	pthread_mutex_unlock(&xdom_lock);
	return found;
}

struct ibv_qp *vb_open_qp(struct ibv_context *c, struct ibv_qp_open_attr *a)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct vb_qp *qp, *real;
	struct hw_qp *view = NULL;
	struct vb_xrcd *x;

	if (ctx == NULL || a == NULL || (a->comp_mask & need) != need || a->qp_type != IBV_QPT_XRC_RECV ||
	    vb_xrcd_checked(ctx, a->xrcd, &x) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (a->comp_mask & ~(uint32_t)(need | IBV_QP_OPEN_ATTR_CONTEXT)) {
		errno = EINVAL;
		return NULL;
	}
	real = vb_xrc_find_recv(a->qp_num, vb_xrcd_id(x));
	if (real == NULL) {
		/* Another process's: a view of its block, which must be a target of this very domain. */
		if (hw_qp_attach_num(a->qp_num, &view) != HW_OK || view->type != HW_QPT_XRC_TGT ||
		    __atomic_load_n(&view->sh->xrcd, __ATOMIC_ACQUIRE) != vb_xrcd_id(x)) {
			hw_qp_detach(view);
			errno = EINVAL; /* the kernel's answer for a number that is no target QP of the domain */
			return NULL;
		}
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		if (real != NULL)
			atomic_fetch_sub(&real->opens, 1);
		hw_qp_detach(view);
		errno = ENOMEM;
		return NULL;
	}
	vb_xrc_qp_fill(qp, ctx, x, a->qp_num & 0xffffffu,
		       (a->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ? a->qp_context : NULL);
	qp->open_of = real;
	qp->hw = real != NULL ? real->hw : view;
	qp->dbrec = hw_qp_dbrec(qp->hw);
	qp->sq_wqe_cnt = 1;
	if (real != NULL)
		qp->qpx.qp_base.state = real->qpx.qp_base.state;
	vb_xrcd_use(x, 1);
	return &qp->qpx.qp_base;
}

/* ibv_destroy_qp of an XRC receive QP or of a handle ibv_open_qp gave: 0 or EBUSY. */
int vb_xrc_destroy_qp(struct vb_qp *qp)
{
	if (qp->open_of == NULL && qp->hw != NULL && qp->hw->view == NULL) {
		if (atomic_load(&qp->opens) != 0)
			return EBUSY; /* handles opened on it still name it */
		vb_xrecv_del(qp);
		hw_qp_destroy(qp->hw);
		(void)hw_id_free(HW_ID_QPN, qp->qpx.qp_base.qp_num);
	} else if (qp->open_of != NULL) {
		atomic_fetch_sub(&qp->open_of->opens, 1);
	} else {
		hw_qp_detach(qp->hw);
	}
	vb_xrcd_use(qp->xrcd, -1);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&qp->qpx.qp_base.mutex);
	pthread_cond_destroy(&qp->qpx.qp_base.cond);
	free(qp);
	return 0;
}
