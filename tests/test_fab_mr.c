/*
 * Device-wide memory keys: a key registered and shared in one process is
 * reached from another by its number alone, with the owner's bounds, rights
 * and domain; it stops working there the moment its owner deregisters it or
 * dies, and a forged number reaches nothing.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fab_mr.h"
#include "harness.h"
#include "hw_ids.h"
#include "hw_mem.h"

#define LEN 8192

/* What the owner tells the other side. */
struct hello {
	uint32_t key;	   /* remote read/write */
	uint32_t ro_key;   /* remote read only */
	uint32_t local_key; /* registered, never shared */
	uint32_t pd_id;
	uint64_t addr;
};

static pid_t kid = -1;
static int to_kid = -1, from_kid = -1;

static void reap_cb(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
	close(to_kid);
	close(from_kid);
	to_kid = from_kid = -1;
}

static int xread(int fd, void *p, size_t n)
{
	return read(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static int xwrite(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

/* Commands to the owner: 'c' check the buffer holds pattern 2 at [64, 64+256), 'd' deregister, 'q' quit. */
static void owner(int in, int out)
{
	uint8_t *buf = aligned_alloc(4096, LEN);
	struct hw_pd *pd = hw_pd_alloc(1);
	struct hello h = { 0 };
	struct fab_backing b, b2;
	uint32_t rw = HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE;
	char cmd;

	if (buf == NULL || pd == NULL)
		_exit(2);
	for (int i = 0; i < LEN; i++)
		buf[i] = (uint8_t)i;
	/* The key names the memory by an iova of its own, as ibv_reg_mr_iova does. */
	if (hw_mkey_reg(pd, buf, 0x100000, LEN, rw, &h.key) != HW_OK ||
	    hw_mkey_reg(pd, buf, (uint64_t)(uintptr_t)buf, LEN, HW_ACCESS_REMOTE_READ, &h.ro_key) != HW_OK ||
	    hw_mkey_reg(pd, buf, (uint64_t)(uintptr_t)buf, LEN, rw, &h.local_key) != HW_OK)
		_exit(3);
	if (fab_mr_share(h.key, buf, LEN, &b) != 0 || fab_mr_share(h.ro_key, buf, LEN, &b2) != 0)
		_exit(4);
	h.pd_id = hw_pd_id(pd);
	h.addr = (uint64_t)(uintptr_t)buf;
	if (xwrite(out, &h, sizeof(h)) != 0)
		_exit(5);
	while (xread(in, &cmd, 1) == 0) {
		char ok = 1;

		if (cmd == 'c')
			for (int i = 0; i < LEN; i++)
				if (buf[i] != (uint8_t)(i >= 64 && i < 320 ? 0xa5 : i))
					ok = 0;
		if (cmd == 'd')
			ok = hw_mkey_dereg(h.key) == HW_OK;
		if (cmd == 'q')
			_exit(0);
		if (xwrite(out, &ok, 1) != 0)
			_exit(6);
	}
	_exit(0);
}

static void start_owner(struct hello *h)
{
	int a[2], b[2];

	CHECK(pipe(a) == 0 && pipe(b) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		close(a[1]);
		close(b[0]);
		owner(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	to_kid = a[1];
	from_kid = b[0];
	th_defer(reap_cb, NULL);
	CHECK(xread(from_kid, h, sizeof(*h)) == 0);
}

static char ask(char cmd)
{
	char ok = 0;

	if (xwrite(to_kid, &cmd, 1) != 0 || xread(from_kid, &ok, 1) != 0)
		return 0;
	return ok;
}

static void test_key_reached_from_another_process(void)
{
	struct hello h;
	const struct hw_mkey *mk;
	uint8_t *p = NULL;

	fab_mr_init();
	start_owner(&h);
	mk = hw_mkey_resolve(h.key);
	CHECK(mk != NULL);
	CHECK(mk->pd_id == h.pd_id && mk->addr == 0x100000 && mk->len == LEN);
	/* The owner's rules hold here: domain, bounds, rights. */
	CHECK_ERR(hw_mkey_check(mk, h.pd_id + 1, 0x100000, 8, HW_ACCESS_REMOTE_WRITE, &p), HW_ERR_PD);
	CHECK_ERR(hw_mkey_check(mk, h.pd_id, 0x100000 + LEN - 4, 8, HW_ACCESS_REMOTE_WRITE, &p), HW_ERR_BOUNDS);
	CHECK_ERR(hw_mkey_check(mk, h.pd_id, 0x100000 + 64, 256, HW_ACCESS_REMOTE_WRITE, &p), HW_OK);
	memset(p, 0xa5, 256);
	CHECK(ask('c') == 1); /* the owner sees the bytes, and nothing else changed */
	/* Reading through the read-only key works, writing does not. */
	mk = hw_mkey_resolve(h.ro_key);
	CHECK(mk != NULL);
	CHECK_ERR(hw_mkey_check(mk, h.pd_id, h.addr + 64, 1, HW_ACCESS_REMOTE_WRITE, &p), HW_ERR_ACCESS);
	CHECK_ERR(hw_mkey_check(mk, h.pd_id, h.addr + 64, 1, HW_ACCESS_REMOTE_READ, &p), HW_OK);
	CHECK(*p == 0xa5);
	/* A key its owner never shared, and numbers nobody holds, reach nothing. */
	CHECK(hw_mkey_resolve(h.local_key) == NULL);
	CHECK(hw_mkey_resolve(h.key ^ 0x80) == NULL); /* another tag */
	CHECK(hw_mkey_resolve(0) == NULL);
	CHECK(hw_mkey_resolve(0xffffff00u) == NULL);
	/* Only the owner deregisters. */
	CHECK_ERR(hw_mkey_dereg(h.key), HW_ERR_KEY);
	CHECK(hw_mkey_resolve(h.key) != NULL);
	CHECK(ask('d') == 1);
	CHECK(hw_mkey_lookup(h.key) == NULL); /* the view went with the registration */
	CHECK(hw_mkey_resolve(h.key) == NULL);
}

static void test_dead_owner_reaches_nothing(void)
{
	struct hello h;

	fab_mr_init();
	start_owner(&h);
	CHECK(kill(kid, SIGKILL) == 0);
	CHECK(waitpid(kid, NULL, 0) == kid);
	kid = -1;
	/* Never mapped here before it died: its memory cannot be opened any more. */
	CHECK(hw_mkey_resolve(h.ro_key) == NULL);
}

int main(void)
{
	RUN(test_key_reached_from_another_process);
	RUN(test_dead_owner_reaches_nothing);
	return th_summary("test_fab_mr");
}
