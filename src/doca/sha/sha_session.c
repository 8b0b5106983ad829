/*
 * Partial sessions: the running hash of a message hashed in segments.
 *
 * A session is a slot of its context's fixed pool. Its hash state is made on
 * the slot's first use and kept when the session is destroyed, so creating
 * sessions in a loop does not allocate, and a job that still names a
 * destroyed session finds a dead slot instead of freed memory.
 */
#include "dc_log.h"
#include "sha_priv.h"

static struct doca_sha_partial_session *take_slot_locked(struct doca_sha *sha)
{
	for (uint32_t i = 0; i < DC_SHA_MAX_SESSIONS; i++) {
		struct doca_sha_partial_session *s = &sha->sessions[i];

		if (s->in_use)
			continue;
		if (s->st == NULL) {
			s->st = hw_sha_state_new(sha->eng);
			sha->session_st[i] = s->st;
		}
		return s->st == NULL ? NULL : s;
	}
	return NULL;
}

doca_error_t doca_sha_partial_session_create(struct doca_sha *ctx, struct doca_workq *workq,
					     struct doca_sha_partial_session **session)
{
	struct doca_sha_partial_session *s;

	if (ctx == NULL || workq == NULL || session == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->ctx.lock);
	s = take_slot_locked(ctx);
	if (s != NULL) {
		s->workq = workq;
		s->job_type = 0;
		s->in_use = true;
	}
	pthread_mutex_unlock(&ctx->ctx.lock);
	if (s == NULL) {
		DC_ERR("no free partial session (at most %u per context)", DC_SHA_MAX_SESSIONS);
		return DOCA_ERROR_NO_MEMORY;
	}
	*session = s;
	return DOCA_SUCCESS;
}

static bool session_of(const struct doca_sha *sha, const struct doca_workq *workq,
		       const struct doca_sha_partial_session *s)
{
	return dc_sha_session_valid(sha, s) && s->workq == workq;
}

doca_error_t doca_sha_partial_session_destroy(struct doca_sha *ctx, struct doca_workq *workq,
					      struct doca_sha_partial_session *session)
{
	doca_error_t ret = DOCA_SUCCESS;

	if (ctx == NULL || workq == NULL || session == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->ctx.lock);
	if (session_of(ctx, workq, session)) {
		session->in_use = false;
		session->job_type = 0;
		session->workq = NULL;
	} else {
		ret = DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&ctx->ctx.lock);
	if (ret != DOCA_SUCCESS)
		DC_ERR("not a live session of this context and work queue");
	return ret;
}

doca_error_t doca_sha_partial_session_copy(struct doca_sha *ctx, struct doca_workq *workq,
					   const struct doca_sha_partial_session *from_session,
					   struct doca_sha_partial_session *to_session)
{
	if (ctx == NULL || workq == NULL || from_session == NULL || to_session == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!session_of(ctx, workq, from_session) || !session_of(ctx, workq, to_session)) {
		DC_ERR("not live sessions of this context and work queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (from_session == to_session)
		return DOCA_SUCCESS;
	/* A session between messages has nothing to copy: the copy is between messages too. */
	if (from_session->job_type != 0 && hw_sha_copy(to_session->st, from_session->st) != HW_OK)
		return DOCA_ERROR_NO_MEMORY;
	to_session->job_type = from_session->job_type;
	return DOCA_SUCCESS;
}
