/*
 * bench_dma — DOCA DMA memcpy jobs against the physical limit (a plain memcpy
 * loop over the same buffers) and against a peer, DPDK's software DMA device
 * (dma_skeleton), measured in the same run.
 *
 * One thread, polling. For every (size, depth) case, `depth` jobs are kept in
 * flight; jobs and their buffers are prepared before the timed loop, so the
 * loop measures doca_workq_submit + doca_workq_progress_retrieve (plus the
 * doca_buf_reset_data_len that lets a destination buffer be reused).
 *
 * Memory: sizes below 1 MiB use depth slots of `size` bytes (the working set a
 * real queue of that depth touches); sizes of 1 MiB and more rotate across a
 * region of at least 4x the last-level cache (at most 512 MiB unless --region
 * says otherwise), so they stream from DRAM. The memcpy reference walks
 * exactly the same slots in the same order, and the DPDK peer (bench_dma_dpdk,
 * a separate executable run as a child process right before each DOCA case,
 * alone) does too.
 *
 * From 1 MiB on a third loop runs in the same alternation: the streaming copy
 * limit, a STREAM-style copy over the same slots with non-temporal stores
 * (AVX2 or SSE2, chosen at run time). No copy on one core moves DRAM-resident
 * data faster than that, whatever it does with the cache.
 *
 * Usage: bench_dma [--quick] [--time SECONDS] [--dpdk PATH | --no-peer] [--size BYTES] [--depth N]
 * [--peer-one-core] [--region MIB] (--size/--depth run one case of the table; --no-peer skips DPDK;
 * --peer-one-core pins the peer's copy thread to the submitting CPU; --doca-only also skips the
 * memcpy and streaming references, so that a profile shows the DOCA path alone)
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86_STREAM 1
#endif

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define BIG_SIZE MIB /* sizes from here on rotate across the big region */
#define MAX_DEPTH 256u
#define ROUNDS 5 /* alternating timed windows per case */
#define REGION_CAP (512 * MIB) /* default cap of the big region: a core streams from DRAM long before */

static const size_t full_sizes[] = { 64, 256, KIB, 4 * KIB, 64 * KIB, MIB, 4 * MIB, 64 * MIB };
static const uint32_t full_depths[] = { 1, 8, 32, 256 };
static const size_t quick_sizes[] = { 64, 4 * KIB, MIB };
static const uint32_t quick_depths[] = { 1, 32 };

#define NSIZES (sizeof(full_sizes) / sizeof(full_sizes[0]))
#define NDEPTHS (sizeof(full_depths) / sizeof(full_depths[0]))

struct opts {
	bool quick;
	bool no_peer;
	bool doca_only; /* no memcpy reference, no peer: for profilers */
	bool peer_one_core; /* the peer's copy thread shares the submitting CPU */
	size_t only_size;   /* 0: all */
	size_t region_mib;  /* 0: from the LLC size */
	uint32_t only_depth; /* 0: all */
	double tmin; /* seconds per timed case */
	char dpdk_path[PATH_MAX];
};

struct result {
	double jobs_per_s;
	bool valid;
	/* The peer's windows (its S line): clean ones, all, the clean ones' range, window length. */
	int clean, windows;
	double lo, hi, win;
};

#define PEER_CLEAN_MIN 7 /* bench_dma_dpdk's CLEAN_MIN: fewer clean windows, the figure is marked '~' */

struct dpdk_results {
	bool available;
	char reason[256];
	char version[64];
	char cores[64];
	struct result r[NSIZES][NDEPTHS];
};

struct jslot {
	struct doca_dma_job_memcpy job;
	struct doca_buf *src, *dst;
	bool busy;
};

struct bench {
	struct doca_dev *dev;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq;
	uint8_t *src, *dst;
	size_t region;
	struct jslot *jobs;
	uint32_t max_jobs;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- machine ---- */

static size_t parse_cache_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return (size_t)v;
}

