/* placeholder, replaced below */
#include "ts_internal.h"
