/*
 * The host side of the dpacc round trip: linked with the <APP>.a dpacc built
 * from dev_awkward.c, in place of libflexio it provides flexio_app_create,
 * flexio_func_pup_register and flexio_app_destroy, which record what the
 * archive's constructor registers. It then checks the registrations, loads
 * the image as the runtime does (memfd + dlopen, twice), and calls each
 * device function through its pack function (host) and unpack function
 * (device), comparing the result with what it computes itself.
 *
 * Prints "roundtrip: N passed, N failed" (cases: the check_* functions, each
 * passing when all its checks do); exit status 1 on a failure.
 * APP (default awk) is the application name; DPACC_TEST_RT adds rpc_rt, which
 * calls into the device runtime archive linked into the image.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "toolchain_common.h"

#ifndef APP
#define APP awk
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

/* The SDK's declarations (no FlexIO header is needed to build this). */
typedef enum {
	FLEXIO_STATUS_SUCCESS = 0,
	FLEXIO_STATUS_FAILED = 1,
	FLEXIO_STATUS_TIMEOUT = 2,
	FLEXIO_STATUS_FATAL_ERR = 3,
} flexio_status;
typedef void(flexio_func_t)(void);
typedef void(flexio_func_arg_pack_fn_t)(void *argbuf, va_list ap);
struct flexio_app {
	char name[64];
	const unsigned char *elf;
	size_t size;
};
flexio_status flexio_app_create(const char *name, void *elf_buffer, size_t buffer_size,
				struct flexio_app **app_ptr);
flexio_status flexio_app_destroy(struct flexio_app *app);
flexio_status flexio_func_pup_register(struct flexio_app *app, const char *dev_func_name,
				       const char *dev_unpack_func_name, flexio_func_t *host_stub_func_addr,
				       size_t argbuf_size, flexio_func_arg_pack_fn_t *host_pack_func);

/* What the archive defines. */
extern struct flexio_app *APP;
extern flexio_func_t rpc_widths, rpc_c_types, rpc_misc, rpc_none, rpc_void, rpc_neg8, on_event,
	on_alias_a, on_alias_b, rpc_macro, rpc_marker_late, rpc_comments, rpc_fnptr, rpc_ptr_ret,
	rpc_bump, rpc_chain, rpc_structs, rpc_pair_late;
#ifdef DPACC_TEST_RT
extern flexio_func_t rpc_rt;
#endif

static int passed, failed, case_failures;

#define CHECK(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			case_failures++;                                                           \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

/* Runs one case: a call of a check_* function. */
#define CASE(call)                                                                                \
	do {                                                                                       \
		case_failures = 0;                                                                 \
		call;                                                                              \
		if (case_failures == 0)                                                            \
			passed++;                                                                  \
		else                                                                               \
			failed++;                                                                  \
	} while (0)

/* ---- the fake libflexio: records the registrations ---- */

struct reg {
	char name[64];
	char unpack[96];
	flexio_func_t *stub;
	size_t argbuf_size;
	flexio_func_arg_pack_fn_t *pack;
};

static struct flexio_app the_app;
static struct reg regs[32];
static int nregs, creates, destroys;

