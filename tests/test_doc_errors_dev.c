/*
 * test_doc_errors_dev — the documented failures of doca_dev.h,
 * doca_comm_channel.h, doca_error.h and doca_version.h return the codes the
 * DOCA 2.2 headers list for them. One case per function or small group.
 *
 * This process is the host side. DPU-side cases run in a child (this binary
 * again, role "dpu", SOFTDPU_SIDE=dpu) that prints its own summary line; a
 * comm channel service for the client cases runs in a "service" child; the
 * refused topology is read by a "notopo" child, before it loads any topology.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_comm_channel.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_version.h"
#include "dev_open.h"
#include "harness.h"
#include "th_proc.h"

#define HOST_PCI "0000:0b:00.0" /* pf0, represented by hpf0 under p0 */
#define DPU_PCI "0000:03:00.0"	/* p0 */
#define SEND_ROUNDS (1 << 20)	/* bound of the fill loop; the queue is full long before */

typedef struct doca_comm_channel_ep_t ep_t;
typedef struct doca_comm_channel_addr_t addr_t;

static char name[48]; /* service name of this run */

/* ---- devices ---- */

static void close_dev(void *arg)
{
	doca_dev_close(*(struct doca_dev **)arg);
}

static void close_rep(void *arg)
{
	doca_dev_rep_close(*(struct doca_dev_rep **)arg);
}

static void destroy_ep(void *arg)
{
	doca_comm_channel_ep_destroy(*(ep_t **)arg);
}

/* ---- doca_dev.h: lists, open, close ---- */

