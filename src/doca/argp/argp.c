/*
 * DOCA argp session and command-line parsing.
 *
 * Accepted forms: "--name value", "--name=value", "-x value", "-x=value",
 * "-xvalue" (one-letter short names), "-name" (multi-letter short names or
 * long names with one dash). Boolean flags take no argument. Everything
 * after "--" belongs to the DPDK callback.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argp_priv.h"
#include "dc_log.h"
#include "doca_log.h"

struct dargp_state dargp_g = {
	.log_level = -1,
	.sdk_log_level = -1,
};

enum dargp_std {
	DARGP_STD_NONE,
	DARGP_STD_HELP,
	DARGP_STD_VERSION,
	DARGP_STD_LOG_LEVEL,
	DARGP_STD_SDK_LOG_LEVEL,
	DARGP_STD_JSON,
};

static const struct {
	const char *short_name;
	const char *long_name;
	enum dargp_std id;
} dargp_std_flags[] = {
	{ "h", "help", DARGP_STD_HELP },
	{ "v", "version", DARGP_STD_VERSION },
	{ "l", "log-level", DARGP_STD_LOG_LEVEL },
	{ NULL, "sdk-log-level", DARGP_STD_SDK_LOG_LEVEL },
	{ "j", "json", DARGP_STD_JSON },
};

#define DARGP_N_STD (sizeof(dargp_std_flags) / sizeof(dargp_std_flags[0]))

/* One command-line token resolved to a flag. */
struct dargp_match {
	enum dargp_std std;
	struct doca_argp_param *param;
	const char *value; /* inline value ("--x=v", "-xv"), else NULL */
};

/* Set when the command line itself is wrong: doca_argp_start() then prints the usage to stderr. */
static bool dargp_usage_needed;

static doca_error_t dargp_bad_input(void)
{
	dargp_usage_needed = true;
	return DOCA_ERROR_INVALID_VALUE;
}

/* ---- session ------------------------------------------------------------------------------------------------- */

