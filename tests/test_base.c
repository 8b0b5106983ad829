/*
 * The base layer on its own (linked without hw, fabric or DOCA): log routing
 * and its stderr fallback, status names, and the SOFTDPU_* configuration.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_clock.h"
#include "base_config.h"
#include "base_log.h"
#include "base_private.h"
#include "base_status.h"
#include "harness.h"

/* ---- log ---- */

static struct {
	int calls;
	int level;
	char func[64];
	char msg[256];
} seen;

static void record_sink(int level, const char *func, const char *fmt, va_list ap)
{
	seen.calls++;
	seen.level = level;
	snprintf(seen.func, sizeof(seen.func), "%s", func);
	vsnprintf(seen.msg, sizeof(seen.msg), fmt, ap);
}

/* Runs fn with stderr sent to a file; returns what it wrote (static buffer). */
static const char *capture_stderr(void (*fn)(void))
{
	static char out[1024];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	out[0] = '\0';
	if (tmp == NULL || saved < 0)
		return NULL;
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return out;
}

static void log_some(void)
{
	BASE_ERR("disk %d is %s", 3, "gone");
	BASE_WARN("a warning");
	BASE_INFO("some information");
	BASE_DBG("details");
	BASE_CRIT("the end");
}

static void test_log_without_sink_writes_errors_to_stderr(void)
{
	const char *out;

	base_log_set_sink(NULL);
	out = capture_stderr(log_some);
	CHECK(out != NULL);
	CHECK(strcmp(out, "[softdpu][ERR][log_some] disk 3 is gone\n[softdpu][CRIT][log_some] the end\n") == 0);
}

/* The stderr sink a library plugs names the library a message came from, not the one that plugged it. */
static void stderr_sink_of_a(int level, const char *func, const char *fmt, va_list ap)
{
	base_log_stderr("a", level, func, fmt, ap);
}

static void log_tagged(void)
{
	base_log_tagged("b", BASE_LOG_ERROR, "f", "from %s", "b");
	base_log(BASE_LOG_ERROR, "g", "from a");
}

static void test_log_names_the_library(void)
{
	const char *out;

	base_log_set_sink(stderr_sink_of_a);
	out = capture_stderr(log_tagged);
	base_log_set_sink(NULL);
	CHECK(out != NULL);
	CHECK(strcmp(out, "[softdpu][b][f] from b\n[softdpu][a][g] from a\n") == 0);
}

static void test_log_goes_to_the_sink(void)
{
	const char *out;

	memset(&seen, 0, sizeof(seen));
	base_log_set_sink(record_sink);
	out = capture_stderr(log_some);
	base_log_set_sink(NULL);
	CHECK(out != NULL && out[0] == '\0'); /* nothing on stderr: the sink decides */
	CHECK(seen.calls == 5);
	CHECK(seen.level == BASE_LOG_CRIT);
	CHECK(strcmp(seen.func, "log_some") == 0);
	CHECK(strcmp(seen.msg, "the end") == 0);
	base_log(BASE_LOG_DEBUG, "f", "%s-%u", "x", 7u);
	CHECK(seen.calls == 5); /* the sink is gone again */
}

static void test_log_level_parse(void)
{
	static const struct {
		const char *text;
		uint32_t level;
	} good[] = {
		{ "disable", 10 }, { "CRIT", 20 },  { "critical", 20 }, { "error", 30 }, { "Err", 30 }, { "warning", 40 },
		{ "warn", 40 },	   { "info", 50 },  { "debug", 60 },	{ "dbg", 60 },	 { "trace", 70 }, { "trc", 70 },
		{ "10", 10 },	   { "30", 30 },    { "70", 70 },
	};
	static const char *const bad[] = { "", "x", "35", "0", "5", "80", "-10", "30x", "errors" };
	uint32_t level;

	for (size_t i = 0; i < BASE_ARRAY_SIZE(good); i++) {
		level = 0;
		CHECK(base_log_level_parse(good[i].text, &level));
		CHECK(level == good[i].level);
	}
	for (size_t i = 0; i < BASE_ARRAY_SIZE(bad); i++) {
		level = 99;
		if (base_log_level_parse(bad[i], &level))
			TH_FAIL("\"%s\" accepted as a level", bad[i]);
		CHECK(level == 99);
	}
}

