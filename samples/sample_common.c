/*
 * Helpers of the host/DPU sample pairs.
 */
#define _POSIX_C_SOURCE 200809L

#include "sample_common.h"

#include <string.h>
#include <time.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(SAMPLE_COMMON);

static void nap(void)
{
	struct timespec ts = { .tv_nsec = 20000 };

	nanosleep(&ts, NULL);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

doca_error_t sample_open_dev(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	doca_error_t r = DOCA_ERROR_NOT_FOUND;
	uint8_t eq = 0;
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS)
		return DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n && r == DOCA_ERROR_NOT_FOUND; i++)
		if (doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			r = doca_dev_open(list[i], dev);
	doca_devinfo_list_destroy(list);
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("no local device %s (SOFTDPU_SIDE right?): %s", pci, doca_get_error_string(r));
	return r;
}

doca_error_t sample_open_rep(struct doca_dev *dev, const char *pci, struct doca_dev_rep **rep)
{
	struct doca_devinfo_rep **list;
	doca_error_t r = DOCA_ERROR_NOT_FOUND;
	uint8_t eq = 0;
	uint32_t n;

	if (doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &list, &n) != DOCA_SUCCESS)
		return DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n && r == DOCA_ERROR_NOT_FOUND; i++)
		if (doca_devinfo_rep_get_is_pci_addr_equal(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			r = doca_dev_rep_open(list[i], rep);
	doca_devinfo_rep_list_destroy(list);
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("no representor of %s: %s", pci, doca_get_error_string(r));
	return r;
}

doca_error_t sample_cc_client(struct sample_cc *cc, struct doca_dev *dev, const char *service)
{
	doca_error_t r;

	memset(cc, 0, sizeof(*cc));
	cc->dev = dev;
	r = doca_comm_channel_ep_create(&cc->ep);
	if (r == DOCA_SUCCESS)
		r = doca_comm_channel_ep_set_device(cc->ep, dev);
	if (r == DOCA_SUCCESS)
		r = doca_comm_channel_ep_connect(cc->ep, service, &cc->peer);
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("comm channel connect to %s failed: %s", service, doca_get_error_string(r));
	return r;
}

doca_error_t sample_cc_service(struct sample_cc *cc, struct doca_dev *dev, struct doca_dev_rep *rep,
			       const char *service)
{
	doca_error_t r;

	memset(cc, 0, sizeof(*cc));
	cc->dev = dev;
	cc->rep = rep;
	r = doca_comm_channel_ep_create(&cc->ep);
	if (r == DOCA_SUCCESS)
		r = doca_comm_channel_ep_set_device(cc->ep, dev);
	if (r == DOCA_SUCCESS)
		r = doca_comm_channel_ep_set_device_rep(cc->ep, rep);
	if (r == DOCA_SUCCESS)
		r = doca_comm_channel_ep_listen(cc->ep, service);
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("comm channel listen on %s failed: %s", service, doca_get_error_string(r));
	return r;
}

doca_error_t sample_cc_send(struct sample_cc *cc, const void *msg, size_t len)
{
	double end = now_ms() + SAMPLE_WAIT_MS;
	doca_error_t r;

	while ((r = doca_comm_channel_ep_sendto(cc->ep, msg, len, DOCA_CC_MSG_FLAG_NONE, cc->peer)) ==
		       DOCA_ERROR_AGAIN &&
	       now_ms() < end)
		nap();
	return r;
}

doca_error_t sample_cc_recv(struct sample_cc *cc, void *buf, size_t *len)
{
	double end = now_ms() + SAMPLE_WAIT_MS;
	size_t cap = *len;
	doca_error_t r;

	do {
		*len = cap;
		r = doca_comm_channel_ep_recvfrom(cc->ep, buf, len, DOCA_CC_MSG_FLAG_NONE, &cc->peer);
		if (r == DOCA_ERROR_AGAIN)
			nap();
	} while (r == DOCA_ERROR_AGAIN && now_ms() < end);
	if (r == DOCA_ERROR_AGAIN)
		r = DOCA_ERROR_TIME_OUT;
	return r;
}

void sample_cc_close(struct sample_cc *cc)
{
	if (cc->ep == NULL)
		return;
	if (cc->peer != NULL)
		doca_comm_channel_ep_disconnect(cc->ep, cc->peer);
	doca_comm_channel_ep_destroy(cc->ep);
	cc->ep = NULL;
}
