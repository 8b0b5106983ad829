/*
 * hw_steer — the steering tables of the Ethernet port and their lookup.
 *
 * Every object lives under one process-wide rwlock: rule and table changes
 * take it for writing, the data path (hw_steer_rx, hw_steer_tx) for reading,
 * so a frame sees the tables as they were before or after a change, never
 * half of one. The lists keep creation order; a table's matchers are kept
 * sorted by priority (ties in creation order) at insertion, so the lookup is
 * a plain walk.
 *
 * A path is a sequence of stages (receive: FDB, NIC receive; transmit: NIC
 * transmit, FDB), each stage the domains of one type in creation order. The
 * first domain of a stage with a verdict ends the stage. Edits change the
 * frame in place as each matching rule is taken, and the fields are parsed
 * again from the edited frame. DROP and TIR end the
 * path; WIRE passes the frame on to the next stage (a NIC transmit's wire is
 * reached through the FDB; a receive FDB's uplink leads to the NIC). At the
 * end a transmit goes to the wire and a receive is dropped.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hw_counter.h"
#include "hw_eth.h"
#include "hw_modhdr.h"
#include "hw_reformat.h"
#include "hw_steer.h"

#define STEER_MAX_ACTS 8
#define STEER_WORDS (HW_STEER_MATCH_BYTES / sizeof(uint64_t))

struct hw_steer_rule {
	struct hw_steer_rule *next;
	struct hw_steer_matcher *m;
	uint64_t value[STEER_WORDS]; /* already under the matcher's mask */
	struct hw_steer_action act;  /* the terminal one (MISS when none was given) */
	uint32_t n_edits;
	struct hw_steer_action edits[STEER_MAX_ACTS];
	uint32_t tag; /* 0: none */
	uint32_t n_counters;
	struct hw_counter *counters[STEER_MAX_ACTS];
	struct hw_steer_action dests[HW_STEER_DESTS_MAX]; /* act's, when a DESTS */
};

struct hw_steer_matcher {
	struct hw_steer_matcher *next;
	struct hw_steer_table *t;
	uint16_t priority;
	uint64_t mask[STEER_WORDS];
	struct hw_steer_rule *rules;
};

struct hw_steer_table {
	struct hw_steer_table *next;
	struct hw_steer_domain *d;
	uint32_t level;
	uint32_t jumpers; /* rules of other tables that jump here */
	struct hw_steer_matcher *matchers;
};

struct hw_steer_domain {
	struct hw_steer_domain *next;
	enum hw_steer_domain_type type;
	struct hw_steer_table *tables;
};

static pthread_rwlock_t steer_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct hw_steer_domain *steer_domains;

static void steer_wlock(void)
{
	pthread_rwlock_wrlock(&steer_lock);
}

static void steer_rlock(void)
{
	pthread_rwlock_rdlock(&steer_lock);
}

static void steer_unlock(void)
{
	pthread_rwlock_unlock(&steer_lock);
}

/* Appends e to the list at *headp. */
#define STEER_APPEND(headp, type, e)                                                                                   \
	do {                                                                                                           \
		type **l_ = (headp);                                                                                   \
		while (*l_ != NULL)                                                                                    \
			l_ = &(*l_)->next;                                                                             \
		*l_ = (e);                                                                                             \
	} while (0)

/* Unlinks e from the list at *headp (it is there). */
#define STEER_UNLINK(headp, type, e)                                                                                   \
	do {                                                                                                           \
		type **l_ = (headp);                                                                                   \
		while (*l_ != (e))                                                                                     \
			l_ = &(*l_)->next;                                                                             \
		*l_ = (e)->next;                                                                                       \
	} while (0)

static void steer_load(uint64_t w[STEER_WORDS], const uint8_t b[HW_STEER_MATCH_BYTES])
{
	memcpy(w, b, HW_STEER_MATCH_BYTES);
}

