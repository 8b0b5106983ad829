/*
 * DOCA log: record format, level filtering, sources, backends, limits,
 * rate limiting, SDK limit, environment variables and error paths.
 */
#define DOCA_LOGGING_ALLOW_TRACE
#include <fcntl.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doca_argp.h"
#include "doca_log.h"
#include "harness.h"

DOCA_LOG_REGISTER(TEST::LOG);

#define CAP_SIZE 16384

struct capture {
	char text[CAP_SIZE];
	size_t len;
	int records;
};

static struct capture cap_a, cap_b;
static char buf_a[512], buf_b[512];

static void cap_append(struct capture *c, const char *rec)
{
	size_t n = strlen(rec);

	if (c->len + n >= CAP_SIZE)
		n = CAP_SIZE - 1 - c->len;
	memcpy(c->text + c->len, rec, n);
	c->len += n;
	c->text[c->len] = '\0';
	c->records++;
}

static void flush_a(char *rec)
{
	cap_append(&cap_a, rec);
}

static void flush_b(char *rec)
{
	cap_append(&cap_b, rec);
}

static void cap_reset(void)
{
	memset(&cap_a, 0, sizeof(cap_a));
	memset(&cap_b, 0, sizeof(cap_b));
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static void restore_defaults(void)
{
	doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_INFO);
	doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT);
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_ERROR);
	doca_log_set_bucket_time(1);
	doca_log_set_quantity(10);
}

