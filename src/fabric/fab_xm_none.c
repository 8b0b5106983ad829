/*
 * fab_xm_none — a build without UCX has no path between machines: nothing
 * serves them, and hw has no transport to send their requests with, so a
 * QP aimed at another machine ends in retries exceeded.
 */
#include "fab_xm.h"

int fab_xm_serve(void)
{
	return -1;
}

bool fab_ucx_probing(void)
{
	return false;
}

uint32_t fab_xm_service(const uint8_t *req, uint64_t len, uint8_t *rep, uint64_t cap, uint64_t *rlen)
{
	(void)req;
	(void)len;
	(void)rep;
	(void)cap;
	if (rlen != NULL)
		*rlen = 0;
	return 4; /* FAB_UCX_ST_MALFORMED: no service here */
}
