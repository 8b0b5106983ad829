/*
 * hw_srq — shared receive queues: memory, the device's consumption by
 * next_wqe_index, the limit event, and the doorbell that resumes requesters.
 */
#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hw_qp.h"
#include "hw_srq.h"

#define SRQ_BUF_ALIGN 4096
#define SRQ_DBREC_ALIGN 64
#define SRQ_COUNTER_MASK 0xffffu

/* Attaching and detaching QPs happens at their creation and destruction only. */
static pthread_mutex_t srq_list_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t srq_size(const struct hw_srq *srq)
{
	return 1u << srq->log_size;
}

static struct hw_wqe_srq_next_seg *srq_wqe(const struct hw_srq *srq, uint32_t idx)
{
	return (void *)(srq->buf + ((size_t)(idx & (srq_size(srq) - 1)) << srq->log_stride));
}

enum hw_status hw_srq_create(const struct hw_srq_attr *attr, struct hw_srq **out)
{
	struct hw_srq *srq;
	size_t len;
	void *p;

	if (attr == NULL || out == NULL || attr->pd == NULL || attr->log_size > HW_SRQ_LOG_MAX ||
	    attr->log_stride < HW_SRQ_LOG_STRIDE_MIN || attr->log_stride > HW_SRQ_LOG_STRIDE_MAX)
		return HW_ERR_INVAL;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return HW_ERR_NOMEM;
	srq->srqn = attr->srqn & 0xffffffu;
	srq->pd_id = hw_pd_id(attr->pd);
	srq->log_size = attr->log_size;
	srq->log_stride = attr->log_stride;
	srq->limit_cb = attr->limit_cb;
	srq->limit_arg = attr->limit_arg;
	len = (size_t)1 << (attr->log_size + attr->log_stride);
	if (posix_memalign(&p, SRQ_BUF_ALIGN, len) != 0)
		goto err_buf;
	srq->buf = p;
	memset(srq->buf, 0, len);
	if (posix_memalign(&p, SRQ_DBREC_ALIGN, sizeof(uint32_t)) != 0)
		goto err_dbrec;
	srq->dbrec = p;
	srq->dbrec[0] = 0;
	/* The list a driver starts with: each WQE linked to the next, the last back to the first. */
	for (uint32_t i = 0; i < srq_size(srq); i++)
		srq_wqe(srq, i)->next_wqe_index = htobe16((uint16_t)((i + 1) & (srq_size(srq) - 1)));
	*out = srq;
	return HW_OK;

err_dbrec:
	free(srq->buf);
err_buf:
	free(srq);
	return HW_ERR_NOMEM;
}

enum hw_status hw_srq_destroy(struct hw_srq *srq)
{
	if (srq == NULL)
		return HW_OK;
	if (__atomic_load_n(&srq->qps, __ATOMIC_ACQUIRE) != NULL)
		return HW_ERR_INVAL;
	free(srq->dbrec);
	free(srq->buf);
	free(srq);
	return HW_OK;
}

uint8_t *hw_srq_buf(const struct hw_srq *srq)
{
	return srq->buf;
}

uint32_t *hw_srq_dbrec(const struct hw_srq *srq)
{
	return srq->dbrec;
}

uint32_t hw_srq_srqn(const struct hw_srq *srq)
{
	return srq->srqn;
}

static uint32_t srq_pi(const struct hw_srq *srq)
{
	return be32toh(__atomic_load_n(&srq->dbrec[0], __ATOMIC_SEQ_CST)) & SRQ_COUNTER_MASK;
}

uint32_t hw_srq_posted(const struct hw_srq *srq)
{
	uint32_t hc = __atomic_load_n(&srq->hc, __ATOMIC_ACQUIRE);
	uint32_t posted = (srq_pi(srq) - hc) & SRQ_COUNTER_MASK;

	return posted > srq_size(srq) ? 0 : posted;
}

enum hw_status hw_srq_arm(struct hw_srq *srq, uint32_t limit)
{
	if (srq == NULL || limit > srq_size(srq) || limit > hw_srq_posted(srq))
		return HW_ERR_INVAL;
	__atomic_store_n(&srq->limit, limit, __ATOMIC_RELEASE);
	return HW_OK;
}

/* Fires the limit once: whoever clears the armed limit calls back. */
static void srq_check_limit(struct hw_srq *srq, uint32_t left)
{
	uint32_t limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);

	if (limit == 0 || left >= limit)
		return;
	if (!__atomic_compare_exchange_n(&srq->limit, &limit, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (srq->limit_cb != NULL)
		srq->limit_cb(srq->limit_arg, srq);
}

const uint8_t *hw_srq_take(struct hw_srq *srq, uint16_t *idx)
{
	uint32_t hc = __atomic_load_n(&srq->hc, __ATOMIC_ACQUIRE);
	uint32_t head, posted, next;

	do {
		posted = (srq_pi(srq) - hc) & SRQ_COUNTER_MASK;
		if (posted == 0 || posted > srq_size(srq))
			return NULL;
		head = hc >> 16;
		next = be16toh(srq_wqe(srq, head)->next_wqe_index) & (srq_size(srq) - 1);
	} while (!__atomic_compare_exchange_n(&srq->hc, &hc, next << 16 | ((hc + 1) & SRQ_COUNTER_MASK), false,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	*idx = (uint16_t)head;
	srq_check_limit(srq, posted - 1);
	return (const uint8_t *)srq_wqe(srq, head);
}

enum hw_status hw_srq_ring(struct hw_srq *srq, uint32_t pi)
{
	uint32_t hc;

	if (srq == NULL)
		return HW_ERR_INVAL;
	pi &= SRQ_COUNTER_MASK;
	hc = __atomic_load_n(&srq->hc, __ATOMIC_ACQUIRE);
	if (((pi - hc) & SRQ_COUNTER_MASK) > srq_size(srq))
		return HW_ERR_INVAL;
	__atomic_store_n(&srq->dbrec[0], htobe32(pi), __ATOMIC_SEQ_CST); /* see hw_qp_resume_peer */
	for (struct hw_qp *qp = __atomic_load_n(&srq->qps, __ATOMIC_ACQUIRE); qp != NULL; qp = qp->srq_next)
		hw_qp_resume_peer(qp);
	return HW_OK;
}

void hw_srq_attach(struct hw_srq *srq, struct hw_qp *qp)
{
	pthread_mutex_lock(&srq_list_lock);
	qp->srq_next = srq->qps;
	__atomic_store_n(&srq->qps, qp, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&srq_list_lock);
}

void hw_srq_detach(struct hw_srq *srq, struct hw_qp *qp)
{
	pthread_mutex_lock(&srq_list_lock);
	for (struct hw_qp **pp = &srq->qps; *pp != NULL; pp = &(*pp)->srq_next) {
		if (*pp == qp) {
			__atomic_store_n(pp, qp->srq_next, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&srq_list_lock);
}