flexio_status flexio_app_create(const char *name, void *elf_buffer, size_t buffer_size,
				struct flexio_app **app_ptr)
{
	creates++;
	snprintf(the_app.name, sizeof(the_app.name), "%s", name);
	the_app.elf = elf_buffer;
	the_app.size = buffer_size;
	*app_ptr = &the_app;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_app_destroy(struct flexio_app *app)
{
	/* runs after main, from the archive's destructor: nothing left to report to */
	if (app == &the_app)
		destroys++;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_func_pup_register(struct flexio_app *app, const char *dev_func_name,
				       const char *dev_unpack_func_name, flexio_func_t *host_stub_func_addr,
				       size_t argbuf_size, flexio_func_arg_pack_fn_t *host_pack_func)
{
	struct reg *r;

	if (app != &the_app || nregs == (int)(sizeof(regs) / sizeof(regs[0])))
		return FLEXIO_STATUS_FAILED;
	r = &regs[nregs++];
	snprintf(r->name, sizeof(r->name), "%s", dev_func_name);
	snprintf(r->unpack, sizeof(r->unpack), "%s", dev_unpack_func_name);
	r->stub = host_stub_func_addr;
	r->argbuf_size = argbuf_size;
	r->pack = host_pack_func;
	return FLEXIO_STATUS_SUCCESS;
}

static const struct reg *find_reg(const char *name)
{
	for (int i = 0; i < nregs; i++)
		if (strcmp(regs[i].name, name) == 0)
			return &regs[i];
	return NULL;
}

/* ---- loading and calling, as the runtime does ---- */

/*
 * The memfd stays open while the image is loaded: glibc knows a loaded object
 * by its path first, so a second image loaded from a reused descriptor number
 * ("/proc/self/fd/N" again) would be taken for the first one.
 */
static void *load_image(int *fdp)
{
	char path[64];
	void *h;
	int fd = memfd_create("dpa_image", MFD_CLOEXEC);

	*fdp = fd;

	if (fd < 0 || write(fd, the_app.elf, the_app.size) != (ssize_t)the_app.size) {
		perror("memfd");
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		printf("dlopen: %s\n", dlerror());
	return h;
}

/* Packs the arguments after buf with the registered pack function of fn. */
static void pack(const char *fn, void *buf, ...)
{
	const struct reg *r = find_reg(fn);
	va_list ap;

	if (r == NULL)
		return;
	va_start(ap, buf);
	r->pack(buf, ap);
	va_end(ap);
}

typedef uint64_t(unpack_fn)(void *argbuf, void *func);

/* Runs fn of image h on an argument buffer, through its unpack function. */
static uint64_t call(void *h, const char *fn, void *buf)
{
	const struct reg *r = find_reg(fn);
	unpack_fn *unpack;
	void *func;

	if (r == NULL)
		return 0xdeadull;
	*(void **)&unpack = dlsym(h, r->unpack);
	func = dlsym(h, fn);
	CHECK(unpack != NULL && func != NULL, "%s or %s missing from the image", r->unpack, fn);
	if (unpack == NULL || func == NULL)
		return 0xdeadull;
	/* the image's function, not the host stub of the same name */
	CHECK(func != (void *)(uintptr_t)r->stub, "dlsym(%s) found the host stub", fn);
	return unpack(buf, func);
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	CHECK(p != NULL, "%s missing from the image", name);
	return p;
}

/* ---- host functions the device calls back ---- */

static int cb_value = -1;
static void host_cb(int v)
{
	cb_value = v;
}

static uint64_t host_op(uint64_t a, uint64_t b)
{
	return a * b;
}

/* ---- the checks ---- */

static const struct {
	const char *name;
	flexio_func_t *stub;
	size_t argbuf_size;
} expected[] = {
	/* the order of the source: of each function's first marked declaration */
	{ "rpc_widths", rpc_widths, 32 },
	{ "rpc_structs", rpc_structs, 104 },
	{ "rpc_pair_late", rpc_pair_late, 40 },
	{ "rpc_c_types", rpc_c_types, 48 },
	{ "rpc_misc", rpc_misc, 56 },
	{ "rpc_none", rpc_none, 8 },
	{ "rpc_void", rpc_void, 16 },
	{ "rpc_neg8", rpc_neg8, 8 },
	{ "on_event", on_event, 8 },
	{ "on_alias_a", on_alias_a, 8 },
	{ "on_alias_b", on_alias_b, 8 },
	{ "rpc_macro", rpc_macro, 8 },
	{ "rpc_marker_late", rpc_marker_late, 8 },
	{ "rpc_comments", rpc_comments, 16 },
	{ "rpc_fnptr", rpc_fnptr, 24 },
	{ "rpc_ptr_ret", rpc_ptr_ret, 16 },
	{ "rpc_bump", rpc_bump, 8 },
	{ "rpc_chain", rpc_chain, 8 },
#ifdef DPACC_TEST_RT
	{ "rpc_rt", rpc_rt, 8 },
#endif
};
#define NEXPECTED ((int)(sizeof(expected) / sizeof(expected[0])))

static void check_registrations(void)
{
	CHECK(creates == 1, "flexio_app_create called %d times", creates);
	CHECK(APP == &the_app, "the app variable is not what flexio_app_create returned");
	CHECK(strcmp(the_app.name, STR(APP)) == 0, "app name '%s'", the_app.name);
	CHECK(the_app.size > 64 && memcmp(the_app.elf, "\177ELF", 4) == 0, "the image is no ELF");
	CHECK(nregs == NEXPECTED, "%d registrations, %d expected", nregs, NEXPECTED);
	for (int i = 0; i < NEXPECTED && i < nregs; i++) {
		const struct reg *r = &regs[i];
		char unpack[96];

		snprintf(unpack, sizeof(unpack), "__dpa_unpack_%s", expected[i].name);
		CHECK(strcmp(r->name, expected[i].name) == 0 && strcmp(r->unpack, unpack) == 0 &&
			      r->stub == expected[i].stub && r->argbuf_size == expected[i].argbuf_size &&
			      r->pack != NULL,
		      "registration %d: %s, %s, stub %s, argbuf %zu; expected %s, %s, stub %s, argbuf %zu", i,
		      r->name, r->unpack, r->stub == expected[i].stub ? "right" : "wrong", r->argbuf_size,
		      expected[i].name, unpack, "right", expected[i].argbuf_size);
	}
	/* the runtime tells functions apart by their stubs' addresses */
	{
		int shared = 0;

		for (int i = 0; i < nregs; i++)
			for (int j = i + 1; j < nregs; j++)
				if (regs[i].stub == regs[j].stub) {
					printf("%s and %s share a stub address\n", regs[i].name, regs[j].name);
					shared++;
				}
		CHECK(shared == 0, "%d pairs of stubs share an address", shared);
	}
}

static void check_widths(void *h)
{
	unsigned char buf[64];
	int8_t s8 = -5;
	uint8_t u8 = 250;
	int16_t s16 = -30000;
	uint16_t u16 = 65000;
	int32_t s32 = -2000000000;
	uint32_t u32 = 4000000000u;
	int64_t s64 = -9000000000000000000ll;
	uint64_t u64 = 18000000000000000000ull, want = 0;

	memset(buf, 0xaa, sizeof(buf));
	pack("rpc_widths", buf, s8, u8, s16, u16, s32, u32, s64, u64);
	/* the layout itself: each at its own alignment, native order, exact size */
	CHECK(memcmp(buf + 0, &s8, 1) == 0 && memcmp(buf + 1, &u8, 1) == 0, "8-bit arguments");
	CHECK(memcmp(buf + 2, &s16, 2) == 0 && memcmp(buf + 4, &u16, 2) == 0, "16-bit arguments");
	CHECK(buf[6] == 0xaa && buf[7] == 0xaa, "padding written");
	CHECK(memcmp(buf + 8, &s32, 4) == 0 && memcmp(buf + 12, &u32, 4) == 0, "32-bit arguments");
	CHECK(memcmp(buf + 16, &s64, 8) == 0 && memcmp(buf + 24, &u64, 8) == 0, "64-bit arguments");
	CHECK(buf[32] == 0xaa, "written past the argument buffer");
	want = TC_MIXS(want, s8);
	want = TC_MIXU(want, u8);
	want = TC_MIXS(want, s16);
	want = TC_MIXU(want, u16);
	want = TC_MIXS(want, s32);
	want = TC_MIXU(want, u32);
	want = TC_MIXS(want, s64);
	want = TC_MIXU(want, u64);
	CHECK(call(h, "rpc_widths", buf) == want, "rpc_widths mix");
}

static void check_c_types(void *h)
{
	unsigned char buf[64];
	char c = -3;
	signed char sc = -100;
	unsigned char uc = 200;
	short s = -12345;
	unsigned short us = 54321;
	int i = -1;
	unsigned int u = 0xfffffff0u;
	long l = -1234567890123l;
	unsigned long ul = 0x8000000000000001ul;
	long long ll = -2;
	unsigned long long ull = 3;
	uint64_t want = 0;

	memset(buf, 0xaa, sizeof(buf));
	pack("rpc_c_types", buf, c, sc, uc, s, us, i, u, l, ul, ll, ull);
	CHECK(memcmp(buf + 4, &s, 2) == 0 && memcmp(buf + 6, &us, 2) == 0 && buf[3] == 0xaa,
	      "short arguments at 4 and 6");
	CHECK(memcmp(buf + 40, &ull, 8) == 0 && buf[48] == 0xaa, "the last argument at 40");
	want = TC_MIXS(want, c);
	want = TC_MIXS(want, sc);
	want = TC_MIXU(want, uc);
	want = TC_MIXS(want, s);
	want = TC_MIXU(want, us);
	want = TC_MIXS(want, i);
	want = TC_MIXU(want, u);
	want = TC_MIXS(want, l);
	want = TC_MIXU(want, ul);
	want = TC_MIXS(want, ll);
	want = TC_MIXU(want, ull);
	CHECK(call(h, "rpc_c_types", buf) == want, "rpc_c_types mix");
}

enum colour { RED = 1, GREEN = 2, BLUE = -3 };
enum small { SMALL_A = 7 };

static void check_misc(void *h)
{
	unsigned char buf[64];
	const char *str = "hello";
	uint64_t daddr = 0x1122334455667788ull, want = 0;
	int32_t neg = -77;
	unsigned short half = 0xfedc;
	volatile uint8_t byte = 0x42;
	int32_t ret;

	memset(buf, 0xaa, sizeof(buf));
	/* a _Bool is stored as 0 or 1 whatever integer the caller passed */
	pack("rpc_misc", buf, 5, BLUE, SMALL_A, str, daddr, neg, half, host_cb, &byte);
	CHECK(buf[0] == 1 && buf[1] == 0xaa, "the _Bool at 0 is %u", buf[0]);
	CHECK(memcmp(buf + 16, &str, 8) == 0, "the pointer at 16");
	CHECK(memcmp(buf + 36, &half, 2) == 0 && buf[38] == 0xaa, "u16_t at 36");
	want = TC_MIXU(want, 1);
	want = TC_MIXS(want, BLUE);
	want = TC_MIXU(want, SMALL_A);
	for (int k = 0; str[k] != '\0'; k++)
		want = TC_MIXU(want, (unsigned char)str[k]);
	want = TC_MIXU(want, daddr);
	want = TC_MIXS(want, neg);
	want = TC_MIXU(want, half);
	want = TC_MIXU(want, byte);
	ret = TC_MISC_RET(want);
	CHECK(call(h, "rpc_misc", buf) == (uint64_t)(int64_t)ret, "rpc_misc: not %d sign-extended", ret);
	CHECK(cb_value == (int)(want & 0xff), "the device's call of host_cb: %d", cb_value);
}

static void check_small_ones(void *h)
{
	unsigned char buf[64];
	uint64_t out = 0;
	const char *s = "abcdef";

	pack("rpc_none", buf);
	CHECK(call(h, "rpc_none", buf) == 0x1234 * 3, "rpc_none (TOOLCHAIN_SCALE=3 from -D)");

	pack("rpc_void", buf, &out, 7u);
	CHECK(call(h, "rpc_void", buf) == 0 && out == 21, "rpc_void: out %llu", (unsigned long long)out);

	pack("rpc_neg8", buf, (int8_t)-100);
	CHECK(call(h, "rpc_neg8", buf) == (uint64_t)-101ll, "rpc_neg8 not sign-extended");

	pack("rpc_macro", buf, (uint16_t)40000);
	CHECK(call(h, "rpc_macro", buf) == 80000, "rpc_macro");

	pack("rpc_marker_late", buf, (uint64_t)0x0f0f);
	CHECK(call(h, "rpc_marker_late", buf) == ~(uint64_t)0x0f0f, "rpc_marker_late");

	pack("rpc_comments", buf, 0x12345678u, (uint64_t)99);
	CHECK(call(h, "rpc_comments", buf) == TC_MIXU(TC_MIXU(0, 0x12345678u), 99), "rpc_comments");

	pack("rpc_fnptr", buf, host_op, (uint64_t)6, (uint64_t)7);
	CHECK(call(h, "rpc_fnptr", buf) == 43, "rpc_fnptr");

	pack("rpc_ptr_ret", buf, s, (uint8_t)2);
	CHECK(call(h, "rpc_ptr_ret", buf) == (uint64_t)(uintptr_t)(s + 2), "rpc_ptr_ret");

}

static void check_handlers(void *h)
{
	unsigned char buf[64];

	pack("on_event", buf, (uint64_t)0xabc);
	CHECK(call(h, "on_event", buf) == 0, "a handler returns 0");
	CHECK(*(uint64_t *)sym(h, "last_event") == (0xabc ^ 0x5555), "on_event's argument");

	pack("on_alias_a", buf, (uint64_t)3);
	call(h, "on_alias_a", buf);
	pack("on_alias_b", buf, (uint64_t)4);
	call(h, "on_alias_b", buf);
	CHECK(*(uint64_t *)sym(h, "alias_hits") == 4003, "on_alias_a, on_alias_b");
}

#ifdef DPACC_TEST_RT
static void check_rt(void *h)
{
	unsigned char buf[64];

	pack("rpc_rt", buf);
	CHECK(call(h, "rpc_rt", buf) == 0x7007, "rpc_rt: the device runtime's function");
	/* linked whole: a member nothing references is in the image too */
	CHECK(dlsym(h, "toolchain_rt_unreferenced") != NULL, "the device runtime was not linked whole");
}
#endif

/* Each loaded copy of the image has its own globals. */
static void check_two_copies(void *a)
{
	unsigned char buf[64];
	int fd;
	void *b = load_image(&fd);

	CHECK(b != NULL && b != a, "a second copy of the image");
	if (b == NULL || b == a) {
		if (fd >= 0)
			close(fd);
		return;
	}
	CHECK(sym(a, "dev_counter") != sym(b, "dev_counter"), "one dev_counter for both copies");
	pack("rpc_bump", buf, (uint64_t)5);
	CHECK(call(a, "rpc_bump", buf) == 5, "first bump of copy a");
	CHECK(call(a, "rpc_bump", buf) == 10, "second bump of copy a");
	pack("rpc_bump", buf, (uint64_t)1);
	CHECK(call(b, "rpc_bump", buf) == 1, "copy b counts alone");
	pack("rpc_chain", buf, (uint64_t)2);
	CHECK(call(a, "rpc_chain", buf) == 14, "rpc_chain calls the image's rpc_bump");
	CHECK(*(uint64_t *)sym(a, "dev_counter") == 14 && *(uint64_t *)sym(b, "dev_counter") == 1,
	      "the counters of the copies");
	dlclose(b);
	close(fd);
}

static void check_loads(void *h)
{
	CHECK(h != NULL, "the image does not load");
	CHECK(destroys == 0, "flexio_app_destroy before exit");
}
/* Struct and union arguments: their bytes at their alignment, and the device's view of them. */
static void check_structs(void *h)
{
	unsigned char buf[128];
	struct tc_small sm = { 0xa1b2c3d4u, 0xbeef };
	struct tc_pair p = { 0x1111222233334444ull, 0x5555666677778888ull };
	struct tc_big b = { { 1, 2, 3, 0xfffffffffffffff0ull, 5 }, 0x77 };
	union tc_word w = { .u = 0x0123456789abcdefull };
	struct { uint32_t lo, hi; } m = { 9, 10 };
	uint64_t want;

	memset(buf, 0xaa, sizeof(buf));
	pack("rpc_structs", buf, (uint8_t)7, sm, p, b, w, m, 0xcafeu);
	CHECK(buf[0] == 7 && memcmp(buf + 4, &sm, 6) == 0, "k at 0, the 8-byte struct at 4");
	CHECK(memcmp(buf + 16, &p, 16) == 0, "the 16-byte struct at 16");
	CHECK(memcmp(buf + 32, &b, 41) == 0, "the 48-byte struct at 32");
	CHECK(memcmp(buf + 80, &w, 8) == 0 && memcmp(buf + 88, &m, 8) == 0, "the union at 80, the marked at 88");
	CHECK(memcmp(buf + 96, &(uint32_t){ 0xcafeu }, 4) == 0 && buf[104] == 0xaa, "the last at 96, nothing past 104");
	want = TC_MIXU(TC_MIXU(TC_MIXU(0, 7), sm.a), sm.b);
	want = tc_mix_big(TC_MIXU(TC_MIXU(want, p.x), p.y), &b);
	want = TC_MIXU(TC_MIXU(TC_MIXU(TC_MIXU(want, w.u), 9), 10), 0xcafeu);
	CHECK(call(h, "rpc_structs", buf) == want, "rpc_structs mix");

	pack("rpc_pair_late", buf, (uint64_t)1, (uint64_t)2, (uint64_t)3, p);
	want = TC_MIXU(TC_MIXU(TC_MIXU(TC_MIXU(TC_MIXU(0, 1), 2), 3), p.x), p.y);
	CHECK(call(h, "rpc_pair_late", buf) == want, "rpc_pair_late mix");
}

int main(void)
{
	void *h;
	int fd = -1;

	setvbuf(stdout, NULL, _IONBF, 0);
	CASE(check_registrations());
	h = creates == 1 ? load_image(&fd) : NULL;
	CASE(check_loads(h));
	if (h != NULL && nregs == NEXPECTED) {
		CASE(check_widths(h));
		CASE(check_c_types(h));
		CASE(check_misc(h));
		CASE(check_small_ones(h));
		CASE(check_structs(h));
		CASE(check_handlers(h));
#ifdef DPACC_TEST_RT
		CASE(check_rt(h));
#endif
		CASE(check_two_copies(h));
	} else {
		failed++; /* the calls cannot be checked */
	}
	if (h != NULL)
		dlclose(h);
	if (fd >= 0)
		close(fd);
	printf("roundtrip: %d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
