/*
 * hw_xrc — eXtended Reliable Connected transport: the SRQs an XRC request
 * may name.
 *
 * An XRC domain is a 64-bit number the verbs layer gives (non-zero): XRC
 * SRQs (hw_srq_attr.xrcd) and XRC target QPs (hw_qp_attr.xrcd, type
 * HW_QPT_XRC_TGT) carry it in their shared blocks. An XRC initiator
 * (HW_QPT_XRC_INI) is connected to a target QP as RC is to its peer, and
 * each of its WQEs names, in the XRC segment after ctrl, the SRQ whose
 * receive a SEND takes and whose domain (PD) governs every key the request
 * names; the SRQ must be an XRC SRQ of the target's domain, else the
 * request is NAKed as invalid (IBV_WC_REM_INV_REQ_ERR) before anything of
 * it runs. The receive completes into the SRQ's CQ with the target's QPN
 * and the SRQ's number.
 *
 * Finding the SRQ: this process's XRC SRQs are listed here at creation
 * (hw_srq_create calls hw_xrc_srq_add); one of another process is mapped
 * as a view (hw_srq_attach_num, which attaches its CQ too) and cached by
 * number. A cached view is used while its record's sequence is unchanged;
 * a view found stale is replaced and kept mapped until the process exits,
 * since a requester of another thread may still be using it (the cache's
 * views are reachable from it until then, so nothing leaks).
 */
#ifndef HW_XRC_H_
#define HW_XRC_H_

#include <stdbool.h>
#include <stdint.h>

struct hw_srq;

/*
 * The XRC SRQ numbered srqn (low 24 bits), of this process or a view of
 * another's; NULL when there is none or it is no XRC SRQ. The caller is in
 * an execution (hw_epoch_enter): an SRQ of this process destroyed meanwhile
 * stays until it leaves.
 */
struct hw_srq *hw_xrc_srq_get(uint32_t srqn);

/*
 * The engine thread's look (every ~100 ms): the limit events requesters of
 * other processes left owed on this process's XRC SRQs are reported (an
 * XRC SRQ has no QPs whose pass would report them, as an SRQ's have).
 */
void hw_xrc_limits_poll(void);

/*
 * A receive posted to an XRC SRQ of this process (hw_srq_ring) resumes the
 * XRC initiators of this process waiting on RNR, as a receive posted to an
 * RQ resumes its requester: each runs its SQ again at once (no retry is
 * counted; one whose SRQ is still empty waits again). An initiator of
 * another process resumes at its retry timer.
 */
void hw_xrc_srq_posted(void);

/* Internal to hw_qp: this process's XRC initiators join at creation and leave at destruction. */
bool hw_xrc_ini_add(struct hw_qp *qp);
void hw_xrc_ini_del(struct hw_qp *qp);

/* Internal to hw_srq: this process's XRC SRQs join at creation and leave at destruction. */
bool hw_xrc_srq_add(struct hw_srq *srq);
void hw_xrc_srq_del(struct hw_srq *srq);

#endif /* HW_XRC_H_ */
