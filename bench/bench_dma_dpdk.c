/*
 * bench_dma_dpdk — the peer of bench_dma: DPDK's software DMA device
 * (drivers/dma/skeleton, vdev "dma_skeleton") driven through the dmadev API
 * with the same sizes, queue depths and memory layout as the DOCA cases.
 *
 * The skeleton PMD copies on its own thread (cpucopy_thread, rte_memcpy);
 * its vdev argument lcore=<id> pins that thread to the CPU set of an EAL
 * lcore, so the EAL gets two lcores: the main one (this thread, the
 * submitter) and the copy core. The driver demands IOVA as VA
 * (RTE_VDEV_DRV_NEED_IOVA_AS_VA); without hugepages that is --iova-mode=va.
 *
 * Why one figure of a loaded machine swings (bench_dma's 64 B peer gave
 * 4-17 M jobs/s run to run): the pipeline needs both threads on their CPUs
 * at once. When another process takes the submitter's CPU for a time slice,
 * the copy thread finds its ring empty, spins, then goes to sleep (the
 * skeleton sleeps in short naps after a run of empty polls) and wakes a
 * timer tick later; when it takes the copy CPU, the submitter waits on a
 * full ring. A window that met either lost a slice of its time to a third
 * party, by an amount that depends on the load, not on DPDK (the copy
 * thread's voluntary context switches, its naps, run to hundreds a second
 * on a loaded machine). So jobs up to 4 KiB run many short windows and keep
 * the clean ones: each thread ran at least 95% of the window on its CPU
 * (the submitter's CLOCK_THREAD_CPUTIME_ID, the copy thread's
 * /proc/self/task/<tid>/schedstat) and the submitter is still on its CPU.
 * A clean window's rate is its jobs over the time both threads ran (at
 * least the sum of their CPU times less the window). The figure is the
 * median of the clean windows; when too few are clean it is the median of
 * all of them, marked so. Before the windows, a warm-up fills the caches
 * and wakes the copy thread; the copy thread's CPU affinity is checked
 * against the CPU asked for and reported.
 *
 * Run by bench_dma once with --probe, then once per case (--size, --depth),
 * right before the DOCA run of the same case. Output, parsed by bench_dma:
 *   V <dpdk version>   C <cores>   P ok (probe)   R <size> <depth> <jobs/s>
 *   S <size> <depth> <clean windows> <windows> <lowest> <highest> <seconds per window>
 *                      (the clean windows' spread; without clean ones, of all windows)
 *   U <reason>         (the peer cannot run)
 *
 * Usage: bench_dma_dpdk [--probe] [--quick] --time S --region BYTES --main-core N --copy-core N [--size B] [--depth N]
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_dmadev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_version.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define BIG_SIZE MIB
#define ROUNDS 5	/* timed windows of a case of large jobs, best reported (as bench_dma) */
#define SMALL_MAX (4 * KIB) /* up to this size, many short windows, median of the clean ones */
#define WIN_S 0.005	/* a short window: a few time slices would spoil most windows of the old 0.09 s */
#define CLEAN_WANT 21	/* clean windows that end a case early */
#define CLEAN_FRAC 0.95 /* a clean window: each thread ran at least this much of it */
#define BUDGET 10	/* a small case's windows stop after BUDGET * --time seconds */
#define CLEAN_MIN 7	/* fewer clean windows: the median of all, marked */
#define MAX_WINDOWS 600
#define NB_DESC 1024 /* power of two (skeleton requirement); 1023 usable, > the deepest queue */

static const size_t full_sizes[] = { 64, 256, KIB, 4 * KIB, 64 * KIB, MIB, 4 * MIB, 64 * MIB };
static const uint32_t full_depths[] = { 1, 8, 32, 256 };
static const size_t quick_sizes[] = { 64, 4 * KIB, MIB };
static const uint32_t quick_depths[] = { 1, 32 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct peer {
	int16_t dev;
	uint8_t *src, *dst;
	rte_iova_t src_iova, dst_iova;
	size_t region;
};

struct pcase {
	size_t size;
	uint32_t depth, nslots, slot, inflight;
	uint64_t check;
	uint64_t jobs; /* of the last pump */
	double secs;
};

static int copy_tid = -1; /* the skeleton's copy thread, found after the device starts */

/* The skeleton's copy thread: the one task of this process named dma_skel*. */
static int find_copy_thread(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL && tid < 0) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL && strncmp(comm, "dma_skel", 8) == 0)
			tid = atoi(e->d_name);
		fclose(f);
	}
	closedir(d);
	return tid;
}

