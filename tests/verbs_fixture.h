/*
 * Opening the first device for a verbs test, closed when the case ends.
 * The tests call the libraries through the public headers, as a program does.
 */
#ifndef SOFTDPU_TEST_VERBS_FIXTURE_H_
#define SOFTDPU_TEST_VERBS_FIXTURE_H_

#include <infiniband/verbs.h>

#include "harness.h"

static inline void vf_close_cb(void *arg)
{
	ibv_close_device(arg);
}

static inline void vf_free_list_cb(void *arg)
{
	ibv_free_device_list(arg);
}

static inline void vf_dealloc_pd_cb(void *arg)
{
	ibv_dealloc_pd(arg);
}

static inline void vf_dereg_cb(void *arg)
{
	ibv_dereg_mr(arg);
}

/* The device list, freed when the case ends; NULL on failure. */
static inline struct ibv_device **vf_list(int *n)
{
	struct ibv_device **l = ibv_get_device_list(n);

	if (l != NULL)
		th_defer(vf_free_list_cb, l);
	return l;
}

/* The first device, opened; closed when the case ends. NULL on failure. */
static inline struct ibv_context *vf_open(void)
{
	struct ibv_device **l;
	struct ibv_context *c;
	int n = 0;

	l = vf_list(&n);
	if (l == NULL || n < 1)
		return NULL;
	c = ibv_open_device(l[0]);
	if (c != NULL)
		th_defer(vf_close_cb, c);
	return c;
}

static inline struct ibv_pd *vf_pd(struct ibv_context *c)
{
	struct ibv_pd *pd = ibv_alloc_pd(c);

	if (pd != NULL)
		th_defer(vf_dealloc_pd_cb, pd);
	return pd;
}

#endif /* SOFTDPU_TEST_VERBS_FIXTURE_H_ */
