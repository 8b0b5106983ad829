/*
 * VARs (virtio access regions), as rdma-core v44 documents them
 * (mlx5dv_alloc_var(3)) and its suite uses them (test_mlx5_var): a VAR is a
 * doorbell page with its page_id, mmap length and mmap offset, mapped
 * through the context's cmd_fd at mmap_off; comp_mask 0; flags other than 0
 * EOPNOTSUPP. The pages are the card's, shared by every process of the
 * device: when all are held, ENOSPC (the kernel's VAR table). mlx5dv_free_var
 * returns nothing: a VAR freed twice, or one its context's close freed
 * already, is refused without harm (errno EINVAL).
 */
#include <errno.h>
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

#define VAR_MAX 1024u /* the device's VARs (softdpu's figure) */

static char machine[32];

/* A child still running when its case ends (failed): killed and reaped. */
static void kill_cb(void *arg)
{
	pid_t *kid = arg;

	if (*kid > 0) {
		kill(*kid, SIGKILL);
		waitpid(*kid, NULL, 0);
	}
}

static void free_var_cb(void *arg)
{
	mlx5dv_free_var(arg);
}

static struct mlx5dv_var *var_new(struct ibv_context *c)
{
	struct mlx5dv_var *v = mlx5dv_alloc_var(c, 0);

	if (v != NULL)
		th_defer(free_var_cb, v);
	return v;
}

static void var_drop(struct mlx5dv_var *v)
{
	th_undefer(free_var_cb, v);
	mlx5dv_free_var(v);
}

struct map {
	void *p;
	size_t len;
};

static void unmap_cb(void *arg)
{
	struct map *m = arg;

	munmap(m->p, m->len);
	free(m);
}

/* The VAR's page through cmd_fd, unmapped when the case ends; NULL when mmap fails. */
static volatile uint8_t *var_map(struct ibv_context *c, const struct mlx5dv_var *v)
{
	void *p = mmap(NULL, v->length, PROT_READ | PROT_WRITE, MAP_SHARED, c->cmd_fd, v->mmap_off);
	struct map *m;

	if (p == MAP_FAILED)
		return NULL;
	m = malloc(sizeof(*m));
	if (m == NULL) {
		munmap(p, v->length);
		return NULL;
	}
	*m = (struct map){.p = p, .len = v->length};
	th_defer(unmap_cb, m);
	return p;
}

/* Two VARs: distinct pages, each mapped and written, the bytes read back through a second mapping. */
static void test_alloc_map(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_context *c = vf_open();
	struct mlx5dv_var *a = c != NULL ? var_new(c) : NULL, *b = c != NULL ? var_new(c) : NULL;
	volatile uint8_t *pa, *pa2, *pb;

	CHECK(a != NULL && b != NULL);
	CHECK(a->comp_mask == 0 && b->comp_mask == 0);
	CHECK(a->length > 0 && a->length % pg == 0 && a->mmap_off % pg == 0);
	CHECK(a->page_id != b->page_id && a->mmap_off != b->mmap_off);
	pa = var_map(c, a);
	pb = var_map(c, b);
	CHECK(pa != NULL && pb != NULL);
	for (uint32_t i = 0; i < a->length; i++)
		CHECK(pa[i] == 0 && pb[i] == 0);
	for (uint32_t i = 0; i < a->length; i++)
		pa[i] = (uint8_t)(i * 7 + 1);
	pa2 = var_map(c, a);
	CHECK(pa2 != NULL && pa2 != pa);
	for (uint32_t i = 0; i < a->length; i++)
		CHECK(pa2[i] == (uint8_t)(i * 7 + 1) && pb[i] == 0);
}

static void test_bad_args(void)
{
	struct ibv_context *c = vf_open();

	CHECK(c != NULL);
	errno = 0;
	CHECK(mlx5dv_alloc_var(c, 1) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_alloc_var(NULL, 0) == NULL && errno == EINVAL);
}