enum hw_status hw_steer_domain_create(enum hw_steer_domain_type type, struct hw_steer_domain **out)
{
	struct hw_steer_domain *d;

	if (out == NULL || (type != HW_STEER_NIC_RX && type != HW_STEER_NIC_TX && type != HW_STEER_FDB))
		return HW_ERR_INVAL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return HW_ERR_NOMEM;
	d->type = type;
	steer_wlock();
	STEER_APPEND(&steer_domains, struct hw_steer_domain, d);
	steer_unlock();
	*out = d;
	return HW_OK;
}

enum hw_status hw_steer_domain_destroy(struct hw_steer_domain *d)
{
	if (d == NULL)
		return HW_ERR_INVAL;
	steer_wlock();
	if (d->tables != NULL) {
		steer_unlock();
		return HW_ERR_INVAL;
	}
	STEER_UNLINK(&steer_domains, struct hw_steer_domain, d);
	steer_unlock();
	free(d);
	return HW_OK;
}

enum hw_status hw_steer_table_create(struct hw_steer_domain *d, uint32_t level, struct hw_steer_table **out)
{
	struct hw_steer_table *t;

	if (d == NULL || out == NULL)
		return HW_ERR_INVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return HW_ERR_NOMEM;
	t->d = d;
	t->level = level;
	steer_wlock();
	STEER_APPEND(&d->tables, struct hw_steer_table, t);
	steer_unlock();
	*out = t;
	return HW_OK;
}

enum hw_status hw_steer_table_destroy(struct hw_steer_table *t)
{
	if (t == NULL)
		return HW_ERR_INVAL;
	steer_wlock();
	if (t->matchers != NULL || t->jumpers != 0) {
		steer_unlock();
		return HW_ERR_INVAL;
	}
	STEER_UNLINK(&t->d->tables, struct hw_steer_table, t);
	steer_unlock();
	free(t);
	return HW_OK;
}

/* Where a matcher of priority p goes: after every matcher of priority <= p. */
static struct hw_steer_matcher **steer_matcher_slot(struct hw_steer_table *t, uint16_t p)
{
	struct hw_steer_matcher **l = &t->matchers;

	while (*l != NULL && (*l)->priority <= p)
		l = &(*l)->next;
	return l;
}

enum hw_status hw_steer_matcher_create(struct hw_steer_table *t, uint16_t priority,
				       const uint8_t mask[HW_STEER_MATCH_BYTES], struct hw_steer_matcher **out)
{
	struct hw_steer_matcher *m, **slot;

	if (t == NULL || mask == NULL || out == NULL)
		return HW_ERR_INVAL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return HW_ERR_NOMEM;
	m->t = t;
	m->priority = priority;
	steer_load(m->mask, mask);
	steer_wlock();
	slot = steer_matcher_slot(t, priority);
	m->next = *slot;
	*slot = m;
	steer_unlock();
	*out = m;
	return HW_OK;
}

enum hw_status hw_steer_matcher_destroy(struct hw_steer_matcher *m)
{
	if (m == NULL)
		return HW_ERR_INVAL;
	steer_wlock();
	if (m->rules != NULL) {
		steer_unlock();
		return HW_ERR_INVAL;
	}
	STEER_UNLINK(&m->t->matchers, struct hw_steer_matcher, m);
	steer_unlock();
	free(m);
	return HW_OK;
}

/* A DESTS action's destinations copied into the rule: TIRs and tables only. */
static enum hw_status steer_split_dests(struct hw_steer_rule *r)
{
	if (r->act.type != HW_STEER_ACT_DESTS)
		return HW_OK;
	if (r->act.n_dests == 0 || r->act.n_dests > HW_STEER_DESTS_MAX || r->act.dests == NULL)
		return HW_ERR_INVAL;
	for (uint32_t i = 0; i < r->act.n_dests; i++) {
		if (r->act.dests[i].type != HW_STEER_ACT_TIR && r->act.dests[i].type != HW_STEER_ACT_TABLE)
			return HW_ERR_INVAL;
		r->dests[i] = r->act.dests[i];
	}
	r->act.dests = r->dests;
	return HW_OK;
}

