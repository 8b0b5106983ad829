/*
 * fx_err — a process's unrecoverable-error state: set by a hart when device
 * code crashed or reported a fatal error, seen through flexio_err_status and
 * a pollable fd, reported (and reset) by flexio_err_display.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fx_int.h"

void fx_err_set(struct flexio_process *p, enum fx_err_kind kind, int sig, uint64_t code, uintptr_t addr,
		const char *func)
{
	uint64_t one = 1;

	pthread_mutex_lock(&p->lock);
	if (p->err_kind == FX_ERR_NONE) { /* the first error is the one reported */
		p->err_kind = kind;
		p->err_sig = sig;
		p->err_code = code;
		p->err_addr = addr;
		snprintf(p->err_func, sizeof(p->err_func), "%s", func != NULL ? func : "?");
	}
	pthread_mutex_unlock(&p->lock);
	if (p->err_fd >= 0 && write(p->err_fd, &one, sizeof(one)) < 0)
		BASE_WARN("cannot signal the error fd: %s", strerror(errno));
	BASE_ERR("FlexIO process: device function %s %s", func != NULL ? func : "?",
		 kind == FX_ERR_SIGNAL ? "crashed" : "reported a fatal error");
}

int flexio_err_status(struct flexio_process *process)
{
	int st;

	if (process == NULL)
		return FLEXIO_DEV_NO_ERROR;
	pthread_mutex_lock(&process->lock);
	st = process->err_kind == FX_ERR_NONE ? FLEXIO_DEV_NO_ERROR
	     : process->err_kind == FX_ERR_FATAL && process->err_code != 0 ? FLEXIO_DEV_USER_ERROR
									   : FLEXIO_DEV_FATAL_ERROR;
	pthread_mutex_unlock(&process->lock);
	return st;
}

int flexio_err_handler_fd(struct flexio_process *process)
{
	return process != NULL ? process->err_fd : -1;
}

void flexio_err_display(struct flexio_process *process)
{
	uint64_t v;

	if (process == NULL)
		return;
	pthread_mutex_lock(&process->lock);
	switch (process->err_kind) {
	case FX_ERR_NONE:
		fprintf(stderr, "FlexIO process (app %s): no error\n", process->app->name);
		break;
	case FX_ERR_SIGNAL:
		fprintf(stderr, "FlexIO process (app %s): device function %s crashed: %s at address %#lx\n",
			process->app->name, process->err_func, strsignal(process->err_sig),
			(unsigned long)process->err_addr);
		break;
	case FX_ERR_FATAL:
		fprintf(stderr, "FlexIO process (app %s): device function %s ended with a fatal error, code %#llx\n",
			process->app->name, process->err_func, (unsigned long long)process->err_code);
		break;
	}
	process->err_kind = FX_ERR_NONE; /* displaying resets the status, as the SDK says */
	pthread_mutex_unlock(&process->lock);
	if (process->err_fd >= 0 && read(process->err_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		BASE_WARN("cannot drain the error fd: %s", strerror(errno));
}
