/*
 * hw_gid — the GID tables of the device's ports, and where a GID or an IP
 * address leads.
 *
 * Each function has one port. An Ethernet (RoCE) port fills its table as
 * mlx5 does from its netdev's addresses: the link-local fe80::<EUI-64 of the
 * MAC> as RoCE v1 then v2, then ::ffff:<IPv4> v1 and v2 when the function has
 * an IPv4 address, then its IPv6 v1 and v2 when it has one. An InfiniBand
 * port has one GID, <machine subnet prefix>::<port GUID> (hw_machine.h).
 *
 * A destination GID leads to the port of this machine whose table holds it
 * (the functions of both sides: QP numbers are device-wide), else to the
 * machine it names (hw_machine_of_gid), else nowhere. The topology is read
 * at every call; it is small and fixed once loaded (hw_topology.h).
 */
#ifndef HW_GID_H_
#define HW_GID_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "hw_topology.h"

#define HW_GID_TBL_LEN_ETH 256 /* a ConnectX-6 Dx's RoCE address table */
#define HW_GID_TBL_LEN_IB 128
#define HW_GID_MAX 6	       /* entries a port fills at most */
#define HW_GID_PORT 1	       /* every function's one port */

/* The types of a GID entry, numbered as enum ibv_gid_type. */
enum hw_gid_type {
	HW_GID_TYPE_IB = 0,
	HW_GID_TYPE_ROCE_V1 = 1,
	HW_GID_TYPE_ROCE_V2 = 2,
};

struct hw_gid_entry {
	uint8_t gid[16];
	enum hw_gid_type type;
};

/* The port GUID of a MAC: its EUI-64 (ff:fe in the middle, the U/L bit flipped), in wire order. */
void hw_gid_guid(const uint8_t mac[6], uint8_t guid[8]);

/* The LID that stands for the function's port inside the device (reported only on InfiniBand). */
uint16_t hw_gid_port_lid(const struct hw_function *f);

/* The size of the port's table (its valid and empty entries). */
uint32_t hw_gid_tbl_len(const struct hw_function *f);

/* The port's valid entries, indexes 0..n-1 (the rest of the table is empty): n. */
uint32_t hw_gid_table(const struct hw_function *f, struct hw_gid_entry out[HW_GID_MAX]);

/* The entry at index: true, or false when the index is empty or beyond the table. */
bool hw_gid_get(const struct hw_function *f, uint32_t index, struct hw_gid_entry *e);

/* Where a destination GID leads. */
enum hw_gid_where {
	HW_GID_HERE,	/* a port of this machine: func, index, lid, mac */
	HW_GID_MACHINE, /* another machine's port: machine (its IPv4, host order) and, when the GID tells, mac */
	HW_GID_NOWHERE, /* no port has it */
};

struct hw_gid_dest {
	enum hw_gid_where where;
	int func;	 /* topology index of the owning function */
	uint32_t index;	 /* its GID index */
	uint16_t lid;	 /* hw_gid_port_lid of the owner */
	uint32_t machine;
	uint8_t mac[6];	 /* the port's MAC: the destination MAC of what is sent there (zero when unknown) */
};

void hw_gid_route(const uint8_t gid[16], struct hw_gid_dest *d);

/* The entry at index of the port standing for lid: true, or false when it has none there. */
bool hw_gid_port_get(uint16_t lid, uint32_t index, struct hw_gid_entry *e);

/* Whether the port standing for lid has gid in its table: the check of a DC address at the DCT. */
bool hw_gid_port_has(uint16_t lid, const uint8_t gid[16]);

/*
 * A local port and GID index an IP address names, for the RDMA CM.
 *   - An IPv4 (AF_INET) or IPv6 (AF_INET6, an IPv4-mapped one taken as its
 *     IPv4) address of a function of this process's side: that function's
 *     port and the index of the address's RoCE v2 entry (on an InfiniBand
 *     port, index 0, whose GID stands for the port).
 *   - Else 127.0.0.0/8, ::1 and the wildcard (0.0.0.0, ::): the first
 *     function of this side that has a verbs device (its RoCE v2 link-local
 *     entry, index 1; index 0 on InfiniBand), as the kernel's RDMA CM binds
 *     a loopback address to the first active port and its GID 0 in the
 *     default RoCE v2 type. (A named machine's own address, 127.x.y.z in the
 *     tests, is its first function's: the first rule takes it.)
 * 0 and *out, EADDRNOTAVAIL when no local function has the address (as
 * rdma_bind_addr fails), EAFNOSUPPORT for another family, EINVAL for NULL.
 */
struct hw_addr_port {
	int func;		  /* topology index (hw_topo_func) */
	char ibdev[HW_TOPO_IBDEV_SIZE];
	uint32_t port;		  /* HW_GID_PORT */
	uint32_t gid_index;
	uint8_t gid[16];	  /* the entry at gid_index */
	enum hw_gid_type type;
	bool loopback;		  /* named by 127/8, ::1 or the wildcard */
};

int hw_addr_port(const struct sockaddr *sa, struct hw_addr_port *out);

#endif /* HW_GID_H_ */
