// verbs_program.c built as C++17: the verbs and mlx5dv headers must be C++ clean.
#include "verbs_program.c"
