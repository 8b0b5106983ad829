/*
 * hw_pp — the device's packet-pacing rate table (the PRM's
 * SET_PP_RATE_LIMIT entries).
 *
 * An entry is a set_pp_rate_limit_context (rate_limit in kbit/s,
 * burst_upper_bound in bytes, typical_packet_size) under an index a queue
 * names to be paced by it. The table has HW_PP_ENTRIES entries for the whole
 * machine: each is a slot of the number table's HW_ID_PP kind (hw_ids.h),
 * so every process of the user counts against the same capacity, and the
 * index is the slot's number (1 .. HW_PP_ENTRIES; 0 is "no rate"). As
 * mlx5_rl_add_rate_raw does, a request with the context of an entry this
 * process already holds shares that entry (same index, counted), unless it
 * asks for a dedicated one; a dedicated entry is never shared.
 */
#ifndef HW_PP_H_
#define HW_PP_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_mem.h"

#define HW_PP_ENTRIES 127u  /* packet_pacing_rate_table_size 128, entry 0 reserved */
#define HW_PP_CTX_BYTES 48u /* set_pp_rate_limit_context */

/* The fields of a context, host order. */
struct hw_pp_rate {
	uint32_t rate_kbps;
	uint32_t burst;	  /* burst_upper_bound, bytes; 0: the device's default */
	uint16_t typical; /* typical_packet_size, bytes */
};

/* Reads the fields of a context (big-endian, PRM layout) of len bytes (shorter: the rest 0). */
void hw_pp_parse(const void *ctx, uint32_t len, struct hw_pp_rate *r);
/* The context of those fields (the inverse of hw_pp_parse). */
void hw_pp_ctx(const struct hw_pp_rate *r, uint8_t ctx[HW_PP_CTX_BYTES]);
/* Takes an entry for the context: HW_ERR_NOMEM when the machine's table is full. */
enum hw_status hw_pp_alloc(const void *ctx, uint32_t len, bool dedicated, uint16_t *index);
/* Drops one use of the entry: HW_ERR_INVAL when this process holds no such entry. */
enum hw_status hw_pp_free(uint16_t index);
/* The rate of an entry this process holds: false if it holds none. */
bool hw_pp_lookup(uint16_t index, struct hw_pp_rate *r);

#endif /* HW_PP_H_ */
