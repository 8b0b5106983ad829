/*
 * fx_window — FlexIO windows (device code reaching host memory through an
 * MKey), outboxes (the doorbells of device code) and device MKeys (MKeys
 * over DPA memory).
 *
 * A window is a protection domain device code works in: it reaches host
 * memory only through keys of that domain, with the key's bounds and rights.
 * An outbox is only a name here (its doorbells go through the host ops by
 * id). A device MKey is an entry of the device's key table over a buffer of
 * the process heap, so verbs QPs of the same domain reach DPA memory with it.
 */
#include <stdlib.h>

#include "fx_int.h"
#include "hw_mem.h"

struct flexio_window {
	struct flexio_window *next;
	struct flexio_process *proc;
	struct hw_pd *hw_pd; /* a reference: the domain (and its number) stays while the window does */
	uint32_t pd_id;
	uint32_t id;
};

struct flexio_outbox {
	struct flexio_outbox *next;
	struct flexio_process *proc;
	struct ibv_context *ctx; /* whose queues its doorbells ring */
	struct flexio_uar *uar;
	uint32_t id;
};

struct flexio_mkey {
	struct flexio_mkey *next;
	struct flexio_process *proc;
	struct hw_pd *hw_pd; /* a reference, dropped when the key is deregistered */
	uint32_t key;
};

/* The hw domain behind pd, with a reference; NULL (logged) for a PD not of p's device. */
static struct hw_pd *fx_pd_get(struct flexio_process *p, struct ibv_pd *pd)
{
	struct hw_pd *hp;

	if (pd == NULL) {
		BASE_ERR("invalid argument: no protection domain");
		return NULL;
	}
	if (pd->context != p->ibv_ctx) {
		BASE_ERR("the protection domain is not of the process's device context");
		return NULL;
	}
	hp = hw_pd_get(pd->handle);
	if (hp == NULL)
		BASE_ERR("protection domain %u is not live", pd->handle);
	return hp;
}

static uint32_t fx_next_id_locked(struct flexio_process *p)
{
	return ++p->next_obj_id;
}

/* ---- windows ---- */

