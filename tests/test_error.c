/* Error names and descriptions. */
#include <string.h>

#include "doca_error.h"
#include "doca_version.h"
#include "harness.h"

static void test_names(void)
{
	CHECK(strcmp(doca_get_error_name(DOCA_SUCCESS), "DOCA_SUCCESS") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_INVALID_VALUE), "DOCA_ERROR_INVALID_VALUE") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_ALREADY_EXIST), "DOCA_ERROR_ALREADY_EXIST") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_FULL), "DOCA_ERROR_FULL") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_EMPTY), "DOCA_ERROR_EMPTY") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_IN_PROGRESS), "DOCA_ERROR_IN_PROGRESS") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_TOO_BIG), "DOCA_ERROR_TOO_BIG") == 0);
}

static void test_every_code_has_text(void)
{
	for (int e = DOCA_SUCCESS; e <= DOCA_ERROR_TOO_BIG; e++) {
		const char *n = doca_get_error_name((doca_error_t)e);
		const char *s = doca_get_error_string((doca_error_t)e);

		CHECK(n != NULL && s != NULL && strlen(s) > 3);
		CHECK(strncmp(n, "DOCA_", 5) == 0);
		for (int f = DOCA_SUCCESS; f < e; f++)
			CHECK(strcmp(n, doca_get_error_name((doca_error_t)f)) != 0);
	}
}

static void test_unknown_code(void)
{
	CHECK(strcmp(doca_get_error_name((doca_error_t)999), "DOCA_ERROR_UNKNOWN") == 0);
	CHECK(strcmp(doca_get_error_name((doca_error_t)-1), "DOCA_ERROR_UNKNOWN") == 0);
	CHECK(strcmp(doca_get_error_string((doca_error_t)12345), doca_get_error_string(DOCA_ERROR_UNKNOWN)) == 0);
}

static void test_propagate(void)
{
	doca_error_t r = DOCA_SUCCESS;

	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_AGAIN);
	CHECK(r == DOCA_ERROR_AGAIN);
	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_IN_USE);
	CHECK(r == DOCA_ERROR_AGAIN);
	CHECK(DOCA_IS_ERROR(r));
}

static void test_version(void)
{
	CHECK(strcmp(doca_version(), DOCA_VER_STRING) == 0);
	CHECK(strcmp(doca_version_runtime(), doca_version()) == 0);
	CHECK(DOCA_VERSION_LTE_CURRENT(2, 0, 2));
	CHECK(!DOCA_VERSION_LTE_CURRENT(3, 0, 0));
}

int main(void)
{
	RUN(test_names);
	RUN(test_every_code_has_text);
	RUN(test_unknown_code);
	RUN(test_propagate);
	RUN(test_version);
	return th_summary("test_error");
}