/*
 * The terminal action of acts into *term (MISS when there is none) and the
 * edits into r; HW_ERR_INVAL for an unknown type or several terminal ones.
 */
static enum hw_status steer_split(const struct hw_steer_action *acts, uint32_t n, struct hw_steer_rule *r)
{
	bool term = false;

	r->act = (struct hw_steer_action){ .type = HW_STEER_ACT_MISS };
	for (uint32_t i = 0; i < n; i++) {
		switch (acts[i].type) {
		case HW_STEER_ACT_DROP:
		case HW_STEER_ACT_TIR:
		case HW_STEER_ACT_TABLE:
		case HW_STEER_ACT_WIRE:
		case HW_STEER_ACT_MISS:
		case HW_STEER_ACT_DESTS:
		case HW_STEER_ACT_SAMPLE:
			if (term)
				return HW_ERR_INVAL;
			term = true;
			r->act = acts[i];
			break;
		case HW_STEER_ACT_COUNT:
			if (acts[i].counter == NULL)
				return HW_ERR_INVAL;
			r->counters[r->n_counters++] = acts[i].counter;
			break;
		case HW_STEER_ACT_REFORMAT:
		case HW_STEER_ACT_MODIFY:
			if (acts[i].reformat == NULL && acts[i].modhdr == NULL)
				return HW_ERR_INVAL;
			/* fall through */
		case HW_STEER_ACT_PUSH_VLAN:
		case HW_STEER_ACT_POP_VLAN:
		case HW_STEER_ACT_TAG: /* checked as an edit, kept as the rule's tag */
			r->edits[r->n_edits++] = acts[i];
			if (acts[i].type == HW_STEER_ACT_TAG)
				r->tag = acts[i].tag & 0xffffffu;
			break;
		default:
			return HW_ERR_INVAL;
		}
	}
	return steer_split_dests(r);
}

/* A sampler of a NIC receive rule: its table a jump's, its TIR there. */
static enum hw_status steer_sampler_ok(const struct hw_steer_table *t, const struct hw_steer_sampler *s)
{
	if (s == NULL || s->ratio == 0 || t->d->type != HW_STEER_NIC_RX)
		return HW_ERR_INVAL;
	if (s->table == NULL || s->table->d != t->d || s->table->level <= t->level)
		return HW_ERR_INVAL;
	return s->tirn == 0 || hw_eth_tir_exists(s->tirn) ? HW_OK : HW_ERR_KEY;
}

/* Whether a rule of table t may take action a; under the write lock (the TIR check must not race a destroy). */
static enum hw_status steer_action_ok(const struct hw_steer_table *t, const struct hw_steer_action *a)
{
	switch (a->type) {
	case HW_STEER_ACT_TIR:
		return hw_eth_tir_exists(a->tirn) ? HW_OK : HW_ERR_KEY;
	case HW_STEER_ACT_TABLE:
		if (a->table == NULL || a->table->d != t->d || a->table->level <= t->level)
			return HW_ERR_INVAL;
		return HW_OK;
	case HW_STEER_ACT_WIRE:
	case HW_STEER_ACT_PUSH_VLAN: /* tags are pushed on the way out */
		return t->d->type == HW_STEER_NIC_RX ? HW_ERR_INVAL : HW_OK;
	case HW_STEER_ACT_POP_VLAN: /* and popped on the way in */
		return t->d->type == HW_STEER_NIC_TX ? HW_ERR_INVAL : HW_OK;
	case HW_STEER_ACT_TAG: /* the receive CQE's */
		return t->d->type == HW_STEER_NIC_RX ? HW_OK : HW_ERR_INVAL;
	case HW_STEER_ACT_REFORMAT:
		return a->reformat != NULL && hw_reformat_fits(a->reformat, t->d->type) ? HW_OK : HW_ERR_INVAL;
	case HW_STEER_ACT_MODIFY:
		return a->modhdr != NULL ? HW_OK : HW_ERR_INVAL;
	case HW_STEER_ACT_SAMPLE:
		return steer_sampler_ok(t, a->sampler);
	case HW_STEER_ACT_DESTS:
		for (uint32_t i = 0; i < a->n_dests; i++) {
			enum hw_status st = steer_action_ok(t, &a->dests[i]);

			if (st != HW_OK)
				return st;
		}
		return HW_OK;
	default:
		return HW_OK;
	}
}

