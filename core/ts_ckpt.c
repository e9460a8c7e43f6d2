/* ts_ckpt.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_ckpt_placeholder;
