/*
 * base_x86 — decoding the memory moves a fault handler steps over (base_x86.h).
 */
#include "base_x86.h"

#include <string.h>

/* The prefixes and the REX byte before the opcode. */
struct x86_pfx {
	uint8_t rex; /* 0x40..0x4f, or 0 */
	uint8_t rep; /* 0xf2, 0xf3 or 0: the SSE forms' mandatory prefix */
	bool opsz16; /* 0x66 */
};

/* Where the opcode starts; -1 for a prefix no plain move carries (lock, fs/gs, address size). */
static int x86_prefixes(const uint8_t *p, struct x86_pfx *f)
{
	int i = 0;

	memset(f, 0, sizeof(*f));
	for (;; i++) {
		if (i == 14)
			return -1;
		if (p[i] == 0x66)
			f->opsz16 = true;
		else if (p[i] == 0xf2 || p[i] == 0xf3)
			f->rep = p[i];
		else if (p[i] == 0xf0 || p[i] == 0x64 || p[i] == 0x65 || p[i] == 0x67)
			return -1;
		else if (p[i] != 0x2e && p[i] != 0x3e && p[i] != 0x26 && p[i] != 0x36)
			break;
	}
	if ((p[i] & 0xf0) == 0x40)
		f->rex = p[i++];
	return i;
}

static int32_t x86_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return (int32_t)v;
}

/*
 * The ModRM memory operand at p (b, x: the extension bits of base and
 * index; n8: the scale of an 8-bit displacement, EVEX's compressed one).
 * Its bytes from ModRM on; -1 for a register operand.
 */
static int x86_mem(const uint8_t *p, uint8_t b, uint8_t x, int n8, struct base_x86_insn *in)
{
	uint8_t mod = p[0] >> 6, rm = p[0] & 7;
	int n = 1;

	if (mod == 3)
		return -1;
	in->base = (uint8_t)(rm | b << 3);
	in->index = BASE_X86_NOREG;
	in->scale = 1;
	in->disp = 0;
	if (rm == 4) {
		uint8_t sib = p[1], idx = (uint8_t)((sib >> 3 & 7) | x << 3);

		n = 2;
		in->index = idx == 4 ? BASE_X86_NOREG : idx;
		in->scale = (uint8_t)(1u << (sib >> 6));
		in->base = (uint8_t)((sib & 7) | b << 3);
		if ((sib & 7) == 5 && mod == 0) {
			in->base = BASE_X86_NOREG;
			in->disp = x86_le32(&p[n]);
			return n + 4;
		}
	} else if (mod == 0 && rm == 5) {
		in->base = BASE_X86_RIP;
		in->disp = x86_le32(&p[n]);
		return n + 4;
	}
	if (mod == 1) {
		in->disp = (int8_t)p[n] * n8;
		return n + 1;
	}
	if (mod == 2) {
		in->disp = x86_le32(&p[n]);
		return n + 4;
	}
	return n;
}

/* The width of a 0F-map vector store (VEX/EVEX: pp 0..3 = none, 66, F3, F2; vl: the vector bytes); 0: not one. */
static uint8_t x86_vec_width(uint8_t op, uint8_t pp, uint8_t vl, bool w)
{
	switch (op) {
	case 0x11: /* MOVUPS/MOVUPD, MOVSS, MOVSD */
		return pp <= 1 ? vl : pp == 2 ? 4 : 8;
	case 0x29: /* MOVAPS/MOVAPD */
	case 0x2b: /* MOVNTPS/MOVNTPD */
		return pp <= 1 ? vl : 0;
	case 0x13: /* MOVLPS/MOVLPD */
	case 0x17: /* MOVHPS/MOVHPD */
		return pp <= 1 && vl == 16 ? 8 : 0;
	case 0x7f: /* MOVQ mm (none), MOVDQA (66), MOVDQU (F3); EVEX: MOVDQU8/16 (F2) too */
		return pp == 0 ? (vl == 16 ? 8 : 0) : vl;
	case 0xe7: /* MOVNTQ mm (none), MOVNTDQ (66) */
		return pp == 0 ? (vl == 16 ? 8 : 0) : pp == 1 ? vl : 0;
	case 0xd6: /* MOVQ xmm (66) */
		return pp == 1 && vl == 16 ? 8 : 0;
	case 0x7e: /* MOVD/MOVQ r/m from mm (none) or xmm (66) */
		return pp <= 1 && vl == 16 ? (w ? 8 : 4) : 0;
	default:
		return 0;
	}
}

