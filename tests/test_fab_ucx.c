/*
 * test_fab_ucx — the UCX transport of the fabric (src/fabric/fab_ucx.c).
 *
 * The test re-executes itself (/proc/self/exe exporter, tests/th_proc.h) to
 * get an exporter process; the descriptors come back as text lines and this
 * process imports them. Both processes run UCX over TCP on loopback
 * (UCX_TLS=tcp, UCX_NET_DEVICES=lo). Cases: byte-exact reads and writes from
 * 1 B to 64 MiB, bounds and rights refusals checked by the exporter (forged
 * descriptors), forged capability keys, revocation, malformed requests sent
 * with a UCX endpoint of the test's own, concurrent importers, unexport
 * racing with transfers in one process, an exporter killed with SIGKILL, and
 * a UCX library or function missing at run time.
 *
 * An internal test: it includes fab_xport.h, fab_desc.h and fab_ucx.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "fab_desc.h"
#include "fab_ucx.h"
#include "fab_ucx_api.h"
#include "fab_xport.h"
#include "harness.h"
#include "hw_mem.h"
#include "th_proc.h"

#define MiB (1024u * 1024u)
#define BIG_LEN (64u * MiB + 8192u)
#define RO_LEN (64u * 1024u)
#define SMALL_LEN 4096u
#define NEXP 4

/* Exports of an exporter process, by index. */
enum { EX_BIG, EX_RO, EX_REVOKE, EX_RDMA_RD };

static const struct fab_xport_ops *X = &fab_ucx_ops;

/* ---- common ------------------------------------------------------------------------------------------------ */

static uint8_t pat(uint64_t i, uint64_t seed)
{
	return (uint8_t)(i * 131u + (i >> 9) + seed * 7u);
}

static void fill(uint8_t *p, uint64_t off, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(off + i, seed);
}

static size_t first_mismatch(const uint8_t *p, uint64_t off, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(off + i, seed))
			return i;
	return n;
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* "DESC <hex>": one encoded descriptor per line. */
static int print_desc(const struct fab_export_desc *d)
{
	static char hex[2 * FAB_DESC_MAX + 1];
	uint8_t out[FAB_DESC_MAX];

	th_hex_encode(out, fab_desc_encode(d, out), hex);
	return printf("DESC %s\n", hex) < 0 || fflush(stdout) != 0 ? -1 : 0;
}

static int parse_desc(const char *line, struct fab_export_desc *d)
{
	uint8_t buf[FAB_DESC_MAX];
	enum fab_desc_status st;
	long n;

	if (line == NULL || strncmp(line, "DESC ", 5) != 0 || (n = th_hex_decode(line + 5, buf, sizeof(buf))) < 0)
		return -1;
	st = fab_desc_decode(buf, (size_t)n, d);
	if (st != FAB_DESC_OK) {
		fprintf(stderr, "descriptor: %s\n", fab_desc_status_str(st));
		return -1;
	}
	return 0;
}

/* Commands to the exporter process, one per line: "<op> idx off len seed"; each but Q is answered "A <u64>". */
struct cmd {
	char op; /* 'H' hash, 'F' fill, 'U' unexport, 'Q' quit */
	uint32_t idx;
	uint64_t off, len, seed;
};

/* ---- exporter process -------------------------------------------------------------------------------------- */

static int make_export(uint32_t idx, uint8_t *mem, uint64_t len, uint32_t access, void **priv)
{
	struct fab_export_desc d;

	memset(&d, 0, sizeof(d));
	d.kind = FAB_EXPORT_DPU;
	d.pid = (uint32_t)getpid();
	d.access = access;
	d.mkey = 0x100 + idx;
	d.addr = (uint64_t)(uintptr_t)mem;
	d.len = len;
	d.export_id = ((uint64_t)getpid() << 16) | (idx + 1);
	if (fab_random_bytes(d.cap_key, FAB_CAP_KEY_LEN) != 0)
		return -1;
	fab_host_id(d.host_id);
	if (X->export_range(&d, mem, &d.sect[0].info, priv) != 0)
		return -1;
	d.sect[0].xport = FAB_XPORT_UCX;
	d.nsect = 1;
	return print_desc(&d);
}

