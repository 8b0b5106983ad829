/*
 * The engine thread's arming for raw doorbells (src/hw/hw_eng_raw.h): how
 * long it spins after a doorbell a program wrote itself, and the longest
 * sleep between looks, as functions of the doorbells seen. Times are given,
 * not measured: the policy is checked, not the machine.
 */
#include "harness.h"
#include "hw_eng_raw.h"

#define T0 1000000000ull

/* No doorbell yet: no spin, and the idle ceiling (a QP never rung costs least). */
static void test_none_yet(void)
{
	struct hw_eng_raw r;

	hw_eng_raw_init(&r);
	CHECK(!hw_eng_raw_spinning(&r, T0));
	CHECK(hw_eng_raw_max_sleep(&r, T0) == HW_ENG_POLL_IDLE_MAX_NS);
}

/* A lone doorbell: the short spin, then the busy ceiling until it is HW_ENG_QUIET_NS old. */
static void test_lone_doorbell(void)
{
	struct hw_eng_raw r;

	hw_eng_raw_init(&r);
	hw_eng_raw_seen(&r, T0);
	CHECK(hw_eng_raw_spinning(&r, T0 + HW_ENG_SPIN_NS - 1));
	CHECK(!hw_eng_raw_spinning(&r, T0 + HW_ENG_SPIN_NS));
	CHECK(hw_eng_raw_max_sleep(&r, T0 + HW_ENG_QUIET_NS - 1) == HW_ENG_POLL_MAX_NS);
	CHECK(hw_eng_raw_max_sleep(&r, T0 + HW_ENG_QUIET_NS) == HW_ENG_POLL_IDLE_MAX_NS);
}

/* Doorbells 200 µs apart (a ping-pong slower than the short spin): the spin stretches to 4x the gap. */
static void test_rhythm_stretches_spin(void)
{
	struct hw_eng_raw r;
	uint64_t t = T0;

	hw_eng_raw_init(&r);
	for (int i = 0; i < 4; i++, t += 200000)
		hw_eng_raw_seen(&r, t);
	t -= 200000;
	CHECK(r.gap == 200000);
	CHECK(hw_eng_raw_spinning(&r, t + 799999));
	CHECK(!hw_eng_raw_spinning(&r, t + 800000));
}

/* Doorbells closer than the short spin: at least HW_ENG_SPIN_NS. */
static void test_fast_rhythm_floor(void)
{
	struct hw_eng_raw r;

	hw_eng_raw_init(&r);
	hw_eng_raw_seen(&r, T0);
	hw_eng_raw_seen(&r, T0 + 1000);
	CHECK(r.spin == HW_ENG_SPIN_NS);
}

/* Gaps at the longest spin: the spin is capped there; a longer gap is a quiet spell, not averaged in. */
static void test_cap_and_quiet_spell(void)
{
	struct hw_eng_raw r;

	hw_eng_raw_init(&r);
	hw_eng_raw_seen(&r, T0);
	hw_eng_raw_seen(&r, T0 + HW_ENG_RAW_SPIN_MAX_NS);
	CHECK(r.spin == HW_ENG_RAW_SPIN_MAX_NS);
	hw_eng_raw_init(&r);
	hw_eng_raw_seen(&r, T0);
	hw_eng_raw_seen(&r, T0 + 100000);
	hw_eng_raw_seen(&r, T0 + 100000 + 10 * HW_ENG_RAW_SPIN_MAX_NS);
	CHECK(r.gap == 100000);
	CHECK(r.spin == 400000);
}

int main(void)
{
	RUN(test_none_yet);
	RUN(test_lone_doorbell);
	RUN(test_rhythm_stretches_spin);
	RUN(test_fast_rhythm_floor);
	RUN(test_cap_and_quiet_spell);
	return th_summary("test_hw_eng_raw");
}
