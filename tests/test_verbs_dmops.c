/*
 * MEMIC atomic operations, as rdma-core v44 documents them
 * (mlx5dv_dm_map_op_addr(3)) and its suite checks them (test_mlx5_dm_ops):
 * the device-memory capability page (QUERY_HCA_CAP, op_mod 0xf) advertises
 * atomic increment (op 0) and test-and-set (op 1) in memic_operations, with
 * one-byte accesses; a store of v through an increment address adds v to
 * the byte of device memory at the same offset, a load through a
 * test-and-set address returns the byte and sets it to all ones. The ops are
 * atomic: threads of one process and two processes (a fork's child shares
 * the device's memory) adding concurrently leave the exact total, and of two
 * processes testing-and-setting the same bytes exactly one wins each.
 * Unadvertised ops: EOPNOTSUPP. An op address the program has unmapped is
 * none any more.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "shm_machine.h"

#define OP_INC 0
#define OP_TAS 1
#define DM_LEN 4096u
#define NTHREADS 10
#define ADDS 200 /* per process or thread: two of them stay below 256 */

static char machine[32];

static void free_dm_cb(void *arg)
{
	ibv_free_dm(arg);
}

/* A zeroed dm of DM_LEN bytes, freed when the case ends. */
static struct ibv_dm *dm_new(struct ibv_context *c)
{
	struct ibv_alloc_dm_attr a = {.length = DM_LEN};
	static const uint8_t zero[DM_LEN];
	struct ibv_dm *dm = ibv_alloc_dm(c, &a);

	if (dm == NULL)
		return NULL;
	th_defer(free_dm_cb, dm);
	return ibv_memcpy_to_dm(dm, 0, zero, DM_LEN) == 0 ? dm : NULL;
}

struct op_map {
	void *p;
	size_t len;
};

static void unmap_cb(void *arg)
{
	struct op_map *m = arg;

	munmap(m->p, m->len);
	free(m);
}

/* The op address, unmapped (munmap, as the program does) when the case ends; NULL with errno. */
static volatile uint8_t *op_addr(struct ibv_dm *dm, uint8_t op)
{
	void *p = mlx5dv_dm_map_op_addr(dm, op);
	struct op_map *m;

	if (p == NULL)
		return NULL;
	m = malloc(sizeof(*m));
	if (m == NULL) {
		munmap(p, DM_LEN);
		return NULL;
	}
	*m = (struct op_map){.p = p, .len = DM_LEN};
	th_defer(unmap_cb, m);
	return p;
}

/* The byte of device memory at off, read in the word that holds it; -1 when the read fails. */
static int dm_byte(struct ibv_dm *dm, uint64_t off)
{
	uint8_t w[4] = {0};

	return ibv_memcpy_from_dm(w, dm, off & ~3ull, 4) == 0 ? w[off & 3] : -1;
}

static void close_cb(void *arg)
{
	ibv_close_device(arg);
}

static struct ibv_context *devx_open(void)
{
	struct mlx5dv_context_attr da = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	struct ibv_device **l;
	struct ibv_context *c;
	int n = 0;

	l = vf_list(&n);
	if (l == NULL || n < 1)
		return NULL;
	c = mlx5dv_open_device(l[0], &da);
	if (c != NULL)
		th_defer(close_cb, c);
	return c;
}

/* The capability page rdma-core's suite reads before it uses the ops. */
static void test_caps(void)
{
	uint8_t in[16] = {0x01, 0x00, 0, 0, 0, 0, 0x00, 0xf << 1 | 1}, out[0x1010];
	struct ibv_context *c = devx_open();

	CHECK(c != NULL);
	memset(out, 0xee, sizeof(out));
	CHECK_OK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, sizeof(out)));
	CHECK(out[0] == 0);
	/* memic_operations: increment (bit 0) and test-and-set (bit 1), nothing else. */
	CHECK(out[80] == 0 && out[81] == 0 && out[82] == 0 && out[83] == 0x03);
	/* Both on one-byte accesses (bit 0 of their size fields). */
	CHECK(out[20] == 0x01 && out[22] == 0x01);
}

