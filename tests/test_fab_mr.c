/*
 * Device-wide memory keys: a key registered and shared in one process is
 * reached from another by its number alone, with the owner's bounds, rights
 * and domain; it stops working there the moment its owner deregisters it or
 * dies, and a forged number reaches nothing.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fab_mr.h"
#include "harness.h"
#include "kid_fixture.h"
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
	struct fab_shared b, b2;
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

	kid_fork(a, b);
	if (kid == 0)
		owner(a[0], b[1]);
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

/*
 * Keys on buffers that share pages, as an allocator's neighbouring blocks
 * do: the middle key begins in the first key's last page and ends in the
 * third's first, so its memory lies in three memfds (the one moved for the
 * first key, a new one for the page between, the third key's).
 */
#define PG 4096
#define SPAN (5 * PG)
#define MID_AT (PG + PG / 2 + 8)
#define MID_LEN (2 * PG)

static void span_owner(int in, int out)
{
	uint8_t *buf = aligned_alloc(PG, SPAN);
	struct hw_pd *pd = hw_pd_alloc(1);
	uint32_t rw = HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE;
	struct fab_shared s[4];
	uint32_t keys[5];
	char cmd;

	if (buf == NULL || pd == NULL)
		_exit(2);
	memset(buf, 0x11, SPAN);
	if (hw_mkey_reg(pd, buf, (uint64_t)(uintptr_t)buf, PG + PG / 2, rw, &keys[0]) != HW_OK ||
	    hw_mkey_reg(pd, buf + 3 * PG + PG / 2, (uint64_t)(uintptr_t)buf + 3 * PG + PG / 2, PG + PG / 2, rw,
			&keys[2]) != HW_OK ||
	    hw_mkey_reg(pd, buf + MID_AT, (uint64_t)(uintptr_t)buf + MID_AT, MID_LEN, rw, &keys[1]) != HW_OK ||
	    hw_mkey_reg(pd, buf, (uint64_t)(uintptr_t)buf, SPAN, rw, &keys[3]) != HW_OK)
		_exit(3);
	/* Shared in that order: the first and third move alone, the middle then spans them. */
	if (fab_mr_share(keys[0], buf, PG + PG / 2, &s[0]) != 0 ||
	    fab_mr_share(keys[2], buf + 3 * PG + PG / 2, PG + PG / 2, &s[2]) != 0 ||
	    fab_mr_share(keys[1], buf + MID_AT, MID_LEN, &s[1]) != 0 || s[1].n != 3 ||
	    fab_mr_share(keys[3], buf, SPAN, &s[3]) != 0 || s[3].n != 3)
		_exit(4);
	keys[4] = hw_pd_id(pd);
	if (xwrite(out, keys, sizeof(keys)) != 0)
		_exit(5);
	while (xread(in, &cmd, 1) == 0 && cmd == 'c') {
		char ok = 1;

		/* The other process wrote 0xa5 over the middle key's range: here, nothing else moved. */
		for (int i = 0; i < SPAN; i++)
			if (buf[i] != (i >= MID_AT && i < MID_AT + MID_LEN ? 0xa5 : 0x11))
				ok = 0;
		if (xwrite(out, &ok, 1) != 0)
			_exit(6);
	}
	_exit(0);
}

static void test_keys_sharing_pages(void)
{
	const struct hw_mkey *mid, *all;
	uint32_t keys[5];
	uint8_t *p = NULL, *q = NULL;
	int a[2], b[2];

	fab_mr_init();
	kid_fork(a, b);
	if (kid == 0)
		span_owner(a[0], b[1]);
	CHECK(xread(from_kid, keys, sizeof(keys)) == 0);
	mid = hw_mkey_resolve(keys[1]);
	all = hw_mkey_resolve(keys[3]);
	CHECK(mid != NULL && all != NULL && hw_mkey_resolve(keys[0]) != NULL && hw_mkey_resolve(keys[2]) != NULL);
	CHECK_ERR(hw_mkey_check(mid, keys[4], mid->addr, MID_LEN, HW_ACCESS_REMOTE_WRITE, &p), HW_OK);
	memset(p, 0xa5, MID_LEN);
	CHECK(ask('c') == 1);
	/* The whole block's key, mapped apart, sees the same pages. */
	CHECK_ERR(hw_mkey_check(all, keys[4], all->addr, SPAN, HW_ACCESS_REMOTE_READ, &q), HW_OK);
	for (int i = 0; i < SPAN; i++)
		if (q[i] != (i >= MID_AT && i < MID_AT + MID_LEN ? 0xa5 : 0x11)) {
			CHECK(!"byte seen through the whole block's key");
			break;
		}
}

/*
 * Memory moved for a registration that is gone moves again with the next
 * range holding it, so a heap registered and freed over and over does not
 * split into ever more pieces; memory a live registration holds stays put.
 */
static void test_released_ranges_absorbed(void)
{
	uint8_t *buf = aligned_alloc(PG, 6 * PG);
	struct hw_pd *pd = hw_pd_alloc(1);
	uint32_t rw = HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_READ, held, gone, all;
	struct fab_shared sh, sg, sa;
	bool intact = true;

	fab_mr_init();
	CHECK(buf != NULL && pd != NULL);
	for (int i = 0; i < 6 * PG; i++)
		buf[i] = (uint8_t)(i * 7);
	CHECK_ERR(hw_mkey_reg(pd, buf + PG, (uint64_t)(uintptr_t)buf + PG, PG, rw, &held), HW_OK);
	CHECK_ERR(hw_mkey_reg(pd, buf + 3 * PG, (uint64_t)(uintptr_t)buf + 3 * PG, PG, rw, &gone), HW_OK);
	CHECK(fab_mr_share(held, buf + PG, PG, &sh) == 0 && sh.n == 1);
	CHECK(fab_mr_share(gone, buf + 3 * PG, PG, &sg) == 0 && sg.n == 1);
	CHECK_ERR(hw_mkey_dereg(gone), HW_OK);
	fab_mr_unshare(&sg);
	CHECK_ERR(hw_mkey_reg(pd, buf, (uint64_t)(uintptr_t)buf, 6 * PG, rw, &all), HW_OK);
	/* The page before, the held range, the rest with the released range in it. */
	CHECK(fab_mr_share(all, buf, 6 * PG, &sa) == 0 && sa.n == 3);
	CHECK(sa.seg[1].memfd == sh.seg[0].memfd && sa.seg[2].base == (uint64_t)(uintptr_t)buf + 2 * PG &&
	      sa.seg[2].len == 4 * PG);
	for (int i = 0; i < 6 * PG; i++)
		intact = intact && buf[i] == (uint8_t)(i * 7);
	CHECK(intact);
	CHECK_ERR(hw_mkey_dereg(all), HW_OK);
	CHECK_ERR(hw_mkey_dereg(held), HW_OK);
	fab_mr_unshare(&sa);
	fab_mr_unshare(&sh);
	hw_pd_free(pd);
	free(buf);
}

int main(void)
{
	RUN(test_key_reached_from_another_process);
	RUN(test_keys_sharing_pages);
	RUN(test_released_ranges_absorbed);
	RUN(test_dead_owner_reaches_nothing);
	return th_summary("test_fab_mr");
}
