/*
 * vb_memic — MEMIC operation addresses (mlx5dv_dm_map_op_addr): a mapping of
 * a device-memory allocation through which a program's one-byte stores and
 * loads are the device's atomic operations on that memory.
 *
 * On the card the op address is a BAR window; the device performs the op
 * for each access. Here there is no device between the program's
 * instruction and the memory, so the window is a PROT_NONE mapping: every
 * access to it faults, and the SIGSEGV handler installed here (the
 * program's own handler, if any, is kept and called for every fault that is
 * not an op address's) decodes the faulting instruction, performs the
 * operation on the allocation's byte with one atomic instruction, writes a
 * load's result into the destination register and steps past the
 * instruction. The ops (as the device-memory capability page says,
 * VB_MEMIC_OPS): increment — a store of v adds v to the byte (modulo 256), a
 * load reads it; test-and-set — a load returns the byte and sets it to 0xff,
 * a store writes it. The allocation's memory is shared across fork
 * (vb_dm.c), and the atomics are the processor's, so the ops are atomic
 * between the threads and the processes that reach the same allocation.
 *
 * Limits: x86-64 only (elsewhere EOPNOTSUPP); the instructions decoded are
 * the one-byte moves a compiler or memcpy uses (MOV r/m8 to and from a
 * register, MOV r/m8 of an immediate, MOVZX/MOVSX from r/m8) — any other
 * access (wider, string, vector, locked) is not the advertised size and
 * faults on to the previous handler, as would a crash. An op mapping is
 * dropped when its allocation is freed. The program unmaps op mappings
 * itself (munmap), unseen here: they are mappings of a memory file of
 * their own, and an access is performed only where /proc/self/maps still
 * shows that file mapped (another mapping at the addresses since faults as
 * any would); a slot whose mapping is gone is freed at the next op mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "base_log.h"
#include "base_maps.h"
#include "base_segv.h"
#include "base_x86.h"
#include "base_private.h"
#include "vb_int.h"

#define VB_MEMIC_MAPS 256 /* op mappings live at once in a process */

/*
 * One op mapping. The handler reads it without a lock: seq is odd while the
 * slot changes, and a reader retries until it reads the same even seq
 * around its copy.
 */
struct vb_memic_map {
	_Atomic uint32_t seq;
	_Atomic uintptr_t start; /* 0: the slot is free */
	_Atomic uintptr_t len;
	_Atomic uintptr_t mem;	 /* the allocation's first byte */
	_Atomic uint32_t op;
	const void *owner;	 /* under maps_lock only */
};

struct vb_memic_view {
	uintptr_t start, len, mem;
	uint32_t op;
};

static struct vb_memic_map maps[VB_MEMIC_MAPS];
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static int handler_err;
/* The memory file every op mapping maps (PROT_NONE): what names a mapping as one of these in /proc/self/maps. */
static int op_fd = -1;
static uint64_t op_ino;

#if defined(__x86_64__)
#define VB_MEMIC_DECODER 1