/* ---- status names ---- */

enum probe_status { PROBE_OK, PROBE_ONE, PROBE_GAP, PROBE_LAST };

static const char *const probe_names[] = {
	[PROBE_OK] = "fine",
	[PROBE_ONE] = "one",
	[PROBE_LAST] = "last",
};
BASE_STATUS_TABLE_COVERS(probe_names, PROBE_LAST);

static void test_status_names(void)
{
	CHECK(strcmp(base_status_str(probe_names, PROBE_OK), "fine") == 0);
	CHECK(strcmp(base_status_str(probe_names, PROBE_LAST), "last") == 0);
	CHECK(strcmp(base_status_str(probe_names, PROBE_GAP), "unknown") == 0);
	CHECK(strcmp(base_status_str(probe_names, PROBE_LAST + 1), "unknown") == 0);
	CHECK(strcmp(base_status_str(probe_names, -1), "unknown") == 0);
	CHECK(strcmp(base_status_str(probe_names, 1000000), "unknown") == 0);
}

/* ---- configuration ---- */

static void set(const char *name, const char *value)
{
	if (value == NULL)
		unsetenv(name);
	else
		setenv(name, value, 1);
}

static void test_config_side(void)
{
	base_log_set_sink(record_sink);
	set("SOFTDPU_SIDE", NULL);
	CHECK(!base_config_side_dpu());
	set("SOFTDPU_SIDE", "");
	CHECK(!base_config_side_dpu());
	set("SOFTDPU_SIDE", "host");
	CHECK(!base_config_side_dpu());
	set("SOFTDPU_SIDE", "dpu");
	CHECK(base_config_side_dpu());
	seen.calls = 0;
	set("SOFTDPU_SIDE", "DPU");
	CHECK(!base_config_side_dpu()); /* names are exact; a bad one is the host, with an error */
	CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR && strstr(seen.msg, "SOFTDPU_SIDE='DPU'") != NULL);
	set("SOFTDPU_SIDE", NULL);
	base_log_set_sink(NULL);
}

static void test_config_topology(void)
{
	set("SOFTDPU_TOPOLOGY", NULL);
	CHECK(base_config_topology() == NULL);
	set("SOFTDPU_TOPOLOGY", "");
	CHECK(base_config_topology() == NULL);
	set("SOFTDPU_TOPOLOGY", "/tmp/some.topo");
	CHECK(base_config_topology() != NULL && strcmp(base_config_topology(), "/tmp/some.topo") == 0);
	set("SOFTDPU_TOPOLOGY", NULL);
}

static void test_config_fabric(void)
{
	base_log_set_sink(record_sink);
	set("SOFTDPU_FABRIC", NULL);
	CHECK(base_config_fabric() == BASE_FABRIC_AUTO);
	set("SOFTDPU_FABRIC", "auto");
	CHECK(base_config_fabric() == BASE_FABRIC_AUTO);
	set("SOFTDPU_FABRIC", "cma");
	CHECK(base_config_fabric() == BASE_FABRIC_CMA);
	set("SOFTDPU_FABRIC", "ucx");
	CHECK(base_config_fabric() == BASE_FABRIC_UCX);
	seen.calls = 0;
	set("SOFTDPU_FABRIC", "rdma");
	CHECK(base_config_fabric() == BASE_FABRIC_AUTO);
	CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR);
	set("SOFTDPU_FABRIC", NULL);
	base_log_set_sink(NULL);
}

