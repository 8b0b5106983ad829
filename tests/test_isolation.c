/*
 * Users are isolated, a peer's fault is the peer's, and bounded waits are
 * measured in elapsed time.
 *
 * - The export table and every memory file the library shares are this
 *   user's alone (mode 0600); a table another user, or this user, left open
 *   to others is refused: export fails with DOCA_ERROR_NOT_PERMITTED and the
 *   file is left as it was, nothing written into it.
 * - A slot of the export table rewritten to name more memory than its file
 *   holds (or another file) does not crash the importer: it reads the right
 *   bytes anyway.
 * - doca_mmap_stop with an importer killed mid-access (its count left in the
 *   table) returns DOCA_SUCCESS once the bound passed in elapsed time: the
 *   naps it asked for add up to less than the bound when each nap is made to
 *   last four times longer than asked (nanosleep is stretched here).
 * - Run with the argument "users" (as root: the other user is nobody, 65534),
 *   another user squats the export table's name or a comm channel service's
 *   name: export and listen fail with DOCA_ERROR_NOT_PERMITTED, a client's
 *   connect too, before the squatter receives a byte. Not root: exit code 77
 *   (skipped), saying why.
 *
 * Each case runs in a fresh child process (the table is opened once per
 * process) standing for a machine of its own (SOFTDPU_MACHINE=127.x.y.z), so
 * its shared-memory names are its own and never meet another test's; the
 * files are removed when the case ends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dma_fixture.h"
#include "doca_comm_channel.h"
#include "doca_sync_event.h"
#include "dev_open.h"
#include "fab_desc.h"
#include "fab_mem.h"
#include "fab_table.h"
#include "harness.h"
#include "shm_machine.h"

#define HOST_PCI "0000:0b:00.0" /* pf0, represented by hpf0 under p0 */
#define DPU_PCI "0000:03:00.0"	/* p0 */
#define OTHER_UID 65534		/* nobody */
#define GUARD_MS 60000		/* a child this slow has failed; never a measurement */
#define EXPORT_LEN (1u << 20)
#define RW (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE)

/* Exit codes of the children, beside DOCA error codes (all below 64). */
enum {
	C_OK = 0,
	C_SETUP = 100,	   /* a step the case does not test failed */
	C_WRONG = 101,	   /* the case's outcome was wrong */
	C_NAPS = 102,	   /* the withdrawal counted the naps it asked for */
	C_NO_FILES = 103,  /* nothing shared to look at */
	C_OPEN_MODE = 104, /* a shared file open to others */
};

static char tag[32];	   /* this case's machine: 127.x.y.z */
static unsigned user;	   /* the user the library runs as (also in the other user's children) */
static unsigned case_no;

/* ---- the case's machine and its files ---- */

static void new_machine(void)
{
	unsigned pid = (unsigned)getpid();

	snprintf(tag, sizeof(tag), "127.%u.%u.%u", (pid >> 13) & 255, (pid >> 5) & 255, ((pid & 31) << 3) | (case_no++ & 7));
}

/* "/softdpu-<uid>-m<tag>-<what>": a shared-memory name of the case's machine. */
static void shm_name(char *out, size_t n, const char *what)
{
	snprintf(out, n, "/softdpu-%u-m%s-%s", user, tag, what);
}

/* Removes every shared-memory file of the case's machine, and its sysfs tree. */
static void remove_machine_files(void *arg)
{
	(void)arg;
	shm_machine_remove(tag);
}

static size_t table_size(void)
{
	return sizeof(struct fab_slot) * FAB_TABLE_SLOTS;
}

/* ---- children ---- */

/* Waits for a child, at most GUARD_MS (then kills it); its exit code, or 128 + the signal that ended it. */
static int reap(pid_t pid)
{
	int ws = 0;

	for (int ms = 0; ms < GUARD_MS; ms += 2) {
		pid_t r = waitpid(pid, &ws, WNOHANG);

		if (r == pid)
			return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
	fprintf(stderr, "child %d still runs after %d ms: killed\n", (int)pid, GUARD_MS);
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	return -1;
}

/* Runs fn in a child on the case's machine and side; its exit code (fn's result). */
static int in_child(const char *side, int (*fn)(void *), void *arg)
{
	pid_t pid;
	int ret;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char machine[40];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(machine, sizeof(machine), "%s", tag);
		setenv("SOFTDPU_MACHINE", machine, 1);
		setenv("SOFTDPU_SIDE", side, 1);
		ret = fn(arg);
		fflush(NULL);
		_exit(ret);
	}
	return reap(pid);
}

