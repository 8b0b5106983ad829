/*
 * base_x86 — the x86-64 instructions a fault handler steps over or
 * performs: the moves programs use to store into device registers (MOV of a
 * register or immediate, MOVNTI, the SSE/AVX/AVX-512 vector stores
 * memcpy and BlueFlame copies emit) and the one-byte loads and stores the
 * MEMIC op addresses emulate. Anything else (string moves, locked or
 * fs/gs-relative accesses, read-modify-writes, unknown opcodes) is refused,
 * so its fault goes on as any fault would.
 *
 * Only the instruction bytes are read; they are the faulting instruction's
 * (mapped: the program runs them), no more than its length plus one.
 */
#ifndef BASE_X86_H_
#define BASE_X86_H_

#include <stdbool.h>
#include <stdint.h>

enum base_x86_kind {
	BASE_X86_STORE_REG,  /* a general register's low `width` bytes (high8: AH..BH) */
	BASE_X86_STORE_IMM,  /* an immediate (imm, sign-extended to width) */
	BASE_X86_STORE_VEC,  /* a vector (MMX/XMM/YMM/ZMM) register's */
	BASE_X86_LOAD,	     /* into a general register, dst_bits wide */
	BASE_X86_LOAD_ZX,    /* MOVZX */
	BASE_X86_LOAD_SX,    /* MOVSX */
};

#define BASE_X86_NOREG 0xff
#define BASE_X86_RIP 16

struct base_x86_insn {
	uint8_t len;	  /* instruction bytes */
	uint8_t kind;	  /* enum base_x86_kind */
	uint8_t width;	  /* bytes accessed: 1, 2, 4, 8, 16, 32 or 64 */
	uint8_t dst_bits; /* a load's destination width: 8, 16, 32 or 64 */
	uint8_t reg;	  /* the register operand, 0..31 */
	bool high8;	  /* AH, CH, DH or BH */
	int64_t imm;
	/* The memory operand: base + index * scale + disp (base BASE_X86_RIP: the next instruction's address). */
	uint8_t base, index, scale;
	int32_t disp;
};

/* Decodes the instruction at p; false when it is none of the moves above or not of memory. */
bool base_x86_decode(const uint8_t *p, struct base_x86_insn *in);

/*
 * The memory operand's address, given the 16 general registers (x86
 * numbering: rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15) and the
 * instruction's own address.
 */
uintptr_t base_x86_addr(const struct base_x86_insn *in, const uint64_t regs[16], uintptr_t rip);

#endif /* BASE_X86_H_ */