flexio_status flexio_window_create(struct flexio_process *process, struct ibv_pd *pd, struct flexio_window **window)
{
	struct flexio_window *w;

	if (window != NULL)
		*window = NULL;
	if (process == NULL || window == NULL) {
		BASE_ERR("invalid argument (process, window pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return FLEXIO_STATUS_FAILED;
	w->hw_pd = fx_pd_get(process, pd);
	if (w->hw_pd == NULL) {
		free(w);
		return FLEXIO_STATUS_FAILED;
	}
	w->proc = process;
	w->pd_id = hw_pd_id(w->hw_pd);
	pthread_mutex_lock(&process->lock);
	w->id = fx_next_id_locked(process);
	w->next = process->windows;
	process->windows = w;
	pthread_mutex_unlock(&process->lock);
	*window = w;
	return FLEXIO_STATUS_SUCCESS;
}

/* Under p->lock: takes w out of p's windows; whether it was there. */
static bool fx_window_unlink_locked(struct flexio_process *p, struct flexio_window *w)
{
	for (struct flexio_window **pp = &p->windows; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			return true;
		}
	}
	return false;
}

flexio_status flexio_window_destroy(struct flexio_window *window)
{
	struct flexio_process *p;
	bool found;

	if (window == NULL) {
		BASE_ERR("invalid argument: no window");
		return FLEXIO_STATUS_FAILED;
	}
	p = window->proc;
	pthread_mutex_lock(&p->lock);
	found = fx_window_unlink_locked(p, window);
	pthread_mutex_unlock(&p->lock);
	if (!found) {
		BASE_ERR("window %u is not one of its process's", window->id);
		return FLEXIO_STATUS_FAILED;
	}
	hw_pd_free(window->hw_pd);
	free(window);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_window_get_id(struct flexio_window *window)
{
	return window != NULL ? window->id : 0;
}

/* ---- outboxes ---- */

flexio_status flexio_outbox_create(struct flexio_process *process, struct ibv_context *other_ctx,
				   struct flexio_uar *uar, struct flexio_outbox **outbox)
{
	struct flexio_outbox *o;

	if (outbox != NULL)
		*outbox = NULL;
	if (process == NULL || uar == NULL || outbox == NULL) {
		BASE_ERR("invalid argument (process, UAR, outbox pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return FLEXIO_STATUS_FAILED;
	o->proc = process;
	o->ctx = other_ctx != NULL ? other_ctx : process->ibv_ctx;
	o->uar = uar;
	pthread_mutex_lock(&process->lock);
	o->id = fx_next_id_locked(process);
	o->next = process->outboxes;
	process->outboxes = o;
	pthread_mutex_unlock(&process->lock);
	*outbox = o;
	return FLEXIO_STATUS_SUCCESS;
}

static bool fx_outbox_unlink_locked(struct flexio_process *p, struct flexio_outbox *o)
{
	for (struct flexio_outbox **pp = &p->outboxes; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			return true;
		}
	}
	return false;
}

flexio_status flexio_outbox_destroy(struct flexio_outbox *outbox)
{
	struct flexio_process *p;
	bool found;

	if (outbox == NULL) {
		BASE_ERR("invalid argument: no outbox");
		return FLEXIO_STATUS_FAILED;
	}
	p = outbox->proc;
	pthread_mutex_lock(&p->lock);
	found = fx_outbox_unlink_locked(p, outbox);
	pthread_mutex_unlock(&p->lock);
	if (!found) {
		BASE_ERR("outbox %u is not one of its process's", outbox->id);
		return FLEXIO_STATUS_FAILED;
	}
	free(outbox);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_outbox_get_id(struct flexio_outbox *outbox)
{
	return outbox != NULL ? outbox->id : 0;
}

/* ---- device MKeys ---- */

#define FX_MKEY_ACCESS_KNOWN                                                                                   \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* The hw rights of IBV_ACCESS_* flags as ibv_reg_mr takes them; -1 (logged) when verbs would refuse them. */
static int fx_access_to_hw(int access, uint32_t *hw)
{
	unsigned int a = (unsigned int)access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE; /* hints */

	if (a & ~(unsigned int)FX_MKEY_ACCESS_KNOWN) {
		BASE_ERR("access %#x: only local write and remote read, write and atomic apply to a device MKey",
			 (unsigned int)access);
		return -1;
	}
	if ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(a & IBV_ACCESS_LOCAL_WRITE)) {
		BASE_ERR("access %#x: remote write and atomic need local write", (unsigned int)access);
		return -1;
	}
	*hw = 0;
	if (a & IBV_ACCESS_LOCAL_WRITE)
		*hw |= HW_ACCESS_LOCAL_WRITE;
	if (a & IBV_ACCESS_REMOTE_READ)
		*hw |= HW_ACCESS_REMOTE_READ;
	if (a & IBV_ACCESS_REMOTE_WRITE)
		*hw |= HW_ACCESS_REMOTE_WRITE;
	if (a & IBV_ACCESS_REMOTE_ATOMIC)
		*hw |= HW_ACCESS_REMOTE_ATOMIC;
	return 0;
}

/* Whether [daddr, daddr+len) lies in one buffer of p's heap (logged when not). */
static bool fx_mkey_range(struct flexio_process *p, flexio_uintptr_t daddr, size_t len)
{
	bool ok;

	if (len == 0) {
		BASE_ERR("invalid argument: a device MKey of 0 bytes");
		return false;
	}
	pthread_mutex_lock(&p->lock);
	ok = fx_heap_owns(&p->heap, daddr, len);
	pthread_mutex_unlock(&p->lock);
	if (!ok)
		BASE_ERR("[%#llx, +%zu) is not inside a device buffer of this process", (unsigned long long)daddr,
			 len);
	return ok;
}

flexio_status flexio_device_mkey_create(struct flexio_process *process, struct flexio_mkey_attr *fattr,
					struct flexio_mkey **mkey)
{
	struct flexio_mkey *m;
	uint32_t hw_access;
	enum hw_status st;

	if (mkey != NULL)
		*mkey = NULL;
	if (process == NULL || fattr == NULL || mkey == NULL) {
		BASE_ERR("invalid argument (process, MKey attributes, MKey pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	if (fx_access_to_hw(fattr->access, &hw_access) != 0 || !fx_mkey_range(process, fattr->daddr, fattr->len))
		return FLEXIO_STATUS_FAILED;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return FLEXIO_STATUS_FAILED;
	m->hw_pd = fx_pd_get(process, fattr->pd);
	if (m->hw_pd == NULL)
		goto err_free;
	/* DPA memory is this program's memory: the key's address is the device address, as is. */
	st = hw_mkey_reg(m->hw_pd, (void *)(uintptr_t)fattr->daddr, fattr->daddr, fattr->len, hw_access, &m->key);
	if (st != HW_OK) {
		BASE_ERR("device MKey over [%#llx, +%zu): %s", (unsigned long long)fattr->daddr, fattr->len,
			 hw_status_str(st));
		goto err_pd;
	}
	m->proc = process;
	pthread_mutex_lock(&process->lock);
	m->next = process->mkeys;
	process->mkeys = m;
	pthread_mutex_unlock(&process->lock);
	*mkey = m;
	return FLEXIO_STATUS_SUCCESS;

err_pd:
	hw_pd_free(m->hw_pd);
err_free:
	free(m);
	return FLEXIO_STATUS_FAILED;
}

/* Deregisters m's key and frees it (m unlinked already). */
static void fx_mkey_free(struct flexio_mkey *m)
{
	enum hw_status st = hw_mkey_dereg(m->key);

	if (st != HW_OK)
		BASE_ERR("device MKey %#x: %s", m->key, hw_status_str(st));
	hw_pd_free(m->hw_pd);
	free(m);
}

static bool fx_mkey_unlink_locked(struct flexio_process *p, struct flexio_mkey *m)
{
	for (struct flexio_mkey **pp = &p->mkeys; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			return true;
		}
	}
	return false;
}

flexio_status flexio_device_mkey_destroy(struct flexio_mkey *mkey)
{
	struct flexio_process *p;
	bool found;

	if (mkey == NULL)
		return FLEXIO_STATUS_SUCCESS; /* the SDK: NULL is a valid value */
	p = mkey->proc;
	pthread_mutex_lock(&p->lock);
	found = fx_mkey_unlink_locked(p, mkey);
	pthread_mutex_unlock(&p->lock);
	if (!found) {
		BASE_ERR("device MKey %#x is not one of its process's", mkey->key);
		return FLEXIO_STATUS_FAILED;
	}
	fx_mkey_free(mkey);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_mkey_get_id(struct flexio_mkey *mkey)
{
	return mkey != NULL ? mkey->key : 0;
}

/* ---- what device code asks through the ops ---- */

void *fx_window_ptr(void *proc, uint32_t window_id, uint32_t mkey, uint64_t haddr, uint64_t len, int write)
{
	struct flexio_process *p = proc;
	const struct hw_mkey *mk;
	struct flexio_window *w;
	uint8_t *ptr = NULL;
	uint32_t pd_id = 0;
	enum hw_status st;

	if (p == NULL || len == 0)
		return NULL;
	pthread_mutex_lock(&p->lock);
	for (w = p->windows; w != NULL && w->id != window_id; w = w->next)
		;
	if (w != NULL)
		pd_id = w->pd_id;
	pthread_mutex_unlock(&p->lock);
	if (pd_id == 0) { /* no such window (0 would let a key of any domain through) */
		BASE_DBG("window %u: not a window of app %s", window_id, p->app->name);
		return NULL;
	}
	mk = hw_mkey_lookup(mkey);
	st = mk != NULL ? hw_mkey_check(mk, pd_id, haddr, len, write ? HW_ACCESS_LOCAL_WRITE : HW_ACCESS_LOCAL_READ,
					&ptr)
			: HW_ERR_KEY;
	if (st != HW_OK || ptr == NULL) {
		BASE_DBG("window %u, key %#x, [%#llx, +%llu) %s: %s", window_id, mkey, (unsigned long long)haddr,
			 (unsigned long long)len, write ? "write" : "read",
			 st != HW_OK ? hw_status_str(st) : "no local address");
		return NULL;
	}
	return ptr;
}

int fx_outbox_check(void *proc, uint32_t outbox_id)
{
	struct flexio_process *p = proc;
	struct flexio_outbox *o;

	if (p == NULL)
		return -1;
	pthread_mutex_lock(&p->lock);
	for (o = p->outboxes; o != NULL && o->id != outbox_id; o = o->next)
		;
	pthread_mutex_unlock(&p->lock);
	return o != NULL ? 0 : -1;
}

void fx_window_fini(struct flexio_process *p)
{
	struct flexio_window *w, *wn;
	struct flexio_outbox *o, *on;
	struct flexio_mkey *m, *mn;

	pthread_mutex_lock(&p->lock);
	w = p->windows;
	o = p->outboxes;
	m = p->mkeys;
	p->windows = NULL;
	p->outboxes = NULL;
	p->mkeys = NULL;
	pthread_mutex_unlock(&p->lock);
	for (; w != NULL; w = wn) {
		wn = w->next;
		hw_pd_free(w->hw_pd);
		free(w);
	}
	for (; o != NULL; o = on) {
		on = o->next;
		free(o);
	}
	/* Before the process's own PD goes: a domain with keys on it is not freed. */
	for (; m != NULL; m = mn) {
		mn = m->next;
		fx_mkey_free(m);
	}
}
