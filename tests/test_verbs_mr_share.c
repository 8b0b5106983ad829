/*
 * ibv_reg_mr makes its key reachable by the other processes of the device:
 * a child registers memory through the verbs API, this process resolves the
 * key by number and reads and writes the child's bytes with exactly the
 * registration's rights and domain. Memory that cannot be moved (a file
 * mapping) stays local to its process: the key reaches nothing here.
 * (Linked statically to see hw_mem.)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fab_mr.h"
#include "harness.h"
#include "kid_fixture.h"
#include "vb_int.h"
#include "verbs_fixture.h"

#define LEN 8192

struct hello {
	uint32_t key, ro_key, file_key, pd;
	uint64_t addr, file_addr;
};

/* The owner: registers, says where, then checks what was written ('c') or quits. */
static void owner(int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	uint8_t *buf = aligned_alloc(4096, LEN);
	int fd = open("/proc/self/exe", O_RDONLY);
	void *file = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	struct ibv_mr *rw, *ro, *fm;
	struct hello h = {0};
	char cmd;

	if (pd == NULL || buf == NULL || file == MAP_FAILED)
		_exit(2);
	memset(buf, 0x3c, LEN);
	rw = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ro = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_REMOTE_READ);
	fm = ibv_reg_mr(pd, file, 4096, IBV_ACCESS_REMOTE_READ);
	if (rw == NULL || ro == NULL || fm == NULL)
		_exit(3);
	h = (struct hello){.key = rw->rkey, .ro_key = ro->rkey, .file_key = fm->rkey, .pd = pd->handle,
			   .addr = (uintptr_t)buf, .file_addr = (uintptr_t)file};
	if (write(out, &h, sizeof(h)) != sizeof(h))
		_exit(4);
	while (read(in, &cmd, 1) == 1 && cmd == 'c') {
		char ok = buf[100] == 0x77 && buf[99] == 0x3c ? 'y' : 'n';

		if (write(out, &ok, 1) != 1)
			_exit(5);
	}
	_exit(0);
}

/* The owner fn started in another process: what it says in *h; this process's view of the keys opened. */
static void owner_start(void (*fn)(int in, int out), struct hello *h)
{
	int a[2], b[2];

	kid_fork(a, b);
	if (kid == 0)
		fn(a[0], b[1]);
	CHECK(read(from_kid, h, sizeof(*h)) == sizeof(*h));
	fab_mr_init();
}

/* A key of any process, resolved by number, checked as the engine checks it. */
static enum hw_status vms_check(uint32_t key, uint32_t pd, uint64_t addr, uint64_t len, uint32_t access, uint8_t **p)
{
	const struct hw_mkey *mk = hw_mkey_resolve(key);

	return mk == NULL ? HW_ERR_KEY : hw_mkey_check(mk, pd, addr, len, access, p);
}

static void test_reg_mr_shared(void)
{
	struct hello h;
	uint8_t *p = NULL;
	char ok = 0;

	owner_start(owner, &h);
	/* The read-write key: bytes read and written in the child's memory. */
	CHECK(vms_check(h.key, h.pd, h.addr + 64, 16, HW_ACCESS_REMOTE_READ, &p) == HW_OK);
	CHECK(p != NULL && p[0] == 0x3c && p[15] == 0x3c);
	CHECK(vms_check(h.key, h.pd, h.addr + 100, 1, HW_ACCESS_REMOTE_WRITE, &p) == HW_OK);
	*p = 0x77;
	CHECK(write(to_kid, "c", 1) == 1);
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
	/* The registration's rights, bounds and domain hold here too. */
	CHECK(vms_check(h.ro_key, h.pd, h.addr, 8, HW_ACCESS_REMOTE_WRITE, &p) == HW_ERR_ACCESS);
	CHECK(vms_check(h.ro_key, h.pd, h.addr, 8, HW_ACCESS_REMOTE_READ, &p) == HW_OK);
	CHECK(vms_check(h.key, h.pd, h.addr + LEN - 4, 8, HW_ACCESS_REMOTE_READ, &p) == HW_ERR_BOUNDS);
	CHECK(vms_check(h.key, h.pd + 1, h.addr, 8, HW_ACCESS_REMOTE_READ, &p) == HW_ERR_PD);
	/* A file mapping cannot be moved: its key stays in its process. */
	CHECK(hw_mkey_resolve(h.file_key) == NULL);
}

