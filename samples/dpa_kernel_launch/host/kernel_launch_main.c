/*
 * dpa_kernel_launch — a DOCA DPA host program in the SDK's style.
 *
 * Build: as a vendor sample, with the SDK's dpacc for the device side and
 * pkg-config doca-dpa for the host side (meson.build).
 */
#include <stdio.h>
#include <stdlib.h>

#include "dpa_common.h"

doca_error_t kernel_launch(struct dpa_resources *resources);

int main(void)
{
	struct dpa_resources resources = { 0 };
	doca_error_t r = allocate_dpa_resources(&resources), r2;

	if (r != DOCA_SUCCESS)
		return EXIT_FAILURE;
	r = kernel_launch(&resources);
	r2 = destroy_dpa_resources(&resources);
	fflush(stdout);
	if (r != DOCA_SUCCESS || r2 != DOCA_SUCCESS) {
		fprintf(stderr, "dpa_kernel_launch: %s\n", doca_get_error_string(r != DOCA_SUCCESS ? r : r2));
		return EXIT_FAILURE;
	}
	printf("dpa_kernel_launch: OK\n");
	return EXIT_SUCCESS;
}
