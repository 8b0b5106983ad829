/*
 * dpa_entry — the device library's entry as a FlexIO function of each app:
 * registered by name once per app (a registration lives as long as its
 * app), so contexts of one app share it.
 */
#include <stdlib.h>

#include "dpa_int.h"

struct dpa_entry {
	struct dpa_entry *next;
	struct flexio_app *app;
	flexio_func_t *fn;
};

static pthread_mutex_t dpa_entry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dpa_entry *dpa_entries;

flexio_func_t *dpa_entry_of(struct flexio_app *app)
{
	struct dpa_entry *e;
	flexio_func_t *fn = NULL;

	pthread_mutex_lock(&dpa_entry_mu);
	for (e = dpa_entries; e != NULL && e->app != app; e = e->next)
		;
	if (e != NULL) {
		fn = e->fn;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		goto out;
	if (flexio_func_register(app, DPA_RT_ENTRY_NAME, &e->fn) != FLEXIO_STATUS_SUCCESS) {
		free(e);
		goto out;
	}
	e->app = app;
	e->next = dpa_entries;
	dpa_entries = e;
	fn = e->fn;
out:
	pthread_mutex_unlock(&dpa_entry_mu);
	return fn;
}

__attribute__((destructor)) static void dpa_entry_fini(void)
{
	while (dpa_entries != NULL) {
		struct dpa_entry *e = dpa_entries;

		dpa_entries = e->next;
		free(e);
	}
}
