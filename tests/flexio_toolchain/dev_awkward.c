/*
 * Device code for the dpacc round trip (roundtrip.c): the forms a device
 * source may take that dpacc's parser must read, and arguments of every kind
 * it accepts. Each RPC mixes its arguments (toolchain_common.h) so that the
 * host can check they all arrived intact and in their places.
 *
 * Built without the libflexio-dev headers: the two types needed from them are
 * declared here. TOOLCHAIN_SCALE comes from the command line (-D).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "toolchain_common.h"

typedef uint64_t flexio_uintptr_t;
typedef void (flexio_dev_event_handler_t)(uint64_t);
/* an alias of the handler type: resolved through two typedefs */
typedef flexio_dev_event_handler_t handler_alias_t;

enum colour { RED = 1, GREEN = 2, BLUE = -3 };	/* signed (negative enumerator) */
enum small { SMALL_A = 7 };			/* unsigned in GCC and clang */
typedef int32_t my_i32;
typedef unsigned short u16_t;

/* A comment naming __dpa_rpc__ uint64_t not_a_function(int x); is no declaration. */
// __dpa_global__ void nor_is_this(uint64_t arg);
static const char banner[] = "__dpa_rpc__ uint64_t nor_this_string(void);";

#define DEVICE_RPC __dpa_rpc__

/* Per-copy state: each loaded image has its own. */
uint64_t dev_counter;
uint64_t last_event;
uint64_t alias_hits;

/* Static helpers are not device functions. */
static uint64_t helper_twice(uint64_t x)
{
	return 2 * x;
}

static inline uint64_t helper_banner(void)
{
	return (uint64_t)banner[0];
}

/* Attributes before, a prototype over several lines. */
__attribute__((noinline)) __dpa_rpc__ uint64_t
rpc_widths(int8_t s8, uint8_t u8,
	   int16_t s16, uint16_t u16,
	   int32_t s32, uint32_t u32,
	   int64_t s64, uint64_t u64)
{
	uint64_t h = 0;

	h = TC_MIXS(h, s8);
	h = TC_MIXU(h, u8);
	h = TC_MIXS(h, s16);
	h = TC_MIXU(h, u16);
	h = TC_MIXS(h, s32);
	h = TC_MIXU(h, u32);
	h = TC_MIXS(h, s64);
	h = TC_MIXU(h, u64);
	return h;
}

/*
 * Structs and unions by value, each size the host's packer takes as words:
 * in registers, split from the registers left, and in memory. DPACC's
 * struct marker is accepted.
 */
struct __dpa_global__ tc_marked {
	uint32_t lo, hi;
};

__dpa_rpc__ uint64_t rpc_structs(uint8_t k, struct tc_small s, struct tc_pair p, const struct tc_big b,
				 union tc_word w, struct tc_marked m, uint32_t last)
{
	uint64_t h = TC_MIXU(0, k);

	h = TC_MIXU(TC_MIXU(h, s.a), s.b);
	h = TC_MIXU(TC_MIXU(h, p.x), p.y);
	h = tc_mix_big(h, &b);
	h = TC_MIXU(h, w.u);
	h = TC_MIXU(TC_MIXU(h, m.lo), m.hi);
	return TC_MIXU(h, last);
}

/* A 16-byte struct after five words: one register left, so all of it in memory. */
__dpa_rpc__ uint64_t rpc_pair_late(uint64_t a, uint64_t b, uint64_t c, struct tc_pair p)
{
	return TC_MIXU(TC_MIXU(TC_MIXU(TC_MIXU(TC_MIXU(0, a), b), c), p.x), p.y);
}

/* Declared first with unnamed parameters, defined further down. */
__dpa_rpc__ uint64_t rpc_c_types(char, signed char, unsigned char, short, unsigned short, int,
				 unsigned int, long, unsigned long, long long, unsigned long long);

/* The attribute after the declarator; qualified, typedef'd and pointer arguments. */
__dpa_rpc__ int32_t rpc_misc(bool flag, enum colour col, const enum small sm, const char *str,
			     flexio_uintptr_t daddr, my_i32 neg, u16_t half, void (*cb)(int),
			     volatile uint8_t *vp) __attribute__((warn_unused_result));

