/*
 * DOCA SHA: FIPS 180 known answers, agreement with OpenSSL on random data and
 * lists, partial sessions, documented errors and the context life cycle.
 */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_dma.h"
#include "doca_mmap.h"
#include "doca_sha.h"
#include "harness.h"
#include "sha_fixture.h"

#define SRC_SIZE (1u << 20)
#define DST_SIZE 4096
#define MILLION 1000000u

/* ---- OpenSSL, called directly ----
 * The library already brings libcrypto into the process; the test reaches it
 * by symbol so that it links against the public DOCA library only.
 */
struct ossl {
	EVP_MD_CTX *(*ctx_new)(void);
	void (*ctx_free)(EVP_MD_CTX *);
	const EVP_MD *(*md[3])(void);
	int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
	int (*update)(EVP_MD_CTX *, const void *, size_t);
	int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
};

static struct ossl ossl;

#define OSSL_SYM(field, name) (*(void **)&ossl.field = dlsym(RTLD_DEFAULT, name)) != NULL

static int ossl_load(void)
{
	return OSSL_SYM(ctx_new, "EVP_MD_CTX_new") && OSSL_SYM(ctx_free, "EVP_MD_CTX_free") &&
	       OSSL_SYM(md[0], "EVP_sha1") && OSSL_SYM(md[1], "EVP_sha256") && OSSL_SYM(md[2], "EVP_sha512") &&
	       OSSL_SYM(init, "EVP_DigestInit_ex") && OSSL_SYM(update, "EVP_DigestUpdate") &&
	       OSSL_SYM(final, "EVP_DigestFinal_ex");
}

static const int one_shot[3] = { DOCA_SHA_JOB_SHA1, DOCA_SHA_JOB_SHA256, DOCA_SHA_JOB_SHA512 };
static const int partial[3] = { DOCA_SHA_JOB_SHA1_PARTIAL, DOCA_SHA_JOB_SHA256_PARTIAL,
				DOCA_SHA_JOB_SHA512_PARTIAL };
static const size_t digest_size[3] = { DOCA_SHA1_BYTE_COUNT, DOCA_SHA256_BYTE_COUNT, DOCA_SHA512_BYTE_COUNT };
static const size_t block_size[3] = { 64, 64, 128 };

/* Digest of the concatenation of n pieces, by OpenSSL. */
static int ref_digest(int alg, const uint8_t *const *piece, const size_t *len, int n, uint8_t *out)
{
	EVP_MD_CTX *c = ossl.ctx_new();
	unsigned int dl = 0;
	int ok = c != NULL && ossl.init(c, ossl.md[alg](), NULL) == 1;

	for (int i = 0; ok && i < n; i++)
		ok = ossl.update(c, piece[i], len[i]) == 1;
	ok = ok && ossl.final(c, out, &dl) == 1 && dl == digest_size[alg];
	ossl.ctx_free(c);
	return ok;
}

static void to_hex(const uint8_t *d, size_t n, char *hex)
{
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
}

/* ---- fixture (tests/sha_fixture.h) with this file's sizes ---- */

static int sfx_setup(struct sfx *f, uint32_t depth, uint32_t dst_perm)
{
	return sfx_setup_sized(f, SRC_SIZE, DST_SIZE, depth, dst_perm);
}

/* A request over src[off, off+len); an empty one still needs a non-empty buffer under it. */
static doca_error_t src_buf(struct sfx *f, size_t off, size_t len, struct doca_buf **b)
{
	return doca_buf_inventory_buf_by_args(f->inv, f->src_mmap, f->src + off, len != 0 ? len : 1, f->src + off,
					      len, b);
}

