/* Included by refusals.c (CASE_SYNTAX_HEADER): a declaration dpacc cannot read. */
#include <stdint.h>

__dpa_rpc__ uint64_t (rpc_parenthesized)(uint64_t a); /* @where */
