/*
 * fab_xm_rdv — the rendezvous of a machine: which process of it takes
 * requests from other machines.
 *
 * Every serving process of a machine listens on the machine's address at
 * FAB_XM_PORT with SO_REUSEPORT, so the kernel hands each connection to
 * one of them; it answers with its UCX worker address (u16 length, then
 * the bytes) and closes. A process that exits simply stops listening.
 */
#ifndef FAB_XM_RDV_H_
#define FAB_XM_RDV_H_

#include <stddef.h>
#include <stdint.h>

/* Listens for machine ip (host order) and answers addr; a thread of its own. 0 or -1. */
int fab_xm_rdv_listen(uint32_t ip, const uint8_t *addr, size_t alen);

/* Asks machine ip for a worker address: its length in addr (cap bytes), or -1 (none answered in timeout_ms). */
int fab_xm_rdv_lookup(uint32_t ip, uint8_t *addr, size_t cap, unsigned timeout_ms);

#endif /* FAB_XM_RDV_H_ */