/* The owner of a re-registered MR: says where, moves it to new memory ('r'), then checks it ('c'). */
static void rereg_owner(int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	uint8_t *a = aligned_alloc(4096, LEN), *b = aligned_alloc(4096, LEN);
	struct ibv_mr *mr;
	struct hello h = {0};
	char cmd;

	if (pd == NULL || a == NULL || b == NULL)
		_exit(2);
	memset(a, 0x3c, LEN);
	memset(b, 0x4d, LEN);
	mr = ibv_reg_mr(pd, a, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		_exit(3);
	h = (struct hello){.key = mr->rkey, .pd = pd->handle, .addr = (uintptr_t)a, .file_addr = (uintptr_t)b};
	if (write(out, &h, sizeof(h)) != sizeof(h))
		_exit(4);
	while (read(in, &cmd, 1) == 1) {
		char ok = 'n';

		if (cmd == 'r')
			ok = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, LEN / 2, 0) == 0 ? 'y' : 'n';
		else if (cmd == 'c')
			ok = b[100] == 0x77 && b[99] == 0x4d && a[100] == 0x3c ? 'y' : 'n';
		if (write(out, &ok, 1) != 1)
			_exit(5);
	}
	_exit(0);
}

/*
 * ibv_rereg_mr of a shared MR is a fence in every process: a view of the
 * old range taken here is refused once the owner moved the key, and the key
 * resolves to the new range (and its new length) from then on.
 */
static void test_rereg_shared(void)
{
	struct hello h;
	uint8_t *p = NULL;
	char ok = 0;

	owner_start(rereg_owner, &h);
	CHECK(vms_check(h.key, h.pd, h.addr + 100, 1, HW_ACCESS_REMOTE_WRITE, &p) == HW_OK);
	CHECK(write(to_kid, "r", 1) == 1);
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
	CHECK(vms_check(h.key, h.pd, h.addr + 100, 1, HW_ACCESS_REMOTE_WRITE, &p) == HW_ERR_BOUNDS);
	CHECK(vms_check(h.key, h.pd, h.file_addr + LEN / 2, 1, HW_ACCESS_REMOTE_WRITE, &p) == HW_ERR_BOUNDS);
	CHECK(vms_check(h.key, h.pd, h.file_addr + 100, 1, HW_ACCESS_REMOTE_WRITE, &p) == HW_OK);
	*p = 0x77;
	CHECK(write(to_kid, "c", 1) == 1);
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
}

/*
 * The owner of registrations over memory the program unmapped and mapped
 * again at the same addresses (free and malloc, as a registration cache sees
 * them): 4 pages at h.addr registered (key kept, as a cache keeps it), then
 * replaced whole and registered again (ro_key); 4 pages at h.file_addr
 * registered and deregistered, their last 2 replaced, and pages 1-2 registered
 * again (file_key). Old pages hold 0x11, new ones 0x22.
 */
