/*
 * hw_machine — which machine this process's device is on.
 *
 * By default every process of the host is on one machine: one device-wide
 * number table, one export table, one comm channel namespace. SOFTDPU_MACHINE
 * (an IPv4 address) makes the process stand for another machine, so several
 * processes of one host behave as machines joined by a network: each machine
 * has its own shared-memory namespace (hw_machine_tag in the names), its own
 * host id (exports from another machine go through UCX), and its own IB
 * subnet: the port's GID prefix names the machine, as routed IB subnets have
 * distinct prefixes. Read once, on first use.
 */
#ifndef HW_MACHINE_H_
#define HW_MACHINE_H_

#include <stdbool.h>
#include <stdint.h>

/* True and *ipv4 (host byte order) when SOFTDPU_MACHINE names the machine. */
bool hw_machine_ipv4(uint32_t *ipv4);

/*
 * The subnet prefix of this machine's port GIDs (host byte order): the
 * link-local fe80::/64 by default, fec0:0:<a.b>:<c.d>::/64 (site-local,
 * carrying the address) for a named machine.
 */
uint64_t hw_machine_subnet_prefix(void);

/* The machine a GID subnet prefix names: true and *ipv4 for a prefix of the fec0:0 form. */
bool hw_machine_of_prefix(uint64_t prefix, uint32_t *ipv4);

/*
 * Whether a destination GID lies on another machine: its prefix is a named
 * machine's (the fec0:0 form) and not the subnet of own_gid (a port GID of
 * this device). Within one subnet IB delivers by LID and only carries the
 * GRH, so any other GID (link-local, zero) stays on this machine.
 */
bool hw_machine_gid_elsewhere(const uint8_t dgid[16], const uint8_t own_gid[16]);

/* Part of every device-wide shared-memory name: "" by default, "-m<a.b.c.d>" for a named machine. */
const char *hw_machine_tag(void);

#endif /* HW_MACHINE_H_ */