static doca_error_t wait_event(struct sfx *f, struct doca_event *ev)
{
	doca_error_t r;

	while ((r = doca_workq_progress_retrieve(f->wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	return r;
}

/* Submits one job and waits for its event; returns the submit or retrieve status. */
static doca_error_t run_job(struct sfx *f, struct doca_sha_partial_job *pj, struct doca_event *ev)
{
	doca_error_t r = doca_workq_submit(f->wq, &pj->sha_job.base);

	return r != DOCA_SUCCESS ? r : wait_event(f, ev);
}

static struct doca_sha_partial_job mk_job(struct sfx *f, int type, struct doca_buf *req, struct doca_buf *resp,
					  uint64_t flags, struct doca_sha_partial_session *s)
{
	return (struct doca_sha_partial_job){ .sha_job = { .base = { .type = type, .ctx = f->ctx,
								     .user_data.u64 = 0xabc },
							   .req_buf = req, .resp_buf = resp, .flags = flags },
					      .session = s };
}

/* One-shot hash of src[0..len) into a fresh response at dst; 0 on success. */
static doca_error_t hash_once(struct sfx *f, int type, size_t off, size_t len, struct doca_event *ev)
{
	struct doca_buf *req = NULL, *resp = NULL;
	struct doca_sha_partial_job j;
	doca_error_t r;

	if (src_buf(f, off, len, &req) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_by_addr(f->inv, f->dst_mmap, f->dst, DST_SIZE, &resp) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY;
	j = mk_job(f, type, req, resp, DOCA_SHA_JOB_FLAGS_NONE, NULL);
	r = run_job(f, &j, ev);
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	return r;
}

/* ---- capabilities and life cycle ---- */

static void test_caps(void)
{
	struct doca_devinfo **list;
	uint32_t n, elems = 0, min = 0;
	uint64_t max = 0;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	for (int a = 0; a < 3; a++) {
		CHECK_OK(doca_sha_job_get_supported(list[0], (enum doca_sha_job_type)one_shot[a]));
		CHECK_OK(doca_sha_job_get_supported(list[0], (enum doca_sha_job_type)partial[a]));
		CHECK_OK(doca_sha_get_min_dst_buffer_size(list[0], (enum doca_sha_job_type)one_shot[a], &min));
		CHECK(min == digest_size[a]);
		CHECK_OK(doca_sha_get_min_dst_buffer_size(list[0], (enum doca_sha_job_type)partial[a], &min));
		CHECK(min == digest_size[a]);
	}
	CHECK_ERR(doca_sha_job_get_supported(list[0], (enum doca_sha_job_type)DOCA_DMA_JOB_MEMCPY),
		  DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sha_job_get_supported(list[0], (enum doca_sha_job_type)(DOCA_SHA_JOB_SHA512_PARTIAL + 1)),
		  DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sha_job_get_supported(NULL, DOCA_SHA_JOB_SHA256), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sha_get_max_list_buf_num_elem(list[0], &elems));
	CHECK(elems > 1);
	CHECK_OK(doca_sha_get_max_src_buffer_size(list[0], &max));
	CHECK(max >= (16ull << 20));
	CHECK_OK(doca_sha_get_hardware_supported(list[0]));
	CHECK_ERR(doca_sha_get_hardware_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_list_buf_num_elem(NULL, &elems), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_list_buf_num_elem(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_src_buffer_size(NULL, &max), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_src_buffer_size(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_min_dst_buffer_size(NULL, DOCA_SHA_JOB_SHA1, &min), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_min_dst_buffer_size(list[0], DOCA_SHA_JOB_SHA1, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_min_dst_buffer_size(list[0], (enum doca_sha_job_type)0, &min),
		  DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_create_destroy(void)
{
	struct doca_sha *sha;
	uint8_t ev_supported = 0;

	CHECK_ERR(doca_sha_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_sha_as_ctx(NULL) == NULL);
	CHECK_OK(doca_sha_create(&sha));
	CHECK(doca_sha_as_ctx(sha) != NULL);
	CHECK_OK(doca_ctx_get_event_driven_supported(doca_sha_as_ctx(sha), &ev_supported));
	CHECK(ev_supported == 1);
	CHECK_ERR(doca_ctx_start(doca_sha_as_ctx(sha)), DOCA_ERROR_INVALID_VALUE); /* no device */
	CHECK_OK(doca_sha_destroy(sha));
}

static void test_life_cycle(void)
{
	struct sfx f;
	struct doca_event ev;
	struct doca_buf *req, *resp;
	struct doca_dev *dev2;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(f.ndev > 1);
	CHECK_OK(doca_dev_open(f.list[1], &dev2));
	CHECK_ERR(doca_ctx_dev_add(f.ctx, dev2), DOCA_ERROR_BAD_STATE); /* started */
	CHECK_ERR(doca_sha_destroy(f.sha), DOCA_ERROR_IN_USE);	  /* started, work queue attached */
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 100, &req));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, DST_SIZE, &resp));
	struct doca_sha_partial_job j = mk_job(&f, DOCA_SHA_JOB_SHA256, req, resp, 0, NULL);

	CHECK_OK(doca_workq_submit(f.wq, &j.sha_job.base));
	CHECK_ERR(doca_ctx_workq_rm(f.ctx, f.wq), DOCA_ERROR_NOT_PERMITTED); /* a job is pending */
	CHECK_ERR(doca_ctx_stop(f.ctx), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(wait_event(&f, &ev));
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_NOT_FOUND);
	CHECK_ERR(doca_sha_destroy(f.sha), DOCA_ERROR_IN_USE); /* still started */
	CHECK_OK(doca_ctx_stop(f.ctx));
	CHECK_ERR(doca_sha_destroy(f.sha), DOCA_ERROR_IN_USE); /* device still added */
	CHECK_OK(doca_ctx_dev_rm(f.ctx, f.dev));
	CHECK_OK(doca_ctx_dev_add(f.ctx, dev2)); /* stopped: configurable again */
	CHECK_ERR(doca_ctx_dev_add(f.ctx, f.dev), DOCA_ERROR_NOT_PERMITTED); /* one device per context */
	CHECK_OK(doca_ctx_dev_rm(f.ctx, dev2));
	CHECK_OK(doca_ctx_dev_add(f.ctx, f.dev));
	CHECK_OK(doca_ctx_start(f.ctx));
	CHECK_ERR(doca_ctx_start(f.ctx), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	CHECK_ERR(doca_ctx_workq_add(f.ctx, f.wq), DOCA_ERROR_IN_USE);
	CHECK_OK(run_job(&f, &j, &ev)); /* works again after the restart */
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	CHECK_OK(doca_dev_close(dev2));
	sfx_teardown(&f);
}

/* ---- known answers (FIPS 180 examples) ---- */

static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

static const char *const kat[3][4] = {
	{ "a9993e364706816aba3e25717850c26c9cd0d89d", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
	  "84983e441c3bd26ebaae4aa1f95129e5e54670f1", "34aa973cd4c4daa4f61eeb2bdbad27316534016f" },
	{ "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	{ "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
	  "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
	  "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
	  "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
	  "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445",
	  "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
	  "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b" },
};

static void test_known_answers_one_shot(void)
{
	const char *msgs[3] = { "abc", "", msg448 };
	struct sfx f;
	struct doca_event ev;
	char hex[2 * 64 + 1];

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (int a = 0; a < 3; a++) {
		for (int m = 0; m < 3; m++) {
			size_t len = strlen(msgs[m]);

			memcpy(f.src, msgs[m], len);
			memset(f.dst, 0, DST_SIZE);
			CHECK_OK(hash_once(&f, one_shot[a], 0, len, &ev));
			CHECK(ev.type == one_shot[a] && ev.user_data.u64 == 0xabc && ev.result.u64 == DOCA_SUCCESS);
			to_hex(f.dst, digest_size[a], hex);
			if (strcmp(hex, kat[a][m]) != 0)
				TH_FAIL("alg %d msg %d: %s", a, m, hex);
			CHECK(f.dst[digest_size[a]] == 0);
		}
	}
	sfx_teardown(&f);
}

/* One million 'a', in segments of 64000 bytes (a multiple of both block sizes) and a shorter last one. */
static void test_known_answers_million_partial(void)
{
	struct sfx f;
	struct doca_event ev;
	struct doca_sha_partial_session *s;
	struct doca_buf *req, *resp;
	char hex[2 * 64 + 1];

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	memset(f.src, 'a', MILLION);
	for (int a = 0; a < 3; a++) {
		size_t seg = 64000, done = 0;

		CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s));
		memset(f.dst, 0, DST_SIZE);
		CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, DST_SIZE, &resp));
		while (done < MILLION) {
			size_t n = MILLION - done < seg ? MILLION - done : seg;
			uint64_t flags = done + n == MILLION ? DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL : 0;
			size_t dlen = 1;

			CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + done, n, &req));
			struct doca_sha_partial_job j = mk_job(&f, partial[a], req, resp, flags, s);

			CHECK_OK(run_job(&f, &j, &ev));
			CHECK(ev.type == partial[a] && ev.result.u64 == DOCA_SUCCESS);
			CHECK_OK(doca_buf_get_data_len(resp, &dlen));
			CHECK(dlen == (flags ? digest_size[a] : 0)); /* nothing written before the last segment */
			doca_buf_refcount_rm(req, NULL);
			done += n;
		}
		to_hex(f.dst, digest_size[a], hex);
		if (strcmp(hex, kat[a][3]) != 0)
			TH_FAIL("alg %d: %s", a, hex);
		doca_buf_refcount_rm(resp, NULL);
		CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s));
	}
	sfx_teardown(&f);
}

