/*
 * fx_isolate — DPA memory isolation between FlexIO processes with x86
 * memory protection keys (PKU).
 *
 * Every process's memory (its heap arena and its image's writable pages)
 * carries a protection key of its own. A hart entering device code writes
 * its PKRU so that every key of the library but its process's is denied,
 * and writes it back when it leaves; a stray pointer into another process's
 * memory then faults, and the fault is the process's error state like any
 * other crash of device code. Changing rights is one unprivileged register
 * write each way, no system call: some 40 ns an entry (AMD EPYC, a VM).
 *
 * A key is denied to every thread but the one that allocated it, and threads
 * inherit PKRU from their creator. So the library takes its pool of keys in
 * a constructor, on the thread loading it before the program starts its
 * threads, with rights allowing access: every thread created afterwards can
 * reach every process's memory from host code. A thread that existed before
 * (or one that changed its PKRU) faults instead; the library's fault
 * handler grants the keys in the interrupted context and the access is
 * retried (fx_iso_fault_fixup).
 *
 * Without protection keys (not x86, no OS support, valgrind, which hides
 * them) the pool is empty and every call here does nothing; the first
 * process created says so in a warning.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "fx_int.h"
#include "fx_isolate.h"

/* Hardware has 16 keys, key 0 being everyone's: at most 12 are the library's, the rest the program's. */
#define FX_ISO_MAX_KEYS 12
#define FX_ISO_AD(k) (1u << (2 * (k)))	 /* PKRU access-disable bit of key k */
#define FX_ISO_BITS(k) (3u << (2 * (k))) /* access- and write-disable bits */
#define FX_ISO_XFEATURE_PKRU 9
#define FX_ISO_FP_MAGIC1 0x46505853u /* the kernel's mark of an extended (XSAVE) signal frame */
#define FX_ISO_SW_BYTES 464	     /* offset of that mark in the frame's FXSAVE area */
#define FX_ISO_XSTATE_BV 512	     /* offset of the XSAVE header's component bitmap */

static struct {
	int key[FX_ISO_MAX_KEYS];
	uint32_t n;	   /* keys in the pool; 0: no isolation */
	uint32_t bits;	   /* PKRU bits of every pool key */
	uint32_t ad;	   /* PKRU access-disable bits of every pool key */
	uint32_t pkru_off; /* offset of PKRU in a signal frame's XSAVE area (0: unknown) */
	uintptr_t page;
	pthread_mutex_t mu;
	uint32_t used; /* bit i: key[i] is a live process's (under mu) */
} fx_iso = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* The PKRU a hart had before it entered device code, to leave with. */
static __thread uint32_t fx_iso_saved;
static __thread bool fx_iso_in;

#if defined(__x86_64__)
static inline uint32_t fx_rdpkru(void)
{
	uint32_t eax, edx;

	__asm__ volatile(".byte 0x0f, 0x01, 0xee" : "=a"(eax), "=d"(edx) : "c"(0));
	return eax;
}

static inline void fx_wrpkru(uint32_t v)
{
	/* The clobber keeps the compiler from moving memory accesses across the change of rights. */
	__asm__ volatile(".byte 0x0f, 0x01, 0xef" : : "a"(v), "c"(0), "d"(0) : "memory");
}

/* Whether the CPU has protection keys and the kernel turned them on; notes where signal frames keep PKRU. */
static bool fx_iso_cpu(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(c & bit_OSPKE))
		return false;
	if (__get_cpuid_count(0xd, FX_ISO_XFEATURE_PKRU, &a, &b, &c, &d) && a >= 4)
		fx_iso.pkru_off = b;
	return true;
}
#else
static inline uint32_t fx_rdpkru(void)
{
	return 0;
}

static inline void fx_wrpkru(uint32_t v)
{
	(void)v;
}

static bool fx_iso_cpu(void)
{
	return false;
}
#endif

