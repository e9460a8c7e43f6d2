/* ts_plan.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_plan_placeholder;
