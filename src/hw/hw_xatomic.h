/*
 * Extended (masked) atomics, as mlx5's MASKED_CS and MASKED_FA WQEs run them
 * on the responder's memory: 4 or 8 bytes (the WQE's opmod, 8 | log2(size) - 2),
 * operands big-endian in the WQE, the memory in host order.
 */
#ifndef SOFTDPU_HW_XATOMIC_H
#define SOFTDPU_HW_XATOMIC_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What the DevX ATOMIC capability page reports (PRM atomic_caps): the
 * operations (bits 0..3: compare-swap, fetch-add, masked compare-swap,
 * masked fetch-add), the operand sizes on RC and DC (bit n: 2^n bytes) and
 * the 8-byte endianness mode (1: host order, the answers of the 8-byte forms).
 */
#define HW_XATOMIC_CAP_OPS 0xfu
#define HW_XATOMIC_CAP_SIZES 0xcu
#define HW_XATOMIC_CAP_8B_MODE 1u

/* What a masked WQE asks for, decoded from its opmod and atomic segments. */
struct hw_xatomic {
	bool cs;	  /* MASKED_CS; else MASKED_FA */
	uint32_t size;	  /* 4 or 8 */
	uint32_t seg_len; /* bytes of atomic segments after raddr: 16, or 32 for an 8-byte CS */
	uint64_t swap_add, compare, swap_mask, compare_mask; /* FA: add and field boundaries (compare) */
};

/* Decodes opmod (false: a size this device does not run); seg is read later by hw_xatomic_load. */
bool hw_xatomic_shape(uint8_t opcode, uint8_t opmod, struct hw_xatomic *x);

/* Reads the operands from the WQE's atomic segments (x->seg_len bytes). */
void hw_xatomic_load(struct hw_xatomic *x, const uint8_t *seg);

/* Runs it atomically on target (aligned to x->size); returns the old value. */
uint64_t hw_xatomic_run(const struct hw_xatomic *x, void *target);

/* The old value as the card returns it: 4 bytes big-endian, 8 bytes in host order (the 8-byte endianness mode 1 the ATOMIC caps page reports). */
void hw_xatomic_result(const struct hw_xatomic *x, uint64_t old, void *out);

/* Sum of a and b where a set bit of boundary ends a field: no carry leaves it. */
uint64_t hw_xatomic_field_add(uint64_t a, uint64_t b, uint64_t boundary, uint32_t bits);

#endif
