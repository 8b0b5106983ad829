/*
 * hw_rss — receive side scaling of the Ethernet port: the Toeplitz hash an
 * indirect TIR (hw_eth_tir_create_rss) computes over a frame's selected
 * header fields, as the PRM's rx_hash_fn TOEPLITZ with rx_hash_field_select
 * defines it and the Microsoft RSS verification suite checks it.
 *
 * The hash input is the selected fields the frame has, in the order source
 * address, destination address, source port, destination port, each in
 * network order (4 bytes for IPv4, 16 for IPv6, 2 per port). Address fields
 * count only on a frame of that IP version, port fields only on a TCP (or
 * UDP) frame that is not a fragment; a frame with none of the selected
 * fields hashes to 0.
 */
#ifndef HW_RSS_H_
#define HW_RSS_H_

#include <stdint.h>

#define HW_RSS_KEY_LEN 40 /* the PRM's rx_hash_toeplitz_key */

/* Field bits: IBV_RX_HASH_* of verbs, the same values. */
enum {
	HW_RSS_SRC_IPV4 = 1u << 0,
	HW_RSS_DST_IPV4 = 1u << 1,
	HW_RSS_SRC_IPV6 = 1u << 2,
	HW_RSS_DST_IPV6 = 1u << 3,
	HW_RSS_SRC_PORT_TCP = 1u << 4,
	HW_RSS_DST_PORT_TCP = 1u << 5,
	HW_RSS_SRC_PORT_UDP = 1u << 6,
	HW_RSS_DST_PORT_UDP = 1u << 7,
	HW_RSS_FIELDS_ALL = 0xffu,
};

struct hw_rss_conf {
	uint8_t key[HW_RSS_KEY_LEN];
	uint32_t fields; /* HW_RSS_* */
};

/* The Toeplitz hash of n input bytes under a 40-byte key (n at most 36: the key's length less 4). */
uint32_t hw_rss_toeplitz(const uint8_t key[HW_RSS_KEY_LEN], const uint8_t *in, uint32_t n);

/* The hash of a frame's parsed fields (hw_steer_parse's layout) under conf. */
uint32_t hw_rss_hash(const struct hw_rss_conf *conf, const uint8_t fields[64]);

#endif /* HW_RSS_H_ */
