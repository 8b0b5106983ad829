/*
 * What the host and the device code of the flexio_multithread sample share:
 * the matrices' size and the configuration each RPC gets, in DPA memory.
 */
#ifndef FLEXIO_MULTITHREAD_COMMON_H_
#define FLEXIO_MULTITHREAD_COMMON_H_

#include <stdint.h>

#define N 8 /* the matrices are N x N int32 */

/* One element of C = A x B to compute: which one, where A and B are (DPA) and where C is (host, through the window). */
struct host_to_device_config {
	uint64_t mat_a_daddr; /* A, row-major, in DPA memory */
	uint64_t mat_b_daddr; /* B, row-major, in DPA memory */
	uint64_t haddr;	      /* C, row-major, in host memory under mkey */
	uint32_t window_id;
	uint32_t mkey;
	uint32_t row;
	uint32_t col;
};

#endif /* FLEXIO_MULTITHREAD_COMMON_H_ */
