/*
 * hw_modhdr — header modify actions of the steering (hw_steer.h), as
 * mlx5dv_dr_action_create_modify_header(3) takes them: a list of 8-byte
 * PRM actions (set_action_in, add_action_in, copy_action_in, big-endian),
 * each on a field the PRM numbers (MLX5_ACTION_IN_FIELD_OUT_*):
 *
 *   set  (type 1): length bits (0: 32) of data into the field from bit
 *                  offset (0 the field's lowest bit);
 *   add  (type 2): data added to the whole field, modulo its width;
 *   copy (type 3): length bits of the source field from src_offset into
 *                  the destination field from dst_offset.
 *
 * Fields: the MACs (47_16 and 15_0 halves), the ethertype (after an 802.1Q
 * tag), the first VLAN id, IPv4 and IPv6 DSCP and ECN, IPv4 TTL and IPv6
 * hop limit, the IPv4 and IPv6 (32-bit parts) addresses, TCP and UDP ports,
 * TCP flags, sequence and acknowledgement numbers. An action on a header
 * the frame does not have (an IPv4 field of an IPv6 frame, a port of
 * neither TCP nor UDP) changes nothing, as on the card. As the card does,
 * an IPv4 header that changed gets its checksum computed again, and the
 * TCP or UDP checksum follows changes of the addresses and the L4 header
 * (RFC 1624's incremental update, so it stays right exactly when it was; a
 * UDP checksum of 0, none, stays 0). Metadata registers have no place in a
 * frame here and are refused (EOPNOTSUPP).
 */
#ifndef HW_MODHDR_H_
#define HW_MODHDR_H_

#include <stddef.h>
#include <stdint.h>

#include "hw_mem.h"

struct hw_steer_frame;

#define HW_MODHDR_MAX 32 /* actions of one list (caps: max_modify_header_actions) */

struct hw_modhdr_op {
	uint8_t type;	 /* 1 set, 2 add, 3 copy */
	uint8_t dst;	 /* field indexes (hw_modhdr.c's table) */
	uint8_t src;
	uint8_t dst_off;
	uint8_t src_off;
	uint8_t len;	 /* 1 .. 32 */
	uint32_t data;
};

struct hw_modhdr {
	uint32_t n;
	struct hw_modhdr_op ops[HW_MODHDR_MAX];
};

/*
 * m from n actions (big-endian as the PRM). HW_ERR_INVAL for no actions or
 * more than HW_MODHDR_MAX, an unknown field, or offset + length beyond a
 * field's width; HW_ERR_NOTSUP for an unknown action type or a register
 * field, as rdma-core's and the card's answers (EINVAL, EOPNOTSUPP).
 */
enum hw_status hw_modhdr_init(struct hw_modhdr *m, const uint64_t *actions, size_t n);

void hw_modhdr_apply(const struct hw_modhdr *m, struct hw_steer_frame *f);

#endif /* HW_MODHDR_H_ */
