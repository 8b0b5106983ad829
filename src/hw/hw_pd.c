/*
 * hw_pd — protection domains: numbers, references, and the hook through
 * which the verbs library gives a domain an ibv_pd.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "hw_ids.h"
#include "hw_mem.h"

struct hw_pd {
	struct hw_pd *next; /* in the process's list of live domains */
	uint32_t id;
	uint32_t function_id;
	uint32_t refs;	  /* under pds.lock */
	bool device_wide; /* id from the device's table */
	const void *owner; /* who made it (a verbs context), or NULL */
};

static struct {
	pthread_mutex_t lock;
	struct hw_pd *head;
	uint32_t next_local;
	const struct hw_pd_wrap_ops *_Atomic wrap;
} pds = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_local = HW_LOCAL_BASE };

static struct hw_pd *pd_alloc(uint32_t function_id, bool device_wide)
{
	struct hw_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return NULL;
	if (device_wide && hw_ids_device() != NULL) {
		if (hw_id_alloc(HW_ID_PD, &pd->id) != HW_OK) {
			free(pd);
			return NULL;
		}
		pd->device_wide = true;
	}
	pd->function_id = function_id;
	pd->refs = 1;
	pthread_mutex_lock(&pds.lock);
	if (!pd->device_wide)
		pd->id = pds.next_local++;
	pd->next = pds.head;
	pds.head = pd;
	pthread_mutex_unlock(&pds.lock);
	return pd;
}

struct hw_pd *hw_pd_alloc(uint32_t function_id)
{
	return pd_alloc(function_id, true);
}

struct hw_pd *hw_pd_alloc_private(uint32_t function_id)
{
	return pd_alloc(function_id, false);
}

static void unlink_locked(struct hw_pd *pd)
{
	for (struct hw_pd **pp = &pds.head; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == pd) {
			*pp = pd->next;
			return;
		}
	}
}

void hw_pd_set_owner(struct hw_pd *pd, const void *owner)
{
	pd->owner = owner;
}

const void *hw_pd_owner(const struct hw_pd *pd)
{
	return pd->owner;
}

void hw_pd_free(struct hw_pd *pd)
{
	if (pd == NULL)
		return;
	pthread_mutex_lock(&pds.lock);
	if (--pd->refs > 0) {
		pthread_mutex_unlock(&pds.lock);
		return;
	}
	unlink_locked(pd);
	pthread_mutex_unlock(&pds.lock);
	if (pd->device_wide)
		hw_id_free(HW_ID_PD, pd->id);
	free(pd);
}

struct hw_pd *hw_pd_get(uint32_t pd_id)
{
	struct hw_pd *pd;

	pthread_mutex_lock(&pds.lock);
	for (pd = pds.head; pd != NULL && pd->id != pd_id; pd = pd->next)
		;
	if (pd != NULL)
		pd->refs++;
	pthread_mutex_unlock(&pds.lock);
	return pd;
}

bool hw_pd_shared(const struct hw_pd *pd)
{
	bool shared;

	pthread_mutex_lock(&pds.lock);
	shared = pd->refs > 1;
	pthread_mutex_unlock(&pds.lock);
	return shared;
}

uint32_t hw_pd_id(const struct hw_pd *pd)
{
	return pd->id;
}

uint32_t hw_pd_function(const struct hw_pd *pd)
{
	return pd->function_id;
}

bool hw_pd_device_wide(const struct hw_pd *pd)
{
	return pd->device_wide;
}

void hw_pd_set_wrap_ops(const struct hw_pd_wrap_ops *ops)
{
	pds.wrap = ops;
}

void *hw_pd_wrap(struct hw_pd *pd)
{
	const struct hw_pd_wrap_ops *ops = pds.wrap;

	if (ops == NULL) {
		errno = ENOSYS;
		return NULL;
	}
	return pd != NULL ? ops->wrap(pd) : NULL;
}

int hw_pd_unwrap(void *wrapper)
{
	const struct hw_pd_wrap_ops *ops = pds.wrap;

	return ops != NULL && wrapper != NULL ? ops->unwrap(wrapper) : 0;
}
