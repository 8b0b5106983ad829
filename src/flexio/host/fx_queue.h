/*
 * fx_queue — what the other queue files of the host runtime use of the
 * CQs (fx_queue.c): a CQ found by number and counted while a queue
 * completes into it.
 */
#ifndef FX_QUEUE_H_
#define FX_QUEUE_H_

#include <stdint.h>

struct flexio_process;
struct flexio_cq;
struct hw_cq;

/* The process's CQ numbered cqn with one more user (a queue completing into it), or NULL. */
struct flexio_cq *fx_cq_take(struct flexio_process *p, uint32_t cqn);
/* Drops the user fx_cq_take added. */
void fx_cq_drop(struct flexio_cq *cq);
struct hw_cq *fx_cq_hw(const struct flexio_cq *cq);

/* A queue's destroy, after its unlink: waits for the device doorbells that found it before (its ringing count). */
void fx_ring_wait(uint32_t *ringing);

/* fx_eth.c: rings Ethernet SQ qnum of p if it is one: 1 when it is not, else 0 or -1 (refused, logged). */
int fx_eth_ring(struct flexio_process *p, uint32_t qnum, uint32_t pi);
/* Process destroy, before the CQs go: the SQs and RQs the program left. */
void fx_eth_fini(struct flexio_process *p);

#endif /* FX_QUEUE_H_ */
