/*
 * vb_devx_cmd — mlx5dv_devx_general_cmd: the PRM commands a program sends
 * the card outside any object. Known here: QUERY_HCA_CAP of the device-memory
 * capability page, which says what ibv_alloc_dm gives (vb_dm.c, hw_dm.h):
 * MEMIC of HW_DM_SIZE bytes, as ibv_query_device_ex's max_dm_size, its
 * atomic operations on single bytes (vb_memic.c) and no software-owned
 * steering ICM; of the general, ODP, atomic, NIC flow-table and QoS pages
 * (vb_devx_caps.c); QUERY_NIC_VPORT_CONTEXT, QUERY_HCA_VPORT_CONTEXT and
 * QUERY_LAG (vb_devx_vport.c).
 * As the kernel: in or out shorter than the 16-byte header, or an opcode
 * that is not a general command, EINVAL with out untouched. Another
 * general command or capability page fails with EOPNOTSUPP and the card's
 * status for it in out (0x2 bad opcode, 0x3 bad parameter): not emulated.
 *
 * PRM layouts, big-endian: query_hca_cap_in is opcode (bytes 0-1) and op_mod
 * (bytes 6-7: the page's type << 1, bit 0 current rather than maximum
 * values) and other_function (bit 7 of byte 8) in 0x10 bytes;
 * query_hca_cap_out a 0x10-byte header (status in byte 0, syndrome in bytes
 * 4-7) and the 0x1000-byte page.
 */
#include <string.h>

#include "hw_dm.h"
#include "vb_int.h"

#define VB_OP_QUERY_HCA_CAP 0x100
#define VB_OP_QUERY_NIC_VPORT 0x754
#define VB_OP_QUERY_HCA_VPORT 0x762
#define VB_OP_QUERY_LAG 0x842
#define VB_OP_GENERAL_START 0xb00 /* the general objects' commands, all general for the kernel */
#define VB_OP_GENERAL_END 0xd00
#define VB_CMD_HDR_SZ 0x10
#define VB_CAP_IN_SZ 0x10
#define VB_CAP_OUT_SZ 0x1010
#define VB_CAP_HDR_SZ 0x10
#define VB_CAP_DEV_MEM 0xf /* the device-memory (MEMIC, steering ICM) page */

#define VB_STAT_BAD_OP 0x2
#define VB_STAT_BAD_PARAM 0x3
/* Syndromes of softdpu's refusals (bytes 4..7): any non-zero value tells the program "see status". */
#define VB_SYND_GEN_BAD_OP 0x5d0c0011u
#define VB_SYND_CAP_PAGE 0x5d0c0012u
#define VB_SYND_CAP_OTHER_FN 0x5d0c0013u

/*
 * device_mem_cap (PRM): memic (bit 0), the access sizes of the atomic
 * increment (byte 4) and of test-and-set (byte 6), bit 0 one byte;
 * log_min_memic_alloc_size (byte 5, low 5 bits), log_max_memic_addr_alignment
 * (byte 7), memic_bar_size (bytes 16-19), max_memic_size (bytes 20-23),
 * memic_operations (bytes 64-67, op n is bit n); the steering ICM fields
 * stay zero.
 */
static void vb_dev_mem_page(uint8_t *page)
{
	page[0] = 0x80;
	page[4] = VB_MEMIC_SIZES;
	page[6] = VB_MEMIC_SIZES;
	page[67] = VB_MEMIC_OPS;
	page[5] = HW_DM_LOG_BASE_ALIGN;
	page[7] = HW_DM_LOG_MAX_ALIGN;
	for (int i = 0; i < 4; i++) {
		page[16 + i] = (uint8_t)(HW_DM_SIZE >> (24 - 8 * i));
		page[20 + i] = (uint8_t)(HW_DM_SIZE >> (24 - 8 * i));
	}
}

