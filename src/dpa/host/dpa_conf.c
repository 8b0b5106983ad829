/*
 * dpa_conf — the library's one setting. Its messages go through base_log
 * (tagged doca_dpa): the DOCA log's sink, as libdoca_common is loaded with it.
 */
#include <stdlib.h>

#include "dpa_int.h"

/* How long a kernel may run (SOFTDPU_DPA_KERNEL_MAX_RUN_MS, 1 ms .. 1 h; default 12 s, as the card's). */
uint64_t dpa_max_run_ns(void)
{
	const char *v = getenv("SOFTDPU_DPA_KERNEL_MAX_RUN_MS");
	unsigned long long ms = 12000;
	char *end;

	if (v != NULL && *v != '\0') {
		unsigned long long n = strtoull(v, &end, 0);

		if (*end == '\0' && n >= 1 && n <= 3600000)
			ms = n;
		else
			BASE_WARN("SOFTDPU_DPA_KERNEL_MAX_RUN_MS=%s ignored (1..3600000)", v);
	}
	return (uint64_t)ms * 1000000u;
}
