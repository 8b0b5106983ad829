/*
 * hw_sig — the block signature transform of UMR keys (hw_sig.h): the
 * guards' arithmetic (table-driven CRCs), the fields of a block, and the
 * walk of a transfer's wire range over the key's pattern.
 */
#include "hw_sig.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "hw_umr.h"

#define SIG_MAX_PI 8u
#define SIG_MAX_BLOCK 4160u

static uint16_t crc16_tab[256];
static uint32_t crc32_tab[256], crc32c_tab[256];
static uint64_t crc64_tab[256];
static pthread_once_t sig_tabs_once = PTHREAD_ONCE_INIT;
static _Thread_local uint32_t sig_thread_errs;

static void sig_tabs_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint16_t c16 = (uint16_t)(i << 8);
		uint32_t c32 = i, c32c = i;
		uint64_t c64 = i;

		for (int b = 0; b < 8; b++) {
			c16 = (uint16_t)((c16 & 0x8000u) ? ((uint32_t)c16 << 1) ^ 0x8BB7u : (uint32_t)c16 << 1);
			c32 = (c32 & 1u) ? (c32 >> 1) ^ 0xEDB88320u : c32 >> 1;
			c32c = (c32c & 1u) ? (c32c >> 1) ^ 0x82F63B78u : c32c >> 1;
			c64 = (c64 & 1u) ? (c64 >> 1) ^ 0xC96C5795D7870F42ull : c64 >> 1;
		}
		crc16_tab[i] = c16;
		crc32_tab[i] = c32;
		crc32c_tab[i] = c32c;
		crc64_tab[i] = c64;
	}
}

uint16_t hw_sig_crc16_t10dif(uint16_t seed, const uint8_t *p, uint64_t len)
{
	uint16_t c = seed;

	pthread_once(&sig_tabs_once, sig_tabs_init);
	for (uint64_t i = 0; i < len; i++)
		c = (uint16_t)((c << 8) ^ crc16_tab[((c >> 8) ^ p[i]) & 0xffu]);
	return c;
}

