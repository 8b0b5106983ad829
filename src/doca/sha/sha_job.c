/*
 * SHA jobs: the submit-time checks and the execution on the emulated SHA
 * engine (src/hw/hw_sha.c): posted as WQEs on the context's engine queue
 * (src/hw/hw_jobq.h), or run by job_exec when they have no WQE form (more
 * request elements than a WQE holds, mixed rights) or run as graph nodes.
 */
#include "dc_core.h"
#include "dc_log.h"
#include "hw_jobq.h"
#include "sha_priv.h"

static doca_error_t status_to_error(enum hw_status st)
{
	switch (st) {
	case HW_OK:
		return DOCA_SUCCESS;
	case HW_ERR_KEY:
	case HW_ERR_PD:
	case HW_ERR_ACCESS:
	case HW_ERR_REVOKED: /* the exporter withdrew the memory */
		return DOCA_ERROR_NOT_PERMITTED;
	case HW_ERR_NOMEM:
		return DOCA_ERROR_NO_MEMORY;
	case HW_ERR_PEER_GONE:
		return DOCA_ERROR_CONNECTION_ABORTED;
	case HW_ERR_TIMEOUT:
		return DOCA_ERROR_TIME_OUT;
	case HW_ERR_REMOTE_IO:
		return DOCA_ERROR_DRIVER;
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
}

/* Room after the data segment of the response's first element: the digest goes there. */
static uint64_t resp_room(const struct doca_buf *b)
{
	return (uint64_t)(b->head + b->len - (b->data + b->data_len));
}

static bool job_is_final(const struct doca_sha_job *j)
{
	return !dc_sha_is_partial(j->base.type) || j->flags == DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL;
}

static doca_error_t check_request(const struct doca_buf *b, uint64_t *total)
{
	uint64_t sum = 0;
	uint32_t n = 0;

	for (; b != NULL; b = b->next) {
		if (++n > DC_SHA_MAX_LIST_ELEMS) {
			DC_DBG("request list longer than %u elements", DC_SHA_MAX_LIST_ELEMS);
			return DOCA_ERROR_INVALID_VALUE;
		}
		sum += b->data_len;
	}
	if (sum > DC_SHA_MAX_SRC_SIZE) {
		DC_DBG("request of %llu bytes is larger than %llu", (unsigned long long)sum, DC_SHA_MAX_SRC_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*total = sum;
	return DOCA_SUCCESS;
}

/* The rules of a partial segment: a live session of this context, whole blocks unless final. */
static doca_error_t check_partial(const struct doca_sha *sha, const struct doca_sha_job *j, uint64_t total)
{
	const struct doca_sha_partial_job *pj = (const struct doca_sha_partial_job *)j;
	uint32_t block = hw_sha_block_size(dc_sha_alg(j->base.type));

	if (!dc_sha_session_valid(sha, pj->session)) {
		DC_DBG("partial job without a live session of this context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!job_is_final(j) && total % block != 0) {
		DC_DBG("non-final segment of %llu bytes is not a multiple of %u", (unsigned long long)total, block);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Checks shared by submit and execution: the job's shape, not its memory. */
static doca_error_t check_job(const struct doca_sha *sha, const struct doca_sha_job *j)
{
	uint64_t total = 0;
	doca_error_t ret;

	if (!dc_sha_type_valid(j->base.type)) {
		DC_ERR("job type %d is not a SHA job", j->base.type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (j->req_buf == NULL || j->resp_buf == NULL || j->req_buf->refcount == 0 || j->resp_buf->refcount == 0 ||
	    j->flags > DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = check_request(j->req_buf, &total);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (job_is_final(j) && resp_room(j->resp_buf) < hw_sha_digest_size(dc_sha_alg(j->base.type))) {
		DC_DBG("response has room for %llu bytes, the digest needs %u",
		       (unsigned long long)resp_room(j->resp_buf), hw_sha_digest_size(dc_sha_alg(j->base.type)));
		return DOCA_ERROR_INVALID_VALUE;
	}
	return dc_sha_is_partial(j->base.type) ? check_partial(sha, j, total) : DOCA_SUCCESS;
}

_Static_assert(sizeof(struct doca_sha_partial_job) <= DC_WQE_JOB_MAX, "a SHA job fits a work-queue entry");

doca_error_t dc_sha_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size)
{
	*size = dc_sha_is_partial(job->type) ? sizeof(struct doca_sha_partial_job) : sizeof(struct doca_sha_job);
	return check_job((const struct doca_sha *)ctx, (const struct doca_sha_job *)job);
}

static uint32_t gather_request(const struct doca_buf *b, const struct doca_dev *dev, struct hw_sge *sge)
{
	uint32_t i = 0;

	for (; b != NULL; b = b->next, i++)
		sge[i] = (struct hw_sge){ .key = dc_mmap_mkey(b->mmap, dev), .access = b->mmap->rd_access,
					  .addr = (uint64_t)(uintptr_t)b->data, .len = b->data_len };
	return i;
}

static struct hw_sge response_sge(const struct doca_buf *b, const struct doca_dev *dev)
{
	return (struct hw_sge){ .key = dc_mmap_mkey(b->mmap, dev), .access = b->mmap->wr_access,
				.addr = (uint64_t)(uintptr_t)(b->data + b->data_len), .len = resp_room(b) };
}

/*
 * One segment of a session's message. The first segment starts the message;
 * a failed segment or the final one ends it, so the session is ready for the
 * next message either way.
 */
static enum hw_status partial_step(struct doca_sha *sha, const struct doca_sha_partial_job *pj, uint32_t pd_id,
				   const struct hw_sge *src, uint32_t n, const struct hw_sge *dst)
{
	struct doca_sha_partial_session *s = pj->session;
	int type = pj->sha_job.base.type;
	enum hw_status rs;

	if (!dc_sha_session_valid(sha, s))
		return HW_ERR_INVAL; /* destroyed since submit */
	if (s->job_type == 0) {
		rs = hw_sha_start(s->st, dc_sha_alg(type));
		if (rs != HW_OK)
			return rs;
		s->job_type = type;
	} else if (s->job_type != type) {
		DC_DBG("segment of type %d in a session hashing type %d", type, s->job_type);
		s->job_type = 0;
		return HW_ERR_INVAL;
	}
	rs = hw_sha_step(s->st, pd_id, src, n, dst);
	if (rs != HW_OK || dst != NULL)
		s->job_type = 0;
	return rs;
}

doca_error_t dc_sha_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	struct doca_sha *sha = (struct doca_sha *)ctx;
	const struct doca_sha_job *j = (const struct doca_sha_job *)job;
	const struct doca_dev *dev = ctx->devs[0];
	uint32_t pd_id = hw_pd_id(dc_dev_pd(dev));
	struct hw_sge src[DC_SHA_MAX_LIST_ELEMS], dst = { 0 };
	bool final = job_is_final(j);
	enum hw_status rs;
	uint32_t n;
	doca_error_t ret;

	/* Again at execution: a graph may fill the buffers in after submit. */
	ret = check_job(sha, j);
	if (ret != DOCA_SUCCESS)
		goto out;
	n = gather_request(j->req_buf, dev, src);
	if (final)
		dst = response_sge(j->resp_buf, dev);
	if (dc_sha_is_partial(job->type))
		rs = partial_step(sha, (const struct doca_sha_partial_job *)j, pd_id, src, n, final ? &dst : NULL);
	else
		rs = hw_sha_oneshot(sha->eng, dc_sha_alg(job->type), pd_id, src, n, &dst);
	ret = status_to_error(rs);
	if (rs != HW_OK)
		DC_DBG("SHA job failed: %s", hw_status_str(rs));
	else if (final)
		j->resp_buf->data_len += hw_sha_digest_size(dc_sha_alg(job->type));
out:
	result->u64 = (uint64_t)ret;
	return ret;
}

/* ---- on the engine queue ---- */

void dc_sha_jobq_attr(struct doca_ctx *ctx, struct hw_jobq_attr *attr)
{
	struct doca_sha *sha = (struct doca_sha *)ctx;

	attr->pd_id = hw_pd_id(dc_dev_pd(ctx->devs[0]));
	attr->sha = sha->eng;
	attr->sessions = sha->session_st;
	attr->nsessions = DC_SHA_MAX_SESSIONS;
}

/* A partial segment's WQE: the session's first segment starts the message on the engine's session. */
static enum hw_status post_partial(struct doca_sha *sha, struct hw_jobq *q, const struct doca_sha_partial_job *pj,
				   const struct hw_sge *src, uint32_t n, const struct hw_sge *dst)
{
	const struct doca_sha_partial_session *s = pj->session;
	uint32_t flags = (dst != NULL ? HW_MMO_SHA_FINAL : 0) | (s->job_type == 0 ? HW_MMO_SHA_START : 0);

	return hw_jobq_post_sha_partial(q, dc_sha_alg(pj->sha_job.base.type), (uint32_t)(s - sha->sessions), flags,
					src, n, dst);
}

/* The job's outcome from its CQE, as dc_sha_job_exec reports it. */
static doca_error_t cqe_result(const struct doca_sha_job *j, bool partial, bool final, bool posted,
			       const struct hw_cqe64 *cqe)
{
	bool ok = posted && hw_cqe_opcode(cqe) == HW_CQE_REQ;
	enum hw_status hs = !posted ? HW_ERR_INVAL : ok ? HW_OK : (enum hw_status)hw_err_cqe_vendor_synd(cqe);

	/* A failed segment or the final one ends the message: the session is ready for the next. */
	if (partial && (!ok || final))
		((const struct doca_sha_partial_job *)j)->session->job_type = 0;
	if (!ok) {
		DC_DBG("SHA job failed: %s", hw_status_str(hs));
		return status_to_error(hs);
	}
	if (final)
		j->resp_buf->data_len += hw_cqe_byte_cnt(cqe);
	return DOCA_SUCCESS;
}

/*
 * Runs the job at progress through the engine queue: checked as job_exec
 * checks it, written as a WQE, executed at the doorbell, its outcome read
 * from the CQE. The context keeps the session's message state (job_type),
 * as for job_exec. A job with no WQE form (more request elements than a WQE
 * holds, mixed rights) runs through job_exec.
 */
doca_error_t dc_sha_job_run(struct doca_ctx *ctx, struct hw_jobq *q, const struct doca_job *job,
			    union doca_data *result)
{
	struct doca_sha *sha = (struct doca_sha *)ctx;
	const struct doca_sha_job *j = (const struct doca_sha_job *)job;
	const struct doca_sha_partial_job *pj = (const struct doca_sha_partial_job *)job;
	const struct doca_dev *dev = ctx->devs[0];
	struct hw_sge src[DC_SHA_MAX_LIST_ELEMS], dst = { 0 };
	bool final = job_is_final(j), partial = dc_sha_is_partial(job->type), posted;
	struct hw_cqe64 cqe;
	enum hw_status rs;
	uint32_t n;
	doca_error_t ret;

	ret = check_job(sha, j);
	if (ret != DOCA_SUCCESS)
		goto out;
	if (partial && pj->session->job_type != 0 && pj->session->job_type != job->type) {
		DC_DBG("segment of type %d in a session hashing type %d", job->type, pj->session->job_type);
		pj->session->job_type = 0;
		ret = DOCA_ERROR_INVALID_VALUE;
		goto out;
	}
	n = gather_request(j->req_buf, dev, src);
	if (final)
		dst = response_sge(j->resp_buf, dev);
	if (partial)
		rs = post_partial(sha, q, pj, src, n, final ? &dst : NULL);
	else
		rs = hw_jobq_post_sha(q, dc_sha_alg(job->type), src, n, &dst);
	if (rs != HW_OK)
		return dc_sha_job_exec(ctx, job, result);
	if (partial)
		pj->session->job_type = job->type;
	hw_jobq_ring(q);
	posted = hw_jobq_take_cqe(q, &cqe);
	ret = cqe_result(j, partial, final, posted, &cqe);
out:
	result->u64 = (uint64_t)ret;
	return ret;
}