static void test_devinfo_list(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	CHECK_ERR(doca_devinfo_list_create(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_list_create(&list, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n > 0);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

/* A card whose function list cannot be read: NOT_FOUND (the child reads no topology before). */
static void test_devinfo_list_unreadable(void)
{
	struct th_proc *p = th_proc_start(NULL, "notopo", NULL);
	const char *line;

	CHECK(p != NULL);
	line = th_proc_line(p);
	CHECK(line != NULL);
	CHECK(atoi(line) == DOCA_ERROR_NOT_FOUND);
	CHECK(th_proc_wait(p) == 0);
}

static void test_dev_open_close(void)
{
	struct doca_dev *dev = NULL, *again = NULL;
	struct doca_devinfo **list;
	ep_t *ep = NULL;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_ERR(doca_dev_open(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_open(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dev_open(list[0], &dev));
	CHECK_OK(doca_devinfo_list_destroy(list));
	th_defer_local(close_dev, &dev);
	/* the same function opened again is the same handle */
	CHECK_OK(th_open_dev_pci(HOST_PCI, &again));
	CHECK(again == dev);
	CHECK_OK(doca_dev_close(again));
	/* an endpoint that keeps the device: the last close is refused and changes nothing */
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_OK(doca_comm_channel_ep_set_device(ep, dev));
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	CHECK(doca_dev_as_devinfo(dev) != NULL);
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK_ERR(doca_dev_close(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
	CHECK(doca_dev_as_devinfo(NULL) == NULL);
}

/* A host function exposes no representors. */
static void test_rep_on_host(void)
{
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep;
	struct doca_dev *dev = NULL;
	uint32_t n;

	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_devinfo_rep_list_create(NULL, DOCA_DEV_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, &reps, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_rep_open(NULL, &rep), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_rep_close(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_dev_rep_as_devinfo(NULL) == NULL);
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_dev.h: local device properties ---- */

static void test_devinfo_props(void)
{
	uint8_t bytes[DOCA_DEVINFO_IPV6_ADDR_SIZE], flag;
	char str[DOCA_DEVINFO_IFACE_NAME_SIZE];
	struct doca_devinfo *info;
	struct doca_dev *dev = NULL;
	struct doca_pci_bdf bdf;
	uint16_t lid;

	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	info = doca_dev_as_devinfo(dev);
	CHECK(info != NULL);
	CHECK_ERR(doca_devinfo_get_vuid(NULL, str, DOCA_DEVINFO_VUID_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_vuid(info, NULL, DOCA_DEVINFO_VUID_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_vuid(info, str, DOCA_DEVINFO_VUID_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr(NULL, &bdf), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr_str(NULL, str), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr_str(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_get_pci_addr_str(info, str));
	CHECK(strcmp(str, HOST_PCI) == 0);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(NULL, HOST_PCI, &flag), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(info, NULL, &flag), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(info, HOST_PCI, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(info, "0b:00", &flag), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(NULL, bytes, DOCA_DEVINFO_IPV4_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(info, NULL, DOCA_DEVINFO_IPV4_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(info, bytes, DOCA_DEVINFO_IPV4_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv6_addr(NULL, bytes, DOCA_DEVINFO_IPV6_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv6_addr(info, NULL, DOCA_DEVINFO_IPV6_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv6_addr(info, bytes, DOCA_DEVINFO_IPV6_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	/* the emulated ports are Ethernet: a MAC address, no LID */
	CHECK_ERR(doca_devinfo_get_mac_addr(NULL, bytes, DOCA_DEVINFO_MAC_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_mac_addr(info, NULL, DOCA_DEVINFO_MAC_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_mac_addr(info, bytes, DOCA_DEVINFO_MAC_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_get_mac_addr(info, bytes, DOCA_DEVINFO_MAC_ADDR_SIZE));
	CHECK_ERR(doca_devinfo_get_lid(info, &lid), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_devinfo_get_lid(NULL, &lid), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_lid(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_iface_name(NULL, str, DOCA_DEVINFO_IFACE_NAME_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_iface_name(info, NULL, DOCA_DEVINFO_IFACE_NAME_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_iface_name(info, str, DOCA_DEVINFO_IFACE_NAME_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ibdev_name(NULL, str, DOCA_DEVINFO_IBDEV_NAME_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ibdev_name(info, NULL, DOCA_DEVINFO_IBDEV_NAME_SIZE), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ibdev_name(info, str, DOCA_DEVINFO_IBDEV_NAME_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

static void test_devinfo_caps(void)
{
	doca_error_t (*const cap[])(const struct doca_devinfo *, uint8_t *) = {
		doca_devinfo_get_is_hotplug_manager_supported,	    doca_devinfo_get_is_mmap_export_dpu_supported,
		doca_devinfo_get_is_mmap_from_export_dpu_supported, doca_devinfo_rep_get_is_list_all_supported,
		doca_devinfo_rep_get_is_list_net_supported,	    doca_devinfo_rep_get_is_list_emulated_supported,
	};
	struct doca_dev *dev = NULL;
	uint8_t v;

	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	for (size_t i = 0; i < sizeof(cap) / sizeof(cap[0]); i++) {
		CHECK_ERR(cap[i](NULL, &v), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(cap[i](doca_dev_as_devinfo(dev), NULL), DOCA_ERROR_INVALID_VALUE);
		CHECK_OK(cap[i](doca_dev_as_devinfo(dev), &v));
	}
	/* what the host PF reports is what the representor list call does */
	CHECK_OK(doca_devinfo_rep_get_is_list_all_supported(doca_dev_as_devinfo(dev), &v));
	CHECK(v == 0);
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_comm_channel.h: capabilities and configuration ---- */

static void test_cc_caps(void)
{
	struct doca_dev *dev = NULL;
	struct doca_devinfo *info;
	uint32_t v;

	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	info = doca_dev_as_devinfo(dev);
	CHECK_ERR(doca_comm_channel_get_max_service_name_len(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_message_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_message_size(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_send_queue_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_send_queue_size(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_recv_queue_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_max_recv_queue_size(info, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_service_max_num_connections(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_get_service_max_num_connections(info, NULL), DOCA_ERROR_INVALID_VALUE);
	/* a service-side capability: a host function cannot serve */
	CHECK_ERR(doca_comm_channel_get_service_max_num_connections(info, &v), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

static void test_cc_ep_args(void)
{
	struct doca_dev_rep *rep;
	struct doca_dev *dev;
	ep_t *ep = NULL;
	uint16_t v;

	CHECK_ERR(doca_comm_channel_ep_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_destroy(NULL), DOCA_ERROR_NOT_CONNECTED);
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_ERR(doca_comm_channel_ep_get_device(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_device(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_device_rep(NULL, &rep), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_device_rep(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_max_msg_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_max_msg_size(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_send_queue_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_send_queue_size(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_recv_queue_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_recv_queue_size(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_device(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_device(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_device_rep(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_max_msg_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_send_queue_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_set_recv_queue_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	/* refused calls left the defaults alone */
	CHECK_OK(doca_comm_channel_ep_get_device(ep, &dev));
	CHECK(dev == NULL);
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
}

static void test_cc_peer_args(void)
{
	uint64_t v;

	CHECK_ERR(doca_comm_channel_peer_addr_get_user_data(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_set_user_data(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_send_messages(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_send_bytes(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_recv_messages(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_recv_bytes(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_peer_addr_get_send_in_flight_messages(NULL, &v), DOCA_ERROR_INVALID_VALUE);
}

/* ---- doca_comm_channel.h: an endpoint that neither listens nor is connected ---- */

static void test_cc_idle_ep(void)
{
	doca_event_channel_t h;
	struct doca_dev *dev = NULL;
	addr_t **list, *peer = NULL;
	ep_t *ep = NULL;
	char buf[64];
	size_t len = sizeof(buf);
	uint32_t n;

	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_ERR(doca_comm_channel_ep_get_event_channel(ep, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_event_channel(NULL, &h, &h), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_event_channel(ep, &h, &h), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(NULL, &h), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(ep, &h), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_event_handle_arm_send(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_event_handle_arm_recv(NULL), DOCA_ERROR_INVALID_VALUE);
	/* service-only calls on an endpoint that is no service */
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(ep), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, &list, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_pending_connections(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_get_pending_connections(ep, &n), DOCA_ERROR_NOT_SUPPORTED);
	/* messages */
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(NULL, buf, &len, 0, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, NULL, &len, 0, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, NULL, 0, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, NULL), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_sendto(NULL, "x", 1, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_disconnect(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_disconnect(ep, NULL), DOCA_ERROR_NOT_CONNECTED);
	/* listen: arguments, then the device */
	CHECK_ERR(doca_comm_channel_ep_listen(NULL, name), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_listen(ep, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_comm_channel_ep_set_device(ep, dev));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_NOT_SUPPORTED);
	/* still configurable */
	CHECK_OK(doca_comm_channel_ep_set_max_msg_size(ep, 128));
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

static void test_cc_connect_refused(void)
{
	struct doca_dev *dev = NULL;
	ep_t *ep = NULL;
	addr_t *peer;
	char other[64];

	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_ERR(doca_comm_channel_ep_connect(NULL, name, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, NULL, &peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, &peer), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_comm_channel_ep_set_device(ep, dev));
	snprintf(other, sizeof(other), "%s-nobody", name);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, other, &peer), DOCA_ERROR_CONNECTION_ABORTED);
	/* a refused connect leaves the endpoint as it was */
	CHECK_OK(doca_comm_channel_ep_set_send_queue_size(ep, 16));
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_comm_channel.h: a client, with a service that never answers, then goes ---- */

static void client_is_no_service(ep_t *ep, struct doca_dev *dev)
{
	doca_event_channel_t h;
	addr_t **list;
	uint32_t n;

	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(ep, &h), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(ep), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_pending_connections(ep, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_set_device(ep, dev), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_max_msg_size(ep, 128), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_send_queue_size(ep, 16), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_recv_queue_size(ep, 16), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_comm_channel_ep_get_event_channel(ep, &h, &h));
}

static void fill_send_queue(ep_t *ep, addr_t *peer, uint16_t max)
{
	static char msg[UINT16_MAX];
	doca_error_t ret = DOCA_SUCCESS;

	CHECK_ERR(doca_comm_channel_ep_sendto(ep, msg, (size_t)max + 1, 0, peer), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, NULL, 1, 0, peer), DOCA_ERROR_INVALID_VALUE);
	for (int i = 0; i < SEND_ROUNDS && ret == DOCA_SUCCESS; i++)
		ret = doca_comm_channel_ep_sendto(ep, msg, max, 0, peer);
	CHECK_ERR(ret, DOCA_ERROR_AGAIN);
}

static void test_cc_client(void)
{
	struct th_proc *svc = th_proc_start("dpu", "service", name, NULL);
	struct doca_dev *dev = NULL;
	addr_t *peer = NULL, *from = NULL, *again;
	const char *line;
	ep_t *ep = NULL;
	char buf[64];
	size_t len = sizeof(buf);
	uint16_t max;

	CHECK(svc != NULL);
	line = th_proc_line(svc);
	CHECK(line != NULL && strcmp(line, "READY") == 0);
	CHECK_OK(th_open_dev_pci(HOST_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_OK(doca_comm_channel_ep_set_device(ep, dev));
	CHECK_OK(doca_comm_channel_ep_connect(ep, name, &peer));
	/* the service listens but never accepts: the handshake stays open */
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(peer), DOCA_ERROR_CONNECTION_INPROGRESS);
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, &again), DOCA_ERROR_NOT_PERMITTED);
	client_is_no_service(ep, dev);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &from), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_comm_channel_ep_get_max_msg_size(ep, &max));
	fill_send_queue(ep, peer, max);
	/* the service goes: its pending connection is reset */
	CHECK(th_proc_wait(svc) == 0);
	len = sizeof(buf);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &from), DOCA_ERROR_CONNECTION_RESET);
	CHECK(from == peer);
	CHECK_ERR(doca_comm_channel_peer_addr_update_info(peer), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_ERR(doca_comm_channel_ep_sendto(ep, "x", 1, 0, peer), DOCA_ERROR_CONNECTION_RESET);
	CHECK_OK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK_ERR(doca_comm_channel_ep_disconnect(ep, peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &from), DOCA_ERROR_NOT_CONNECTED);
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_error.h, doca_version.h: no error codes; names and strings exist ---- */

static void test_error_version(void)
{
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_DRIVER), "DOCA_ERROR_DRIVER") == 0);
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_CONNECTION_INPROGRESS), "DOCA_ERROR_CONNECTION_INPROGRESS") == 0);
	CHECK(doca_get_error_string(DOCA_ERROR_IN_USE) != NULL);
	CHECK(strcmp(doca_version(), doca_version_runtime()) == 0);
}

/* ---- the DPU side, in a child ---- */

static void test_dpu_side(void)
{
	struct th_proc *p = th_proc_start("dpu", "dpu", name, NULL);
	const char *line;

	CHECK(p != NULL);
	line = th_proc_line(p);
	CHECK(line != NULL);
	CHECK(strstr(line, " 0 failed") != NULL);
	CHECK(th_proc_wait(p) == 0);
}

/* Representors of the DPU PF: arguments and properties. */
static void dpu_rep_list(void)
{
	char str[DOCA_DEVINFO_REP_VUID_SIZE];
	struct doca_devinfo_rep **reps;
	enum doca_pci_func_type type;
	struct doca_dev *dev = NULL;
	struct doca_pci_bdf bdf;
	uint32_t n;
	uint8_t v;

	CHECK_OK(th_open_dev_pci(DPU_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_ERR(doca_devinfo_rep_list_create(dev, 1 << 7, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, &reps, &n));
	CHECK(n > 0);
	CHECK_ERR(doca_devinfo_rep_get_vuid(NULL, str, sizeof(str)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_vuid(reps[0], NULL, sizeof(str)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_vuid(reps[0], str, sizeof(str) - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr(NULL, &bdf), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr_str(NULL, str), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr_str(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(NULL, HOST_PCI, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], HOST_PCI, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], "zz:00.0", &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_func_type(NULL, &type), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_func_type(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_hotplug(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_hotplug(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

/* A representor an endpoint serves cannot be closed; nor can its PF while it is open. */
static void dpu_rep_in_use(void)
{
	struct doca_dev_rep *rep = NULL;
	struct doca_dev *dev = NULL;
	ep_t *ep = NULL;

	CHECK_OK(th_open_dev_pci(DPU_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_OK(th_open_rep_pci(dev, HOST_PCI, &rep));
	th_defer_local(close_rep, &rep);
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_OK(doca_comm_channel_ep_set_device_rep(ep, rep));
	CHECK_ERR(doca_dev_rep_close(rep), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	/* both still open and usable */
	CHECK(doca_dev_rep_as_devinfo(rep) != NULL);
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK(th_undefer(close_rep, &rep));
	CHECK_OK(doca_dev_rep_close(rep));
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

static void dpu_listen(void)
{
	struct doca_dev_rep *rep = NULL;
	struct doca_dev *dev = NULL;
	ep_t *ep = NULL, *twin = NULL;
	addr_t **list, *peer;
	doca_event_channel_t h;
	char buf[64];
	size_t len = sizeof(buf);
	uint32_t n;

	CHECK_OK(th_open_dev_pci(DPU_PCI, &dev));
	th_defer_local(close_dev, &dev);
	CHECK_OK(th_open_rep_pci(dev, HOST_PCI, &rep));
	th_defer_local(close_rep, &rep);
	CHECK_OK(doca_comm_channel_get_service_max_num_connections(doca_dev_as_devinfo(dev), &n));
	CHECK_OK(doca_comm_channel_ep_create(&ep));
	th_defer_local(destroy_ep, &ep);
	CHECK_OK(doca_comm_channel_ep_create(&twin));
	th_defer_local(destroy_ep, &twin);
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_BAD_STATE); /* no device */
	CHECK_OK(doca_comm_channel_ep_set_device(ep, dev));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_BAD_STATE); /* no representor */
	CHECK_ERR(doca_comm_channel_ep_connect(ep, name, &peer), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_comm_channel_ep_set_device_rep(ep, rep));
	CHECK_ERR(doca_comm_channel_ep_update_service_state_info(ep), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_comm_channel_ep_get_service_event_channel(ep, &h), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &peer), DOCA_ERROR_NOT_CONNECTED);
	CHECK_OK(doca_comm_channel_ep_listen(ep, name));
	CHECK_ERR(doca_comm_channel_ep_listen(ep, name), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_comm_channel_ep_set_device_rep(ep, rep), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_comm_channel_ep_set_recv_queue_size(ep, 16), DOCA_ERROR_BAD_STATE);
	/* the name is served for this function already */
	CHECK_OK(doca_comm_channel_ep_set_device(twin, dev));
	CHECK_OK(doca_comm_channel_ep_set_device_rep(twin, rep));
	CHECK_ERR(doca_comm_channel_ep_listen(twin, name), DOCA_ERROR_CONNECTION_ABORTED);
	/* the listening endpoint is a service */
	CHECK_OK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK_OK(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &n));
	CHECK(n == 0);
	CHECK_OK(doca_comm_channel_ep_get_pending_connections(ep, &n));
	CHECK(n == 0);
	CHECK_OK(doca_comm_channel_ep_get_service_event_channel(ep, &h));
	CHECK_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &peer), DOCA_ERROR_AGAIN);
	CHECK(th_undefer(destroy_ep, &twin));
	CHECK_OK(doca_comm_channel_ep_destroy(twin));
	CHECK(th_undefer(destroy_ep, &ep));
	CHECK_OK(doca_comm_channel_ep_destroy(ep));
	CHECK(th_undefer(close_rep, &rep));
	CHECK_OK(doca_dev_rep_close(rep));
	CHECK(th_undefer(close_dev, &dev));
	CHECK_OK(doca_dev_close(dev));
}

/* ---- roles ---- */

static int role_dpu(void)
{
	RUN(dpu_rep_list);
	RUN(dpu_rep_in_use);
	RUN(dpu_listen);
	return th_summary("test_doc_errors_dev (dpu side)");
}

/* Listens, never accepts, and stops when its input ends. */
static int role_service(void)
{
	struct doca_dev_rep *rep = NULL;
	struct doca_dev *dev = NULL;
	ep_t *ep = NULL;
	char c;
	int rc = 1;

	if (th_open_dev_pci(DPU_PCI, &dev) != DOCA_SUCCESS || th_open_rep_pci(dev, HOST_PCI, &rep) != DOCA_SUCCESS ||
	    doca_comm_channel_ep_create(&ep) != DOCA_SUCCESS || doca_comm_channel_ep_set_device(ep, dev) != DOCA_SUCCESS ||
	    doca_comm_channel_ep_set_device_rep(ep, rep) != DOCA_SUCCESS ||
	    doca_comm_channel_ep_listen(ep, name) != DOCA_SUCCESS)
		goto out;
	printf("READY\n");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	rc = 0;
out:
	if (ep != NULL)
		doca_comm_channel_ep_destroy(ep);
	if (rep != NULL)
		doca_dev_rep_close(rep);
	if (dev != NULL)
		doca_dev_close(dev);
	return rc;
}

/* Prints the code of a device list taken while the topology file cannot be read. */
static int role_notopo(void)
{
	struct doca_devinfo **list;
	uint32_t n;
	doca_error_t ret;

	setenv("SOFTDPU_TOPOLOGY", "/nonexistent/softdpu.topo", 1);
	ret = doca_devinfo_list_create(&list, &n);
	if (ret == DOCA_SUCCESS)
		doca_devinfo_list_destroy(list);
	printf("%d\n", (int)ret);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "notopo") == 0)
		return role_notopo();
	if (argc > 2) {
		snprintf(name, sizeof(name), "%s", argv[2]);
		if (strcmp(argv[1], "dpu") == 0)
			return role_dpu();
		if (strcmp(argv[1], "service") == 0)
			return role_service();
		return 2;
	}
	snprintf(name, sizeof(name), "docerr-%d", (int)getpid());
	RUN(test_devinfo_list);
	RUN(test_devinfo_list_unreadable);
	RUN(test_dev_open_close);
	RUN(test_rep_on_host);
	RUN(test_devinfo_props);
	RUN(test_devinfo_caps);
	RUN(test_cc_caps);
	RUN(test_cc_ep_args);
	RUN(test_cc_peer_args);
	RUN(test_cc_idle_ep);
	RUN(test_cc_connect_refused);
	RUN(test_cc_client);
	RUN(test_error_version);
	RUN(test_dpu_side);
	return th_summary("test_doc_errors_dev");
}
