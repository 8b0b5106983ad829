/* What the sync event sample pair says to each other over the comm channel. */
#ifndef SOFTDPU_SYNC_EVENT_PROTO_H_
#define SOFTDPU_SYNC_EVENT_PROTO_H_

#include <stdint.h>

#define SYNC_EVENT_SERVICE "softdpu_sync_event"
#define SYNC_EVENT_MAGIC 0x53455631u /* "SEV1" */

/* host -> DPU, before the exported event */
struct sync_event_hello {
	uint32_t magic;
	uint32_t rsvd;
	uint64_t rounds;
};

#endif /* SOFTDPU_SYNC_EVENT_PROTO_H_ */
