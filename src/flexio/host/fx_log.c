/*
 * fx_log — where libflexio's messages go (stderr, up to SOFTDPU_LOG_LEVEL,
 * unless the DOCA log is loaded too and takes them), and its settings.
 */
#include <stdlib.h>

#include "fx_int.h"

static void fx_log_sink(int level, const char *func, const char *fmt, va_list ap)
{
	base_log_stderr("flexio", level, func, fmt, ap);
}

__attribute__((constructor)) static void fx_log_plug(void)
{
	base_log_set_default_sink(fx_log_sink);
}

static uint64_t fx_env_u64(const char *name, uint64_t dflt, uint64_t min, uint64_t max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (v == NULL || *v == '\0')
		return dflt;
	n = strtoull(v, &end, 0);
	if (*end != '\0' || n < min || n > max) {
		BASE_WARN("%s=%s ignored (%llu..%llu)", name, v, (unsigned long long)min, (unsigned long long)max);
		return dflt;
	}
	return n;
}

/* How long flexio_process_call waits for the device function (SOFTDPU_FLEXIO_CALL_TIMEOUT_MS). */
unsigned fx_call_timeout_ms(void)
{
	return (unsigned)fx_env_u64("SOFTDPU_FLEXIO_CALL_TIMEOUT_MS", 5000, 1, 3600000);
}

/* A process's device heap (SOFTDPU_FLEXIO_HEAP_MB; reserved, committed as used). */
uint64_t fx_heap_bytes(void)
{
	return fx_env_u64("SOFTDPU_FLEXIO_HEAP_MB", 256, 1, 65536) << 20;
}
