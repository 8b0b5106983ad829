/*
 * hw_ids — the device's number spaces, shared by every process of the user.
 */
#include "hw_ids.h"
#include "hw_machine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#define IDS_MAGIC 0x53445049u /* "SDPI" */
#define IDS_VERSION 6u /* 2: a record per slot; 3: records of 256 bytes; 4: device-memory pages; 5: rate entries; 6: VARs */
#define IDS_IDENT (((uint64_t)IDS_MAGIC << 32) | IDS_VERSION)

/* Linux pids stay below PID_MAX_LIMIT (2^22); start times in clock ticks fit the rest. */
#define PID_BITS 22
#define PID_MASK ((1ull << PID_BITS) - 1)
#define START_MASK ((1ull << (64 - PID_BITS)) - 1)

/* The segment: this header, HW_ID_KINDS arrays of slot words, then as many records. */
struct ids_hdr {
	_Atomic uint64_t ident;	   /* magic << 32 | version; written last at creation */
	_Atomic uint64_t geometry; /* kinds << 32 | slots per kind */
	_Atomic uint32_t hint[HW_ID_KINDS]; /* where the next search starts, so numbers are not reused at once */
	uint32_t pad[14 - HW_ID_KINDS];
};
_Static_assert(sizeof(struct ids_hdr) == 72, "the shared header layout is part of the version");

/*
 * What a holder says about its number (where its queue or memory is), read
 * by any process. A sequence counter guards it: odd while the holder writes,
 * moved on by every publish and withdraw, so a reader that saw the same even
 * value before and after its copy has a consistent record, and a cached
 * view can tell by one load whether it is still the one published.
 */
struct ids_rec {
	_Atomic uint32_t seq;
	_Atomic uint32_t len;
	_Atomic uint64_t data[HW_ID_REC_MAX / 8];
};
_Static_assert(sizeof(struct ids_rec) == 256, "the shared record layout is part of the version");

struct hw_ids {
	struct ids_hdr *hdr;
	_Atomic uint64_t *slot; /* [kind * slots + index] */
	struct ids_rec *rec;	/* [kind * slots + index] */
	uint32_t slots;
	size_t size;
};

static const uint32_t id_base[HW_ID_KINDS] = {
	[HW_ID_QPN] = 0x100, /* mlx5 keeps the QPNs below for special QPs */
	[HW_ID_CQN] = 0x1,
	[HW_ID_SRQN] = 0x1,
	[HW_ID_PD] = 0x1,   /* 0 means "any domain" to the key check */
	[HW_ID_MKEY] = 0x1, /* index 0 would make key 0, which names no key */
	[HW_ID_DM] = 0x1,
	[HW_ID_PP] = 0x1, /* index 0 is "no rate" (a QP's packet_pacing_rate_limit_index) */
	[HW_ID_VAR] = 0x0, /* page_ids count from 0, as the card's doorbell pages */
};

uint32_t hw_id_base(enum hw_id_kind kind)
{
	return (unsigned)kind < HW_ID_KINDS ? id_base[kind] : 0;
}

/* Outcome of looking a process up in /proc. */
enum proc_state { PROC_LIVE, PROC_GONE, PROC_UNKNOWN };

static enum proc_state proc_stat(uint32_t pid, uint64_t *start)
{
	char path[64], buf[1024], state;
	unsigned long long st;
	ssize_t n;
	char *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? PROC_GONE : PROC_UNKNOWN;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return PROC_GONE; /* the process went between open and read */
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and ')': fields resume after its last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
				&state, &st) != 2)
		return PROC_UNKNOWN;
	if (state == 'Z' || state == 'X')
		return PROC_GONE; /* dead, only not yet reaped: it holds nothing any more */
	*start = st & START_MASK;
	return PROC_LIVE;
}

static uint64_t owner_word(uint32_t pid, uint64_t start)
{
	return (start & START_MASK) << PID_BITS | pid;
}

