/*
 * dpa_common — the first device, its DPA context, and the samples' events.
 */
#include <stdio.h>

#include "dpa_common.h"

static doca_error_t open_first_device(struct doca_dev **dev)
{
	struct doca_devinfo **list;
	uint32_t n;
	doca_error_t r;

	r = doca_devinfo_list_create(&list, &n);
	if (r != DOCA_SUCCESS)
		return r;
	r = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n && r != DOCA_SUCCESS; i++)
		r = doca_dev_open(list[i], dev);
	doca_devinfo_list_destroy(list);
	return r;
}

doca_error_t allocate_dpa_resources(struct dpa_resources *resources)
{
	doca_error_t r = open_first_device(&resources->doca_device);

	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "no device: %s\n", doca_get_error_string(r));
		return r;
	}
	r = doca_dpa_create(resources->doca_device, dpa_sample_app, &resources->doca_dpa, 0);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "doca_dpa_create: %s\n", doca_get_error_string(r));
		doca_dev_close(resources->doca_device);
	}
	return r;
}

doca_error_t destroy_dpa_resources(struct dpa_resources *resources)
{
	doca_error_t r = doca_dpa_destroy(resources->doca_dpa), r2 = doca_dev_close(resources->doca_device);

	return r != DOCA_SUCCESS ? r : r2;
}

static doca_error_t make_event(struct doca_dpa *dpa, struct doca_dev *dev, int dpa_publishes,
			       struct doca_sync_event **event)
{
	doca_error_t r = doca_sync_event_create(event);

	if (r != DOCA_SUCCESS)
		return r;
	r = dpa_publishes ? doca_sync_event_publisher_add_location_dpa(*event, dpa)
			  : doca_sync_event_publisher_add_location_cpu(*event, dev);
	if (r == DOCA_SUCCESS)
		r = dpa_publishes ? doca_sync_event_subscriber_add_location_cpu(*event, dev)
				  : doca_sync_event_subscriber_add_location_dpa(*event, dpa);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_start(*event);
	if (r != DOCA_SUCCESS)
		doca_sync_event_destroy(*event);
	return r;
}

doca_error_t create_doca_dpa_wait_sync_event(struct doca_dpa *dpa, struct doca_dev *dev,
					     struct doca_sync_event **event)
{
	return make_event(dpa, dev, 0, event);
}

doca_error_t create_doca_dpa_completion_sync_event(struct doca_dpa *dpa, struct doca_dev *dev,
						   struct doca_sync_event **event)
{
	return make_event(dpa, dev, 1, event);
}