static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	if (fgets(buf, (int)n, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Size of the highest-level data or unified cache of CPU 0; level in *level. */
static size_t llc_size(int *level)
{
	size_t best = 0;

	*level = 0;
	for (int i = 0; i < 16; i++) {
		char path[128], type[32], lvl[16], size[32];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if (read_line(path, type, sizeof(type)) != 0)
			break;
		if (strcmp(type, "Instruction") == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (read_line(path, lvl, sizeof(lvl)) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (read_line(path, size, sizeof(size)) != 0)
			continue;
		if (atoi(lvl) >= *level) {
			*level = atoi(lvl);
			best = parse_cache_size(size);
		}
	}
	if (best == 0) {
		long v = sysconf(_SC_LEVEL3_CACHE_SIZE);

		*level = 3;
		best = v > 0 ? (size_t)v : 32 * MIB;
	}
	return best;
}

static void cpu_model(char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(out, n, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "model name", 10) == 0) {
			char *p = strchr(line, ':');

			if (p != NULL) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = '\0';
				snprintf(out, n, "%s", p);
			}
			break;
		}
	}
	fclose(f);
}

/* ---- the streaming copy limit ---- */

/*
 * Copies with non-temporal stores: no read-for-ownership of the destination
 * and no write-back of evicted lines, so a copy costs one read and one write
 * of DRAM per line. The destination must be 64-byte aligned (every slot is);
 * the remainder below 128 bytes goes through memcpy.
 */
#ifdef HAVE_X86_STREAM
__attribute__((target("avx2"))) static void stream_copy_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 128 <= n; i += 128) {
		__m256i v0 = _mm256_loadu_si256((const __m256i *)(s + i));
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
		__m256i v2 = _mm256_loadu_si256((const __m256i *)(s + i + 64));
		__m256i v3 = _mm256_loadu_si256((const __m256i *)(s + i + 96));

		_mm256_stream_si256((__m256i *)(d + i), v0);
		_mm256_stream_si256((__m256i *)(d + i + 32), v1);
		_mm256_stream_si256((__m256i *)(d + i + 64), v2);
		_mm256_stream_si256((__m256i *)(d + i + 96), v3);
	}
	_mm_sfence();
	memcpy(d + i, s + i, n - i);
}

static void stream_copy_sse2(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 128 <= n; i += 128)
		for (size_t k = 0; k < 128; k += 16)
			_mm_stream_si128((__m128i *)(d + i + k), _mm_loadu_si128((const __m128i *)(s + i + k)));
	_mm_sfence();
	memcpy(d + i, s + i, n - i);
}
#endif

typedef void (*copy_fn)(uint8_t *d, const uint8_t *s, size_t n);

static void plain_copy(uint8_t *d, const uint8_t *s, size_t n)
{
	memcpy(d, s, n);
}

static copy_fn stream_copy = plain_copy;
static const char *stream_kind = "memcpy (no streaming stores on this architecture)";

static void stream_select(void)
{
#ifdef HAVE_X86_STREAM
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2")) {
		stream_copy = stream_copy_avx2;
		stream_kind = "AVX2 _mm256_stream_si256";
	} else {
		stream_copy = stream_copy_sse2;
		stream_kind = "SSE2 _mm_stream_si128";
	}
#endif
}

/* ---- layout shared with the memcpy loop and the DPDK peer ---- */

static uint32_t num_slots(size_t size, uint32_t depth, size_t region)
{
	return size >= BIG_SIZE ? (uint32_t)(region / size) : depth;
}

static size_t size_index(size_t size)
{
	for (size_t i = 0; i < NSIZES; i++)
		if (full_sizes[i] == size)
			return i;
	return 0;
}

static size_t depth_index(uint32_t depth)
{
	for (size_t i = 0; i < NDEPTHS; i++)
		if (full_depths[i] == depth)
			return i;
	return 0;
}

/* ---- DPDK peer ---- */

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/*
 * Runs the peer for one case (size, depth), or with size 0 only probes that it
 * can run (EAL, device, memory) and learns its version and cores. The peer runs
 * right before the DOCA case, alone, so both see the machine in the same state.
 */
static void run_dpdk_peer(const struct opts *o, size_t region, size_t only_size, uint32_t only_depth,
			  struct dpdk_results *res)
{
	char cmd[PATH_MAX + 256], line[512];
	int main_cpu = sched_getcpu(), copy_cpu;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	bool got = false;
	FILE *p;
	int st;

