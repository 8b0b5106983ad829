/*
 * vb_clock — the device's clocks as verbs reads them.
 *
 * The device's free-running clock is CLOCK_MONOTONIC in nanoseconds (hw's
 * CQE timestamps; hca_core_clock 1 GHz), so a cycle count is a nanosecond
 * count. Its real-time view (a CQ's wall-clock timestamps,
 * mlx5dv_get_clock_info) adds CLOCK_REALTIME's offset from it, read when
 * asked, as a card in real-time clock mode stamps UTC nanoseconds.
 */
#include <errno.h>
#include <time.h>

#include "vb_int.h"

static uint64_t vb_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t vb_clock_device_ns(void)
{
	return vb_clock_ns(CLOCK_MONOTONIC);
}

uint64_t vb_clock_wall_of(uint64_t device_ns)
{
	return device_ns + (vb_clock_ns(CLOCK_REALTIME) - vb_clock_ns(CLOCK_MONOTONIC));
}

/* ibv_query_rt_values_ex(3): the raw clock, as mlx5 reports it (all of it in tv_nsec). */
int vb_query_rt_values(struct ibv_context *c, struct ibv_values_ex *values)
{
	if (vb_ctx_checked(c) == NULL || values == NULL)
		return EINVAL;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)vb_clock_device_ns();
	}
	return 0;
}
