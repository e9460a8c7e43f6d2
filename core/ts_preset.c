/* ts_preset.c - placeholder until implemented. */
#include "trainsize.h"
typedef int ts_preset_placeholder;
