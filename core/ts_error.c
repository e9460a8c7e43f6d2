/* ts_error.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_error_placeholder;
