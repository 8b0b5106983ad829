/*
 * hw_dcs — DCI streams (PRM "DCI stream channels"). A DCI created with
 * 2^log_conc streams runs its WQEs in order as any DCI does, and keeps an
 * error state per stream: the WQE's ctrl segment names its stream
 * (dci_stream_channel_id), taken modulo the number of streams, as ids past
 * it share a channel on the card. A WQE that fails puts its stream in error;
 * later WQEs of that stream complete WR_FLUSH_ERR while the others run on,
 * until hw_qp_dci_stream_reset. When the streams in error reach
 * 2^log_err, the DCI itself moves to ERR. A DCI without streams is one
 * stream with one error allowed: any failure moves it to ERR.
 */
#ifndef SOFTDPU_HW_DCS_H
#define SOFTDPU_HW_DCS_H

#include <stdbool.h>
#include <stdint.h>

#include "hw_qp.h"

/* What the device offers (mlx5dv_query_device's dci_streams_caps): 16 streams, 8 of them in error. */
#define HW_DCS_LOG_MAX_CONC 4
#define HW_DCS_LOG_MAX_ERRORED 3

/* A DCI in RESET: its streams. HW_ERR_INVAL on another type, another state or logs past the caps. */
enum hw_status hw_qp_set_dci_streams(struct hw_qp *qp, uint8_t log_conc, uint8_t log_err);

/*
 * Takes stream's channel out of error. HW_ERR_INVAL when qp is no DCI with
 * streams, is not in RTS, or that channel is not in error.
 */
enum hw_status hw_qp_dci_stream_reset(struct hw_qp *qp, uint16_t stream);

/* The engine's side (qp->dcs set): whether the channel of stream is in error. */
bool hw_dcs_errored(const struct hw_qp *qp, uint16_t stream);
/* A WQE of stream failed: its channel goes to error; true when the DCI must go to ERR. */
bool hw_dcs_fail(struct hw_qp *qp, uint16_t stream);

#endif