/* Runs fn in a child as the other user (no DOCA call there: an attacker's own code). */
static int as_other_user(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setgroups(0, NULL) != 0 || setresgid(OTHER_UID, OTHER_UID, OTHER_UID) != 0 ||
		    setresuid(OTHER_UID, OTHER_UID, OTHER_UID) != 0)
			_exit(C_SETUP);
		_exit(fn(arg));
	}
	return pid;
}

/* ---- exporting ---- */

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

struct exporter {
	struct doca_dev *dev;
	uint8_t *mem;
	struct doca_mmap *mmap;
	struct fab_export_desc desc;
};

/* Exports EXPORT_LEN bytes of heap memory (moved onto a shareable file) to the DPU; the DOCA result. */
static doca_error_t export_mem(struct exporter *ex)
{
	const void *wire;
	size_t len;
	doca_error_t r;

	memset(ex, 0, sizeof(*ex));
	if (th_open_dev_pci(HOST_PCI, &ex->dev) != DOCA_SUCCESS || (ex->mem = malloc(EXPORT_LEN)) == NULL)
		return DOCA_ERROR_UNEXPECTED;
	for (size_t i = 0; i < EXPORT_LEN; i++)
		ex->mem[i] = pattern(i);
	ex->mmap = mem_fx_mmap(ex->dev, ex->mem, EXPORT_LEN, RW);
	if (ex->mmap == NULL)
		return DOCA_ERROR_UNEXPECTED;
	r = doca_mmap_export_dpu(ex->mmap, ex->dev, &wire, &len);
	if (r == DOCA_SUCCESS && fab_desc_decode(wire, len, &ex->desc) != FAB_DESC_OK)
		return DOCA_ERROR_UNEXPECTED;
	return r;
}

static int export_only(void *arg)
{
	struct exporter ex;

	(void)arg;
	return (int)export_mem(&ex);
}

