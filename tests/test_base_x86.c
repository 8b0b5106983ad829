/*
 * The x86-64 decoder a fault handler steps over stores with (base_x86.h):
 * each store form programs use for doorbells and BlueFlame copies (MOV of a
 * register or an immediate, MOVNTI, the SSE, VEX and EVEX vector stores),
 * the one-byte loads MEMIC emulates, with their length, width, register
 * and memory operand, and the instructions it must refuse (read-modify-
 * writes, locked, string and fs-relative accesses, loads wider than a byte,
 * register operands, broadcasts). The bytes are an assembler's (GNU as).
 */
#include <stdint.h>
#include <string.h>

#include "base_x86.h"
#include "harness.h"

#define N BASE_X86_NOREG

struct x86_case {
	const char *name;
	uint8_t bytes[16];
	uint8_t len, kind, width, reg, base, index, scale;
	int32_t disp;
};

static const struct x86_case stores[] = {
	{ "mov %al,(%rdi)", { 0x88, 0x07 }, 2, BASE_X86_STORE_REG, 1, 0, 7, N, 1, 0 },
	{ "mov %ah,0x10(%rdi)", { 0x88, 0x67, 0x10 }, 3, BASE_X86_STORE_REG, 1, 0, 7, N, 1, 0x10 },
	{ "mov %r9b,(%rsi,%rcx,4)", { 0x44, 0x88, 0x0c, 0x8e }, 4, BASE_X86_STORE_REG, 1, 9, 6, 1, 4, 0 },
	{ "mov %ax,(%rdi)", { 0x66, 0x89, 0x07 }, 3, BASE_X86_STORE_REG, 2, 0, 7, N, 1, 0 },
	{ "mov %eax,-0x20(%rdi,%rdx,1)", { 0x89, 0x44, 0x17, 0xe0 }, 4, BASE_X86_STORE_REG, 4, 0, 7, 2, 1, -0x20 },
	{ "mov %rax,0x800(%rdi)", { 0x48, 0x89, 0x87, 0x00, 0x08, 0x00, 0x00 }, 7, BASE_X86_STORE_REG, 8, 0, 7, N, 1, 0x800 },
	{ "mov %r12,0x0(%r13)", { 0x4d, 0x89, 0x65, 0x00 }, 4, BASE_X86_STORE_REG, 8, 12, 13, N, 1, 0 },
	{ "movb $0x7f,(%rdi)", { 0xc6, 0x07, 0x7f }, 3, BASE_X86_STORE_IMM, 1, 0, 7, N, 1, 0 },
	{ "movw $0x1234,(%rdi)", { 0x66, 0xc7, 0x07, 0x34, 0x12 }, 5, BASE_X86_STORE_IMM, 2, 0, 7, N, 1, 0 },
	{ "movl $-2,0x8(%rsp)", { 0xc7, 0x44, 0x24, 0x08, 0xfe, 0xff, 0xff, 0xff }, 8, BASE_X86_STORE_IMM, 4, 0, 4, N, 1, 8 },
	{ "movq $-1,0x0(%rip)", { 0x48, 0xc7, 0x05, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff }, 11,
	  BASE_X86_STORE_IMM, 8, 0, BASE_X86_RIP, N, 1, 0 },
	{ "movnti %eax,(%rdi)", { 0x0f, 0xc3, 0x07 }, 3, BASE_X86_STORE_REG, 4, 0, 7, N, 1, 0 },
	{ "movnti %r8,0x40(%rdi)", { 0x4c, 0x0f, 0xc3, 0x47, 0x40 }, 5, BASE_X86_STORE_REG, 8, 8, 7, N, 1, 0x40 },
	{ "movaps %xmm0,(%rdi)", { 0x0f, 0x29, 0x07 }, 3, BASE_X86_STORE_VEC, 16, 0, 7, N, 1, 0 },
	{ "movups %xmm9,0x10(%rdi)", { 0x44, 0x0f, 0x11, 0x4f, 0x10 }, 5, BASE_X86_STORE_VEC, 16, 9, 7, N, 1, 0x10 },
	{ "movapd %xmm1,(%rdi)", { 0x66, 0x0f, 0x29, 0x0f }, 4, BASE_X86_STORE_VEC, 16, 1, 7, N, 1, 0 },
	{ "movdqa %xmm2,0x20(%rdi)", { 0x66, 0x0f, 0x7f, 0x57, 0x20 }, 5, BASE_X86_STORE_VEC, 16, 2, 7, N, 1, 0x20 },
	{ "movdqu %xmm15,0x30(%r11)", { 0xf3, 0x45, 0x0f, 0x7f, 0x7b, 0x30 }, 6, BASE_X86_STORE_VEC, 16, 15, 11, N, 1, 0x30 },
	{ "movntdq %xmm3,(%rdi)", { 0x66, 0x0f, 0xe7, 0x1f }, 4, BASE_X86_STORE_VEC, 16, 3, 7, N, 1, 0 },
	{ "movntps %xmm4,(%rdi)", { 0x0f, 0x2b, 0x27 }, 3, BASE_X86_STORE_VEC, 16, 4, 7, N, 1, 0 },
	{ "movq %xmm5,(%rdi)", { 0x66, 0x0f, 0xd6, 0x2f }, 4, BASE_X86_STORE_VEC, 8, 5, 7, N, 1, 0 },
	{ "movsd %xmm6,(%rdi)", { 0xf2, 0x0f, 0x11, 0x37 }, 4, BASE_X86_STORE_VEC, 8, 6, 7, N, 1, 0 },
	{ "movss %xmm7,(%rdi)", { 0xf3, 0x0f, 0x11, 0x3f }, 4, BASE_X86_STORE_VEC, 4, 7, 7, N, 1, 0 },
	{ "vmovdqa %ymm0,(%rdi)", { 0xc5, 0xfd, 0x7f, 0x07 }, 4, BASE_X86_STORE_VEC, 32, 0, 7, N, 1, 0 },
	{ "vmovdqu %ymm1,0x20(%rdi)", { 0xc5, 0xfe, 0x7f, 0x4f, 0x20 }, 5, BASE_X86_STORE_VEC, 32, 1, 7, N, 1, 0x20 },
	{ "vmovdqu %xmm14,(%r9)", { 0xc4, 0x41, 0x7a, 0x7f, 0x31 }, 5, BASE_X86_STORE_VEC, 16, 14, 9, N, 1, 0 },
	{ "vmovntdq %ymm2,(%rdi)", { 0xc5, 0xfd, 0xe7, 0x17 }, 4, BASE_X86_STORE_VEC, 32, 2, 7, N, 1, 0 },
	{ "vmovaps %ymm3,(%rdi)", { 0xc5, 0xfc, 0x29, 0x1f }, 4, BASE_X86_STORE_VEC, 32, 3, 7, N, 1, 0 },
	{ "vmovups %ymm12,-0x20(%rdi,%rdx,1)", { 0xc5, 0x7c, 0x11, 0x64, 0x17, 0xe0 }, 6, BASE_X86_STORE_VEC, 32, 12, 7, 2, 1,
	  -0x20 },
	{ "vmovdqu64 %ymm16,(%rdi)", { 0x62, 0xe1, 0xfe, 0x28, 0x7f, 0x07 }, 6, BASE_X86_STORE_VEC, 32, 16, 7, N, 1, 0 },
	{ "vmovdqu64 %ymm17,-0x20(%rdi,%rdx,1)", { 0x62, 0xe1, 0xfe, 0x28, 0x7f, 0x4c, 0x17, 0xff }, 8, BASE_X86_STORE_VEC,
	  32, 17, 7, 2, 1, -0x20 },
	/* EVEX's 8-bit displacement is scaled by the vector's size: 0x01 is 0x40 here. */
	{ "vmovdqu64 %zmm16,0x40(%rdi)", { 0x62, 0xe1, 0xfe, 0x48, 0x7f, 0x47, 0x01 }, 7, BASE_X86_STORE_VEC, 64, 16, 7, N, 1,
	  0x40 },
	{ "vmovdqa64 %zmm31,(%rdi)", { 0x62, 0x61, 0xfd, 0x48, 0x7f, 0x3f }, 6, BASE_X86_STORE_VEC, 64, 31, 7, N, 1, 0 },
	{ "vmovntdq %zmm1,(%rdi)", { 0x62, 0xf1, 0x7d, 0x48, 0xe7, 0x0f }, 6, BASE_X86_STORE_VEC, 64, 1, 7, N, 1, 0 },
	{ "mov (%rdi),%al", { 0x8a, 0x07 }, 2, BASE_X86_LOAD, 1, 0, 7, N, 1, 0 },
	{ "movzbl (%rdi),%eax", { 0x0f, 0xb6, 0x07 }, 3, BASE_X86_LOAD_ZX, 1, 0, 7, N, 1, 0 },
	{ "movsbq 0x3(%rdi),%rax", { 0x48, 0x0f, 0xbe, 0x47, 0x03 }, 5, BASE_X86_LOAD_SX, 1, 0, 7, N, 1, 3 },
	{ "mov %al,%ds:(%rdi)", { 0x3e, 0x88, 0x07 }, 3, BASE_X86_STORE_REG, 1, 0, 7, N, 1, 0 },
};

