/*
 * Fuzz target: the checks of UCX wire messages (src/fabric/fab_ucx.c) — a
 * request header with its payload length as an exporter receives it from an
 * untrusted importer, and a reply header as an importer receives it.
 */
#include <stdlib.h>
#include <string.h>

#include "fab_ucx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t h[FAB_UCX_REQ_SIZE] = { 0 };
	unsigned op;
	uint64_t len;
	size_t payload = size > FAB_UCX_REQ_SIZE ? size - FAB_UCX_REQ_SIZE : 0;

	memcpy(h, data, size < sizeof(h) ? size : sizeof(h));
	if (fab_ucx_req_valid(h, payload, &op, &len)) {
		if ((op != FAB_UCX_OP_READ && op != FAB_UCX_OP_WRITE && op != FAB_UCX_OP_CALL) || len > FAB_UCX_MAX_LEN ||
		    (op != FAB_UCX_OP_READ && len != payload) || (op == FAB_UCX_OP_READ && payload != 0))
			abort();
	}
	(void)fab_ucx_rep_valid(data, size);
	return 0;
}