/* Two increments, then test-and-set reads 2 and leaves 0xff, which the next one reads (test_dm_atomic_ops). */
static void test_increment_then_test_and_set(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_dm *dm = c != NULL ? dm_new(c) : NULL;
	volatile uint8_t *inc, *tas;
	uint8_t v = 0x01;
	volatile size_t one = 1;

	CHECK(dm != NULL);
	inc = op_addr(dm, OP_INC);
	tas = op_addr(dm, OP_TAS);
	CHECK(inc != NULL && tas != NULL);
	inc[0] = 1;
	memcpy((void *)inc, &v, one); /* as a program's memcpy writes it */
	CHECK(dm_byte(dm, 0) == 2);
	CHECK(tas[0] == 2);
	CHECK(dm_byte(dm, 0) == 0xff);
	memcpy(&v, (const void *)tas, one);
	CHECK(v == 0xff);
	/* Any offset, any added value, modulo 256: only the addressed byte changes. */
	v = 200;
	inc[DM_LEN - 1] = v;
	inc[DM_LEN - 1] = 100;
	inc[7] = 5;
	CHECK(dm_byte(dm, DM_LEN - 1) == 44);
	CHECK(dm_byte(dm, 7) == 5 && dm_byte(dm, 6) == 0 && dm_byte(dm, 8) == 0);
	/* Test-and-set of a clear byte: 0, and the byte is set. */
	CHECK(tas[100] == 0);
	CHECK(dm_byte(dm, 100) == 0xff && dm_byte(dm, 101) == 0);
}

static void test_map_errors(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_dm *dm = c != NULL ? dm_new(c) : NULL;

	CHECK(dm != NULL);
	errno = 0;
	CHECK(mlx5dv_dm_map_op_addr(dm, 2) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dm_map_op_addr(dm, 31) == NULL && errno == EOPNOTSUPP);
}

struct th_arg {
	struct ibv_dm *dm;
	volatile uint8_t *shared_inc; /* one mapping all threads use */
	uint8_t got;
	int err;
};

static void *tas_thread(void *arg)
{
	struct th_arg *a = arg;
	void *p = mlx5dv_dm_map_op_addr(a->dm, OP_TAS);

	if (p == NULL) {
		a->err = errno;
		return NULL;
	}
	a->got = ((volatile uint8_t *)p)[0];
	munmap(p, DM_LEN);
	return NULL;
}

static void *inc_thread(void *arg)
{
	struct th_arg *a = arg;
	void *p = mlx5dv_dm_map_op_addr(a->dm, OP_INC);

	if (p == NULL) {
		a->err = errno;
		return NULL;
	}
	((volatile uint8_t *)p)[0] = 1;
	munmap(p, DM_LEN);
	for (int i = 0; i < ADDS / NTHREADS; i++)
		a->shared_inc[1] = 1;
	return NULL;
}

/* test_parallel_dm_atomic_ops: ten test-and-sets, then ten increments of 1: 0xff + 10 = 9 (mod 256). */
static void test_threads(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_dm *dm = c != NULL ? dm_new(c) : NULL;
	struct th_arg a[NTHREADS];
	pthread_t t[NTHREADS];
	volatile uint8_t *inc;
	int zeros = 0;

	CHECK(dm != NULL);
	inc = op_addr(dm, OP_INC);
	CHECK(inc != NULL);
	for (int i = 0; i < NTHREADS; i++) {
		a[i] = (struct th_arg){.dm = dm, .shared_inc = inc};
		CHECK(pthread_create(&t[i], NULL, tas_thread, &a[i]) == 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK(a[i].err == 0 && (a[i].got == 0 || a[i].got == 0xff));
		zeros += a[i].got == 0;
	}
	CHECK(zeros == 1); /* exactly one thread found the byte clear */
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&t[i], NULL, inc_thread, &a[i]) == 0);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK(a[i].err == 0);
	}
	CHECK(dm_byte(dm, 0) == NTHREADS - 1);
	CHECK(dm_byte(dm, 1) == ADDS); /* every add of every thread through the one mapping */
}

/* One side of the two-process case: ADDS / 2 increments of bytes 0 and 2, then test-and-set of bytes 64..127. */
static int one_side(volatile uint8_t *inc, volatile uint8_t *tas, int go_fd, uint64_t *won)
{
	char go;

	if (read(go_fd, &go, 1) != 1)
		return -1;
	for (int i = 0; i < ADDS / 2; i++) {
		inc[0] = 1;
		inc[2] = 3;
	}
	*won = 0;
	for (int i = 64; i < 128; i++)
		*won |= (uint64_t)(tas[i] == 0) << (i - 64);
	return 0;
}

