/*
 * hw_mcast — the device-wide multicast table (hw_mcast.h).
 *
 * Each entry is a small seqlock: its owner claims it with one compare-and-
 * swap of the owner word, makes seq odd, writes the group and QPN, makes seq
 * even again; a reader copies the fields between two equal, even reads of
 * seq. Only the owner of a QP writes its entries, and one process's writers
 * are serialized by a mutex, so two writers never share an entry.
 */
#include "hw_mcast.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "hw_ids.h"
#include "hw_shm.h"

#define MCAST_VERSION 1u

struct mcast_ent {
	_Atomic uint64_t owner; /* 0 free, else the attaching process's hw_ids word */
	_Atomic uint32_t seq;	/* odd while written; 0 never written */
	uint32_t qpn;
	uint16_t lid;
	uint8_t no_self;
	uint8_t live;
	uint8_t mgid[16];
};

struct mcast_tbl {
	struct mcast_ent e[HW_MCAST_ENTRIES];
};

static struct mcast_tbl *tbl;
static pthread_once_t tbl_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;

static void mcast_open(void)
{
	__atomic_store_n(&tbl, hw_shm_table("mcast", MCAST_VERSION, sizeof(struct mcast_tbl)), __ATOMIC_RELEASE);
}

static struct mcast_tbl *mcast_tbl(void)
{
	pthread_once(&tbl_once, mcast_open);
	return tbl;
}

bool hw_mcast_gid(const uint8_t gid[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return gid[0] == 0xff || (memcmp(gid, mapped, sizeof(mapped)) == 0 && (gid[12] & 0xf0) == 0xe0);
}

/* A consistent copy of a live entry; false when free, being written or withdrawn. */
static bool mcast_read(const struct mcast_ent *e, struct mcast_ent *out)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);

	if (s == 0 || (s & 1) != 0)
		return false;
	/* Acquire loads, not a fence, keep the re-check after the copy (TSan refuses fences). */
	out->qpn = __atomic_load_n(&e->qpn, __ATOMIC_ACQUIRE);
	out->lid = __atomic_load_n(&e->lid, __ATOMIC_ACQUIRE);
	out->no_self = __atomic_load_n(&e->no_self, __ATOMIC_ACQUIRE);
	out->live = __atomic_load_n(&e->live, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < sizeof(out->mgid); i++)
		out->mgid[i] = __atomic_load_n(&e->mgid[i], __ATOMIC_ACQUIRE);
	if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s)
		return false;
	out->owner = atomic_load_explicit(&e->owner, memory_order_relaxed);
	return out->live != 0 && out->owner != 0;
}

/* Whether the QP of a live entry is still the attaching process's (its QPN not freed and taken again). */
static bool mcast_current(const struct mcast_ent *c)
{
	pid_t pid;

	return hw_id_owner(HW_ID_QPN, c->qpn, &pid) == HW_OK && (uint32_t)pid == hw_ids_word_pid(c->owner);
}

static void mcast_write(struct mcast_ent *e, uint32_t qpn, const uint8_t mgid[16], uint16_t lid, bool no_self,
			bool live)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	s += s & 1; /* a writer that died half way left it odd */
	atomic_store_explicit(&e->seq, s + 1, memory_order_relaxed);
	/* Release stores: a reader that sees one of them sees the odd sequence before it. */
	__atomic_store_n(&e->qpn, qpn, __ATOMIC_RELEASE);
	__atomic_store_n(&e->lid, lid, __ATOMIC_RELEASE);
	__atomic_store_n(&e->no_self, no_self, __ATOMIC_RELEASE);
	__atomic_store_n(&e->live, live, __ATOMIC_RELEASE);
	for (size_t i = 0; mgid != NULL && i < sizeof(e->mgid); i++)
		__atomic_store_n(&e->mgid[i], mgid[i], __ATOMIC_RELEASE);
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
}

/* This process's live entry for (qpn, mgid, lid), or NULL. */
static struct mcast_ent *mcast_find(struct mcast_tbl *t, uint32_t qpn, const uint8_t mgid[16], uint16_t lid)
{
	uint64_t me = hw_ids_self_word();
	struct mcast_ent c;

	for (uint32_t i = 0; i < HW_MCAST_ENTRIES; i++) {
		struct mcast_ent *e = &t->e[i];

		if (atomic_load_explicit(&e->owner, memory_order_acquire) != me || !mcast_read(e, &c))
			continue;
		if (c.qpn == qpn && c.lid == lid && memcmp(c.mgid, mgid, 16) == 0)
			return e;
	}
	return NULL;
}

