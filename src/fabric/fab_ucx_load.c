/*
 * fab_ucx_load — loading UCX on the first use of the UCX transport.
 *
 * libucp.so.0 is opened with RTLD_LOCAL, so none of its symbols become
 * visible to the program, and every function fab_ucx.c calls is looked up
 * and checked once. Loading runs UCX's constructors, which by default install
 * UCX's handlers for crash signals; a program that did not ask for UCX keeps
 * its own crash handling (see give_back_signals).
 */
#include "fab_ucx_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"

#define UCX_LIBRARY "libucp.so.0"

struct fab_ucx_api fab_ucx;

static const char *libname = UCX_LIBRARY;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static atomic_int load_started;
static int load_result = -1;

static int resolve(void *h, const char *name, void *slot)
{
	void *p = dlsym(h, name);

	if (p == NULL) {
		BASE_ERR("UCX fabric: %s has no %s: memory of other machines is out of reach", libname, name);
		return -1;
	}
	memcpy(slot, &p, sizeof(p));
	return 0;
}

/* The member must have the type of UCX's own prototype: checked at build time. */
#define RESOLVE(api, h, fn)                                                                                            \
	do {                                                                                                           \
		_Static_assert(__builtin_types_compatible_p(__typeof__((api)->fn), __typeof__(&fn)),                   \
			       #fn " differs from UCX's prototype");                                                    \
		if (resolve(h, #fn, &(api)->fn) != 0)                                                                  \
			return -1;                                                                                     \
	} while (0)

static int resolve_all(void *h, struct fab_ucx_api *api)
{
	RESOLVE(api, h, ucp_init_version);
	RESOLVE(api, h, ucp_cleanup);
	RESOLVE(api, h, ucp_config_read);
	RESOLVE(api, h, ucp_config_modify);
	RESOLVE(api, h, ucp_config_release);
	RESOLVE(api, h, ucp_worker_create);
	RESOLVE(api, h, ucp_worker_destroy);
	RESOLVE(api, h, ucp_worker_get_efd);
	RESOLVE(api, h, ucp_worker_arm);
	RESOLVE(api, h, ucp_worker_progress);
	RESOLVE(api, h, ucp_worker_query);
	RESOLVE(api, h, ucp_worker_release_address);
	RESOLVE(api, h, ucp_worker_set_am_recv_handler);
	RESOLVE(api, h, ucp_ep_create);
	RESOLVE(api, h, ucp_ep_close_nbx);
	RESOLVE(api, h, ucp_am_send_nbx);
	RESOLVE(api, h, ucp_am_recv_data_nbx);
	RESOLVE(api, h, ucp_request_check_status);
	RESOLVE(api, h, ucp_request_free);
	RESOLVE(api, h, ucs_status_string); /* libucs: found through libucp's dependencies */
	return 0;
}

static int user_configured(const char *const *vars)
{
	for (; *vars != NULL; vars++)
		if (getenv(*vars) != NULL)
			return 1;
	return 0;
}

/*
 * UCX's constructor (UCX_HANDLE_ERRORS=bt by default) took SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE and its debug signal, and gave the loading thread an
 * alternate signal stack. Unless the user configured that handling, every
 * handler that lives in libucs goes back to what the program had: UCX's
 * ucs_debug_disable_signal restores the action UCX saved and forgets the
 * signal, so UCX's clean-up at exit does not touch it either.
 */
static void give_back_signals(void *h, const stack_t *old_stack)
{
	static const char *const vars[] = { "UCX_HANDLE_ERRORS", "UCX_ERROR_SIGNALS", "UCX_DEBUG_SIGNO", NULL };
	void (*disable)(int);
	void *sym = dlsym(h, "ucs_debug_disable_signal");
	Dl_info ucs, hd;

	if (user_configured(vars))
		return;
	if (sym == NULL || dladdr((void *)fab_ucx.ucs_status_string, &ucs) == 0) {
		BASE_WARN("UCX fabric: cannot take the signal handlers back from UCX");
		return;
	}
	memcpy(&disable, &sym, sizeof(sym));
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		void *fn;

		if (sigaction(sig, NULL, &sa) != 0)
			continue;
		fn = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
		if (fn != (void *)SIG_DFL && fn != (void *)SIG_IGN && dladdr(fn, &hd) != 0 &&
		    hd.dli_fbase == ucs.dli_fbase)
			disable(sig);
	}
	sigaltstack(old_stack, NULL);
}

static void load(void)
{
	struct fab_ucx_api api;
	stack_t old_stack;
	int ours;
	void *h;

	atomic_store(&load_started, 1);
	/* A program that brought UCX itself keeps UCX as it configured it. */
	h = dlopen(libname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	ours = h == NULL;
	if (h == NULL) {
		sigaltstack(NULL, &old_stack);
		h = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
	}
	if (h == NULL) {
		BASE_ERR("UCX fabric: cannot load %s (%s): memory of other machines is out of reach", libname,
		       dlerror());
		return;
	}
	if (resolve_all(h, &api) != 0) {
		dlclose(h);
		return;
	}
	fab_ucx = api;
	if (ours)
		give_back_signals(h, &old_stack);
	load_result = 0;
}

int fab_ucx_load(void)
{
	pthread_once(&load_once, load);
	return load_result;
}

int fab_ucx_use_library(const char *soname)
{
	if (soname == NULL || atomic_load(&load_started))
		return -1;
	libname = soname;
	return 0;
}