/* ---- agreement with OpenSSL ---- */

/* A list of n pieces of the source at random places; fills piece/len for the reference. */
static struct doca_buf *random_list(struct sfx *f, int n, size_t total, unsigned *seed, const uint8_t **piece,
				    size_t *len)
{
	struct doca_buf *head = NULL, *b;
	size_t left = total;

	for (int i = 0; i < n; i++) {
		size_t l = i == n - 1 ? left : (left == 0 ? 0 : (size_t)rand_r(seed) % (left + 1));
		size_t off = (size_t)rand_r(seed) % (SRC_SIZE - l + 1);

		piece[i] = f->src + off;
		len[i] = l;
		left -= l;
		if (src_buf(f, off, l, &b) != DOCA_SUCCESS)
			return NULL;
		if (head == NULL)
			head = b;
		else if (doca_buf_chain_list(head, b) != DOCA_SUCCESS)
			return NULL;
	}
	return head;
}

static void test_random_lists_vs_openssl(void)
{
	unsigned seed = 4242;
	struct sfx f;
	struct doca_event ev;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (size_t i = 0; i < SRC_SIZE; i++)
		f.src[i] = (uint8_t)rand_r(&seed);
	for (int iter = 0; iter < 300; iter++) {
		int a = iter % 3, n = 1 + rand_r(&seed) % 8;
		size_t total = (size_t)rand_r(&seed) % (iter % 10 == 0 ? SRC_SIZE : 5000);
		size_t pre = (size_t)rand_r(&seed) % 100, dlen = 0;
		const uint8_t *piece[8];
		size_t len[8];
		uint8_t want[64];
		struct doca_buf *req = random_list(&f, n, total, &seed, piece, len), *resp;

		CHECK(req != NULL);
		CHECK(ref_digest(a, piece, len, n, want));
		memset(f.dst, 0x5a, DST_SIZE);
		/* The digest goes after existing data, which stays as it was. */
		CHECK_OK(doca_buf_inventory_buf_by_args(f.inv, f.dst_mmap, f.dst, DST_SIZE, f.dst, pre, &resp));
		struct doca_sha_partial_job j = mk_job(&f, one_shot[a], req, resp, 0, NULL);

		CHECK_OK(run_job(&f, &j, &ev));
		CHECK(memcmp(f.dst + pre, want, digest_size[a]) == 0);
		CHECK(pre == 0 || f.dst[pre - 1] == 0x5a);
		CHECK(f.dst[pre + digest_size[a]] == 0x5a);
		CHECK_OK(doca_buf_get_data_len(resp, &dlen));
		CHECK(dlen == pre + digest_size[a]);
		doca_buf_refcount_rm(req, NULL);
		doca_buf_refcount_rm(resp, NULL);
	}
	sfx_teardown(&f);
}

