/*
 * DOCA log: development messages (DOCA_DLOG*) with DOCA_LOGGING_ALLOW_DLOG
 * defined are ordinary messages of their level, file, function and line.
 */
#define DOCA_LOGGING_ALLOW_DLOG
#include <unistd.h>

#include "doca_log.h"
#include "harness.h"

DOCA_LOG_REGISTER(TEST::DLOG);

static char buf[512];
static char text[4096];
static int records;

static void flush(char *rec)
{
	size_t len = strlen(text);

	snprintf(text + len, sizeof(text) - len, "%s", rec);
	records++;
}

static void test_dlog_levels(void)
{
	struct doca_logger_backend *b;
	char expect[128];
	int line;

	CHECK_OK(doca_log_create_buffer_backend(buf, sizeof(buf), flush, &b));
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_WARNING));
	line = __LINE__ + 1;
	DOCA_DLOG_ERR("dev error %d", 7);
	DOCA_DLOG_CRIT("dev crit");
	DOCA_DLOG_WARN("dev warn");
	DOCA_DLOG_INFO("dev info, below the limit");
	DOCA_DLOG_DBG("dev debug, below the limit");
	CHECK(records == 3);
	snprintf(expect, sizeof(expect), "][%d][TEST::DLOG][ERR][test_dlog_levels:%d] dev error 7\n", (int)getpid(),
		 line);
	CHECK(strstr(text, expect) != NULL);
	CHECK(strstr(text, "[CRIT]") != NULL && strstr(text, "[WARN]") != NULL && strstr(text, "dev info") == NULL);
	CHECK_OK(doca_log_backend_destroy(b));
	CHECK_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_INFO));
}

int main(void)
{
	RUN(test_dlog_levels);
	return th_summary("test_log_dlog");
}