static int exporter_main(void)
{
	static const uint64_t lens[NEXP] = { BIG_LEN, RO_LEN, SMALL_LEN, SMALL_LEN };
	static const uint32_t acc[NEXP] = { HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE | HW_ACCESS_LOCAL_WRITE,
					    HW_ACCESS_PEER_READ, HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE,
					    HW_ACCESS_REMOTE_READ };
	uint8_t *mem[NEXP];
	void *priv[NEXP];
	char line[256];
	struct cmd c;

	for (uint32_t i = 0; i < NEXP; i++) {
		mem[i] = malloc(lens[i]);
		if (mem[i] == NULL)
			return 2;
		fill(mem[i], 0, lens[i], i);
		if (make_export(i, mem[i], lens[i], acc[i], &priv[i]) != 0) {
			fprintf(stderr, "exporter: export %u failed\n", i);
			return 2;
		}
	}
	while (fgets(line, sizeof(line), stdin) != NULL) {
		uint64_t ans = 0;

		if (sscanf(line, "%c %" SCNu32 " %" SCNu64 " %" SCNu64 " %" SCNu64, &c.op, &c.idx, &c.off, &c.len,
			   &c.seed) != 5)
			return 3;
		if (c.idx >= NEXP || c.off > lens[c.idx] || c.len > lens[c.idx] - c.off)
			return 3;
		switch (c.op) {
		case 'H':
			ans = fnv(mem[c.idx] + c.off, c.len);
			break;
		case 'F':
			fill(mem[c.idx] + c.off, c.off, c.len, c.seed);
			break;
		case 'U':
			X->unexport(priv[c.idx]);
			priv[c.idx] = NULL;
			free(mem[c.idx]); /* at once: nothing may touch it any more */
			mem[c.idx] = NULL;
			break;
		case 'Q':
			for (uint32_t i = 0; i < NEXP; i++) {
				if (priv[i] != NULL)
					X->unexport(priv[i]);
				free(mem[i]);
			}
			return 0;
		default:
			return 3;
		}
		if (printf("A %" PRIu64 "\n", ans) < 0 || fflush(stdout) != 0)
			return 3;
	}
	return 4;
}

/* ---- importer side: exporter processes --------------------------------------------------------------------- */

struct exporter {
	struct th_proc *p;
	struct fab_export_desc d[NEXP];
};

static struct exporter A; /* the main exporter */

static int spawn_exporter(struct exporter *e)
{
	e->p = th_proc_start(NULL, "exporter", NULL);
	if (e->p == NULL)
		return -1;
	for (int i = 0; i < NEXP; i++)
		if (parse_desc(th_proc_line(e->p), &e->d[i]) != 0)
			return -1;
	return 0;
}

static int ask(struct exporter *e, char op, uint32_t idx, uint64_t off, uint64_t len, uint64_t seed, uint64_t *ans)
{
	const char *l;
	uint64_t a;

	if (th_proc_send(e->p, "%c %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64, op, idx, off, len, seed) != 0)
		return -1;
	if ((l = th_proc_line(e->p)) == NULL || sscanf(l, "A %" SCNu64, &a) != 1)
		return -1;
	if (ans != NULL)
		*ans = a;
	return 0;
}

/* Stops e (politely) and returns its exit status, or -1. */
static int stop_exporter(struct exporter *e)
{
	if (th_proc_send(e->p, "Q 0 0 0 0") != 0)
		return -1;
	return th_proc_wait(e->p);
}

static const struct fab_xinfo *ucx_info(const struct fab_export_desc *d)
{
	const struct fab_section *s = fab_desc_section(d, FAB_XPORT_UCX);

	return s != NULL ? &s->info : NULL;
}

static struct fab_remote *open_desc(const struct fab_export_desc *d)
{
	struct fab_remote *r = NULL;

	if (ucx_info(d) == NULL || X->open(d, ucx_info(d), &r) != FAB_OK)
		return NULL;
	return r;
}

/* ---- cases ------------------------------------------------------------------------------------------------- */

static const size_t sizes[] = { 1, 2, 7, 64, 100, 4095, 4096, 8195, 65536, MiB + 17, 8 * MiB, 64 * MiB };

static void t_descriptor_section(void)
{
	const struct fab_xinfo *in = ucx_info(&A.d[EX_BIG]);

	CHECK(in != NULL);
	CHECK(in->len > FAB_UCX_INFO_HEAD && in->len <= FAB_XPORT_INFO_MAX);
	CHECK(in->data[0] == FAB_UCX_WIRE_VERSION && in->data[1] == 0);
	CHECK((size_t)(in->data[2] | in->data[3] << 8) == (size_t)in->len - FAB_UCX_INFO_HEAD);
}

static void t_read_sizes(void)
{
	struct fab_remote *r = open_desc(&A.d[EX_BIG]);
	uint8_t *buf = malloc(64 * MiB);

	CHECK(r != NULL && buf != NULL);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		uint64_t off = (i * 4099u) % (BIG_LEN - n + 1);

		memset(buf, 0xee, n);
		CHECK_OK(X->read(r, A.d[EX_BIG].addr + off, buf, n));
		if (first_mismatch(buf, off, n, EX_BIG) != n) {
			TH_FAIL("read of %zu bytes at %llu differs at byte %zu", n, (unsigned long long)off,
				first_mismatch(buf, off, n, EX_BIG));
			break;
		}
	}
	/* The last byte of the range. */
	CHECK_OK(X->read(r, A.d[EX_BIG].addr + BIG_LEN - 1, buf, 1));
	CHECK(buf[0] == pat(BIG_LEN - 1, EX_BIG));
	/* A zero-length read succeeds without a round trip. */
	CHECK_OK(X->read(r, A.d[EX_BIG].addr, buf, 0));
	X->close(r);
	free(buf);
}

static void t_write_sizes(void)
{
	struct fab_remote *r = open_desc(&A.d[EX_BIG]);
	uint8_t *src = malloc(64 * MiB), *back = malloc(64 * MiB);
	uint64_t h;

	CHECK(r != NULL && src != NULL && back != NULL);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		uint64_t off = (i * 8191u + 3u) % (BIG_LEN - n + 1);
		uint64_t seed = 100 + i;

		fill(src, off, n, seed);
		CHECK_OK(X->write(r, A.d[EX_BIG].addr + off, src, n));
		CHECK_OK(ask(&A, 'H', EX_BIG, off, n, 0, &h));
		CHECK(h == fnv(src, n));
		memset(back, 0, n);
		CHECK_OK(X->read(r, A.d[EX_BIG].addr + off, back, n));
		CHECK(memcmp(back, src, n) == 0);
	}
	/* Put the original content back for the other cases. */
	CHECK_OK(ask(&A, 'F', EX_BIG, 0, BIG_LEN, EX_BIG, NULL));
	X->close(r);
	free(src);
	free(back);
}