/* Read everything a child wrote into a pipe. */
static size_t drain(int fd, char *out, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < cap && (n = read(fd, out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	return len;
}

static void test_level_values(void)
{
	CHECK(DOCA_LOG_LEVEL_DISABLE == 10 && DOCA_LOG_LEVEL_CRIT == 20 && DOCA_LOG_LEVEL_ERROR == 30);
	CHECK(DOCA_LOG_LEVEL_WARNING == 40 && DOCA_LOG_LEVEL_INFO == 50 && DOCA_LOG_LEVEL_DEBUG == 60);
	CHECK(DOCA_LOG_LEVEL_TRACE == 70);
}

static void test_defaults(void)
{
	if (getenv("SOFTDPU_LOG_LEVEL") != NULL || getenv("SOFTDPU_SDK_LOG_LEVEL") != NULL)
		return; /* the environment decides the defaults; covered by test_env_levels */
	CHECK(doca_log_level_get_global_lower_limit() == DOCA_LOG_LEVEL_INFO);
	CHECK(doca_log_level_get_global_upper_limit() == DOCA_LOG_LEVEL_CRIT);
	CHECK(doca_log_level_get_global_sdk_limit() == DOCA_LOG_LEVEL_ERROR);
	CHECK(doca_log_get_bucket_time() == 1);
	CHECK(doca_log_get_quantity() == 10);
	CHECK(log_source >= 0);
}

static void test_record_format(void)
{
	struct doca_logger_backend *b;
	char expect[128];
	int line;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	line = __LINE__ + 1;
	DOCA_LOG_INFO("hello %d %s", 42, "world");
	CHECK_OK(doca_log_backend_destroy(b));
	CHECK(cap_a.records == 1);
	snprintf(expect, sizeof(expect), "][%d][TEST::LOG][INFO][test_record_format:%d] hello 42 world\n", (int)getpid(),
		 line);
	CHECK(strstr(cap_a.text, expect) != NULL);
	/* "[HH:MM:SS:micro]" prefix */
	CHECK(cap_a.text[0] == '[' && cap_a.text[3] == ':' && cap_a.text[6] == ':' && cap_a.text[9] == ':');
	CHECK(cap_a.text[16] == ']');
	CHECK(strcmp(buf_a, cap_a.text) == 0);
}

static void test_bare_format_string(void)
{
	struct doca_logger_backend *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	DOCA_LOG_ERR("no arguments at all");
	DOCA_LOG_WARN("100%% sure");
	CHECK_OK(doca_log_backend_destroy(b));
	CHECK(strstr(cap_a.text, "[TEST::LOG][ERR][test_bare_format_string:") != NULL);
	CHECK(strstr(cap_a.text, "] no arguments at all\n") != NULL);
	CHECK(strstr(cap_a.text, "[WARN]") != NULL && strstr(cap_a.text, "] 100% sure\n") != NULL);
}

static void emit_all_levels(void)
{
	DOCA_LOG_CRIT("m-crit");
	DOCA_LOG_ERR("m-err");
	DOCA_LOG_WARN("m-warn");
	DOCA_LOG_INFO("m-info");
	DOCA_LOG_DBG("m-dbg");
	DOCA_LOG_TRC("m-trc");
}

static void test_level_filtering(void)
{
	struct doca_logger_backend *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	emit_all_levels();
	CHECK(cap_a.records == 4);
	CHECK(strstr(cap_a.text, "[CRIT]") && strstr(cap_a.text, "[ERR]") && strstr(cap_a.text, "[WARN]"));
	CHECK(strstr(cap_a.text, "m-info") != NULL && strstr(cap_a.text, "m-dbg") == NULL);

	cap_reset();
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE));
	CHECK(doca_log_level_get_global_lower_limit() == DOCA_LOG_LEVEL_TRACE);
	emit_all_levels();
	CHECK(cap_a.records == 6);
	CHECK(strstr(cap_a.text, "[DBG]") != NULL && strstr(cap_a.text, "[TRC]") != NULL);

	cap_reset();
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_ERROR));
	emit_all_levels();
	CHECK(cap_a.records == 2);
	CHECK(strstr(cap_a.text, "m-crit") != NULL && strstr(cap_a.text, "m-err") != NULL);

	cap_reset();
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE));
	emit_all_levels();
	CHECK(cap_a.records == 0);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static void test_upper_limit(void)
{
	struct doca_logger_backend *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_ERROR));
	CHECK(doca_log_level_get_global_upper_limit() == DOCA_LOG_LEVEL_ERROR);
	emit_all_levels();
	CHECK(cap_a.records == 3); /* ERR, WARN, INFO */
	CHECK(strstr(cap_a.text, "m-crit") == NULL);

	cap_reset();
	CHECK_OK(doca_log_backend_set_level_upper_limit(b, DOCA_LOG_LEVEL_INFO));
	CHECK_OK(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DEBUG));
	emit_all_levels();
	CHECK(cap_a.records == 2); /* INFO, DBG */
	CHECK(strstr(cap_a.text, "m-info") != NULL && strstr(cap_a.text, "m-dbg") != NULL);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static void test_per_backend_limits(void)
{
	struct doca_logger_backend *a, *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &a));
	CHECK_OK(doca_log_create_buffer_backend(buf_b, sizeof(buf_b), flush_b, &b));
	CHECK_OK(doca_log_backend_set_level_lower_limit(a, DOCA_LOG_LEVEL_DEBUG));
	CHECK_OK(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_WARNING));
	emit_all_levels();
	CHECK(cap_a.records == 5 && strstr(cap_a.text, "m-dbg") != NULL);
	CHECK(cap_b.records == 3 && strstr(cap_b.text, "m-info") == NULL);

	/* the global limit overrides every backend */
	cap_reset();
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_CRIT));
	emit_all_levels();
	CHECK(cap_a.records == 1 && cap_b.records == 1);
	CHECK_OK(doca_log_backend_destroy(a));
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static void test_strict_limits(void)
{
	struct doca_logger_backend *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_OK(doca_log_backend_set_level_lower_limit_strict(b));
	CHECK_OK(doca_log_backend_set_level_upper_limit(b, DOCA_LOG_LEVEL_ERROR));
	CHECK_OK(doca_log_backend_set_level_upper_limit_strict(b));
	CHECK_ERR(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DEBUG), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_log_backend_set_level_upper_limit(b, DOCA_LOG_LEVEL_CRIT), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE));
	CHECK_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT));
	emit_all_levels();
	CHECK(cap_a.records == 3); /* ERR..INFO only: both ends frozen */
	CHECK(strstr(cap_a.text, "m-crit") == NULL && strstr(cap_a.text, "m-dbg") == NULL);

	/* less verbose is still allowed */
	cap_reset();
	CHECK_OK(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_ERROR));
	emit_all_levels();
	CHECK(cap_a.records == 1 && strstr(cap_a.text, "m-err") != NULL);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static void test_fd_backend(void)
{
	struct doca_logger_backend *b;
	char out[1024];
	int fds[2];

	restore_defaults();
	CHECK(pipe(fds) == 0);
	CHECK_OK(doca_log_create_fd_backend(fds[1], &b));
	DOCA_LOG_WARN("through the fd %s", "backend");
	DOCA_LOG_DBG("filtered");
	CHECK_OK(doca_log_backend_destroy(b));
	close(fds[1]);
	drain(fds[0], out, sizeof(out));
	close(fds[0]);
	CHECK(count_of(out, "\n") == 1);
	CHECK(strstr(out, "[TEST::LOG][WARN][test_fd_backend:") != NULL);
	CHECK(strstr(out, "] through the fd backend\n") != NULL);
}