static enum hw_status steer_rule_ok(const struct hw_steer_table *t, const struct hw_steer_rule *r)
{
	enum hw_status st = steer_action_ok(t, &r->act);

	for (uint32_t i = 0; st == HW_OK && i < r->n_edits; i++)
		st = steer_action_ok(t, &r->edits[i]);
	return st;
}

/* The tables r jumps or copies to count it (d: +1 or -1); the write lock held. */
static void steer_jumpers(const struct hw_steer_rule *r, int d)
{
	if (r->act.type == HW_STEER_ACT_TABLE)
		r->act.table->jumpers += (uint32_t)d;
	if (r->act.type == HW_STEER_ACT_SAMPLE)
		r->act.sampler->table->jumpers += (uint32_t)d;
	for (uint32_t i = 0; r->act.type == HW_STEER_ACT_DESTS && i < r->act.n_dests; i++)
		if (r->dests[i].type == HW_STEER_ACT_TABLE)
			r->dests[i].table->jumpers += (uint32_t)d;
}

enum hw_status hw_steer_rule_create(struct hw_steer_matcher *m, const uint8_t value[HW_STEER_MATCH_BYTES],
				    const struct hw_steer_action *acts, uint32_t n, struct hw_steer_rule **out)
{
	struct hw_steer_rule *r;
	enum hw_status st;

	if (m == NULL || value == NULL || acts == NULL || out == NULL || n == 0 || n > STEER_MAX_ACTS)
		return HW_ERR_INVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return HW_ERR_NOMEM;
	st = steer_split(acts, n, r);
	if (st != HW_OK) {
		free(r);
		return st;
	}
	r->m = m;
	steer_load(r->value, value);
	for (size_t i = 0; i < STEER_WORDS; i++)
		r->value[i] &= m->mask[i];
	steer_wlock();
	st = steer_rule_ok(m->t, r);
	if (st != HW_OK)
		goto fail;
	steer_jumpers(r, 1);
	STEER_APPEND(&m->rules, struct hw_steer_rule, r);
	steer_unlock();
	*out = r;
	return HW_OK;
fail:
	steer_unlock();
	free(r);
	return st;
}

void hw_steer_rule_destroy(struct hw_steer_rule *r)
{
	if (r == NULL)
		return;
	steer_wlock();
	STEER_UNLINK(&r->m->rules, struct hw_steer_rule, r);
	steer_jumpers(r, -1);
	steer_unlock();
	free(r);
}

static bool steer_rule_names_tir(const struct hw_steer_rule *r, uint32_t tirn)
{
	if (r->act.type == HW_STEER_ACT_TIR)
		return r->act.tirn == tirn;
	if (r->act.type == HW_STEER_ACT_SAMPLE)
		return r->act.sampler->tirn == tirn;
	for (uint32_t i = 0; r->act.type == HW_STEER_ACT_DESTS && i < r->act.n_dests; i++)
		if (r->dests[i].type == HW_STEER_ACT_TIR && r->dests[i].tirn == tirn)
			return true;
	return false;
}

static bool steer_table_names_tir(const struct hw_steer_table *t, uint32_t tirn)
{
	for (const struct hw_steer_matcher *m = t->matchers; m != NULL; m = m->next)
		for (const struct hw_steer_rule *r = m->rules; r != NULL; r = r->next)
			if (steer_rule_names_tir(r, tirn))
				return true;
	return false;
}