static void t_bounds(void)
{
	struct fab_export_desc d = A.d[EX_RO];
	struct fab_remote *r = open_desc(&d);
	uint8_t buf[256];

	CHECK(r != NULL);
	/* Refused by the importer already. */
	CHECK_ERR(X->read(r, d.addr + RO_LEN - 10, buf, 11), FAB_ERR_INVAL);
	CHECK_ERR(X->read(r, d.addr - 1, buf, 1), FAB_ERR_INVAL);
	CHECK_ERR(X->read(r, UINT64_MAX - 4, buf, 16), FAB_ERR_INVAL);
	CHECK_OK(X->read(r, d.addr + RO_LEN - 10, buf, 10));
	X->close(r);

	/* A descriptor that claims more than was exported: the exporter refuses. */
	d.len = RO_LEN + 4096;
	d.addr -= 4096;
	d.len += 4096;
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_ERR(X->read(r, A.d[EX_RO].addr + RO_LEN, buf, 1), FAB_ERR_INVAL);
	CHECK_ERR(X->read(r, A.d[EX_RO].addr + RO_LEN - 10, buf, 11), FAB_ERR_INVAL);
	CHECK_ERR(X->read(r, A.d[EX_RO].addr - 1, buf, 2), FAB_ERR_INVAL);
	CHECK_ERR(X->read(r, A.d[EX_RO].addr - 4096, buf, 16), FAB_ERR_INVAL);
	/* Still fine inside. */
	CHECK_OK(X->read(r, A.d[EX_RO].addr + 5, buf, 200));
	CHECK(first_mismatch(buf, 5, 200, EX_RO) == 200);
	X->close(r);
}

static void t_rights(void)
{
	struct fab_export_desc d = A.d[EX_RO];
	struct fab_remote *r;
	uint8_t buf[512];
	uint64_t h0, h1;

	CHECK_OK(ask(&A, 'H', EX_RO, 0, RO_LEN, 0, &h0));
	memset(buf, 0x5a, sizeof(buf));
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_ERR(X->write(r, d.addr, buf, sizeof(buf)), FAB_ERR_INVAL); /* importer-side check */
	X->close(r);

	/* Forged rights: the exporter refuses, small (eager) and large (rendezvous) payloads. */
	d.access = HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE;
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_ERR(X->write(r, d.addr, buf, sizeof(buf)), FAB_ERR_INVAL);
	uint8_t *big = malloc(RO_LEN);

	CHECK(big != NULL);
	memset(big, 0x77, RO_LEN);
	CHECK_ERR(X->write(r, d.addr, big, RO_LEN), FAB_ERR_INVAL);
	free(big);
	CHECK_OK(X->read(r, d.addr, buf, sizeof(buf)));
	X->close(r);
	CHECK_OK(ask(&A, 'H', EX_RO, 0, RO_LEN, 0, &h1));
	CHECK(h0 == h1);

	/* RDMA read-only export: reads pass, forged writes do not. */
	d = A.d[EX_RDMA_RD];
	d.access |= HW_ACCESS_REMOTE_WRITE;
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_OK(X->read(r, d.addr + 1, buf, 100));
	CHECK(first_mismatch(buf, 1, 100, EX_RDMA_RD) == 100);
	CHECK_ERR(X->write(r, d.addr + 1, buf, 100), FAB_ERR_INVAL);
	X->close(r);
}