/* This process's slot word; recomputed after a fork, as the child is another owner. */
static uint64_t my_word(void)
{
	static _Atomic uint64_t cached;
	uint64_t w = atomic_load(&cached);
	uint32_t pid = (uint32_t)getpid();
	uint64_t start = 0;

	if (w != 0 && (w & PID_MASK) == pid)
		return w;
	if (proc_stat(pid, &start) != PROC_LIVE)
		start = 0; /* without /proc nobody is ever judged dead, so the pid alone is enough */
	w = owner_word(pid, start);
	atomic_store(&cached, w);
	return w;
}

/* A holder is dead only when /proc says so; when it cannot tell, the slot stays held. */
static bool owner_dead(uint64_t w)
{
	uint64_t start = 0;
	uint32_t pid = (uint32_t)(w & PID_MASK);

	switch (proc_stat(pid, &start)) {
	case PROC_GONE:
		return true;
	case PROC_LIVE:
		return owner_word(pid, start) != w && (w >> PID_BITS) != 0;
	default:
		return false;
	}
}

static size_t ids_size(uint32_t slots)
{
	return sizeof(struct ids_hdr) + (size_t)HW_ID_KINDS * slots * (sizeof(uint64_t) + sizeof(struct ids_rec));
}

static bool name_ok(const char *name)
{
	size_t len;

	if (name == NULL || name[0] != '/')
		return false;
	len = strlen(name);
	return len > 1 && len < NAME_MAX && strchr(name + 1, '/') == NULL;
}

static bool slots_ok(uint32_t slots)
{
	for (int k = 0; k < HW_ID_KINDS; k++)
		if (slots == 0 || slots > HW_ID_MAX - id_base[k] + 1)
			return false;
	return true;
}

/*
 * A zero header is a table nobody finished creating: whoever opens it
 * completes it, each step one CAS of a value all openers agree on, so a
 * creator dying half-way leaves nothing the next one cannot finish.
 */
static enum hw_status ids_check_hdr(struct ids_hdr *h, const char *name, uint32_t slots)
{
	uint64_t geom = (uint64_t)HW_ID_KINDS << 32 | slots;
	uint64_t ident = atomic_load(&h->ident), zero = 0;

	if (ident == 0) {
		atomic_compare_exchange_strong(&h->geometry, &zero, geom);
		zero = 0;
		atomic_compare_exchange_strong(&h->ident, &zero, IDS_IDENT);
		ident = atomic_load(&h->ident);
	}
	if (ident >> 32 != IDS_MAGIC) {
		BASE_ERR("%s is not a softdpu number table (magic %#x)", name, (unsigned)(ident >> 32));
		return HW_ERR_LAYOUT;
	}
	if ((uint32_t)ident != IDS_VERSION) {
		BASE_ERR("number table %s has version %u, this library reads %u", name, (unsigned)(uint32_t)ident,
			 IDS_VERSION);
		return HW_ERR_LAYOUT;
	}
	if (atomic_load(&h->geometry) != geom) {
		BASE_ERR("number table %s has another geometry (%#llx, expected %#llx)", name,
			 (unsigned long long)atomic_load(&h->geometry), (unsigned long long)geom);
		return HW_ERR_LAYOUT;
	}
	return HW_OK;
}

enum hw_status hw_ids_open(const char *name, uint32_t slots, struct hw_ids **out)
{
	size_t size = ids_size(slots);
	struct hw_ids *t;
	enum hw_status st;
	void *p;
	int fd;

	if (out == NULL || !name_ok(name) || !slots_ok(slots))
		return HW_ERR_INVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return HW_ERR_NOMEM;
	switch (base_priv_shm_open(name, size, "number table", &fd)) {
	case BASE_PRIV_OK:
		break;
	case BASE_PRIV_FOREIGN:
	case BASE_PRIV_SIZE:
		st = HW_ERR_LAYOUT;
		goto err_free;
	default:
		st = HW_ERR_NOMEM;
		goto err_free;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		BASE_ERR("cannot map the number table %s: %s", name, strerror(errno));
		st = HW_ERR_NOMEM;
		goto err_close;
	}
	close(fd);
	st = ids_check_hdr(p, name, slots);
	if (st != HW_OK)
		goto err_unmap;
	t->hdr = p;
	t->slot = (_Atomic uint64_t *)((char *)p + sizeof(struct ids_hdr));
	t->rec = (struct ids_rec *)(t->slot + (size_t)HW_ID_KINDS * slots);
	t->slots = slots;
	t->size = size;
	*out = t;
	return HW_OK;

err_unmap:
	munmap(p, size);
	goto err_free;
err_close:
	close(fd);
err_free:
	free(t);
	return st;
}

