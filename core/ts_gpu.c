/* ts_gpu.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_gpu_placeholder;