int hw_steer_tir_in_use(uint32_t tirn)
{
	bool used = false;

	steer_rlock();
	for (const struct hw_steer_domain *d = steer_domains; d != NULL && !used; d = d->next)
		for (const struct hw_steer_table *t = d->tables; t != NULL && !used; t = t->next)
			used = steer_table_names_tir(t, tirn);
	steer_unlock();
	return used;
}

/* ---- Lookup ---- */

static bool steer_match(const uint64_t f[STEER_WORDS], const struct hw_steer_matcher *m, const struct hw_steer_rule *r)
{
	for (size_t i = 0; i < STEER_WORDS; i++)
		if ((f[i] & m->mask[i]) != r->value[i])
			return false;
	return true;
}

/* The first matching rule of t, or NULL on a miss. */
static const struct hw_steer_rule *steer_table_lookup(const struct hw_steer_table *t, const uint64_t f[STEER_WORDS])
{
	for (const struct hw_steer_matcher *m = t->matchers; m != NULL; m = m->next)
		for (const struct hw_steer_rule *r = m->rules; r != NULL; r = r->next)
			if (steer_match(f, m, r))
				return r;
	return NULL;
}

/* The domain's root: its lowest level, the first created among equals. */
static const struct hw_steer_table *steer_root(const struct hw_steer_domain *d)
{
	const struct hw_steer_table *root = NULL;

	for (const struct hw_steer_table *t = d->tables; t != NULL; t = t->next)
		if (root == NULL || t->level < root->level)
			root = t;
	return root;
}

#define STEER_MACS 12
#define STEER_TAG 4
#define STEER_TPID_8021Q 0x8100

/* A rule's edits on the frame; false when a push would pass its room (the frame is dropped). */
static bool steer_edit(const struct hw_steer_rule *r, struct hw_steer_frame *f)
{
	for (uint32_t i = 0; i < r->n_edits; i++) {
		const struct hw_steer_action *a = &r->edits[i];
		uint8_t *tag = f->buf + STEER_MACS;

		if (a->type == HW_STEER_ACT_TAG)
			continue;
		if (a->type == HW_STEER_ACT_REFORMAT) {
			if (!hw_reformat_apply(a->reformat, f))
				return false;
		} else if (a->type == HW_STEER_ACT_MODIFY) {
			hw_modhdr_apply(a->modhdr, f);
		} else if (a->type == HW_STEER_ACT_PUSH_VLAN) {
			if (f->len < STEER_MACS || f->cap - f->len < STEER_TAG)
				return false;
			memmove(tag + STEER_TAG, tag, f->len - STEER_MACS);
			memcpy(tag, a->vlan, STEER_TAG);
			f->len += STEER_TAG;
		} else if (f->len >= STEER_MACS + STEER_TAG && (tag[0] << 8 | tag[1]) == STEER_TPID_8021Q) {
			memmove(tag, tag + STEER_TAG, f->len - STEER_MACS - STEER_TAG);
			f->len -= STEER_TAG;
		}
	}
	return true;
}

/* Applies a matching rule's edits and parses the frame again when there were any; false to drop it. */
static bool steer_apply(const struct hw_steer_rule *r, struct hw_steer_frame *f, uint64_t w[STEER_WORDS])
{
	uint8_t fields[HW_STEER_MATCH_BYTES];

	if (r->n_edits == 0 || (r->n_edits == 1 && r->tag != 0))
		return true;
	if (!steer_edit(r, f))
		return false;
	hw_steer_parse(f->buf, f->len, fields);
	steer_load(w, fields);
	return true;
}

static void steer_add_tir(struct hw_steer_verdict *v, uint32_t tirn)
{
	if (v->n_tirs < HW_STEER_DESTS_MAX)
		v->tirns[v->n_tirs++] = tirn;
	v->tirn = v->tirns[0];
}