/* Whether the file holds nothing but zeros (nothing was written into it). */
static bool all_zero(const char *path)
{
	uint8_t buf[4096];
	bool zero = true;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (zero && (n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			zero &= buf[i] == 0;
	close(fd);
	return zero;
}

/* Creates a table-sized file under the export table's name, mode 0666, as whoever calls it. */
static int squat_table(void *arg)
{
	char name[96];
	int fd;

	(void)arg;
	shm_name(name, sizeof(name), "exports");
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
	if (fd < 0 || fchmod(fd, 0666) != 0 || ftruncate(fd, (off_t)table_size()) != 0)
		return C_SETUP;
	close(fd);
	return C_OK;
}

static void table_path(char *out, size_t n)
{
	char name[96];

	shm_name(name, sizeof(name), "exports");
	snprintf(out, n, "/dev/shm%s", name);
}

/* ---- same user ---- */

/* A table this user left open to others (0666) is refused, not used and not fixed up. */
static void test_table_open_to_others_refused(void)
{
	char path[128];
	struct stat st;

	new_machine();
	th_defer(remove_machine_files, NULL);
	CHECK(squat_table(NULL) == C_OK);
	CHECK_ERR(in_child("host", export_only, NULL), DOCA_ERROR_NOT_PERMITTED);
	table_path(path, sizeof(path));
	CHECK(stat(path, &st) == 0);
	CHECK((st.st_mode & 0777) == 0666);
	CHECK(all_zero(path));
}

/* Mode and owner of every memory file among this process's fds (all the library's); C_OK when all are 0600. */
static int check_memfds(void)
{
	char path[300], link[300];
	struct dirent *e;
	struct stat st;
	int found = 0, ret = C_OK;
	DIR *d = opendir("/proc/self/fd");

	if (d == NULL)
		return C_SETUP;
	while ((e = readdir(d)) != NULL) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:", 7) != 0 || stat(path, &st) != 0)
			continue;
		found++;
		if ((st.st_mode & 07777) != 0600 || st.st_uid != geteuid()) {
			fprintf(stderr, "%s: uid %u mode %o\n", link, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			ret = C_OPEN_MODE;
		}
	}
	closedir(d);
	return found == 0 ? C_NO_FILES : ret;
}

static int export_and_look(void *arg)
{
	char path[128];
	struct doca_sync_event *se;
	struct exporter ex;
	struct stat st;

	(void)arg;
	umask(0277); /* creation must not depend on the program's umask */
	if (export_mem(&ex) != DOCA_SUCCESS)
		return C_SETUP;
	/* A sync event the DPU subscribes to keeps its counter in a memory file of its own. */
	if (doca_sync_event_create(&se) != DOCA_SUCCESS ||
	    doca_sync_event_publisher_add_location_cpu(se, ex.dev) != DOCA_SUCCESS ||
	    doca_sync_event_subscriber_add_location_dpu(se) != DOCA_SUCCESS || doca_sync_event_start(se) != DOCA_SUCCESS)
		return C_SETUP;
	table_path(path, sizeof(path));
	if (stat(path, &st) != 0 || (st.st_mode & 07777) != 0600 || st.st_uid != geteuid())
		return C_OPEN_MODE;
	return check_memfds();
}

/* The export table and the exported memory's file are created mode 0600, whatever the umask. */
static void test_shared_files_private(void)
{
	new_machine();
	th_defer(remove_machine_files, NULL);
	CHECK_ERR(in_child("host", export_and_look, NULL), C_OK);
}

/* An importer (a child of the exporter) reads 4 KiB at off; C_OK when the bytes are right. */
static int import_and_read(void *arg)
{
	const struct fab_export_desc *d = arg;
	struct fab_import *imp;
	uint8_t buf[4096];
	size_t off = EXPORT_LEN / 2;

	if (fab_mem_open(d, &imp) != FAB_OK)
		return C_SETUP;
	if (fab_mem_hw_ops.read(imp, d->addr + off, buf, sizeof(buf)) != HW_OK)
		return C_WRONG;
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != pattern(off + i))
			return C_WRONG;
	fab_mem_close(imp);
	return C_OK;
}

static int run_importer(struct fab_export_desc *d)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(import_and_read(d));
	return reap(pid);
}

/*
 * Rewrites the export's slot as a scribbler would: first the backing starts
 * a MiB earlier and is a MiB longer than its file, then the slot names a
 * small file of the exporter's. Each time an importer reads the exported
 * bytes; returns the first importer outcome that is not C_OK.
 */
static int scribble_and_import(void *arg)
{
	struct exporter ex;
	struct fab_slot *s;
	int small, ret;

	(void)arg;
	if (export_mem(&ex) != DOCA_SUCCESS || (s = fab_table_find(&ex.desc)) == NULL || s->memfd < 0)
		return C_SETUP;
	s->map_base -= 1u << 20;
	s->map_len += 1u << 20;
	ret = run_importer(&ex.desc);
	if (ret != C_OK)
		return ret;
	s->map_base += 1u << 20;
	s->map_len -= 1u << 20;
	small = memfd_create("softdpu-small", MFD_CLOEXEC);
	if (small < 0 || fchmod(small, 0600) != 0 || ftruncate(small, 4096) != 0)
		return C_SETUP;
	s->memfd = small;
	return run_importer(&ex.desc);
}

/* A slot rewritten to name memory its file does not hold: the importer reads right, and lives. */
static void test_scribbled_slot_no_crash(void)
{
	new_machine();
	th_defer(remove_machine_files, NULL);
	CHECK_ERR(in_child("host", scribble_and_import, NULL), C_OK);
}

/* ---- bounded waits: nanosleep is stretched four times while asked to be ---- */

static struct {
	_Atomic bool on;
	pthread_t thread;
	uint64_t asked_ns; /* by the thread measured */
} stretch;

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct timespec t = *req;

	(void)rem;
	if (atomic_load(&stretch.on) && pthread_equal(pthread_self(), stretch.thread)) {
		uint64_t ns = (uint64_t)req->tv_sec * 1000000000u + (uint64_t)req->tv_nsec;

		stretch.asked_ns += ns;
		ns *= 4;
		t = (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };
	}
	return clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL) == 0 ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An importer that dies of SIGKILL in the middle of an access: its count stays in the slot. */
