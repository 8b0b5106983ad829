/*
 * fab_table — the shared table of live exports.
 */
#include "fab_table.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "base_clock.h"
#include "base_log.h"
#include "base_private.h"
#include "fab_share.h"
#include "hw_machine.h"

#define WITHDRAW_NAP_NS (100 * 1000)

static struct fab_slot *table;
static int table_err = -EIO; /* why there is no table */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/*
 * A zero-filled segment is an empty table, so creators need no handshake.
 * Only a table private to this user is used (base_private.h): another user's
 * would see every export's key, and could rewrite its slots.
 */
static void table_open(void)
{
	char name[64];
	size_t size = sizeof(struct fab_slot) * FAB_TABLE_SLOTS;
	enum base_priv_status st;
	int fd;
	void *p;

	snprintf(name, sizeof(name), "/softdpu-%u%s-exports", (unsigned)getuid(), hw_machine_tag());
	st = base_priv_shm_open(name, size, "export table", &fd);
	if (st != BASE_PRIV_OK) {
		table_err = st == BASE_PRIV_OS ? -EIO : -EPERM;
		return;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		BASE_ERR("cannot map the export table %s: %s", name, strerror(errno));
		return;
	}
	table = p;
}

static struct fab_slot *get_table(void)
{
	pthread_once(&table_once, table_open);
	return table;
}

uint64_t fab_proc_start_time(uint32_t pid)
{
	char path[64], buf[1024];
	unsigned long long st = 0;
	ssize_t n;
	char *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 22; the command name (field 2) may hold spaces, so count after its ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
				&st) != 1)
		return 0;
	return st;
}

static bool owner_dead(const struct fab_slot *s)
{
	return fab_proc_start_time(s->pid) != s->start_time;
}

/* Takes a free slot, or one a dead process left behind. */
static int take_slot(struct fab_slot *t, uint32_t *idx)
{
	for (uint32_t i = 0; i < FAB_TABLE_SLOTS; i++) {
		uint32_t st = atomic_load(&t[i].state);

		if (st == FAB_SLOT_CLAIMING || ((st == FAB_SLOT_LIVE || st == FAB_SLOT_REVOKED) && !owner_dead(&t[i])))
			continue;
		if (atomic_compare_exchange_strong(&t[i].state, &st, FAB_SLOT_CLAIMING)) {
			*idx = i;
			return 0;
		}
	}
	return -1;
}

int fab_table_claim(struct fab_export_desc *d, const struct fab_backing *b)
{
	static uint64_t my_start;
	struct fab_slot *t = get_table(), *s;
	uint32_t idx;

	if (t == NULL)
		return table_err;
	if (my_start == 0) {
		my_start = fab_proc_start_time((uint32_t)getpid());
		/* Where Yama restricts ptrace, importers still need to reach us with process_vm_readv. */
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	}
	if (take_slot(t, &idx) != 0) {
		BASE_ERR("export table full (%u exports)", FAB_TABLE_SLOTS);
		return -ENOSPC;
	}
	s = &t[idx];
	s->gen++;
	s->pid = d->pid;
	s->start_time = my_start;
	s->addr = d->addr;
	s->len = d->len;
	s->access = d->access;
	s->kind = d->kind;
	memcpy(s->cap_key, d->cap_key, FAB_CAP_KEY_LEN);
	s->memfd = b != NULL ? b->memfd : -1;
	s->map_base = b != NULL ? b->base : 0;
	s->map_len = b != NULL ? b->len : 0;
	atomic_store(&s->inflight, 0);
	d->export_id = ((uint64_t)s->gen << 32) | (idx + 1);
	atomic_store(&s->export_id, d->export_id);
	atomic_store(&s->state, FAB_SLOT_LIVE);
	return 0;
}

static struct fab_slot *slot_of(uint64_t export_id)
{
	struct fab_slot *t = get_table();
	uint64_t idx = (export_id & 0xffffffffu);

	if (t == NULL || idx == 0 || idx > FAB_TABLE_SLOTS)
		return NULL;
	return &t[idx - 1];
}

void fab_table_withdraw(uint64_t export_id)
{
	struct fab_slot *s = slot_of(export_id);
	const struct timespec nap = { .tv_nsec = WITHDRAW_NAP_NS };
	uint64_t deadline;

	if (s == NULL || atomic_load(&s->export_id) != export_id)
		return;
	atomic_store(&s->state, FAB_SLOT_REVOKED);
	/*
	 * An importer killed mid-access leaves its count behind: the wait is
	 * bounded, in elapsed time (each nap may last longer than asked).
	 */
	deadline = base_deadline_ns(FAB_TABLE_WITHDRAW_WAIT_NS);
	while (atomic_load(&s->inflight) != 0 && !base_deadline_passed(deadline))
		nanosleep(&nap, NULL);
	if (atomic_load(&s->inflight) != 0)
		BASE_WARN("export %#llx withdrawn with %u accesses still counted (importer gone?)",
			(unsigned long long)export_id, atomic_load(&s->inflight));
	atomic_store(&s->export_id, 0);
	atomic_store(&s->state, FAB_SLOT_FREE);
}

static bool cap_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;

	for (int i = 0; i < FAB_CAP_KEY_LEN; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

struct fab_slot *fab_table_find(const struct fab_export_desc *d)
{
	struct fab_slot *s = slot_of(d->export_id);

	if (s == NULL || atomic_load(&s->state) != FAB_SLOT_LIVE || atomic_load(&s->export_id) != d->export_id)
		return NULL;
	if (!cap_equal(s->cap_key, d->cap_key) || s->pid != d->pid || s->addr != d->addr || s->len != d->len ||
	    s->access != d->access || s->kind != d->kind)
		return NULL;
	return s;
}