static bool steer_walk(const struct hw_steer_table *t, struct hw_steer_frame *fr, uint64_t f[STEER_WORDS],
		       struct hw_steer_verdict *v, bool copy);

/* A dest array: each TIR, and what each table's lookup (a copy, unedited) gives; TIR when any copy lands. */
static bool steer_dests(const struct hw_steer_rule *r, struct hw_steer_frame *fr, uint64_t f[STEER_WORDS],
			struct hw_steer_verdict *v)
{
	for (uint32_t i = 0; i < r->act.n_dests; i++) {
		struct hw_steer_verdict sub = {0};

		if (r->dests[i].type == HW_STEER_ACT_TIR) {
			steer_add_tir(v, r->dests[i].tirn);
			continue;
		}
		if (steer_walk(r->dests[i].table, fr, f, &sub, true) && sub.type == HW_STEER_ACT_TIR)
			for (uint32_t k = 0; k < sub.n_tirs; k++)
				steer_add_tir(v, sub.tirns[k]);
	}
	v->type = v->n_tirs != 0 ? HW_STEER_ACT_TIR : HW_STEER_ACT_DROP;
	return true;
}

/* The rule's counters count the frame as it reached the rule. */
static void steer_count(const struct hw_steer_rule *r, const struct hw_steer_frame *fr)
{
	for (uint32_t i = 0; i < r->n_counters; i++)
		hw_counter_add(r->counters[i], fr->len);
}

/* A sampler: one frame in ratio, from the first, also to its TIR (counted); the frame goes on to its table. */
static const struct hw_steer_table *steer_sample(struct hw_steer_sampler *s, const struct hw_steer_frame *fr,
						 struct hw_steer_verdict *v)
{
	if (atomic_fetch_add_explicit(&s->seen, 1, memory_order_relaxed) % s->ratio == 0) {
		if (s->counter != NULL)
			hw_counter_add(s->counter, fr->len);
		if (s->tirn != 0)
			steer_add_tir(v, s->tirn);
	}
	return s->table;
}

/*
 * A lookup from table t; false on a miss (none matched, or the default
 * miss). A copy (a dest array's table) takes no edits and no tags.
 */
static bool steer_walk(const struct hw_steer_table *t, struct hw_steer_frame *fr, uint64_t f[STEER_WORDS],
		       struct hw_steer_verdict *v, bool copy)
{
	/* Jumps only go to higher levels: the walk cannot loop. */
	while (t != NULL) {
		const struct hw_steer_rule *r = steer_table_lookup(t, f);

		if (r == NULL)
			return false;
		if (r->n_counters != 0)
			steer_count(r, fr);
		if (!copy && !steer_apply(r, fr, f)) {
			*v = (struct hw_steer_verdict){ .type = HW_STEER_ACT_DROP };
			return true;
		}
		if (!copy && r->tag != 0)
			v->flow_tag = r->tag;
		if (r->act.type == HW_STEER_ACT_MISS)
			return false;
		if (r->act.type == HW_STEER_ACT_DESTS)
			return steer_dests(r, fr, f, v);
		if (r->act.type == HW_STEER_ACT_SAMPLE) {
			t = steer_sample(r->act.sampler, fr, v);
			continue;
		}
		if (r->act.type != HW_STEER_ACT_TABLE) {
			v->type = r->act.type;
			if (r->act.type == HW_STEER_ACT_TIR)
				steer_add_tir(v, r->act.tirn);
			return true;
		}
		t = r->act.table;
	}
	return false;
}

/* One domain's verdict; false on a miss. */
static bool steer_domain_lookup(const struct hw_steer_domain *d, struct hw_steer_frame *fr, uint64_t f[STEER_WORDS],
				struct hw_steer_verdict *v)
{
	bool hit;

