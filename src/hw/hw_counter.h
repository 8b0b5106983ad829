/*
 * hw_counter — flow counters: the frames and bytes that took the steering
 * rules naming a counter (hw_steer.h), as the card's FLOW_COUNTER objects
 * (ALLOC_FLOW_COUNTER, QUERY_FLOW_COUNTER) keep them. A counter has a
 * 24-bit id of its own, unique while it lives. The data path adds with
 * relaxed atomics: a query sees every frame that finished its lookup
 * before the query began.
 */
#ifndef HW_COUNTER_H_
#define HW_COUNTER_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_mem.h"

struct hw_counter;

/* HW_ERR_NOMEM. */
enum hw_status hw_counter_alloc(struct hw_counter **out);
void hw_counter_free(struct hw_counter *c);
uint32_t hw_counter_id(const struct hw_counter *c);

/* One frame of bytes bytes. */
void hw_counter_add(struct hw_counter *c, uint64_t bytes);

/* The counts so far; clear: start again from 0 (frames counted meanwhile are in the next read). */
void hw_counter_read(struct hw_counter *c, bool clear, uint64_t *packets, uint64_t *bytes);

#endif /* HW_COUNTER_H_ */