static void test_file_backend(void)
{
	struct doca_logger_backend *b;
	char out[1024];
	FILE *f = tmpfile();
	size_t n;

	restore_defaults();
	CHECK(f != NULL);
	CHECK_OK(doca_log_create_file_backend(f, &b));
	DOCA_LOG_INFO("into a FILE");
	DOCA_LOG_CRIT("and a crit");
	CHECK_OK(doca_log_backend_destroy(b));
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	CHECK(count_of(out, "\n") == 2);
	CHECK(strstr(out, "[INFO][test_file_backend:") != NULL && strstr(out, "] into a FILE\n") != NULL);
	CHECK(strstr(out, "[CRIT][test_file_backend:") != NULL);
}

static void test_buffer_truncation(void)
{
	struct doca_logger_backend *b;
	char small[16];

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(small, sizeof(small), flush_a, &b));
	DOCA_LOG_INFO("a message much longer than sixteen bytes");
	CHECK_OK(doca_log_backend_destroy(b));
	CHECK(cap_a.records == 1);
	CHECK(strlen(cap_a.text) == sizeof(small) - 1);
	CHECK(cap_a.text[0] == '[');
}

static void test_sources(void)
{
	struct doca_logger_backend *b;
	int src, src2;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_OK(doca_log_source_register("DPI::Parser", &src));
	CHECK(src != log_source);
	CHECK_OK(priv_doca_log_developer(DOCA_LOG_LEVEL_ERROR, src, "x.c", 7, "fn", "v=%u", 9u));
	CHECK(strstr(cap_a.text, "[DPI::Parser][ERR][fn:7] v=9\n") != NULL);
	CHECK_OK(doca_log_source_destroy(src));
	CHECK_ERR(doca_log_source_destroy(src), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_developer(DOCA_LOG_LEVEL_ERROR, src, "x.c", 7, "fn", "gone"),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK(cap_a.records == 1);
	/* ids are reused */
	CHECK_OK(doca_log_source_register("Again", &src2));
	CHECK(src2 == src);
	CHECK_OK(doca_log_source_destroy(src2));
	CHECK_OK(doca_log_backend_destroy(b));
}

static void test_rate_limit(void)
{
	struct doca_logger_backend *b;
	int i, bucket;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	doca_log_set_quantity(3);
	doca_log_set_bucket_time(60);
	CHECK(doca_log_get_quantity() == 3 && doca_log_get_bucket_time() == 60);
	for (i = 0; i < 10; i++)
		DOCA_LOG_RATE_LIMIT_INFO("burst %d", i);
	CHECK(cap_a.records == 3);
	CHECK(strstr(cap_a.text, "burst 2\n") != NULL && strstr(cap_a.text, "burst 3\n") == NULL);
	/* another call site has its own bucket */
	DOCA_LOG_RATE_LIMIT_ERR("other site");
	CHECK(cap_a.records == 4);
	/* a new window admits again */
	cap_reset();
	doca_log_set_bucket_time(0);
	for (i = 0; i < 5; i++)
		DOCA_LOG_RATE_LIMIT_WARN("window %d", i);
	CHECK(cap_a.records == 5);
	CHECK_ERR(doca_log_rate_bucket_register(log_source, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_rate_bucket_register(-1, &bucket), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_rate_bucket_register(log_source, &bucket));
	CHECK_ERR(priv_doca_log_rate_limit(DOCA_LOG_LEVEL_INFO, log_source, "f", 1, "g", -1, "x"),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_rate_limit(DOCA_LOG_LEVEL_INFO, log_source + 1, "f", 1, "g", bucket, "x"),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_rate_limit(5, log_source, "f", 1, "g", bucket, "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

/* Library messages ("softdpu" source) follow the SDK limit; argp's gRPC refusal logs one at ERROR. */
static void test_sdk_limit(void)
{
	struct doca_logger_backend *a, *b;
	char *addr;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &a));
	CHECK_OK(doca_log_create_buffer_backend(buf_b, sizeof(buf_b), flush_b, &b));
	CHECK_OK(doca_log_backend_set_sdk_level(b, DOCA_LOG_LEVEL_CRIT));
	CHECK_ERR(doca_argp_get_grpc_addr(&addr), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(cap_a.records == 1 && strstr(cap_a.text, "[softdpu][ERR][doca_argp_get_grpc_addr] ") != NULL);
	CHECK(cap_b.records == 0);

	cap_reset();
	CHECK_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_CRIT));
	CHECK(doca_log_level_get_global_sdk_limit() == DOCA_LOG_LEVEL_CRIT);
	CHECK_ERR(doca_argp_get_grpc_addr(&addr), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(cap_a.records == 0 && cap_b.records == 0);

	/* the application limit does not gate SDK messages */
	cap_reset();
	CHECK_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_ERROR));
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE));
	CHECK_ERR(doca_argp_get_grpc_addr(&addr), DOCA_ERROR_NOT_SUPPORTED);
	DOCA_LOG_ERR("app message hidden");
	CHECK(cap_a.records == 1 && strstr(cap_a.text, "[softdpu]") != NULL);
	CHECK_OK(doca_log_backend_destroy(a));
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static void test_legacy_names(void)
{
	struct doca_logger_backend *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_global_level_set(DOCA_LOG_LEVEL_DEBUG));
	CHECK(doca_log_global_level_get() == DOCA_LOG_LEVEL_DEBUG);
	CHECK(doca_log_level_get_global_lower_limit() == DOCA_LOG_LEVEL_DEBUG);
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_OK(doca_log_backend_level_set(b, DOCA_LOG_LEVEL_WARNING));
	emit_all_levels();
	CHECK(cap_a.records == 3);
	CHECK_ERR(doca_log_global_level_set(99), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_level_set(NULL, DOCA_LOG_LEVEL_INFO), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static int dlog_evaluations;

static int dlog_count_eval(void)
{
	return ++dlog_evaluations;
}

/* Without DOCA_LOGGING_ALLOW_DLOG (this file), development messages vanish and their arguments are not run. */
static void test_dlog_compiled_out(void)
{
	struct doca_logger_backend *b;

	restore_defaults();
	cap_reset();
	dlog_evaluations = 0;
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG));
	DOCA_DLOG_CRIT("d-crit %d", dlog_count_eval());
	DOCA_DLOG_ERR("d-err %d", dlog_count_eval());
	DOCA_DLOG_WARN("d-warn %d", dlog_count_eval());
	DOCA_DLOG_INFO("d-info %d", dlog_count_eval());
	DOCA_DLOG_DBG("d-dbg %d", dlog_count_eval());
	DOCA_DLOG(DOCA_LOG_LEVEL_ERROR, "d-any %d", dlog_count_eval());
	CHECK(cap_a.records == 0 && dlog_evaluations == 0);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

