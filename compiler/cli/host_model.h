/*
 * host_model.h — a compiled model directory, built for this machine and
 * loaded into this process: what `cstatic run` drives (and what the Python
 * Model mirrors over ctypes).
 *
 *   cs_host_model m;
 *   cs_host_model_load(dir, &m);     build DIR/.build/model.so, load it,
 *                                    check its model ABI
 *   cs_host_model_prepare(&m, dir);  read and check weights.bin, allocate
 *                                    the arena, bind the L2 scratch
 *   cs_host_model_run(&m, in, out);  one inference (model_desc.run)
 *   cs_host_model_close(&m);
 *
 * Each step fails with one message naming the directory or file and what
 * was wrong (cs_error_message()).
 */
#ifndef CSTATIC_CLI_HOST_MODEL_H
#define CSTATIC_CLI_HOST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cstatic/model.h"
#include "ir.h"

typedef struct cs_host_model {
  void *so;
  const tidsp_model_desc *desc;
  void *weights; /* weights.bin, aligned; NULL when the model embeds them */
  void *arena;
  void *l2;      /* the L2 scratch (desc->l2_size bytes), or NULL */
  /* The .so's own tidsp_l2_bind: the model links its own copy of the
   * runtime (host_build.c) and reads that copy's binding. */
  int32_t (*l2_bind)(void *base, size_t size);
} cs_host_model;

cs_status cs_host_model_load(const char *dir, cs_host_model *m);
cs_status cs_host_model_prepare(cs_host_model *m, const char *dir);
cs_status cs_host_model_run(const cs_host_model *m, const void *const in[], void *const out[]);
void cs_host_model_close(cs_host_model *m);

#endif
