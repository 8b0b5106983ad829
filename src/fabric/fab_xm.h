/*
 * fab_xm — verbs between machines (hw_machine.h): the path hw_xm.h asks for.
 *
 * A requester reaches another machine through a process of that machine:
 * the rendezvous (a TCP port, FAB_XM_PORT, at the machine's address, which
 * every process of the machine that serves listens on together, with
 * SO_REUSEPORT) hands out one such process's UCX worker address; requests
 * are then calls to its verbs service (fab_ucx_call). That process runs
 * each request against the target QP as a requester of its own machine
 * would (a shadow QP per remote requester, hw_qp_exec_one) and answers with
 * the outcome, and a READ's or atomic's data. Wire format below.
 */
#ifndef FAB_XM_H_
#define FAB_XM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAB_XM_PORT 4791 /* the rendezvous: RoCE v2's UDP port number, here over TCP */

/*
 * Request (little-endian), FAB_XM_REQ_SIZE bytes, then `len` payload bytes
 * (SEND, WRITE; a UD datagram's are its 40-byte network header, the GRH
 * area its receive gets, then its payload):
 *   0 magic u32 · 4 version u16 · 6 qp type u8 · 7 opcode u8 · 8 source machine u32 · 12 source QPN u32
 *   16 destination QPN u32 · 20 immediate u32 · 24 remote address u64 · 32 rkey u32 · 36 fm_ce_se u8
 *   37 tag matching flags u8 (HW_XM_TM_*) · 38 source LID u16 · 40 swap/add u64 · 48 compare u64 · 56 len u64 · 64 DC address [48]
 *   112 sequence u32 · 116 connection epoch u32 · 120 rendezvous bytes at the payload's end u32
 *   124 reserved [4]
 * Reply, FAB_XM_REP_SIZE bytes, then the data of a READ or an atomic (len):
 *   0 magic u32 · 4 syndrome u8 · 5 rnr u8 · 6 rnr timer u8 · 7 discarded u8 · 8 byte count u32
 *   12 FIN owed u8 (a tag took the rendezvous) · 13 reserved [3]
 * QP type RC, DCI or UD (hw_qp.h). The address is a DC request's DC
 * address and a UD datagram's (its Q_Key resolved by the sender: never the
 * "the QP's own" high bit); an RC request carries there, at the address's
 * GID (FAB_XM_AV_GID), the GID its QP addressed, so the target reaches the
 * QP of that number on the port that has the GID only. A UD datagram
 * (SEND, SEND with immediate) is delivered or dropped and its reply is
 * success either way; to destination QPN 0xffffff it is multicast, taken by
 * the target machine's members of the group its address names. It carries
 * the sender's LID (InfiniBand); on InfiniBand without a GRH its 40-byte
 * network header is zero and unused.
 * A call carries 1..FAB_XM_BATCH such requests back to back (a probe only
 * alone), run in order; its answer is their replies back to back, each
 * followed by its data when it has some (fab_xm_rep_has_data).
 * An RC requester numbers its requests (sequence, from 1; 0: unsequenced)
 * within a connection (epoch): the target runs them in that order and
 * discards, unrun, every request after one it answered with RNR or an
 * error, until that one comes again — IB's go-back-N.
 */
#define FAB_XM_REQ_MAGIC 0x51524d58u /* "XMRQ" */
#define FAB_XM_REP_MAGIC 0x50524d58u /* "XMRP" */
#define FAB_XM_VERSION 2 /* 2: UD datagrams; an RC request names its port by GID */
#define FAB_XM_REQ_SIZE 128
#define FAB_XM_REP_SIZE 16
#define FAB_XM_BATCH 16
#define FAB_XM_AV_GID (64 + 32) /* where in a request its address's destination GID is */

/* Whether the reply rep to a request that does (out) or does not carry data is followed by data. */
static inline bool fab_xm_rep_has_data(bool out, const uint8_t *rep)
{
	return !out && rep[4] == 0 && rep[5] == 0 && rep[7] == 0;
}

/* Starts serving this machine's requests from other machines (idempotent). 0, or -1 when it cannot. */
int fab_xm_serve(void);

/*
 * True while this thread creates one of the fabric's own UCX contexts.
 * UCX probes every RDMA device it finds then, softdpu's among them; the
 * fabric carries softdpu's traffic between machines and must not run over
 * (or call back into) the device it serves, so the device list is empty to
 * that probe (vb_get_device_list).
 */
bool fab_ucx_probing(void);

/*
 * The verbs service (tests drive it with requests of their own): answers
 * req (len bytes) into rep (cap bytes), *rlen set; a FAB_UCX_ST_* status.
 */
uint32_t fab_xm_service(const uint8_t *req, uint64_t len, uint8_t *rep, uint64_t cap, uint64_t *rlen);

#endif /* FAB_XM_H_ */
