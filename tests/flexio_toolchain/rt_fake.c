/*
 * A stand-in device runtime for dpacc's --dev-rt: two archive members, one
 * the device code calls (rpc_rt in dev_awkward.c) and one nothing references,
 * which is in the image only if the archive is linked whole.
 */
#include <stdint.h>

#ifdef RT_PART_UNREFERENCED
int toolchain_rt_unreferenced(void);
int toolchain_rt_unreferenced(void)
{
	return 1;
}
#else
uint64_t toolchain_rt_value(void);
uint64_t toolchain_rt_value(void)
{
	return 0x7007;
}
#endif
