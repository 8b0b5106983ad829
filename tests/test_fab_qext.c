/*
 * A queue's ring and doorbell record in memory its creator gave (fab_qext.h):
 * made reachable where they are, mapped by another process from the
 * record's backing alone, both sides seeing each other's writes; a backing
 * altered anywhere (the record is memory any process of the user writes)
 * maps nothing or only memory that is really there; the owner gone, nothing
 * is mapped; memory that cannot be moved (a file mapping) is refused.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fab_qext.h"
#include "harness.h"
#include "kid_fixture.h"

#define RING_LEN (3 * 4096 + 512) /* not whole pages: the record names whole memfds */

/* What the owner tells the other side. */
struct hello {
	uint32_t blen;
	uint32_t ring_len;
	uint8_t backing[HW_QEXT_BACKING_MAX];
};

static int xread(int fd, void *p, size_t n)
{
	return read(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static int xwrite(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

/*
 * The owner: a ring (ring_len bytes, 0 for none) and a record on the heap,
 * adopted. Commands: 'c' checks the peer's writes (ring byte 7 and the last
 * one 0x5c, the record 0x0102030405060708), 'u' unadopts, 'q' quits.
 */
static void owner(int in, int out, uint32_t ring_len)
{
	uint8_t *ring = aligned_alloc(4096, 4 * 4096);
	uint64_t *dbrec = aligned_alloc(64, 64);
	struct hello h = { .ring_len = ring_len };
	void *handle = NULL;
	char cmd;

	if (ring == NULL || dbrec == NULL)
		_exit(2);
	memset(ring, 0x3c, 4 * 4096);
	*dbrec = 0x1111;
	if (fab_qext_adopt(ring_len != 0 ? ring + 64 : NULL, ring_len, dbrec, 8, h.backing, &h.blen, &handle) != HW_OK)
		_exit(3);
	if (xwrite(out, &h, sizeof(h)) != 0)
		_exit(4);
	while (xread(in, &cmd, 1) == 0) {
		char ok = 1;

		if (cmd == 'c')
			ok = *dbrec == 0x0102030405060708ull &&
			     (ring_len == 0 || (ring[64 + 7] == 0x5c && ring[64 + ring_len - 1] == 0x5c && ring[64] == 0x3c));
		if (cmd == 'u') {
			fab_qext_unadopt(handle);
			handle = NULL;
		}
		if (cmd == 'q')
			_exit(0);
		if (xwrite(out, &ok, 1) != 0)
			_exit(5);
	}
	_exit(0);
}

static void start_owner(struct hello *h, uint32_t ring_len)
{
	int a[2], b[2];

	kid_fork(a, b);
	if (kid == 0)
		owner(a[0], b[1], ring_len);
	CHECK(xread(from_kid, h, sizeof(*h)) == 0);
}

static char ask(char cmd)
{
	char ok = 0;

	if (xwrite(to_kid, &cmd, 1) != 0 || xread(from_kid, &ok, 1) != 0)
		return 0;
	return ok;
}

static void test_ring_reached_from_another_process(void)
{
	struct hello h;
	void *ring = NULL, *dbrec = NULL, *m;
	uint8_t *r;

	start_owner(&h, RING_LEN);
	CHECK(h.blen > 0 && h.blen <= HW_QEXT_BACKING_MAX);
	m = fab_qext_attach(h.backing, h.blen, RING_LEN, 8, &ring, &dbrec);
	CHECK(m != NULL && ring != NULL && dbrec != NULL);
	r = ring;
	CHECK(r[0] == 0x3c && r[RING_LEN - 1] == 0x3c && *(uint64_t *)dbrec == 0x1111);
	r[7] = 0x5c;
	r[RING_LEN - 1] = 0x5c;
	*(uint64_t *)dbrec = 0x0102030405060708ull;
	CHECK(ask('c') == 1);
	fab_qext_detach(m);
	/* Asked for more than the record's memory holds: nothing. */
	CHECK(fab_qext_attach(h.backing, h.blen, 64 * 4096, 8, &ring, &dbrec) == NULL);
	/* The owner gone: nothing, though its record is intact. */
	CHECK(xwrite(to_kid, "q", 1) == 0);
	CHECK(waitpid(kid, NULL, 0) == kid);
	kid = -1;
	CHECK(fab_qext_attach(h.backing, h.blen, RING_LEN, 8, &ring, &dbrec) == NULL);
}

/* A QP on an SRQ has no receive ring: the record alone is shared. */
static void test_record_alone(void)
{
	struct hello h;
	void *ring = (void *)1, *dbrec = NULL, *m;

	start_owner(&h, 0);
	CHECK(fab_qext_attach(h.backing, h.blen, 64, 8, &ring, &dbrec) == NULL); /* a ring it has not */
	m = fab_qext_attach(h.backing, h.blen, 0, 8, &ring, &dbrec);
	CHECK(m != NULL && ring == NULL && dbrec != NULL);
	*(uint64_t *)dbrec = 0x0102030405060708ull;
	CHECK(ask('c') == 1);
	fab_qext_detach(m);
}

/*
 * Every byte of the backing flipped in turn: what maps must be the owner's
 * memory, whole (the ring and record are read through, which would fault
 * otherwise), and most flips must map nothing.
 */
static void test_altered_backing(void)
{
	struct hello h;
	int mapped = 0;

	start_owner(&h, RING_LEN);
	for (uint32_t i = 0; i < h.blen; i++) {
		uint8_t b[HW_QEXT_BACKING_MAX];
		void *ring = NULL, *dbrec = NULL, *m;
		volatile uint8_t sum = 0;

		memcpy(b, h.backing, h.blen);
		b[i] ^= 0xff;
		m = fab_qext_attach(b, h.blen, RING_LEN, 8, &ring, &dbrec);
		if (m == NULL)
			continue;
		mapped++;
		for (uint32_t j = 0; j < RING_LEN; j++)
			sum += ((uint8_t *)ring)[j];
		sum += *(volatile uint8_t *)dbrec;
		fab_qext_detach(m);
	}
	/*
	 * What may change and still map: unused segment slots, and offsets that
	 * still lie in the owner's memory; the owner's identity, the counts and
	 * the memory files' names and sizes may not (at least 24 bytes of them).
	 */
	printf("test_fab_qext: %d of %u flips still map\n", mapped, h.blen);
	CHECK(mapped <= (int)h.blen - 24);
	CHECK(fab_qext_attach(h.backing, h.blen - 1, RING_LEN, 8, &(void *){ NULL }, &(void *){ NULL }) == NULL);
}

/* A file mapping cannot move onto a memory file other processes map: refused, nothing held. */
static void test_file_mapping_refused(void)
{
	FILE *f = tmpfile();
	uint8_t backing[HW_QEXT_BACKING_MAX];
	uint64_t *dbrec = aligned_alloc(64, 64);
	uint32_t blen = 0;
	void *handle = NULL, *p;

	CHECK(f != NULL && dbrec != NULL && ftruncate(fileno(f), 8192) == 0);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
	CHECK(p != MAP_FAILED);
	CHECK(fab_qext_adopt(p, 8192, dbrec, 8, backing, &blen, &handle) == HW_ERR_NOTSUP && handle == NULL);
	CHECK(fab_qext_adopt(dbrec, 8, p, 8, backing, &blen, &handle) == HW_ERR_NOTSUP && handle == NULL);
	/* The heap record alone moves. */
	CHECK(fab_qext_adopt(NULL, 0, dbrec, 8, backing, &blen, &handle) == HW_OK && handle != NULL);
	fab_qext_unadopt(handle);
	munmap(p, 8192);
	fclose(f);
	free(dbrec);
}

int main(void)
{
	RUN(test_ring_reached_from_another_process);
	RUN(test_record_alone);
	RUN(test_altered_backing);
	RUN(test_file_mapping_refused);
	return th_summary("test_fab_qext");
}
