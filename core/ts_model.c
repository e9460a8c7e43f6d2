/* ts_model.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_model_placeholder;
