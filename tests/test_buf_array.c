/*
 * test_buf_array — doca_buf_arr_*: create/set_params/start/stop/destroy rules,
 * the fit check at start, the GPU target and handle (not supported by the
 * emulated device) and NULL arguments.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf_array.h"
#include "doca_mmap.h"
#include "harness.h"
#include "mem_fixture.h"

static uint8_t mem[4096];

static struct doca_mmap *make_mmap(bool start)
{
	uint32_t perm = MEM_FX_PERM_DEFAULT; /* as created */

	return start ? mem_fx_mmap(NULL, mem, sizeof(mem), perm) : mem_fx_mmap_configured(NULL, mem, sizeof(mem), perm);
}

static void test_life_cycle(void)
{
	struct doca_buf_arr *ba;
	struct doca_mmap *m;
	uint32_t v;

	CHECK((m = make_mmap(false)) != NULL);
	CHECK_OK(doca_buf_arr_create(m, &ba));
	/* the array holds its mmap for its whole life, without being a buffer */
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_BAD_STATE); /* no params */
	CHECK_ERR(doca_buf_arr_stop(ba), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_buf_arr_set_params(ba, 64, 64, 0));
	CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_NOT_PERMITTED); /* mmap not started */
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_buf_arr_start(ba));
	CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_arr_set_params(ba, 32, 2, 0), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_arr_destroy(ba), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_buf_arr_stop(ba));
	CHECK_ERR(doca_buf_arr_stop(ba), DOCA_ERROR_BAD_STATE);
	/* reconfigure and start again */
	CHECK_OK(doca_buf_arr_set_params(ba, 1, 4096, 0));
	CHECK_OK(doca_buf_arr_start(ba));
	CHECK_OK(doca_buf_arr_stop(ba));
	CHECK_OK(doca_buf_arr_destroy(ba));
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);
	CHECK_OK(doca_mmap_stop(m));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_fit(void)
{
	static const struct {
		size_t elem;
		uint32_t num;
		uint64_t off;
		int expect;
	} cases[] = {
		{ 64, 64, 0, DOCA_SUCCESS },
		{ 64, 63, 64, DOCA_SUCCESS },
		{ 1, 1, 4095, DOCA_SUCCESS },
		{ 4096, 1, 0, DOCA_SUCCESS },
		{ 1000, 4, 96, DOCA_SUCCESS },
		{ 64, 65, 0, DOCA_ERROR_INVALID_VALUE },
		{ 64, 64, 1, DOCA_ERROR_INVALID_VALUE },
		{ 1, 1, 4096, DOCA_ERROR_INVALID_VALUE },
		{ 1, 1, 4097, DOCA_ERROR_INVALID_VALUE },
		{ 4097, 1, 0, DOCA_ERROR_INVALID_VALUE },
		{ 1000, 4, 97, DOCA_ERROR_INVALID_VALUE },
		{ SIZE_MAX, 2, 0, DOCA_ERROR_INVALID_VALUE },		/* elem * num overflows */
		{ (SIZE_MAX / 2) + 2, 2, 0, DOCA_ERROR_INVALID_VALUE }, /* wraps to a small product */
		{ 1, UINT32_MAX, 0, DOCA_ERROR_INVALID_VALUE },
		{ 1, 1, UINT64_MAX, DOCA_ERROR_INVALID_VALUE },
	};
	struct doca_mmap *m;

	CHECK((m = make_mmap(true)) != NULL);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct doca_buf_arr *ba;
		int r;

		CHECK_OK(doca_buf_arr_create(m, &ba));
		CHECK_OK(doca_buf_arr_set_params(ba, cases[c].elem, cases[c].num, cases[c].off));
		r = doca_buf_arr_start(ba);
		if (r != cases[c].expect)
			TH_FAIL("case %zu (elem %zu num %u off %llu): start returned %d, expected %d", c, cases[c].elem,
				cases[c].num, (unsigned long long)cases[c].off, r, cases[c].expect);
		if (r == DOCA_SUCCESS)
			CHECK_OK(doca_buf_arr_stop(ba));
		CHECK_OK(doca_buf_arr_destroy(ba));
		if (th_case_failed)
			break;
	}
	/* a refused start leaves the array configurable */
	{
		struct doca_buf_arr *ba;

		CHECK_OK(doca_buf_arr_create(m, &ba));
		CHECK_OK(doca_buf_arr_set_params(ba, 64, 65, 0));
		CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(doca_buf_arr_stop(ba), DOCA_ERROR_BAD_STATE);
		CHECK_OK(doca_buf_arr_set_params(ba, 64, 64, 0));
		CHECK_OK(doca_buf_arr_start(ba));
		CHECK_OK(doca_buf_arr_stop(ba));
		CHECK_OK(doca_buf_arr_destroy(ba));
	}
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_gpu_not_supported(void)
{
	struct doca_gpu_buf_arr *h = (struct doca_gpu_buf_arr *)0x1;
	struct doca_buf_arr *ba;
	struct doca_mmap *m;
	int fake_gpu;

	CHECK((m = make_mmap(true)) != NULL);
	CHECK_OK(doca_buf_arr_create(m, &ba));
	CHECK_ERR(doca_buf_arr_set_target_gpu(ba, (struct doca_gpu *)&fake_gpu), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_buf_arr_get_gpu_handle(ba, &h), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK(h == (struct doca_gpu_buf_arr *)0x1);
	CHECK_OK(doca_buf_arr_set_params(ba, 16, 16, 0));
	CHECK_OK(doca_buf_arr_start(ba));
	CHECK_ERR(doca_buf_arr_get_gpu_handle(ba, &h), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_buf_arr_set_target_gpu(ba, (struct doca_gpu *)&fake_gpu), DOCA_ERROR_BAD_STATE); /* started */
	CHECK_OK(doca_buf_arr_stop(ba));
	CHECK_OK(doca_buf_arr_destroy(ba));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_null_args(void)
{
	struct doca_gpu_buf_arr *h;
	struct doca_buf_arr *ba = NULL;
	struct doca_mmap *m;
	int fake_gpu;
	uint32_t v;

	CHECK((m = make_mmap(true)) != NULL);
	CHECK_ERR(doca_buf_arr_create(NULL, &ba), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_create(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(ba == NULL);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);
	CHECK_ERR(doca_buf_arr_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_set_params(NULL, 1, 1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_set_target_gpu(NULL, (struct doca_gpu *)&fake_gpu), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_get_gpu_handle(NULL, &h), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_arr_create(m, &ba));
	CHECK_ERR(doca_buf_arr_set_params(ba, 0, 1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_set_params(ba, 1, 0, 0), DOCA_ERROR_INVALID_VALUE);
	/* refused params are not taken */
	CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_arr_set_target_gpu(ba, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_arr_get_gpu_handle(ba, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_arr_destroy(ba));
	CHECK_OK(doca_mmap_destroy(m));
}

int main(void)
{
	RUN(test_life_cycle);
	RUN(test_fit);
	RUN(test_gpu_not_supported);
	RUN(test_null_args);
	return th_summary("test_buf_array");
}
