/*
 * DOCA argp: flag registration, every accepted command-line form, values
 * reaching callbacks and program_config, standard flags, DPDK hand-off,
 * error codes, and -h/-v exiting the process (checked in forked children).
 */
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doca_argp.h"
#include "doca_log.h"
#include "harness.h"

struct app_cfg {
	char name[64];
	int count;
	bool verbose;
	int multi_sum;
	int multi_n;
	int validated;
};

static struct app_cfg cfg;
static int dpdk_argc_seen;
static char dpdk_argv_seen[8][32];
static doca_error_t validation_result;

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *)))
#define START(...) doca_argp_start(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static doca_error_t name_cb(void *value, void *config)
{
	struct app_cfg *c = config;

	snprintf(c->name, sizeof(c->name), "%s", (char *)value);
	return DOCA_SUCCESS;
}

static doca_error_t count_cb(void *value, void *config)
{
	((struct app_cfg *)config)->count = *(int *)value;
	return DOCA_SUCCESS;
}

static doca_error_t verbose_cb(void *value, void *config)
{
	((struct app_cfg *)config)->verbose = *(bool *)value;
	return DOCA_SUCCESS;
}

static doca_error_t multi_cb(void *value, void *config)
{
	struct app_cfg *c = config;

	c->multi_sum += *(int *)value;
	c->multi_n++;
	return DOCA_SUCCESS;
}

static doca_error_t failing_cb(void *value, void *config)
{
	(void)value;
	(void)config;
	return DOCA_ERROR_NOT_PERMITTED;
}

static doca_error_t version_cb(void *value, void *config)
{
	(void)value;
	printf("custom version of %s\n", config == &cfg ? "cfg" : "?");
	return DOCA_SUCCESS;
}

static doca_error_t validate_cb(void *config)
{
	((struct app_cfg *)config)->validated++;
	return validation_result;
}

static doca_error_t dpdk_cb(int argc, char **argv)
{
	int i;

	dpdk_argc_seen = argc;
	for (i = 0; i < argc && i < 8; i++)
		snprintf(dpdk_argv_seen[i], sizeof(dpdk_argv_seen[i]), "%s", argv[i]);
	return DOCA_SUCCESS;
}

static doca_error_t add_param(const char *s, const char *l, enum doca_argp_type type, callback_func cb,
			      bool mandatory, bool multi)
{
	struct doca_argp_param *p;
	doca_error_t ret = doca_argp_param_create(&p);

	if (ret != DOCA_SUCCESS)
		return ret;
	doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	doca_argp_param_set_arguments(p, type == DOCA_ARGP_TYPE_BOOLEAN ? NULL : "<value>");
	doca_argp_param_set_description(p, "a test flag");
	doca_argp_param_set_type(p, type);
	doca_argp_param_set_callback(p, cb);
	if (mandatory)
		doca_argp_param_set_mandatory(p);
	if (multi)
		doca_argp_param_set_multiplicity(p);
	return doca_argp_register_param(p);
}

/* A fresh session with --name (mandatory string), -c/--count (int), -V/--verbose (bool), -m/--multi (repeatable int). */
static doca_error_t setup(bool name_mandatory)
{
	doca_error_t ret;

	memset(&cfg, 0, sizeof(cfg));
	dpdk_argc_seen = 0;
	validation_result = DOCA_SUCCESS;
	ret = doca_argp_init("tprog", &cfg);
	if (ret == DOCA_SUCCESS)
		ret = add_param("n", "name", DOCA_ARGP_TYPE_STRING, name_cb, name_mandatory, false);
	if (ret == DOCA_SUCCESS)
		ret = add_param("c", "count", DOCA_ARGP_TYPE_INT, count_cb, false, false);
	if (ret == DOCA_SUCCESS)
		ret = add_param("V", "verbose", DOCA_ARGP_TYPE_BOOLEAN, verbose_cb, false, false);
	if (ret == DOCA_SUCCESS)
		ret = add_param("m", "multi", DOCA_ARGP_TYPE_INT, multi_cb, false, true);
	return ret;
}

