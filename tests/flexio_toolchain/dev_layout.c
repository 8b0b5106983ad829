/*
 * Device code for the installed-layout test: toolchain_layout.h exists only
 * in the include/ directory of the test's fake prefix, so this builds only if
 * build_flexio_device.sh put <prefix>/include on the include path.
 */
#include <stdint.h>

#include <toolchain_layout.h>

__dpa_rpc__ uint64_t rpc_layout(uint32_t a)
{
	return a + TOOLCHAIN_LAYOUT_VALUE;
}