/* Many segments of random whole-block sizes and a random last one == one-shot over the same bytes. */
static void test_partial_many_segments(void)
{
	unsigned seed = 77;
	struct sfx f;
	struct doca_event ev;
	struct doca_sha_partial_session *s;
	struct doca_buf *req, *resp;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (size_t i = 0; i < SRC_SIZE; i++)
		f.src[i] = (uint8_t)rand_r(&seed);
	for (int iter = 0; iter < 30; iter++) {
		int a = iter % 3;
		size_t off = 0, nseg = 1 + (size_t)rand_r(&seed) % 40;
		uint8_t want[64];

		CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s));
		memset(f.dst, 0, DST_SIZE);
		CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, DST_SIZE, &resp));
		for (size_t k = 0; k < nseg; k++) {
			int last = k == nseg - 1;
			size_t n = last ? (size_t)rand_r(&seed) % 300 : block_size[a] * (size_t)(rand_r(&seed) % 50);

			CHECK_OK(src_buf(&f, off, n, &req));
			struct doca_sha_partial_job j =
				mk_job(&f, partial[a], req, resp, last ? DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL : 0, s);

			CHECK_OK(run_job(&f, &j, &ev));
			doca_buf_refcount_rm(req, NULL);
			off += n;
		}
		const uint8_t *p = f.src;

		CHECK(ref_digest(a, &p, &off, 1, want));
		CHECK(memcmp(f.dst, want, digest_size[a]) == 0);
		doca_buf_refcount_rm(resp, NULL);
		CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s));
	}
	sfx_teardown(&f);
}

