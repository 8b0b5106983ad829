/*
 * cm_log — where librdmacm.so.1's messages go: a program using only the
 * RDMA CM and verbs has no DOCA log, so without a sink warnings would be
 * dropped; as the verbs libraries do, one stderr line each up to
 * SOFTDPU_LOG_LEVEL, unless another library already plugged the sink.
 */
#include "base_log.h"
#include "cm_int.h"

static void cm_log_sink(int level, const char *func, const char *fmt, va_list ap)
{
	base_log_stderr("rdmacm", level, func, fmt, ap);
}

__attribute__((constructor)) static void cm_log_plug(void)
{
	base_log_set_default_sink(cm_log_sink);
}
