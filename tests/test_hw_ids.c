/*
 * The device-wide number table: numbers unique across processes, released
 * only by their holder, taken back from dead holders, and a table of another
 * layout refused untouched. Each case uses its own table name and unlinks it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "hw_ids.h"

#define NCHILD 4
#define PER_CHILD 150

static char tname[64];

static void unlink_cb(void *arg)
{
	shm_unlink(arg);
}

static void close_cb(void *arg)
{
	hw_ids_close(arg);
}

/* A fresh table of slots numbers per kind, closed and unlinked when the case ends. */
static void fresh(const char *tag, uint32_t slots, struct hw_ids **out)
{
	struct hw_ids *t = NULL;

	*out = NULL;
	snprintf(tname, sizeof(tname), "/softdpu-test-ids-%s-%d", tag, (int)getpid());
	shm_unlink(tname);
	th_defer(unlink_cb, tname);
	CHECK_ERR(hw_ids_open(tname, slots, &t), HW_OK);
	th_defer(close_cb, t);
	*out = t;
}

static pid_t kids[NCHILD];
static int nkids;

static void reap_cb(void *arg)
{
	(void)arg;
	for (int i = 0; i < nkids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	nkids = 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void test_unique_in_process(void)
{
	struct hw_ids *t;

	fresh("local", 64, &t);
	if (t == NULL)
		return;
	uint32_t qpn[64], cqn;
	pid_t pid = 0;

	for (int i = 0; i < 64; i++) {
		CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &qpn[i]), HW_OK);
		CHECK(qpn[i] >= 0x100 && qpn[i] < 0x100 + 64);
		for (int j = 0; j < i; j++)
			CHECK(qpn[j] != qpn[i]);
	}
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &cqn), HW_ERR_NOMEM);
	/* Kinds are separate spaces. */
	CHECK_ERR(hw_ids_alloc(t, HW_ID_CQN, &cqn), HW_OK);
	CHECK(cqn == hw_id_base(HW_ID_CQN));
	CHECK_ERR(hw_ids_owner(t, HW_ID_QPN, qpn[5], &pid), HW_OK);
	CHECK(pid == getpid());
	CHECK_ERR(hw_ids_alloc(t, HW_ID_KINDS, &cqn), HW_ERR_INVAL);
}

static void test_release_and_reuse(void)
{
	struct hw_ids *t;

	fresh("reuse", 8, &t);
	if (t == NULL)
		return;
	uint32_t n[8], again;
	pid_t pid;

	for (int i = 0; i < 8; i++)
		CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &n[i]), HW_OK);
	CHECK_ERR(hw_ids_free(t, HW_ID_QPN, n[3]), HW_OK);
	CHECK_ERR(hw_ids_owner(t, HW_ID_QPN, n[3], &pid), HW_ERR_KEY);
	CHECK_ERR(hw_ids_free(t, HW_ID_QPN, n[3]), HW_ERR_KEY); /* twice */
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &again), HW_OK);
	CHECK(again == n[3]);
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &again), HW_ERR_NOMEM);
	/* Outside the kind's range, or a number of the other kind's range. */
	CHECK_ERR(hw_ids_free(t, HW_ID_QPN, 0xff), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_free(t, HW_ID_QPN, 0x100 + 8), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_free(t, HW_ID_CQN, hw_id_base(HW_ID_CQN)), HW_ERR_KEY);
}

/* Numbers are not handed out again at once: a freed one waits its turn. */
static void test_no_immediate_reuse(void)
{
	struct hw_ids *t;

	fresh("hint", 8, &t);
	if (t == NULL)
		return;
	uint32_t a, b;

	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &a), HW_OK);
	CHECK_ERR(hw_ids_free(t, HW_ID_QPN, a), HW_OK);
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &b), HW_OK);
	CHECK(b != a);
}

static void child_alloc(struct hw_ids *t, int go, int out)
{
	uint32_t n[PER_CHILD];
	char c;

	if (read_full(go, &c, 1) != 0)
		_exit(2);
	for (int i = 0; i < PER_CHILD; i++)
		if (hw_ids_alloc(t, HW_ID_QPN, &n[i]) != HW_OK)
			_exit(3);
	if (write(out, n, sizeof(n)) != (ssize_t)sizeof(n))
		_exit(4);
	_exit(0);
}