/* doca_log_developer / doca_log_rate_limit: the older entry points, which know the line but not the function. */
static void test_older_entry_points(void)
{
	struct doca_logger_backend *b;
	char expect[96];
	int bucket, i;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_OK(doca_log_developer(DOCA_LOG_LEVEL_WARNING, log_source, 77, "dev %s", "msg"));
	snprintf(expect, sizeof(expect), "][%d][TEST::LOG][WARN][line 77] dev msg\n", (int)getpid());
	CHECK(cap_a.records == 1 && strstr(cap_a.text, expect) != NULL);
	CHECK_OK(doca_log_developer(DOCA_LOG_LEVEL_DEBUG, log_source, 78, "hidden"));
	CHECK(cap_a.records == 1);
	CHECK_ERR(doca_log_developer(5, log_source, 1, "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_developer(DOCA_LOG_LEVEL_ERROR, -1, 1, "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_developer(DOCA_LOG_LEVEL_ERROR, log_source, 1, NULL), DOCA_ERROR_INVALID_VALUE);

	cap_reset();
	doca_log_set_quantity(2);
	doca_log_set_bucket_time(60);
	CHECK_OK(doca_log_rate_bucket_register(log_source, &bucket));
	for (i = 0; i < 5; i++)
		CHECK_OK(doca_log_rate_limit(DOCA_LOG_LEVEL_ERROR, log_source, 90, bucket, "rate %d", i));
	CHECK(cap_a.records == 2 && strstr(cap_a.text, "[line 90] rate 1\n") != NULL &&
	      strstr(cap_a.text, "rate 2") == NULL);
	CHECK_ERR(doca_log_rate_limit(DOCA_LOG_LEVEL_ERROR, log_source, 1, -1, "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_rate_limit(DOCA_LOG_LEVEL_ERROR, log_source + 1, 1, bucket, "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_backend_destroy(b));
	restore_defaults();
}

static void test_syslog_backend(void)
{
	struct doca_logger_backend *b, *c;

	restore_defaults();
	CHECK_ERR(doca_log_create_syslog_backend(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_syslog_backend("", &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_syslog_backend("x", NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_create_syslog_backend("softdpu-test", &b));
	CHECK_OK(doca_log_create_syslog_backend("softdpu-test2", &c));
	CHECK_OK(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE));
	CHECK_OK(doca_log_backend_set_level_lower_limit(c, DOCA_LOG_LEVEL_DISABLE));
	DOCA_LOG_ERR("not sent anywhere");
	CHECK_OK(doca_log_backend_destroy(c));
	CHECK_OK(doca_log_backend_destroy(b));
}

static void test_backend_destroy(void)
{
	struct doca_logger_backend *a, *b;

	restore_defaults();
	cap_reset();
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &a));
	CHECK_OK(doca_log_create_buffer_backend(buf_b, sizeof(buf_b), flush_b, &b));
	CHECK_OK(doca_log_backend_destroy(a));
	DOCA_LOG_INFO("only b");
	CHECK(cap_a.records == 0 && cap_b.records == 1);
	CHECK_ERR(doca_log_backend_destroy(a), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_backend_destroy(b));
}

static void test_invalid_arguments(void)
{
	struct doca_logger_backend *b;
	static const uint32_t bad[] = { 0, 5, 15, 25, 71, 80, 1000 };
	size_t i;
	int src;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(doca_log_level_set_global_lower_limit(bad[i]), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(doca_log_level_set_global_upper_limit(bad[i]), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(doca_log_level_set_global_sdk_limit(bad[i]), DOCA_ERROR_INVALID_VALUE);
	}
	CHECK_OK(doca_log_create_buffer_backend(buf_a, sizeof(buf_a), flush_a, &b));
	CHECK_ERR(doca_log_backend_set_level_lower_limit(b, 55), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_level_upper_limit(b, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_sdk_level(b, 71), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_level_lower_limit(NULL, 50), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_level_upper_limit(NULL, 50), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_sdk_level(NULL, 50), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_level_lower_limit_strict(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_backend_set_level_upper_limit_strict(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_developer(DOCA_LOG_LEVEL_DISABLE, log_source, "f", 1, "g", "x"),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_developer(45, log_source, "f", 1, "g", "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_developer(DOCA_LOG_LEVEL_INFO, -1, "f", 1, "g", "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(priv_doca_log_developer(DOCA_LOG_LEVEL_INFO, 1 << 20, "f", 1, "g", "x"), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_log_backend_destroy(b));
	CHECK_ERR(doca_log_create_buffer_backend(NULL, 10, flush_a, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_buffer_backend(buf_a, 1, flush_a, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_buffer_backend(buf_a, 10, NULL, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_buffer_backend(buf_a, 10, flush_a, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_file_backend(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_file_backend(stderr, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_fd_backend(-1, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_create_fd_backend(2, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_source_register(NULL, &src), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_source_register("", &src), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_source_register("X", NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_source_destroy(-1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_log_source_destroy(1 << 20), DOCA_ERROR_INVALID_VALUE);
	/* nothing above changed the limits */
	CHECK(doca_log_level_get_global_lower_limit() == DOCA_LOG_LEVEL_INFO);
}

/* Child: stdout/stderr go to pipes, then the standard backend splits levels between them. */
static void standard_child(int out_fd, int err_fd, uint32_t lower)
{
	dup2(out_fd, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	if (doca_log_level_set_global_lower_limit(lower) != DOCA_SUCCESS ||
	    doca_log_create_standard_backend() != DOCA_SUCCESS || doca_log_create_standard_backend() != DOCA_SUCCESS)
		_exit(2);
	emit_all_levels();
	fflush(NULL);
	_exit(0);
}

static void run_standard(uint32_t lower, char *out, char *err, size_t cap, int *status)
{
	int po[2], pe[2];
	pid_t pid;

	if (pipe(po) != 0 || pipe(pe) != 0)
		return;
	pid = fork();
	if (pid == 0)
		standard_child(po[1], pe[1], lower);
	close(po[1]);
	close(pe[1]);
	drain(po[0], out, cap);
	drain(pe[0], err, cap);
	close(po[0]);
	close(pe[0]);
	waitpid(pid, status, 0);
}

static void test_standard_backend(void)
{
	char out[4096], err[4096];
	int status = -1;

	run_standard(DOCA_LOG_LEVEL_DEBUG, out, err, sizeof(out), &status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(count_of(out, "\n") == 2 && strstr(out, "] m-info\n") && strstr(out, "] m-dbg\n"));
	CHECK(count_of(err, "\n") == 3 && strstr(err, "] m-crit\n") && strstr(err, "] m-err\n"));
	CHECK(strstr(err, "] m-warn\n") != NULL);

	run_standard(DOCA_LOG_LEVEL_ERROR, out, err, sizeof(out), &status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(out[0] == '\0');
	CHECK(count_of(err, "\n") == 2 && strstr(err, "m-warn") == NULL);
}

/* Re-executes this binary with an environment; the child prints its limits. */
static void run_env_child(const char *app, const char *sdk, char *out, size_t cap)
{
	char *args[] = { "test_log", "--print-limits", NULL };
	int fds[2];
	pid_t pid;

	out[0] = '\0';
	if (pipe(fds) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		unsetenv("SOFTDPU_LOG_LEVEL");
		unsetenv("SOFTDPU_SDK_LOG_LEVEL");
		if (app)
			setenv("SOFTDPU_LOG_LEVEL", app, 1);
		if (sdk)
			setenv("SOFTDPU_SDK_LOG_LEVEL", sdk, 1);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(fds[1]);
	drain(fds[0], out, cap);
	close(fds[0]);
	waitpid(pid, NULL, 0);
}

static void test_env_levels(void)
{
	char out[128];

	run_env_child(NULL, NULL, out, sizeof(out));
	CHECK(strcmp(out, "50 20 30\n") == 0);
	run_env_child("debug", NULL, out, sizeof(out));
	CHECK(strcmp(out, "60 20 60\n") == 0);
	run_env_child("30", NULL, out, sizeof(out));
	CHECK(strcmp(out, "30 20 30\n") == 0);
	run_env_child("TRACE", "warning", out, sizeof(out));
	CHECK(strcmp(out, "70 20 40\n") == 0);
	run_env_child("bogus", NULL, out, sizeof(out));
	CHECK(strcmp(out, "50 20 30\n") == 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--print-limits") == 0) {
		printf("%u %u %u\n", doca_log_level_get_global_lower_limit(), doca_log_level_get_global_upper_limit(),
		       doca_log_level_get_global_sdk_limit());
		return 0;
	}
	RUN(test_level_values);
	RUN(test_defaults);
	RUN(test_record_format);
	RUN(test_bare_format_string);
	RUN(test_level_filtering);
	RUN(test_upper_limit);
	RUN(test_per_backend_limits);
	RUN(test_strict_limits);
	RUN(test_fd_backend);
	RUN(test_file_backend);
	RUN(test_buffer_truncation);
	RUN(test_sources);
	RUN(test_rate_limit);
	RUN(test_sdk_limit);
	RUN(test_legacy_names);
	RUN(test_dlog_compiled_out);
	RUN(test_older_entry_points);
	RUN(test_syslog_backend);
	RUN(test_backend_destroy);
	RUN(test_invalid_arguments);
	RUN(test_standard_backend);
	RUN(test_env_levels);
	return th_summary("test_log");
}
