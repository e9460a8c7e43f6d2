/*
 * ts_fields.c - the runtime table of the request-field registry: one
 * expansion of ts_fields.def (the row format is its header comment).
 */
#include "ts_fields.h"

#include <math.h>
#include <stddef.h>

#include "trainsize.h"

/* An enum's names (NULL-terminated; the pointer NULL for TS_VALUES_NONE:
 * no names counted) and the enumerator of each. */
#define TS_FIELD_NAME(c, s) s,
#define TS_FIELD_INT(c, s)  (int)(c),
#define TS_FIELD_ONE(c, s)  1 +
#define TS_FIELD_NAMES(list) \
    ((list(TS_FIELD_ONE) 0) ? (const char *const[]){ list(TS_FIELD_NAME) NULL } : NULL)
#define TS_FIELD_INTS(list)    ((list(TS_FIELD_ONE) 0) ? (const int[]){ list(TS_FIELD_INT) 0 } : NULL)
#define TS_FIELD_HAS(flags, f) (((flags) & (f)) != 0)

/* A row of the table; MEMBER_TEXT is NULL for a route's extra. */
#define TS_FIELD_ROW(NAME, TYPE, KIND, OFF, MEMBER_TEXT, LO, HI, FLAGS, DEF, VALUES)             \
    {                                                                                            \
        .name = NAME, .type = TYPE, .minimum = LO, .maximum = HI,                                \
        .exclusive_minimum = TS_FIELD_HAS(FLAGS, TS_FF_XMIN),                                    \
        .exclusive_maximum = TS_FIELD_HAS(FLAGS, TS_FF_XMAX), .values = TS_FIELD_NAMES(VALUES),  \
        .nullable = TS_FIELD_HAS(FLAGS, TS_FF_NULL), .fit_only = TS_FIELD_HAS(FLAGS, TS_FF_FIT), \
        .search_only = TS_FIELD_HAS(FLAGS, TS_FF_SEARCH),                                        \
        .budget_only = TS_FIELD_HAS(FLAGS, TS_FF_BUDGET), .kind = KIND, .off = OFF,              \
        .ints = TS_FIELD_INTS(VALUES), .flags = FLAGS, .def = DEF, .member = MEMBER_TEXT,        \
        .nlen = sizeof NAME - 1                                                                  \
    }

const ts_field ts_fields[TS_FI_COUNT] = {
#define TS_FIELD(ID, NAME, TYPE, KIND, MEMBER, LO, HI, FLAGS, DEF, VALUES, ...)                  \
    [ID] = TS_FIELD_ROW(NAME, TYPE, KIND, offsetof(ts_run, MEMBER), #MEMBER, LO, HI, FLAGS, DEF, \
                        VALUES),
#define TS_EXTRA(ID, NAME, TYPE, LO, HI, FLAGS, DEF, VALUES, ...) \
    [ID] = TS_FIELD_ROW(NAME, TYPE, TS_FK_CUSTOM, 0, NULL, LO, HI, FLAGS, DEF, VALUES),
#include "ts_fields.def"
};

/* The plain kinds write through the member's own C type (ts_run.c,
 * api/): a row whose KIND does not fit its MEMBER does not compile.
 * CUSTOM members are their own code's. */
#define TS_FIELD_FITS(kind, m)                                         \
    ((kind) == TS_FK_INT64     ? _Generic(m, int64_t : 1, default : 0) \
     : (kind) == TS_FK_INT     ? _Generic(m, int : 1, default : 0)     \
     : (kind) == TS_FK_NUM     ? _Generic(m, double : 1, default : 0)  \
     : (kind) == TS_FK_NUM_OPT ? _Generic(m, double : 1, default : 0)  \
     : (kind) == TS_FK_BOOL    ? _Generic(m, bool : 1, default : 0)    \
     : (kind) == TS_FK_ENUM    ? sizeof(m) == sizeof(int)              \
                               : 1)
#define TS_FIELD(ID, NAME, TYPE, KIND, MEMBER, ...)            \
    _Static_assert(TS_FIELD_FITS(KIND, ((ts_run *)0)->MEMBER), \
                   "ts_fields.def: " NAME ": KIND does not fit the type of " #MEMBER);
#define TS_EXTRA(...)
#include "ts_fields.def"
