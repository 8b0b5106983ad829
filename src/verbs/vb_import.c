/*
 * vb_import — importing a context, and a domain and registration by handle
 * (ibv_import_device, ibv_import_pd, ibv_import_mr and their unimports).
 *
 * The kernel shares a context's objects between every holder of its
 * command file. Here a context's cmd_fd is a memory file of its own, so a
 * descriptor for it (a dup, or one inherited across fork) names the
 * context by the file's inode; an import makes another context over the
 * same device, and domains and keys are device-wide numbers already, so the
 * handles (a domain's number, a key) name the same objects through it.
 * Contexts of other processes cannot be imported (their file's inode is not
 * among this process's contexts): EOPNOTSUPP, logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "base_private.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_CMD_MEMFD "softdpu-context"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vb_context *live; /* every open context, by vb_context.next_live */

int vb_cmd_fd_open(struct vb_context *ctx)
{
	struct stat st;
	int fd = base_priv_memfd(VB_CMD_MEMFD, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	ctx->vctx.context.cmd_fd = fd;
	ctx->cmd_ino = (uint64_t)st.st_ino;
	return 0;
}

void vb_ctx_live_add(struct vb_context *ctx)
{
	pthread_mutex_lock(&live_lock);
	ctx->next_live = live;
	live = ctx;
	pthread_mutex_unlock(&live_lock);
}

void vb_ctx_live_del(struct vb_context *ctx)
{
	pthread_mutex_lock(&live_lock);
	for (struct vb_context **pp = &live; *pp != NULL; pp = &(*pp)->next_live)
		if (*pp == ctx) {
			*pp = ctx->next_live;
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

/*
 * Whether ctx is still open; if so, it stays open (its close waits) until
 * vb_ctx_live_release. For a destroy that may come after its context's
 * close, which freed the context.
 */
bool vb_ctx_live_hold(const struct vb_context *ctx)
{
	pthread_mutex_lock(&live_lock);
	for (struct vb_context *c = live; c != NULL; c = c->next_live)
		if (c == ctx)
			return true;
	pthread_mutex_unlock(&live_lock);
	return false;
}

void vb_ctx_live_release(void)
{
	pthread_mutex_unlock(&live_lock);
}

/* The device of the live context whose command file has inode ino, or NULL. */
static struct ibv_device *live_device(uint64_t ino)
{
	struct ibv_device *dev = NULL;

	pthread_mutex_lock(&live_lock);
	for (struct vb_context *c = live; c != NULL && dev == NULL; c = c->next_live)
		if (c->cmd_ino == ino)
			dev = c->vctx.context.device;
	pthread_mutex_unlock(&live_lock);
	return dev;
}

/* Whether fd is a context's command file (of any process): the memory file's name says so. */
static bool is_cmd_file(int fd)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strstr(target, "memfd:" VB_CMD_MEMFD) != NULL;
}

VB_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_device *dev;
	struct ibv_context *c;
	struct stat st;

	if (cmd_fd < 0 || fstat(cmd_fd, &st) != 0) {
		errno = EBADF;
		return NULL;
	}
	dev = live_device((uint64_t)st.st_ino);
	if (dev == NULL) {
		if (is_cmd_file(cmd_fd)) {
			BASE_WARN("ibv_import_device: a context of another process cannot be imported");
			errno = EOPNOTSUPP;
		} else {
			errno = EINVAL; /* not a context's command file */
		}
		return NULL;
	}
	c = ibv_open_device(dev);
	if (c == NULL)
		return NULL;
	/* The imported context holds the descriptor it was given, as rdma-core's does (closed with it). */
	close(c->cmd_fd);
	c->cmd_fd = cmd_fd;
	vb_ctx(c)->cmd_ino = (uint64_t)st.st_ino;
	return c;
}

VB_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct hw_pd *hw;
	struct vb_pd *pd;

	if (ctx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	hw = hw_pd_get(pd_handle);
	if (hw == NULL || hw_pd_function(hw) != ctx->dev->func_id) {
		if (hw != NULL)
			hw_pd_free(hw);
		errno = EINVAL; /* no such domain on this device */
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		hw_pd_free(hw);
		errno = ENOMEM;
		return NULL;
	}
	pd->hw = hw;
	pd->imported = true;
	pd->pd.context = context;
	pd->pd.handle = pd_handle;
	return &pd->pd;
}

int vb_pd_unimport(struct vb_pd *pd)
{
	/* Objects made on this handle point at it: it stays while they live. */
	if (atomic_load(&pd->users) != 0)
		return EBUSY;
	hw_pd_free(pd->hw);
	free(pd);
	return 0;
}

VB_EXPORT void ibv_unimport_pd(struct ibv_pd *ibpd)
{
	struct vb_pd *pd = ibpd != NULL ? vb_pd_of(ibpd) : NULL;

	if (pd == NULL || !pd->imported) {
		BASE_WARN("ibv_unimport_pd: not an imported domain");
		return;
	}
	if (vb_pd_unimport(pd) != 0)
		BASE_WARN("ibv_unimport_pd: registrations or queues made on the imported domain still use it: kept");
}

VB_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct vb_pd *pd = ibpd != NULL ? vb_pd_of(ibpd) : NULL;
	const struct hw_mkey *mk;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	mk = hw_mkey_lookup(mr_handle);
	/* A registration of this process on that domain (the kernel's handles are its file's objects). */
	if (mk == NULL || mk->seqp != NULL || mk->pd_id != hw_pd_id(pd->hw)) {
		errno = EINVAL;
		return NULL;
	}
	return vb_mr_import(ibpd, mr_handle, mk->len);
}