/* Parent and child at once on the same device memory: the exact total, and one winner per byte. */
static void test_two_processes(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_dm *dm = c != NULL ? dm_new(c) : NULL;
	volatile uint8_t *inc, *tas;
	uint64_t mine, theirs = 0;
	int go[2], res[2], st = 0;
	pid_t kid;

	CHECK(dm != NULL);
	inc = op_addr(dm, OP_INC);
	tas = op_addr(dm, OP_TAS);
	CHECK(inc != NULL && tas != NULL);
	CHECK(pipe(go) == 0 && pipe(res) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		uint64_t won = 0;

		_exit(one_side(inc, tas, go[0], &won) == 0 && write(res[1], &won, sizeof(won)) == sizeof(won) ? 0 : 1);
	}
	CHECK(write(go[1], "gg", 2) == 2); /* both start together */
	CHECK(one_side(inc, tas, go[0], &mine) == 0);
	CHECK(read(res[0], &theirs, sizeof(theirs)) == sizeof(theirs));
	CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(go[0]), close(go[1]), close(res[0]), close(res[1]);
	CHECK(dm_byte(dm, 0) == ADDS);
	CHECK(dm_byte(dm, 2) == (uint8_t)(3 * ADDS));
	CHECK((mine & theirs) == 0 && (mine | theirs) == ~0ull);
	for (int i = 64; i < 128; i++)
		CHECK(dm_byte(dm, (uint64_t)i) == 0xff);
}

/*
 * An op mapping the program unmapped is no op address any more, whatever
 * takes its addresses: a PROT_NONE page mapped there faults as any (the
 * access is not performed on the device memory), and the addresses left
 * behind by 300 mappings, each taken by other memory, do not use up the
 * op mappings a process may have.
 */
static void test_unmapped_op_address(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_dm *dm = c != NULL ? dm_new(c) : NULL;
	static void *taken[300];
	volatile uint8_t *q;
	int st = 0, n = 0, mapped = 0;
	void *p;
	pid_t kid;

	CHECK(dm != NULL);
	p = mlx5dv_dm_map_op_addr(dm, OP_INC);
	CHECK(p != NULL);
	CHECK(munmap(p, DM_LEN) == 0);
	q = mmap(p, DM_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(q == p);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		int nul = open("/dev/null", O_WRONLY);

		/* A sanitizer's report of the (expected) fault is not the test's output. */
		if (nul >= 0)
			dup2(nul, 2);
		q[0] = 1;
		_exit(0);
	}
	CHECK(waitpid(kid, &st, 0) == kid);
	munmap((void *)q, DM_LEN);
	/* The fault ends the child: SIGSEGV, or a sanitizer's report of it (abort, or its exit status). */
	CHECK(WIFSIGNALED(st) ? WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGABRT : WEXITSTATUS(st) != 0);
	CHECK(dm_byte(dm, 0) == 0);
	for (; n < 300; n++) {
		p = mlx5dv_dm_map_op_addr(dm, OP_INC);
		if (p == NULL)
			break;
		munmap(p, DM_LEN);
		taken[n] = mmap(p, DM_LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (taken[n] == MAP_FAILED)
			break;
		mapped++;
	}
	for (int i = 0; i < mapped; i++)
		munmap(taken[i], DM_LEN);
	CHECK(n == 300 && mapped == 300);
}

/* The machine's shared tables and sysfs tree in /dev/shm, named with its tag, go with the program. */
static void machine_tables_cb(void *arg)
{
	(void)arg;
	shm_machine_remove(machine);
}

int main(void)
{
	unsigned pid = (unsigned)getpid();

	/* A machine of this program's own: device memory other programs use does not fill it. */
	snprintf(machine, sizeof(machine), "10.%u.%u.%u", 100 + (pid >> 16) % 100, (pid >> 8) & 0xff, pid % 254 + 1);
	setenv("SOFTDPU_MACHINE", machine, 1);
	th_defer(machine_tables_cb, NULL);
	RUN(test_caps);
	RUN(test_increment_then_test_and_set);
	RUN(test_map_errors);
	RUN(test_threads);
	RUN(test_two_processes);
	RUN(test_unmapped_op_address);
	return th_summary("test_verbs_dmops");
}
