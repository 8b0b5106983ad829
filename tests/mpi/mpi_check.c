/*
 * MPI data checks for tools/check-mpi.sh: collectives, point-to-point (eager
 * and rendezvous sizes), non-contiguous datatypes and one-sided windows, each
 * result compared element by element with what the MPI standard defines.
 * Values depend on rank, index and round, so a stale or misplaced block fails.
 * Exit status 0 when every check of every rank matched, 1 otherwise.
 * Usage: mpirun -np N mpi_check [max-bytes]   (default 4 MiB)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errors;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			if (errors++ < 10) {                                                       \
				fprintf(stderr, "rank %d: ", rank);                                \
				fprintf(stderr, __VA_ARGS__);                                      \
				fputc('\n', stderr);                                               \
			}                                                                          \
		}                                                                                  \
	} while (0)

/* The value rank r puts at index i in round k: distinct per (r, i, k). */
static int32_t val(int r, size_t i, int k)
{
	return (int32_t)((uint32_t)r * 2654435761u ^ (uint32_t)i * 40503u ^ (uint32_t)k * 97u) & 0xffffff;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		MPI_Abort(MPI_COMM_WORLD, 2);
	return p;
}

static void check_allreduce(size_t n, int k)
{
	int32_t *s = xmalloc(n * 4), *d = xmalloc(n * 4);

	for (size_t i = 0; i < n; i++)
		s[i] = val(rank, i, k);
	MPI_Allreduce(s, d, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++) {
		int32_t e = 0;
		for (int r = 0; r < nprocs; r++)
			e += val(r, i, k);
		CHECK(d[i] == e, "allreduce n=%zu [%zu] %d != %d", n, i, d[i], e);
		if (d[i] != e)
			break;
	}
	free(s);
	free(d);
}

static void check_bcast(size_t n, int k)
{
	int32_t *b = xmalloc(n * 4);
	int root = k % nprocs;

	for (size_t i = 0; i < n; i++)
		b[i] = rank == root ? val(root, i, k) : -1;
	MPI_Bcast(b, (int)n, MPI_INT32_T, root, MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++) {
		CHECK(b[i] == val(root, i, k), "bcast n=%zu [%zu]", n, i);
		if (b[i] != val(root, i, k))
			break;
	}
	free(b);
}

/* alltoall and allgather: n elements per rank block. */
static void check_alltoall(size_t n, int k)
{
	int32_t *s = xmalloc(n * nprocs * 4), *d = xmalloc(n * nprocs * 4);

	for (int r = 0; r < nprocs; r++)
		for (size_t i = 0; i < n; i++)
			s[r * n + i] = val(rank, r * n + i, k);
	memset(d, 0xff, n * nprocs * 4);
	MPI_Alltoall(s, (int)n, MPI_INT32_T, d, (int)n, MPI_INT32_T, MPI_COMM_WORLD);
	for (int r = 0; r < nprocs; r++)
		for (size_t i = 0; i < n; i++) {
			/* Block r came from rank r, which sent us its block number `rank`. */
			int32_t e = val(r, rank * n + i, k);
			CHECK(d[r * n + i] == e, "alltoall n=%zu from %d [%zu]", n, r, i);
			if (d[r * n + i] != e)
				goto out;
		}
out:
	free(s);
	free(d);
}

static void check_allgather(size_t n, int k)
{
	int32_t *s = xmalloc(n * 4), *d = xmalloc(n * nprocs * 4);

	for (size_t i = 0; i < n; i++)
		s[i] = val(rank, i, k);
	memset(d, 0xff, n * nprocs * 4);
	MPI_Allgather(s, (int)n, MPI_INT32_T, d, (int)n, MPI_INT32_T, MPI_COMM_WORLD);
	for (int r = 0; r < nprocs; r++)
		for (size_t i = 0; i < n; i++) {
			CHECK(d[r * n + i] == val(r, i, k), "allgather n=%zu from %d [%zu]", n, r, i);
			if (d[r * n + i] != val(r, i, k))
				goto out;
		}
out:
	free(s);
	free(d);
}

