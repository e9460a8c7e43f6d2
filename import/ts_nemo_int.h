/*
 * ts_nemo_int.h    - the NeMo importer's own types and the functions its
 * files share (nemo_*); the interface is ts_import_nemo() in ts_import.h.
 *   ts_nemo.c        interpolations, typed getters, trainer:, the entry
 *   ts_nemo_model.c  model:'s shape, layout and vocabulary (libyaml only)
 */
#ifndef TS_NEMO_INT_H
#define TS_NEMO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ts_import.h"

#define NEMO_PTR "/nemo_config"

typedef struct nemo {
    ts_import *im;
    const json_t *root;
    ts_api_err *err;
} nemo;

/* ts_nemo.c: the typed getters (1 present, 0 absent or null, -1 error),
 * following OmegaConf interpolations for integers */
int nemo_int(nemo *n, const ts_import_obj *o, const char *key, int64_t lo, int64_t hi,
             int64_t *out);
int nemo_bool(nemo *n, const ts_import_obj *o, const char *key, bool *out);
int nemo_str(nemo *n, const ts_import_obj *o, const char *key, const char **out);
int nemo_num(nemo *n, const ts_import_obj *o, const char *key, double *out);
/* a request member from key of o, named as its origin */
int nemo_set_i(nemo *n, ts_field_id fi, int64_t v, const ts_import_obj *o, const char *key);
int nemo_set_b(nemo *n, ts_field_id fi, bool v, const ts_import_obj *o, const char *key);
int nemo_set_s(nemo *n, ts_field_id fi, const char *v, const ts_import_obj *o, const char *key);

/* ts_nemo_model.c: model:'s keys; model: the file defines the model. */
int nemo_vocab(nemo *n, const ts_import_obj *m, bool need, int64_t tp);
int nemo_shape(nemo *n, const ts_import_obj *m, bool model);
int nemo_layout(nemo *n, const ts_import_obj *m);

/* ts_nemo_peft.c: model.peft (peft_scheme lora: rank, targets, dropout);
 * 1 when it set LoRA up, 0 without, -1 on a problem.  nemo_fp8_weights:
 * fp8_params, the frozen base's under LoRA, else the model's. */
int nemo_peft(nemo *n, const ts_import_obj *m);
int nemo_fp8_weights(nemo *n, const ts_import_obj *m, bool lora);

#endif /* TS_NEMO_INT_H */