static void test_config_fabric_timeout(void)
{
	static const char *const bad[] = { "0", "-1", "abc", "10ms", "3600001", "99999999999999999999" };

	base_log_set_sink(record_sink);
	set("SOFTDPU_FABRIC_TIMEOUT_MS", NULL);
	CHECK(base_config_fabric_timeout_ms() == BASE_FABRIC_TIMEOUT_DEFAULT_MS);
	CHECK(BASE_FABRIC_TIMEOUT_DEFAULT_MS == 5000);
	set("SOFTDPU_FABRIC_TIMEOUT_MS", "");
	CHECK(base_config_fabric_timeout_ms() == 5000);
	set("SOFTDPU_FABRIC_TIMEOUT_MS", "1");
	CHECK(base_config_fabric_timeout_ms() == 1);
	set("SOFTDPU_FABRIC_TIMEOUT_MS", "3600000");
	CHECK(base_config_fabric_timeout_ms() == 3600000);
	for (size_t i = 0; i < BASE_ARRAY_SIZE(bad); i++) {
		seen.calls = 0;
		set("SOFTDPU_FABRIC_TIMEOUT_MS", bad[i]);
		CHECK(base_config_fabric_timeout_ms() == 5000);
		CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR);
	}
	set("SOFTDPU_FABRIC_TIMEOUT_MS", NULL);
	base_log_set_sink(NULL);
}

/* SOFTDPU_CM_TIMEOUT_MS: the RDMA CM's response timeout, 1..3600000 ms, else the default with an error. */
static void test_config_cm_timeout(void)
{
	static const char *const bad[] = { "0", "-1", "abc", "10ms", "3600001", "99999999999999999999" };

	base_log_set_sink(record_sink);
	set("SOFTDPU_CM_TIMEOUT_MS", NULL);
	CHECK(base_config_cm_timeout_ms() == 73728);
	set("SOFTDPU_CM_TIMEOUT_MS", "");
	CHECK(base_config_cm_timeout_ms() == 73728);
	set("SOFTDPU_CM_TIMEOUT_MS", "1");
	CHECK(base_config_cm_timeout_ms() == 1);
	set("SOFTDPU_CM_TIMEOUT_MS", "3600000");
	CHECK(base_config_cm_timeout_ms() == 3600000);
	for (size_t i = 0; i < BASE_ARRAY_SIZE(bad); i++) {
		seen.calls = 0;
		set("SOFTDPU_CM_TIMEOUT_MS", bad[i]);
		CHECK(base_config_cm_timeout_ms() == 73728);
		CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR);
	}
	set("SOFTDPU_CM_TIMEOUT_MS", NULL);
	base_log_set_sink(NULL);
}

static void test_config_machine(void)
{
	static const char *const bad[] = { "256.0.0.1", "1.2.3", "1.2.3.4.5", "a.b.c.d", "10.0.0.1x", "-1.0.0.1" };
	uint32_t ip = 7;

	base_log_set_sink(record_sink);
	set("SOFTDPU_MACHINE", NULL);
	CHECK(!base_config_machine(&ip) && ip == 7);
	set("SOFTDPU_MACHINE", "");
	CHECK(!base_config_machine(&ip) && ip == 7);
	set("SOFTDPU_MACHINE", "127.0.0.2");
	CHECK(base_config_machine(&ip) && ip == 0x7f000002u);
	set("SOFTDPU_MACHINE", "255.255.255.255");
	CHECK(base_config_machine(&ip) && ip == 0xffffffffu);
	for (size_t i = 0; i < BASE_ARRAY_SIZE(bad); i++) {
		seen.calls = 0;
		ip = 7;
		set("SOFTDPU_MACHINE", bad[i]);
		CHECK(!base_config_machine(&ip) && ip == 7);
		CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR);
	}
	set("SOFTDPU_MACHINE", NULL);
	base_log_set_sink(NULL);
}