/* Feeds len bytes at off into session s; the last segment goes to dst at doff. */
static doca_error_t feed(struct sfx *f, int type, struct doca_sha_partial_session *s, size_t off, size_t len,
			 int final, size_t doff, struct doca_event *ev)
{
	struct doca_buf *req, *resp;
	doca_error_t r;

	if (src_buf(f, off, len, &req) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_by_addr(f->inv, f->dst_mmap, f->dst + doff, 64, &resp) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY;
	struct doca_sha_partial_job j =
		mk_job(f, type, req, resp, final ? DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL : 0, s);

	r = run_job(f, &j, ev);
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	return r;
}

/* Two messages sharing a prefix: the prefix is hashed once and the session copied. */
static void test_session_copy(void)
{
	struct sfx f;
	struct doca_event ev;
	struct doca_sha_partial_session *s0, *s1, *s2;
	uint8_t want0[32], want1[32];
	const uint8_t *p0[2], *p1[2];
	size_t l[2] = { 640, 50 };

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (size_t i = 0; i < 4096; i++)
		f.src[i] = (uint8_t)(i * 31 + 7);
	p0[0] = p1[0] = f.src;
	p0[1] = f.src + 1000;
	p1[1] = f.src + 2000;
	CHECK(ref_digest(1, p0, l, 2, want0) && ref_digest(1, p1, l, 2, want1));
	memset(f.dst, 0, DST_SIZE);
	CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s0));
	CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s1));
	CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s2));
	CHECK(s0 != s1 && s1 != s2);
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s0, 0, 640, 0, 0, &ev));
	CHECK_OK(doca_sha_partial_session_copy(f.sha, f.wq, s0, s1));
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s0, 1000, 50, 1, 0, &ev));
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s1, 2000, 50, 1, 100, &ev));
	CHECK(memcmp(f.dst, want0, 32) == 0);
	CHECK(memcmp(f.dst + 100, want1, 32) == 0);
	/* Copying a session between messages leaves the target between messages: it starts afresh. */
	CHECK_OK(doca_sha_partial_session_copy(f.sha, f.wq, s2, s1));
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s1, 0, 640, 0, 0, &ev));
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s1, 1000, 50, 1, 200, &ev));
	CHECK(memcmp(f.dst + 200, want0, 32) == 0);
	CHECK_ERR(doca_sha_partial_session_copy(NULL, f.wq, s0, s1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_copy(f.sha, f.wq, NULL, s1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_copy(f.sha, f.wq, s0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s2));
	CHECK_ERR(doca_sha_partial_session_copy(f.sha, f.wq, s2, s1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s0));
	CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s1));
	sfx_teardown(&f);
}

