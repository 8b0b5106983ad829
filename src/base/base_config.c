/*
 * base_config — parsing of the SOFTDPU_* environment variables.
 */
#include "base_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"

/* The variable's value, or NULL when it is unset or empty (both mean "default"). */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

bool base_config_side_dpu(void)
{
	const char *s = env("SOFTDPU_SIDE");

	if (s == NULL || strcmp(s, "host") == 0)
		return false;
	if (strcmp(s, "dpu") == 0)
		return true;
	BASE_ERR("SOFTDPU_SIDE='%s' is neither 'host' nor 'dpu'; using host", s);
	return false;
}

const char *base_config_topology(void)
{
	return env("SOFTDPU_TOPOLOGY");
}

enum base_fabric_mode base_config_fabric(void)
{
	const char *v = env("SOFTDPU_FABRIC");

	if (v == NULL || strcmp(v, "auto") == 0)
		return BASE_FABRIC_AUTO;
	if (strcmp(v, "cma") == 0)
		return BASE_FABRIC_CMA;
	if (strcmp(v, "ucx") == 0)
		return BASE_FABRIC_UCX;
	BASE_ERR("SOFTDPU_FABRIC=%s is not one of auto, cma, ucx: using auto", v);
	return BASE_FABRIC_AUTO;
}

bool base_config_machine(uint32_t *ipv4)
{
	const char *v = env("SOFTDPU_MACHINE");
	unsigned int a, b, c, d;
	char tail;

	if (v == NULL || v[0] == '\0')
		return false;
	if (sscanf(v, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 || c > 255 ||
	    d > 255) {
		BASE_ERR("SOFTDPU_MACHINE=%s is not an IPv4 address: this host's machine is used", v);
		return false;
	}
	*ipv4 = a << 24 | b << 16 | c << 8 | d;
	return true;
}

/* One dotted quad at *s, ended by ',' or the string's end: true, *ipv4 and *s past it. */
static bool parse_ipv4(const char **s, uint32_t *ipv4)
{
	unsigned int a, b, c, d;
	int used = 0;

	if (sscanf(*s, "%3u.%3u.%3u.%3u%n", &a, &b, &c, &d, &used) != 4 || a > 255 || b > 255 || c > 255 ||
	    d > 255 || !((*s)[used] == ',' || (*s)[used] == '\0') || (*s)[0] < '0' || (*s)[0] > '9')
		return false;
	*ipv4 = a << 24 | b << 16 | c << 8 | d;
	*s += used;
	return true;
}

unsigned base_config_machines(uint32_t out[BASE_MACHINES_MAX])
{
	const char *v = env("SOFTDPU_MACHINES"), *s = v;
	unsigned n = 0;

	if (v == NULL)
		return 0;
	for (;;) {
		if (n == BASE_MACHINES_MAX || !parse_ipv4(&s, &out[n])) {
			BASE_ERR("SOFTDPU_MACHINES=%s is not a list of at most %u IPv4 addresses: no other machine is known",
				 v, BASE_MACHINES_MAX);
			return 0;
		}
		n++;
		if (*s == '\0')
			return n;
		s++;
	}
}

unsigned base_config_fabric_timeout_ms(void)
{
	const char *s = env("SOFTDPU_FABRIC_TIMEOUT_MS");
	unsigned long v;
	char *end;

	if (s == NULL)
		return BASE_FABRIC_TIMEOUT_DEFAULT_MS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > BASE_FABRIC_TIMEOUT_MAX_MS) {
		BASE_ERR("SOFTDPU_FABRIC_TIMEOUT_MS=%s ignored (1..%u), using %u ms", s, BASE_FABRIC_TIMEOUT_MAX_MS,
			 BASE_FABRIC_TIMEOUT_DEFAULT_MS);
		return BASE_FABRIC_TIMEOUT_DEFAULT_MS;
	}
	return (unsigned)v;
}

unsigned base_config_cm_timeout_ms(void)
{
	const char *s = env("SOFTDPU_CM_TIMEOUT_MS");
	unsigned long v;
	char *end;

	if (s == NULL)
		return BASE_CM_TIMEOUT_DEFAULT_MS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > BASE_CM_TIMEOUT_MAX_MS) {
		BASE_ERR("SOFTDPU_CM_TIMEOUT_MS=%s ignored (1..%u), using %u ms", s, BASE_CM_TIMEOUT_MAX_MS,
			 BASE_CM_TIMEOUT_DEFAULT_MS);
		return BASE_CM_TIMEOUT_DEFAULT_MS;
	}
	return (unsigned)v;
}

bool base_config_ucx_peer_errors(void)
{
	const char *m = env("SOFTDPU_UCX_ERR_MODE");

	if (m == NULL || strcmp(m, "peer") == 0)
		return true;
	if (strcmp(m, "none") == 0)
		return false;
	BASE_ERR("SOFTDPU_UCX_ERR_MODE=%s ignored (peer or none), using peer", m);
	return true;
}

static bool log_level_var(const char *name, uint32_t *level)
{
	const char *text = env(name);

	if (text == NULL)
		return false;
	if (base_log_level_parse(text, level))
		return true;
	fprintf(stderr, "softdpu: ignoring %s=\"%s\" (not a log level)\n", name, text);
	return false;
}

bool base_config_log_level(uint32_t *level)
{
	return log_level_var("SOFTDPU_LOG_LEVEL", level);
}

bool base_config_sdk_log_level(uint32_t *level)
{
	return log_level_var("SOFTDPU_SDK_LOG_LEVEL", level);
}
