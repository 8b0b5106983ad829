/*
 * Fuzz target: the comm channel handshake parser (src/fabric/fab_cc.c). The
 * input arrives as one datagram on a socket pair, as a hostile peer's first
 * frame would; the parser must refuse it or produce a frame it can re-send.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fab_cc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fab_cc_hs hs;
	int sv[2];

	if (size > 65536 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return 0;
	if (send(sv[0], data, size, 0) == (ssize_t)size && fab_cc_hs_recv(sv[1], &hs) == 0) {
		if (hs.type < FAB_CC_HELLO || hs.type > FAB_CC_REJECT || fab_cc_hs_send(sv[0], &hs) != 0)
			abort();
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