	if (main_cpu < 0)
		main_cpu = 0;
	copy_cpu = ncpu > 1 && !o->peer_one_core ? (int)((main_cpu + 1) % ncpu) : main_cpu;
	if (only_size == 0)
		snprintf(cmd, sizeof(cmd), "'%s' --probe --region %zu --main-core %d --copy-core %d", o->dpdk_path,
			 region, main_cpu, copy_cpu);
	else
		snprintf(cmd, sizeof(cmd), "'%s' --time %.3f --region %zu --main-core %d --copy-core %d --size %zu --depth %u",
			 o->dpdk_path, o->tmin, region, main_cpu, copy_cpu, only_size, only_depth);
	fflush(stdout);
	p = popen(cmd, "r");
	if (p == NULL) {
		res->available = false;
		snprintf(res->reason, sizeof(res->reason), "cannot start bench_dma_dpdk: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), p) != NULL) {
		size_t size;
		uint32_t depth;
		double jps;

		line[strcspn(line, "\n")] = '\0';
		int clean, windows;
		double lo, hi, win;

		if (sscanf(line, "R %zu %u %lf", &size, &depth, &jps) == 3) {
			res->r[size_index(size)][depth_index(depth)] = (struct result){ .jobs_per_s = jps, .valid = true };
			got = true;
		} else if (sscanf(line, "S %zu %u %d %d %lf %lf %lf", &size, &depth, &clean, &windows, &lo, &hi, &win) == 7) {
			struct result *r = &res->r[size_index(size)][depth_index(depth)];

			r->clean = clean;
			r->windows = windows;
			r->lo = lo;
			r->hi = hi;
			r->win = win;
		} else if (strcmp(line, "P ok") == 0) {
			got = true;
		} else if (strncmp(line, "U ", 2) == 0) {
			copy_str(res->reason, sizeof(res->reason), line + 2);
		} else if (strncmp(line, "V ", 2) == 0) {
			copy_str(res->version, sizeof(res->version), line + 2);
		} else if (strncmp(line, "C ", 2) == 0) {
			copy_str(res->cores, sizeof(res->cores), line + 2);
		}
	}
	st = pclose(p);
	if (!got) {
		res->available = false;
		if (res->reason[0] == '\0')
			snprintf(res->reason, sizeof(res->reason), "bench_dma_dpdk failed (status %d)", st);
	} else if (only_size == 0) {
		res->available = true;
	}
}

/* ---- DOCA ---- */

static struct doca_mmap *make_mmap(struct doca_dev *dev, void *mem, size_t len)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_dev_add(m, dev) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static int doca_setup(struct bench *b)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t r;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0) {
		fprintf(stderr, "bench_dma: no DOCA device\n");
		return -1;
	}
	r = doca_dev_open(list[0], &b->dev);
	doca_devinfo_list_destroy(list);
	if (r != DOCA_SUCCESS)
		return -1;
	b->src_mmap = make_mmap(b->dev, b->src, b->region);
	b->dst_mmap = make_mmap(b->dev, b->dst, b->region);
	if (b->src_mmap == NULL || b->dst_mmap == NULL)
		return -1;
	r = doca_buf_inventory_create(NULL, 2 * (size_t)b->max_jobs, 0, &b->inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(b->inv);
	if (r == DOCA_SUCCESS)
		r = doca_dma_create(&b->dma);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_dev_add(doca_dma_as_ctx(b->dma), b->dev);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(doca_dma_as_ctx(b->dma));
	if (r == DOCA_SUCCESS)
		r = doca_workq_create(MAX_DEPTH, &b->wq);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_workq_add(doca_dma_as_ctx(b->dma), b->wq);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "bench_dma: DOCA setup failed: %s\n", doca_get_error_string(r));
		return -1;
	}
	return 0;
}

static void doca_teardown(struct bench *b)
{
	if (b->wq != NULL) {
		doca_ctx_workq_rm(doca_dma_as_ctx(b->dma), b->wq);
		doca_workq_destroy(b->wq);
	}
	if (b->dma != NULL) {
		doca_ctx_stop(doca_dma_as_ctx(b->dma));
		doca_ctx_dev_rm(doca_dma_as_ctx(b->dma), b->dev);
		doca_dma_destroy(b->dma);
	}
	if (b->inv != NULL) {
		doca_buf_inventory_stop(b->inv);
		doca_buf_inventory_destroy(b->inv);
	}
	if (b->src_mmap != NULL)
		doca_mmap_destroy(b->src_mmap);
	if (b->dst_mmap != NULL)
		doca_mmap_destroy(b->dst_mmap);
	if (b->dev != NULL)
		doca_dev_close(b->dev);
}

