/*
 * MPI_Allreduce (MPI_SUM of 32-bit ints) time per call, for bench/mpi.sh:
 * warm-up calls, then timed ones; rank 0 prints "allreduce <bytes> <iters>
 * <µs per call>" (the slowest rank's time, so no rank's early exit hides
 * a wait). The result is checked once, so a fast wrong answer is no figure.
 * Usage: mpirun -np N mpi_allreduce [bytes] [iterations]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 512 << 10;
	int iters = argc > 2 ? atoi(argv[2]) : 200, rank, np, bad = 0, anybad;
	size_t n = bytes / 4;
	int32_t *s, *d;
	double t, tmax;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	s = malloc(n * 4);
	d = malloc(n * 4);
	if (s == NULL || d == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (size_t i = 0; i < n; i++)
		s[i] = (int32_t)(i + (size_t)rank);
	for (int i = 0; i < iters / 10 + 2; i++)
		MPI_Allreduce(s, d, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++)
		bad |= d[i] != (int32_t)(i * (size_t)np + (size_t)np * (np - 1) / 2);
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(s, d, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
	t = MPI_Wtime() - t;
	MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce %zu %d %.1f%s\n", bytes, iters, tmax / iters * 1e6, anybad ? " WRONG" : "");
	free(s);
	free(d);
	MPI_Finalize();
	return anybad;
}
