/*
 * hw_rss — the Toeplitz hash and its input from a frame's fields (hw_rss.h).
 *
 * Toeplitz: for each input bit set, from the first byte's top bit on, the
 * 32-bit window of the key starting at that bit's position is XORed into
 * the result; the window slides one key bit per input bit.
 */
#include <string.h>

#include "hw_rss.h"

/* Offsets in fte_match_set_lyr_2_4, as hw_steer_parse fills it. */
#define RSS_F_PROTOCOL 16
#define RSS_F_FLAGS 18 /* frag bit 13, ip_version bits 12..9 */
#define RSS_F_TCP_SPORT 20
#define RSS_F_UDP_SPORT 28
#define RSS_F_SRC_IP 32
#define RSS_F_DST_IP 48
#define RSS_FRAG (1u << 13)
#define RSS_PROTO_TCP 6
#define RSS_PROTO_UDP 17
#define RSS_INPUT_MAX 36 /* two IPv6 addresses and two ports */

uint32_t hw_rss_toeplitz(const uint8_t key[HW_RSS_KEY_LEN], const uint8_t *in, uint32_t n)
{
	uint32_t res = 0, win = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];

	for (uint32_t i = 0; i < n && i < RSS_INPUT_MAX; i++) {
		uint8_t next = i + 4 < HW_RSS_KEY_LEN ? key[i + 4] : 0;

		for (int b = 7; b >= 0; b--) {
			if (in[i] & (1u << b))
				res ^= win;
			win = win << 1 | ((next >> b) & 1u);
		}
	}
	return res;
}

static uint32_t rss_put(uint8_t *in, uint32_t n, const uint8_t *p, uint32_t len)
{
	memcpy(in + n, p, len);
	return n + len;
}

uint32_t hw_rss_hash(const struct hw_rss_conf *c, const uint8_t fields[64])
{
	uint16_t flags = (uint16_t)(fields[RSS_F_FLAGS] << 8 | fields[RSS_F_FLAGS + 1]);
	uint32_t ver = (flags >> 9) & 0xfu, n = 0, l4;
	uint8_t in[RSS_INPUT_MAX];

	if (ver == 4) {
		if (c->fields & HW_RSS_SRC_IPV4)
			n = rss_put(in, n, fields + RSS_F_SRC_IP + 12, 4);
		if (c->fields & HW_RSS_DST_IPV4)
			n = rss_put(in, n, fields + RSS_F_DST_IP + 12, 4);
	} else if (ver == 6) {
		if (c->fields & HW_RSS_SRC_IPV6)
			n = rss_put(in, n, fields + RSS_F_SRC_IP, 16);
		if (c->fields & HW_RSS_DST_IPV6)
			n = rss_put(in, n, fields + RSS_F_DST_IP, 16);
	}
	if ((ver != 4 && ver != 6) || (flags & RSS_FRAG))
		return hw_rss_toeplitz(c->key, in, n);
	if (fields[RSS_F_PROTOCOL] == RSS_PROTO_TCP && (c->fields & (HW_RSS_SRC_PORT_TCP | HW_RSS_DST_PORT_TCP))) {
		l4 = RSS_F_TCP_SPORT;
		if (c->fields & HW_RSS_SRC_PORT_TCP)
			n = rss_put(in, n, fields + l4, 2);
		if (c->fields & HW_RSS_DST_PORT_TCP)
			n = rss_put(in, n, fields + l4 + 2, 2);
	} else if (fields[RSS_F_PROTOCOL] == RSS_PROTO_UDP &&
		   (c->fields & (HW_RSS_SRC_PORT_UDP | HW_RSS_DST_PORT_UDP))) {
		l4 = RSS_F_UDP_SPORT;
		if (c->fields & HW_RSS_SRC_PORT_UDP)
			n = rss_put(in, n, fields + l4, 2);
		if (c->fields & HW_RSS_DST_PORT_UDP)
			n = rss_put(in, n, fields + l4 + 2, 2);
	}
	return hw_rss_toeplitz(c->key, in, n);
}
