/*
 * test_hw_rss — the Toeplitz hash of the port's RSS (hw_rss.h) against the
 * Microsoft RSS verification suite's known results (its 40-byte key, IPv4
 * and IPv6 with and without TCP ports), and the hash input a parsed frame
 * gives for each field selection.
 */
#include <arpa/inet.h>
#include <string.h>

#include "harness.h"
#include "hw_rss.h"
#include "hw_steer.h"

static const uint8_t ms_key[HW_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct v4_vec {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t ip, ip_tcp;
};

/* The suite's IPv4 table: destination, source, then the hash over the addresses and over addresses and ports. */
static const struct v4_vec v4[] = {
	{"161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178},
	{"65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea},
	{"12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a},
	{"209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f},
	{"202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2},
};

struct v6_vec {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t ip, ip_tcp;
};

static const struct v6_vec v6[] = {
	{"3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d},
	{"ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf},
	{"fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251, 0x4b61e985, 0x02d1feef},
};

/* The suite's input: source address, destination address, source port, destination port. */
static uint32_t input(int af, const char *src, const char *dst, uint16_t sport, uint16_t dport, bool ports,
		      uint8_t *in)
{
	uint32_t alen = af == AF_INET ? 4 : 16, n = 2 * alen;
	uint16_t sp = htons(sport), dp = htons(dport);

	inet_pton(af, src, in);
	inet_pton(af, dst, in + alen);
	if (ports) {
		memcpy(in + n, &sp, 2);
		memcpy(in + n + 2, &dp, 2);
		n += 4;
	}
	return n;
}

static void test_toeplitz_ipv4(void)
{
	uint8_t in[36];

	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		uint32_t n = input(AF_INET, v4[i].src, v4[i].dst, v4[i].sport, v4[i].dport, false, in);

		CHECK(hw_rss_toeplitz(ms_key, in, n) == v4[i].ip);
		n = input(AF_INET, v4[i].src, v4[i].dst, v4[i].sport, v4[i].dport, true, in);
		CHECK(hw_rss_toeplitz(ms_key, in, n) == v4[i].ip_tcp);
	}
}

static void test_toeplitz_ipv6(void)
{
	uint8_t in[36];

	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		uint32_t n = input(AF_INET6, v6[i].src, v6[i].dst, v6[i].sport, v6[i].dport, false, in);

		CHECK(hw_rss_toeplitz(ms_key, in, n) == v6[i].ip);
		n = input(AF_INET6, v6[i].src, v6[i].dst, v6[i].sport, v6[i].dport, true, in);
		CHECK(hw_rss_toeplitz(ms_key, in, n) == v6[i].ip_tcp);
	}
}

/* An Ethernet + IPv4 + TCP (or UDP) frame of the vector's addresses and ports. */
static uint32_t v4_frame(const struct v4_vec *v, uint8_t proto, uint8_t *f)
{
	uint16_t sp = htons(v->sport), dp = htons(v->dport);

	memset(f, 0, 64);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = proto;
	inet_pton(AF_INET, v->src, f + 14 + 12);
	inet_pton(AF_INET, v->dst, f + 14 + 16);
	memcpy(f + 34, &sp, 2);
	memcpy(f + 36, &dp, 2);
	return 14 + 20 + 20;
}

static void test_hash_of_frame_fields(void)
{
	struct hw_rss_conf c;
	uint8_t frame[64], fields[HW_STEER_MATCH_BYTES];

	memcpy(c.key, ms_key, sizeof(c.key));
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		hw_steer_parse(frame, v4_frame(&v4[i], 6, frame), fields);
		c.fields = HW_RSS_SRC_IPV4 | HW_RSS_DST_IPV4;
		CHECK(hw_rss_hash(&c, fields) == v4[i].ip);
		c.fields |= HW_RSS_SRC_PORT_TCP | HW_RSS_DST_PORT_TCP;
		CHECK(hw_rss_hash(&c, fields) == v4[i].ip_tcp);
		/* UDP port fields on a TCP frame: the addresses only. */
		c.fields = HW_RSS_SRC_IPV4 | HW_RSS_DST_IPV4 | HW_RSS_SRC_PORT_UDP | HW_RSS_DST_PORT_UDP;
		CHECK(hw_rss_hash(&c, fields) == v4[i].ip);
		/* IPv6 fields on an IPv4 frame: nothing selected is there. */
		c.fields = HW_RSS_SRC_IPV6 | HW_RSS_DST_IPV6;
		CHECK(hw_rss_hash(&c, fields) == 0);
		hw_steer_parse(frame, v4_frame(&v4[i], 17, frame), fields);
		c.fields = HW_RSS_SRC_IPV4 | HW_RSS_DST_IPV4 | HW_RSS_SRC_PORT_UDP | HW_RSS_DST_PORT_UDP;
		CHECK(hw_rss_hash(&c, fields) == v4[i].ip_tcp); /* the same bytes, so the same hash */
	}
}

/* One field alone: the source address is the first 4 input bytes. */
static void test_hash_source_only(void)
{
	struct hw_rss_conf c = {.fields = HW_RSS_SRC_IPV4};
	uint8_t frame[64], fields[HW_STEER_MATCH_BYTES], in[4];

	memcpy(c.key, ms_key, sizeof(c.key));
	hw_steer_parse(frame, v4_frame(&v4[0], 17, frame), fields);
	inet_pton(AF_INET, v4[0].src, in);
	CHECK(hw_rss_hash(&c, fields) == hw_rss_toeplitz(ms_key, in, 4));
	CHECK(hw_rss_hash(&c, fields) != 0);
}

int main(void)
{
	RUN(test_toeplitz_ipv4);
	RUN(test_toeplitz_ipv6);
	RUN(test_hash_of_frame_fields);
	RUN(test_hash_source_only);
	return th_summary("test_hw_rss");
}
