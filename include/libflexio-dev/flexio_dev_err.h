/*
 * softdpu — FlexIO SDK device errors (libflexio-dev).
 *
 * A fatal error ends the whole process with a code the host sees as the
 * process status (0: fine, 1-63: OS/firmware, 64-127: SDK, 128-255: the
 * program's own); a recoverable one only sets the thread's errno, which the
 * calls below read and clear.
 */
#ifndef SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_ERR_H_
#define SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_ERR_H_

#include <stdint.h>

#include <libflexio-dev/flexio_dev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Codes the SDK itself ends a process with. */
typedef enum flexio_dev_errors {
	FLEXIO_DEV_ERROR_ILLEGAL_ERR = 0x42, /* flexio_dev_error got a code outside the program's range */
} flexio_dev_error_t;

/* Ends the process with the program's fatal error code (0x80-0xff). */
__attribute__((__noreturn__)) void flexio_dev_error(uint8_t error);

/* The thread's recoverable error code (0: none). */
uint64_t flexio_dev_get_errno(struct flexio_dev_thread_ctx *dtctx);
void flexio_dev_rst_errno(struct flexio_dev_thread_ctx *dtctx);
/* Returns the code and clears it. */
uint64_t flexio_dev_get_and_rst_errno(struct flexio_dev_thread_ctx *dtctx);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_ERR_H_ */
