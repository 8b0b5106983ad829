/*
 * Doorbell pages that trap (hw_trap.h): a store into an armed page is
 * stepped over on the writer's thread — each store form a program uses for
 * a doorbell or a BlueFlame copy, run here for real — without landing; the
 * stores right after it into the page (a BlueFlame copy's rest) cost no
 * second trap; an instruction the decoder does not know opens the page
 * (the store lands) until the engine thread's rearm; a fault that is not
 * a trapped page's reaches the handler installed before; a fork's child
 * has no traps; the last disarm leaves none; a side register's 8-byte
 * stores go to its own handler. No QP exists here: what a
 * trap runs is tested in test_verbs_rawtrap.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "hw_trap.h"

static size_t pgsz;
static sigjmp_buf prev_jmp;
static volatile sig_atomic_t prev_hits;
static void *volatile prev_addr;

/* The program's own handler, installed before any trap: faults not of a trapped page must reach it. */
static void prev_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	prev_hits++;
	prev_addr = si->si_addr;
	siglongjmp(prev_jmp, 1);
}

static uint8_t *page_new(void)
{
	void *p = mmap(NULL, pgsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A byte as memory holds it (not what the compiler remembers storing). */
static uint8_t rd(const uint8_t *p)
{
	return *(const volatile uint8_t *)p;
}

static bool page_zero(const uint8_t *p)
{
	for (size_t i = 0; i < pgsz; i++)
		if (rd(p + i) != 0)
			return false;
	return true;
}

static struct hw_trap_stats stats(void)
{
	struct hw_trap_stats s;

	hw_trap_stats(&s);
	return s;
}

/* Runs one store form into p (register values chosen non-zero): each must trap once and land nothing. */
#define STORE_CASE(name, body)                                                                                          \
	do {                                                                                                           \
		struct hw_trap_stats b = stats(), a;                                                                   \
		body;                                                                                                  \
		a = stats();                                                                                           \
		if (a.served != b.served + 1 || !page_zero(p))                                                         \
			printf("  %s: served %llu -> %llu\n", name, (unsigned long long)b.served,                        \
			       (unsigned long long)a.served);                                                          \
		CHECK(a.served == b.served + 1 && a.opened == b.opened);                                               \
		CHECK(page_zero(p));                                                                                   \
	} while (0)

static void test_store_forms_stepped(void)
{
	uint8_t *p = page_new();
	uint8_t *db = p + 0x800;
	uint64_t after = 0;

	CHECK(p != NULL);
	CHECK_OK(hw_trap_arm(p));
	CHECK(hw_trap_armed(p));
	STORE_CASE("mov r8", __asm__ volatile("movb %%al, (%0)" ::"r"(db), "a"(0x11) : "memory"));
	STORE_CASE("mov r16", __asm__ volatile("movw %%ax, 2(%0)" ::"r"(db), "a"(0x1111) : "memory"));
	STORE_CASE("mov r32", __asm__ volatile("movl %%eax, 4(%0)" ::"r"(db), "a"(0x11111111) : "memory"));
	STORE_CASE("mov r64", __asm__ volatile("movq %%rax, (%0)" ::"r"(db), "a"(0x1111111111111111ull) : "memory"));
	STORE_CASE("mov r64 sib", __asm__ volatile("movq %%r9, -8(%0,%1,8)" ::"r"(db), "r"(1ull), "r"(0) : "memory"));
	STORE_CASE("mov imm32", __asm__ volatile("movl $0x22222222, 0x100(%0)" ::"r"(db) : "memory"));
	STORE_CASE("mov imm64", __asm__ volatile("movq $-1, (%0)" ::"r"(db) : "memory"));
	STORE_CASE("movnti", __asm__ volatile("movnti %%rax, (%0)" ::"r"(db), "a"(3ull) : "memory"));
	STORE_CASE("movaps", __asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\tmovaps %%xmm0, (%0)" ::"r"(db) : "memory", "xmm0"));
	STORE_CASE("movups", __asm__ volatile("pcmpeqd %%xmm9, %%xmm9\n\tmovups %%xmm9, 8(%0)" ::"r"(db) : "memory", "xmm9"));
	STORE_CASE("movdqa", __asm__ volatile("pcmpeqd %%xmm1, %%xmm1\n\tmovdqa %%xmm1, 16(%0)" ::"r"(db) : "memory", "xmm1"));
	STORE_CASE("movdqu", __asm__ volatile("pcmpeqd %%xmm1, %%xmm1\n\tmovdqu %%xmm1, 1(%0)" ::"r"(db) : "memory", "xmm1"));
	STORE_CASE("movntdq", __asm__ volatile("pcmpeqd %%xmm2, %%xmm2\n\tmovntdq %%xmm2, (%0)" ::"r"(db) : "memory", "xmm2"));
	STORE_CASE("movntps", __asm__ volatile("pcmpeqd %%xmm2, %%xmm2\n\tmovntps %%xmm2, (%0)" ::"r"(db) : "memory", "xmm2"));
	if (__builtin_cpu_supports("avx")) {
		STORE_CASE("vmovdqa", __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\tvmovdqa %%ymm0, (%0)\n\tvzeroupper" ::"r"(db)
						  : "memory", "xmm0"));
		STORE_CASE("vmovdqu", __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\tvmovdqu %%ymm0, 3(%0)\n\tvzeroupper" ::"r"(db)
						  : "memory", "xmm0"));
		STORE_CASE("vmovntdq", __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\tvmovntdq %%ymm0, (%0)\n\tvzeroupper" ::"r"(db)
						   : "memory", "xmm0"));
		STORE_CASE("vmovaps", __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\tvmovaps %%ymm0, 32(%0)\n\tvzeroupper" ::"r"(db)
						  : "memory", "xmm0"));
		STORE_CASE("vmovdqu xmm", __asm__ volatile("vpcmpeqd %%xmm14, %%xmm14, %%xmm14\n\tvmovdqu %%xmm14, (%0)" ::"r"(db)
						      : "memory", "xmm14"));
	}
	if (__builtin_cpu_supports("avx512f")) {
		/* zmm16 as it is: this file is not built for AVX-512, so nothing of it lives there. */
		STORE_CASE("vmovdqu64 zmm", __asm__ volatile("vmovdqu64 %%zmm16, 0x40(%0)" ::"r"(db) : "memory"));
		STORE_CASE("vmovdqu64 ymm sib", __asm__ volatile("vmovdqu64 %%ymm17, -0x20(%0,%1,1)" ::"r"(db), "r"(64ull)
								: "memory"));
	}
	/* The instruction after each store ran: this one too. */
	after = 1;
	CHECK(after == 1);
	hw_trap_disarm(p);
	CHECK(!hw_trap_armed(p));
	munmap(p, pgsz);
}

