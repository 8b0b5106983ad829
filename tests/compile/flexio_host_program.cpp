// flexio_host_program.c built as C++17: the FlexIO host header must be C++ clean.
#include "flexio_host_program.c"
