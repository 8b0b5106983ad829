/*
 * fab_mem — exporting memory to, and importing memory from, other processes.
 *
 * Exporter: fab_mem_publish gives an export its device-wide id (the shared
 * export table) and, when asked for, a UCX section so another machine can
 * reach it; fab_mem_withdraw ends every remote access before it returns.
 * Importer: fab_mem_open picks the path — CMA when the descriptor comes from
 * this machine, UCX otherwise; SOFTDPU_FABRIC=cma|ucx forces one — and the
 * device reaches the memory through fab_mem_hw_ops.
 */
#ifndef FAB_MEM_H_
#define FAB_MEM_H_

#include "fab_desc.h"
#include "fab_xport.h"
#include "hw_mem.h"

struct fab_export;
struct fab_import;

/*
 * Fills d->export_id (and d's sections). 0 on success, else a negative errno:
 * -EPERM when the export table is not private to this user (fab_table.h).
 */
int fab_mem_publish(struct fab_export_desc *d, void *addr, struct fab_export **ex);
void fab_mem_withdraw(struct fab_export *ex);

/* Opens the memory d names from this process; FAB_OK or why not. */
enum fab_status fab_mem_open(const struct fab_export_desc *d, struct fab_import **imp);
void fab_mem_close(struct fab_import *imp);
const char *fab_mem_path(const struct fab_import *imp);

/* The device's access to imported memory; the context is the struct fab_import. */
extern const struct hw_remote_ops fab_mem_hw_ops;

#endif /* FAB_MEM_H_ */