void hw_ids_close(struct hw_ids *t)
{
	if (t == NULL)
		return;
	munmap(t->hdr, t->size);
	free(t);
}

/* One pass over the kind's first lim slots from the hint; true with *idx on a claim. */
static bool ids_claim(struct hw_ids *t, enum hw_id_kind kind, uint32_t lim, uint64_t me, uint32_t *idx)
{
	_Atomic uint64_t *s = t->slot + (size_t)kind * t->slots;
	uint32_t from = atomic_load(&t->hdr->hint[kind]) % lim;

	for (uint32_t n = 0; n < lim; n++) {
		uint32_t i = (from + n) % lim;
		uint64_t w = 0;

		if (atomic_load_explicit(&s[i], memory_order_relaxed) != 0)
			continue;
		if (atomic_compare_exchange_strong(&s[i], &w, me)) {
			atomic_store(&t->hdr->hint[kind], i + 1);
			*idx = i;
			return true;
		}
	}
	return false;
}

static void rec_withdraw(struct ids_rec *r);

/* Frees the slots of dead holders among the first lim; returns how many. */
static uint32_t ids_reclaim(struct hw_ids *t, enum hw_id_kind kind, uint32_t lim)
{
	_Atomic uint64_t *s = t->slot + (size_t)kind * t->slots;
	uint64_t last = 0;
	bool last_dead = false;
	uint32_t freed = 0;

	for (uint32_t i = 0; i < lim; i++) {
		uint64_t w = atomic_load(&s[i]);

		if (w == 0)
			continue;
		/* A holder usually has a run of slots: ask /proc once per run. */
		if (w != last) {
			last = w;
			last_dead = owner_dead(w);
		}
		if (last_dead) {
			rec_withdraw(&t->rec[(size_t)kind * t->slots + i]);
			if (atomic_compare_exchange_strong(&s[i], &w, 0))
				freed++;
		}
	}
	return freed;
}

enum hw_status hw_ids_alloc_within(struct hw_ids *t, enum hw_id_kind kind, uint32_t limit, uint32_t *num)
{
	uint64_t me = my_word();
	uint32_t idx;

	if (t == NULL || (unsigned)kind >= HW_ID_KINDS || num == NULL || limit == 0)
		return HW_ERR_INVAL;
	if (limit > t->slots)
		limit = t->slots;
	if (!ids_claim(t, kind, limit, me, &idx)) {
		uint32_t freed = ids_reclaim(t, kind, limit);

		if (freed == 0 || !ids_claim(t, kind, limit, me, &idx))
			return HW_ERR_NOMEM;
		BASE_WARN("number table full: took back %u numbers of dead processes", freed);
	}
	*num = id_base[kind] + idx;
	return HW_OK;
}

enum hw_status hw_ids_alloc(struct hw_ids *t, enum hw_id_kind kind, uint32_t *num)
{
	return hw_ids_alloc_within(t, kind, UINT32_MAX, num);
}

static _Atomic uint64_t *ids_slot(struct hw_ids *t, enum hw_id_kind kind, uint32_t num)
{
	if (t == NULL || (unsigned)kind >= HW_ID_KINDS || num < id_base[kind] || num - id_base[kind] >= t->slots)
		return NULL;
	return t->slot + (size_t)kind * t->slots + (num - id_base[kind]);
}

static struct ids_rec *ids_rec_at(struct hw_ids *t, enum hw_id_kind kind, uint32_t num)
{
	return &t->rec[(size_t)kind * t->slots + (num - id_base[kind])];
}

