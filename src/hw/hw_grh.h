/*
 * hw_grh — the 40-byte GRH area at the head of a UD receive, as the card
 * writes it from the datagram's network header:
 *   - InfiniBand and RoCE v1: the IB GRH (IP version 6, next header BTH).
 *   - RoCE v2 between IPv4-mapped GIDs: 20 bytes left zero, then the IPv4
 *     header (protocol UDP, a valid checksum), as mlx5 places it; rdma-core's
 *     ibv_init_ah_from_wc tells the two apart by that header.
 *   - RoCE v2 otherwise: the IPv6 header (next header UDP).
 */
#ifndef HW_GRH_H_
#define HW_GRH_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_gid.h"
#include "hw_prm.h"

/*
 * Fills g (HW_UD_GRH_BYTES) for a datagram of len payload bytes (imm: with
 * an immediate) sent from sgid, of type type, to the address av names.
 */
void hw_grh_write(uint8_t g[HW_UD_GRH_BYTES], const uint8_t sgid[16], enum hw_gid_type type,
		  const struct hw_wqe_datagram_seg *av, uint32_t len, bool imm);

/* The source GID and its type of a datagram from the port standing for lid, by the AV's source index. */
void hw_grh_source(uint16_t lid, const uint8_t gid0[16], bool roce, const struct hw_wqe_datagram_seg *av,
		   uint8_t sgid[16], enum hw_gid_type *type);

#endif /* HW_GRH_H_ */