/* A legacy-encoded opcode at p[i] (prefixes f): fills kind, width and the rest; ModRM's offset, or 0. */
static int x86_legacy(const uint8_t *p, int i, const struct x86_pfx *f, struct base_x86_insn *in)
{
	uint8_t opsz = f->rex & 8 ? 8 : f->opsz16 ? 2 : 4;
	uint8_t pp = f->rep == 0xf3 ? 2 : f->rep == 0xf2 ? 3 : f->opsz16 ? 1 : 0;

	switch (p[i]) {
	case 0x88: /* MOV r/m8, r8 */
	case 0x89: /* MOV r/m, r */
		in->kind = BASE_X86_STORE_REG;
		in->width = p[i] == 0x88 ? 1 : opsz;
		return i + 1;
	case 0x8a: /* MOV r8, r/m8 */
		in->kind = BASE_X86_LOAD;
		in->width = 1;
		in->dst_bits = 8;
		return i + 1;
	case 0xc6: /* MOV r/m8, imm8 (/0) */
	case 0xc7: /* MOV r/m, imm16/32 (/0) */
		in->kind = BASE_X86_STORE_IMM;
		in->width = p[i] == 0xc6 ? 1 : opsz;
		return (p[i + 1] >> 3 & 7) == 0 ? i + 1 : 0;
	case 0x0f:
		break;
	default:
		return 0;
	}
	i++;
	if (p[i] == 0xb6 || p[i] == 0xbe) { /* MOVZX, MOVSX r, r/m8 */
		in->kind = p[i] == 0xbe ? BASE_X86_LOAD_SX : BASE_X86_LOAD_ZX;
		in->width = 1;
		in->dst_bits = (uint8_t)(opsz * 8);
		return i + 1;
	}
	if (p[i] == 0xc3) { /* MOVNTI m, r */
		in->kind = BASE_X86_STORE_REG;
		in->width = f->rex & 8 ? 8 : 4;
		return f->opsz16 || f->rep ? 0 : i + 1;
	}
	if (f->rep != 0 && f->opsz16)
		return 0;
	in->kind = BASE_X86_STORE_VEC;
	in->width = x86_vec_width(p[i], pp, 16, f->rex & 8);
	if (p[i] == 0x7f && pp == 3)
		in->width = 0; /* F2 0F 7F is no store */
	return in->width != 0 ? i + 1 : 0;
}

/*
 * A VEX (C4, C5) or EVEX (62) encoded store at p[i]; ModRM's offset, or 0.
 * Sets the extension bits (inverted in the encoding) in r, b, x and the
 * scale of an 8-bit displacement in n8.
 */
