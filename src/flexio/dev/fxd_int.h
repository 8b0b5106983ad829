/* fxd_int — the device runtime's own state (inside each device image). */
#ifndef FXD_INT_H_
#define FXD_INT_H_

#include <stdint.h>

#include "fx_dev_abi.h"

#define FXD_PRINT_MAX 512 /* bytes one flexio_dev_print formats */

/* What struct flexio_dev_thread_ctx is: kept by the host per DPA thread (FX_DEV_CTX_BYTES). */
struct fxd_ctx {
	uint32_t thread_id;
	uint64_t tls;
	struct fx_dev_frame *frame;
	uint32_t window_id, window_mkey;
	uint32_t outbox_id;
};

struct fxd_ctx *fxd_cur(void);
const struct fx_dev_ops *fxd_host(void);
void fxd_set_errno(uint64_t e);

#endif /* FXD_INT_H_ */