/* gregs index of each x86 register number. */
static const int greg_of[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8,	 REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

/* Whether the decoded instruction is one of the one-byte moves performed here. */
static bool memic_insn_ok(const struct base_x86_insn *in)
{
	return in->width == 1 && in->kind != BASE_X86_STORE_VEC;
}

/* The op on the byte: a load's result, or 0 for a store. */
static uint8_t memic_apply(const struct vb_memic_view *v, uintptr_t addr, bool store, uint8_t val)
{
	uint8_t *b = (uint8_t *)(v->mem + (addr - v->start));

	if (v->op == VB_MEMIC_OP_INC) {
		if (store)
			__atomic_fetch_add(b, val, __ATOMIC_SEQ_CST);
		return store ? 0 : __atomic_load_n(b, __ATOMIC_SEQ_CST);
	}
	if (store) {
		__atomic_store_n(b, val, __ATOMIC_SEQ_CST);
		return 0;
	}
	return __atomic_exchange_n(b, (uint8_t)0xff, __ATOMIC_SEQ_CST);
}

/* A load's result into its destination register, as the instruction would have left it. */
static void memic_set_reg(greg_t *g, const struct base_x86_insn *in, uint8_t val)
{
	uint64_t r = (uint64_t)g[greg_of[in->reg]];
	uint64_t x = in->kind == BASE_X86_LOAD_SX ? (uint64_t)(int64_t)(int8_t)val : val;

	if (in->dst_bits == 8 && in->high8)
		r = (r & ~0xff00ull) | (uint64_t)val << 8;
	else if (in->dst_bits == 8)
		r = (r & ~0xffull) | val;
	else if (in->dst_bits == 16)
		r = (r & ~0xffffull) | (x & 0xffff);
	else
		r = in->dst_bits == 32 ? (x & 0xffffffffull) : x; /* a 32-bit write clears the upper half */
	g[greg_of[in->reg]] = (greg_t)r;
}

/* The source byte of a store. */
static uint8_t memic_store_val(const greg_t *g, const struct base_x86_insn *in)
{
	uint64_t r;

	if (in->kind == BASE_X86_STORE_IMM)
		return (uint8_t)in->imm;
	r = (uint64_t)g[greg_of[in->reg]];
	return (uint8_t)(in->high8 ? r >> 8 : r);
}

/* Performs the access at addr of the faulting context; false when it is not an op address's. */
static bool memic_emulate(uintptr_t addr, ucontext_t *uc, const struct vb_memic_view *v)
{
	greg_t *g = uc->uc_mcontext.gregs;
	struct base_x86_insn in;
	uint8_t val;

	bool store;

	if (!base_x86_decode((const uint8_t *)g[REG_RIP], &in) || !memic_insn_ok(&in))
		return false;
	store = in.kind == BASE_X86_STORE_REG || in.kind == BASE_X86_STORE_IMM;
	val = memic_apply(v, addr, store, store ? memic_store_val(g, &in) : 0);
	if (!store)
		memic_set_reg(g, &in, val);
	g[REG_RIP] += in.len;
	return true;
}
#else
#define VB_MEMIC_DECODER 0 /* the instruction decoder is x86-64's: no op addresses elsewhere */

static bool memic_emulate(uintptr_t addr, ucontext_t *uc, const struct vb_memic_view *v)
{
	(void)addr, (void)uc, (void)v;
	return false;
}
#endif

/* The mapping holding *addr: 1 when it is the op file's, 2 when another's; 0 (go on) when it does not hold it. */
static int memic_map(const struct base_map *m, void *arg)
{
	uintptr_t addr = *(const uintptr_t *)arg;

	if (addr < m->lo || addr >= m->hi)
		return 0;
	return m->ino == op_ino ? 1 : 2;
}

/*
 * Whether addr is still mapped from the op file: the program unmaps op
 * mappings itself, and the addresses may hold another mapping since.
 * base_maps_scan allocates nothing: the SIGSEGV handler runs this.
 */
static bool memic_mapped_ours(uintptr_t addr)
{
	return base_maps_scan(memic_map, &addr) == 1;
}

/* The op mapping holding addr, copied consistently; false when none does. */
static bool memic_find(uintptr_t addr, struct vb_memic_view *out)
{
	for (int i = 0; i < VB_MEMIC_MAPS; i++) {
		struct vb_memic_map *m = &maps[i];
		uint32_t s0, s1;

		do {
			s0 = atomic_load(&m->seq);
			out->start = atomic_load(&m->start);
			out->len = atomic_load(&m->len);
			out->mem = atomic_load(&m->mem);
			out->op = atomic_load(&m->op);
			s1 = atomic_load(&m->seq);
		} while (s0 != s1 || (s0 & 1));
		if (out->start != 0 && addr - out->start < out->len)
			return true;
	}
	return false;
}

/* An op address's fault performed; false when the fault is not one (base_segv.h). */
static bool memic_fault(void *addr, ucontext_t *uc)
{
	struct vb_memic_view v;

	return memic_find((uintptr_t)addr, &v) && memic_mapped_ours((uintptr_t)addr) &&
	       memic_emulate((uintptr_t)addr, uc, &v);
}

static void memic_install(void)
{
	struct stat st;

	op_fd = base_priv_memfd("softdpu-memic-op", MFD_CLOEXEC);
	if (op_fd < 0 || fstat(op_fd, &st) != 0) {
		handler_err = errno;
		return;
	}
	op_ino = (uint64_t)st.st_ino;
	handler_err = base_segv_add(memic_fault);
}

/* Writes a slot's fields between two seq bumps. Lock held. */
static void memic_slot_set(struct vb_memic_map *m, const void *owner, uintptr_t start, uintptr_t len, uintptr_t mem,
			   uint32_t op)
{
	atomic_fetch_add(&m->seq, 1);
	atomic_store(&m->start, start);
	atomic_store(&m->len, len);
	atomic_store(&m->mem, mem);
	atomic_store(&m->op, op);
	m->owner = owner;
	atomic_fetch_add(&m->seq, 1);
}

/*
 * Slots the program has unmapped (munmap, unseen here) are freed: those
 * no longer mapped from the op file, and those the new mapping at start
 * overlaps (the addresses were free for it). Lock held.
 */
static void memic_forget_unmapped(uintptr_t start, uintptr_t len)
{
	for (int i = 0; i < VB_MEMIC_MAPS; i++) {
		struct vb_memic_map *m = &maps[i];
		uintptr_t s = atomic_load(&m->start);

		if (s != 0 && ((s < start + len && start < s + atomic_load(&m->len)) || !memic_mapped_ours(s)))
			memic_slot_set(m, NULL, 0, 0, 0, 0);
	}
}

void *vb_memic_map(const void *owner, uint8_t *mem, size_t len, uint8_t op)
{
	struct vb_memic_map *free_slot = NULL;
	void *p;

	if (!VB_MEMIC_DECODER || op >= 32 || !(VB_MEMIC_OPS & 1u << op)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	pthread_once(&handler_once, memic_install);
	if (handler_err != 0) {
		errno = handler_err;
		return NULL;
	}
	/* Of the op file, never read or written: a permission fault comes before any access to it. */
	p = mmap(NULL, len, PROT_NONE, MAP_SHARED | MAP_NORESERVE, op_fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	pthread_mutex_lock(&maps_lock);
	memic_forget_unmapped((uintptr_t)p, len);
	for (int i = 0; i < VB_MEMIC_MAPS && free_slot == NULL; i++)
		if (atomic_load(&maps[i].start) == 0)
			free_slot = &maps[i];
	if (free_slot != NULL)
		memic_slot_set(free_slot, owner, (uintptr_t)p, len, (uintptr_t)mem, op);
	pthread_mutex_unlock(&maps_lock);
	if (free_slot == NULL) {
		BASE_WARN("mlx5dv_dm_map_op_addr: %d op mappings live already", VB_MEMIC_MAPS);
		munmap(p, len);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void vb_memic_drop(const void *owner)
{
	pthread_mutex_lock(&maps_lock);
	for (int i = 0; i < VB_MEMIC_MAPS; i++)
		if (atomic_load(&maps[i].start) != 0 && maps[i].owner == owner)
			memic_slot_set(&maps[i], NULL, 0, 0, 0, 0);
	pthread_mutex_unlock(&maps_lock);
}