static int x86_vex(const uint8_t *p, int i, struct base_x86_insn *in, uint8_t *r, uint8_t *b, uint8_t *x, int *n8)
{
	uint8_t pp, vl, op;
	bool w = false;

	if (p[i] == 0xc5) {
		*r = !(p[i + 1] & 0x80);
		pp = p[i + 1] & 3;
		vl = p[i + 1] & 4 ? 32 : 16;
		i += 2;
	} else if (p[i] == 0xc4) {
		if ((p[i + 1] & 0x1f) != 1)
			return 0; /* only the 0F map holds these stores */
		*r = !(p[i + 1] & 0x80);
		*x = !(p[i + 1] & 0x40);
		*b = !(p[i + 1] & 0x20);
		w = p[i + 2] & 0x80;
		pp = p[i + 2] & 3;
		vl = p[i + 2] & 4 ? 32 : 16;
		i += 3;
	} else { /* 62: EVEX */
		if ((p[i + 1] & 7) != 1 || !(p[i + 2] & 4) || (p[i + 3] & 0x10))
			return 0; /* the 0F map, the fixed bit, no broadcast */
		*r = (uint8_t)((p[i + 1] & 0x80 ? 0 : 1) | (p[i + 1] & 0x10 ? 0 : 2));
		*x = !(p[i + 1] & 0x40);
		*b = !(p[i + 1] & 0x20);
		w = p[i + 2] & 0x80;
		pp = p[i + 2] & 3;
		vl = (uint8_t)(16u << (p[i + 3] >> 5 & 3));
		if (vl > 64)
			return 0;
		i += 4;
	}
	op = p[i];
	if (p[i - 1] != 0x62 && op == 0x7f && pp == 3)
		return 0; /* VEX F2 0F 7F is no store */
	in->kind = BASE_X86_STORE_VEC;
	in->width = x86_vec_width(op, pp, vl, w);
	if (in->width == 0 || (vl > 16 && (op == 0x13 || op == 0x17 || op == 0xd6 || op == 0x7e)))
		return 0;
	*n8 = in->width; /* EVEX: a full vector's or a scalar's size; VEX: 1 (set by the caller) */
	return i + 1;
}

bool base_x86_decode(const uint8_t *p, struct base_x86_insn *in)
{
	struct x86_pfx f;
	uint8_t r, b, x;
	int i, m, n8 = 1, tail;

	memset(in, 0, sizeof(*in));
	i = x86_prefixes(p, &f);
	if (i < 0)
		return false;
	r = f.rex >> 2 & 1;
	x = f.rex >> 1 & 1;
	b = f.rex & 1;
	if (p[i] == 0xc4 || p[i] == 0xc5 || p[i] == 0x62) {
		if (f.rex != 0 || f.rep != 0 || f.opsz16)
			return false; /* a VEX/EVEX store carries its prefixes inside */
		r = b = x = 0;
		m = x86_vex(p, i, in, &r, &b, &x, &n8);
		if (p[i] != 0x62)
			n8 = 1;
	} else {
		m = x86_legacy(p, i, &f, in);
	}
	if (m == 0)
		return false;
	tail = x86_mem(&p[m], b, x, n8, in);
	if (tail < 0)
		return false;
	in->reg = (uint8_t)((p[m] >> 3 & 7) | r << 3);
	/* Byte registers 4..7 without a REX prefix are AH, CH, DH, BH. */
	in->high8 = f.rex == 0 && in->width == 1 && in->reg >= 4 && in->reg < 8 &&
		    (in->kind == BASE_X86_STORE_REG || in->kind == BASE_X86_LOAD);
	if (in->high8)
		in->reg -= 4;
	in->len = (uint8_t)(m + tail);
	if (in->kind == BASE_X86_STORE_IMM) {
		if (in->width == 1)
			in->imm = (int8_t)p[in->len];
		else if (in->width == 2)
			in->imm = (int16_t)(p[in->len] | p[in->len + 1] << 8);
		else
			in->imm = x86_le32(&p[in->len]);
		in->len = (uint8_t)(in->len + (in->width > 4 ? 4 : in->width));
	}
	return true;
}

uintptr_t base_x86_addr(const struct base_x86_insn *in, const uint64_t regs[16], uintptr_t rip)
{
	uint64_t a = (uint64_t)(int64_t)in->disp;

	if (in->base == BASE_X86_RIP)
		a += rip + in->len;
	else if (in->base != BASE_X86_NOREG)
		a += regs[in->base];
	if (in->index != BASE_X86_NOREG)
		a += regs[in->index] * in->scale;
	return (uintptr_t)a;
}
