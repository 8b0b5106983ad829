/*
 * hw_qshare — queue blocks other processes can map, and their records.
 */
#include "hw_qshare.h"

#include <stdlib.h>
#include <string.h>

#define QBLOCK_ALIGN 4096

_Static_assert(sizeof(struct hw_qrec) <= HW_ID_REC_MAX, "a queue's record fits its number's slot");

enum hw_status hw_qblock_adopt(struct hw_qblock *b, void *ring, size_t ring_len, void *dbrec, size_t dbrec_len)
{
	enum hw_status st;

	b->xring = ring;
	b->xdbrec = dbrec;
	b->xring_len = ring_len;
	b->xdbrec_len = dbrec_len;
	if (b->ops == NULL || b->mapped)
		return HW_OK; /* this process's queue alone: nothing to share */
	if (b->ops->adopt == NULL)
		return HW_ERR_NOTSUP;
	st = b->ops->adopt(ring, ring_len, dbrec, dbrec_len, b->xbacking, &b->xlen, &b->xhandle);
	if (st == HW_OK && (b->xlen == 0 || b->xlen > HW_QEXT_BACKING_MAX)) {
		b->ops->unadopt(b->xhandle);
		st = HW_ERR_NOTSUP;
	}
	if (st != HW_OK) {
		b->xhandle = NULL;
		b->xlen = 0;
	}
	return st;
}

static const struct hw_qmem_ops *_Atomic qmem_ops;

void hw_qmem_set_ops(const struct hw_qmem_ops *ops)
{
	atomic_store(&qmem_ops, ops);
}

enum hw_status hw_qblock_alloc(struct hw_qblock *b, size_t len, bool shared)
{
	const struct hw_qmem_ops *ops = shared ? atomic_load(&qmem_ops) : NULL;
	void *p = NULL;

	memset(b, 0, sizeof(*b));
	if (ops != NULL) {
		p = ops->alloc(len, b->backing, &b->blen);
		if (p != NULL && b->blen <= HW_QMEM_BACKING_MAX) {
			b->ops = ops;
			b->p = p;
			b->len = len;
			return HW_OK;
		}
		if (p != NULL)
			ops->free(p, len, b->backing, b->blen);
		/*
		 * No shareable memory now: the creation fails (the hooks said why).
		 * A queue of this process only would look created but be
		 * unreachable from its peers.
		 */
		b->blen = 0;
		return HW_ERR_NOMEM;
	}
	if (posix_memalign(&p, QBLOCK_ALIGN, len) != 0)
		return HW_ERR_NOMEM;
	memset(p, 0, len);
	b->p = p;
	b->len = len;
	return HW_OK;
}

void hw_qblock_free(struct hw_qblock *b)
{
	if (b->xhandle != NULL && b->mapped)
		b->ops->detach_ext(b->xhandle);
	else if (b->xhandle != NULL)
		b->ops->unadopt(b->xhandle);
	b->xhandle = NULL;
	if (b->p == NULL)
		return;
	if (b->mapped)
		b->ops->detach(b->p, b->len);
	else if (b->ops != NULL)
		b->ops->free(b->p, b->len, b->backing, b->blen);
	else
		free(b->p);
	b->p = NULL;
}

enum hw_status hw_qshare_publish(enum hw_id_kind kind, uint32_t num, uint32_t magic, const uint32_t geo[3],
				 const struct hw_qblock *b)
{
	struct hw_qrec r = { .magic = magic, .len = b->len, .blen = b->blen };

	if (b->ops == NULL || b->mapped)
		return HW_OK;
	memcpy(r.geo, geo, sizeof(r.geo));
	memcpy(r.backing, b->backing, b->blen);
	if (b->xhandle != NULL) {
		r.xring_len = b->xring_len;
		r.xdbrec_len = (uint32_t)b->xdbrec_len;
		r.xlen = b->xlen;
		memcpy(r.xbacking, b->xbacking, b->xlen);
	}
	return hw_id_publish(kind, num, &r, sizeof(r), NULL);
}

void hw_qshare_withdraw(enum hw_id_kind kind, uint32_t num, const struct hw_qblock *b)
{
	struct hw_ids *t;

	if (b->ops == NULL || b->mapped)
		return;
	t = hw_ids_device();
	if (t != NULL)
		(void)hw_ids_withdraw(t, kind, num);
}

enum hw_status hw_qshare_map(enum hw_id_kind kind, uint32_t num, uint32_t magic, struct hw_qblock *b,
			     struct hw_qrec *rec, const _Atomic uint32_t **seqp, uint32_t *seq)
{
	const struct hw_qmem_ops *ops = atomic_load(&qmem_ops);
	uint32_t len = 0;
	void *p;

	memset(b, 0, sizeof(*b));
	if (ops == NULL || hw_ids_device() == NULL)
		return HW_ERR_KEY;
	if (hw_id_read(kind, num, rec, sizeof(*rec), &len, seq) != HW_OK || len != sizeof(*rec) ||
	    rec->magic != magic || rec->blen > HW_QMEM_BACKING_MAX || rec->len == 0 ||
	    rec->xlen > HW_QEXT_BACKING_MAX || (rec->xlen != 0 && (rec->xdbrec_len == 0 || ops->attach_ext == NULL)))
		return HW_ERR_KEY;
	p = ops->attach(rec->backing, rec->blen, rec->len);
	if (p == NULL)
		return HW_ERR_KEY;
	b->p = p;
	b->len = rec->len;
	b->ops = ops;
	b->mapped = true;
	if (rec->xlen != 0) {
		b->xring_len = rec->xring_len;
		b->xdbrec_len = rec->xdbrec_len;
		b->xhandle = ops->attach_ext(rec->xbacking, rec->xlen, rec->xring_len, rec->xdbrec_len, &b->xring,
					     &b->xdbrec);
		if (b->xhandle == NULL) {
			hw_qblock_free(b);
			return HW_ERR_KEY;
		}
	}
	*seqp = hw_ids_seq(hw_ids_device(), kind, num);
	return HW_OK;
}
