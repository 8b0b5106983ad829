/*
 * hw_pp — the packet-pacing rate table (hw_pp.h): the machine-wide count
 * is the number table's; what an entry says, and how many uses it has here,
 * is this process's list.
 */
#include "hw_pp.h"

#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hw_ids.h"

struct pp_entry {
	struct pp_entry *next;
	uint8_t ctx[HW_PP_CTX_BYTES];
	uint16_t index;
	bool dedicated;
	uint32_t uses;
};

static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pp_entry *pp_list;

void hw_pp_parse(const void *ctx, uint32_t len, struct hw_pp_rate *r)
{
	uint8_t b[HW_PP_CTX_BYTES] = { 0 };
	uint32_t w[3];

	memcpy(b, ctx, len < sizeof(b) ? len : sizeof(b));
	memcpy(w, b, sizeof(w));
	r->rate_kbps = be32toh(w[0]);
	r->burst = be32toh(w[1]);
	r->typical = (uint16_t)(be32toh(w[2]) & 0xffffu);
}

void hw_pp_ctx(const struct hw_pp_rate *r, uint8_t ctx[HW_PP_CTX_BYTES])
{
	uint32_t w[3] = { htobe32(r->rate_kbps), htobe32(r->burst), htobe32(r->typical) };

	memset(ctx, 0, HW_PP_CTX_BYTES);
	memcpy(ctx, w, sizeof(w));
}

/* Lock held. */
static struct pp_entry *pp_find(uint16_t index)
{
	for (struct pp_entry *e = pp_list; e != NULL; e = e->next)
		if (e->index == index)
			return e;
	return NULL;
}

/* Lock held: a shared entry of exactly this context. */
static struct pp_entry *pp_find_ctx(const uint8_t *ctx)
{
	for (struct pp_entry *e = pp_list; e != NULL; e = e->next)
		if (!e->dedicated && memcmp(e->ctx, ctx, HW_PP_CTX_BYTES) == 0)
			return e;
	return NULL;
}

enum hw_status hw_pp_alloc(const void *ctx, uint32_t len, bool dedicated, uint16_t *index)
{
	uint8_t b[HW_PP_CTX_BYTES] = { 0 };
	struct pp_entry *e;
	enum hw_status st = HW_OK;
	uint32_t num;

	memcpy(b, ctx, len < sizeof(b) ? len : sizeof(b));
	pthread_mutex_lock(&pp_lock);
	e = dedicated ? NULL : pp_find_ctx(b);
	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e == NULL) {
			st = HW_ERR_NOMEM;
			goto out;
		}
		st = hw_id_alloc_within(HW_ID_PP, HW_PP_ENTRIES, &num);
		if (st != HW_OK) {
			free(e);
			goto out;
		}
		memcpy(e->ctx, b, sizeof(b));
		e->index = (uint16_t)num;
		e->dedicated = dedicated;
		e->next = pp_list;
		pp_list = e;
	}
	e->uses++;
	*index = e->index;
out:
	pthread_mutex_unlock(&pp_lock);
	return st;
}

enum hw_status hw_pp_free(uint16_t index)
{
	struct pp_entry **pe, *e;

	pthread_mutex_lock(&pp_lock);
	e = pp_find(index);
	if (e == NULL) {
		pthread_mutex_unlock(&pp_lock);
		return HW_ERR_INVAL;
	}
	if (--e->uses == 0) {
		for (pe = &pp_list; *pe != e; pe = &(*pe)->next)
			;
		*pe = e->next;
		(void)hw_id_free(HW_ID_PP, e->index);
		free(e);
	}
	pthread_mutex_unlock(&pp_lock);
	return HW_OK;
}

bool hw_pp_lookup(uint16_t index, struct hw_pp_rate *r)
{
	struct pp_entry *e;

	pthread_mutex_lock(&pp_lock);
	e = pp_find(index);
	if (e != NULL)
		hw_pp_parse(e->ctx, HW_PP_CTX_BYTES, r);
	pthread_mutex_unlock(&pp_lock);
	return e != NULL;
}