static int die_mid_access(void *arg)
{
	const struct fab_export_desc *d = arg;
	struct fab_import *imp;
	struct fab_slot *s;

	if (fab_mem_open(d, &imp) != FAB_OK || (s = fab_table_find(d)) == NULL)
		return C_SETUP;
	atomic_fetch_add(&s->inflight, 1);
	raise(SIGKILL);
	return C_SETUP;
}

static int stop_after_killed_importer(void *arg)
{
	struct exporter ex;
	doca_error_t r;
	pid_t pid;
	double t0;

	(void)arg;
	if (export_mem(&ex) != DOCA_SUCCESS)
		return C_SETUP;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return C_SETUP;
	if (pid == 0)
		_exit(die_mid_access(&ex.desc));
	if (reap(pid) != 128 + SIGKILL)
		return C_SETUP;
	stretch.thread = pthread_self();
	atomic_store(&stretch.on, true);
	t0 = now_s();
	r = doca_mmap_stop(ex.mmap);
	atomic_store(&stretch.on, false);
	printf("test_isolation: doca_mmap_stop with a killed importer: %.2f s elapsed, naps asked %.2f s "
	       "(each lasting 4x), bound %.2f s\n",
	       now_s() - t0, (double)stretch.asked_ns / 1e9, (double)FAB_TABLE_WITHDRAW_WAIT_NS / 1e9);
	if (r != DOCA_SUCCESS)
		return C_WRONG;
	return stretch.asked_ns < FAB_TABLE_WITHDRAW_WAIT_NS ? C_OK : C_NAPS;
}

/* doca_mmap_stop with an importer killed mid-access: DOCA_SUCCESS once the bound passed in elapsed time. */
static void test_stop_bounded_in_elapsed_time(void)
{
	new_machine();
	th_defer(remove_machine_files, NULL);
	CHECK_ERR(in_child("host", stop_after_killed_importer, NULL), C_OK);
}

/* ---- another user ---- */

/* Another user squats the export table's name (mode 0666): export refused, nothing of it readable there. */
static void test_foreign_table_refused(void)
{
	char path[128];
	pid_t squatter;

	new_machine();
	th_defer(remove_machine_files, NULL);
	squatter = as_other_user(squat_table, NULL);
	CHECK(squatter > 0 && reap(squatter) == C_OK);
	CHECK_ERR(in_child("host", export_only, NULL), DOCA_ERROR_NOT_PERMITTED);
	table_path(path, sizeof(path));
	CHECK(all_zero(path));
}

/* A squatter of a comm channel name: binds it, then tells how many bytes its first client sent. */
struct squat {
	char service[48];
	char name[108]; /* its socket name (docs/comm_channel.md), without the leading NUL */
	int ready[2]; /* squatter -> test: "listening", then the byte count */
	int go[2];    /* test -> squatter: its victim is done */
};

