/*
 * hw_reformat — packet reformat actions of the steering (hw_steer.h): the
 * tunnel header a rule adds on the way out or removes on the way in, as
 * mlx5dv_dr_action_create_packet_reformat(3) and
 * mlx5dv_create_flow_action_packet_reformat(3) describe them.
 *
 * L2 encap (L2_TO_L2_TUNNEL): the header bytes (an Ethernet header, and
 * usually IPv4 or IPv6, UDP and VXLAN) are put before the frame. As the
 * card does, the outer lengths are set from the frame they now carry: the
 * IPv4 total length and header checksum, the IPv6 payload length, the UDP
 * length (its checksum 0: not computed, as a tunnel may leave it).
 *
 * L2 decap (L2_TUNNEL_TO_L2): a VXLAN frame (Ethernet, an optional 802.1Q
 * tag, IPv4 or IPv6, UDP to port 4789, the 8-byte VXLAN header) loses
 * everything up to and including the VXLAN header; the inner frame is what
 * is left. A frame that is not such a tunnel is left as it is.
 *
 * L3 tunnels (L2_TO_L3_TUNNEL, L3_TUNNEL_TO_L2) are not done (the caps page
 * says so).
 */
#ifndef HW_REFORMAT_H_
#define HW_REFORMAT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_mem.h"
#include "hw_steer.h"

#define HW_REFORMAT_DATA_MAX 128 /* an encap header's bytes at most (caps: max_encap_header_size) */

enum hw_reformat_type {
	HW_REFORMAT_L2_DECAP,
	HW_REFORMAT_L2_ENCAP,
};

struct hw_reformat {
	enum hw_reformat_type type;
	uint32_t len;
	uint8_t data[HW_REFORMAT_DATA_MAX];
};

/*
 * r from type and the header bytes (encap) or none (decap). HW_ERR_INVAL
 * for an unknown type, decap with data, encap without or with more than
 * HW_REFORMAT_DATA_MAX bytes, or a header that stops inside the headers it
 * names (shorter than Ethernet, an 802.1Q tag, or the IPv4 / IPv6 / UDP
 * header its types announce).
 */
enum hw_status hw_reformat_init(struct hw_reformat *r, enum hw_reformat_type type, const void *data, size_t len);

/* Whether a rule of a domain of this direction may take r: decap on receive, encap on transmit (FDB: both). */
bool hw_reformat_fits(const struct hw_reformat *r, enum hw_steer_domain_type d);

/* Applies r to f; false when the encapsulated frame would pass f's room (the frame is dropped). */
bool hw_reformat_apply(const struct hw_reformat *r, struct hw_steer_frame *f);

#endif /* HW_REFORMAT_H_ */