static void test_unique_across_processes(void)
{
	struct hw_ids *t;

	fresh("procs", NCHILD * PER_CHILD + 16, &t);
	if (t == NULL)
		return;
	static uint8_t seen[NCHILD * PER_CHILD + 16];
	uint32_t n[PER_CHILD];
	int go[2], out[2], status;

	memset(seen, 0, sizeof(seen));
	CHECK(pipe(go) == 0 && pipe(out) == 0);
	th_defer(reap_cb, NULL);
	for (int i = 0; i < NCHILD; i++) {
		pid_t p = fork();

		CHECK(p >= 0);
		if (p == 0)
			child_alloc(t, go[0], out[1]);
		kids[nkids++] = p;
	}
	close(out[1]);
	/* Let them all start together, so they race for the same slots. */
	CHECK(write(go[1], "gggg", NCHILD) == NCHILD);
	for (int i = 0; i < NCHILD; i++) {
		CHECK(read_full(out[0], n, sizeof(n)) == 0);
		for (int j = 0; j < PER_CHILD; j++) {
			uint32_t k = n[j] - 0x100;

			CHECK(n[j] >= 0x100 && k < sizeof(seen));
			CHECK(seen[k] == 0);
			seen[k] = 1;
		}
	}
	for (int i = 0; i < NCHILD; i++) {
		CHECK(waitpid(kids[i], &status, 0) == kids[i]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	nkids = 0;
	close(go[0]);
	close(go[1]);
	close(out[0]);
}

/* A child takes every number, reports them and waits to be killed. */
static void spawn_hog(struct hw_ids *t, uint32_t slots, uint32_t *nums, pid_t *hog)
{
	int out[2];
	pid_t p;

	CHECK(pipe(out) == 0);
	p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		for (uint32_t i = 0; i < slots; i++)
			if (hw_ids_alloc(t, HW_ID_QPN, &nums[i]) != HW_OK)
				_exit(3);
		if (write(out[1], nums, slots * sizeof(*nums)) != (ssize_t)(slots * sizeof(*nums)))
			_exit(4);
		for (;;)
			pause();
	}
	kids[nkids++] = p;
	close(out[1]);
	CHECK(read_full(out[0], nums, slots * sizeof(*nums)) == 0);
	close(out[0]);
	*hog = p;
}

static void test_free_by_other_refused(void)
{
	struct hw_ids *t;

	fresh("other", 4, &t);
	if (t == NULL)
		return;
	uint32_t nums[4], n;
	pid_t hog = -1, pid = 0;

	th_defer(reap_cb, NULL);
	spawn_hog(t, 4, nums, &hog);
	CHECK_ERR(hw_ids_free(t, HW_ID_QPN, nums[2]), HW_ERR_ACCESS);
	CHECK_ERR(hw_ids_owner(t, HW_ID_QPN, nums[2], &pid), HW_OK);
	CHECK(pid == hog);
	/* Its holder is alive: nothing is taken back. */
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &n), HW_ERR_NOMEM);
}

static void test_dead_holder_reclaimed(void)
{
	struct hw_ids *t;

	fresh("dead", 6, &t);
	if (t == NULL)
		return;
	uint32_t nums[6], n[6], extra;
	pid_t hog = -1, pid = 0;
	siginfo_t si;

	th_defer(reap_cb, NULL);
	spawn_hog(t, 6, nums, &hog);
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &extra), HW_ERR_NOMEM);
	CHECK(kill(hog, SIGKILL) == 0);
	/* Dead but not yet reaped (a zombie, WNOWAIT): already holds nothing. */
	CHECK(waitid(P_PID, (id_t)hog, &si, WEXITED | WNOWAIT) == 0);
	CHECK_ERR(hw_ids_owner(t, HW_ID_QPN, nums[0], &pid), HW_ERR_PEER_GONE);
	CHECK(pid == hog);
	CHECK(waitpid(hog, NULL, 0) == hog);
	nkids = 0;
	for (int i = 0; i < 6; i++) {
		CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &n[i]), HW_OK);
		CHECK_ERR(hw_ids_owner(t, HW_ID_QPN, n[i], &pid), HW_OK);
		CHECK(pid == getpid());
	}
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &extra), HW_ERR_NOMEM);
}

/*
 * A capacity: hw_ids_alloc_within takes only the kind's first limit slots
 * (HW_ERR_NOMEM past them though the kind has more), a freed one is taken
 * again, and a limit beyond the kind's slots is the kind's slots.
 */
