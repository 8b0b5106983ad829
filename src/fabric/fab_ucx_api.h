/*
 * fab_ucx_api — the UCX functions of the UCX transport, resolved at run time.
 *
 * The library does not link UCX: most programs never reach another machine,
 * and a loaded UCX puts its signal handlers and memory hooks into the
 * program. fab_ucx_load() opens libucp.so.0 the first time the UCX transport
 * is used and fills fab_ucx with the functions fab_ucx.c calls; UCX's headers
 * only give the types and constants at build time. See docs/fabric_ucx.md.
 */
#ifndef FAB_UCX_API_H_
#define FAB_UCX_API_H_

#include <ucp/api/ucp.h>

/* Members carry the names of the UCX functions they point to. */
struct fab_ucx_api {
	ucs_status_t (*ucp_init_version)(unsigned api_major_version, unsigned api_minor_version,
					 const ucp_params_t *params, const ucp_config_t *config, ucp_context_h *ctx);
	void (*ucp_cleanup)(ucp_context_h ctx);
	ucs_status_t (*ucp_config_read)(const char *env_prefix, const char *filename, ucp_config_t **config_p);
	ucs_status_t (*ucp_config_modify)(ucp_config_t *config, const char *name, const char *value);
	void (*ucp_config_release)(ucp_config_t *config);
	ucs_status_t (*ucp_worker_create)(ucp_context_h ctx, const ucp_worker_params_t *params, ucp_worker_h *w);
	void (*ucp_worker_destroy)(ucp_worker_h w);
	ucs_status_t (*ucp_worker_get_efd)(ucp_worker_h w, int *fd);
	ucs_status_t (*ucp_worker_arm)(ucp_worker_h w);
	unsigned (*ucp_worker_progress)(ucp_worker_h w);
	ucs_status_t (*ucp_worker_query)(ucp_worker_h w, ucp_worker_attr_t *attr);
	void (*ucp_worker_release_address)(ucp_worker_h w, ucp_address_t *addr);
	ucs_status_t (*ucp_worker_set_am_recv_handler)(ucp_worker_h w, const ucp_am_handler_param_t *param);
	ucs_status_t (*ucp_ep_create)(ucp_worker_h w, const ucp_ep_params_t *params, ucp_ep_h *ep);
	ucs_status_ptr_t (*ucp_ep_close_nbx)(ucp_ep_h ep, const ucp_request_param_t *param);
	ucs_status_ptr_t (*ucp_am_send_nbx)(ucp_ep_h ep, unsigned id, const void *header, size_t header_length,
					    const void *buffer, size_t count, const ucp_request_param_t *param);
	ucs_status_ptr_t (*ucp_am_recv_data_nbx)(ucp_worker_h w, void *data_desc, void *buffer, size_t count,
						 const ucp_request_param_t *param);
	ucs_status_t (*ucp_request_check_status)(void *request);
	void (*ucp_request_free)(void *request);
	const char *(*ucs_status_string)(ucs_status_t status);
};

/* Valid once fab_ucx_load() returned 0. */
extern struct fab_ucx_api fab_ucx;

/*
 * Loads UCX once per process (thread-safe). 0 when every function resolved;
 * -1 (after one log line, and on every later call) when the library or a
 * function is missing: the UCX transport is then unavailable.
 */
int fab_ucx_load(void);

/*
 * Tests: the library fab_ucx_load() opens instead of libucp.so.0. 0 when
 * taken; -1 once loading was attempted (it happens once per process).
 */
int fab_ucx_use_library(const char *soname);

#endif /* FAB_UCX_API_H_ */