/* ---- documented errors ---- */

static void test_submit_errors(void)
{
	struct sfx f;
	struct doca_buf *req, *resp;
	struct doca_event ev;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 64, &req));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, DST_SIZE, &resp));
	struct doca_sha_partial_job j = mk_job(&f, DOCA_SHA_JOB_SHA1, req, resp, 0, NULL);

	j.sha_job.req_buf = NULL;
	CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
	j.sha_job.req_buf = req;
	j.sha_job.resp_buf = NULL;
	CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
	j.sha_job.resp_buf = resp;
	for (int t = 0; t < 4; t++) {
		static const int bad[4] = { DOCA_DMA_JOB_MEMCPY, DOCA_ACTION_SHA_FIRST,
					    DOCA_SHA_JOB_SHA512_PARTIAL + 1, 0 };

		j.sha_job.base.type = bad[t];
		CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
	}
	j.sha_job.base.type = DOCA_SHA_JOB_SHA1;
	j.sha_job.flags = 7;
	CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
	j.sha_job.flags = DOCA_SHA_JOB_FLAGS_NONE;
	CHECK_OK(run_job(&f, &j, &ev));
	CHECK(ev.result.u64 == DOCA_SUCCESS);
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	sfx_teardown(&f);
}

/* A response without room for the digest is refused at submit and untouched. */
static void test_response_too_small(void)
{
	struct sfx f;
	struct doca_buf *req, *resp;
	uint8_t before[DST_SIZE];

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	memset(f.dst, 0x33, DST_SIZE);
	memcpy(before, f.dst, DST_SIZE);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 100, &req));
	for (int a = 0; a < 3; a++) {
		/* Room for one byte less than the digest, after 10 bytes of data. */
		CHECK_OK(doca_buf_inventory_buf_by_args(f.inv, f.dst_mmap, f.dst, 10 + digest_size[a] - 1, f.dst, 10,
							&resp));
		struct doca_sha_partial_job j = mk_job(&f, one_shot[a], req, resp, 0, NULL);

		CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
		doca_buf_refcount_rm(resp, NULL);
	}
	CHECK(memcmp(f.dst, before, DST_SIZE) == 0);
	doca_buf_refcount_rm(req, NULL);
	sfx_teardown(&f);
}

