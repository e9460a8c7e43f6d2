/* ts_solve.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_solve_placeholder;