/* Runs fn with stderr captured; returns what it printed. */
static doca_error_t quiet_start(int argc, char **argv, char *err, size_t cap)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	doca_error_t ret;
	size_t n;

	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	ret = doca_argp_start(argc, argv);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, cap - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return ret;
}

#define QUIET_START(err, ...) quiet_start(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), err, sizeof(err))

static void test_state_errors(void)
{
	struct doca_argp_param *p;
	int level;

	CHECK_ERR(START("tprog"), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_argp_register_version_callback(version_cb), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_argp_register_validation_callback(validate_cb), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_argp_param_create(&p));
	doca_argp_param_set_long_name(p, "early");
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_INT);
	doca_argp_param_set_callback(p, count_cb);
	CHECK_ERR(doca_argp_register_param(p), DOCA_ERROR_BAD_STATE); /* p is freed by argp */
	CHECK_OK(doca_argp_get_log_level(&level));
	CHECK(level == (int)doca_log_level_get_global_lower_limit());

	CHECK_OK(doca_argp_init("tprog", &cfg));
	CHECK_ERR(doca_argp_init("again", &cfg), DOCA_ERROR_BAD_STATE);
	CHECK_OK(START("tprog"));
	CHECK_ERR(START("tprog"), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(add_param("z", NULL, DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_argp_destroy());
	CHECK_ERR(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
}

static void test_register_errors(void)
{
	struct doca_argp_param *p;

	CHECK_OK(doca_argp_init("tprog", &cfg));
	CHECK_ERR(doca_argp_register_param(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_argp_param_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_argp_param_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_argp_register_version_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_argp_register_validation_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(add_param(NULL, NULL, DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_INITIALIZATION);
	CHECK_ERR(add_param("", "", DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_INITIALIZATION);
	CHECK_ERR(add_param("x", NULL, DOCA_ARGP_TYPE_UNKNOWN, count_cb, false, false), DOCA_ERROR_INITIALIZATION);
	CHECK_ERR(add_param("x", NULL, (enum doca_argp_type)42, count_cb, false, false), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(add_param("x", NULL, DOCA_ARGP_TYPE_INT, NULL, false, false), DOCA_ERROR_INITIALIZATION);
	CHECK_ERR(add_param("h", NULL, DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(add_param(NULL, "log-level", DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(add_param("x", "xx", DOCA_ARGP_TYPE_INT, count_cb, false, false));
	CHECK_ERR(add_param("x", NULL, DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(add_param(NULL, "xx", DOCA_ARGP_TYPE_INT, count_cb, false, false), DOCA_ERROR_INVALID_VALUE);
	/* an unregistered param is the caller's to destroy; a registered one is argp's */
	CHECK_OK(doca_argp_param_create(&p));
	doca_argp_param_set_short_name(p, "q");
	CHECK_OK(doca_argp_param_destroy(p));
	CHECK_OK(doca_argp_param_create(&p));
	doca_argp_param_set_short_name(p, "q");
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	doca_argp_param_set_callback(p, name_cb);
	doca_argp_param_set_cli_only(p);
	CHECK_OK(doca_argp_register_param(p));
	CHECK_ERR(doca_argp_param_destroy(p), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_argp_register_param(p), DOCA_ERROR_BAD_STATE);
	/* NULL param to setters is refused without crashing */
	doca_argp_param_set_short_name(NULL, "a");
	doca_argp_param_set_type(NULL, DOCA_ARGP_TYPE_INT);
	doca_argp_param_set_mandatory(NULL);
	CHECK_OK(doca_argp_destroy());
}

static void test_values_reach_callbacks(void)
{
	CHECK_OK(setup(true));
	CHECK_OK(START("tprog", "--name", "alice", "-c", "17", "--verbose", "-m", "4"));
	CHECK(strcmp(cfg.name, "alice") == 0);
	CHECK(cfg.count == 17 && cfg.verbose && cfg.multi_sum == 4 && cfg.multi_n == 1);
	CHECK_OK(doca_argp_destroy());
}

static void test_value_forms(void)
{
	CHECK_OK(setup(true));
	CHECK_OK(START("tprog", "--name=bob", "--count=-3", "-V"));
	CHECK(strcmp(cfg.name, "bob") == 0 && cfg.count == -3 && cfg.verbose);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(true));
	CHECK_OK(START("tprog", "-n", "carol", "-c99"));
	CHECK(strcmp(cfg.name, "carol") == 0 && cfg.count == 99 && !cfg.verbose);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(true));
	CHECK_OK(START("tprog", "--name=", "-V=true"));
	CHECK(cfg.name[0] == '\0' && cfg.verbose);
	CHECK_OK(doca_argp_destroy());
}

static void test_value_forms_single_dash_long(void)
{
	CHECK_OK(setup(true));
	CHECK_OK(START("tprog", "-name", "dave", "-c=5", "--verbose=false"));
	CHECK(strcmp(cfg.name, "dave") == 0 && cfg.count == 5 && !cfg.verbose);
	CHECK_OK(doca_argp_destroy());
}

static void test_string_with_dash_value(void)
{
	/* a flag that takes a value consumes the next token, even one starting with '-' */
	CHECK_OK(setup(true));
	CHECK_OK(START("tprog", "--name", "-weird-", "-c", "-7"));
	CHECK(strcmp(cfg.name, "-weird-") == 0 && cfg.count == -7);
	CHECK_OK(doca_argp_destroy());
}

static void test_multiplicity(void)
{
	char err[4096];

	CHECK_OK(setup(false));
	CHECK_OK(START("tprog", "-m", "1", "--multi", "2", "--multi=3", "-m4"));
	CHECK(cfg.multi_sum == 10 && cfg.multi_n == 4);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(false));
	CHECK_ERR(QUIET_START(err, "tprog", "-c", "1", "--count", "2"), DOCA_ERROR_INVALID_VALUE);
	CHECK(strstr(err, "more than once") != NULL && strstr(err, "Usage: tprog") != NULL);
	CHECK_OK(doca_argp_destroy());
}

static void expect_invalid(int argc, char **argv, const char *why)
{
	char err[8192];

	CHECK_OK(setup(true));
	CHECK_ERR(quiet_start(argc, argv, err, sizeof(err)), DOCA_ERROR_INVALID_VALUE);
	CHECK(strstr(err, why) != NULL);
	CHECK(strstr(err, "Usage: tprog [DOCA Flags] [Program Flags]") != NULL);
	CHECK(strstr(err, "--name <value>") != NULL);
	CHECK_OK(doca_argp_destroy());
}

#define EXPECT_INVALID(why, ...) expect_invalid(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), why)

static void test_command_line_errors(void)
{
	EXPECT_INVALID("unknown flag", "tprog", "--name", "a", "--nope");
	EXPECT_INVALID("unknown flag", "tprog", "--name", "a", "-z");
	EXPECT_INVALID("unexpected argument \"stray\"", "tprog", "--name", "a", "stray");
	EXPECT_INVALID("needs an argument", "tprog", "--name");
	EXPECT_INVALID("needs an argument", "tprog", "--name", "a", "-c");
	EXPECT_INVALID("expects an integer", "tprog", "--name", "a", "-c", "12x");
	EXPECT_INVALID("expects an integer", "tprog", "--name", "a", "-c", "");
	EXPECT_INVALID("expects an integer", "tprog", "--name", "a", "-c", "99999999999");
	EXPECT_INVALID("mandatory flag name is missing", "tprog", "-c", "1");
	EXPECT_INVALID("takes no argument", "tprog", "--name", "a", "--verbose=maybe");
	EXPECT_INVALID("not a log level", "tprog", "--name", "a", "-l", "55");
	EXPECT_INVALID("not a log level", "tprog", "--name", "a", "--sdk-log-level", "loud");
	EXPECT_INVALID("need a DPDK program", "tprog", "--name", "a", "--", "-a", "0");
}

static void test_callback_error_propagates(void)
{
	CHECK_OK(doca_argp_init("tprog", &cfg));
	CHECK_OK(add_param("f", "fail", DOCA_ARGP_TYPE_STRING, failing_cb, false, false));
	CHECK_ERR(START("tprog", "--fail", "x"), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_argp_destroy());
}

static void test_validation_callback(void)
{
	CHECK_OK(setup(false));
	CHECK_OK(doca_argp_register_validation_callback(validate_cb));
	CHECK_OK(START("tprog", "-c", "3"));
	CHECK(cfg.validated == 1 && cfg.count == 3);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(false));
	CHECK_OK(doca_argp_register_validation_callback(validate_cb));
	validation_result = DOCA_ERROR_INVALID_VALUE;
	CHECK_ERR(START("tprog"), DOCA_ERROR_INVALID_VALUE);
	CHECK(cfg.validated == 1);
	CHECK_OK(doca_argp_destroy());
}

static void test_log_level_flags(void)
{
	uint32_t app = doca_log_level_get_global_lower_limit();
	uint32_t sdk = doca_log_level_get_global_sdk_limit();
	int level;

	CHECK_OK(setup(false));
	CHECK_OK(START("tprog", "-l", "60", "--sdk-log-level", "70"));
	CHECK(doca_log_level_get_global_lower_limit() == DOCA_LOG_LEVEL_DEBUG);
	CHECK(doca_log_level_get_global_sdk_limit() == DOCA_LOG_LEVEL_TRACE);
	CHECK_OK(doca_argp_get_log_level(&level));
	CHECK(level == 60);
	CHECK_OK(doca_argp_get_sdk_log_level(&level));
	CHECK(level == 70);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(false));
	CHECK_OK(START("tprog", "--log-level=30", "--sdk-log-level=20"));
	CHECK(doca_log_level_get_global_lower_limit() == DOCA_LOG_LEVEL_ERROR);
	CHECK(doca_log_level_get_global_sdk_limit() == DOCA_LOG_LEVEL_CRIT);
	CHECK_OK(doca_argp_destroy());

	CHECK_ERR(doca_argp_get_log_level(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_argp_get_sdk_log_level(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_argp_get_sdk_log_level(&level));
	CHECK(level == DOCA_LOG_LEVEL_CRIT); /* no flag given: the current SDK limit */
	CHECK_OK(doca_log_level_set_global_lower_limit(app));
	CHECK_OK(doca_log_level_set_global_sdk_limit(sdk));
}

static void test_dpdk_flags(void)
{
	CHECK_OK(setup(false));
	doca_argp_set_dpdk_program(dpdk_cb);
	CHECK_OK(START("tprog", "-c", "2", "--", "-a", "00:00.0", "-l", "0-3"));
	CHECK(cfg.count == 2);
	CHECK(dpdk_argc_seen == 5);
	CHECK(strcmp(dpdk_argv_seen[0], "tprog") == 0 && strcmp(dpdk_argv_seen[1], "-a") == 0);
	CHECK(strcmp(dpdk_argv_seen[2], "00:00.0") == 0 && strcmp(dpdk_argv_seen[4], "0-3") == 0);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(false));
	doca_argp_set_dpdk_program(dpdk_cb);
	CHECK_OK(START("tprog"));
	CHECK(dpdk_argc_seen == 1);
	CHECK_OK(doca_argp_destroy());
}

static void test_not_supported_modes(void)
{
	char *addr;

	CHECK_OK(setup(false));
	CHECK_ERR(START("tprog", "-j", "cfg.json"), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_argp_destroy());

	CHECK_OK(setup(false));
	doca_argp_set_grpc_program();
	CHECK_ERR(START("tprog"), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_argp_get_grpc_addr(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_argp_get_grpc_addr(&addr), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_argp_destroy());
}

static void test_json_obj_from_cli(void)
{
	char err[4096];

	CHECK_OK(doca_argp_init("tprog", &cfg));
	CHECK_OK(add_param("o", "obj", DOCA_ARGP_TYPE_JSON_OBJ, name_cb, false, false));
	CHECK_ERR(QUIET_START(err, "tprog", "--obj", "{}"), DOCA_ERROR_INVALID_VALUE);
	CHECK(strstr(err, "JSON object") != NULL);
	CHECK_OK(doca_argp_destroy());
}

/* ---- exiting flags, in forked children ------------------------------------------------------------------------ */

enum child_mode { CHILD_START, CHILD_USAGE };

/* Runs the parser on argv in a child with stdout on a pipe; returns the exit status. */
static int run_child(enum child_mode mode, const char *name, bool custom_version, int argc, char **argv, char *out,
		     size_t cap)
{
	int fds[2], status = -1;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		if (doca_argp_init(name, &cfg) != DOCA_SUCCESS ||
		    add_param("n", "name", DOCA_ARGP_TYPE_STRING, name_cb, true, false) != DOCA_SUCCESS)
			_exit(10);
		if (custom_version && doca_argp_register_version_callback(version_cb) != DOCA_SUCCESS)
			_exit(11);
		if (mode == CHILD_USAGE)
			doca_argp_usage();
		else
			(void)doca_argp_start(argc, argv);
		_exit(12); /* must not get here */
	}
	close(fds[1]);
	while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return status;
}

#define RUN_CHILD(name, custom, out, ...)                                                                              \
	run_child(CHILD_START, name, custom, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), out, sizeof(out))

static bool exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_help_exits(void)
{
	char out[8192];

	CHECK(exited_ok(RUN_CHILD("tprog", false, out, "tprog", "-h")));
	CHECK(strstr(out, "Usage: tprog [DOCA Flags] [Program Flags]") != NULL);
	CHECK(strstr(out, "-n, --name <value>") != NULL && strstr(out, "(required)") != NULL);
	CHECK(strstr(out, "-l, --log-level") != NULL && strstr(out, "--sdk-log-level") != NULL);
	/* help wins over a missing mandatory flag and unknown flags */
	CHECK(exited_ok(RUN_CHILD("tprog", false, out, "tprog", "--bogus", "--help")));
	CHECK(strstr(out, "Usage: tprog") != NULL);
	/* program name from argv[0] when init got NULL */
	CHECK(exited_ok(RUN_CHILD(NULL, false, out, "/usr/bin/myprog", "-h")));
	CHECK(strstr(out, "Usage: myprog [DOCA Flags]") != NULL);
}

static void test_version_exits(void)
{
	char out[4096];

	CHECK(exited_ok(RUN_CHILD("tprog", false, out, "tprog", "-v")));
	CHECK(strstr(out, "tprog\n") != NULL && strstr(out, "DOCA SDK version: 2.2.0") != NULL);
	CHECK(exited_ok(RUN_CHILD("tprog", true, out, "tprog", "--version")));
	CHECK(strcmp(out, "custom version of cfg\n") == 0);
}

static void test_usage_exits(void)
{
	char out[4096];

	CHECK(exited_ok(run_child(CHILD_USAGE, "tprog", false, 0, NULL, out, sizeof(out))));
	CHECK(strstr(out, "Usage: tprog") != NULL && strstr(out, "--name") != NULL);
}

static void test_errors_do_not_exit(void)
{
	char out[4096];
	int status = RUN_CHILD("tprog", false, out, "tprog", "--nope");

	/* doca_argp_start returned (child reached _exit(12)) and printed nothing to stdout */
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 12);
	CHECK(out[0] == '\0');
}

int main(void)
{
	/* The checks read argp's error lines, which are SDK logs: show them whatever the environment says. */
	if (doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_ERROR) != DOCA_SUCCESS)
		return 1;
	RUN(test_state_errors);
	RUN(test_register_errors);
	RUN(test_values_reach_callbacks);
	RUN(test_value_forms);
	RUN(test_value_forms_single_dash_long);
	RUN(test_string_with_dash_value);
	RUN(test_multiplicity);
	RUN(test_command_line_errors);
	RUN(test_callback_error_propagates);
	RUN(test_validation_callback);
	RUN(test_log_level_flags);
	RUN(test_dpdk_flags);
	RUN(test_not_supported_modes);
	RUN(test_json_obj_from_cli);
	RUN(test_help_exits);
	RUN(test_version_exits);
	RUN(test_usage_exits);
	RUN(test_errors_do_not_exit);
	return th_summary("test_argp");
}
