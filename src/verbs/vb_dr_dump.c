/*
 * vb_dr_dump — mlx5dv_dump_dr_domain / _table / _matcher / _rule: the
 * objects as text, one comma-separated record a line, in the format of
 * rdma-core's dr_dbg.c (record types 3000.. for the domain, 3100.. tables,
 * 3200.. matchers, 3300.. rules, 3400.. actions; ids are the objects'
 * addresses, the domain's id (pid << 8) | type). What mlx5 writes about ICM
 * memory (STE entries, anchors, send rings, buddies) has nothing behind it
 * here and is left out, or 0 where a field of a written record needs it.
 * A domain dump is the domain, then each table with its matchers and their
 * rules; a table, matcher or rule dump starts with what holds it, as
 * rdma-core's does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vb_int.h"

enum {
	REC_DOMAIN = 3000,
	REC_TABLE = 3100,
	REC_MATCHER = 3200,
	REC_MATCHER_MASK = 3205,
	REC_RULE = 3300,
	REC_ACT_ENCAP_L2 = 3400,
	REC_ACT_MODIFY_HDR = 3402,
	REC_ACT_DROP = 3403,
	REC_ACT_QP = 3404,
	REC_ACT_FT = 3405,
	REC_ACT_CTR = 3406,
	REC_ACT_TAG = 3407,
	REC_ACT_VPORT = 3408,
	REC_ACT_DECAP_L2 = 3409,
	REC_ACT_TIR = 3411,
	REC_ACT_PUSH_VLAN = 3412,
	REC_ACT_POP_VLAN = 3413,
	REC_ACT_SAMPLER = 3415,
	REC_ACT_DEST_ARRAY = 3416,
	REC_ACT_MISS = 3423,
};

#define DUMP_VERSION "44.0"	/* the rdma-core release whose dump format this is */
#define DUMP_VPORT_UPLINK 0xffff
/* The PRM's flow table types (FS_FT_NIC_RX, FS_FT_NIC_TX, FS_FT_FDB), as rdma-core's table_type. */
static const int dump_table_type[] = {
	[MLX5DV_DR_DOMAIN_TYPE_NIC_RX] = 0x0,
	[MLX5DV_DR_DOMAIN_TYPE_NIC_TX] = 0x1,
	[MLX5DV_DR_DOMAIN_TYPE_FDB] = 0x4,
};

static uint64_t dump_id(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static uint64_t dump_domain_id(const struct mlx5dv_dr_domain *d)
{
	return ((uint64_t)getpid() << 8) | ((unsigned)d->type & 0xff);
}

/* Each fprintf's result: a negative one ends the dump. */
static int dump_domain(FILE *f, const struct mlx5dv_dr_domain *d)
{
	/* type, gvmi, software steering, version, device, flags, STE / modify / pattern buddies */
	return fprintf(f, "%d,0x%" PRIx64 ",%d,0%x,%d,%s,%s,%u,%u,%u,%u\n", REC_DOMAIN, dump_domain_id(d), (int)d->type,
		       0, 1, DUMP_VERSION, d->ctx->device->dev_name, 0u, 0u, 0u, 0u);
}

static int dump_table(FILE *f, const struct mlx5dv_dr_table *t)
{
	return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",%d,%u\n", REC_TABLE, dump_id(t), dump_domain_id(t->dmn),
		       dump_table_type[t->dmn->type], t->level);
}

/* The matcher, and its mask: the outer part in hex (the parts beyond hold zeros only, so stay empty). */
static int dump_matcher(FILE *f, const struct mlx5dv_dr_matcher *m)
{
	char hex[2 * VB_DR_MATCH_PART + 1];
	int rc;

	rc = fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",%d\n", REC_MATCHER, dump_id(m), dump_id(m->tbl), m->priority);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < VB_DR_MATCH_PART; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->mask[i]);
	return fprintf(f, "%d,0x%" PRIx64 ",%s,,,,,,\n", REC_MATCHER_MASK, dump_id(m), (m->criteria & 1) ? hex : "");
}

/* Reformat, modify, counter and sampler records; the ICM addresses and object numbers the card has are 0 here. */
static int dump_action_more(FILE *f, uint64_t rule, const struct mlx5dv_dr_action *a, uint64_t id)
{
	switch (a->type) {
	case VB_DR_ACT_REFORMAT:
		if (a->reformat_type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2)
			return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 "\n", REC_ACT_DECAP_L2, id, rule);
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_ENCAP_L2, id, rule, 0u);
	case VB_DR_ACT_MODIFY: /* index, single-action optimisation, and no pattern */
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x,%d,0x%x,0x%" PRIx32 ",0x%" PRIx32 "\n",
			       REC_ACT_MODIFY_HDR, id, rule, 0u, 0, 0u, 0u, 0u);
	case VB_DR_ACT_COUNTER:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_CTR, id, rule, a->devx->object_id);
	case VB_DR_ACT_SAMPLER: /* the default table, then objects and ICM addresses */
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%" PRIx64 ",0x%x,0x%x,0x%" PRIx64 ",0x%" PRIx64 "\n",
			       REC_ACT_SAMPLER, id, rule, dump_id(a->tbl), 0u, 0u, (uint64_t)0, (uint64_t)0);
	default:
		return 0;
	}
}