static const struct {
	const char *name;
	uint8_t bytes[16];
} refused[] = {
	{ "lock addl $1,(%rdi)", { 0xf0, 0x83, 0x07, 0x01 } },
	{ "addl $1,(%rdi)", { 0x83, 0x07, 0x01 } },
	{ "rep movsb", { 0xf3, 0xa4 } },
	{ "mov %eax,%fs:(%rdi)", { 0x64, 0x89, 0x07 } },
	{ "mov (%rdi),%eax", { 0x8b, 0x07 } },
	{ "mov %eax,%ebx", { 0x89, 0xc3 } },
	{ "movaps %xmm0,%xmm1", { 0x0f, 0x28, 0xc8 } },
	{ "movdqa (%rdi),%xmm0", { 0x66, 0x0f, 0x6f, 0x07 } },
	{ "vmovdqa (%rdi),%ymm0", { 0xc5, 0xfd, 0x6f, 0x07 } },
	{ "xchg %eax,(%rdi)", { 0x87, 0x07 } },
	{ "mov %eax,(%edi)", { 0x67, 0x89, 0x07 } },
	{ "vpbroadcastd (%rdi),%zmm0", { 0x62, 0xf2, 0x7d, 0x48, 0x58, 0x07 } },
	{ "incl (%rdi)", { 0xff, 0x07 } },
	{ "movb $1,(%rdi) /1", { 0xc6, 0x0f, 0x01 } },
	{ "movaps %xmm0,(%rdi) {1to4}", { 0x62, 0xf1, 0x7c, 0x18, 0x29, 0x07 } },
};

