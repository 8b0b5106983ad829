/*
 * vb_alloc — the buffer placement a program asks of mlx5 for a queue's
 * rings through MLX_QP_ALLOC_TYPE, MLX_CQ_ALLOC_TYPE and MLX_SRQ_ALLOC_TYPE
 * (read at every creation, as mlx5 does). The rings here are the device's
 * shareable queue blocks, never placed on huge pages or contiguous pages:
 * the PREFER_ kinds and ALL fall back to them as mlx5 falls back to its
 * default buffer, while HUGE and CONTIG, which mlx5 never lets fall back,
 * fail the creation with ENOMEM as mlx5 fails when it gets no such pages.
 * ANON, an unknown value or none is the default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "vb_int.h"

int vb_alloc_type_errno(const char *component)
{
	char name[32];
	const char *v;

	snprintf(name, sizeof(name), "%s_ALLOC_TYPE", component);
	v = getenv(name);
	if (v != NULL && (strcasecmp(v, "HUGE") == 0 || strcasecmp(v, "CONTIG") == 0))
		return ENOMEM;
	return 0;
}