/*
 * The pool, taken on the loading thread with access allowed, before the
 * program starts threads. Checked on Linux 6.18: a pthread created after
 * pkey_alloc(0, 0) starts with its creator's PKRU, the new key allowed.
 */
__attribute__((constructor)) static void fx_iso_load(void)
{
	fx_iso.page = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (!fx_iso_cpu())
		return;
	while (fx_iso.n < FX_ISO_MAX_KEYS) {
		int k = pkey_alloc(0, 0);

		if (k <= 0 || k > 15) { /* none left, or not a key PKRU can name */
			if (k > 0)
				pkey_free(k);
			break;
		}
		fx_iso.key[fx_iso.n++] = k;
		fx_iso.bits |= FX_ISO_BITS(k);
		fx_iso.ad |= FX_ISO_AD(k);
	}
}

/* The keys go back when the library is unloaded with no process holding one. */
__attribute__((destructor)) static void fx_iso_unload(void)
{
	pthread_mutex_lock(&fx_iso.mu);
	if (fx_iso.used == 0)
		for (uint32_t i = 0; i < fx_iso.n; i++)
			pkey_free(fx_iso.key[i]);
	pthread_mutex_unlock(&fx_iso.mu);
}

/* A free key of the pool, or -1. */
static int fx_iso_key_get(void)
{
	int k = -1;

	pthread_mutex_lock(&fx_iso.mu);
	for (uint32_t i = 0; i < fx_iso.n; i++) {
		if (fx_iso.used & (1u << i))
			continue;
		fx_iso.used |= 1u << i;
		k = fx_iso.key[i];
		break;
	}
	pthread_mutex_unlock(&fx_iso.mu);
	return k;
}

static void fx_iso_key_put(int k)
{
	pthread_mutex_lock(&fx_iso.mu);
	for (uint32_t i = 0; i < fx_iso.n; i++)
		if (fx_iso.key[i] == k)
			fx_iso.used &= ~(1u << i);
	pthread_mutex_unlock(&fx_iso.mu);
}

static bool fx_iso_pool_key(int k)
{
	for (uint32_t i = 0; i < fx_iso.n; i++)
		if (fx_iso.key[i] == k)
			return true;
	return false;
}

/* ---- the image's writable pages ---- */

struct fx_iso_walk {
	uintptr_t base; /* the image's load address */
	const char *name;
	int key;
	bool found;
	int rc; /* -1 (errno set) when a pkey_mprotect failed */
};

static uintptr_t fx_down(uintptr_t a)
{
	return a & ~(fx_iso.page - 1);
}

static uintptr_t fx_up(uintptr_t a)
{
	return (a + fx_iso.page - 1) & ~(fx_iso.page - 1);
}

static int fx_iso_protect(uintptr_t lo, uintptr_t hi, int prot, int key)
{
	if (lo >= hi)
		return 0;
	return pkey_mprotect((void *)lo, hi - lo, prot, key);
}

/*
 * Segment i's pages less any page another segment shares (the loader gives
 * a shared page the protection of the segment mapped last: not ours to set).
 */
static void fx_iso_own_pages(const struct dl_phdr_info *info, int i, uintptr_t *lo, uintptr_t *hi)
{
	const ElfW(Phdr) *s = &info->dlpi_phdr[i];

	*lo = fx_down(info->dlpi_addr + s->p_vaddr);
	*hi = fx_up(info->dlpi_addr + s->p_vaddr + s->p_memsz);
	for (int j = 0; j < info->dlpi_phnum; j++) {
		const ElfW(Phdr) *o = &info->dlpi_phdr[j];
		uintptr_t olo = fx_down(info->dlpi_addr + o->p_vaddr);
		uintptr_t ohi = fx_up(info->dlpi_addr + o->p_vaddr + o->p_memsz);

		if (j == i || o->p_type != PT_LOAD || olo >= *hi || ohi <= *lo)
			continue;
		if (olo < *lo + fx_iso.page)
			*lo += fx_iso.page;
		if (ohi > *hi - fx_iso.page && *hi > *lo)
			*hi -= fx_iso.page;
	}
}