/* A BlueFlame copy (64 bytes in 16-byte stores, or memcpy's) costs one trap; the stores after the first are stepped over. */
static void test_bf_copy_one_trap(void)
{
	uint8_t *p = page_new();
	uint8_t src[64] __attribute__((aligned(64)));
	struct hw_trap_stats b, a;

	CHECK(p != NULL);
	CHECK_OK(hw_trap_arm(p));
	memset(src, 0x5a, sizeof(src));
	b = stats();
	__asm__ volatile("movdqa (%1), %%xmm0\n\tmovdqa 16(%1), %%xmm1\n\tmovdqa 32(%1), %%xmm2\n\tmovdqa 48(%1), %%xmm3\n\t"
			 "movdqa %%xmm0, (%0)\n\tmovdqa %%xmm1, 16(%0)\n\tmovdqa %%xmm2, 32(%0)\n\tmovdqa %%xmm3, 48(%0)" ::"r"(p + 0x900),
			 "r"(src)
			 : "memory", "xmm0", "xmm1", "xmm2", "xmm3");
	a = stats();
	CHECK(a.served == b.served + 1 && a.stepped == b.stepped + 3);
	b = a;
	memcpy(p + 0x800, src, 64); /* libc's own copy (SSE, AVX or AVX-512 stores) */
	__asm__ volatile("" ::: "memory");
	a = stats();
	CHECK(a.served == b.served + 1 && a.opened == b.opened);
	CHECK(page_zero(p));
	hw_trap_disarm(p);
	munmap(p, pgsz);
}

static uint32_t side_calls, side_off_seen;
static uint64_t side_val;
static bool side_has_val;

static void side_fn(void *arg, uint32_t off, uint64_t val, bool has_val)
{
	CHECK(arg == &side_calls);
	side_calls++;
	side_off_seen = off;
	side_val = val;
	side_has_val = has_val;
}

/*
 * A doorbell page with a side register (a DevX UAR's CQ doorbell at 0x20):
 * an 8-byte store there goes to its handler with the value, nothing lands
 * and no QP is rung (served, not stepped as a BlueFlame copy); a narrower
 * store there, or a store elsewhere, is a doorbell's. Bad offsets: EINVAL.
 */
