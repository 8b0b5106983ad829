/*
 * hw_steer — flow steering of the Ethernet port (hw_eth.h), as the card's
 * steering tables (and mlx5dv_dr over them) see it: domains (NIC receive,
 * NIC transmit, FDB), tables by level, matchers (a priority and a mask),
 * rules (a value under their matcher's mask, and actions).
 *
 * Matching is over the outer headers in the PRM's fte_match_set_lyr_2_4
 * layout (64 bytes: smac, ethertype, dmac, VLAN, IP protocol and version,
 * TCP/UDP ports, TTL, IPv4/IPv6 source and destination, big-endian as the
 * PRM lays them), which hw_steer_parse fills from a frame. A rule matches
 * when (fields & mask) == (value & mask) over the 64 bytes.
 *
 * Lookup, in a table: matchers by priority (lower first, then creation
 * order), in each its rules in creation order; the first matching rule's
 * edits (push or pop an 802.1Q tag) change the frame, and its terminal
 * action decides: a TIR (deliver), another table of the same domain at a
 * higher level (look there, at the edited frame), drop, the wire (FDB and
 * NIC transmit only), or the default miss. A rule without a terminal action
 * takes the default miss. A miss in a table, or the default miss, ends the
 * lookup of that domain as if no rule had matched: the frame goes on along
 * its path (below), which is what mlx5's default miss does (a NIC receive
 * domain's miss goes to the kernel's tables, here the domains after it and
 * the verbs flows; a NIC transmit's to the wire).
 *
 * Paths: a frame from the wire (receive) goes through the FDB domains, then
 * the NIC receive domains, each from its lowest-level table; a miss
 * everywhere drops it. A frame from an SQ (transmit) goes through the NIC
 * transmit domains, then the FDB domains; it goes to the wire unless a rule
 * drops it (or sends it to a TIR: the FDB's loop to a local queue).
 * Domains of one type are looked at in creation order; the first verdict
 * wins.
 */
#ifndef HW_STEER_H_
#define HW_STEER_H_

#include <stdatomic.h>
#include <stdint.h>

#include "hw_mem.h"

#define HW_STEER_MATCH_BYTES 64 /* fte_match_set_lyr_2_4 */

enum hw_steer_domain_type {
	HW_STEER_NIC_RX,
	HW_STEER_NIC_TX,
	HW_STEER_FDB,
};

enum hw_steer_action_type {
	HW_STEER_ACT_DROP,
	HW_STEER_ACT_TIR,   /* tirn */
	HW_STEER_ACT_TABLE, /* table */
	HW_STEER_ACT_WIRE,  /* to the port's wire (an FDB's uplink vport, a NIC transmit's default) */
	HW_STEER_ACT_MISS,  /* the default miss: the domain's lookup ends as a miss */
	HW_STEER_ACT_DESTS, /* dests: a copy of the frame to each (TIR or table), as mlx5dv_dr's dest array */
	/* Edits, not terminal: */
	HW_STEER_ACT_PUSH_VLAN, /* vlan: the 4 bytes (TPID, TCI, network order) inserted after the MACs */
	HW_STEER_ACT_POP_VLAN,	/* the outer 802.1Q tag removed (an untagged frame is left as it is) */
	HW_STEER_ACT_REFORMAT,	/* reformat: a tunnel header added or removed (hw_reformat.h) */
	HW_STEER_ACT_MODIFY,	/* modify: header fields set, added to or copied (hw_modhdr.h) */
	/* Neither: */
	HW_STEER_ACT_TAG, /* tag: the flow tag the receive CQE carries (24 bits, NIC receive only) */
	HW_STEER_ACT_COUNT, /* counter: the frames that take the rule and their bytes (hw_counter.h) */
	/* Terminal, NIC receive only: */
	HW_STEER_ACT_SAMPLE, /* sampler: every frame on to its table, one in ratio also a copy to its TIR */
};

#define HW_STEER_DESTS_MAX 16 /* destinations of one DESTS action, TIRs of one verdict */

struct hw_steer_domain;
struct hw_steer_table;
struct hw_steer_matcher;
struct hw_steer_rule;
struct hw_reformat;
struct hw_modhdr;
struct hw_counter;

/*
 * A sampler: every frame goes on to table (of the rule's domain, at a
 * higher level), and the 1st, (ratio+1)th, ... frame that takes it also
 * goes, unedited, to TIR tirn (0: no copy) after counter (NULL: none)
 * counted it. The rule's own edits do not reach the copy.
 */