/*
 * Keys the writable segments of the image w names. The RELRO pages the
 * loader made read-only after relocating are left alone: pkey_mprotect sets
 * the protection too, and the loader reads them (.dynamic) from any thread.
 */
static int fx_iso_image_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fx_iso_walk *w = arg;
	uintptr_t rlo = 0, rhi = 0;

	(void)size;
	if (info->dlpi_addr != w->base || info->dlpi_name == NULL || strcmp(info->dlpi_name, w->name) != 0)
		return 0;
	w->found = true;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *s = &info->dlpi_phdr[i];

		if (s->p_type == PT_GNU_RELRO) { /* the loader's rounding: whole pages, down at both ends */
			rlo = fx_down(info->dlpi_addr + s->p_vaddr);
			rhi = fx_down(info->dlpi_addr + s->p_vaddr + s->p_memsz);
		}
	}
	for (int i = 0; i < info->dlpi_phnum && w->rc == 0; i++) {
		const ElfW(Phdr) *s = &info->dlpi_phdr[i];
		int prot = PROT_READ | PROT_WRITE | ((s->p_flags & PF_X) ? PROT_EXEC : 0);
		uintptr_t lo, hi;

		if (s->p_type != PT_LOAD || !(s->p_flags & PF_W))
			continue;
		fx_iso_own_pages(info, i, &lo, &hi);
		if (rlo < rhi && rlo < hi && rhi > lo) { /* the pages around the RELRO part */
			w->rc = fx_iso_protect(lo, rlo, prot, w->key);
			if (w->rc == 0)
				w->rc = fx_iso_protect(rhi > lo ? rhi : lo, hi, prot, w->key);
		} else {
			w->rc = fx_iso_protect(lo, hi, prot, w->key);
		}
	}
	return 1;
}

