/*
 * DOCA argp program flags: creation, setters and destruction.
 * Setters take a NULL param as a no-op with a log line (the vendor leaves it undefined).
 */
#include <stdlib.h>
#include <string.h>

#include "argp_priv.h"
#include "dc_log.h"

doca_error_t doca_argp_param_create(struct doca_argp_param **param)
{
	struct doca_argp_param *p;

	if (param == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*param = p;
	return DOCA_SUCCESS;
}

void dargp_param_free(struct doca_argp_param *param)
{
	free(param->short_name);
	free(param->long_name);
	free(param->arguments);
	free(param->description);
	free(param);
}

doca_error_t doca_argp_param_destroy(struct doca_argp_param *param)
{
	if (param == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (param->registered) {
		DC_ERR("param is owned by argp since registration; doca_argp_destroy() frees it");
		return DOCA_ERROR_BAD_STATE;
	}
	dargp_param_free(param);
	return DOCA_SUCCESS;
}

/* Replace *slot with a copy of text (NULL clears it). */
static void dargp_set_string(struct doca_argp_param *param, char **slot, const char *text, const char *what)
{
	char *copy = NULL;

	if (param == NULL) {
		DC_ERR("NULL param given to set its %s", what);
		return;
	}
	if (param->registered) {
		DC_ERR("param already registered, %s not changed", what);
		return;
	}
	if (text != NULL) {
		copy = strdup(text);
		if (copy == NULL) {
			param->no_memory = true;
			return;
		}
	}
	free(*slot);
	*slot = copy;
}

void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name)
{
	dargp_set_string(param, param ? &param->short_name : NULL, name, "short name");
}

void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name)
{
	dargp_set_string(param, param ? &param->long_name : NULL, name, "long name");
}

void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments)
{
	dargp_set_string(param, param ? &param->arguments : NULL, arguments, "arguments");
}

void doca_argp_param_set_description(struct doca_argp_param *param, const char *description)
{
	dargp_set_string(param, param ? &param->description : NULL, description, "description");
}

static bool dargp_param_settable(struct doca_argp_param *param, const char *what)
{
	if (param == NULL) {
		DC_ERR("NULL param given to set its %s", what);
		return false;
	}
	if (param->registered) {
		DC_ERR("param already registered, %s not changed", what);
		return false;
	}
	return true;
}

void doca_argp_param_set_callback(struct doca_argp_param *param, callback_func callback)
{
	if (dargp_param_settable(param, "callback"))
		param->callback = callback;
}

void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type)
{
	if (dargp_param_settable(param, "type"))
		param->type = type;
}

void doca_argp_param_set_mandatory(struct doca_argp_param *param)
{
	if (dargp_param_settable(param, "mandatory flag"))
		param->mandatory = true;
}

void doca_argp_param_set_cli_only(struct doca_argp_param *param)
{
	if (dargp_param_settable(param, "cli-only flag"))
		param->cli_only = true;
}

void doca_argp_param_set_multiplicity(struct doca_argp_param *param)
{
	if (dargp_param_settable(param, "multiplicity"))
		param->multiplicity = true;
}