/* SOFTDPU_MACHINES: IPv4 addresses separated by commas, at most 64; anything else is refused whole. */
static void test_config_machines(void)
{
	static const char *const bad[] = { "127.0.0.2,", ",127.0.0.2", "127.0.0.2,,127.0.0.3", "127.0.0.2 127.0.0.3",
					   "127.0.0.256", "127.0.0", "a.b.c.d", "127.0.0.2;127.0.0.3", " 127.0.0.2" };
	uint32_t m[BASE_MACHINES_MAX];
	char many[16 * (BASE_MACHINES_MAX + 1)] = "";

	base_log_set_sink(record_sink);
	set("SOFTDPU_MACHINES", NULL);
	CHECK(base_config_machines(m) == 0);
	set("SOFTDPU_MACHINES", "10.1.2.3");
	CHECK(base_config_machines(m) == 1 && m[0] == 0x0a010203u);
	set("SOFTDPU_MACHINES", "127.0.0.2,127.0.0.3,255.255.255.255");
	CHECK(base_config_machines(m) == 3 && m[0] == 0x7f000002u && m[1] == 0x7f000003u && m[2] == 0xffffffffu);
	for (size_t i = 0; i < BASE_ARRAY_SIZE(bad); i++) {
		seen.calls = 0;
		set("SOFTDPU_MACHINES", bad[i]);
		CHECK(base_config_machines(m) == 0);
		CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR);
	}
	for (unsigned i = 0; i < BASE_MACHINES_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s10.0.0.%u", i ? "," : "", i + 1);
	set("SOFTDPU_MACHINES", many);
	CHECK(base_config_machines(m) == BASE_MACHINES_MAX && m[63] == 0x0a000040u);
	strcat(many, ",10.0.1.1");
	seen.calls = 0;
	set("SOFTDPU_MACHINES", many);
	CHECK(base_config_machines(m) == 0 && seen.calls == 1);
	set("SOFTDPU_MACHINES", NULL);
	base_log_set_sink(NULL);
}

static void test_config_ucx_err_mode(void)
{
	base_log_set_sink(record_sink);
	set("SOFTDPU_UCX_ERR_MODE", NULL);
	CHECK(base_config_ucx_peer_errors());
	set("SOFTDPU_UCX_ERR_MODE", "peer");
	CHECK(base_config_ucx_peer_errors());
	set("SOFTDPU_UCX_ERR_MODE", "none");
	CHECK(!base_config_ucx_peer_errors());
	seen.calls = 0;
	set("SOFTDPU_UCX_ERR_MODE", "off");
	CHECK(base_config_ucx_peer_errors());
	CHECK(seen.calls == 1 && seen.level == BASE_LOG_ERROR);
	set("SOFTDPU_UCX_ERR_MODE", NULL);
	base_log_set_sink(NULL);
}

static uint32_t lvl;
static bool lvl_ok;

static void read_sdk_level(void)
{
	lvl_ok = base_config_sdk_log_level(&lvl);
}

static void test_config_log_levels(void)
{
	const char *out;

	set("SOFTDPU_LOG_LEVEL", NULL);
	set("SOFTDPU_SDK_LOG_LEVEL", NULL);
	lvl = 7;
	CHECK(!base_config_log_level(&lvl) && !base_config_sdk_log_level(&lvl) && lvl == 7);
	set("SOFTDPU_LOG_LEVEL", "debug");
	CHECK(base_config_log_level(&lvl) && lvl == BASE_LOG_DEBUG);
	set("SOFTDPU_SDK_LOG_LEVEL", "40");
	CHECK(base_config_sdk_log_level(&lvl) && lvl == BASE_LOG_WARNING);
	/* a bad level is reported on stderr directly, even with a sink (the log may not be set up yet) */
	base_log_set_sink(record_sink);
	seen.calls = 0;
	lvl = 7;
	set("SOFTDPU_SDK_LOG_LEVEL", "loud");
	out = capture_stderr(read_sdk_level);
	base_log_set_sink(NULL);
	CHECK(!lvl_ok && lvl == 7 && seen.calls == 0);
	CHECK(out != NULL && strstr(out, "SOFTDPU_SDK_LOG_LEVEL=\"loud\"") != NULL);
	set("SOFTDPU_LOG_LEVEL", NULL);
	set("SOFTDPU_SDK_LOG_LEVEL", NULL);
}

/* ---- private shared files ---- */

static char priv_name[64];

static void priv_unlink(void *arg)
{
	(void)arg;
	shm_unlink(priv_name);
}

static mode_t fd_mode(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_mode & 07777 : 07777;
}

