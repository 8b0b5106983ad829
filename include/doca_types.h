/*
 * softdpu — DOCA common types (DOCA 2.2 shape).
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Event handle an application can wait on (a Linux file descriptor). */
typedef int doca_event_handle_t;
#define doca_event_invalid_handle -1

/** The length of a GID (Global ID) in bytes. */
#define DOCA_GID_BYTE_LENGTH 16

/** Convenience type for user data and results: a pointer or a 64-bit value. */
union doca_data {
	void *ptr;
	uint64_t u64;
};

/** Access permissions of memory registered through a doca_mmap. */
enum doca_access_flags {
	DOCA_ACCESS_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_LOCAL_READ_WRITE = (1 << 0),
	DOCA_ACCESS_RDMA_READ = (1 << 1),
	DOCA_ACCESS_RDMA_WRITE = (1 << 2),
	DOCA_ACCESS_RDMA_ATOMIC = (1 << 3),
	DOCA_ACCESS_DPU_READ_ONLY = (1 << 4),
	DOCA_ACCESS_DPU_READ_WRITE = (1 << 5),
};

/** Type of a PCI function. */
enum doca_pci_func_type {
	DOCA_PCI_FUNC_PF = 0, /**< physical function */
	DOCA_PCI_FUNC_VF,     /**< virtual function */
	DOCA_PCI_FUNC_SF,     /**< sub function */
};

/** PCI bus:device.function address packed in 16 bits (DOCA 2.0 layout). */
struct doca_pci_bdf {
#define PCI_FUNCTION_MAX_VALUE 8
#define PCI_DEVICE_MAX_VALUE 32
#define PCI_BUS_MAX_VALUE 256
	union {
		uint16_t raw;
		struct {
			uint16_t function : 3;
			uint16_t device : 5;
			uint16_t bus : 8;
		};
	};
};

/** Memory types a GPU buffer can be allocated in (for API compatibility). */
enum doca_gpu_mem_type {
	DOCA_GPU_MEM_TYPE_GPU = 0,
	DOCA_GPU_MEM_TYPE_GPU_CPU = 1,
	DOCA_GPU_MEM_TYPE_CPU_GPU = 2,
};

/** Big-endian 32-bit value (as carried on the wire: RDMA immediate data). */
typedef uint32_t doca_be32_t;

/** MTU of an RDMA connection, as the port attribute codes it. */
enum doca_mtu_size {
	DOCA_MTU_SIZE_256_BYTES = 0x0,
	DOCA_MTU_SIZE_512_BYTES = 0x1,
	DOCA_MTU_SIZE_1K_BYTES = 0x2,
	DOCA_MTU_SIZE_2K_BYTES = 0x3,
	DOCA_MTU_SIZE_4K_BYTES = 0x4,
	DOCA_MTU_SIZE_RAW_ETHERNET = 0x5, /* reserved */
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
