/*
 * softdpu — DOCA argument parser (DOCA 2.2 shape).
 *
 * A program registers its flags (doca_argp_param_*), then doca_argp_start()
 * parses the command line, hands each value to the flag's callback together
 * with the program configuration, and forwards the flags after "--" to the
 * DPDK callback. Every program also gets -h/--help, -v/--version,
 * -l/--log-level and --sdk-log-level.
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flag callback: (value, program_config). value is char *, int * or bool * by the flag's type. */
typedef doca_error_t (*callback_func)(void *, void *);

/** Receives the DPDK flags (argv[0] followed by what came after "--"). */
typedef doca_error_t (*dpdk_callback)(int argc, char **argv);

/** Receives the program configuration once every flag was parsed. */
typedef doca_error_t (*validation_callback)(void *);

/* Names later DOCA releases use for the same types. */
typedef callback_func doca_argp_param_cb_t;
typedef dpdk_callback doca_argp_dpdk_cb_t;
typedef validation_callback doca_argp_validation_cb_t;

/** Type of a flag's value. */
enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING,	 /**< text, callback gets char * */
	DOCA_ARGP_TYPE_INT,	 /**< integer, callback gets int * */
	DOCA_ARGP_TYPE_BOOLEAN,	 /**< flag without argument, callback gets bool * (true) */
	DOCA_ARGP_TYPE_JSON_OBJ, /**< JSON object, JSON configuration files only */
};

/** A program flag (opaque). */
struct doca_argp_param;

/** Print the usage text to stdout and exit(EXIT_SUCCESS). */
DOCA_EXPERIMENTAL
void doca_argp_usage(void);

/** Start a parser session; program_name may be NULL (argv[0] is used), program_config may be NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_init(const char *program_name, void *program_config);

/** Register a flag. The parser owns the param from here on, also when registration fails. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);

/** Replace the default -v/--version output; the callback gets (NULL, program_config), then the process exits. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_version_callback(callback_func callback);

/** Called with program_config after all flags were parsed. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_validation_callback(validation_callback callback);

/** Parse the command line. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_start(int argc, char **argv);

/** Free every registered flag and the DPDK argument copy; ends the session. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_destroy(void);

/** Mark the program as DPDK based: flags after "--" go to callback. */
DOCA_EXPERIMENTAL
void doca_argp_set_dpdk_program(dpdk_callback callback);

/** gRPC mode is not supported by softdpu: doca_argp_start() then returns DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
void doca_argp_set_grpc_program(void);

/** Not supported by softdpu: returns DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_grpc_addr(char **addr);

DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_create(struct doca_argp_param **param);

DOCA_EXPERIMENTAL
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);

DOCA_EXPERIMENTAL
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);

/** Argument placeholder shown in the usage text, e.g. "<PCI-ADDRESS>". */
DOCA_EXPERIMENTAL
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);

DOCA_EXPERIMENTAL
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);

DOCA_EXPERIMENTAL
void doca_argp_param_set_callback(struct doca_argp_param *param, callback_func callback);

DOCA_EXPERIMENTAL
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);

DOCA_EXPERIMENTAL
void doca_argp_param_set_mandatory(struct doca_argp_param *param);

DOCA_EXPERIMENTAL
void doca_argp_param_set_cli_only(struct doca_argp_param *param);

/** Allow the flag more than once; each occurrence calls the callback. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);

/** Free a param that was not registered. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/** Application log level given with -l/--log-level, else the current global lower limit. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_log_level(int *log_level);

/** SDK log level given with --sdk-log-level, else the current global SDK limit. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_sdk_log_level(int *log_level);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ARGP_H_ */