/* Created exclusively, mode 0600 whatever the umask, sized; opened again by the same user as it is. */
static void test_priv_shm_created_private(void)
{
	mode_t old = umask(0277);
	int fd = -1, fd2 = -1;
	enum base_priv_status st;
	struct stat sb;

	snprintf(priv_name, sizeof(priv_name), "/softdpu-test-base-%d", (int)getpid());
	th_defer(priv_unlink, NULL);
	st = base_priv_shm_open(priv_name, 8192, "test table", &fd);
	umask(old);
	CHECK_ERR(st, BASE_PRIV_OK);
	CHECK(fd_mode(fd) == 0600);
	CHECK(fstat(fd, &sb) == 0 && sb.st_size == 8192 && sb.st_uid == geteuid());
	close(fd);
	CHECK_ERR(base_priv_shm_open(priv_name, 8192, "test table", &fd2), BASE_PRIV_OK);
	close(fd2);
	CHECK_ERR(base_priv_shm_open(priv_name, 4096, "test table", &fd2), BASE_PRIV_SIZE);
}

/* A file under the name that others may open (0666, 0640) is refused and left as it is. */
static void test_priv_shm_open_to_others_refused(void)
{
	static const mode_t modes[] = { 0666, 0640, 0604 };
	int fd;

	snprintf(priv_name, sizeof(priv_name), "/softdpu-test-base-%d", (int)getpid());
	th_defer(priv_unlink, NULL);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int got = -1;

		shm_unlink(priv_name);
		fd = shm_open(priv_name, O_RDWR | O_CREAT | O_EXCL, 0600);
		CHECK(fd >= 0 && fchmod(fd, modes[i]) == 0);
		close(fd);
		CHECK_ERR(base_priv_shm_open(priv_name, 4096, "test table", &got), BASE_PRIV_FOREIGN);
		CHECK(got == -1);
		fd = shm_open(priv_name, O_RDONLY, 0);
		CHECK(fd >= 0);
		CHECK(fd_mode(fd) == modes[i]);
		close(fd);
	}
}

/* A memfd starts at 0777: the helper's is 0600 and passes base_priv_check; a chmod'ed one does not. */
static void test_priv_memfd(void)
{
	int fd = base_priv_memfd("softdpu-test", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(fd_mode(fd) == 0600);
	CHECK_ERR(base_priv_check(fd, "memory file", "softdpu-test"), BASE_PRIV_OK);
	CHECK(fchmod(fd, 0644) == 0);
	CHECK_ERR(base_priv_check(fd, "memory file", "softdpu-test"), BASE_PRIV_FOREIGN);
	close(fd);
}

/* Deadlines are on the monotonic clock, in nanoseconds. */
static void test_clock_deadline(void)
{
	struct timespec ts;
	uint64_t a, b;
	uint64_t d = base_deadline_ns(1000000000ull * 3600);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	b = base_clock_ns();
	CHECK(b >= a);
	CHECK(!base_deadline_passed(d));
	CHECK(base_deadline_ms_left(d) > 3599 * 1000 && base_deadline_ms_left(d) <= 3600 * 1000);
	CHECK(base_deadline_passed(b));
	CHECK(base_deadline_ms_left(b) == 0);
	CHECK(base_deadline_ms_left(base_clock_ns() + 1) <= 1);
}

int main(void)
{
	RUN(test_log_without_sink_writes_errors_to_stderr);
	RUN(test_log_names_the_library);
	RUN(test_log_goes_to_the_sink);
	RUN(test_log_level_parse);
	RUN(test_status_names);
	RUN(test_config_side);
	RUN(test_config_topology);
	RUN(test_config_fabric);
	RUN(test_config_fabric_timeout);
	RUN(test_config_cm_timeout);
	RUN(test_config_machine);
	RUN(test_config_machines);
	RUN(test_config_ucx_err_mode);
	RUN(test_config_log_levels);
	RUN(test_priv_shm_created_private);
	RUN(test_priv_shm_open_to_others_refused);
	RUN(test_priv_memfd);
	RUN(test_clock_deadline);
	return th_summary("test_base");
}
