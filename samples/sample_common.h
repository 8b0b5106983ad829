/*
 * Helpers shared by the host/DPU sample pairs: opening devices and
 * representors by PCI address, and a comm channel with blocking, bounded
 * send and receive. Plain DOCA API only.
 */
#ifndef SOFTDPU_SAMPLE_COMMON_H_
#define SOFTDPU_SAMPLE_COMMON_H_

#include <stddef.h>

#include <doca_comm_channel.h>
#include <doca_dev.h>
#include <doca_error.h>

#define SAMPLE_HOST_PCI "0000:0b:00.0" /* host pf0 */
#define SAMPLE_DPU_PCI "0000:03:00.0"  /* DPU p0, parent of pf0's representor */
#define SAMPLE_WAIT_MS 30000	       /* give up waiting for the peer after this long */

struct sample_cc {
	struct doca_comm_channel_ep_t *ep;
	struct doca_comm_channel_addr_t *peer;
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
};

/* Opens the local device with this PCI address. */
doca_error_t sample_open_dev(const char *pci, struct doca_dev **dev);

/* DPU side: opens, under DPU device dev, the representor of the host function with this PCI address. */
doca_error_t sample_open_rep(struct doca_dev *dev, const char *pci, struct doca_dev_rep **rep);

/* Host side: connects to service on device dev. */
doca_error_t sample_cc_client(struct sample_cc *cc, struct doca_dev *dev, const char *service);

/* DPU side: listens as service on dev with representor rep. */
doca_error_t sample_cc_service(struct sample_cc *cc, struct doca_dev *dev, struct doca_dev_rep *rep,
			       const char *service);

/* Sends one message, retrying while the queue is full (bounded). */
doca_error_t sample_cc_send(struct sample_cc *cc, const void *msg, size_t len);

/* Receives one message into buf (capacity *len in, size out), waiting (bounded); remembers the sender. */
doca_error_t sample_cc_recv(struct sample_cc *cc, void *buf, size_t *len);

void sample_cc_close(struct sample_cc *cc);

#endif /* SOFTDPU_SAMPLE_COMMON_H_ */
