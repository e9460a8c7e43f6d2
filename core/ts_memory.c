/* ts_memory.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_memory_placeholder;