/* The command failed as the card answers it: status and syndrome in out (as much as fits), errno returned. */
static int vb_gen_fail(uint8_t *out, size_t outlen, uint8_t status, uint32_t syndrome)
{
	if (outlen >= 1)
		out[0] = status;
	if (outlen >= 8) {
		out[4] = (uint8_t)(syndrome >> 24);
		out[5] = (uint8_t)(syndrome >> 16);
		out[6] = (uint8_t)(syndrome >> 8);
		out[7] = (uint8_t)syndrome;
	}
	return EOPNOTSUPP;
}

static int vb_query_hca_cap(struct ibv_context *c, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	uint8_t page[VB_CAP_OUT_SZ - VB_CAP_HDR_SZ] = {0};
	uint16_t op_mod;
	int err = 0;

	/* An output shorter than the page gets what fits, as the card's mailbox (rdma-core's suite reads 0x810 bytes). */
	if (inlen < VB_CAP_IN_SZ || outlen < VB_CAP_HDR_SZ)
		return EINVAL;
	if (in[8] & 0x80) /* other_function: another function's caps, which this one does not manage here */
		return vb_gen_fail(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_CAP_OTHER_FN);
	op_mod = (uint16_t)(in[6] << 8 | in[7]);
	/* Maximum and current values alike. */
	if (op_mod >> 1 == VB_CAP_DEV_MEM)
		vb_dev_mem_page(page);
	else
		err = vb_devx_cap_page(c, op_mod >> 1, page);
	if (err == EOPNOTSUPP)
		return vb_gen_fail(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_CAP_PAGE);
	if (err != 0)
		return err;
	memset(out, 0, VB_CAP_HDR_SZ);
	memcpy(out + VB_CAP_HDR_SZ, page, (outlen < VB_CAP_OUT_SZ ? outlen : VB_CAP_OUT_SZ) - VB_CAP_HDR_SZ);
	return 0;
}

/* The kernel's list of general commands (devx_is_general_cmd); any other opcode it refuses itself. */
static bool vb_is_general(uint16_t op)
{
	static const uint16_t ops[] = {VB_OP_QUERY_HCA_CAP, 0x101 /* QUERY_ADAPTER */, 0x10a /* QUERY_ISSI */,
				       0x80a /* GET_DROPPED_PACKET_LOG */, 0x80d /* NOP */, 0x750 /* QUERY_VPORT_STATE */,
				       0x752 /* QUERY_ESW_VPORT_CONTEXT */,
				       VB_OP_QUERY_NIC_VPORT, 0x760 /* QUERY_ROCE_ADDRESS */,
				       VB_OP_QUERY_HCA_VPORT, 0x76f /* QUERY_VNIC_ENV */,
				       0x770 /* QUERY_VPORT_COUNTER */, 0x822, 0x824, 0x826 /* congestion queries */,
				       VB_OP_QUERY_LAG, 0x740 /* QUERY_ESW_FUNCTIONS */};

	if (op >= VB_OP_GENERAL_START && op < VB_OP_GENERAL_END)
		return true;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (ops[k] == op)
			return true;
	return false;
}

int vb_dv_devx_general_cmd(struct ibv_context *c, const void *in, size_t inlen, void *out, size_t outlen)
{
	const uint8_t *i = in;
	uint16_t op;

	/* The kernel's own refusals, out untouched: the 16-byte headers of in and out, a command not general. */
	if (vb_ctx_checked(c) == NULL || in == NULL || inlen < VB_CMD_HDR_SZ || out == NULL || outlen < VB_CMD_HDR_SZ)
		return EINVAL;
	op = (uint16_t)(i[0] << 8 | i[1]);
	if (!vb_is_general(op))
		return EINVAL;
	if (op == VB_OP_QUERY_HCA_CAP)
		return vb_query_hca_cap(c, in, inlen, out, outlen);
	if (op == VB_OP_QUERY_NIC_VPORT)
		return vb_devx_query_nic_vport(c, in, out, outlen);
	if (op == VB_OP_QUERY_HCA_VPORT)
		return vb_devx_query_hca_vport(c, in, out, outlen);
	if (op == VB_OP_QUERY_LAG)
		return vb_devx_query_lag(out, outlen);
	return vb_gen_fail(out, outlen, VB_STAT_BAD_OP, VB_SYND_GEN_BAD_OP);
}