/* A field of /proc/self/task/<tid>/status ("Cpus_allowed_list:") into buf. */
static bool task_field(int tid, const char *name, char *buf, size_t n)
{
	char path[64], line[256];
	size_t len = strlen(name);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, name, len) == 0) {
			snprintf(buf, n, "%s", line + len + strspn(line + len, " \t"));
			buf[strcspn(buf, "\n")] = '\0';
			found = true;
		}
	fclose(f);
	return found;
}

/* Seconds the copy thread has run on a CPU (schedstat's first field), or < 0. */
static double copy_cpu_s(void)
{
	char path[64];
	unsigned long long ns;
	FILE *f;
	int n;

	if (copy_tid < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", copy_tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fscanf(f, "%llu", &ns);
	fclose(f);
	return n == 1 ? (double)ns * 1e-9 : -1;
}

/* Seconds this thread (the submitter) has run on a CPU. */
static double self_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Keeps c->depth copies in flight for at least tmin seconds; returns jobs/s, or < 0 on error. */
static double pump(struct peer *p, struct pcase *c, double tmin)
{
	uint64_t done = 0, next_check = c->check;
	uint16_t last;
	bool err = false;
	double t0, t;

	/* Start the clock at a completion: a copy already under way must not count as free time. */
	while (c->inflight > 0) {
		uint16_t cpl = rte_dma_completed(p->dev, 0, (uint16_t)c->depth, &last, &err);

		if (err)
			return -1;
		if (cpl != 0) {
			c->inflight -= cpl;
			break;
		}
	}
	t0 = now();
	for (;;) {
		uint32_t n = 0;
		uint16_t cpl;

		while (c->inflight < c->depth) {
			size_t off = (size_t)c->slot * c->size;

			if (rte_dma_copy(p->dev, 0, p->src_iova + off, p->dst_iova + off, (uint32_t)c->size, 0) < 0)
				break;
			c->slot = c->slot + 1 == c->nslots ? 0 : c->slot + 1;
			c->inflight++;
			n++;
		}
		if (n != 0)
			rte_dma_submit(p->dev, 0);
		cpl = rte_dma_completed(p->dev, 0, (uint16_t)c->depth, &last, &err);
		if (err)
			return -1;
		c->inflight -= cpl;
		done += cpl;
		if (done >= next_check) {
			t = now() - t0;
			if (t >= tmin) {
				c->jobs = done;
				c->secs = t;
				return (double)done / t;
			}
			next_check = done + c->check;
		}
	}
}

/* What run_case measured, for the S line. */
struct case_stat {
	int clean, windows;
	double lo, hi, win;
};

/*
 * Large jobs: the best of ROUNDS windows of tmin / ROUNDS (one job may take
 * milliseconds, so short windows would hold a handful of jobs). Small jobs:
 * windows of WIN_S until CLEAN_WANT are clean or the time budget is spent;
 * a window is clean when each thread ran at least CLEAN_FRAC of it on its
 * CPU, and its rate is its jobs over the time both ran (at least the sum of
 * their CPU times less the window, which is the whole window when neither
 * was off its CPU); the figure is the median of the clean windows (see the
 * top of this file).
 */
static double measure(struct peer *p, struct pcase *c, double tmin, int main_core, struct case_stat *st)
{
	static double all[MAX_WINDOWS], clean[MAX_WINDOWS];
	double t_end = now() + BUDGET * tmin, jps = 0;
	int n = 0, nc = 0;

	if (c->size > SMALL_MAX) {
		for (int r = 0; r < ROUNDS; r++) {
			double j = pump(p, c, tmin / ROUNDS);

			if (j < 0)
				return -1;
			jps = j > jps ? j : jps;
		}
		*st = (struct case_stat){ .clean = ROUNDS, .windows = ROUNDS, .lo = jps, .hi = jps, .win = tmin / ROUNDS };
		return jps;
	}
	while (n < MAX_WINDOWS && nc < CLEAN_WANT && now() < t_end) {
		double m0 = self_cpu_s(), k0 = copy_cpu_s(), m, k, j;

		j = pump(p, c, WIN_S);
		if (j < 0)
			return -1;
		m = self_cpu_s() - m0;
		k = copy_cpu_s() - k0;
		all[n++] = j;
		if (k0 >= 0 && m >= CLEAN_FRAC * c->secs && k >= CLEAN_FRAC * c->secs && sched_getcpu() == main_core)
			clean[nc++] = (double)c->jobs / (m + k - c->secs < c->secs ? m + k - c->secs : c->secs);
	}
	if (nc >= CLEAN_MIN) {
		jps = median(clean, nc);
		*st = (struct case_stat){ .clean = nc, .windows = n, .lo = clean[0], .hi = clean[nc - 1], .win = WIN_S };
	} else {
		jps = median(all, n);
		*st = (struct case_stat){ .clean = nc, .windows = n, .lo = all[0], .hi = all[n - 1], .win = WIN_S };
	}
	return jps;
}

static double run_case(struct peer *p, size_t size, uint32_t depth, double tmin, int main_core, struct case_stat *st)
{
	struct pcase c = { .size = size, .depth = depth, .check = size <= 4 * KIB ? 128 : 1 };
	size_t verify = size < 4096 ? size : 4096;
	uint16_t last;
	bool err = false;
	double jps;

	c.nslots = size >= BIG_SIZE ? (uint32_t)(p->region / size) : depth;
	memset(p->dst, 0, verify);
	/* Warm-up: caches, and the copy thread awake and spinning. */
	if (pump(p, &c, tmin / 5 > 0.05 ? tmin / 5 : 0.05) < 0)
		return -1;
	jps = measure(p, &c, tmin, main_core, st);
	if (jps < 0)
		return -1;
	while (c.inflight > 0) {
		c.inflight -= rte_dma_completed(p->dev, 0, (uint16_t)c.depth, &last, &err);
		if (err)
			return -1;
	}
	if (memcmp(p->dst, p->src, verify) != 0)
		return -1;
	return jps;
}

static int unavailable(const char *fmt, const char *detail)
{
	printf("U ");
	printf(fmt, detail);
	printf("\n");
	fflush(stdout);
	return 0; /* the caller reports "unavailable"; not a benchmark failure */
}

int main(int argc, char **argv)
{
	const size_t *sizes = full_sizes;
	const uint32_t *depths = full_depths;
	size_t nsizes = sizeof(full_sizes) / sizeof(full_sizes[0]);
	size_t ndepths = sizeof(full_depths) / sizeof(full_depths[0]);
	int main_core = 0, copy_core = 1;
	double tmin = 0.45;
	size_t only_size = 0, need = 0;
	uint32_t only_depth = 0;
	bool probe = false;
	struct peer p = { .dev = -1, .region = 128 * MIB };
	char lcores[64], vdev[96], mem[32], prefix[64];
	char *eal_argv[16];
	int eal_argc = 0;
	struct rte_dma_info info;
	struct rte_dma_conf conf = { .nb_vchans = 1 };
	struct rte_dma_vchan_conf vconf = { .direction = RTE_DMA_DIR_MEM_TO_MEM, .nb_desc = NB_DESC };
	int rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--probe") == 0) {
			probe = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			sizes = quick_sizes;
			depths = quick_depths;
			nsizes = sizeof(quick_sizes) / sizeof(quick_sizes[0]);
			ndepths = sizeof(quick_depths) / sizeof(quick_depths[0]);
		} else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			tmin = atof(argv[++i]);
		} else if (strcmp(argv[i], "--region") == 0 && i + 1 < argc) {
			p.region = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
			only_size = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc) {
			only_depth = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--main-core") == 0 && i + 1 < argc) {
			main_core = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--copy-core") == 0 && i + 1 < argc) {
			copy_core = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--quick] --time S --region BYTES --main-core N --copy-core N [--size B] [--depth N]\n",
				argv[0]);
			return 2;
		}
	}

	/* Room for both regions plus the EAL's own heap use, in MiB. */
	snprintf(mem, sizeof(mem), "%zu", 2 * p.region / MIB + 256 > 512 ? 2 * p.region / MIB + 256 : 512);
	snprintf(prefix, sizeof(prefix), "--file-prefix=softdpu_bench_%d", (int)getpid());
	if (copy_core != main_core) {
		snprintf(lcores, sizeof(lcores), "%d,%d", main_core, copy_core);
		snprintf(vdev, sizeof(vdev), "--vdev=dma_skeleton,lcore=%d", copy_core);
	} else {
		/* One core: the copy thread is pinned to the submitting CPU (else it floats to a free one). */
		snprintf(lcores, sizeof(lcores), "%d", main_core);
		snprintf(vdev, sizeof(vdev), "--vdev=dma_skeleton,lcore=%d", main_core);
	}
	eal_argv[eal_argc++] = argv[0];
	eal_argv[eal_argc++] = "--no-huge";
	eal_argv[eal_argc++] = "--no-pci";
	eal_argv[eal_argc++] = "--no-shconf"; /* no runtime files: other DPDK processes are not disturbed */
	eal_argv[eal_argc++] = prefix;
	eal_argv[eal_argc++] = "--no-telemetry";
	eal_argv[eal_argc++] = "--iova-mode=va";
	eal_argv[eal_argc++] = "-m";
	eal_argv[eal_argc++] = mem;
	eal_argv[eal_argc++] = "-l";
	eal_argv[eal_argc++] = lcores;
	eal_argv[eal_argc++] = vdev;
	eal_argv[eal_argc++] = "--log-level=error";
	eal_argv[eal_argc] = NULL;

	if (rte_eal_init(eal_argc, eal_argv) < 0)
		return unavailable("rte_eal_init failed: %s", rte_strerror(rte_errno));
	printf("V %s\n", rte_version());

	p.dev = (int16_t)rte_dma_get_dev_id_by_name("dma_skeleton");
	if (p.dev < 0) {
		rc = unavailable("%s", "no dma_skeleton device (is librte_dma_skeleton in the EAL PMD path?)");
		goto out;
	}
	if (rte_dma_info_get(p.dev, &info) != 0 || rte_dma_configure(p.dev, &conf) != 0 ||
	    rte_dma_vchan_setup(p.dev, 0, &vconf) != 0 || rte_dma_start(p.dev) != 0) {
		rc = unavailable("%s", "dma_skeleton configure/vchan_setup/start failed");
		goto out;
	}
	copy_tid = find_copy_thread();
	{
		char cpus[64] = "?";

		if (copy_tid < 0 || !task_field(copy_tid, "Cpus_allowed_list:", cpus, sizeof(cpus)))
			printf("C %d, copy thread not found: windows are not checked for its switches\n", main_core);
		else
			printf("C %d, copy thread on CPU %s%s\n", main_core, cpus,
			       atoi(cpus) == copy_core && strchr(cpus, ',') == NULL && strchr(cpus, '-') == NULL
				       ? ""
				       : " (not the CPU asked for)");
	}
	if (probe) {
		printf("P ok\n");
		goto out;
	}
	/* Only the memory the selected cases touch: startup stays short when run per case. */
	for (size_t si = 0; si < nsizes; si++)
		for (size_t di = 0; di < ndepths; di++) {
			size_t n = sizes[si] >= BIG_SIZE ? p.region : depths[di] * sizes[si];

			if ((only_size == 0 || sizes[si] == only_size) && (only_depth == 0 || depths[di] == only_depth) &&
			    n > need)
				need = n;
		}
	p.src = rte_malloc("bench_src", need, 4096);
	p.dst = rte_malloc("bench_dst", need, 4096);
	if (p.src == NULL || p.dst == NULL) {
		rc = unavailable("%s", "rte_malloc of the source/destination regions failed");
		goto out;
	}
	p.src_iova = rte_malloc_virt2iova(p.src);
	p.dst_iova = rte_malloc_virt2iova(p.dst);
	if (p.src_iova == RTE_BAD_IOVA || p.dst_iova == RTE_BAD_IOVA) {
		rc = unavailable("%s", "no IOVA for the regions");
		goto out;
	}
	memset(p.dst, 0, need);
	for (size_t i = 0; i < need; i += 64)
		p.src[i] = (uint8_t)(i * 2654435761u >> 12) | 1;

	for (size_t si = 0; si < nsizes; si++) {
		for (size_t di = 0; di < ndepths; di++) {
			struct case_stat st;
			double jps;

			if ((only_size != 0 && sizes[si] != only_size) || (only_depth != 0 && depths[di] != only_depth))
				continue;
			jps = run_case(&p, sizes[si], depths[di], tmin, main_core, &st);

			if (jps < 0) {
				fprintf(stderr, "bench_dma_dpdk: case %zu B depth %u failed\n", sizes[si], depths[di]);
				rc = 1;
				goto out;
			}
			printf("R %zu %u %.1f\n", sizes[si], depths[di], jps);
			printf("S %zu %u %d %d %.1f %.1f %.3f\n", sizes[si], depths[di], st.clean, st.windows, st.lo, st.hi,
			       st.win);
		}
	}
out:
	if (p.dev >= 0) {
		rte_dma_stop(p.dev);
		rte_dma_close(p.dev);
	}
	rte_free(p.src);
	rte_free(p.dst);
	rte_eal_cleanup();
	return rc;
}
