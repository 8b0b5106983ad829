/*
 * Fuzz target: the verbs service of a machine (src/fabric/fab_xm_serve.c)
 * as it receives requests of another machine over UCX: any bytes either
 * refused as malformed or answered within the reply room given, never
 * more; this process serves no machine, so a well-formed request finds no
 * shadow and is answered as an unreachable destination.
 */
#include <stdlib.h>
#include <string.h>

#include "fab_ucx.h"
#include "fab_xm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rep[FAB_XM_REP_SIZE + 4096];
	uint64_t rlen = 0, cap = size > 0 ? data[0] * 17u % sizeof(rep) : sizeof(rep);
	uint32_t st = fab_xm_service(data, size, rep, cap, &rlen);

	if (st == FAB_UCX_ST_OK && (rlen < FAB_XM_REP_SIZE || rlen > cap))
		abort();
	return 0;
}