static void t_forged_key(void)
{
	struct fab_export_desc d = A.d[EX_BIG];
	struct fab_remote *r;
	uint8_t buf[64];

	d.cap_key[FAB_CAP_KEY_LEN - 1] ^= 1;
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_ERR(X->read(r, d.addr, buf, sizeof(buf)), FAB_ERR_REVOKED);
	CHECK_ERR(X->write(r, d.addr, buf, sizeof(buf)), FAB_ERR_REVOKED);
	X->close(r);

	d = A.d[EX_BIG];
	d.export_id ^= 0x8000;
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_ERR(X->read(r, d.addr, buf, sizeof(buf)), FAB_ERR_REVOKED);
	X->close(r);

	/* Another export's key does not open this one. */
	d = A.d[EX_BIG];
	memcpy(d.cap_key, A.d[EX_RO].cap_key, FAB_CAP_KEY_LEN);
	r = open_desc(&d);
	CHECK(r != NULL);
	CHECK_ERR(X->read(r, d.addr, buf, sizeof(buf)), FAB_ERR_REVOKED);
	X->close(r);
}

static void t_bad_info(void)
{
	struct fab_xinfo info = *ucx_info(&A.d[EX_BIG]);
	struct fab_remote *r = (struct fab_remote *)&info;

	info.len = 3;
	CHECK_ERR(X->open(&A.d[EX_BIG], &info, &r), FAB_ERR_INVAL);
	CHECK(r == NULL);
	info = *ucx_info(&A.d[EX_BIG]);
	info.data[0] = 9;
	CHECK_ERR(X->open(&A.d[EX_BIG], &info, &r), FAB_ERR_INVAL);
	info = *ucx_info(&A.d[EX_BIG]);
	info.data[2]++;
	CHECK_ERR(X->open(&A.d[EX_BIG], &info, &r), FAB_ERR_INVAL);
	info = *ucx_info(&A.d[EX_BIG]);
	info.len = FAB_XPORT_INFO_MAX + 1;
	CHECK_ERR(X->open(&A.d[EX_BIG], &info, &r), FAB_ERR_INVAL);
	CHECK(X->read(NULL, 0, NULL, 1) == FAB_ERR_INVAL);
}

/*
 * A child that loads soname as UCX: it must find the transport unavailable,
 * as in a build without UCX (the export fails, an open has no path). Loading
 * is tried once per process, hence one child per name. 0 when all held.
 */
