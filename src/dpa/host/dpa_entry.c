/*
 * dpa_entry — the device library's entries as FlexIO functions of each
 * app: registered by name once per app (a registration lives as long as its
 * app), so contexts of one app share them.
 */
#include <stdlib.h>

#include "dpa_int.h"

struct dpa_entry {
	struct dpa_entry *next;
	struct flexio_app *app;
	struct dpa_entries fns;
};

static pthread_mutex_t dpa_entry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dpa_entry *dpa_entries;

int dpa_entries_of(struct flexio_app *app, struct dpa_entries *out)
{
	struct dpa_entry *e;
	int rc = -1;

	pthread_mutex_lock(&dpa_entry_mu);
	for (e = dpa_entries; e != NULL && e->app != app; e = e->next)
		;
	if (e != NULL)
		goto found;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		goto out;
	if (flexio_func_register(app, DPA_RT_ENTRY_NAME, &e->fns.entry) != FLEXIO_STATUS_SUCCESS ||
	    flexio_func_register(app, DPA_RT_LOOKUP_NAME, &e->fns.lookup) != FLEXIO_STATUS_SUCCESS) {
		free(e); /* a registration made stays the app's, as every registration */
		goto out;
	}
	e->app = app;
	e->next = dpa_entries;
	dpa_entries = e;
found:
	*out = e->fns;
	rc = 0;
out:
	pthread_mutex_unlock(&dpa_entry_mu);
	return rc;
}

__attribute__((destructor)) static void dpa_entry_fini(void)
{
	while (dpa_entries != NULL) {
		struct dpa_entry *e = dpa_entries;

		dpa_entries = e->next;
		free(e);
	}
}