struct doca_case {
	size_t size;
	uint32_t depth, nslots, njobs;
	uint32_t next;	   /* next job to submit, cycling over njobs */
	uint32_t inflight;
	uint32_t reap;	   /* completions reaped per pass */
	uint32_t mslot, sslot; /* next slot of the memcpy and streaming loops: all walk the region alike */
	uint64_t check;	   /* completions between clock reads */
};

/* Keeps c->depth jobs in flight for at least tmin seconds; returns completed jobs/s, or < 0 on error. */
static double doca_pump(struct bench *b, struct doca_case *c, double tmin)
{
	uint64_t done = 0, next_check = c->check;
	double t0 = now(), t;

	for (;;) {
		struct doca_event ev;
		doca_error_t r;

		while (c->inflight < c->depth) {
			struct jslot *j = &b->jobs[c->next];

			if (j->busy)
				break;
			r = doca_workq_submit(b->wq, &j->job.base);
			if (r == DOCA_ERROR_NO_MEMORY)
				break;
			if (r != DOCA_SUCCESS) {
				fprintf(stderr, "bench_dma: submit failed: %s\n", doca_get_error_string(r));
				return -1;
			}
			j->busy = true;
			c->inflight++;
			c->next = c->next + 1 == c->njobs ? 0 : c->next + 1;
		}
		for (uint32_t n = 0; n < c->reap; n++) {
			struct jslot *j;

			r = doca_workq_progress_retrieve(b->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
			if (r == DOCA_ERROR_AGAIN)
				break;
			if (r != DOCA_SUCCESS) {
				fprintf(stderr, "bench_dma: job failed: %s\n",
					doca_get_error_string((doca_error_t)ev.result.u64));
				return -1;
			}
			j = &b->jobs[ev.user_data.u64];
			j->busy = false;
			doca_buf_reset_data_len(j->dst);
			c->inflight--;
			done++;
		}
		if (done >= next_check) {
			t = now() - t0;
			if (t >= tmin)
				return (double)done / t;
			next_check = done + c->check;
		}
	}
}

static int doca_drain(struct bench *b, struct doca_case *c)
{
	struct doca_event ev;

	while (c->inflight > 0) {
		doca_error_t r = doca_workq_progress_retrieve(b->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);

		if (r == DOCA_ERROR_AGAIN)
			continue;
		if (r != DOCA_SUCCESS)
			return -1;
		b->jobs[ev.user_data.u64].busy = false;
		doca_buf_reset_data_len(b->jobs[ev.user_data.u64].dst);
		c->inflight--;
	}
	return 0;
}

static uint64_t check_interval(size_t size)
{
	return size <= 4 * KIB ? 128 : 1;
}

/*
 * A reference copy over the same slots in the same order: glibc memcpy, or
 * the streaming copy. *slot carries on where the last window stopped, as the
 * DOCA jobs do, so that every loop walks the whole region.
 */
static double copy_pump(struct bench *b, copy_fn fn, size_t size, uint32_t nslots, uint32_t *slot, double tmin)
{
	uint64_t done = 0, check = check_interval(size), next_check = check;
	double t0 = now(), t;

	for (;;) {
		size_t off = (size_t)*slot * size;

		fn(b->dst + off, b->src + off, size);
		__asm__ volatile("" ::: "memory");
		*slot = *slot + 1 == nslots ? 0 : *slot + 1;
		if (++done >= next_check) {
			t = now() - t0;
			if (t >= tmin)
				return (double)done / t;
			next_check = done + check;
		}
	}
}

struct case_rates {
	double doca, memcpy, stream; /* jobs (copies) per second; stream 0 below BIG_SIZE */
};

/*
 * Before the verifying job: slot 0's source gets a byte pattern with no
 * run of zeros (the timing pattern marks one byte a page), and its
 * destination every byte's complement, so a byte the job skips or moves
 * cannot match by chance.
 */
static void verify_prepare(struct bench *b, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		uint8_t v = (uint8_t)((i * 2654435761u) >> 13) ^ (uint8_t)(i >> 8);

		b->src[i] = v;
		b->dst[i] = (uint8_t)~v;
	}
}

