/*
 * Device sources dpacc must refuse, one per CASE_* macro (run.py defines one
 * at a time and checks the message). A line carrying "@where" is where the
 * message must point.
 */
#include <stdint.h>

typedef void (flexio_dev_event_handler_t)(uint64_t);
struct pair {
	uint32_t a, b;
};
struct mixed {
	uint64_t n;
	double d; /* its own eightbyte: passed in a floating-point register */
};

#if defined(CASE_STRUCT)
__dpa_rpc__ uint64_t rpc_struct(uint64_t x, struct mixed p) /* @where */
{
	return x + p.n + (uint64_t)p.d;
}
#elif defined(CASE_DOUBLE)
__dpa_rpc__ uint64_t rpc_double(uint32_t a, uint8_t b,
				double d) /* @where */
{
	return (uint64_t)(a + b + d);
}
#elif defined(CASE_VARIADIC)
__dpa_rpc__ uint64_t rpc_variadic(uint64_t count, ...); /* @where */
#elif defined(CASE_UNION)
union word {
	_Alignas(16) uint64_t u;
	double d;
};
__dpa_rpc__ uint64_t rpc_union(union word w) /* @where */
{
	return w.u;
}
#elif defined(CASE_ARRAY)
__dpa_rpc__ uint64_t rpc_array(uint32_t v[4]) /* @where */
{
	return v[0];
}
#elif defined(CASE_INT128)
__dpa_rpc__ uint64_t rpc_wide(__int128 w) /* @where */
{
	return (uint64_t)w;
}
#elif defined(CASE_RET_STRUCT)
__dpa_rpc__ struct pair rpc_ret_struct(uint32_t a) /* @where */
{
	struct pair p = { a, a };

	return p;
}
#elif defined(CASE_HANDLER_RET)
__dpa_global__ uint64_t handler_ret(uint64_t arg) /* @where */
{
	return arg;
}
#elif defined(CASE_STATIC)
static __dpa_rpc__ uint64_t rpc_static(void) /* @where */
{
	return 1;
}
#elif defined(CASE_SYNTAX)
/* a function returning a function pointer: beyond dpacc's declarator parser */
static uint64_t zero(void)
{
	return 0;
}

__dpa_rpc__ uint64_t (*rpc_pick(int which))(void) /* @where */
{
	return which ? zero : 0;
}
#elif defined(CASE_SYNTAX_HEADER)
/* the same kind of failure inside an included header: its file:line */
#include "refusals_header.h"
#elif defined(CASE_MEMBER)
struct ops {
	__dpa_rpc__ uint64_t (*fn)(uint64_t); /* @where */
};
#elif defined(CASE_NOT_FUNCTION)
__dpa_global__ uint64_t counter; /* @where */
#elif defined(CASE_UNKNOWN_TYPE)
__dpa_rpc__ uint64_t rpc_unknown(mystery_t m)
{
	return (uint64_t)m;
}
#elif defined(CASE_UNDEFINED)
/* accepted with a warning: the device runtime may define it */
__dpa_rpc__ uint64_t rpc_elsewhere(uint64_t a); /* @where */
#elif defined(CASE_NONE)
/* accepted with a warning: no device function at all */
uint64_t nothing(void);
#endif