struct hw_steer_sampler {
	uint32_t ratio;
	struct hw_steer_table *table;
	uint32_t tirn;
	struct hw_counter *counter;
	_Atomic uint64_t seen;
};

struct hw_steer_action {
	enum hw_steer_action_type type;
	uint32_t tirn;
	struct hw_steer_table *table;
	uint8_t vlan[4];
	uint32_t tag;
	uint32_t n_dests;			  /* DESTS: 1 .. HW_STEER_DESTS_MAX */
	const struct hw_steer_action *dests;	  /* DESTS: TIR or TABLE each; copied by the rule */
	/* Owned by the caller, who keeps each alive while a rule names it: */
	const struct hw_reformat *reformat;
	const struct hw_modhdr *modhdr;
	struct hw_counter *counter;
	struct hw_steer_sampler *sampler;
};

/* A frame the lookup may edit in place: len bytes in buf, which holds cap. */
struct hw_steer_frame {
	uint8_t *buf;
	uint32_t len;
	uint32_t cap;
};

/* HW_ERR_INVAL for an unknown type; HW_ERR_NOMEM. */
enum hw_status hw_steer_domain_create(enum hw_steer_domain_type type, struct hw_steer_domain **out);
/* HW_ERR_INVAL while it has tables. */
enum hw_status hw_steer_domain_destroy(struct hw_steer_domain *d);

/* Any level, as rdma-core's software steering takes any (0 .. UINT32_MAX). */
enum hw_status hw_steer_table_create(struct hw_steer_domain *d, uint32_t level, struct hw_steer_table **out);
/* HW_ERR_INVAL while it has matchers or a rule of another table jumps to it. */
enum hw_status hw_steer_table_destroy(struct hw_steer_table *t);

enum hw_status hw_steer_matcher_create(struct hw_steer_table *t, uint16_t priority,
				       const uint8_t mask[HW_STEER_MATCH_BYTES], struct hw_steer_matcher **out);
/* HW_ERR_INVAL while it has rules. */
enum hw_status hw_steer_matcher_destroy(struct hw_steer_matcher *m);

/*
 * n actions (1 .. 8): edits, applied in the order given, a tag, counters
 * (each counts the frame as the rule takes it, before the rule's edits),
 * and at most one terminal action (DROP, TIR, TABLE, WIRE, MISS, DESTS,
 * SAMPLE; none is MISS). HW_ERR_KEY for a TIR that does not exist;
 * HW_ERR_INVAL for a table of another domain or not of a higher level,
 * WIRE or PUSH_VLAN in a NIC receive domain, POP_VLAN or TAG outside one, a
 * reformat that does not fit the domain's direction (hw_reformat_fits), a
 * SAMPLE outside NIC receive, several terminal actions, a DESTS of no or
 * too many destinations, or one that is not a TIR or table.
 * A DESTS's table is looked up for its copy as a jump would, without the
 * edits of its rules (every copy keeps the frame's bytes) or their tags.
 */
enum hw_status hw_steer_rule_create(struct hw_steer_matcher *m, const uint8_t value[HW_STEER_MATCH_BYTES],
				    const struct hw_steer_action *acts, uint32_t n, struct hw_steer_rule **out);
void hw_steer_rule_destroy(struct hw_steer_rule *r);

/* Whether a rule names TIR tirn (hw_eth_tir_destroy refuses then). */
int hw_steer_tir_in_use(uint32_t tirn);

/* The outer header fields of a frame (len bytes), in the match layout; fields the frame lacks stay 0. */
void hw_steer_parse(const uint8_t *frame, uint32_t len, uint8_t fields[HW_STEER_MATCH_BYTES]);

/*
 * Where a frame goes: DROP, TIR or WIRE. TIR: the same frame to each of
 * tirns[0 .. n_tirs) (one, or a dest array's TIRs and what its tables'
 * lookups gave), tirn the first; flow_tag the last tag action of the rules
 * taken before the terminal one, 0 for none.
 */
struct hw_steer_verdict {
	enum hw_steer_action_type type;
	uint32_t tirn;
	uint32_t flow_tag;
	uint32_t n_tirs;
	uint32_t tirns[HW_STEER_DESTS_MAX];
};

/*
 * A frame from the wire: FDB, then NIC receive. The rules' edits change f
 * (a push that would pass cap drops the frame).
 */
struct hw_steer_verdict hw_steer_rx(struct hw_steer_frame *f);
/* A frame from an SQ: NIC transmit, then FDB; WIRE unless a rule says otherwise. Edits as hw_steer_rx. */
struct hw_steer_verdict hw_steer_tx(struct hw_steer_frame *f);

#endif /* HW_STEER_H_ */