static void check_reduce_scatter(size_t n, int k)
{
	int32_t *s = xmalloc(n * nprocs * 4), *d = xmalloc(n * 4);

	for (size_t i = 0; i < n * nprocs; i++)
		s[i] = val(rank, i, k);
	MPI_Reduce_scatter_block(s, d, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++) {
		int32_t e = 0;
		for (int r = 0; r < nprocs; r++)
			e += val(r, rank * n + i, k);
		CHECK(d[i] == e, "reduce_scatter n=%zu [%zu]", n, i);
		if (d[i] != e)
			break;
	}
	free(s);
	free(d);
}

/* Ring exchange of n bytes with MPI_Sendrecv and with Isend/Irecv; the same
 * buffers reused round after round (UCX's registration cache keeps them). */
static void check_p2p(size_t n, int k, unsigned char *s, unsigned char *d)
{
	int to = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;
	MPI_Request rq[2];

	for (size_t i = 0; i < n; i++)
		s[i] = (unsigned char)val(rank, i, k);
	memset(d, 0, n);
	MPI_Sendrecv(s, (int)n, MPI_BYTE, to, k, d, (int)n, MPI_BYTE, from, k, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (size_t i = 0; i < n; i++) {
		CHECK(d[i] == (unsigned char)val(from, i, k), "sendrecv n=%zu [%zu] %u != %u", n, i, d[i],
		      (unsigned char)val(from, i, k));
		if (d[i] != (unsigned char)val(from, i, k))
			break;
	}
	memset(d, 0, n);
	MPI_Irecv(d, (int)n, MPI_BYTE, from, k + 1, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(s, (int)n, MPI_BYTE, to, k + 1, MPI_COMM_WORLD, &rq[1]);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	for (size_t i = 0; i < n; i++) {
		CHECK(d[i] == (unsigned char)val(from, i, k), "isend/irecv n=%zu [%zu] %u != %u", n, i, d[i],
		      (unsigned char)val(from, i, k));
		if (d[i] != (unsigned char)val(from, i, k))
			break;
	}
}

/* Fresh buffers each time: freed memory that comes back at the same address
 * must not keep a stale registration. */
static void check_p2p_fresh(size_t n, int k)
{
	unsigned char *s = xmalloc(n), *d = xmalloc(n);

	check_p2p(n, k, s, d);
	free(s);
	free(d);
}

/* A strided vector sent, a contiguous block received, and back. */
static void check_vector(size_t count, int k)
{
	const int stride = 3;
	MPI_Datatype vec;
	int to = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;
	int32_t *s = xmalloc(count * stride * 4), *d = xmalloc(count * 4), *back = xmalloc(count * stride * 4);

	MPI_Type_vector((int)count, 1, stride, MPI_INT32_T, &vec);
	MPI_Type_commit(&vec);
	for (size_t i = 0; i < count * stride; i++)
		s[i] = val(rank, i, k);
	MPI_Sendrecv(s, 1, vec, to, k, d, (int)count, MPI_INT32_T, from, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (size_t i = 0; i < count; i++) {
		CHECK(d[i] == val(from, i * stride, k), "vector n=%zu [%zu]", count, i);
		if (d[i] != val(from, i * stride, k))
			break;
	}
	/* Contiguous in, scattered out: the gaps must stay untouched. */
	for (size_t i = 0; i < count * stride; i++)
		back[i] = -7;
	MPI_Sendrecv(d, (int)count, MPI_INT32_T, from, k + 1, back, 1, vec, to, k + 1, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (size_t i = 0; i < count * stride; i++) {
		int32_t e = i % stride ? -7 : val(rank, i, k);
		CHECK(back[i] == e, "vector back n=%zu [%zu] %d != %d", count, i, back[i], e);
		if (back[i] != e)
			break;
	}
	MPI_Type_free(&vec);
	free(s);
	free(d);
	free(back);
}

/* A struct type with a hole, sent as an array of structs. */
struct rec {
	int32_t a;
	double b;
	char c[3];
};

static void check_struct(size_t count, int k)
{
	int bl[3] = {1, 1, 3};
	MPI_Aint disp[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
	MPI_Datatype types[3] = {MPI_INT32_T, MPI_DOUBLE, MPI_CHAR}, t, tr;
	struct rec *s = xmalloc(count * sizeof(*s)), *d = xmalloc(count * sizeof(*d));
	int to = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;

	MPI_Type_create_struct(3, bl, disp, types, &t);
	MPI_Type_create_resized(t, 0, sizeof(struct rec), &tr);
	MPI_Type_commit(&tr);
	for (size_t i = 0; i < count; i++) {
		s[i].a = val(rank, i, k);
		s[i].b = val(rank, i, k) * 0.5;
		memcpy(s[i].c, "xyz", 3);
	}
	memset(d, 0, count * sizeof(*d));
	MPI_Sendrecv(s, (int)count, tr, to, k, d, (int)count, tr, from, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (size_t i = 0; i < count; i++) {
		int ok = d[i].a == val(from, i, k) && d[i].b == val(from, i, k) * 0.5 && !memcmp(d[i].c, "xyz", 3);
		CHECK(ok, "struct n=%zu [%zu]", count, i);
		if (!ok)
			break;
	}
	MPI_Type_free(&t);
	MPI_Type_free(&tr);
	free(s);
	free(d);
}

/*
 * One-sided: every rank puts its block into the next rank's window, gets the
 * previous rank's, accumulates into rank 0; fence epochs, then passive
 * target (lock/unlock).
 */
static void check_rma(MPI_Win win, int32_t *base, size_t n, int k, const char *kind)
{
	int to = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;
	int32_t *src = xmalloc(n * 4), *got = xmalloc(n * 4);

	/* Window layout: [0,n) put target, [n,2n) get source, [2n,3n) accumulate. */
	for (size_t i = 0; i < n; i++) {
		base[i] = -1;
		base[n + i] = val(rank, i, k + 1);
		base[2 * n + i] = 0;
		src[i] = val(rank, i, k);
	}
	MPI_Win_fence(0, win);
	MPI_Put(src, (int)n, MPI_INT32_T, to, 0, (int)n, MPI_INT32_T, win);
	MPI_Get(got, (int)n, MPI_INT32_T, from, (MPI_Aint)n, (int)n, MPI_INT32_T, win);
	MPI_Accumulate(src, (int)n, MPI_INT32_T, 0, (MPI_Aint)(2 * n), (int)n, MPI_INT32_T, MPI_SUM, win);
	MPI_Win_fence(0, win);
	for (size_t i = 0; i < n; i++) {
		CHECK(base[i] == val(from, i, k), "%s fence put n=%zu [%zu]", kind, n, i);
		CHECK(got[i] == val(from, i, k + 1), "%s fence get n=%zu [%zu]", kind, n, i);
		if (base[i] != val(from, i, k) || got[i] != val(from, i, k + 1))
			break;
	}
	if (rank == 0)
		for (size_t i = 0; i < n; i++) {
			int32_t e = 0;
			for (int r = 0; r < nprocs; r++)
				e += val(r, i, k);
			CHECK(base[2 * n + i] == e, "%s fence accumulate n=%zu [%zu]", kind, n, i);
			if (base[2 * n + i] != e)
				break;
		}

	/* Passive target: the same three operations in lock/unlock epochs. */
	for (size_t i = 0; i < n; i++)
		src[i] = val(rank, i, k + 2);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win);
	MPI_Put(src, (int)n, MPI_INT32_T, to, 0, (int)n, MPI_INT32_T, win);
	MPI_Win_unlock(to, win);
	MPI_Win_lock(MPI_LOCK_SHARED, from, 0, win);
	MPI_Get(got, (int)n, MPI_INT32_T, from, (MPI_Aint)n, (int)n, MPI_INT32_T, win);
	MPI_Win_unlock(from, win);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	MPI_Accumulate(src, (int)n, MPI_INT32_T, 0, (MPI_Aint)(2 * n), (int)n, MPI_INT32_T, MPI_SUM, win);
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	/* Our own window, read under a lock so the others' updates are visible. */
	MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
	for (size_t i = 0; i < n; i++) {
		CHECK(base[i] == val(from, i, k + 2), "%s lock put n=%zu [%zu]", kind, n, i);
		CHECK(got[i] == val(from, i, k + 1), "%s lock get n=%zu [%zu]", kind, n, i);
		if (base[i] != val(from, i, k + 2) || got[i] != val(from, i, k + 1))
			break;
	}
	if (rank == 0)
		for (size_t i = 0; i < n; i++) {
			int32_t e = 0;
			for (int r = 0; r < nprocs; r++)
				e += val(r, i, k) + val(r, i, k + 2);
			CHECK(base[2 * n + i] == e, "%s lock accumulate n=%zu [%zu]", kind, n, i);
			if (base[2 * n + i] != e)
				break;
		}
	MPI_Win_unlock(rank, win);
	MPI_Barrier(MPI_COMM_WORLD);
	free(src);
	free(got);
}

static void check_windows(size_t n, int k)
{
	MPI_Win win;
	int32_t *base = xmalloc(3 * n * 4);

	MPI_Win_create(base, (MPI_Aint)(3 * n * 4), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	check_rma(win, base, n, k, "win_create");
	MPI_Win_free(&win);
	free(base);

	MPI_Win_allocate((MPI_Aint)(3 * n * 4), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	check_rma(win, base, n, k + 10, "win_allocate");
	MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : 4u << 20;
	unsigned char *ps, *pd;
	int k = 0, total;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

	/* Collectives, 8 B to max (in 4-byte elements, per rank block for the
	 * block-wise ones). */
	for (size_t b = 8; b <= max; b *= 4, k += 3) {
		check_allreduce(b / 4, k);
		check_bcast(b / 4, k);
		check_alltoall(b / 4 / nprocs ? b / 4 / nprocs : 1, k);
		check_allgather(b / 4 / nprocs ? b / 4 / nprocs : 1, k);
		check_reduce_scatter(b / 4 / nprocs ? b / 4 / nprocs : 1, k);
	}
	if (rank == 0)
		printf("mpi_check: collectives done\n");

	/* Point-to-point: eager and rendezvous sizes, reused buffers (three
	 * rounds each, so the registration cache hits) and fresh ones. */
	ps = xmalloc(max);
	pd = xmalloc(max);
	for (size_t b = 1; b <= max; b *= 2)
		for (int r = 0; r < 3; r++, k += 2)
			check_p2p(b, k, ps, pd);
	free(ps);
	free(pd);
	for (size_t b = 64 << 10; b <= max; b *= 4)
		for (int r = 0; r < 3; r++, k += 2)
			check_p2p_fresh(b, k);
	if (rank == 0)
		printf("mpi_check: point-to-point done\n");

	for (size_t c = 1; c <= max / 12; c *= 16, k += 2) {
		check_vector(c, k);
		check_struct(c, k);
	}
	if (rank == 0)
		printf("mpi_check: datatypes done\n");

	for (size_t b = 8; b <= max; b *= 16, k += 20)
		check_windows(b / 4, k);
	if (rank == 0)
		printf("mpi_check: one-sided done\n");

	MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %s (%d ranks, up to %zu bytes, %d mismatches)\n", total ? "FAILED" : "OK", nprocs,
		       max, total);
	MPI_Finalize();
	return total ? 1 : 0;
}
