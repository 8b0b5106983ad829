/*
 * fx_window — FlexIO windows (device code reaching host memory through an
 * MKey), outboxes (the doorbells of device code) and device MKeys (MKeys
 * over DPA memory).
 */
#include "fx_int.h"

void *fx_window_ptr(void *proc, uint32_t window_id, uint32_t mkey, uint64_t haddr, uint64_t len, int write)
{
	(void)proc;
	(void)window_id;
	(void)mkey;
	(void)haddr;
	(void)len;
	(void)write;
	return NULL;
}

int fx_outbox_check(void *proc, uint32_t outbox_id)
{
	(void)proc;
	(void)outbox_id;
	return -1;
}

void fx_window_fini(struct flexio_process *p)
{
	(void)p;
}