static int dump_action(FILE *f, uint64_t rule, const struct mlx5dv_dr_action *a)
{
	uint64_t id = dump_id(a);
	uint32_t vlan;

	switch (a->type) {
	case VB_DR_ACT_DROP:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 "\n", REC_ACT_DROP, id, rule);
	case VB_DR_ACT_MISS:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 "\n", REC_ACT_MISS, id, rule);
	case VB_DR_ACT_QP:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_QP, id, rule, a->qp->qp_num);
	case VB_DR_ACT_TIR: /* mlx5 writes the TIR's ICM address; its number is what there is */
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_TIR, id, rule, a->tirn);
	case VB_DR_ACT_TABLE: /* the table's flow-table object number (none here), then the table */
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x,0x%" PRIx64 "\n", REC_ACT_FT, id, rule, 0u,
			       dump_id(a->tbl));
	case VB_DR_ACT_WIRE:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_VPORT, id, rule, DUMP_VPORT_UPLINK);
	case VB_DR_ACT_PUSH_VLAN:
		memcpy(&vlan, a->vlan, sizeof(vlan)); /* as the program gave it: network order */
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_PUSH_VLAN, id, rule, vlan);
	case VB_DR_ACT_POP_VLAN:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 "\n", REC_ACT_POP_VLAN, id, rule);
	case VB_DR_ACT_TAG:
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x\n", REC_ACT_TAG, id, rule, a->tag);
	case VB_DR_ACT_DESTS: /* its flow-table object and ICM addresses: none here */
		return fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 ",0x%x,0x%" PRIx64 ",0x%" PRIx64 "\n", REC_ACT_DEST_ARRAY,
			       id, rule, 0u, (uint64_t)0, (uint64_t)0);
	default:
		return dump_action_more(f, rule, a, id);
	}
}

static int dump_rule(FILE *f, const struct mlx5dv_dr_rule *r)
{
	int rc = fprintf(f, "%d,0x%" PRIx64 ",0x%" PRIx64 "\n", REC_RULE, dump_id(r), dump_id(r->matcher));

	for (size_t i = 0; rc >= 0 && i < r->n_acts; i++)
		rc = dump_action(f, dump_id(r), r->acts[i]);
	return rc;
}

static int dump_matcher_all(FILE *f, const struct mlx5dv_dr_matcher *m)
{
	int rc = dump_matcher(f, m);

	for (const struct mlx5dv_dr_rule *r = m->rules; rc >= 0 && r != NULL; r = r->next)
		rc = dump_rule(f, r);
	return rc;
}

static int dump_table_all(FILE *f, const struct mlx5dv_dr_table *t)
{
	int rc = dump_table(f, t);

	for (const struct mlx5dv_dr_matcher *m = t->matchers; rc >= 0 && m != NULL; m = m->next)
		rc = dump_matcher_all(f, m);
	return rc;
}

static int dump_domain_all(FILE *f, const struct mlx5dv_dr_domain *d)
{
	int rc = dump_domain(f, d);

	for (const struct mlx5dv_dr_table *t = d->tables; rc >= 0 && t != NULL; t = t->next)
		rc = dump_table_all(f, t);
	return rc;
}

/* What kind names, its holders first; the domain's lock held. */
static int dump_kind(FILE *f, enum vb_dr_dump_kind kind, void *obj)
{
	const struct mlx5dv_dr_rule *r = obj;
	const struct mlx5dv_dr_matcher *m = kind == VB_DR_DUMP_RULE ? r->matcher : obj;
	const struct mlx5dv_dr_table *t = kind >= VB_DR_DUMP_MATCHER ? m->tbl : obj;
	int rc;

	if (kind == VB_DR_DUMP_DOMAIN)
		return dump_domain_all(f, obj);
	rc = dump_domain(f, t->dmn);
	if (rc >= 0 && kind == VB_DR_DUMP_TABLE)
		return dump_table_all(f, t);
	if (rc >= 0)
		rc = dump_table(f, t);
	if (rc >= 0 && kind == VB_DR_DUMP_MATCHER)
		return dump_matcher_all(f, m);
	if (rc >= 0)
		rc = dump_matcher(f, m);
	return rc >= 0 ? dump_rule(f, r) : rc;
}

static struct mlx5dv_dr_domain *dump_domain_of(enum vb_dr_dump_kind kind, void *obj)
{
	switch (kind) {
	case VB_DR_DUMP_DOMAIN:
		return obj;
	case VB_DR_DUMP_TABLE:
		return ((struct mlx5dv_dr_table *)obj)->dmn;
	case VB_DR_DUMP_MATCHER:
		return ((struct mlx5dv_dr_matcher *)obj)->tbl->dmn;
	default:
		return ((struct mlx5dv_dr_rule *)obj)->matcher->tbl->dmn;
	}
}

/* 0, or the errno of the failed write (EIO when the stream set none). */
int vb_dv_dr_dump(FILE *f, enum vb_dr_dump_kind kind, void *obj)
{
	struct mlx5dv_dr_domain *d = dump_domain_of(kind, obj);
	int rc;

	pthread_mutex_lock(&d->lock);
	errno = 0;
	rc = dump_kind(f, kind, obj);
	if (rc >= 0 && fflush(f) != 0)
		rc = -1;
	pthread_mutex_unlock(&d->lock);
	if (rc >= 0)
		return 0;
	return errno != 0 ? errno : EIO;
}