static void test_alloc_within(void)
{
	struct hw_ids *t;

	fresh("within", 8, &t);
	if (t == NULL)
		return;
	uint32_t n[3], extra;

	for (int i = 0; i < 3; i++) {
		CHECK_ERR(hw_ids_alloc_within(t, HW_ID_DM, 3, &n[i]), HW_OK);
		CHECK(n[i] >= hw_id_base(HW_ID_DM) && n[i] < hw_id_base(HW_ID_DM) + 3);
		for (int j = 0; j < i; j++)
			CHECK(n[j] != n[i]);
	}
	CHECK_ERR(hw_ids_alloc_within(t, HW_ID_DM, 3, &extra), HW_ERR_NOMEM);
	CHECK_ERR(hw_ids_free(t, HW_ID_DM, n[1]), HW_OK);
	CHECK_ERR(hw_ids_alloc_within(t, HW_ID_DM, 3, &extra), HW_OK);
	CHECK(extra == n[1]);
	CHECK_ERR(hw_ids_alloc_within(t, HW_ID_DM, 0, &extra), HW_ERR_INVAL);
	for (int i = 0; i < 5; i++)
		CHECK_ERR(hw_ids_alloc_within(t, HW_ID_DM, 100, &extra), HW_OK);
	CHECK_ERR(hw_ids_alloc_within(t, HW_ID_DM, 100, &extra), HW_ERR_NOMEM);
}

/* Writes a segment of the size a 4-slot table has, with the given header words. */
static void forge(const char *name, uint64_t ident, uint64_t geometry)
{
	size_t size = 72 + HW_ID_KINDS * 4 * (sizeof(uint64_t) + 256); /* slot word + record */
	uint64_t *p;
	int fd;

	fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, (off_t)size) == 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(p != MAP_FAILED);
	p[0] = ident;
	p[1] = geometry;
	munmap(p, size);
}

static uint64_t word0(const char *name)
{
	uint64_t w = 0;
	int fd = shm_open(name, O_RDONLY, 0);

	if (fd >= 0) {
		if (pread(fd, &w, sizeof(w), 0) != (ssize_t)sizeof(w))
			w = 0;
		close(fd);
	}
	return w;
}

static void test_foreign_table_refused(void)
{
	const uint64_t geom = (uint64_t)HW_ID_KINDS << 32 | 4;
	const uint64_t ident = 0x53445049ull << 32 | 6; /* the table version (IDS_VERSION) */
	struct hw_ids *t = NULL;

	snprintf(tname, sizeof(tname), "/softdpu-test-ids-forged-%d", (int)getpid());
	th_defer(unlink_cb, tname);

	/* The layout as this library writes it opens. */
	forge(tname, ident, geom);
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_OK);
	hw_ids_close(t);
	t = NULL;

	forge(tname, 0x12345678ull << 32 | 1, geom); /* wrong magic */
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_ERR_LAYOUT);
	CHECK(t == NULL);
	CHECK(word0(tname) == (0x12345678ull << 32 | 1)); /* untouched */

	forge(tname, ident + 1, geom); /* a later version */
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_ERR_LAYOUT);

	forge(tname, ident, geom + 1); /* same size, other geometry */
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_ERR_LAYOUT);

	forge(tname, ident, geom);
	CHECK_ERR(hw_ids_open(tname, 8, &t), HW_ERR_LAYOUT); /* other size */

	CHECK(shm_unlink(tname) == 0);
	forge(tname, ident, geom);
	CHECK(shm_unlink(tname) == 0);
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_OK); /* created afresh */
	hw_ids_close(t);
	t = NULL;

	/* Another user could read or write a table opened up to it: refused. */
	{
		int fd = shm_open(tname, O_RDWR, 0);

		CHECK(fd >= 0);
		CHECK(fchmod(fd, 0666) == 0);
		close(fd);
	}
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_ERR_LAYOUT);
}

/* Zero header (a creator that died before writing it): the next opener completes it. */
static void test_half_created_table_completed(void)
{
	struct hw_ids *t = NULL;
	uint32_t n;

	snprintf(tname, sizeof(tname), "/softdpu-test-ids-half-%d", (int)getpid());
	th_defer(unlink_cb, tname);
	forge(tname, 0, 0);
	CHECK_ERR(hw_ids_open(tname, 4, &t), HW_OK);
	th_defer(close_cb, t);
	CHECK(word0(tname) == (0x53445049ull << 32 | 6));
	CHECK_ERR(hw_ids_alloc(t, HW_ID_QPN, &n), HW_OK);
}

static void test_open_refusals(void)
{
	struct hw_ids *t = NULL;

	CHECK_ERR(hw_ids_open("noslash", 4, &t), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_open("/a/b", 4, &t), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_open("/softdpu-test-ids-zero", 0, &t), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_open("/softdpu-test-ids-big", HW_ID_MAX, &t), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_open(NULL, 4, &t), HW_ERR_INVAL);
	CHECK(t == NULL);
}

