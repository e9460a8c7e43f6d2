/* ts_compute.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_compute_placeholder;