/* Live entries of the group (by its GID) whose QP is current. */
static uint32_t mcast_group_size(struct mcast_tbl *t, const uint8_t mgid[16])
{
	struct mcast_ent c;
	uint32_t n = 0;

	for (uint32_t i = 0; i < HW_MCAST_ENTRIES; i++)
		if (mcast_read(&t->e[i], &c) && memcmp(c.mgid, mgid, 16) == 0 && mcast_current(&c))
			n++;
	return n;
}

/* A free entry claimed for this process; reclaims the dead owners' entries when none is. */
static struct mcast_ent *mcast_claim(struct mcast_tbl *t)
{
	uint64_t me = hw_ids_self_word();

	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < HW_MCAST_ENTRIES; i++) {
			uint64_t w = atomic_load_explicit(&t->e[i].owner, memory_order_relaxed);

			if (w != 0 && (pass == 0 || !hw_ids_word_dead(w)))
				continue;
			if (atomic_compare_exchange_strong(&t->e[i].owner, &w, me))
				return &t->e[i];
		}
	}
	return NULL;
}

enum hw_status hw_mcast_attach(uint32_t qpn, const uint8_t mgid[16], uint16_t lid, bool no_self)
{
	struct mcast_tbl *t = mcast_tbl();
	enum hw_status st = HW_OK;
	struct mcast_ent *e;

	if (t == NULL)
		return HW_ERR_NOMEM;
	pthread_mutex_lock(&writers);
	if (mcast_find(t, qpn, mgid, lid) != NULL)
		goto out;
	st = HW_ERR_NOMEM;
	if (mcast_group_size(t, mgid) >= HW_MCAST_GROUP_MAX)
		goto out;
	e = mcast_claim(t);
	if (e == NULL)
		goto out;
	mcast_write(e, qpn, mgid, lid, no_self, true);
	st = HW_OK;
out:
	pthread_mutex_unlock(&writers);
	return st;
}

enum hw_status hw_mcast_detach(uint32_t qpn, const uint8_t mgid[16], uint16_t lid)
{
	struct mcast_tbl *t = mcast_tbl();
	struct mcast_ent *e;

	if (t == NULL)
		return HW_ERR_KEY;
	pthread_mutex_lock(&writers);
	e = mcast_find(t, qpn, mgid, lid);
	if (e != NULL) {
		mcast_write(e, 0, NULL, 0, false, false);
		atomic_store_explicit(&e->owner, 0, memory_order_release);
	}
	pthread_mutex_unlock(&writers);
	return e != NULL ? HW_OK : HW_ERR_KEY;
}

bool hw_mcast_qp_attached(uint32_t qpn)
{
	/* Not opened here: this process attached nothing (a QP's destroy does not create the table). */
	struct mcast_tbl *t = __atomic_load_n(&tbl, __ATOMIC_ACQUIRE);
	uint64_t me = hw_ids_self_word();
	struct mcast_ent c;

	if (t == NULL)
		return false;
	for (uint32_t i = 0; i < HW_MCAST_ENTRIES; i++)
		if (atomic_load_explicit(&t->e[i].owner, memory_order_acquire) == me && mcast_read(&t->e[i], &c) &&
		    c.qpn == qpn)
			return true;
	return false;
}

uint32_t hw_mcast_members(uint32_t sender, const uint8_t mgid[16], uint16_t lid, bool by_lid,
			  uint32_t qpns[HW_MCAST_GROUP_MAX])
{
	struct mcast_tbl *t = mcast_tbl();
	struct mcast_ent c;
	uint32_t n = 0;

	if (t == NULL)
		return 0;
	for (uint32_t i = 0; i < HW_MCAST_ENTRIES && n < HW_MCAST_GROUP_MAX; i++) {
		if (!mcast_read(&t->e[i], &c))
			continue;
		if (by_lid ? c.lid != lid : memcmp(c.mgid, mgid, 16) != 0)
			continue;
		if ((c.qpn == sender && c.no_self) || !mcast_current(&c))
			continue;
		/* A QP attached to the group twice (two LIDs) receives once. */
		bool dup = false;
		for (uint32_t j = 0; j < n && !dup; j++)
			dup = qpns[j] == c.qpn;
		if (!dup)
			qpns[n++] = c.qpn;
	}
	return n;
}
