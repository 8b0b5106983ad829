/*
 * fxd_unsupported — device calls softdpu does not run yet (EQ updates,
 * MSI-X, emulated-device doorbell mappings: the emulated device has no EQs
 * or emulated functions): each says so through the host's log, once, and fails with FLEXIO_DEV_STATUS_FAILED, so device code
 * links, loads and learns at run time (docs/STATUS.md lists them). The
 * simulator's debug prints go to the process's print channel.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_debug.h>
#include <libflexio-dev/flexio_dev_queue_access.h>

#include "fxd_int.h"

static flexio_dev_status_t fxd_unsupported(const char *name)
{
	const struct fx_dev_ops *h = fxd_host();

	if (h != NULL && h->unsupported != NULL)
		h->unsupported(h->proc, name);
	return FLEXIO_DEV_STATUS_FAILED;
}

flexio_dev_status_t flexio_dev_eq_update_ci(struct flexio_dev_thread_ctx *dtctx, uint32_t ci, uint32_t qnum)
{
	(void)dtctx;
	(void)ci;
	(void)qnum;
	return fxd_unsupported(__func__);
}

flexio_dev_status_t flexio_dev_msix_send(struct flexio_dev_thread_ctx *dtctx, uint32_t cqn)
{
	(void)dtctx;
	(void)cqn;
	return fxd_unsupported(__func__);
}

flexio_dev_status_t flexio_dev_db_ctx_arm(struct flexio_dev_thread_ctx *dtctx, uint32_t cqn, uint32_t emu_ctx_id)
{
	(void)dtctx;
	(void)cqn;
	(void)emu_ctx_id;
	return fxd_unsupported(__func__);
}

flexio_dev_status_t flexio_dev_db_ctx_force_trigger(struct flexio_dev_thread_ctx *dtctx, uint32_t cqn,
						    uint32_t emu_ctx_id)
{
	(void)dtctx;
	(void)cqn;
	(void)emu_ctx_id;
	return fxd_unsupported(__func__);
}

/* ---- the simulator's debug prints: to the process's print channel ---- */

static void fxd_sim_out(const char *s, size_t n)
{
	const struct fx_dev_ops *h = fxd_host();

	if (h != NULL)
		h->print(h->proc, s, n);
}

void print_sim_str(const char *str, int len)
{
	(void)len; /* the simulator's field width */
	if (str != NULL)
		fxd_sim_out(str, strlen(str));
}

void print_sim_hex(uint64_t val, int len)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%0*" PRIx64, len > 0 && len < 17 ? len : 1, val);

	fxd_sim_out(b, (size_t)n);
}

void print_sim_int(int val, int len)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%*d", len > 0 && len < 24 ? len : 1, val);

	fxd_sim_out(b, (size_t)n);
}

void print_sim_putc(int val)
{
	char c = (char)val;

	fxd_sim_out(&c, 1);
}

void sim_trace(const char *text, uint64_t val, const char *func, int line)
{
	char b[FXD_PRINT_MAX];
	int n = snprintf(b, sizeof(b), "%s:%d: %s %#" PRIx64 "\n", func != NULL ? func : "?", line,
			 text != NULL ? text : "", val);

	if (n > 0)
		fxd_sim_out(b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}