	*v = (struct hw_steer_verdict){0};
	hit = steer_walk(steer_root(d), fr, f, v, false);
	/* Sampled copies land whatever became of the frame they were taken from. */
	if (v->n_tirs != 0 && v->type != HW_STEER_ACT_TIR) {
		v->type = HW_STEER_ACT_TIR;
		return true;
	}
	return hit;
}

/* One stage: the first domain of that type with a verdict; false when all miss. */
static bool steer_stage(enum hw_steer_domain_type type, struct hw_steer_frame *fr, uint64_t f[STEER_WORDS],
			struct hw_steer_verdict *v)
{
	for (const struct hw_steer_domain *d = steer_domains; d != NULL; d = d->next)
		if (d->type == type && steer_domain_lookup(d, fr, f, v))
			return true;
	return false;
}

/* Runs the two stages; a DROP or TIR ends the path, WIRE or a miss goes on; fallback when nothing ended it. */
static struct hw_steer_verdict steer_path(struct hw_steer_frame *fr, enum hw_steer_domain_type first,
					  enum hw_steer_domain_type second, enum hw_steer_action_type fallback)
{
	uint8_t fields[HW_STEER_MATCH_BYTES];
	uint64_t f[STEER_WORDS];
	struct hw_steer_verdict v = { .type = fallback };
	const enum hw_steer_domain_type stages[2] = { first, second };

	hw_steer_parse(fr->buf, fr->len, fields);
	steer_load(f, fields);
	steer_rlock();
	for (int i = 0; i < 2; i++) {
		struct hw_steer_verdict sv;

		if (steer_stage(stages[i], fr, f, &sv) && sv.type != HW_STEER_ACT_WIRE) {
			v = sv;
			break;
		}
	}
	steer_unlock();
	return v;
}

struct hw_steer_verdict hw_steer_rx(struct hw_steer_frame *f)
{
	return steer_path(f, HW_STEER_FDB, HW_STEER_NIC_RX, HW_STEER_ACT_DROP);
}

struct hw_steer_verdict hw_steer_tx(struct hw_steer_frame *f)
{
	return steer_path(f, HW_STEER_NIC_TX, HW_STEER_FDB, HW_STEER_ACT_WIRE);
}

/* ---- Parsing: byte offsets in fte_match_set_lyr_2_4 (mlx5_ifc dr_match_spec, bit offset / 8) ---- */

#define F_SMAC 0	/* smac_47_16, smac_15_0 */
#define F_ETHERTYPE 6
#define F_DMAC 8	/* dmac_47_16, dmac_15_0 */
#define F_VLAN 14	/* first_prio 3 | first_cfi 1 | first_vid 12: the 802.1Q TCI as is */
#define F_IP_PROTOCOL 16
#define F_IP_DSCP_ECN 17 /* dscp 6 | ecn 2: the IPv4 TOS / IPv6 traffic class as is */
#define F_FLAGS 18	/* 16 bits: cvlan_tag 15, svlan_tag 14, frag 13, ip_version 12..9, tcp_flags 8..0 */
#define F_TCP_SPORT 20
#define F_TCP_DPORT 22
#define F_IHL 26	/* ipv4_ihl in the high nibble; l3_ok etc. below stay 0 */
#define F_TTL 27
#define F_UDP_SPORT 28
#define F_UDP_DPORT 30
#define F_SRC_IP 32	/* 16 bytes; IPv4 in the last 4 */
#define F_DST_IP 48

#define FL_CVLAN (1u << 15)
#define FL_FRAG (1u << 13)
#define FL_IP_VERSION_SHIFT 9
#define FL_TCP_FLAGS_MASK 0x1ffu

#define ETH_HDR 14
#define VLAN_HDR 4
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define IPV4_HDR_MIN 20
#define IPV6_HDR 40
#define IPV4_MF 0x2000
#define IPV4_OFFSET_MASK 0x1fff
#define PROTO_TCP 6
#define PROTO_UDP 17
#define TCP_HDR_MIN 20
#define UDP_HDR 8

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The 16-bit flags word is assembled across layers: or bits into it. */
static void set_flags(uint8_t *fields, uint16_t bits)
{
	wr16(fields + F_FLAGS, rd16(fields + F_FLAGS) | bits);
}