static int squat_service(void *arg)
{
	struct squat *q = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t buf[4096];
	size_t n = strlen(q->name);
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0), c;
	int got = 0;
	char one = 'r';
	ssize_t k;

	memcpy(sa.sun_path + 1, q->name, n);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0 ||
	    listen(lfd, 8) != 0 || write(q->ready[1], &one, 1) != 1)
		return C_SETUP;
	/* Whatever connected and sent before the victim finished is in the backlog now. */
	if (read(q->go[0], &one, 1) != 1)
		return C_SETUP;
	if (poll(&(struct pollfd){ .fd = lfd, .events = POLLIN }, 1, 0) == 1 && (c = accept(lfd, NULL, NULL)) >= 0) {
		while ((k = recv(c, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got += (int)k;
		close(c);
	}
	return write(q->ready[1], &got, sizeof(got)) == sizeof(got) ? C_OK : C_SETUP;
}

static int client_connect(void *arg)
{
	struct squat *q = arg;
	struct doca_comm_channel_ep_t *ep;
	struct doca_comm_channel_addr_t *peer;
	struct doca_dev *dev;

	if (th_open_dev_pci(HOST_PCI, &dev) != DOCA_SUCCESS || doca_comm_channel_ep_create(&ep) != DOCA_SUCCESS ||
	    doca_comm_channel_ep_set_device(ep, dev) != DOCA_SUCCESS)
		return C_SETUP;
	return (int)doca_comm_channel_ep_connect(ep, q->service, &peer);
}

static int service_listen(void *arg)
{
	struct squat *q = arg;
	struct doca_comm_channel_ep_t *ep;
	struct doca_dev_rep *rep;
	struct doca_dev *dev;

	if (th_open_dev_pci(DPU_PCI, &dev) != DOCA_SUCCESS || th_open_rep_pci(dev, HOST_PCI, &rep) != DOCA_SUCCESS ||
	    doca_comm_channel_ep_create(&ep) != DOCA_SUCCESS || doca_comm_channel_ep_set_device(ep, dev) != DOCA_SUCCESS ||
	    doca_comm_channel_ep_set_device_rep(ep, rep) != DOCA_SUCCESS)
		return C_SETUP;
	return (int)doca_comm_channel_ep_listen(ep, q->service);
}

static void close_pipes(void *arg)
{
	struct squat *q = arg;

	for (int i = 0; i < 2; i++) {
		close(q->ready[i]);
		close(q->go[i]);
	}
}

/*
 * Another user binds a service's name first; victim (on side) then tries the
 * name. Returns the victim's DOCA result; *got: bytes the squatter received.
 */
static int against_squatter(struct squat *q, const char *side, int (*victim)(void *), int *got)
{
	char one = 'g';
	pid_t squatter;
	int ret;

	snprintf(q->service, sizeof(q->service), "squat-%d-%u", (int)getpid(), case_no);
	/* The victim's name: its euid, its machine, the host function's PCI address, the service. */
	snprintf(q->name, sizeof(q->name), "softdpu-cc/%u-m%s/%s/%s", (unsigned)geteuid(), tag, HOST_PCI, q->service);
	if (pipe(q->ready) != 0 || pipe(q->go) != 0)
		return -1;
	th_defer(close_pipes, q);
	squatter = as_other_user(squat_service, q);
	if (squatter < 0 || read(q->ready[0], &one, 1) != 1)
		return -1;
	ret = in_child(side, victim, q);
	if (write(q->go[1], &one, 1) != 1 || read(q->ready[0], got, sizeof(*got)) != sizeof(*got) ||
	    reap(squatter) != C_OK)
		return -1;
	return ret;
}

/* A client finds another user's socket on its service's name: refused before it sends anything. */
static void test_client_refuses_foreign_service(void)
{
	static struct squat q;
	int got = -1;

	new_machine();
	th_defer(remove_machine_files, NULL);
	CHECK_ERR(against_squatter(&q, "host", client_connect, &got), DOCA_ERROR_NOT_PERMITTED);
	CHECK(got == 0);
}

/* A service finds its name taken by another user: refused, with that reason (not "already served"). */
static void test_service_name_squatted(void)
{
	static struct squat q;
	int got = -1;

	new_machine();
	th_defer(remove_machine_files, NULL);
	CHECK_ERR(against_squatter(&q, "dpu", service_listen, &got), DOCA_ERROR_NOT_PERMITTED);
	CHECK(got == 0);
}

static int nothing(void *arg)
{
	(void)arg;
	return C_OK;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	user = (unsigned)getuid();
	if (argc > 1 && strcmp(argv[1], "users") == 0) {
		if (geteuid() != 0) {
			printf("test_isolation users: skipped: another user is played by setresuid(%u), which needs root\n",
			       OTHER_UID);
			return 77;
		}
		pid_t probe = as_other_user(nothing, NULL);

		if (probe <= 0 || reap(probe) != C_OK) {
			printf("test_isolation users: skipped: this root cannot become uid %u (setgroups/setresgid/setresuid "
			       "refused, e.g. in a user namespace)\n", OTHER_UID);
			return 77;
		}
		RUN(test_foreign_table_refused);
		RUN(test_client_refuses_foreign_service);
		RUN(test_service_name_squatted);
		return th_summary("test_isolation_users");
	}
	RUN(test_table_open_to_others_refused);
	RUN(test_shared_files_private);
	RUN(test_scribbled_slot_no_crash);
	RUN(test_stop_bounded_in_elapsed_time);
	return th_summary("test_isolation");
}
