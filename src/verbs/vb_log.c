/*
 * vb_log — where the verbs libraries' messages go.
 *
 * A verbs program has no DOCA log library to plug a sink into base_log, and
 * without one warnings would be dropped. Both libibverbs.so.1 and
 * libmlx5.so.1 install this sink: messages up to SOFTDPU_LOG_LEVEL (default:
 * warnings) go to stderr, one line each. Where the DOCA library is loaded
 * too, its log stays the one sink (base_log_set_default_sink).
 */
#include "base_log.h"
#include "vb_export.h"

static void vb_log_sink(int level, const char *func, const char *fmt, va_list ap)
{
	base_log_stderr("verbs", level, func, fmt, ap);
}

__attribute__((constructor)) static void vb_log_plug(void)
{
	base_log_set_default_sink(vb_log_sink);
}

void vb_log_unsupported(const char *name)
{
	base_log(BASE_LOG_WARNING, name, "not supported by softdpu's emulated device (EOPNOTSUPP)");
}