/* TCP or UDP at l4 (the rest of the frame: n bytes). */
static void parse_l4(uint8_t proto, const uint8_t *l4, uint32_t n, uint8_t *fields)
{
	if (proto == PROTO_TCP && n >= TCP_HDR_MIN) {
		memcpy(fields + F_TCP_SPORT, l4, 4); /* source and destination ports, adjacent in both */
		set_flags(fields, rd16(l4 + 12) & FL_TCP_FLAGS_MASK);
	} else if (proto == PROTO_UDP && n >= UDP_HDR) {
		memcpy(fields + F_UDP_SPORT, l4, 4);
	}
}

static void parse_ipv4(const uint8_t *ip, uint32_t n, uint8_t *fields)
{
	uint32_t ihl;
	uint16_t frag;

	if (n < IPV4_HDR_MIN || ip[0] >> 4 != 4)
		return;
	ihl = ip[0] & 0xfu;
	frag = rd16(ip + 6);
	fields[F_IP_PROTOCOL] = ip[9];
	fields[F_IP_DSCP_ECN] = ip[1];
	fields[F_TTL] = ip[8];
	fields[F_IHL] = (uint8_t)(ihl << 4);
	memcpy(fields + F_SRC_IP + 12, ip + 12, 4);
	memcpy(fields + F_DST_IP + 12, ip + 16, 4);
	set_flags(fields, 4u << FL_IP_VERSION_SHIFT);
	if ((frag & IPV4_MF) || (frag & IPV4_OFFSET_MASK)) {
		set_flags(fields, FL_FRAG);
		return; /* a fragment's ports are not matched: only the first has them */
	}
	if (ihl * 4 >= IPV4_HDR_MIN && ihl * 4 <= n)
		parse_l4(ip[9], ip + ihl * 4, n - ihl * 4, fields);
}

/* IPv6 without extension headers: the next header is the protocol. */
static void parse_ipv6(const uint8_t *ip, uint32_t n, uint8_t *fields)
{
	if (n < IPV6_HDR || ip[0] >> 4 != 6)
		return;
	fields[F_IP_PROTOCOL] = ip[6];
	fields[F_IP_DSCP_ECN] = (uint8_t)(ip[0] << 4 | ip[1] >> 4); /* the traffic class */
	fields[F_TTL] = ip[7];
	memcpy(fields + F_SRC_IP, ip + 8, 16);
	memcpy(fields + F_DST_IP, ip + 24, 16);
	set_flags(fields, 6u << FL_IP_VERSION_SHIFT);
	parse_l4(ip[6], ip + IPV6_HDR, n - IPV6_HDR, fields);
}

void hw_steer_parse(const uint8_t *frame, uint32_t len, uint8_t fields[HW_STEER_MATCH_BYTES])
{
	uint32_t l3 = ETH_HDR;
	uint16_t type;

	memset(fields, 0, HW_STEER_MATCH_BYTES);
	if (len < ETH_HDR)
		return; /* a runt has no header to match */
	memcpy(fields + F_DMAC, frame, 6);
	memcpy(fields + F_SMAC, frame + 6, 6);
	type = rd16(frame + 12);
	if (type == ETHERTYPE_VLAN && len >= ETH_HDR + VLAN_HDR) {
		set_flags(fields, FL_CVLAN);
		memcpy(fields + F_VLAN, frame + 14, 2);
		type = rd16(frame + 16);
		l3 += VLAN_HDR;
	}
	wr16(fields + F_ETHERTYPE, type);
	if (type == ETHERTYPE_IPV4)
		parse_ipv4(frame + l3, len - l3, fields);
	else if (type == ETHERTYPE_IPV6)
		parse_ipv6(frame + l3, len - l3, fields);
}