/*
 * One (size, depth) case: DOCA, memcpy and (from BIG_SIZE on) the streaming
 * copy alternate in ROUNDS windows of tmin / ROUNDS seconds each, after a
 * warm-up of all; each reports its best window, so a disturbance of the
 * shared machine hits all sides alike.
 */
static int case_run(struct bench *b, size_t size, uint32_t depth, double tmin, bool doca_only,
		    struct case_rates *out)
{
	struct doca_case c = { .size = size, .depth = depth };
	uint32_t k;
	int rc = -1;

	c.nslots = num_slots(size, depth, b->region);
	c.njobs = c.nslots > depth ? c.nslots : depth;
	c.reap = size >= 64 * KIB ? 1 : depth;
	c.check = check_interval(size);
	bool streaming = !doca_only && size >= BIG_SIZE;

	*out = (struct case_rates){ 0 };
	if (c.njobs > b->max_jobs)
		return -1;
	for (k = 0; k < c.njobs; k++) {
		struct jslot *j = &b->jobs[k];
		size_t off = (size_t)(k % c.nslots) * size;

		if (doca_buf_inventory_buf_by_data(b->inv, b->src_mmap, b->src + off, size, &j->src) != DOCA_SUCCESS ||
		    doca_buf_inventory_buf_by_addr(b->inv, b->dst_mmap, b->dst + off, size, &j->dst) != DOCA_SUCCESS) {
			fprintf(stderr, "bench_dma: buffer allocation failed\n");
			goto out;
		}
		j->job = (struct doca_dma_job_memcpy){
			.base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(b->dma), .user_data.u64 = k },
			.dst_buff = j->dst,
			.src_buff = j->src,
		};
		j->busy = false;
	}
	if (doca_pump(b, &c, tmin / 5) < 0) /* warm-up */
		goto out;
	if (!doca_only)
		copy_pump(b, plain_copy, size, c.nslots, &c.mslot, tmin / 5);
	if (streaming)
		copy_pump(b, stream_copy, size, c.nslots, &c.sslot, tmin / 5);
	for (int r = 0; r < ROUNDS; r++) {
		double dj = doca_pump(b, &c, tmin / ROUNDS), mj, sj = 0;

		if (dj < 0)
			goto out;
		mj = doca_only ? 1 : copy_pump(b, plain_copy, size, c.nslots, &c.mslot, tmin / ROUNDS);
		if (streaming)
			sj = copy_pump(b, stream_copy, size, c.nslots, &c.sslot, tmin / ROUNDS);
		out->doca = dj > out->doca ? dj : out->doca;
		out->memcpy = mj > out->memcpy ? mj : out->memcpy;
		out->stream = sj > out->stream ? sj : out->stream;
	}
	/* Verify: one more job into slot 0, every byte of it (verify_prepare). */
	if (doca_drain(b, &c) != 0)
		goto out;
	verify_prepare(b, size);
	c.next = 0;
	c.depth = 1;
	if (doca_workq_submit(b->wq, &b->jobs[0].job.base) != DOCA_SUCCESS)
		goto out;
	b->jobs[0].busy = true;
	c.inflight = 1;
	if (doca_drain(b, &c) != 0 || memcmp(b->dst, b->src, size) != 0) {
		fprintf(stderr, "bench_dma: DOCA copy of %zu bytes not verified\n", size);
		goto out;
	}
	rc = 0;
out:
	while (k-- > 0) {
		doca_buf_refcount_rm(b->jobs[k].src, NULL);
		doca_buf_refcount_rm(b->jobs[k].dst, NULL);
	}
	return rc;
}

/* ---- main ---- */

static void fmt_size(size_t s, char *out, size_t n)
{
	if (s >= MIB)
		snprintf(out, n, "%zu MiB", s / MIB);
	else if (s >= KIB)
		snprintf(out, n, "%zu KiB", s / KIB);
	else
		snprintf(out, n, "%zu B", s);
}

