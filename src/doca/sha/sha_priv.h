/*
 * sha_priv — the SHA context and its partial sessions, shared by the files of
 * src/doca/sha only.
 */
#ifndef SHA_PRIV_H_
#define SHA_PRIV_H_

#include <stdbool.h>
#include <stdint.h>

#include "dc_ctx.h"
#include "dc_dev.h"
#include "doca_sha.h"
#include "hw_sha.h"

#define DC_SHA_MAX_LIST_ELEMS HW_SHA_MAX_SGE
#define DC_SHA_MAX_SRC_SIZE (1ull << 31)
/* Sessions are a limited resource, as on the device: a fixed pool per context. */
#define DC_SHA_MAX_SESSIONS 256

struct doca_sha_partial_session {
	struct doca_workq *workq; /* the work queue it was created for */
	struct hw_sha_state *st;  /* made with the slot's first use, kept for reuse */
	bool in_use;
	int job_type; /* type of the message in progress; 0 between messages */
};

struct doca_sha {
	struct doca_ctx ctx; /* first: doca_sha_as_ctx() and back are casts */
	struct hw_sha_engine *eng;
	struct doca_sha_partial_session sessions[DC_SHA_MAX_SESSIONS];
	/*
	 * The engine's session table: slot i's hash state, set when the slot is
	 * first used. A partial WQE names its session by slot index.
	 */
	struct hw_sha_state *session_st[DC_SHA_MAX_SESSIONS];
};

/* The context's operations on jobs (sha_job.c). */
doca_error_t dc_sha_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size);
doca_error_t dc_sha_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);
/* On the engine queue (dc_ctx.h, engine contexts). */
void dc_sha_jobq_attr(struct doca_ctx *ctx, struct hw_jobq_attr *attr);
doca_error_t dc_sha_job_run(struct doca_ctx *ctx, struct hw_jobq *q, const struct doca_job *job,
			    union doca_data *result);

/*
 * True when s is a live session of sha. Checked by address first, so a
 * pointer to anything else (another context's session) is never read.
 */
static inline bool dc_sha_session_valid(const struct doca_sha *sha, const struct doca_sha_partial_session *s)
{
	uintptr_t p = (uintptr_t)s, base = (uintptr_t)sha->sessions;

	if (p < base || p >= base + sizeof(sha->sessions) || (p - base) % sizeof(*s) != 0)
		return false;
	return s->in_use;
}

/* Every local function of the emulated card has a SHA engine next to its DMA engine. */
static inline bool dc_sha_devinfo_has_engine(const struct doca_devinfo *info)
{
	return dc_devinfo_cap(info, DC_CAP_SHA);
}

static inline bool dc_sha_dev_has_engine(const struct doca_dev *dev)
{
	return dc_dev_cap(dev, DC_CAP_SHA);
}

static inline bool dc_sha_is_partial(int type)
{
	return type >= DOCA_SHA_JOB_SHA1_PARTIAL && type <= DOCA_SHA_JOB_SHA512_PARTIAL;
}

static inline bool dc_sha_type_valid(int type)
{
	return type >= DOCA_SHA_JOB_SHA1 && type <= DOCA_SHA_JOB_SHA512_PARTIAL;
}

/* Engine algorithm of a valid job type. */
static inline enum hw_sha_alg dc_sha_alg(int type)
{
	return (enum hw_sha_alg)((type - DOCA_SHA_JOB_SHA1) % 3);
}

#endif /* SHA_PRIV_H_ */