static void test_stores_decoded(void)
{
	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++) {
		const struct x86_case *c = &stores[i];
		struct base_x86_insn in;
		bool ok = base_x86_decode(c->bytes, &in);

		if (!ok || in.len != c->len || in.kind != c->kind || in.width != c->width || in.reg != c->reg ||
		    in.base != c->base || in.index != c->index || in.scale != c->scale || in.disp != c->disp)
			printf("  %s: ok %d len %u kind %u width %u reg %u base %u index %u scale %u disp %d\n", c->name,
			       ok, in.len, in.kind, in.width, in.reg, in.base, in.index, in.scale, in.disp);
		CHECK(ok);
		CHECK(in.len == c->len && in.kind == c->kind && in.width == c->width && in.reg == c->reg);
		CHECK(in.base == c->base && in.index == c->index && in.scale == c->scale && in.disp == c->disp);
	}
}

static void test_high8_and_imm(void)
{
	struct base_x86_insn in;

	CHECK(base_x86_decode(stores[1].bytes, &in) && in.high8 && in.reg == 0); /* %ah */
	CHECK(base_x86_decode(stores[2].bytes, &in) && !in.high8 && in.reg == 9);
	CHECK(base_x86_decode(stores[7].bytes, &in) && in.imm == 0x7f);
	CHECK(base_x86_decode(stores[8].bytes, &in) && in.imm == 0x1234);
	CHECK(base_x86_decode(stores[9].bytes, &in) && in.imm == -2);
	CHECK(base_x86_decode(stores[10].bytes, &in) && in.imm == -1);
	CHECK(base_x86_decode(stores[35].bytes, &in) && in.dst_bits == 32);
	CHECK(base_x86_decode(stores[36].bytes, &in) && in.dst_bits == 64);
}

static void test_addresses(void)
{
	uint64_t regs[16];
	struct base_x86_insn in;

	for (int i = 0; i < 16; i++)
		regs[i] = 0x10000u * (uint64_t)(i + 1);
	CHECK(base_x86_decode(stores[2].bytes, &in)); /* (%rsi,%rcx,4) */
	CHECK(base_x86_addr(&in, regs, 0) == regs[6] + regs[1] * 4);
	CHECK(base_x86_decode(stores[4].bytes, &in)); /* -0x20(%rdi,%rdx,1) */
	CHECK(base_x86_addr(&in, regs, 0) == regs[7] + regs[2] - 0x20);
	CHECK(base_x86_decode(stores[10].bytes, &in)); /* 0x0(%rip): the next instruction's address */
	CHECK(base_x86_addr(&in, regs, 0x4000) == 0x4000 + 11);
	CHECK(base_x86_decode(stores[31].bytes, &in)); /* EVEX disp8 0x01 x 64 */
	CHECK(base_x86_addr(&in, regs, 0) == regs[7] + 0x40);
}

static void test_refused(void)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct base_x86_insn in;
		bool ok = base_x86_decode(refused[i].bytes, &in);

		if (ok)
			printf("  %s: decoded (len %u kind %u)\n", refused[i].name, in.len, in.kind);
		CHECK(!ok);
	}
}

int main(void)
{
	RUN(test_stores_decoded);
	RUN(test_high8_and_imm);
	RUN(test_addresses);
	RUN(test_refused);
	return th_summary("test_base_x86");
}