static void test_side_register(void)
{
	uint8_t *p = page_new();
	struct hw_trap_stats b, a;

	CHECK(p != NULL);
	CHECK(hw_trap_arm_side(p, 0x24, side_fn, &side_calls) == EINVAL);
	CHECK(hw_trap_arm_side(p, 4096, side_fn, &side_calls) == EINVAL);
	CHECK(hw_trap_arm_side(p, 0x20, NULL, NULL) == EINVAL);
	CHECK(!hw_trap_armed(p));
	CHECK_OK(hw_trap_arm_side(p, 0x20, side_fn, &side_calls));
	b = stats();
	__asm__ volatile("movq %%rax, 0x20(%0)" ::"r"(p), "a"(0x0102030405060708ull) : "memory");
	a = stats();
	CHECK(side_calls == 1 && side_off_seen == 0x20 && side_has_val && side_val == 0x0102030405060708ull);
	CHECK(a.served == b.served + 1 && a.stepped == b.stepped && page_zero(p));
	/* The same register by an immediate. */
	__asm__ volatile("movq $-2, 0x20(%0)" ::"r"(p) : "memory");
	CHECK(side_calls == 2 && side_has_val && side_val == (uint64_t)-2);
	/*
	 * Not the register: 4 bytes at it, 8 bytes beside it, a BlueFlame
	 * store: doorbells (each trapped, or stepped over as the rest of the
	 * one before when the compiler put them back to back), the handler not
	 * called.
	 */
	b = stats();
	__asm__ volatile("movl %%eax, 0x20(%0)" ::"r"(p), "a"(7) : "memory");
	__asm__ volatile("movq %%rax, 0x28(%0)" ::"r"(p), "a"(7ull) : "memory");
	__asm__ volatile("movq %%rax, 0x800(%0)" ::"r"(p), "a"(7ull) : "memory");
	a = stats();
	CHECK(side_calls == 2 && (a.served - b.served) + (a.stepped - b.stepped) == 3 && page_zero(p));
	hw_trap_disarm(p);
	CHECK(!hw_trap_armed(p));
	munmap(p, pgsz);
}

/* An instruction not stepped over (a read-modify-write) opens the page: it lands; rearm closes it again. */
static void test_unknown_opens(void)
{
	uint8_t *p = page_new();
	struct hw_trap_stats b, a;

	CHECK(p != NULL);
	CHECK_OK(hw_trap_arm(p));
	b = stats();
	__asm__ volatile("addl $5, (%0)" ::"r"(p + 0x800) : "memory");
	a = stats();
	CHECK(a.opened == b.opened + 1 && a.served == b.served);
	CHECK(rd(p + 0x800) == 5);
	/* Written freely while open. */
	*(volatile uint8_t *)(p + 0x801) = 7;
	CHECK(rd(p + 0x801) == 7 && stats().served == a.served);
	for (int i = 0; i < 3; i++)
		hw_trap_rearm();
	CHECK(hw_trap_armed(p));
	b = stats();
	*(volatile uint64_t *)(p + 0x808) = 9;
	a = stats();
	CHECK(a.served == b.served + 1 && rd(p + 0x808) == 0);
	hw_trap_disarm(p);
	munmap(p, pgsz);
}

/* Faults of other pages reach the handler installed before; a trapped page's never do. */
static void test_chains_to_previous(void)
{
	uint8_t *armed = page_new(), *none = mmap(NULL, pgsz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sig_atomic_t hits;

	CHECK(armed != NULL && none != MAP_FAILED);
	CHECK_OK(hw_trap_arm(armed));
	hits = prev_hits;
	*(volatile uint32_t *)(armed + 0x800) = 1;
	CHECK(prev_hits == hits);
	if (sigsetjmp(prev_jmp, 1) == 0)
		*(volatile uint32_t *)(none + 16) = 1;
	CHECK(prev_hits == hits + 1 && prev_addr == none + 16);
	/* A read of a never-readable page (not an access a trap serves) too. */
	if (sigsetjmp(prev_jmp, 1) == 0)
		(void)*(volatile uint32_t *)(none + 32);
	CHECK(prev_hits == hits + 2 && prev_addr == none + 32);
	hw_trap_disarm(armed);
	munmap(armed, pgsz);
	munmap(none, pgsz);
}

/* Counted arms; the last disarm leaves a plain page, and so does a fork's child. */
static void test_disarm_and_fork(void)
{
	uint8_t *p = page_new();
	int status = -1;
	pid_t pid;

	CHECK(p != NULL);
	CHECK_OK(hw_trap_arm(p));
	CHECK_OK(hw_trap_arm(p));
	hw_trap_disarm(p);
	CHECK(hw_trap_armed(p));
	*(volatile uint64_t *)(p + 0x800) = 0x77;
	CHECK(rd(p + 0x800) == 0);
	pid = fork();
	if (pid == 0) {
		*(volatile uint64_t *)(p + 0x800) = 0x66;
		_exit(rd(p + 0x800) == 0x66 && !hw_trap_armed(p) ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(hw_trap_armed(p));
	hw_trap_disarm(p);
	CHECK(!hw_trap_armed(p));
	*(volatile uint64_t *)(p + 0x800) = 0x55;
	CHECK(rd(p + 0x800) == 0x55);
	CHECK_ERR(hw_trap_arm(p + 1), EINVAL);
	munmap(p, pgsz);
}

int main(void)
{
	struct sigaction sa;

	pgsz = (size_t)sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prev_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	if (!hw_trap_enabled()) {
		printf("SKIP test_hw_trap: traps off (not x86-64, or SOFTDPU_RAW_TRAP=0)\n");
		return 77;
	}
	RUN(test_store_forms_stepped);
	RUN(test_bf_copy_one_trap);
	RUN(test_side_register);
	RUN(test_unknown_opens);
	RUN(test_chains_to_previous);
	RUN(test_disarm_and_fork);
	return th_summary("test_hw_trap");
}
