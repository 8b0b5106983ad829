/*
 * ibv_reg_mr of private anonymous memory moves its pages onto shareable
 * memory (fab_share.c) while the program's other threads keep running:
 * a thread that writes into those pages meanwhile (its own data next to the
 * buffer being registered, as heap neighbours are) must lose no write.
 * Each round: a thread counts in a word of a fresh mapping while this
 * thread registers the whole mapping; the count must come out exact.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"
#include "verbs_fixture.h"

#define LEN (64 * 4096)
#define ROUNDS 40
#define COUNTS 3000000u

struct counter {
	volatile uint64_t *word;
	int started; /* atomic */
};

static void *count(void *arg)
{
	struct counter *c = arg;

	__atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < COUNTS; i++)
		*c->word += 1; /* plain stores, as any program's own data */
	return NULL;
}

static void test_no_lost_writes(void)
{
	struct ibv_context *ctx = vf_open();
	struct ibv_pd *pd = ctx != NULL ? ibv_alloc_pd(ctx) : NULL;
	uint32_t lost_rounds = 0;

	CHECK(pd != NULL);
	for (int r = 0; r < ROUNDS && pd != NULL; r++) {
		uint8_t *m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct counter c = { .word = (volatile uint64_t *)(m + LEN / 2) };
		struct ibv_mr *mr;
		pthread_t t;

		CHECK(m != MAP_FAILED);
		if (m == MAP_FAILED)
			break;
		memset(m, 0, LEN);
		CHECK_OK(pthread_create(&t, NULL, count, &c));
		while (!__atomic_load_n(&c.started, __ATOMIC_ACQUIRE))
			;
		mr = ibv_reg_mr(pd, m, LEN, IBV_ACCESS_LOCAL_WRITE);
		CHECK(mr != NULL);
		pthread_join(t, NULL);
		if (*c.word != COUNTS)
			lost_rounds++;
		if (mr != NULL)
			ibv_dereg_mr(mr);
		munmap(m, LEN);
	}
	CHECK(lost_rounds == 0);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
}

int main(void)
{
	RUN(test_no_lost_writes);
	return th_summary("test_verbs_mr_move");
}