static void fmt_rate(double r, char *out, size_t n)
{
	if (r >= 1e6)
		snprintf(out, n, "%.2f M", r / 1e6);
	else if (r >= 1e3)
		snprintf(out, n, "%.2f k", r / 1e3);
	else
		snprintf(out, n, "%.1f", r);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	ssize_t len;

	memset(o, 0, sizeof(*o));
	o->tmin = 0.45;
	o->dpdk_path[0] = '\0';
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			o->quick = true;
		} else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			o->tmin = atof(argv[++i]);
		} else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
			o->only_size = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc) {
			o->only_depth = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--no-peer") == 0) {
			o->no_peer = true;
		} else if (strcmp(argv[i], "--peer-one-core") == 0) {
			o->peer_one_core = true;
		} else if (strcmp(argv[i], "--doca-only") == 0) {
			o->no_peer = o->doca_only = true;
		} else if (strcmp(argv[i], "--region") == 0 && i + 1 < argc) {
			o->region_mib = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--dpdk") == 0 && i + 1 < argc) {
			snprintf(o->dpdk_path, sizeof(o->dpdk_path), "%s", argv[++i]);
		} else {
			fprintf(stderr,
				"usage: %s [--quick] [--time SECONDS] [--dpdk PATH | --no-peer] [--size BYTES] "
				"[--depth N] [--doca-only] [--peer-one-core] [--region MIB]\n",
				argv[0]);
			exit(2);
		}
	}
	if (o->quick && o->tmin > 0.02)
		o->tmin = 0.02;
	if (o->dpdk_path[0] == '\0') {
		char self[PATH_MAX - 32];
		char *slash;

		len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (len > 0) {
			self[len] = '\0';
			slash = strrchr(self, '/');
			if (slash != NULL)
				*slash = '\0';
			snprintf(o->dpdk_path, sizeof(o->dpdk_path), "%s/bench_dma_dpdk", self);
		}
	}
}

/* Jobs of 1 MiB and more in GB/s, against the streaming limit and the peer of the same run. */
static void print_large(const size_t *sizes, size_t nsizes, const uint32_t *depths, size_t ndepths,
			struct case_rates rates[NSIZES][NDEPTHS], const struct dpdk_results *dpdk)
{
	bool header = false;

	for (size_t si = 0; si < nsizes; si++) {
		for (size_t di = 0; di < ndepths; di++) {
			size_t size = sizes[si];
			const struct case_rates *cr = &rates[size_index(size)][depth_index(depths[di])];
			const struct result *pr = &dpdk->r[size_index(size)][depth_index(depths[di])];
			double gb = (double)size / 1e9;
			char sz[32], peer[32] = "n/a", pratio[32] = "n/a";

			if (size < BIG_SIZE || cr->stream <= 0)
				continue;
			if (!header) {
				printf("\njobs >= 1 MiB in GB/s: DOCA against the streaming copy limit and the DPDK peer\n");
				printf("%-7s %5s %9s %11s %10s %9s %10s %9s\n", "size", "depth", "DOCA GB/s",
				       "memcpy GB/s", "limit GB/s", "DPDK GB/s", "DOCA/limit", "DOCA/DPDK");
				header = true;
			}
			if (pr->valid) {
				snprintf(peer, sizeof(peer), "%.2f", pr->jobs_per_s * gb);
				snprintf(pratio, sizeof(pratio), "%.2fx", cr->doca / pr->jobs_per_s);
			}
			fmt_size(size, sz, sizeof(sz));
			printf("%-7s %5u %9.2f %11.2f %10.2f %9s %9.1f%% %9s\n", sz, depths[di], cr->doca * gb,
			       cr->memcpy * gb, cr->stream * gb, peer, 100.0 * cr->doca / cr->stream, pratio);
		}
	}
}