/* The response shrinks between submit and execution: the job fails and nothing is written. */
static void test_response_too_small_at_execution(void)
{
	struct sfx f;
	struct doca_buf *req, *resp;
	struct doca_event ev;
	size_t dlen = 0;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	memset(f.dst, 0x44, DST_SIZE);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 100, &req));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 40, &resp));
	struct doca_sha_partial_job j = mk_job(&f, DOCA_SHA_JOB_SHA256, req, resp, 0, NULL);

	CHECK_OK(doca_workq_submit(f.wq, &j.sha_job.base));
	CHECK_OK(doca_buf_set_data(resp, f.dst, 20)); /* 20 bytes of room are left */
	CHECK_ERR(wait_event(&f, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_SHA_JOB_SHA256 && ev.user_data.u64 == 0xabc);
	CHECK(ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
	for (int i = 0; i < DST_SIZE; i++)
		CHECK(f.dst[i] == 0x44);
	CHECK_OK(doca_buf_get_data_len(resp, &dlen));
	CHECK(dlen == 20);
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	sfx_teardown(&f);
}

static void test_response_without_write_access(void)
{
	struct sfx f;
	struct doca_event ev;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_ONLY) == 0);
	memset(f.dst, 0x55, DST_SIZE);
	CHECK_ERR(hash_once(&f, DOCA_SHA_JOB_SHA512, 0, 1000, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.result.u64 == DOCA_ERROR_NOT_PERMITTED);
	for (int i = 0; i < DST_SIZE; i++)
		CHECK(f.dst[i] == 0x55);
	sfx_teardown(&f);
}

static void test_request_list_too_long(void)
{
	struct sfx f;
	struct doca_buf *head = NULL, *b, *resp;
	uint32_t max = 0;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_sha_get_max_list_buf_num_elem(f.list[0], &max));
	for (uint32_t i = 0; i <= max; i++) {
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + i, 1, &b));
		if (head == NULL)
			head = b;
		else
			CHECK_OK(doca_buf_chain_list(head, b));
	}
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, DST_SIZE, &resp));
	struct doca_sha_partial_job j = mk_job(&f, DOCA_SHA_JOB_SHA256, head, resp, 0, NULL);

	CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
	doca_buf_refcount_rm(head, NULL);
	doca_buf_refcount_rm(resp, NULL);
	sfx_teardown(&f);
}

static void test_partial_errors(void)
{
	struct sfx f, g;
	struct doca_event ev;
	struct doca_sha_partial_session *s, *other;
	struct doca_buf *req, *resp;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(sfx_setup(&g, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_sha_partial_session_create(NULL, f.wq, &s), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_create(f.sha, NULL, &s), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_create(f.sha, f.wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s));
	CHECK_OK(doca_sha_partial_session_create(g.sha, g.wq, &other));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, DST_SIZE, &resp));
	/* Non-final segments are whole blocks: 64 bytes for SHA-1/256, 128 for SHA-512. */
	CHECK_ERR(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s, 0, 100, 0, 0, &ev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(feed(&f, DOCA_SHA_JOB_SHA512_PARTIAL, s, 0, 64, 0, 0, &ev), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA512_PARTIAL, s, 0, 128, 0, 0, &ev));
	/* Another algorithm in the middle of a message fails the job and ends the message. */
	CHECK_ERR(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s, 0, 64, 0, 0, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, s, 0, 64, 0, 0, &ev)); /* a new message */
	/* Sessions of another context, none, or destroyed. */
	CHECK_ERR(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, other, 0, 64, 0, 0, &ev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(feed(&f, DOCA_SHA_JOB_SHA256_PARTIAL, NULL, 0, 64, 0, 0, &ev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_destroy(f.sha, f.wq, other), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_destroy(f.sha, g.wq, s), DOCA_ERROR_INVALID_VALUE); /* wrong work queue */
	CHECK_ERR(doca_sha_partial_session_destroy(NULL, f.wq, s), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_destroy(f.sha, f.wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_copy(f.sha, f.wq, other, s), DOCA_ERROR_INVALID_VALUE);
	/* A session destroyed while a job that names it waits: the job fails, nothing is written. */
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 10, &req));
	memset(f.dst, 0x66, DST_SIZE);
	struct doca_sha_partial_job j =
		mk_job(&f, DOCA_SHA_JOB_SHA256_PARTIAL, req, resp, DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL, s);

	CHECK_OK(doca_workq_submit(f.wq, &j.sha_job.base));
	CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s));
	CHECK_ERR(wait_event(&f, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
	CHECK(f.dst[0] == 0x66 && f.dst[31] == 0x66);
	CHECK_ERR(doca_workq_submit(f.wq, &j.sha_job.base), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_destroy(f.sha, f.wq, s), DOCA_ERROR_INVALID_VALUE); /* twice */
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	CHECK_OK(doca_sha_partial_session_destroy(g.sha, g.wq, other));
	sfx_teardown(&g);
	sfx_teardown(&f);
}

static void test_session_pool_exhaustion(void)
{
	struct sfx f;
	struct doca_sha_partial_session *s[1024];
	int n = 0;
	doca_error_t r;

	CHECK(sfx_setup(&f, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	while (n < 1024 && (r = doca_sha_partial_session_create(f.sha, f.wq, &s[n])) == DOCA_SUCCESS)
		n++;
	CHECK(n > 1 && n < 1024);
	CHECK_ERR(r, DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s[n / 2]));
	CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s[n / 2])); /* a freed slot is reused */
	for (int i = 0; i < n; i++)
		CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s[i]));
	sfx_teardown(&f);
}