doca_error_t doca_argp_init(const char *program_name, void *program_config)
{
	if (dargp_g.initialized) {
		DC_ERR("argp already initialized");
		return DOCA_ERROR_BAD_STATE;
	}
	if (program_name != NULL) {
		dargp_g.program_name = strdup(program_name);
		if (dargp_g.program_name == NULL)
			return DOCA_ERROR_NO_MEMORY;
	}
	dargp_g.program_config = program_config;
	dargp_g.log_level = -1;
	dargp_g.sdk_log_level = -1;
	dargp_g.initialized = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_destroy(void)
{
	struct doca_argp_param *p, *next;

	if (!dargp_g.initialized)
		return DOCA_ERROR_BAD_STATE;
	for (p = dargp_g.params; p != NULL; p = next) {
		next = p->next;
		dargp_param_free(p);
	}
	free(dargp_g.program_name);
	free(dargp_g.dpdk_argv);
	memset(&dargp_g, 0, sizeof(dargp_g));
	dargp_g.log_level = -1;
	dargp_g.sdk_log_level = -1;
	return DOCA_SUCCESS;
}

static bool dargp_name_taken(const char *name, bool is_short)
{
	const struct doca_argp_param *p;
	size_t i;

	for (i = 0; i < DARGP_N_STD; i++) {
		const char *std = is_short ? dargp_std_flags[i].short_name : dargp_std_flags[i].long_name;

		if (std != NULL && strcmp(std, name) == 0)
			return true;
	}
	for (p = dargp_g.params; p != NULL; p = p->next) {
		const char *have = is_short ? p->short_name : p->long_name;

		if (have != NULL && strcmp(have, name) == 0)
			return true;
	}
	return false;
}

/* A missing mandatory field (name, type, callback) is documented as an initialization error. */
static doca_error_t dargp_param_check(const struct doca_argp_param *p)
{
	bool has_short = p->short_name != NULL && *p->short_name != '\0';
	bool has_long = p->long_name != NULL && *p->long_name != '\0';

	if (p->no_memory)
		return DOCA_ERROR_NO_MEMORY;
	if (!has_short && !has_long) {
		DC_ERR("param has neither a short nor a long name");
		return DOCA_ERROR_INITIALIZATION;
	}
	if (p->type == DOCA_ARGP_TYPE_UNKNOWN) {
		DC_ERR("param %s has no type", has_long ? p->long_name : p->short_name);
		return DOCA_ERROR_INITIALIZATION;
	}
	if (p->type < DOCA_ARGP_TYPE_UNKNOWN || p->type > DOCA_ARGP_TYPE_JSON_OBJ) {
		DC_ERR("param %s has no valid type", has_long ? p->long_name : p->short_name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (p->callback == NULL) {
		DC_ERR("param %s has no callback", has_long ? p->long_name : p->short_name);
		return DOCA_ERROR_INITIALIZATION;
	}
	if ((has_short && dargp_name_taken(p->short_name, true)) || (has_long && dargp_name_taken(p->long_name, false))) {
		DC_ERR("param %s reuses a name already registered", has_long ? p->long_name : p->short_name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_param(struct doca_argp_param *input_param)
{
	doca_error_t ret;

	if (input_param == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (input_param->registered)
		return DOCA_ERROR_BAD_STATE;
	if (!dargp_g.initialized || dargp_g.started) {
		DC_ERR("params are registered between doca_argp_init() and doca_argp_start()");
		ret = DOCA_ERROR_BAD_STATE;
		goto free_param;
	}
	ret = dargp_param_check(input_param);
	if (ret != DOCA_SUCCESS)
		goto free_param;
	input_param->registered = true;
	if (dargp_g.params_tail != NULL)
		dargp_g.params_tail->next = input_param;
	else
		dargp_g.params = input_param;
	dargp_g.params_tail = input_param;
	return DOCA_SUCCESS;

free_param:
	/* The parser owns the param from the call on, also on failure. */
	dargp_param_free(input_param);
	return ret;
}

doca_error_t doca_argp_register_version_callback(callback_func callback)
{
	if (callback == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dargp_g.initialized)
		return DOCA_ERROR_BAD_STATE;
	dargp_g.version_cb = callback;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_validation_callback(validation_callback callback)
{
	if (callback == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dargp_g.initialized)
		return DOCA_ERROR_BAD_STATE;
	dargp_g.validation_cb = callback;
	return DOCA_SUCCESS;
}

void doca_argp_set_dpdk_program(dpdk_callback callback)
{
	if (!dargp_g.initialized) {
		DC_ERR("doca_argp_set_dpdk_program() before doca_argp_init()");
		return;
	}
	if (callback == NULL) {
		DC_ERR("doca_argp_set_dpdk_program() needs a callback");
		return;
	}
	dargp_g.dpdk_cb = callback;
}

void doca_argp_set_grpc_program(void)
{
	if (!dargp_g.initialized) {
		DC_ERR("doca_argp_set_grpc_program() before doca_argp_init()");
		return;
	}
	DC_ERR("gRPC programs are not supported by softdpu; doca_argp_start() will fail");
	dargp_g.grpc = true;
}

doca_error_t doca_argp_get_grpc_addr(char **addr)
{
	if (addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	DC_ERR("gRPC programs are not supported by softdpu");
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_argp_get_log_level(int *log_level)
{
	if (log_level == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*log_level = dargp_g.log_level >= 0 ? dargp_g.log_level : (int)doca_log_level_get_global_lower_limit();
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_get_sdk_log_level(int *log_level)
{
	if (log_level == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*log_level = dargp_g.sdk_log_level >= 0 ? dargp_g.sdk_log_level : (int)doca_log_level_get_global_sdk_limit();
	return DOCA_SUCCESS;
}

void doca_argp_usage(void)
{
	if (!dargp_g.initialized) {
		DC_ERR("doca_argp_usage() before doca_argp_init()");
		return;
	}
	dargp_print_usage(stdout);
	exit(EXIT_SUCCESS);
}

/* ---- token matching ------------------------------------------------------------------------------------------ */

static bool dargp_name_eq(const char *name, size_t len, const char *candidate)
{
	return candidate != NULL && strlen(candidate) == len && strncmp(name, candidate, len) == 0;
}

static bool dargp_match_name(const char *name, size_t len, bool is_short, struct dargp_match *m)
{
	struct doca_argp_param *p;
	size_t i;

	for (i = 0; i < DARGP_N_STD; i++) {
		if (dargp_name_eq(name, len, is_short ? dargp_std_flags[i].short_name : dargp_std_flags[i].long_name)) {
			m->std = dargp_std_flags[i].id;
			return true;
		}
	}
	for (p = dargp_g.params; p != NULL; p = p->next) {
		if (dargp_name_eq(name, len, is_short ? p->short_name : p->long_name)) {
			m->param = p;
			return true;
		}
	}
	return false;
}

/* "-xVALUE": a one-letter short name with its value attached. */
static bool dargp_match_attached(const char *name, struct dargp_match *m)
{
	if (name[0] == '\0' || name[1] == '\0' || !dargp_match_name(name, 1, true, m))
		return false;
	if (m->param != NULL && m->param->type == DOCA_ARGP_TYPE_BOOLEAN) {
		m->param = NULL;
		return false;
	}
	m->value = name + 1;
	return true;
}

static bool dargp_match_token(const char *tok, struct dargp_match *m)
{
	bool dashdash = strncmp(tok, "--", 2) == 0;
	const char *name = tok + (dashdash ? 2 : 1);
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);

	memset(m, 0, sizeof(*m));
	if (tok[0] != '-' || len == 0)
		return false;
	m->value = eq ? eq + 1 : NULL;
	if (dashdash)
		return dargp_match_name(name, len, false, m);
	if (dargp_match_name(name, len, true, m) || dargp_match_name(name, len, false, m))
		return true;
	return dargp_match_attached(name, m);
}

static bool dargp_needs_value(const struct dargp_match *m)
{
	if (m->param != NULL)
		return m->param->type != DOCA_ARGP_TYPE_BOOLEAN;
	return m->std == DARGP_STD_LOG_LEVEL || m->std == DARGP_STD_SDK_LOG_LEVEL || m->std == DARGP_STD_JSON;
}

/* ---- value conversion ---------------------------------------------------------------------------------------- */

static bool dargp_parse_int(const char *text, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || *end != '\0' || errno != 0 || v < INT_MIN || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

static bool dargp_parse_bool(const char *text, bool *out)
{
	if (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0) {
		*out = true;
		return true;
	}
	if (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0) {
		*out = false;
		return true;
	}
	return false;
}

static bool dargp_parse_level(const char *text, int *out)
{
	static const char *const names[] = { "disable", "critical", "error", "warning", "info", "debug", "trace" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(text, names[i]) == 0) {
			*out = (int)(i + 1) * 10;
			return true;
		}
	}
	return dargp_parse_int(text, out) && *out >= DOCA_LOG_LEVEL_DISABLE && *out <= DOCA_LOG_LEVEL_TRACE &&
	       *out % 10 == 0;
}

/* ---- flag handling ------------------------------------------------------------------------------------------- */

static const char *dargp_param_name(const struct doca_argp_param *p)
{
	return p->long_name ? p->long_name : p->short_name;
}

static doca_error_t dargp_run_callback(struct doca_argp_param *p, void *value)
{
	doca_error_t ret = p->callback(value, dargp_g.program_config);

	if (ret != DOCA_SUCCESS)
		DC_ERR("callback of flag %s failed: %s", dargp_param_name(p), doca_get_error_name(ret));
	return ret;
}

static doca_error_t dargp_apply_param(struct doca_argp_param *p, const char *value)
{
	bool flag = true;
	int number;

	if (p->seen && !p->multiplicity) {
		DC_ERR("flag %s given more than once", dargp_param_name(p));
		return dargp_bad_input();
	}
	p->seen = true;
	switch (p->type) {
	case DOCA_ARGP_TYPE_STRING:
		return dargp_run_callback(p, (void *)value);
	case DOCA_ARGP_TYPE_INT:
		if (!dargp_parse_int(value, &number)) {
			DC_ERR("flag %s expects an integer, got \"%s\"", dargp_param_name(p), value);
			return dargp_bad_input();
		}
		return dargp_run_callback(p, &number);
	case DOCA_ARGP_TYPE_BOOLEAN:
		if (value != NULL && !dargp_parse_bool(value, &flag)) {
			DC_ERR("flag %s takes no argument, got \"%s\"", dargp_param_name(p), value);
			return dargp_bad_input();
		}
		return dargp_run_callback(p, &flag);
	default:
		DC_ERR("flag %s takes a JSON object, which only a JSON file can give", dargp_param_name(p));
		return dargp_bad_input();
	}
}

static doca_error_t dargp_apply_std(enum dargp_std std, const char *value)
{
	int level;

	if (std == DARGP_STD_JSON) {
		DC_ERR("JSON configuration files are not supported by softdpu");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (!dargp_parse_level(value, &level)) {
		DC_ERR("\"%s\" is not a log level", value);
		return dargp_bad_input();
	}
	if (std == DARGP_STD_LOG_LEVEL) {
		dargp_g.log_level = level;
		return doca_log_level_set_global_lower_limit((uint32_t)level);
	}
	dargp_g.sdk_log_level = level;
	return doca_log_level_set_global_sdk_limit((uint32_t)level);
}

/* Resolve argv[*i] (and its separate value, advancing *i) into a match. */
static doca_error_t dargp_next_flag(int end, char **argv, int *i, struct dargp_match *m)
{
	const char *tok = argv[*i];

	if (!dargp_match_token(tok, m)) {
		DC_ERR("unknown flag or unexpected argument \"%s\"", tok);
		return dargp_bad_input();
	}
	if (!dargp_needs_value(m) || m->value != NULL)
		return DOCA_SUCCESS;
	if (*i + 1 >= end) {
		DC_ERR("flag \"%s\" needs an argument", tok);
		return dargp_bad_input();
	}
	*i += 1;
	m->value = argv[*i];
	return DOCA_SUCCESS;
}

/* -h and -v win over everything else on the line, even over errors. */
static void dargp_handle_exit_flags(int end, char **argv)
{
	struct dargp_match m;
	int i;

	for (i = 1; i < end; i++) {
		/* Quiet scan: errors are reported by the real pass. */
		if (!dargp_match_token(argv[i], &m))
			continue;
		if (dargp_needs_value(&m) && m.value == NULL)
			i++;
		if (m.std == DARGP_STD_NONE)
			continue;
		if (m.std == DARGP_STD_HELP) {
			dargp_print_usage(stdout);
			exit(EXIT_SUCCESS);
		}
		if (m.std == DARGP_STD_VERSION) {
			if (dargp_g.version_cb != NULL)
				(void)dargp_g.version_cb(NULL, dargp_g.program_config);
			else
				dargp_print_version(stdout);
			exit(EXIT_SUCCESS);
		}
	}
}

static doca_error_t dargp_parse_flags(int end, char **argv)
{
	struct dargp_match m;
	doca_error_t ret;
	int i;

	for (i = 1; i < end; i++) {
		ret = dargp_next_flag(end, argv, &i, &m);
		if (ret != DOCA_SUCCESS)
			return ret;
		if (m.param != NULL)
			ret = dargp_apply_param(m.param, m.value);
		else
			ret = dargp_apply_std(m.std, m.value);
		if (ret != DOCA_SUCCESS)
			return ret;
	}
	return DOCA_SUCCESS;
}

static doca_error_t dargp_check_mandatory(void)
{
	const struct doca_argp_param *p;

	for (p = dargp_g.params; p != NULL; p = p->next) {
		if (p->mandatory && !p->seen) {
			DC_ERR("mandatory flag %s is missing", dargp_param_name(p));
			return dargp_bad_input();
		}
	}
	return DOCA_SUCCESS;
}

/* argv[0] followed by everything after "--"; the array lives until doca_argp_destroy(). */
static doca_error_t dargp_run_dpdk(int argc, char **argv, int dashdash)
{
	int extra = dashdash < argc ? argc - dashdash - 1 : 0;
	int k;

	if (dargp_g.dpdk_cb == NULL) {
		if (dashdash < argc) {
			DC_ERR("flags after \"--\" need a DPDK program (doca_argp_set_dpdk_program)");
			return dargp_bad_input();
		}
		return DOCA_SUCCESS;
	}
	dargp_g.dpdk_argv = calloc((size_t)extra + 2, sizeof(char *));
	if (dargp_g.dpdk_argv == NULL)
		return DOCA_ERROR_NO_MEMORY;
	dargp_g.dpdk_argv[0] = argv[0];
	for (k = 0; k < extra; k++)
		dargp_g.dpdk_argv[k + 1] = argv[dashdash + 1 + k];
	dargp_g.dpdk_argc = extra + 1;
	return dargp_g.dpdk_cb(dargp_g.dpdk_argc, dargp_g.dpdk_argv);
}

static int dargp_find_dashdash(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

static doca_error_t dargp_start_checks(int argc, char **argv)
{
	int i;

	if (!dargp_g.initialized || dargp_g.started) {
		DC_ERR("doca_argp_start() needs doca_argp_init() and runs once");
		return DOCA_ERROR_BAD_STATE;
	}
	if (argc < 1 || argv == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	for (i = 0; i < argc; i++)
		if (argv[i] == NULL)
			return DOCA_ERROR_INVALID_VALUE;
	if (dargp_g.grpc) {
		DC_ERR("gRPC programs are not supported by softdpu");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_start(int argc, char **argv)
{
	doca_error_t ret;
	int dashdash;

	ret = dargp_start_checks(argc, argv);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (dargp_g.program_name == NULL) {
		const char *base = strrchr(argv[0], '/');

		dargp_g.program_name = strdup(base ? base + 1 : argv[0]);
		if (dargp_g.program_name == NULL)
			return DOCA_ERROR_NO_MEMORY;
	}
	dargp_g.started = true;
	dargp_usage_needed = false;
	dashdash = dargp_find_dashdash(argc, argv);
	dargp_handle_exit_flags(dashdash, argv);
	ret = dargp_parse_flags(dashdash, argv);
	if (ret == DOCA_SUCCESS)
		ret = dargp_check_mandatory();
	if (ret == DOCA_SUCCESS)
		ret = dargp_run_dpdk(argc, argv, dashdash);
	if (ret == DOCA_SUCCESS && dargp_g.validation_cb != NULL)
		ret = dargp_g.validation_cb(dargp_g.program_config);
	if (dargp_usage_needed)
		dargp_print_usage(stderr);
	return ret;
}