static void *map_region(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	const size_t *sizes = full_sizes;
	const uint32_t *depths = full_depths;
	size_t nsizes = NSIZES, ndepths = NDEPTHS, llc, region;
	struct dpdk_results *dpdk = calloc(1, sizeof(*dpdk));
	struct case_rates rates[NSIZES][NDEPTHS] = { { { 0 } } };
	struct bench b = { 0 };
	bool capped = false;
	struct opts o;
	char model[256];
	int level, rc = 1;

	parse_opts(argc, argv, &o);
	if (o.quick) {
		sizes = quick_sizes;
		depths = quick_depths;
		nsizes = sizeof(quick_sizes) / sizeof(quick_sizes[0]);
		ndepths = sizeof(quick_depths) / sizeof(quick_depths[0]);
	}
	llc = llc_size(&level);
	/*
	 * >= 4x LLC, a multiple of 64 MiB, and room for two of the largest jobs;
	 * capped, because some hypervisors report the L3 of the whole package
	 * (hundreds of MiB) while a core caches in its own chiplet's share only.
	 */
	region = (4 * llc + 64 * MIB - 1) / (64 * MIB) * (64 * MIB);
	if (region > REGION_CAP) {
		region = REGION_CAP;
		capped = true;
	}
	if (o.region_mib != 0) {
		region = o.region_mib * MIB;
		capped = false;
	}
	if (region < 2 * full_sizes[NSIZES - 1])
		region = 2 * full_sizes[NSIZES - 1];
	if (o.quick) {
		region = 16 * MIB; /* smoke run: small sizes only, no DRAM streaming */
		capped = false;
	}
	cpu_model(model, sizeof(model));

	printf("== bench_dma: DOCA DMA memcpy jobs vs memcpy vs DPDK dma_skeleton ==\n");
	printf("CPU: %s, %ld online CPUs, running on CPU %d\n", model, sysconf(_SC_NPROCESSORS_ONLN), sched_getcpu());
	printf("LLC: L%d %zu MiB; sizes >= 1 MiB rotate over a %zu MiB source and a %zu MiB destination region "
	       "(%.1fx LLC each%s)\n",
	       level, llc / MIB, region / MIB, region / MIB, (double)region / (double)llc,
	       capped ? ", capped; --region MIB sets it" : "");
	stream_select();
	printf("streaming copy limit (sizes >= 1 MiB): %s, same slots, same order\n", stream_kind);
	printf("each case: warm-up %.3f s, then %d windows of >= %.3f s%s\n", o.tmin / 5, ROUNDS, o.tmin / ROUNDS,
	       o.quick ? " (--quick: smoke run, numbers not meaningful)" : "");

	if (dpdk == NULL)
		goto out;
	if (o.no_peer)
		snprintf(dpdk->reason, sizeof(dpdk->reason), "--no-peer given");
	else if (access(o.dpdk_path, X_OK) != 0)
		snprintf(dpdk->reason, sizeof(dpdk->reason), "bench_dma_dpdk not built: libdpdk not found at configure time");
	else
		run_dpdk_peer(&o, region, 0, 0, dpdk);
	if (dpdk->available)
		printf("DPDK peer: %s, dma_skeleton, submitter on CPU %s\n", dpdk->version[0] ? dpdk->version : "DPDK",
		       dpdk->cores[0] ? dpdk->cores : "?");
	else
		printf("DPDK: unavailable (%s)\n", dpdk->reason[0] ? dpdk->reason : "unknown");

	b.region = region;
	b.max_jobs = MAX_DEPTH > region / BIG_SIZE ? MAX_DEPTH : (uint32_t)(region / BIG_SIZE);
	b.jobs = calloc(b.max_jobs, sizeof(*b.jobs));
	b.src = map_region(region);
	b.dst = map_region(region);
	if (b.jobs == NULL || b.src == NULL || b.dst == NULL || dpdk == NULL) {
		fprintf(stderr, "bench_dma: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < region; i += 4096)
		b.src[i] = (uint8_t)(i * 2654435761u >> 12) | 1;
	/*
	 * One pass over both regions before any timing: in a virtual machine the
	 * first accesses to freshly populated memory ran at a fraction of the
	 * later rate, which hit whichever case came first.
	 */
	memcpy(b.dst, b.src, region);
	if (doca_setup(&b) != 0)
		goto out;

	printf("\n%-7s %5s %11s %9s %11s %11s %10s %10s %11s %9s\n", "size", "depth", "DOCA jobs/s", "DOCA GB/s",
	       "memcpy GB/s", "DOCA/memcpy", "limit GB/s", "DOCA/limit", "DPDK jobs/s", "DOCA/DPDK");
	for (size_t si = 0; si < nsizes; si++) {
		for (size_t di = 0; di < ndepths; di++) {
			size_t size = sizes[si];
			uint32_t depth = depths[di];
			const struct result *pr = &dpdk->r[size_index(size)][depth_index(depth)];
			struct case_rates *cr = &rates[size_index(size)][depth_index(depth)];
			char sz[32], dj_s[32], pj[32], ratio[32], lim[32], lratio[32];
			double dj, mj;

			if ((o.only_size != 0 && size != o.only_size) || (o.only_depth != 0 && depth != o.only_depth))
				continue;
			if (dpdk->available)
				run_dpdk_peer(&o, region, size, depth, dpdk);
			if (case_run(&b, size, depth, o.tmin, o.doca_only, cr) != 0) {
				fprintf(stderr, "bench_dma: DOCA case %zu B depth %u failed\n", size, depth);
				goto out;
			}
			dj = cr->doca;
			mj = cr->memcpy;
			snprintf(lim, sizeof(lim), "-");
			snprintf(lratio, sizeof(lratio), "-");
			if (cr->stream > 0) {
				snprintf(lim, sizeof(lim), "%.2f", cr->stream * (double)size / 1e9);
				snprintf(lratio, sizeof(lratio), "%.1f%%", 100.0 * dj / cr->stream);
			}
			fmt_size(size, sz, sizeof(sz));
			fmt_rate(dj, dj_s, sizeof(dj_s));
			if (pr->valid) {
				fmt_rate(pr->jobs_per_s, pj, sizeof(pj));
				if (pr->windows > 0 && pr->clean < PEER_CLEAN_MIN) {
					memmove(pj + 1, pj, strnlen(pj, sizeof(pj) - 2) + 1);
					pj[0] = '~';
					pj[sizeof(pj) - 1] = '\0';
				}
				snprintf(ratio, sizeof(ratio), "%.2fx", dj / pr->jobs_per_s);
			} else {
				snprintf(pj, sizeof(pj), "n/a");
				snprintf(ratio, sizeof(ratio), "n/a");
			}
			if (o.doca_only)
				printf("%-7s %5u %11s %9.2f %11s %11s %10s %10s %11s %9s\n", sz, depth, dj_s,
				       dj * (double)size / 1e9, "-", "-", lim, lratio, pj, ratio);
			else
				printf("%-7s %5u %11s %9.2f %11.2f %10.1f%% %10s %10s %11s %9s\n", sz, depth, dj_s,
				       dj * (double)size / 1e9, mj * (double)size / 1e9, 100.0 * dj / mj, lim, lratio, pj,
				       ratio);
			fflush(stdout);
		}
	}
	if (!o.doca_only)
		print_large(sizes, nsizes, depths, ndepths, rates, dpdk);
	printf("\nDOCA: one core, jobs run as WQEs by the engine at the doorbell of doca_workq_submit, CQEs read by doca_workq_progress_retrieve. memcpy: glibc memcpy, same "
	       "buffers, same order. limit: the streaming copy (non-temporal stores), same buffers, same order.\n");
	if (dpdk->available)
		printf("DPDK: rte_dma_copy per job, one rte_dma_submit per refill, rte_dma_completed; submitter on CPU "
		       "%s (%s).\n",
		       dpdk->cores[0] ? dpdk->cores : "?", o.peer_one_core ? "one core" : "two cores");
	printf("Each rate is the best of %d alternating windows (DOCA, memcpy, limit) of %.3f s; the DPDK peer ran "
	       "each case right before, alone: jobs up to 4 KiB in short windows, the median of those in which both of "
	       "its threads kept their CPUs (docs/PERFORMANCE.md), larger ones as DOCA's.\n",
	       ROUNDS, o.tmin / ROUNDS);
	if (dpdk->available)
		for (size_t si = 0; si < nsizes; si++)
			for (size_t di = 0; di < ndepths; di++) {
				const struct result *pr = &dpdk->r[size_index(sizes[si])][depth_index(depths[di])];
				char sz[32], lo[32], hi[32];

				if (!pr->valid || pr->windows == 0 || pr->win >= o.tmin / ROUNDS)
					continue;
				fmt_size(sizes[si], sz, sizeof(sz));
				fmt_rate(pr->lo, lo, sizeof(lo));
				fmt_rate(pr->hi, hi, sizeof(hi));
				printf("DPDK peer %s depth %u: %d clean of %d windows of %.0f ms%s, range %s-%s jobs/s\n", sz,
				       depths[di], pr->clean, pr->windows, pr->win * 1e3,
				       pr->clean < PEER_CLEAN_MIN ? " (too few: '~' is the median of all, the machine was busy)"
								  : "",
				       lo, hi);
			}
	rc = 0;
out:
	doca_teardown(&b);
	if (b.src != NULL)
		munmap(b.src, region);
	if (b.dst != NULL)
		munmap(b.dst, region);
	free(b.jobs);
	free(dpdk);
	return rc;
}
