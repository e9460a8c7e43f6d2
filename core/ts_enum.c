/* ts_enum.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_enum_placeholder;
