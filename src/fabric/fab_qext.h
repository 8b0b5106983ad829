/*
 * fab_qext — queues in memory their creator gave (a parent domain's
 * allocator's), reachable by the other processes of the device.
 *
 * The ring and the doorbell record stay where the program put them: their
 * pages are moved in place onto memfds (fab_share_get_range, as for a
 * registration), and the queue's record names those memfds, the owner and
 * where in them the ring and the record begin. Another process opens each
 * /proc/<pid>/fd/<fd> (same process and same file checked), maps them side
 * by side, and finds the ring and the record in them. Memory that cannot be
 * moved (file mappings, huge pages) cannot be reached: the hook says so and
 * the queue is not created. These are the adopt, unadopt, attach_ext and
 * detach_ext hooks of hw_qmem_ops (hw_qshare.h).
 */
#ifndef FAB_QEXT_H_
#define FAB_QEXT_H_

#include <stddef.h>
#include <stdint.h>

#include "hw_qshare.h"

enum hw_status fab_qext_adopt(void *ring, size_t ring_len, void *dbrec, size_t dbrec_len, void *backing,
			      uint32_t *blen, void **handle);
void fab_qext_unadopt(void *handle);
void *fab_qext_attach(const void *backing, uint32_t blen, size_t ring_len, size_t dbrec_len, void **ring,
		      void **dbrec);
void fab_qext_detach(void *handle);

#endif /* FAB_QEXT_H_ */