/* The device's own table, as the queue layers use it. */
static void test_device_table(void)
{
	uint32_t q;
	pid_t pid = 0;

	CHECK(hw_ids_device() != NULL);
	CHECK_ERR(hw_id_alloc(HW_ID_QPN, &q), HW_OK);
	CHECK(q >= 0x100 && q <= HW_ID_MAX);
	CHECK_ERR(hw_id_owner(HW_ID_QPN, q, &pid), HW_OK);
	CHECK(pid == getpid());
	CHECK_ERR(hw_id_free(HW_ID_QPN, q), HW_OK);
	CHECK_ERR(hw_id_free(HW_ID_QPN, q), HW_ERR_KEY);
}

/* A holder publishes where its object is; any process reads it whole or not at all. */
static void test_records(void)
{
	struct hw_ids *t;

	fresh("rec", 4, &t);
	if (t == NULL)
		return;
	uint8_t rec[HW_ID_REC_MAX], back[HW_ID_REC_MAX + 8];
	uint32_t n, len = 0, seq = 0, seq2 = 0, seen = 0;
	const _Atomic uint32_t *sw;

	for (uint32_t i = 0; i < sizeof(rec); i++)
		rec[i] = (uint8_t)(i * 7 + 1);
	CHECK_ERR(hw_ids_alloc(t, HW_ID_CQN, &n), HW_OK);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, n, back, sizeof(back), &len, NULL), HW_ERR_KEY); /* not yet published */
	CHECK_ERR(hw_ids_publish(t, HW_ID_CQN, n, rec, 40, &seq), HW_OK);
	CHECK((seq & 1) == 0);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, n, back, sizeof(back), &len, &seen), HW_OK);
	CHECK(len == 40 && seen == seq && memcmp(back, rec, 40) == 0);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, n, back, 39, &len, NULL), HW_ERR_LENGTH);
	sw = hw_ids_seq(t, HW_ID_CQN, n);
	CHECK(sw != NULL && atomic_load(sw) == seq);
	/* A republish moves the sequence on: a view built from the first is stale. */
	CHECK_ERR(hw_ids_publish(t, HW_ID_CQN, n, rec, HW_ID_REC_MAX, &seq2), HW_OK);
	CHECK(seq2 != seq && atomic_load(sw) == seq2);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, n, back, sizeof(back), &len, NULL), HW_OK);
	CHECK(len == HW_ID_REC_MAX && memcmp(back, rec, HW_ID_REC_MAX) == 0);
	CHECK_ERR(hw_ids_publish(t, HW_ID_CQN, n, rec, HW_ID_REC_MAX + 1, NULL), HW_ERR_INVAL);
	CHECK_ERR(hw_ids_publish(t, HW_ID_CQN, n + 1, rec, 8, NULL), HW_ERR_KEY); /* not held */
	/* Withdraw and free both empty it. */
	CHECK_ERR(hw_ids_withdraw(t, HW_ID_CQN, n), HW_OK);
	CHECK(atomic_load(sw) != seq2);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, n, back, sizeof(back), &len, NULL), HW_ERR_KEY);
	CHECK_ERR(hw_ids_publish(t, HW_ID_CQN, n, rec, 8, NULL), HW_OK);
	CHECK_ERR(hw_ids_free(t, HW_ID_CQN, n), HW_OK);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, n, back, sizeof(back), &len, NULL), HW_ERR_KEY);
	CHECK_ERR(hw_ids_read(t, HW_ID_CQN, 0, back, sizeof(back), &len, NULL), HW_ERR_INVAL);
}

/* Another process reads what a holder published, cannot overwrite it, and sees it go with the holder. */
static void test_records_across_processes(void)
{
	struct hw_ids *t;

	fresh("recx", 4, &t);
	if (t == NULL)
		return;
	uint32_t nums[4], len = 0;
	uint8_t back[16];
	pid_t hog = -1;

	th_defer(reap_cb, NULL);
	spawn_hog(t, 4, nums, &hog);
	/* The hog holds QPNs but published nothing. */
	CHECK_ERR(hw_ids_read(t, HW_ID_QPN, nums[1], back, sizeof(back), &len, NULL), HW_ERR_KEY);
	CHECK_ERR(hw_ids_publish(t, HW_ID_QPN, nums[1], "forged", 6, NULL), HW_ERR_ACCESS);
	CHECK_ERR(hw_ids_withdraw(t, HW_ID_QPN, nums[1]), HW_ERR_ACCESS);
}

int main(void)
{
	RUN(test_unique_in_process);
	RUN(test_release_and_reuse);
	RUN(test_no_immediate_reuse);
	RUN(test_unique_across_processes);
	RUN(test_free_by_other_refused);
	RUN(test_dead_holder_reclaimed);
	RUN(test_alloc_within);
	RUN(test_foreign_table_refused);
	RUN(test_half_created_table_completed);
	RUN(test_open_refusals);
	RUN(test_device_table);
	RUN(test_records);
	RUN(test_records_across_processes);
	return th_summary("test_hw_ids");
}