static int fx_iso_image(struct flexio_process *p, int key)
{
	struct link_map *lm = NULL;
	struct fx_iso_walk w = { .key = key };

	if (p->dl == NULL)
		return 0;
	if (dlinfo(p->dl, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL) {
		errno = ENOENT;
		return -1;
	}
	w.base = lm->l_addr;
	w.name = lm->l_name;
	dl_iterate_phdr(fx_iso_image_cb, &w);
	if (!w.found) {
		errno = ENOENT;
		return -1;
	}
	return w.rc;
}

/* p's heap and image under key; -1 (errno) at the first that fails. */
static int fx_iso_apply(struct flexio_process *p, int key)
{
	if (p->heap.base != NULL && pkey_mprotect(p->heap.base, p->heap.size, PROT_READ | PROT_WRITE, key) != 0)
		return -1;
	return fx_iso_image(p, key);
}

static atomic_flag fx_iso_off_told = ATOMIC_FLAG_INIT;

void fx_iso_proc_init(struct flexio_process *p)
{
	int key, err;

	p->pkey = -1;
	if (fx_iso.n == 0) {
		/* A limit of the machine, not of one process: said once, where a user sees it (a warning). */
		if (!atomic_flag_test_and_set(&fx_iso_off_told))
			BASE_WARN("DPA memory isolation between FlexIO processes is off: this machine has no usable "
				  "memory protection keys (x86 PKU), so device code of one process can read and write "
				  "another's DPA memory (docs/STATUS.md)");
		BASE_INFO("app %s: the process runs without DPA memory isolation (no memory protection keys here)",
			  p->app->name);
		return;
	}
	key = fx_iso_key_get();
	if (key < 0) {
		BASE_WARN("app %s: the process runs without DPA memory isolation (all %u protection keys are taken "
			  "by other processes)",
			  p->app->name, fx_iso.n);
		return;
	}
	if (fx_iso_apply(p, key) != 0) {
		err = errno;
		if (fx_iso_apply(p, 0) == 0) /* a key still on some page cannot be handed out again */
			fx_iso_key_put(key);
		BASE_WARN("app %s: the process runs without DPA memory isolation (pkey_mprotect: %s)", p->app->name,
			  strerror(err));
		return;
	}
	p->pkey = key;
}

void fx_iso_proc_fini(struct flexio_process *p)
{
	/*
	 * Back to key 0 even though the heap is unmapped next: dlclose may keep
	 * the image mapped, and a key freed while pages carry it would give the
	 * next process that takes it access to them.
	 */
	if (p->pkey < 0)
		return;
	if (fx_iso_apply(p, 0) == 0)
		fx_iso_key_put(p->pkey);
	else
		BASE_WARN("app %s: protection key %d kept out of use (pkey_mprotect: %s)", p->app->name, p->pkey,
			  strerror(errno));
	p->pkey = -1;
}

void fx_iso_device(const struct flexio_process *p)
{
	uint32_t cur, own;

	if (fx_iso.n == 0)
		return;
	cur = fx_rdpkru();
	own = p->pkey > 0 ? FX_ISO_BITS(p->pkey) : 0;
	fx_iso_saved = cur;
	fx_iso_in = true;
	/* A process without a key (keys exhausted) is denied the others' all the same. */
	fx_wrpkru(((cur & ~fx_iso.bits) | fx_iso.ad) & ~own & ~FX_ISO_BITS(0));
}

void fx_iso_host(void)
{
	uint32_t v;

	if (fx_iso.n == 0)
		return;
	/* After a signal the register holds the handler's rights: the saved ones are the thread's. */
	v = fx_iso_in ? fx_iso_saved : fx_rdpkru();
	fx_iso_in = false;
	fx_wrpkru(v & ~fx_iso.bits);
}

/* ---- host code faulting on a process's memory ---- */

struct fx_iso_sw_bytes { /* the kernel's struct _fpx_sw_bytes, at FX_ISO_SW_BYTES of the frame */
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
};

/* Where the interrupted context's PKRU is in its signal frame (restored by sigreturn), or NULL. */
static uint32_t *fx_iso_frame_pkru(void *uc)
{
#if defined(__x86_64__)
	uint8_t *x = (uint8_t *)((ucontext_t *)uc)->uc_mcontext.fpregs;
	struct fx_iso_sw_bytes sw;
	uint64_t bv;

	if (x == NULL || fx_iso.pkru_off < FX_ISO_XSTATE_BV + 64)
		return NULL;
	memcpy(&sw, x + FX_ISO_SW_BYTES, sizeof(sw));
	if (sw.magic1 != FX_ISO_FP_MAGIC1 || !(sw.xfeatures & (1ull << FX_ISO_XFEATURE_PKRU)) ||
	    sw.xstate_size < fx_iso.pkru_off + 4)
		return NULL;
	memcpy(&bv, x + FX_ISO_XSTATE_BV, sizeof(bv));
	/* PKRU in its init state is not in the frame: nothing there to change. */
	if (!(bv & (1ull << FX_ISO_XFEATURE_PKRU)))
		return NULL;
	return (uint32_t *)(void *)(x + fx_iso.pkru_off);
#else
	(void)uc;
	return NULL;
#endif
}

bool fx_iso_fault_fixup(int sig, siginfo_t *si, void *uc)
{
	uint32_t *pkru;

	if (fx_iso.n == 0 || sig != SIGSEGV || si == NULL || uc == NULL || si->si_code != SEGV_PKUERR ||
	    !fx_iso_pool_key((int)si->si_pkey))
		return false;
	pkru = fx_iso_frame_pkru(uc);
	/* Only a key the frame denies: granting nothing would retry into the same fault forever. */
	if (pkru == NULL || (*pkru & FX_ISO_BITS(si->si_pkey)) == 0)
		return false;
	*pkru &= ~fx_iso.bits;
	return true;
}