/* Moves the record on to an even, empty state: cached views of it are stale from here. */
static void rec_withdraw(struct ids_rec *r)
{
	uint32_t q = atomic_load(&r->seq);

	atomic_store(&r->seq, (q | 1u) + 1u);
}

static void ids_rec_clear(struct hw_ids *t, enum hw_id_kind kind, uint32_t num)
{
	struct ids_rec *r = ids_rec_at(t, kind, num);

	atomic_store(&r->len, 0);
	rec_withdraw(r);
}

enum hw_status hw_ids_publish(struct hw_ids *t, enum hw_id_kind kind, uint32_t num, const void *data, uint32_t len,
			      uint32_t *seq)
{
	_Atomic uint64_t *s = ids_slot(t, kind, num);
	uint64_t words[HW_ID_REC_MAX / 8] = { 0 };
	struct ids_rec *r;
	uint32_t q;

	if (s == NULL || (data == NULL && len != 0) || len > HW_ID_REC_MAX)
		return HW_ERR_INVAL;
	if (atomic_load(s) != my_word())
		return atomic_load(s) == 0 ? HW_ERR_KEY : HW_ERR_ACCESS;
	if (len != 0)
		memcpy(words, data, len);
	r = ids_rec_at(t, kind, num);
	q = atomic_load(&r->seq);
	atomic_store(&r->seq, q | 1u); /* writing */
	atomic_store_explicit(&r->len, len, memory_order_relaxed);
	for (uint32_t i = 0; i < HW_ID_REC_MAX / 8; i++)
		atomic_store_explicit(&r->data[i], words[i], memory_order_relaxed);
	q = (q | 1u) + 1u;
	atomic_store_explicit(&r->seq, q, memory_order_release);
	if (seq != NULL)
		*seq = q;
	return HW_OK;
}

enum hw_status hw_ids_withdraw(struct hw_ids *t, enum hw_id_kind kind, uint32_t num)
{
	_Atomic uint64_t *s = ids_slot(t, kind, num);

	if (s == NULL)
		return HW_ERR_INVAL;
	if (atomic_load(s) != my_word())
		return atomic_load(s) == 0 ? HW_ERR_KEY : HW_ERR_ACCESS;
	ids_rec_clear(t, kind, num);
	return HW_OK;
}

enum hw_status hw_ids_read(struct hw_ids *t, enum hw_id_kind kind, uint32_t num, void *buf, uint32_t cap,
			   uint32_t *len, uint32_t *seq)
{
	uint64_t words[HW_ID_REC_MAX / 8];
	struct ids_rec *r;
	uint32_t q, n;

	if (ids_slot(t, kind, num) == NULL || buf == NULL || len == NULL)
		return HW_ERR_INVAL;
	r = ids_rec_at(t, kind, num);
	for (int tries = 0; tries < 1000; tries++) {
		q = atomic_load_explicit(&r->seq, memory_order_acquire);
		if (q & 1u)
			continue; /* the holder is writing: a publish takes a few stores */
		n = atomic_load_explicit(&r->len, memory_order_relaxed);
		/* Acquire loads keep the re-check of the counter after the copy (no fence: TSan refuses those). */
		for (uint32_t i = 0; i < HW_ID_REC_MAX / 8; i++)
			words[i] = atomic_load_explicit(&r->data[i], memory_order_acquire);
		if (atomic_load_explicit(&r->seq, memory_order_relaxed) != q)
			continue;
		if (n == 0 || n > HW_ID_REC_MAX || atomic_load(ids_slot(t, kind, num)) == 0)
			return HW_ERR_KEY;
		if (n > cap)
			return HW_ERR_LENGTH;
		memcpy(buf, words, n);
		*len = n;
		if (seq != NULL)
			*seq = q;
		return HW_OK;
	}
	/* A holder that died mid-write leaves the counter odd: the number is unusable until reclaimed. */
	return HW_ERR_PEER_GONE;
}