__dpa_rpc__ uint64_t rpc_none(void)
{
	return 0x1234 * TOOLCHAIN_SCALE + helper_banner() - '_';
}

__dpa_rpc__ void rpc_void(uint64_t *out, uint32_t v)
{
	*out = helper_twice(v) + v;
}

/* A narrow signed result: the unpacker returns it sign-extended. */
__dpa_rpc__ int8_t rpc_neg8(int8_t x)
{
	return (int8_t)(x - 1);
}

/* Handlers declared through their typedef, defined without the keyword. */
__dpa_global__ flexio_dev_event_handler_t on_event;
__dpa_global__ handler_alias_t on_alias_a, on_alias_b;

void on_event(uint64_t thread_arg)
{
	last_event = thread_arg ^ 0x5555;
}

void on_alias_a(uint64_t arg)
{
	alias_hits += arg;
}

void on_alias_b(uint64_t arg)
{
	alias_hits += 1000 * arg;
}

DEVICE_RPC uint64_t rpc_macro(uint16_t x)
{
	return (uint64_t)x << 1;
}

/* The keyword after the return type, and extern. */
extern uint64_t __dpa_rpc__ rpc_marker_late(uint64_t a);

uint64_t rpc_marker_late(uint64_t a)
{
	return ~a;
}

__dpa_rpc__ uint64_t rpc_comments(uint32_t a /* the first, named __dpa_rpc__ */,
				  // the second on its own line
				  uint64_t b)
{
	return TC_MIXU(TC_MIXU(0, a), b);
}

/* A function-pointer argument, called back on the host's function. */
__dpa_rpc__ uint64_t rpc_fnptr(uint64_t (*op)(uint64_t, uint64_t), uint64_t a, uint64_t b)
{
	return op(a, b) + 1;
}

__dpa_rpc__ const char *rpc_ptr_ret(const char *s, uint8_t skip)
{
	return s + skip;
}

__dpa_rpc__ uint64_t rpc_bump(uint64_t by)
{
	dev_counter += by;
	return dev_counter;
}

/* Calls another device function: the image's own, not the host stub of that name. */
__dpa_rpc__ uint64_t rpc_chain(uint64_t by)
{
	rpc_bump(by);
	return rpc_bump(by);
}

#ifdef DPACC_TEST_RT
uint64_t toolchain_rt_value(void); /* from the device runtime archive (rt_fake.c) */

__dpa_rpc__ uint64_t rpc_rt(void)
{
	return toolchain_rt_value();
}
#endif

uint64_t rpc_c_types(char c, signed char sc, unsigned char uc, short s, unsigned short us, int i,
		     unsigned int u, long l, unsigned long ul, long long ll, unsigned long long ull)
{
	uint64_t h = 0;

	h = TC_MIXS(h, c);
	h = TC_MIXS(h, sc);
	h = TC_MIXU(h, uc);
	h = TC_MIXS(h, s);
	h = TC_MIXU(h, us);
	h = TC_MIXS(h, i);
	h = TC_MIXU(h, u);
	h = TC_MIXS(h, l);
	h = TC_MIXU(h, ul);
	h = TC_MIXS(h, ll);
	h = TC_MIXU(h, ull);
	return h;
}

int32_t rpc_misc(bool flag, enum colour col, const enum small sm, const char *str,
		 flexio_uintptr_t daddr, my_i32 neg, u16_t half, void (*cb)(int), volatile uint8_t *vp)
{
	uint64_t h = 0;

	h = TC_MIXU(h, flag);
	h = TC_MIXS(h, col);
	h = TC_MIXU(h, sm);
	for (int k = 0; str[k] != '\0'; k++)
		h = TC_MIXU(h, (unsigned char)str[k]);
	h = TC_MIXU(h, daddr);
	h = TC_MIXS(h, neg);
	h = TC_MIXU(h, half);
	h = TC_MIXU(h, *vp);
	cb((int)(h & 0xff));
	return TC_MISC_RET(h);
}
