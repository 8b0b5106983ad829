/*
 * fx_app — apps (device images) and their functions: what the generated
 * constructor of a device library registers, and what the program looks up.
 */
#include <stdlib.h>
#include <string.h>

#include "fx_int.h"

static struct {
	pthread_mutex_t mu;
	struct flexio_app *apps;
} reg = { .mu = PTHREAD_MUTEX_INITIALIZER };

static bool fx_name_ok(const char *name)
{
	return name != NULL && name[0] != '\0' && strnlen(name, FLEXIO_MAX_NAME_LEN + 1) <= FLEXIO_MAX_NAME_LEN;
}

flexio_status flexio_app_create(const char *name, void *elf_buffer, size_t buffer_size, struct flexio_app **app_ptr)
{
	struct flexio_app *app;

	if (app_ptr == NULL || !fx_name_ok(name) || elf_buffer == NULL || buffer_size == 0) {
		BASE_ERR("invalid argument (name, ELF buffer and size, app pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	app = calloc(1, sizeof(*app));
	if (app == NULL || (app->elf = malloc(buffer_size)) == NULL) {
		free(app);
		BASE_ERR("out of memory for app %s", name);
		return FLEXIO_STATUS_FAILED;
	}
	memcpy(app->elf, elf_buffer, buffer_size); /* the SDK copies the image: the caller's may go */
	app->elf_size = buffer_size;
	strcpy(app->name, name);
	pthread_mutex_lock(&reg.mu);
	app->next = reg.apps;
	reg.apps = app;
	pthread_mutex_unlock(&reg.mu);
	*app_ptr = app;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_app_destroy(struct flexio_app *app)
{
	struct flexio_app **pp;

	if (app == NULL)
		return FLEXIO_STATUS_FAILED;
	pthread_mutex_lock(&reg.mu);
	for (pp = &reg.apps; *pp != NULL && *pp != app; pp = &(*pp)->next)
		;
	if (*pp == NULL || app->users != 0) {
		pthread_mutex_unlock(&reg.mu);
		BASE_ERR(*pp == NULL ? "not an app" : "app %s still has processes", app->name);
		return FLEXIO_STATUS_FAILED;
	}
	*pp = app->next;
	pthread_mutex_unlock(&reg.mu);
	while (app->funcs != NULL) {
		struct fx_func *f = app->funcs;

		app->funcs = f->next;
		if (!f->pup)
			free((void *)f->stub); /* flexio_func_register's handle is ours */
		free(f);
	}
	free(app->elf);
	free(app);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_app_get_elf(struct flexio_app *app, uint64_t *bin_buff, size_t bin_size)
{
	if (app == NULL || bin_buff == NULL || bin_size < app->elf_size) {
		BASE_ERR("invalid argument (app, buffer, or a buffer smaller than the ELF)");
		return FLEXIO_STATUS_FAILED;
	}
	memcpy(bin_buff, app->elf, app->elf_size);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_app_get_list(struct flexio_app ***app_list, uint32_t *num_apps)
{
	struct flexio_app **l;
	uint32_t n = 0;

	if (app_list == NULL || num_apps == NULL)
		return FLEXIO_STATUS_FAILED;
	pthread_mutex_lock(&reg.mu);
	for (struct flexio_app *a = reg.apps; a != NULL; a = a->next)
		n++;
	l = calloc(n + 1, sizeof(*l));
	if (l == NULL) {
		pthread_mutex_unlock(&reg.mu);
		return FLEXIO_STATUS_FAILED;
	}
	n = 0;
	for (struct flexio_app *a = reg.apps; a != NULL; a = a->next)
		l[n++] = a;
	pthread_mutex_unlock(&reg.mu);
	*app_list = l;
	*num_apps = n;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_app_list_free(struct flexio_app **apps_list)
{
	free(apps_list);
	return FLEXIO_STATUS_SUCCESS;
}

void fx_app_get(struct flexio_app *app)
{
	pthread_mutex_lock(&reg.mu);
	app->users++;
	pthread_mutex_unlock(&reg.mu);
}

void fx_app_put(struct flexio_app *app)
{
	pthread_mutex_lock(&reg.mu);
	app->users--;
	pthread_mutex_unlock(&reg.mu);
}

struct fx_func *fx_func_find(struct flexio_app *app, flexio_func_t *stub)
{
	struct fx_func *f;

	pthread_mutex_lock(&reg.mu);
	for (f = app->funcs; f != NULL && f->stub != stub; f = f->next)
		;
	pthread_mutex_unlock(&reg.mu);
	return f;
}

static flexio_status fx_func_add(struct flexio_app *app, const char *name, const char *unpack, flexio_func_t *stub,
				 size_t argbuf_size, flexio_func_arg_pack_fn_t *pack, bool pup)
{
	struct fx_func *f;

	if (fx_func_find(app, stub) != NULL) {
		BASE_ERR("function %s: its host stub is registered already", name);
		return FLEXIO_STATUS_FAILED;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return FLEXIO_STATUS_FAILED;
	strcpy(f->name, name);
	if (unpack != NULL)
		strcpy(f->unpack_name, unpack);
	f->stub = stub;
	f->argbuf_size = argbuf_size;
	f->pack = pack;
	f->pup = pup;
	pthread_mutex_lock(&reg.mu);
	f->next = app->funcs;
	app->funcs = f;
	pthread_mutex_unlock(&reg.mu);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_func_pup_register(struct flexio_app *app, const char *dev_func_name,
				       const char *dev_unpack_func_name, flexio_func_t *host_stub_func_addr,
				       size_t argbuf_size, flexio_func_arg_pack_fn_t *host_pack_func)
{
	if (app == NULL || !fx_name_ok(dev_func_name) || !fx_name_ok(dev_unpack_func_name) ||
	    host_stub_func_addr == NULL || host_pack_func == NULL) {
		BASE_ERR("invalid argument (app, names, stub, pack function)");
		return FLEXIO_STATUS_FAILED;
	}
	return fx_func_add(app, dev_func_name, dev_unpack_func_name, host_stub_func_addr, argbuf_size, host_pack_func,
			   true);
}

flexio_status flexio_func_register(struct flexio_app *app, const char *dev_func_name, flexio_func_t **out_func)
{
	flexio_func_t *stub;
	flexio_status st;

	if (app == NULL || !fx_name_ok(dev_func_name) || out_func == NULL) {
		BASE_ERR("invalid argument (app, name, out_func)");
		return FLEXIO_STATUS_FAILED;
	}
	/* No host stub exists: the handle is an address of ours, unique per registration. */
	stub = (flexio_func_t *)malloc(1);
	if (stub == NULL)
		return FLEXIO_STATUS_FAILED;
	st = fx_func_add(app, dev_func_name, NULL, stub, 0, NULL, false);
	if (st != FLEXIO_STATUS_SUCCESS) {
		free((void *)stub);
		return st;
	}
	*out_func = stub;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_func_get_register_info(struct flexio_app *app, flexio_func_t *host_stub_func_addr,
					    uint32_t *pup, char *dev_func_name, char *dev_unpack_func_name,
					    size_t func_name_size, size_t *argbuf_size,
					    flexio_func_arg_pack_fn_t **host_pack_func, flexio_uintptr_t *dev_func_addr,
					    flexio_uintptr_t *dev_unpack_func_addr)
{
	struct fx_func *f = app != NULL && host_stub_func_addr != NULL ? fx_func_find(app, host_stub_func_addr) : NULL;

	if (f == NULL || pup == NULL || dev_func_name == NULL || dev_unpack_func_name == NULL || argbuf_size == NULL ||
	    host_pack_func == NULL || dev_func_addr == NULL || dev_unpack_func_addr == NULL) {
		BASE_ERR("invalid argument, or the function is not registered with this app");
		return FLEXIO_STATUS_FAILED;
	}
	if (func_name_size <= strlen(f->name) || func_name_size <= strlen(f->unpack_name)) {
		BASE_ERR("name buffers of %zu bytes are too small for %s", func_name_size, f->name);
		return FLEXIO_STATUS_FAILED;
	}
	*pup = f->pup;
	strcpy(dev_func_name, f->name);
	strcpy(dev_unpack_func_name, f->unpack_name);
	*argbuf_size = f->argbuf_size;
	*host_pack_func = f->pack;
	/* Addresses in an image exist once a process loaded it: 0 here, as before any load on the card. */
	*dev_func_addr = 0;
	*dev_unpack_func_addr = 0;
	return FLEXIO_STATUS_SUCCESS;
}

const char *flexio_app_get_name(struct flexio_app *app)
{
	return app != NULL ? app->name : NULL;
}

size_t flexio_app_get_elf_size(struct flexio_app *app)
{
	return app != NULL ? app->elf_size : 0;
}