static int child_without_ucx(const char *soname)
{
	pid_t pid = fork();
	int st = 0;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		uint8_t mem[SMALL_LEN];
		struct fab_export_desc d;
		struct fab_xinfo info = { .len = 0 };
		struct fab_remote *r = (struct fab_remote *)&info;
		void *priv = NULL;

		memset(&d, 0, sizeof(d));
		d.kind = FAB_EXPORT_DPU;
		d.export_id = 7;
		d.access = HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE;
		d.addr = (uint64_t)(uintptr_t)mem;
		d.len = sizeof(mem);
		if (fab_ucx_use_library(soname) != 0)
			_exit(2);
		if (X->export_range(&d, mem, &info, &priv) != -1 || priv != NULL || info.len != 0)
			_exit(3);
		if (X->open(&A.d[EX_BIG], ucx_info(&A.d[EX_BIG]), &r) != FAB_ERR_NO_PATH || r != NULL)
			_exit(4);
		if (fab_ucx_load() != -1 || fab_ucx_use_library("libucp.so.0") != -1)
			_exit(5); /* the failure stays, and loading is not tried again */
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void t_without_ucx(void)
{
	CHECK_ERR(child_without_ucx("libsoftdpu-no-such-ucp.so.0"), 0);
	CHECK_ERR(child_without_ucx("libc.so.6"), 0); /* loads, but has none of UCX's functions */
}

static void t_unexport(void)
{
	struct fab_remote *r = open_desc(&A.d[EX_REVOKE]);
	uint8_t buf[SMALL_LEN];

	CHECK(r != NULL);
	CHECK_OK(X->read(r, A.d[EX_REVOKE].addr, buf, SMALL_LEN));
	CHECK(first_mismatch(buf, 0, SMALL_LEN, EX_REVOKE) == SMALL_LEN);
	CHECK_OK(X->write(r, A.d[EX_REVOKE].addr, buf, 16));
	CHECK_OK(ask(&A, 'U', EX_REVOKE, 0, 0, 0, NULL));
	CHECK_ERR(X->read(r, A.d[EX_REVOKE].addr, buf, SMALL_LEN), FAB_ERR_REVOKED);
	CHECK_ERR(X->write(r, A.d[EX_REVOKE].addr, buf, 16), FAB_ERR_REVOKED);
	X->close(r);
	/* A fresh open of the stale descriptor is refused the same way. */
	r = open_desc(&A.d[EX_REVOKE]);
	CHECK(r != NULL);
	CHECK_ERR(X->read(r, A.d[EX_REVOKE].addr, buf, 1), FAB_ERR_REVOKED);
	X->close(r);
}

/* -- malformed requests through an endpoint of the test's own -- */

static struct {
	int replies;
	uint32_t last_status;
	uint32_t status_count[8];
} raw;

static ucs_status_t raw_on_rep(void *arg, const void *header, size_t header_length, void *data, size_t length,
			       const ucp_am_recv_param_t *param)
{
	const uint8_t *h = header;

	(void)arg;
	(void)data;
	(void)length;
	(void)param;
	if (header_length == FAB_UCX_REP_SIZE) {
		raw.last_status = (uint32_t)(h[12] | h[13] << 8 | h[14] << 16 | (uint32_t)h[15] << 24);
		if (raw.last_status < 8)
			raw.status_count[raw.last_status]++;
	}
	raw.replies++;
	return UCS_OK;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void make_req(uint8_t *h, unsigned op, uint64_t id, uint64_t raddr, uint64_t len, const uint8_t *cap)
{
	memset(h, 0, FAB_UCX_REQ_SIZE);
	h[0] = FAB_UCX_REQ_MAGIC & 0xff;
	h[1] = (FAB_UCX_REQ_MAGIC >> 8) & 0xff;
	h[2] = (FAB_UCX_REQ_MAGIC >> 16) & 0xff;
	h[3] = (uint8_t)(FAB_UCX_REQ_MAGIC >> 24);
	h[4] = FAB_UCX_WIRE_VERSION;
	h[6] = (uint8_t)op;
	h[8] = FAB_UCX_REQ_SIZE;
	put64(h + 16, 0x1234);
	put64(h + 24, id);
	put64(h + 32, raddr);
	put64(h + 40, len);
	memcpy(h + 48, cap, FAB_CAP_KEY_LEN);
}

/* Sends one AM and progresses until the send is done; 0 on success. */
static int raw_send(ucp_worker_h w, ucp_ep_h ep, const void *hdr, size_t hlen, const void *data, size_t len, int reply)
{
	ucp_request_param_t p;
	ucs_status_ptr_t sp;
	uint64_t until = now_ms() + 5000;

	memset(&p, 0, sizeof(p));
	p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = reply ? UCP_AM_SEND_FLAG_REPLY : 0;
	sp = ucp_am_send_nbx(ep, FAB_UCX_AM_REQ, hdr, hlen, data, len, &p);
	if (UCS_PTR_IS_ERR(sp))
		return -1;
	if (sp == NULL)
		return 0;
	while (ucp_request_check_status(sp) == UCS_INPROGRESS && now_ms() < until)
		ucp_worker_progress(w);
	ucs_status_t st = ucp_request_check_status(sp);

	ucp_request_free(sp);
	return st == UCS_OK ? 0 : -1;
}

/* Progresses until `want` replies arrived in total (or 5 s). */
static int raw_wait(ucp_worker_h w, int want)
{
	uint64_t until = now_ms() + 5000;

	while (raw.replies < want && now_ms() < until)
		ucp_worker_progress(w);
	return raw.replies >= want ? 0 : -1;
}

static void t_malformed(void)
{
	const struct fab_export_desc *d = &A.d[EX_BIG];
	const struct fab_xinfo *in = ucx_info(d);
	ucp_params_t cp = { .field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM };
	ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				   .thread_mode = UCS_THREAD_MODE_SINGLE };
	ucp_am_handler_param_t hp = { .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
						    UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
				      .id = FAB_UCX_AM_REP,
				      .flags = UCP_AM_FLAG_WHOLE_MSG,
				      .cb = raw_on_rep };
	ucp_ep_params_t ep = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
			       .address = (const ucp_address_t *)(in->data + FAB_UCX_INFO_HEAD),
			       .err_mode = UCP_ERR_HANDLING_MODE_PEER };
	const char *em = getenv("SOFTDPU_UCX_ERR_MODE");
	ucp_context_h ctx;
	ucp_worker_h w;
	ucp_ep_h e;
	uint8_t h[FAB_UCX_REQ_SIZE + 8], junk[256];
	uint8_t *big = malloc(2 * MiB);
	int want = 0;

	CHECK(big != NULL);
	if (em != NULL && strcmp(em, "none") == 0)
		ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
	memset(big, 0xab, 2 * MiB);
	memset(junk, 0xcd, sizeof(junk));
	CHECK(ucp_init(&cp, NULL, &ctx) == UCS_OK);
	CHECK(ucp_worker_create(ctx, &wp, &w) == UCS_OK);
	CHECK(ucp_worker_set_am_recv_handler(w, &hp) == UCS_OK);
	CHECK(ucp_ep_create(w, &ep, &e) == UCS_OK);
	memset(&raw, 0, sizeof(raw));

	/* Dropped without a reply: wrong header sizes, bad magic, no reply endpoint. */
	CHECK_OK(raw_send(w, e, junk, 7, NULL, 0, 1));
	CHECK_OK(raw_send(w, e, NULL, 0, junk, sizeof(junk), 1));
	CHECK_OK(raw_send(w, e, NULL, 0, big, 2 * MiB, 1));
	CHECK_OK(raw_send(w, e, junk, 200, big, 2 * MiB, 1));
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE + 8, NULL, 0, 1));
	h[0] ^= 0xff;
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 0));

	/* Refused with a reply. */
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key);
	h[4] = 9; /* version */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	make_req(h, 7, d->export_id, d->addr, 16, d->cap_key); /* op */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key);
	h[8] = 32; /* header size field */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key);
	h[12] = 1; /* reserved */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key); /* READ with a payload */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, junk, sizeof(junk), 1));
	want++;
	make_req(h, FAB_UCX_OP_WRITE, d->export_id, d->addr, 100, d->cap_key); /* payload shorter than len */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, junk, 10, 1));
	want++;
	make_req(h, FAB_UCX_OP_WRITE, d->export_id, d->addr, 1ull << 63, d->cap_key); /* absurd length */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	make_req(h, FAB_UCX_OP_WRITE, d->export_id, d->addr, 16, d->cap_key); /* payload longer than len */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, big, 2 * MiB, 1));
	want++;
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, UINT64_MAX, d->cap_key); /* over FAB_UCX_MAX_LEN */
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, FAB_UCX_MAX_LEN + 1, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	CHECK_OK(raw_wait(w, want));
	CHECK(raw.status_count[FAB_UCX_ST_MALFORMED] == (uint32_t)want);

	/* Well formed, outside the range (with wrap-around) or unknown: refused. */
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr + d->len - 4, 16, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	make_req(h, FAB_UCX_OP_READ, d->export_id, UINT64_MAX - 10, 100, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	make_req(h, FAB_UCX_OP_WRITE, d->export_id, d->addr + d->len - 8, 2 * MiB, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, big, 2 * MiB, 1));
	want += 3;
	CHECK_OK(raw_wait(w, want));
	CHECK(raw.status_count[FAB_UCX_ST_RANGE] == 3);
	make_req(h, FAB_UCX_OP_WRITE, d->export_id, d->addr, 2 * MiB, A.d[EX_RO].cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, big, 2 * MiB, 1));
	want++;
	CHECK_OK(raw_wait(w, want));
	CHECK(raw.last_status == FAB_UCX_ST_REVOKED);
	/* The dropped ones got no reply. */
	for (int i = 0; i < 20; i++)
		ucp_worker_progress(w);
	CHECK(raw.replies == want);

	/* A valid request over the same endpoint is served. */
	make_req(h, FAB_UCX_OP_READ, d->export_id, d->addr, 16, d->cap_key);
	CHECK_OK(raw_send(w, e, h, FAB_UCX_REQ_SIZE, NULL, 0, 1));
	want++;
	CHECK_OK(raw_wait(w, want));
	CHECK(raw.last_status == FAB_UCX_ST_OK);

	{
		ucp_request_param_t cpp = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
					    .flags = UCP_EP_CLOSE_FLAG_FORCE };
		ucs_status_ptr_t sp = ucp_ep_close_nbx(e, &cpp);

		while (UCS_PTR_IS_PTR(sp) && ucp_request_check_status(sp) == UCS_INPROGRESS)
			ucp_worker_progress(w);
		if (UCS_PTR_IS_PTR(sp))
			ucp_request_free(sp);
	}
	ucp_worker_destroy(w);
	ucp_cleanup(ctx);
	free(big);

	/* The exporter is alive and its memory untouched. */
	struct fab_remote *r = open_desc(d);
	uint8_t buf[4096];
	uint64_t hh;

	CHECK(r != NULL);
	CHECK_OK(X->read(r, d->addr + 3, buf, sizeof(buf)));
	CHECK(first_mismatch(buf, 3, sizeof(buf), EX_BIG) == sizeof(buf));
	X->close(r);
	CHECK_OK(ask(&A, 'H', EX_BIG, 0, 4 * MiB, 0, &hh));
	big = malloc(4 * MiB);
	CHECK(big != NULL);
	fill(big, 0, 4 * MiB, EX_BIG);
	CHECK(hh == fnv(big, 4 * MiB));
	free(big);
}

