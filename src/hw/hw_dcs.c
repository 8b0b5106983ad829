/*
 * hw_dcs — DCI streams: the per-stream error state of a DCI (hw_dcs.h).
 * The engine running the SQ sets a channel's bit; the owner's reset clears
 * it; a move to RESET clears them all (hw_qp_modify).
 */
#include "hw_dcs.h"

static uint32_t dcs_bit(const struct hw_qp *qp, uint16_t stream)
{
	return 1u << (stream & ((1u << qp->dcs_log_conc) - 1));
}

enum hw_status hw_qp_set_dci_streams(struct hw_qp *qp, uint8_t log_conc, uint8_t log_err)
{
	if (qp == NULL || qp->type != HW_QPT_DCI || hw_qp_state_of(qp) != HW_QP_RESET ||
	    log_conc > HW_DCS_LOG_MAX_CONC || log_err > HW_DCS_LOG_MAX_ERRORED)
		return HW_ERR_INVAL;
	qp->dcs_log_conc = log_conc;
	qp->dcs_log_err = log_err;
	__atomic_store_n(&qp->dcs_errored, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&qp->dcs, true, __ATOMIC_RELEASE);
	return HW_OK;
}

enum hw_status hw_qp_dci_stream_reset(struct hw_qp *qp, uint16_t stream)
{
	uint32_t bit;

	if (qp == NULL || !__atomic_load_n(&qp->dcs, __ATOMIC_ACQUIRE) || hw_qp_state_of(qp) != HW_QP_RTS)
		return HW_ERR_INVAL;
	bit = dcs_bit(qp, stream);
	/* Only a stream in error can be reset, as the card refuses the command otherwise. */
	if ((__atomic_fetch_and(&qp->dcs_errored, ~bit, __ATOMIC_ACQ_REL) & bit) == 0)
		return HW_ERR_INVAL;
	return HW_OK;
}

bool hw_dcs_errored(const struct hw_qp *qp, uint16_t stream)
{
	return (__atomic_load_n(&qp->dcs_errored, __ATOMIC_ACQUIRE) & dcs_bit(qp, stream)) != 0;
}

bool hw_dcs_fail(struct hw_qp *qp, uint16_t stream)
{
	uint32_t bit = dcs_bit(qp, stream);
	uint32_t now = __atomic_or_fetch(&qp->dcs_errored, bit, __ATOMIC_ACQ_REL);

	return (uint32_t)__builtin_popcount(now) >= (1u << qp->dcs_log_err);
}
