/*
 * hw_mcast — the device's multicast groups: which UD QPs are attached to
 * which multicast GID, seen by every process of the machine (one shared
 * table, hw_shm.h), as the card's multicast tables are device-wide.
 *
 * An entry is (MGID, LID, QPN) and its owner word (hw_ids.h). The process
 * that owns the QP attaches and detaches it; a sender of any process reads
 * the group's members. An entry whose owner has died is reclaimed when the
 * table is full, and never read as a member: a member counts only while the
 * process holding its QPN is the one that attached it.
 */
#ifndef HW_MCAST_H_
#define HW_MCAST_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_mem.h"

#define HW_MCAST_QPN 0xffffffu	     /* the destination QPN of a multicast datagram */
#define HW_MCAST_ENTRIES 4096u	     /* attachments on the device */
#define HW_MCAST_GROUP_MAX 240u	     /* QPs of one group (ConnectX's max_mcast_qp_attach) */

/* A multicast GID as the kernel tells it (rdma_is_multicast_addr): ff..., or an IPv4-mapped class D address. */
bool hw_mcast_gid(const uint8_t gid[16]);

/*
 * Attaches qpn to the group (mgid, lid); no_self: a datagram qpn itself sends
 * to the group does not loop back to it. HW_OK (also when already attached),
 * HW_ERR_NOMEM when the table or the group is full, or the table cannot be had.
 */
enum hw_status hw_mcast_attach(uint32_t qpn, const uint8_t mgid[16], uint16_t lid, bool no_self);

/* Detaches qpn from (mgid, lid): HW_OK, HW_ERR_KEY when it was not attached. */
enum hw_status hw_mcast_detach(uint32_t qpn, const uint8_t mgid[16], uint16_t lid);

/* Whether qpn is attached to any group (a QP in a group cannot be destroyed). */
bool hw_mcast_qp_attached(uint32_t qpn);

/*
 * The members of a group, for a datagram from sender: by mgid, or on an
 * InfiniBand address without a GRH (by_lid) by the multicast LID. The sender
 * itself is left out when it attached with no_self. Returns how many QPNs
 * were written to qpns (at most HW_MCAST_GROUP_MAX).
 */
uint32_t hw_mcast_members(uint32_t sender, const uint8_t mgid[16], uint16_t lid, bool by_lid,
			  uint32_t qpns[HW_MCAST_GROUP_MAX]);

#endif /* HW_MCAST_H_ */