/* A deep queue of jobs of every type, retrieved in order with their user data. */
static void test_deep_queue(void)
{
	enum { N = 96 };
	struct sfx f;
	struct doca_buf *req[N], *resp[N];
	struct doca_sha_partial_job j[N];
	struct doca_event ev;
	unsigned seed = 5;

	CHECK(sfx_setup(&f, N, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (size_t i = 0; i < 65536; i++)
		f.src[i] = (uint8_t)rand_r(&seed);
	for (int i = 0; i < N; i++) {
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + i * 100, 100 + (size_t)i * 7,
							&req[i]));
		CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst + i * 40, 40, &resp[i]));
		j[i] = mk_job(&f, one_shot[i % 2], req[i], resp[i], 0, NULL); /* SHA-1 and SHA-256 fit in 40 */
		j[i].sha_job.base.user_data.u64 = (uint64_t)i;
		CHECK_OK(doca_workq_submit(f.wq, &j[i].sha_job.base));
	}
	CHECK_ERR(doca_workq_submit(f.wq, &j[0].sha_job.base), DOCA_ERROR_NO_MEMORY);
	for (int i = 0; i < N; i++) {
		const uint8_t *p = f.src + i * 100;
		size_t l = 100 + (size_t)i * 7;
		uint8_t want[64];

		CHECK_OK(wait_event(&f, &ev));
		CHECK(ev.user_data.u64 == (uint64_t)i && ev.type == one_shot[i % 2]);
		CHECK(ref_digest(i % 2, &p, &l, 1, want));
		CHECK(memcmp(f.dst + i * 40, want, digest_size[i % 2]) == 0);
	}
	for (int i = 0; i < N; i++) {
		doca_buf_refcount_rm(req[i], NULL);
		doca_buf_refcount_rm(resp[i], NULL);
	}
	sfx_teardown(&f);
}

int main(void)
{
	if (!ossl_load()) {
		fprintf(stderr, "libcrypto symbols not found in the process\n");
		return 1;
	}
	RUN(test_caps);
	RUN(test_create_destroy);
	RUN(test_life_cycle);
	RUN(test_known_answers_one_shot);
	RUN(test_known_answers_million_partial);
	RUN(test_random_lists_vs_openssl);
	RUN(test_partial_many_segments);
	RUN(test_session_copy);
	RUN(test_submit_errors);
	RUN(test_response_too_small);
	RUN(test_response_too_small_at_execution);
	RUN(test_response_without_write_access);
	RUN(test_request_list_too_long);
	RUN(test_partial_errors);
	RUN(test_session_pool_exhaustion);
	RUN(test_deep_queue);
	return th_summary("test_sha");
}
