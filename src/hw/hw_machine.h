/*
 * hw_machine — which machine this process's device is on.
 *
 * By default every process of the host is on one machine: one device-wide
 * number table, one export table, one comm channel namespace. SOFTDPU_MACHINE
 * (an IPv4 address) makes the process stand for another machine, so several
 * processes of one host behave as machines joined by a network: each machine
 * has its own shared-memory namespace (hw_machine_tag in the names), its own
 * host id (exports from another machine go through UCX), and addresses of
 * its own: its GIDs name it (hw_machine_of_gid; an InfiniBand port's prefix
 * is the machine's subnet, as routed IB subnets have distinct prefixes).
 * Read once, on first use.
 */
#ifndef HW_MACHINE_H_
#define HW_MACHINE_H_

#include <stdbool.h>
#include <stdint.h>

/* True and *ipv4 (host byte order) when SOFTDPU_MACHINE names the machine. */
bool hw_machine_ipv4(uint32_t *ipv4);

/*
 * The subnet prefix of this machine's InfiniBand port GIDs (host byte
 * order): the link-local fe80::/64 by default, fec0:0:<a.b>:<c.d>::/64
 * (site-local, carrying the address) for a named machine. RoCE ports take
 * their GIDs from their addresses instead (hw_gid.h).
 */
uint64_t hw_machine_subnet_prefix(void);

/*
 * The machine a GID names by its form (docs/TOPOLOGY.md), whether or not a
 * port has it: true, *ipv4 (host order) and *mac (the port's MAC when the
 * form tells it, else zero) for
 *   fec0:0:<a.b>:<c.d>::/64            an InfiniBand port of machine a.b.c.d;
 *   ::ffff:a.b.c.d                     machine a.b.c.d's own address (its first function);
 *   fe80::<EUI-64 of 06:a:b:c:d:n>     the link-local GID of its function n;
 *   fd00:5344:<a.b>:<c.d>::<n + 1>     the IPv6 GID of its function n.
 * (hw_topology.h gives a named machine these addresses.)
 */
bool hw_machine_of_gid(const uint8_t gid[16], uint32_t *ipv4, uint8_t mac[6]);

/*
 * The other machines of the network (SOFTDPU_MACHINES, less this one), which
 * a multicast datagram is sent to: how many, *list pointing at them (host
 * order). None on the default machine: machines that talk are all named.
 */
unsigned hw_machine_others(const uint32_t **list);

/*
 * InfiniBand LIDs name a machine too: the machines share one LID space, as
 * one subnet manager would assign it, function n of machine a.b.c.d having
 * LID d * HW_MACHINE_LIDS + n + 1 (the default machine: n + 1). This
 * machine's base (d * HW_MACHINE_LIDS, 0 on the default machine).
 */
#define HW_MACHINE_LIDS 128u /* more than a topology's functions */
uint16_t hw_machine_lid_base(void);

/*
 * The machine a unicast LID names when it is another named machine's: true
 * and *ipv4 = a.b.c.(lid / HW_MACHINE_LIDS), in this machine's a.b.c (the
 * machines addressed by LID share their first three address bytes).
 */
bool hw_machine_of_lid(uint16_t lid, uint32_t *ipv4);

/* Part of every device-wide shared-memory name: "" by default, "-m<a.b.c.d>" for a named machine. */
const char *hw_machine_tag(void);

#endif /* HW_MACHINE_H_ */
