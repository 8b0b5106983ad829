/*
 * Internal state shared by the files of the DOCA argument parser.
 */
#ifndef DARGP_PRIV_H_
#define DARGP_PRIV_H_

#include <stdbool.h>
#include <stdio.h>

#include "doca_argp.h"

struct doca_argp_param {
	struct doca_argp_param *next;
	char *short_name;
	char *long_name;
	char *arguments;
	char *description;
	callback_func callback;
	enum doca_argp_type type;
	bool mandatory;
	bool cli_only;
	bool multiplicity;
	bool registered;
	bool no_memory; /* a setter failed to copy its string */
	bool seen;	/* given on the current command line */
};

struct dargp_state {
	bool initialized;
	bool started;
	char *program_name;
	void *program_config;
	struct doca_argp_param *params; /* registration order */
	struct doca_argp_param *params_tail;
	callback_func version_cb;
	validation_callback validation_cb;
	dpdk_callback dpdk_cb;
	bool grpc;
	int log_level;	   /* -1 until -l/--log-level is given */
	int sdk_log_level; /* -1 until --sdk-log-level is given */
	int dpdk_argc;
	char **dpdk_argv;
};

extern struct dargp_state dargp_g;

/* argp_param.c */
void dargp_param_free(struct doca_argp_param *param);

/* argp_usage.c */
void dargp_print_usage(FILE *out);
void dargp_print_version(FILE *out);

#endif /* DARGP_PRIV_H_ */
