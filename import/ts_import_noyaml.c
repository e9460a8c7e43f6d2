/*
 * ts_import_noyaml.c - the YAML members of a build without libyaml.
 *
 * meson builds this file in place of ts_axolotl.c, ts_llamafactory.c and
 * ts_nemo.c when it finds no yaml-0.1; ts_import.h maps their three entry
 * points here, so each member is a 400 that names itself and says why,
 * never a silent default.
 */
#include "ts_import.h"

int ts_import_no_yaml(const char *ptr, ts_api_err *err)
{
    ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                   "this build has no YAML support (libyaml); send the settings as request "
                   "members instead");
    return -1;
}
