/*
 * softdpu — the FlexIO device libc's <string.h> (libflexio-libc).
 *
 * On the DPA this is a small libc: memcpy, memmove, memset, memcmp, strlen,
 * strcpy, strncpy, strcmp, strncmp, strcat, strchr and the like. softdpu
 * builds device code with the host compiler and runs it on the host, so the
 * host C library provides them with its own prototypes: this header only
 * brings in the system <string.h>, and including both never clashes. It also
 * works when device code is built with this directory on the include path
 * (then #include <string.h> lands here), hence #include_next. No include guard:
 * a second pass only repeats the (guarded) system include, and a guard would
 * hide the system header if this file is met again further down the path.
 */
#pragma GCC system_header /* #include_next is a GNU extension: no -Wpedantic note for it */
#include_next <string.h>