const _Atomic uint32_t *hw_ids_seq(struct hw_ids *t, enum hw_id_kind kind, uint32_t num)
{
	return ids_slot(t, kind, num) == NULL ? NULL : &ids_rec_at(t, kind, num)->seq;
}

enum hw_status hw_ids_free(struct hw_ids *t, enum hw_id_kind kind, uint32_t num)
{
	_Atomic uint64_t *s = ids_slot(t, kind, num);
	uint64_t me = my_word(), w;

	if (s == NULL)
		return HW_ERR_INVAL;
	w = atomic_load(s);
	if (w == 0)
		return HW_ERR_KEY;
	if (w != me)
		return HW_ERR_ACCESS;
	ids_rec_clear(t, kind, num);
	/* Only a reclaimer that found us dead could change it, and we are not. */
	return atomic_compare_exchange_strong(s, &w, 0) ? HW_OK : HW_ERR_KEY;
}

enum hw_status hw_ids_owner(struct hw_ids *t, enum hw_id_kind kind, uint32_t num, pid_t *pid)
{
	_Atomic uint64_t *s = ids_slot(t, kind, num);
	uint64_t w;

	if (s == NULL || pid == NULL)
		return HW_ERR_INVAL;
	w = atomic_load(s);
	if (w == 0)
		return HW_ERR_KEY;
	*pid = (pid_t)(w & PID_MASK);
	return owner_dead(w) ? HW_ERR_PEER_GONE : HW_OK;
}

static struct hw_ids *device_ids;
static enum hw_status device_status;
static pthread_once_t device_once = PTHREAD_ONCE_INIT;

static void device_open(void)
{
	char name[64];

	snprintf(name, sizeof(name), "/softdpu-%u%s-ids-v%u", (unsigned)getuid(), hw_machine_tag(), IDS_VERSION);
	device_status = hw_ids_open(name, HW_IDS_DEFAULT_SLOTS, &device_ids);
}

struct hw_ids *hw_ids_device(void)
{
	pthread_once(&device_once, device_open);
	return device_ids;
}

enum hw_status hw_id_alloc(enum hw_id_kind kind, uint32_t *num)
{
	struct hw_ids *t = hw_ids_device();

	return t != NULL ? hw_ids_alloc(t, kind, num) : device_status;
}

enum hw_status hw_id_alloc_within(enum hw_id_kind kind, uint32_t limit, uint32_t *num)
{
	struct hw_ids *t = hw_ids_device();

	return t != NULL ? hw_ids_alloc_within(t, kind, limit, num) : device_status;
}

enum hw_status hw_id_free(enum hw_id_kind kind, uint32_t num)
{
	struct hw_ids *t = hw_ids_device();

	return t != NULL ? hw_ids_free(t, kind, num) : device_status;
}

enum hw_status hw_id_owner(enum hw_id_kind kind, uint32_t num, pid_t *pid)
{
	struct hw_ids *t = hw_ids_device();

	return t != NULL ? hw_ids_owner(t, kind, num, pid) : device_status;
}

enum hw_status hw_id_publish(enum hw_id_kind kind, uint32_t num, const void *data, uint32_t len, uint32_t *seq)
{
	struct hw_ids *t = hw_ids_device();

	return t != NULL ? hw_ids_publish(t, kind, num, data, len, seq) : device_status;
}

enum hw_status hw_id_read(enum hw_id_kind kind, uint32_t num, void *buf, uint32_t cap, uint32_t *len, uint32_t *seq)
{
	struct hw_ids *t = hw_ids_device();

	return t != NULL ? hw_ids_read(t, kind, num, buf, cap, len, seq) : device_status;
}

uint64_t hw_ids_self_word(void)
{
	return my_word();
}

bool hw_ids_word_dead(uint64_t w)
{
	return owner_dead(w);
}

uint32_t hw_ids_word_pid(uint64_t w)
{
	return (uint32_t)(w & PID_MASK);
}

bool hw_ids_pid_dead(uint32_t pid)
{
	uint64_t start;

	return proc_stat(pid, &start) == PROC_GONE;
}