/* -- several importer threads, each with its own remote -- */

struct thr_arg {
	int idx;
	int bad;
};

static void *thr_main(void *p)
{
	struct thr_arg *a = p;
	struct fab_remote *r = open_desc(&A.d[EX_BIG]);
	size_t n = 256 * 1024;
	uint8_t *buf = malloc(n);

	if (r == NULL || buf == NULL) {
		a->bad = 1;
		free(buf);
		return NULL;
	}
	for (int it = 0; it < 40 && !a->bad; it++) {
		uint64_t off = ((uint64_t)a->idx * 40 + it) * 65599u % (BIG_LEN - n);
		size_t k = (it % 3 == 0) ? 33 : n;

		if (X->read(r, A.d[EX_BIG].addr + off, buf, k) != FAB_OK || first_mismatch(buf, off, k, EX_BIG) != k)
			a->bad = 1;
	}
	X->close(r);
	free(buf);
	return NULL;
}

static void t_threads(void)
{
	pthread_t t[4];
	struct thr_arg a[4];

	for (int i = 0; i < 4; i++) {
		a[i] = (struct thr_arg){ .idx = i };
		CHECK(pthread_create(&t[i], NULL, thr_main, &a[i]) == 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		CHECK(!a[i].bad);
}

/* -- exporter and importer in one process: unexport while transfers run -- */

struct race {
	struct fab_export_desc d;
	atomic_int stop;
	atomic_int ok;
	int revoked, other;
};

static void *race_reader(void *p)
{
	struct race *rc = p;
	struct fab_remote *r = open_desc(&rc->d);
	size_t n = 4 * MiB;
	uint8_t *buf = malloc(n);

	if (r == NULL || buf == NULL) {
		rc->other++;
		free(buf);
		if (r != NULL)
			X->close(r);
		return NULL;
	}
	for (int i = 0; !atomic_load(&rc->stop); i++) {
		enum fab_status st = (i & 1) ? X->read(r, rc->d.addr, buf, n) : X->write(r, rc->d.addr, buf, n);

		if (st == FAB_OK)
			rc->ok++;
		else if (st == FAB_ERR_REVOKED)
			rc->revoked++;
		else
			rc->other++;
	}
	X->close(r);
	free(buf);
	return NULL;
}

static void t_unexport_race(void)
{
	for (int round = 0; round < 3; round++) {
		struct race rc;
		pthread_t t;
		uint8_t *mem = malloc(4 * MiB);
		void *priv;

		CHECK(mem != NULL);
		memset(&rc, 0, sizeof(rc));
		rc.d.kind = FAB_EXPORT_DPU;
		rc.d.pid = (uint32_t)getpid();
		rc.d.access = HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE;
		rc.d.mkey = 7;
		rc.d.addr = (uint64_t)(uintptr_t)mem;
		rc.d.len = 4 * MiB;
		rc.d.export_id = 0x5eed0000u + (unsigned)round;
		CHECK_OK(fab_random_bytes(rc.d.cap_key, FAB_CAP_KEY_LEN));
		CHECK_OK(X->export_range(&rc.d, mem, &rc.d.sect[0].info, &priv));
		rc.d.sect[0].xport = FAB_XPORT_UCX;
		rc.d.nsect = 1;
		CHECK(pthread_create(&t, NULL, race_reader, &rc) == 0);
		for (int i = 0; i < 5000 && rc.ok < 2 + round; i++) /* some transfers done, more under way */
			usleep(1000);
		usleep(3000 * (unsigned)round);
		X->unexport(priv);
		free(mem); /* ASan reports any access after unexport returned */
		usleep(20000);
		atomic_store(&rc.stop, 1);
		pthread_join(t, NULL);
		CHECK(rc.other == 0);
		CHECK(rc.ok > 0);
		CHECK(rc.revoked > 0);
	}
}

static void t_open_close_many(void)
{
	uint8_t b[8];

	for (int i = 0; i < 30; i++) {
		struct fab_remote *r = open_desc(&A.d[EX_RO]);

		CHECK(r != NULL);
		if (i % 2 == 0)
			CHECK_OK(X->read(r, A.d[EX_RO].addr + (uint64_t)i, b, sizeof(b)));
		X->close(r);
	}
	X->close(NULL);
}

/* -- an exporter killed with SIGKILL -- */

struct killer {
	struct fab_remote *r;
	uint64_t addr;
	enum fab_status st;
	uint64_t ms;
	atomic_int started;
};

static void *kill_reader(void *p)
{
	struct killer *k = p;
	uint8_t *buf = malloc(64 * MiB);
	uint64_t t0;

	k->st = FAB_OK;
	if (buf == NULL)
		return NULL;
	atomic_store(&k->started, 1);
	do {
		t0 = now_ms();
		k->st = X->read(k->r, k->addr, buf, 64 * MiB);
	} while (k->st == FAB_OK);
	k->ms = now_ms() - t0;
	free(buf);
	return NULL;
}

static void t_peer_killed(void)
{
	struct exporter B;
	struct fab_remote *r, *r2;
	uint8_t buf[4096];
	enum fab_status st;
	uint64_t t0;

	CHECK_OK(spawn_exporter(&B));
	r = open_desc(&B.d[EX_BIG]);
	r2 = open_desc(&B.d[EX_RO]);
	CHECK(r != NULL && r2 != NULL);
	CHECK_OK(X->read(r, B.d[EX_BIG].addr, buf, sizeof(buf)));
	CHECK_OK(X->read(r2, B.d[EX_RO].addr, buf, sizeof(buf)));

	/* Killed while a 64 MiB read is in flight. */
	struct killer k = { .r = r, .addr = B.d[EX_BIG].addr };
	pthread_t t;

	CHECK(pthread_create(&t, NULL, kill_reader, &k) == 0);
	while (!atomic_load(&k.started))
		usleep(1000);
	usleep(20000);
	th_proc_kill(B.p);
	CHECK(th_proc_wait(B.p) == 128 + SIGKILL);
	pthread_join(t, NULL);
	printf("  in-flight 64 MiB read after SIGKILL: %s after %llu ms\n", fab_status_str(k.st),
	       (unsigned long long)k.ms);
	/* docs/fabric_ucx.md: on TCP the closed connection fails the endpoint at once: the peer is gone. */
	CHECK(k.st == FAB_ERR_PEER_GONE);

	/* Later requests on both remotes fail the same way, at once. */
	t0 = now_ms();
	st = X->read(r2, B.d[EX_RO].addr, buf, sizeof(buf));
	printf("  read after SIGKILL: %s after %llu ms\n", fab_status_str(st), (unsigned long long)(now_ms() - t0));
	CHECK(st == FAB_ERR_PEER_GONE);
	/* A write to a read-only export is refused by the importer's own rights check, before any send. */
	st = X->write(r2, B.d[EX_RO].addr, buf, 16);
	CHECK(st == FAB_ERR_INVAL);
	st = X->read(r, B.d[EX_BIG].addr, buf, sizeof(buf));
	CHECK(st == FAB_ERR_PEER_GONE);
	X->close(r);
	X->close(r2);

	/* A new open of a dead exporter's descriptor: docs/fabric_ucx.md, an exporter that cannot be reached. */
	r = NULL;
	st = X->open(&B.d[EX_RO], ucx_info(&B.d[EX_RO]), &r);
	printf("  open after SIGKILL: %s\n", fab_status_str(st));
	CHECK(st == FAB_ERR_PEER_GONE && r == NULL);
}

/* -- an importer killed with SIGKILL in the middle of transfers -- */

static int importer_main(void)
{
	static char line[2 * FAB_DESC_MAX + 16];
	struct fab_export_desc d;
	struct fab_remote *r;
	uint8_t *buf = malloc(64 * MiB);

	if (buf == NULL || fgets(line, sizeof(line), stdin) == NULL || parse_desc(line, &d) != 0)
		return 2;
	r = open_desc(&d);
	if (r == NULL)
		return 2;
	/* The same bytes are written back: the exporter's content does not change. */
	if (X->read(r, d.addr, buf, 64 * MiB) != FAB_OK || printf("READY\n") < 0 || fflush(stdout) != 0)
		return 2;
	for (int i = 0;; i++) {
		enum fab_status st = (i & 1) ? X->read(r, d.addr, buf, 64 * MiB) : X->write(r, d.addr, buf, 64 * MiB);

		if (st != FAB_OK)
			return 3;
	}
}

static void t_importer_killed(void)
{
	for (int round = 0; round < 4; round++) {
		static char hex[2 * FAB_DESC_MAX + 1];
		uint8_t enc[FAB_DESC_MAX], buf[4096];
		struct th_proc *imp = th_proc_start(NULL, "importer", NULL);
		const char *l;

		CHECK(imp != NULL);
		th_hex_encode(enc, fab_desc_encode(&A.d[EX_BIG], enc), hex);
		CHECK_OK(th_proc_send(imp, "DESC %s", hex));
		CHECK((l = th_proc_line(imp)) != NULL && strcmp(l, "READY") == 0);
		usleep(10000 + 17000 * (unsigned)round);
		th_proc_kill(imp);
		CHECK(th_proc_wait(imp) > 128); /* ended by a signal */

		/* The exporter carries on. */
		struct fab_remote *r = open_desc(&A.d[EX_BIG]);

		CHECK(r != NULL);
		CHECK_OK(X->read(r, A.d[EX_BIG].addr + 4096, buf, sizeof(buf)));
		CHECK(first_mismatch(buf, 4096, sizeof(buf), EX_BIG) == sizeof(buf));
		X->close(r);
	}
}

/* The main exporter still serves after all of the above and withdraws everything on request. */
static void t_exporter_alive(void)
{
	struct fab_remote *r = open_desc(&A.d[EX_BIG]);
	uint8_t buf[1000];

	CHECK(r != NULL);
	CHECK_OK(X->read(r, A.d[EX_BIG].addr + 12345, buf, sizeof(buf)));
	CHECK(first_mismatch(buf, 12345, sizeof(buf), EX_BIG) == sizeof(buf));
	X->close(r);
	CHECK_ERR(stop_exporter(&A), 0); /* its exit status covers its leak check under ASan */
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "exporter") == 0)
		return exporter_main();
	if (argc == 2 && strcmp(argv[1], "importer") == 0)
		return importer_main();

	setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", "lo", 1);
	setenv("SOFTDPU_FABRIC_TIMEOUT_MS", "3000", 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (spawn_exporter(&A) != 0) {
		fprintf(stderr, "cannot start the exporter process\n");
		return 1;
	}
	RUN(t_descriptor_section);
	RUN(t_bad_info);
	RUN(t_without_ucx); /* before this process loads UCX: the children must not inherit it */
	RUN(t_read_sizes);
	RUN(t_write_sizes);
	RUN(t_bounds);
	RUN(t_rights);
	RUN(t_forged_key);
	RUN(t_unexport);
	RUN(t_malformed);
	RUN(t_threads);
	RUN(t_open_close_many);
	RUN(t_unexport_race);
	RUN(t_peer_killed);
	RUN(t_importer_killed);
	RUN(t_exporter_alive);
	return th_summary("test_fab_ucx");
}
