/*
 * Multi-process tests: the test binary starts itself again (/proc/self/exe)
 * in a role, on one side of the card (SOFTDPU_SIDE), and talks to it with
 * text lines: it writes to the role's stdin and reads the role's stdout.
 *
 * Every wait is bounded (TH_PROC_WAIT_MS, a hang guard, never a measurement),
 * so a dead or stuck role fails the test instead of hanging it. A started
 * role is registered with the harness: when the case ends, passed or failed,
 * a role still alive is killed and reaped and its pipes are closed. A role
 * also dies with the test process (parent-death signal).
 */
#ifndef SOFTDPU_TEST_TH_PROC_H_
#define SOFTDPU_TEST_TH_PROC_H_

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define TH_PROC_WAIT_MS 30000
#define TH_PROC_LINE_MAX 16384
#define TH_PROC_MAX_ARGS 16

extern char **environ;

struct th_proc {
	pid_t pid;
	int in;		/* the role's stdin (we write), -1 once closed */
	int out;	/* the role's stdout (we read) */
	int wait_ms;	/* bound of every wait on this role */
	bool reaped;
	int status;	/* once reaped: exit code, or 128 + signal */
	size_t used;
	char buf[TH_PROC_LINE_MAX];
	char line[TH_PROC_LINE_MAX];
};

static inline int th_proc_code(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	return WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : -1;
}

static inline void th_proc_cleanup(void *arg)
{
	struct th_proc *p = arg;
	int ws;

	if (!p->reaped) {
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, &ws, 0) < 0 && errno == EINTR)
			;
	}
	if (p->in >= 0)
		close(p->in);
	close(p->out);
	free(p);
}

