/*
 * hw_sig_pipe — signature pipelining of a QP (hw_qp.h): the SQ stops after
 * a WQE whose transfer failed a signature check, as the card moves such a
 * QP to SQ drained, until the program resumes it.
 */
#include "hw_qp.h"

void hw_qp_set_sig_pipelining(struct hw_qp *qp, void (*drained)(void *arg), void *arg)
{
	qp->sig_drained = drained;
	qp->sig_drained_arg = arg;
	qp->sig_pipe = true;
	__atomic_fetch_or(&qp->no_fast, HW_QP_NO_FAST_SIG, __ATOMIC_RELEASE);
}

bool hw_qp_sig_held(const struct hw_qp *qp)
{
	return __atomic_load_n(&qp->sig_held, __ATOMIC_ACQUIRE) != 0;
}

/* On the thread running the SQ: the stop, and its report once. */
void hw_qp_sig_hold(struct hw_qp *qp)
{
	if (__atomic_exchange_n(&qp->sig_held, 1, __ATOMIC_ACQ_REL) == 0 && qp->sig_drained != NULL)
		qp->sig_drained(qp->sig_drained_arg);
}

bool hw_qp_sig_release(struct hw_qp *qp)
{
	if (__atomic_exchange_n(&qp->sig_held, 0, __ATOMIC_ACQ_REL) == 0)
		return false;
	hw_qp_drive(qp, 0); /* what was posted meanwhile */
	return true;
}

void hw_qp_sig_clear(struct hw_qp *qp)
{
	__atomic_store_n(&qp->sig_held, 0, __ATOMIC_RELEASE);
}

uint32_t hw_qp_sq_next(const struct hw_qp *qp)
{
	return __atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE);
}