/* A second free of a VAR is refused; the pool goes on. */
static void test_free_twice(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_var *a = c != NULL ? var_new(c) : NULL, *b;
	volatile uint8_t *p;

	CHECK(a != NULL);
	p = var_map(c, a);
	CHECK(p != NULL);
	p[0] = 0x5a;
	var_drop(a);
	errno = 0;
	mlx5dv_free_var(a);
	CHECK(errno == EINVAL);
	b = var_new(c);
	CHECK(b != NULL);
	p = var_map(c, b);
	CHECK(p != NULL && p[0] == 0);
}

/* Closing a context frees its VARs: freeing one afterwards is refused, and its page is free again. */
static void test_close_frees(void)
{
	struct ibv_context *c = vf_open(), *c2;
	struct mlx5dv_var *v, *w;

	CHECK(c != NULL);
	c2 = ibv_import_device(dup(c->cmd_fd));
	CHECK(c2 != NULL);
	v = mlx5dv_alloc_var(c2, 0);
	CHECK(v != NULL);
	CHECK_OK(ibv_close_device(c2));
	errno = 0;
	mlx5dv_free_var(v);
	CHECK(errno == EINVAL);
	w = var_new(c);
	CHECK(w != NULL);
}

/* The card's VARs are one pool for every process: a child's hold counts here, until it ends. */
static void test_device_wide_limit(void)
{
	struct ibv_context *c = vf_open();
	static struct mlx5dv_var *v[VAR_MAX];
	uint32_t n = 0, held_by_kid = 10;
	int up[2], done[2], st = 0;
	static pid_t kid;
	char ok;

	CHECK(c != NULL);
	CHECK(pipe(up) == 0 && pipe(done) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		struct ibv_context *kc = ibv_open_device(c->device);
		uint32_t got = 0;

		/* Only the parent's end: its exit (a failed case) ends the wait below. */
		close(up[0]);
		close(done[1]);

		while (kc != NULL && got < held_by_kid && mlx5dv_alloc_var(kc, 0) != NULL)
			got++;
		if (write(up[1], got == held_by_kid ? "y" : "n", 1) != 1 || read(done[0], &ok, 1) != 1)
			_exit(1);
		_exit(0); /* its VARs are taken back when it is gone */
	}
	close(up[1]);
	close(done[0]);
	th_defer(kill_cb, &kid);
	CHECK(read(up[0], &ok, 1) == 1 && ok == 'y');
	errno = 0;
	while (n < VAR_MAX && (v[n] = mlx5dv_alloc_var(c, 0)) != NULL)
		n++;
	CHECK(n == VAR_MAX - held_by_kid && errno == ENOSPC);
	mlx5dv_free_var(v[--n]);
	v[n] = mlx5dv_alloc_var(c, 0);
	CHECK(v[n] != NULL);
	n++;
	CHECK(write(done[1], "x", 1) == 1);
	CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kid = 0;
	close(up[0]), close(done[1]);
	/* The child's are free again: the whole pool is this process's to take. */
	while (n < VAR_MAX && (v[n] = mlx5dv_alloc_var(c, 0)) != NULL)
		n++;
	CHECK(n == VAR_MAX);
	errno = 0;
	CHECK(mlx5dv_alloc_var(c, 0) == NULL && errno == ENOSPC);
	while (n > 0)
		mlx5dv_free_var(v[--n]);
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

	/* A machine of this program's own: VARs other programs hold do not count against its totals. */
	snprintf(machine, sizeof(machine), "10.%u.%u.%u", 100 + (pid >> 16) % 100, (pid >> 8) & 0xff, pid % 254 + 1);
	setenv("SOFTDPU_MACHINE", machine, 1);
	th_defer(machine_tables_cb, NULL);
	RUN(test_alloc_map);
	RUN(test_bad_args);
	RUN(test_free_twice);
	RUN(test_close_frees);
	RUN(test_device_wide_limit);
	return th_summary("test_verbs_var");
}