uint16_t hw_sig_ipcs(uint16_t seed, const uint8_t *p, uint64_t len)
{
	uint64_t sum = seed;

	for (uint64_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1u)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

uint32_t hw_sig_crc32(uint32_t seed, const uint8_t *p, uint64_t len, bool castagnoli)
{
	const uint32_t *t = castagnoli ? crc32c_tab : crc32_tab;
	uint32_t c = seed;

	pthread_once(&sig_tabs_once, sig_tabs_init);
	for (uint64_t i = 0; i < len; i++)
		c = t[(c ^ p[i]) & 0xffu] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

uint64_t hw_sig_crc64(uint64_t seed, const uint8_t *p, uint64_t len)
{
	uint64_t c = seed;

	pthread_once(&sig_tabs_once, sig_tabs_init);
	for (uint64_t i = 0; i < len; i++)
		c = crc64_tab[(c ^ p[i]) & 0xffu] ^ (c >> 8);
	return c ^ ~0ull;
}

struct hw_sig *hw_sig_new(void)
{
	struct hw_sig *s = calloc(1, sizeof(*s));

	if (s != NULL && pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void hw_sig_free(struct hw_sig *s)
{
	if (s == NULL)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

uint32_t hw_sig_pi_len(uint8_t kind)
{
	switch (kind) {
	case HW_SIG_T10DIF_CRC:
	case HW_SIG_T10DIF_CSUM:
	case HW_SIG_CRC64:
		return 8;
	case HW_SIG_CRC32:
	case HW_SIG_CRC32C:
		return 4;
	default:
		return 0;
	}
}

static bool sig_t10dif(uint8_t kind)
{
	return kind == HW_SIG_T10DIF_CRC || kind == HW_SIG_T10DIF_CSUM;
}

bool hw_sig_dom_ok(const struct hw_sig_dom *d)
{
	if (d->kind > HW_SIG_KIND_MAX)
		return false;
	if (d->kind == HW_SIG_NONE)
		return true;
	if (d->block != 512 && d->block != 520 && d->block != 4048 && d->block != 4096 && d->block != 4160)
		return false;
	if (sig_t10dif(d->kind))
		return (d->bg == 0 || d->bg == 0xffffu) &&
		       !(d->flags & ~(HW_SIG_REF_REMAP | HW_SIG_APP_ESCAPE | HW_SIG_APPREF_ESCAPE));
	if (d->kind == HW_SIG_CRC64)
		return d->seed == 0 || d->seed == ~0ull;
	return d->seed == 0 || d->seed == 0xffffffffu;
}

static void sig_dom_parse(const struct hw_umr_sig_dom_seg *s, struct hw_sig_dom *d)
{
	*d = (struct hw_sig_dom){ .kind = s->kind, .flags = s->flags, .bg = be16toh(s->bg), .app = be16toh(s->app_tag),
				  .ref = be32toh(s->ref_tag), .block = be16toh(s->block), .seed = be64toh(s->seed) };
}

bool hw_sig_parse(const struct hw_umr_sig_seg *seg, struct hw_sig_cfg *cfg)
{
	sig_dom_parse(&seg->mem, &cfg->mem);
	sig_dom_parse(&seg->wire, &cfg->wire);
	cfg->check_mask = seg->check_mask;
	cfg->copy_mask = seg->copy_mask;
	return hw_sig_dom_ok(&cfg->mem) && hw_sig_dom_ok(&cfg->wire);
}

/* Data bytes in the first len bytes of a domain's layout. */
static uint64_t sig_data_len(const struct hw_sig_dom *d, uint64_t len)
{
	uint32_t p = hw_sig_pi_len(d->kind);
	uint64_t s = (uint64_t)d->block + p, rest;

	if (p == 0)
		return len;
	rest = len % s;
	return len / s * d->block + (rest < d->block ? rest : d->block);
}

/* Layout bytes of data data bytes in a domain: whole blocks with their fields. */
static uint64_t sig_dom_len(const struct hw_sig_dom *d, uint64_t data)
{
	uint32_t p = hw_sig_pi_len(d->kind);

	if (p == 0)
		return data;
	return data / d->block * (d->block + p) + data % d->block;
}

uint64_t hw_sig_wire_len(const struct hw_sig_cfg *cfg, uint64_t mem_len)
{
	return sig_dom_len(&cfg->wire, sig_data_len(&cfg->mem, mem_len));
}

/* Data bytes [d, d + n) of the key out of (or into) the memory domain's layout. */
static void sig_mem_data(const struct hw_umr *u, uint64_t d, uint8_t *buf, uint64_t n, bool out)
{
	const struct hw_sig_dom *m = &u->sig->cfg.mem;
	uint64_t s = (uint64_t)m->block + hw_sig_pi_len(m->kind);

	while (n != 0) {
		uint64_t in = hw_sig_pi_len(m->kind) == 0 ? 0 : d % m->block;
		uint64_t at = hw_sig_pi_len(m->kind) == 0 ? d : d / m->block * s + in;
		uint64_t k = hw_sig_pi_len(m->kind) == 0 ? n : m->block - in;

		if (k > n)
			k = n;
		if (out)
			hw_umr_read(u, at, buf, k);
		else
			hw_umr_write(u, at, buf, k);
		d += k;
		buf += k;
		n -= k;
	}
}

/* The field a domain gives block blk of data (len bytes), big-endian. */
static void sig_pi(const struct hw_sig_dom *d, uint64_t blk, const uint8_t *data, uint32_t len, uint8_t pi[SIG_MAX_PI])
{
	uint16_t g;
	uint32_t v32;
	uint64_t v64;

	switch (d->kind) {
	case HW_SIG_T10DIF_CRC:
	case HW_SIG_T10DIF_CSUM:
		g = d->kind == HW_SIG_T10DIF_CRC ? hw_sig_crc16_t10dif(d->bg, data, len) : hw_sig_ipcs(d->bg, data, len);
		g = htobe16(g);
		memcpy(pi, &g, 2);
		g = htobe16(d->app);
		memcpy(pi + 2, &g, 2);
		v32 = htobe32(d->ref + ((d->flags & HW_SIG_REF_REMAP) ? (uint32_t)blk : 0));
		memcpy(pi + 4, &v32, 4);
		break;
	case HW_SIG_CRC32:
	case HW_SIG_CRC32C:
		v32 = htobe32(hw_sig_crc32((uint32_t)d->seed, data, len, d->kind == HW_SIG_CRC32C));
		memcpy(pi, &v32, 4);
		break;
	case HW_SIG_CRC64:
		v64 = htobe64(hw_sig_crc64(d->seed, data, len));
		memcpy(pi, &v64, 8);
		break;
	default:
		break;
	}
}

static uint64_t sig_be(const uint8_t *p, uint32_t n)
{
	uint64_t v = 0;

	for (uint32_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Whether a checked byte of [first, first + n) differs (bit 7 - i of mask checks byte i). */
static bool sig_differs(const uint8_t *a, const uint8_t *b, uint32_t first, uint32_t n, uint8_t mask)
{
	for (uint32_t i = first; i < first + n; i++)
		if ((mask & (0x80u >> i)) && a[i] != b[i])
			return true;
	return false;
}

/* T10-DIF's escapes: a block whose tags say so is not checked. */
static bool sig_escaped(const struct hw_sig_dom *d, const uint8_t *field)
{
	uint64_t app = sig_be(field + 2, 2), ref = sig_be(field + 4, 4);

	if (d->flags & HW_SIG_APPREF_ESCAPE)
		return app == 0xffffu && ref == 0xffffffffu;
	return (d->flags & HW_SIG_APP_ESCAPE) && app == 0xffffu;
}

/*
 * The input domain's field of a block against what its data and the
 * configuration give: the first failed part (guard, application tag,
 * reference tag, the T10-DIF order) in *e. True on a failure.
 */
static bool sig_check(const struct hw_sig_dom *d, uint8_t mask, const uint8_t *field, const uint8_t *calc,
		      struct hw_sig_err *e)
{
	static const struct {
		uint8_t first, n, type;
	} parts[] = { { 0, 2, HW_SIG_ERR_GUARD }, { 2, 2, HW_SIG_ERR_APPTAG }, { 4, 4, HW_SIG_ERR_REFTAG } };

	if (!sig_t10dif(d->kind)) {
		uint32_t p = hw_sig_pi_len(d->kind);

		if (!sig_differs(field, calc, 0, p, mask))
			return false;
		e->type = HW_SIG_ERR_GUARD;
		e->expected = sig_be(field, p);
		e->actual = sig_be(calc, p);
		return true;
	}
	if (sig_escaped(d, field))
		return false;
	for (uint32_t i = 0; i < 3; i++) {
		if (!sig_differs(field, calc, parts[i].first, parts[i].n, mask))
			continue;
		e->type = parts[i].type;
		e->expected = sig_be(field + parts[i].first, parts[i].n);
		e->actual = sig_be(calc + parts[i].first, parts[i].n);
		return true;
	}
	return false;
}

/* Whether both domains have one block structure: only then are fields copied across. */
static bool sig_same_structure(const struct hw_sig_cfg *c)
{
	return c->mem.block == c->wire.block && c->mem.kind != HW_SIG_NONE &&
	       (c->mem.kind == c->wire.kind || (sig_t10dif(c->mem.kind) && sig_t10dif(c->wire.kind)));
}

/* Bytes of the copy mask replace the generated field's with the input domain's. */
static void sig_copy(const struct hw_sig_cfg *c, const uint8_t *in, uint8_t *out)
{
	for (uint32_t i = 0; i < SIG_MAX_PI; i++)
		if (c->copy_mask & (0x80u >> i))
			out[i] = in[i];
}

static void sig_record(struct hw_sig *s, const struct hw_sig_err *e)
{
	pthread_mutex_lock(&s->lock);
	if (s->err.type == HW_SIG_ERR_NONE)
		s->err = *e; /* the first is kept until read */
	s->errs++;
	pthread_mutex_unlock(&s->lock);
	sig_thread_errs++;
}

bool hw_sig_take_err(struct hw_sig *s, struct hw_sig_err *e)
{
	bool had;

	pthread_mutex_lock(&s->lock);
	had = s->err.type != HW_SIG_ERR_NONE;
	if (had) {
		*e = s->err;
		s->err.type = HW_SIG_ERR_NONE;
	}
	pthread_mutex_unlock(&s->lock);
	return had;
}

uint32_t hw_sig_thread_errs(void)
{
	return sig_thread_errs;
}

/* Memory block km's field, read from the pattern. */
static void sig_mem_field(const struct hw_umr *u, uint64_t km, uint8_t f[SIG_MAX_PI])
{
	const struct hw_sig_dom *m = &u->sig->cfg.mem;
	uint32_t p = hw_sig_pi_len(m->kind);

	memset(f, 0, SIG_MAX_PI);
	hw_umr_read(u, km * (m->block + p) + m->block, f, p);
}

/* Memory blocks km with data wholly in [d0, d1) and their field inside the pattern: the first lies at *first. */
static uint64_t sig_mem_blocks(const struct hw_sig *s, uint64_t d0, uint64_t d1, uint64_t *first)
{
	const struct hw_sig_dom *m = &s->cfg.mem;
	uint64_t st = (uint64_t)m->block + hw_sig_pi_len(m->kind);
	uint64_t k0 = (d0 + m->block - 1) / m->block, k1 = d1 / m->block, whole = s->mem_len / st;

	if (k1 > whole)
		k1 = whole;
	*first = k0;
	return k1 > k0 ? k1 - k0 : 0;
}

/* Reading through the key: each memory block read whole is checked. */
static bool sig_check_mem(const struct hw_umr *u, uint64_t d0, uint64_t d1)
{
	const struct hw_sig *s = u->sig;
	const struct hw_sig_dom *m = &s->cfg.mem;
	uint8_t data[SIG_MAX_BLOCK], field[SIG_MAX_PI], calc[SIG_MAX_PI];
	struct hw_sig_err e = { .memory = true };
	uint64_t k0, nb = sig_mem_blocks(s, d0, d1, &k0);

	for (uint64_t km = k0; km < k0 + nb; km++) {
		sig_mem_data(u, km * m->block, data, m->block, true);
		sig_mem_field(u, km, field);
		sig_pi(m, km, data, m->block, calc);
		if (sig_check(m, s->cfg.check_mask, field, calc, &e)) {
			e.offset = km * (m->block + hw_sig_pi_len(m->kind));
			sig_record(u->sig, &e);
			return true;
		}
	}
	return false;
}

/* The wire field of wire block kw, generated from its data (and copied parts of the memory field). */
static void sig_wire_field(const struct hw_umr *u, uint64_t kw, uint8_t f[SIG_MAX_PI])
{
	const struct hw_sig_cfg *c = &u->sig->cfg;
	uint8_t data[SIG_MAX_BLOCK], mf[SIG_MAX_PI];

	memset(f, 0, SIG_MAX_PI);
	sig_mem_data(u, kw * c->wire.block, data, c->wire.block, true);
	sig_pi(&c->wire, kw, data, c->wire.block, f);
	if (c->copy_mask != 0 && sig_same_structure(c)) {
		sig_mem_field(u, kw, mf);
		sig_copy(c, mf, f);
	}
}

bool hw_sig_gather(const struct hw_umr *u, uint64_t off, uint32_t n, uint8_t *out)
{
	const struct hw_sig_cfg *c = &u->sig->cfg;
	const struct hw_sig_dom *w = &c->wire;
	uint32_t pw = hw_sig_pi_len(w->kind);
	uint64_t sw = (uint64_t)w->block + pw, x = off, end = off + n;

	while (x < end) {
		uint64_t blk = pw == 0 ? 0 : x / sw, in = pw == 0 ? x : x % sw, k;

		if (pw == 0 || in < w->block) {
			k = (pw == 0 ? end : blk * sw + w->block) - x;
			if (k > end - x)
				k = end - x;
			sig_mem_data(u, blk * w->block + in, out + (x - off), k, true);
		} else {
			uint8_t f[SIG_MAX_PI];

			k = sw - in < end - x ? sw - in : end - x;
			sig_wire_field(u, blk, f);
			memcpy(out + (x - off), f + (in - w->block), k);
		}
		x += k;
	}
	if (hw_sig_pi_len(c->mem.kind) == 0)
		return false;
	return sig_check_mem(u, sig_data_len(w, off), sig_data_len(w, end));
}

/* Writing through the key: each wire block received whole is checked. */
static bool sig_check_wire(const struct hw_umr *u, uint64_t off, uint32_t n, const uint8_t *in)
{
	const struct hw_sig_cfg *c = &u->sig->cfg;
	const struct hw_sig_dom *w = &c->wire;
	uint64_t sw = (uint64_t)w->block + hw_sig_pi_len(w->kind);
	uint8_t data[SIG_MAX_BLOCK], calc[SIG_MAX_PI], field[SIG_MAX_PI] = { 0 };
	struct hw_sig_err e = { .memory = false };

	for (uint64_t kw = (off + sw - 1) / sw; (kw + 1) * sw <= off + n; kw++) {
		sig_mem_data(u, kw * w->block, data, w->block, true);
		memcpy(field, in + (kw * sw + w->block - off), hw_sig_pi_len(w->kind));
		sig_pi(w, kw, data, w->block, calc);
		if (sig_check(w, c->check_mask, field, calc, &e)) {
			e.offset = kw * sw;
			sig_record(u->sig, &e);
			return true;
		}
	}
	return false;
}

/* Writing through the key: each memory block written whole gets its field (copied parts from the wire's). */
static void sig_fill_mem(const struct hw_umr *u, uint64_t off, uint32_t n, const uint8_t *in)
{
	const struct hw_sig *s = u->sig;
	const struct hw_sig_cfg *c = &s->cfg;
	const struct hw_sig_dom *m = &c->mem, *w = &c->wire;
	uint32_t pm = hw_sig_pi_len(m->kind), pw = hw_sig_pi_len(w->kind);
	uint64_t sw = (uint64_t)w->block + pw, k0;
	uint64_t nb = sig_mem_blocks(s, sig_data_len(w, off), sig_data_len(w, off + n), &k0);
	uint8_t data[SIG_MAX_BLOCK], f[SIG_MAX_PI];

	for (uint64_t km = k0; km < k0 + nb; km++) {
		uint64_t wf = km * sw + w->block; /* the wire field of the same block, with one structure */

		sig_mem_data(u, km * m->block, data, m->block, true);
		sig_pi(m, km, data, m->block, f);
		if (c->copy_mask != 0 && sig_same_structure(c) && wf >= off && wf + pw <= off + n)
			sig_copy(c, in + (wf - off), f);
		hw_umr_write(u, km * (m->block + pm) + m->block, f, pm);
	}
}

bool hw_sig_scatter(const struct hw_umr *u, uint64_t off, uint32_t n, const uint8_t *in)
{
	const struct hw_sig_cfg *c = &u->sig->cfg;
	const struct hw_sig_dom *w = &c->wire;
	uint32_t pw = hw_sig_pi_len(w->kind);
	uint64_t sw = (uint64_t)w->block + pw, x = off, end = off + n;
	bool bad = false;

	while (x < end) {
		uint64_t blk = pw == 0 ? 0 : x / sw, at = pw == 0 ? x : x % sw, k;

		if (pw == 0 || at < w->block) {
			k = (pw == 0 ? end : blk * sw + w->block) - x;
			if (k > end - x)
				k = end - x;
			sig_mem_data(u, blk * w->block + at, (uint8_t *)in + (x - off), k, false);
		} else {
			k = sw - at < end - x ? sw - at : end - x; /* the wire's field: checked below, not stored */
		}
		x += k;
	}
	if (pw != 0)
		bad = sig_check_wire(u, off, n, in);
	if (hw_sig_pi_len(c->mem.kind) != 0)
		sig_fill_mem(u, off, n, in);
	return bad;
}
