/* dpad_int — the DOCA DPA device library's own declarations. */
#ifndef DPAD_INT_H_
#define DPAD_INT_H_

#include <doca_dpa_dev_sync_event.h>

/* flexio_dev_error codes of the device library (the context's fatal error). */
enum dpad_err {
	DPAD_ERR_MEM = 2,	  /* an access outside registered host memory */
	DPAD_ERR_UNSUPPORTED = 3, /* a device call softdpu does not run */
	DPAD_ERR_EP = 4,	  /* an endpoint operation failed, or not an endpoint */
};

/* dpad_mem.c: fatal unless h is 0 or registered memory covering [addr, addr+len). */
void dpad_mem_check(doca_dpa_dev_mem_t h, uint64_t addr, uint64_t len);

#endif /* DPAD_INT_H_ */