/* The environment of this process with SOFTDPU_SIDE replaced by side (NULL: kept). Built before fork. */
static inline char **th_proc_env(const char *side, char *sidevar, size_t cap)
{
	size_t n = 0, k = 0;
	char **envp;

	while (environ[n] != NULL)
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (envp == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (side == NULL || strncmp(environ[i], "SOFTDPU_SIDE=", 13) != 0)
			envp[k++] = environ[i];
	if (side != NULL) {
		snprintf(sidevar, cap, "SOFTDPU_SIDE=%s", side);
		envp[k] = sidevar;
	}
	return envp;
}

/* In the child: stdin/stdout become the pipes, then the binary starts over. Never returns. */
static inline void th_proc_exec(pid_t parent, int to[2], int from[2], char **argv, char **envp)
{
	/* A role never outlives the test, even one that crashed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	/* The pipes are close-on-exec; the copies on 0 and 1 are not. */
	if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
		_exit(126);
	execve("/proc/self/exe", argv, envp);
	_exit(127);
}

static inline struct th_proc *th_proc_startv(const char *side, const char *role, va_list ap)
{
	char *argv[TH_PROC_MAX_ARGS + 2] = { "/proc/self/exe", (char *)role };
	char sidevar[64];
	int to[2] = { -1, -1 }, from[2] = { -1, -1 }, n = 2;
	struct th_proc *p = calloc(1, sizeof(*p));
	char **envp = th_proc_env(side, sidevar, sizeof(sidevar));
	const char *a;
	pid_t parent = getpid();

	while ((a = va_arg(ap, const char *)) != NULL && n < TH_PROC_MAX_ARGS + 1)
		argv[n++] = (char *)a;
	/* A role that died must fail the write, not kill the test with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (p == NULL || envp == NULL || pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0)
		goto err;
	fflush(NULL); /* nothing buffered may be written twice */
	p->pid = fork();
	if (p->pid < 0)
		goto err;
	if (p->pid == 0)
		th_proc_exec(parent, to, from, argv, envp);
	free(envp);
	close(to[0]);
	close(from[1]);
	p->in = to[1];
	p->out = from[0];
	p->wait_ms = TH_PROC_WAIT_MS;
	th_defer(th_proc_cleanup, p);
	return p;
err:
	for (int i = 0; i < 2; i++) {
		if (to[i] >= 0)
			close(to[i]);
		if (from[i] >= 0)
			close(from[i]);
	}
	free(envp);
	free(p);
	return NULL;
}

/*
 * Starts this binary as: <exe> role [args...] (NULL-terminated), with
 * SOFTDPU_SIDE=side (NULL: this process's environment as it is).
 * Returns NULL when it cannot; the harness releases the role after the case.
 */
static inline struct th_proc *th_proc_start(const char *side, const char *role, ...)
{
	struct th_proc *p;
	va_list ap;

	va_start(ap, role);
	p = th_proc_startv(side, role, ap);
	va_end(ap);
	return p;
}

/* Writes one line to the role; 0, or -1 when it cannot take it (gone, or its stdin closed). */
static inline int th_proc_send(struct th_proc *p, const char *fmt, ...)
{
	char line[TH_PROC_LINE_MAX];
	va_list ap;
	size_t len, off = 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (p->in < 0 || n < 0 || (size_t)n >= sizeof(line) - 1)
		return -1;
	len = (size_t)n;
	line[len++] = '\n';
	while (off < len) {
		ssize_t k = write(p->in, line + off, len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

static inline int th_proc_ms_left(const struct timespec *end)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : (int)ms;
}

/*
 * The role's next line (without its newline), valid until the next call; NULL
 * when the role closed its stdout, or said nothing for wait_ms.
 */
static inline const char *th_proc_line(struct th_proc *p)
{
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += p->wait_ms / 1000;
	end.tv_nsec += (long)(p->wait_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	for (;;) {
		char *nl = memchr(p->buf, '\n', p->used);
		struct pollfd pf = { .fd = p->out, .events = POLLIN };
		ssize_t n;
		int r;

		if (nl != NULL) {
			size_t len = (size_t)(nl - p->buf);

			memcpy(p->line, p->buf, len);
			p->line[len] = '\0';
			memmove(p->buf, nl + 1, p->used - len - 1);
			p->used -= len + 1;
			return p->line;
		}
		if (p->used == sizeof(p->buf)) {
			fprintf(stderr, "role %d: line longer than %d bytes\n", (int)p->pid, TH_PROC_LINE_MAX);
			return NULL;
		}
		r = poll(&pf, 1, th_proc_ms_left(&end));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1) {
			fprintf(stderr, "role %d: no answer in %d ms\n", (int)p->pid, p->wait_ms);
			return NULL;
		}
		n = read(p->out, p->buf + p->used, sizeof(p->buf) - p->used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		p->used += (size_t)n;
	}
}

/* Whether the role still runs (reaps it when it has ended). */
static inline bool th_proc_alive(struct th_proc *p)
{
	int ws;

	if (p->reaped)
		return false;
	if (waitpid(p->pid, &ws, WNOHANG) != p->pid)
		return true;
	p->reaped = true;
	p->status = th_proc_code(ws);
	return false;
}

static inline void th_proc_kill(struct th_proc *p)
{
	if (!p->reaped)
		kill(p->pid, SIGKILL);
}

/* Closes the role's stdin (its end of input) without waiting. */
static inline void th_proc_close_input(struct th_proc *p)
{
	if (p->in >= 0)
		close(p->in);
	p->in = -1;
}

/*
 * Closes the role's stdin and waits for it to end, at most wait_ms; returns
 * its exit code, 128 + the signal that ended it, or -1 when it had to be killed.
 */
static inline int th_proc_wait(struct th_proc *p)
{
	struct timespec end;
	int ws;

	th_proc_close_input(p);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += p->wait_ms / 1000 + 1;
	while (th_proc_alive(p)) {
		if (th_proc_ms_left(&end) == 0) {
			fprintf(stderr, "role %d: did not end in %d ms, killed\n", (int)p->pid, p->wait_ms);
			kill(p->pid, SIGKILL);
			while (waitpid(p->pid, &ws, 0) < 0 && errno == EINTR)
				;
			p->reaped = true;
			p->status = -1;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
	}
	return p->status;
}

/* Binary data (descriptors, blobs) travels between roles as one hex line. */
static inline void th_hex_encode(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

/* Returns the number of bytes, or -1 for a line that is not hex or too long. */
static inline long th_hex_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n = strcspn(s, "\r\n");
	unsigned int b;

	if (n % 2 != 0 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	return (long)(n / 2);
}

#endif /* SOFTDPU_TEST_TH_PROC_H_ */
