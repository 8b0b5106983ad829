/*
 * hw_sig — block signatures (data integrity) of UMR mkeys, as a
 * ConnectX-6 Dx / BlueField-2 offloads them: T10-DIF (CRC16 or IP
 * checksum guard, application tag, reference tag), CRC32, CRC32C and
 * CRC64, per block of 512, 520, 4048, 4096 or 4160 data bytes, in two
 * domains: the memory behind the key and the wire (what a transfer
 * carries).
 *
 * A signature mkey's addresses are wire offsets: the key's length is the
 * wire length of the data its pattern holds. A transfer reading through the
 * key (a SEND's gather, an RDMA READ's source) strips and checks the
 * memory domain's fields and inserts the wire domain's; one writing through
 * it (a receive, an RDMA WRITE's target) checks and strips the wire fields
 * and inserts the memory ones. Only blocks a transfer covers whole are
 * checked or given fields; a block cut by the transfer's ends is carried
 * as data. The first failed check is kept in the key until read
 * (hw_sig_take_err); the transfer itself completes.
 *
 * Field layout (big-endian, after each block's data): T10-DIF guard(2)
 * application tag(2) reference tag(4); CRC32/CRC32C 4 bytes; CRC64 8.
 * Guards: CRC16 T10-DIF (poly 0x8BB7, seeded with bg, no reflection); the IP
 * checksum (the ones' complement of the ones'-complement sum of the block's
 * 16-bit big-endian words, bg added first); CRC32 (reflected 0xEDB88320)
 * and CRC32C (reflected 0x82F63B78) seeded with the seed, result inverted;
 * CRC64 (reflected ECMA-182, 0xC96C5795D7870F42) the same way.
 */
#ifndef HW_SIG_H_
#define HW_SIG_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_prm.h"

struct hw_umr;

enum hw_sig_kind {
	HW_SIG_NONE = 0,
	HW_SIG_T10DIF_CRC,
	HW_SIG_T10DIF_CSUM,
	HW_SIG_CRC32,
	HW_SIG_CRC32C,
	HW_SIG_CRC64,
	HW_SIG_KIND_MAX = HW_SIG_CRC64,
};

#define HW_SIG_REF_REMAP (1u << 0)
#define HW_SIG_APP_ESCAPE (1u << 1)
#define HW_SIG_APPREF_ESCAPE (1u << 2)

/* The failed check's field, in mlx5dv_mkey_check's order of report. */
enum hw_sig_err_type {
	HW_SIG_ERR_NONE = 0,
	HW_SIG_ERR_GUARD,
	HW_SIG_ERR_REFTAG,
	HW_SIG_ERR_APPTAG,
};

struct hw_sig_dom {
	uint8_t kind;	/* enum hw_sig_kind */
	uint8_t flags;	/* HW_SIG_* of T10-DIF */
	uint16_t bg;	/* T10-DIF guard seed */
	uint16_t app;
	uint32_t ref;
	uint32_t block; /* data bytes per block */
	uint64_t seed;	/* CRC seed */
};

struct hw_sig_cfg {
	struct hw_sig_dom mem, wire;
	uint8_t check_mask; /* bit 7 - i: byte i of the input domain's field is checked */
	uint8_t copy_mask;  /* bit 7 - i: byte i is copied from the input domain's field */
};

struct hw_sig_err {
	uint8_t type;	/* enum hw_sig_err_type */
	bool memory;	/* the memory domain's check failed (else the wire's) */
	uint64_t expected; /* the value the field held */
	uint64_t actual;   /* the value computed from the data (or configured, for a tag) */
	uint64_t offset;   /* the failed block's start in its domain, from the key's start */
};

/* A signature context of a key: its configuration and its first error. */
struct hw_sig {
	struct hw_sig_cfg cfg; /* all kinds NONE: the key transfers plain data */
	uint64_t mem_len;      /* the pattern's bytes (memory domain) */
	pthread_mutex_t lock;  /* err */
	struct hw_sig_err err;
	uint32_t errs;	       /* errors found since creation */
};

struct hw_sig *hw_sig_new(void);
void hw_sig_free(struct hw_sig *s);

/* The field bytes of a kind (0 for NONE). */
uint32_t hw_sig_pi_len(uint8_t kind);

/* Whether a domain's description is one this device takes. */
bool hw_sig_dom_ok(const struct hw_sig_dom *d);

/* The configuration a UMR's signature segment describes: false when the segment is not one this device takes. */
bool hw_sig_parse(const struct hw_umr_sig_seg *seg, struct hw_sig_cfg *cfg);

/* The wire length of mem_len pattern bytes under cfg. */
uint64_t hw_sig_wire_len(const struct hw_sig_cfg *cfg, uint64_t mem_len);

/* Whether cfg transforms anything (a domain has a signature). */
static inline bool hw_sig_active(const struct hw_sig *s)
{
	return s != NULL && (s->cfg.mem.kind != HW_SIG_NONE || s->cfg.wire.kind != HW_SIG_NONE);
}

/*
 * The wire bytes [off, off + n) of u's data into out (reading through the
 * key). Returns true when a check failed (recorded in u->sig).
 */
bool hw_sig_gather(const struct hw_umr *u, uint64_t off, uint32_t n, uint8_t *out);

/* The wire bytes in[0, n) written at wire offset off of u's data; true when a check failed. */
bool hw_sig_scatter(const struct hw_umr *u, uint64_t off, uint32_t n, const uint8_t *in);

/* The first error since the last call: false (and *e untouched) when none. */
bool hw_sig_take_err(struct hw_sig *s, struct hw_sig_err *e);

/* Guards over len bytes, as hw_sig.h's header says (exported for the checks' tests). */
uint16_t hw_sig_crc16_t10dif(uint16_t seed, const uint8_t *p, uint64_t len);
uint16_t hw_sig_ipcs(uint16_t seed, const uint8_t *p, uint64_t len);
uint32_t hw_sig_crc32(uint32_t seed, const uint8_t *p, uint64_t len, bool castagnoli);
uint64_t hw_sig_crc64(uint64_t seed, const uint8_t *p, uint64_t len);

/* Errors found on this thread so far: the engine compares it around a WQE (signature pipelining). */
uint32_t hw_sig_thread_errs(void);

#endif /* HW_SIG_H_ */
