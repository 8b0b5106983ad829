/*
 * softdpu — DOCA SHA library (DOCA 2.2 work-queue API).
 *
 * A SHA job hashes the data segment of its request buffer (every element of a
 * linked list, in order) and writes the digest after the data segment of the
 * response buffer's first element, growing its data length. The response
 * needs room for DOCA_SHA<n>_BYTE_COUNT bytes after its data; a job that
 * does not fit is refused and leaves the response untouched.
 *
 * Partial jobs hash one message in several segments through a session: every
 * segment but the last is a multiple of the algorithm's block size (64 bytes
 * for SHA-1 and SHA-256, 128 bytes for SHA-512); the last one carries
 * DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL and receives the digest. Segments of
 * one session are submitted one after the other, each after the previous
 * one's event. A job's event carries its status in result.u64.
 */
#ifndef DOCA_SHA_H_
#define DOCA_SHA_H_

#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum doca_sha_job_type {
	DOCA_SHA_JOB_SHA1 = DOCA_ACTION_SHA_FIRST + 1,
	DOCA_SHA_JOB_SHA256,
	DOCA_SHA_JOB_SHA512,
	DOCA_SHA_JOB_SHA1_PARTIAL,
	DOCA_SHA_JOB_SHA256_PARTIAL,
	DOCA_SHA_JOB_SHA512_PARTIAL,
};

/* Digest sizes: the room a response buffer needs (the partial types need the same). */
#define DOCA_SHA1_BYTE_COUNT 20
#define DOCA_SHA256_BYTE_COUNT 32
#define DOCA_SHA512_BYTE_COUNT 64

enum doca_sha_job_flags {
	DOCA_SHA_JOB_FLAGS_NONE = 0,
	DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL, /**< Last segment of a partial job. */
};

struct doca_sha_job {
	struct doca_job base;	  /**< Common job data; base.type is an enum doca_sha_job_type. */
	struct doca_buf *req_buf; /**< Data to hash; may be a linked list. */
	struct doca_buf *resp_buf; /**< Receives the digest after its data (first element only). */
	uint64_t flags;		  /**< enum doca_sha_job_flags. */
};

/** Running state of one message hashed in segments. */
struct doca_sha_partial_session;

struct doca_sha_partial_job {
	struct doca_sha_job sha_job;		  /**< base.type is one of the *_PARTIAL types. */
	struct doca_sha_partial_session *session; /**< Same session for every segment of a message. */
};

struct doca_sha;

__DOCA_EXPERIMENTAL
doca_error_t doca_sha_create(struct doca_sha **ctx);

/** DOCA_ERROR_IN_USE while started or while a device or work queues are attached. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_destroy(struct doca_sha *ctx);

/** DOCA_SUCCESS when the device can run job_type, DOCA_ERROR_NOT_SUPPORTED otherwise. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_job_get_supported(const struct doca_devinfo *devinfo, enum doca_sha_job_type job_type);

/** Maximal number of elements of a request list (1: no list support). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** Maximal number of bytes one job hashes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_max_src_buffer_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** Room a response buffer needs for job_type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_min_dst_buffer_size(const struct doca_devinfo *devinfo, enum doca_sha_job_type job_type,
					      uint32_t *min_buffer_size);

/** DOCA_SUCCESS when the device hashes with its own engine (not a software fallback). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_hardware_supported(const struct doca_devinfo *devinfo);

__DOCA_EXPERIMENTAL
struct doca_ctx *doca_sha_as_ctx(struct doca_sha *ctx);

/**
 * Takes a session for a partial job on (ctx, workq). Sessions are a limited
 * resource: DOCA_ERROR_NO_MEMORY when all are taken.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_partial_session_create(struct doca_sha *ctx, struct doca_workq *workq,
					     struct doca_sha_partial_session **session);

/** Gives the session back; ctx and workq must be the ones it was created with. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_partial_session_destroy(struct doca_sha *ctx, struct doca_workq *workq,
					      struct doca_sha_partial_session *session);

/**
 * Copies the running state of from_session into to_session, so that messages
 * sharing a prefix hash it once.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_partial_session_copy(struct doca_sha *ctx, struct doca_workq *workq,
					   const struct doca_sha_partial_session *from_session,
					   struct doca_sha_partial_session *to_session);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SHA_H_ */