static void remap_owner(int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	const size_t pg = 4096;
	uint8_t *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *kept, *again, *gone, *part;
	struct hello h = {0};
	char cmd;

	if (pd == NULL || a == MAP_FAILED || b == MAP_FAILED)
		_exit(2);
	memset(a, 0x11, 4 * pg);
	memset(b, 0x11, 4 * pg);
	kept = ibv_reg_mr(pd, a, 4 * pg, acc);
	gone = ibv_reg_mr(pd, b, 4 * pg, acc);
	if (kept == NULL || gone == NULL || ibv_dereg_mr(gone) != 0)
		_exit(3);
	if (mmap(a, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != a ||
	    mmap(b + 2 * pg, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != b + 2 * pg)
		_exit(4);
	memset(a, 0x22, 4 * pg);
	memset(b + 2 * pg, 0x22, 2 * pg);
	again = ibv_reg_mr(pd, a, 4 * pg, acc);
	part = ibv_reg_mr(pd, b + pg, 2 * pg, acc);
	if (again == NULL || part == NULL)
		_exit(5);
	h = (struct hello){.key = kept->rkey, .ro_key = again->rkey, .file_key = part->rkey, .pd = pd->handle,
			   .addr = (uintptr_t)a, .file_addr = (uintptr_t)b};
	if (write(out, &h, sizeof(h)) != sizeof(h))
		_exit(6);
	while (read(in, &cmd, 1) == 1) {
		char ok = a[100] == 0x33 && b[2 * pg + 5] == 0x33 ? 'y' : 'n';

		if (write(out, &ok, 1) != 1)
			_exit(7);
	}
	_exit(0);
}

/*
 * A registration reaches the memory mapped at its addresses when it is
 * made (ibv_reg_mr(3): the pages behind the range are pinned then), also
 * where the program unmapped memory an earlier registration held and mapped
 * new memory there: another process reads the new bytes through the new
 * key, and its writes land where the owner reads.
 */
static void test_reg_mr_remapped(void)
{
	const size_t pg = 4096;
	struct hello h;
	uint8_t *p = NULL;
	char ok = 0;

	owner_start(remap_owner, &h);
	/* The whole range replaced under a key still registered. */
	CHECK(vms_check(h.ro_key, h.pd, h.addr, 4 * pg, HW_ACCESS_REMOTE_READ, &p) == HW_OK);
	CHECK(p != NULL && p[0] == 0x22 && p[4 * pg - 1] == 0x22);
	if (p != NULL)
		p[100] = 0x33;
	/* Half of a released registration's range replaced: old page 1, new page 2. */
	CHECK(vms_check(h.file_key, h.pd, h.file_addr + pg, 2 * pg, HW_ACCESS_REMOTE_READ, &p) == HW_OK);
	CHECK(p != NULL && p[0] == 0x11 && p[pg - 1] == 0x11 && p[pg] == 0x22 && p[2 * pg - 1] == 0x22);
	if (p != NULL)
		p[pg + 5] = 0x33;
	CHECK(write(to_kid, "c", 1) == 1);
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
}

#define PIECES 12

/*
 * The owner of PIECES single-page registrations side by side, all kept (a
 * registration cache's entries), and of one over them all and a page on each
 * side (file_key): bytes 0x11 + page number.
 */
static void pieces_owner(int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	const size_t pg = 4096;
	uint8_t *a = mmap(NULL, (PIECES + 2) * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *piece[PIECES], *all;
	struct hello h = {0};
	char cmd;

	if (pd == NULL || a == MAP_FAILED)
		_exit(2);
	for (size_t i = 0; i < PIECES + 2; i++)
		memset(a + i * pg, 0x11 + (int)i, pg);
	for (size_t i = 0; i < PIECES; i++)
		if ((piece[i] = ibv_reg_mr(pd, a + (i + 1) * pg, pg, acc)) == NULL)
			_exit(3);
	all = ibv_reg_mr(pd, a, (PIECES + 2) * pg, acc);
	if (all == NULL)
		_exit(4);
	h = (struct hello){.key = piece[3]->rkey, .file_key = all->rkey, .pd = pd->handle, .addr = (uintptr_t)a};
	if (write(out, &h, sizeof(h)) != sizeof(h))
		_exit(5);
	while (read(in, &cmd, 1) == 1) {
		char ok = a[4 * pg + 9] == 0x77 && a[(PIECES + 1) * pg + 1] == 0x78 ? 'y' : 'n';

		if (write(out, &ok, 1) != 1)
			_exit(6);
	}
	_exit(0);
}

/*
 * A registration may span any number of earlier ones still registered
 * (ibv_reg_mr(3) sets no limit on overlapping registrations): another
 * process reaches all of its bytes, reads and writes, and an earlier key
 * reaches the same memory.
 */
static void test_reg_mr_over_many(void)
{
	const size_t pg = 4096;
	struct hello h;
	uint8_t *p = NULL;
	int same = 1;
	char ok = 0;

	owner_start(pieces_owner, &h);
	CHECK(vms_check(h.file_key, h.pd, h.addr, (PIECES + 2) * pg, HW_ACCESS_REMOTE_READ, &p) == HW_OK);
	for (size_t i = 0; p != NULL && i < PIECES + 2; i++)
		same = same && p[i * pg] == 0x11 + i && p[i * pg + pg - 1] == 0x11 + i;
	CHECK(p != NULL && same);
	p[(PIECES + 1) * pg + 1] = 0x78;
	/* The earlier key of page 4 reaches the same bytes. */
	CHECK(vms_check(h.key, h.pd, h.addr + 4 * pg, pg, HW_ACCESS_REMOTE_WRITE, &p) == HW_OK);
	CHECK(p != NULL && p[0] == 0x15);
	p[9] = 0x77;
	CHECK(write(to_kid, "c", 1) == 1);
	CHECK(read(from_kid, &ok, 1) == 1 && ok == 'y');
}

int main(void)
{
	RUN(test_reg_mr_shared);
	RUN(test_rereg_shared);
	RUN(test_reg_mr_remapped);
	RUN(test_reg_mr_over_many);
	return th_summary("test_verbs_mr_share");
}
