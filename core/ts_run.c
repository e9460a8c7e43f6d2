/* ts_run.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_run_placeholder;
