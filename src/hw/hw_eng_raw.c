/*
 * hw_eng_raw — the engine thread's arming for raw doorbells (hw_eng_raw.h).
 */
#include "hw_eng_raw.h"

static uint64_t raw_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void hw_eng_raw_init(struct hw_eng_raw *r)
{
	*r = (struct hw_eng_raw){ .spin = HW_ENG_SPIN_NS };
}

void hw_eng_raw_seen(struct hw_eng_raw *r, uint64_t now)
{
	if (r->last != 0 && now >= r->last) {
		uint64_t g = now - r->last;

		/* Longer than the longest spin: a quiet spell no spin could bridge, not a rhythm. */
		if (g <= HW_ENG_RAW_SPIN_MAX_NS)
			r->gap = r->gap == 0 ? g : (r->gap * 3 + g) / 4;
	}
	r->last = now;
	r->spin = raw_min(r->gap * 4, HW_ENG_RAW_SPIN_MAX_NS);
	if (r->spin < HW_ENG_SPIN_NS)
		r->spin = HW_ENG_SPIN_NS;
}

int hw_eng_raw_spinning(const struct hw_eng_raw *r, uint64_t now)
{
	return r->last != 0 && now - r->last < r->spin;
}

uint64_t hw_eng_raw_max_sleep(const struct hw_eng_raw *r, uint64_t now)
{
	return r->last != 0 && now - r->last < HW_ENG_QUIET_NS ? HW_ENG_POLL_MAX_NS : HW_ENG_POLL_IDLE_MAX_NS;
}
